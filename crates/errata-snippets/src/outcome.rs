//! Tiers, outcomes and verdicts: the vocabulary of docs/data.md ("Snippet fence annotations", "Run records").

use std::fmt;

use serde::{Deserialize, Serialize};

/// How far a snippet is verified. Tiers are cumulative: `compile` also runs `static`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Tier {
    /// No GPU, no compiler: annotations, Python syntax and torch API names, shellcheck.
    Static,
    /// No GPU: CUDA compiled with nvcc from the pinned CUDA 13 pip wheels.
    Compile,
    /// On a GPU: compiled programs and Python scripts are run and their failures classified.
    Run,
}

impl Tier {
    /// `static`, `compile` or `run`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Static => "static",
            Tier::Compile => "compile",
            Tier::Run => "run",
        }
    }

    /// Parses `static`, `compile` or `run`.
    pub fn parse(s: &str) -> Option<Tier> {
        match s {
            "static" => Some(Tier::Static),
            "compile" => Some(Tier::Compile),
            "run" => Some(Tier::Run),
            _ => None,
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What happened to a snippet, judged against its expectation (names from docs/data.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Outcome {
    /// Did what `expect=ok` says (at the tier reached).
    Pass,
    /// Failed exactly as its `expect=` says.
    ExpectedErrorObserved,
    /// Failed, but not with the expected error.
    WrongError,
    /// Expected to succeed, failed at run time.
    UnexpectedError,
    /// Expected to fail, did not.
    UnexpectedSuccess,
    /// Did not compile (or, for Python and shell, did not parse / lint) though expected to.
    CompileError,
    /// Uses an API or tool that does not exist (any more).
    ApiMissing,
    /// compute-sanitizer reported a problem in a snippet not expected to have one.
    SanitizerFinding,
    /// Killed after its timeout.
    Timeout,
    /// Not verified: the tier needs something this machine lacks. Never a pass.
    SkippedNoGpu,
    /// errata could not verify it (tool missing, annotation error, stale pack).
    InfraError,
    /// `ignore(reason)`.
    Ignored,
}

impl Outcome {
    /// Every outcome, in report order.
    pub const ALL: [Outcome; 12] = [
        Outcome::Pass,
        Outcome::ExpectedErrorObserved,
        Outcome::WrongError,
        Outcome::UnexpectedError,
        Outcome::UnexpectedSuccess,
        Outcome::CompileError,
        Outcome::ApiMissing,
        Outcome::SanitizerFinding,
        Outcome::Timeout,
        Outcome::SkippedNoGpu,
        Outcome::InfraError,
        Outcome::Ignored,
    ];

    /// The outcome's name, e.g. `expected-error-observed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::ExpectedErrorObserved => "expected-error-observed",
            Outcome::WrongError => "wrong-error",
            Outcome::UnexpectedError => "unexpected-error",
            Outcome::UnexpectedSuccess => "unexpected-success",
            Outcome::CompileError => "compile-error",
            Outcome::ApiMissing => "api-missing",
            Outcome::SanitizerFinding => "sanitizer-finding",
            Outcome::Timeout => "timeout",
            Outcome::SkippedNoGpu => "skipped-no-gpu",
            Outcome::InfraError => "infra-error",
            Outcome::Ignored => "ignored",
        }
    }

    /// True when the snippet contradicts its expectation or could not be verified for a
    /// reason that needs fixing: `cargo xtask snippets` exits 1. Skips and ignores are
    /// not failures, and never passes either.
    pub fn is_failure(self) -> bool {
        !matches!(
            self,
            Outcome::Pass
                | Outcome::ExpectedErrorObserved
                | Outcome::SkippedNoGpu
                | Outcome::Ignored
        )
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verdict on one code block: one row of the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    /// The article or entry, as shown to the user (`/`-separated).
    pub file: String,
    /// 1-based line of the block's opening fence (or of an entry's `verify` key).
    pub line: usize,
    /// Normalised language: `cuda`, `python` or `shell`.
    pub lang: String,
    /// The highest tier that judged it.
    pub tier: Tier,
    /// The expectation as annotated (`ok` when none is given).
    pub expect: String,
    /// What happened.
    pub outcome: Outcome,
    /// Why, in one or a few lines (compiler error, observed exception, skip reason…).
    pub detail: String,
}
