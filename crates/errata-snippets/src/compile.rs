//! The compile tier: a CUDA program (harnessed, `cont` parts joined) compiled by nvcc.

use std::path::{Path, PathBuf};

use errata_model::snippet::Expect;
use regex::Regex;

use crate::exec::{self, Limits};
use crate::extract::{Program, Snippet};
use crate::harness;
use crate::outcome::Outcome;
use crate::toolchain::Toolchain;

/// A compiled program: the outcome so far, and the binary when one was linked.
#[derive(Debug)]
pub struct Compiled {
    /// The compile-tier outcome.
    pub outcome: Outcome,
    /// Why.
    pub detail: String,
    /// The executable (linked programs that compiled).
    pub binary: Option<PathBuf>,
}

/// The CUDA source errata compiles for a program: harness applied, each part preceded by
/// a `#line` directive so that compiler errors point into the Markdown file. Also says
/// how to build it: the harness's flags (none without a harness).
pub fn cuda_source(p: &Program, snippets: &[Snippet]) -> Result<(String, Build), String> {
    let mut body = String::new();
    for &i in &p.parts {
        let s = &snippets[i];
        body.push_str(&format!("#line {} \"{}\"\n", s.line + 1, s.file));
        body.push_str(&s.code);
        if !s.code.ends_with('\n') {
            body.push('\n');
        }
    }
    match &p.annotations.harness {
        None => Ok((body, Build::default())),
        Some(name) => {
            let h = harness::lookup(name, &snippets[p.parts[0]].lang)?;
            let build = Build {
                object_only: h.object_only,
                device_launches: h.device_launches,
            };
            Ok((h.wrap(&body), build))
        }
    }
}

/// How a program is built, from its harness.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Build {
    /// `-c` only: no `main`, never linked or run.
    pub object_only: bool,
    /// `-rdc=true` and `-lcudadevrt`: kernels may launch kernels.
    pub device_launches: bool,
}

/// Compiles `p` in `work` (a directory of its own) within `limits` and judges the result
/// against its `compile-error[:regex]` expectation, both ways.
pub fn compile(
    p: &Program,
    snippets: &[Snippet],
    tc: &Toolchain,
    work: &Path,
    limits: Limits,
) -> Compiled {
    let infra = |detail: String| Compiled {
        outcome: Outcome::InfraError,
        detail,
        binary: None,
    };
    let (
        source,
        Build {
            object_only,
            device_launches,
        },
    ) = match cuda_source(p, snippets) {
        Ok(s) => s,
        Err(e) => return infra(e),
    };
    let src = work.join("snippet.cu");
    if let Err(e) = std::fs::write(&src, source) {
        return infra(format!("cannot write {}: {e}", src.display()));
    }
    let out_path = work.join(if object_only { "snippet.o" } else { "snippet" });
    let mut cmd = tc.command();
    if object_only {
        cmd.arg("-c");
    }
    if device_launches {
        cmd.arg("-rdc=true");
    }
    cmd.arg("-o").arg(&out_path).arg(&src);
    if !object_only {
        cmd.args(tc.link_args());
    }
    if device_launches {
        // After the source: the linker resolves cudadevrt's symbols in order.
        cmd.arg("-lcudadevrt");
    }
    let out = match exec::run("nvcc", &mut cmd, None, Some(work), limits) {
        Ok(o) => o,
        Err(e) => return infra(e),
    };
    if out.timed_out {
        return infra(format!(
            "nvcc ran past {}s and was killed",
            limits.timeout.as_secs_f32()
        ));
    }
    let mut log = String::from_utf8_lossy(&out.stderr).into_owned();
    log.push_str(&String::from_utf8_lossy(&out.stdout));
    let compiled = out.status.success();
    let errors = error_lines(&log);
    match (p.expect(), compiled) {
        (Expect::CompileError(re), false) => match re {
            None => Compiled {
                outcome: Outcome::ExpectedErrorObserved,
                detail: errors,
                binary: None,
            },
            Some(re) => match Regex::new(&re) {
                Err(e) => infra(format!("`compile-error:{re}`: invalid regex: {e}")),
                Ok(rx) if rx.is_match(&log) => Compiled {
                    outcome: Outcome::ExpectedErrorObserved,
                    detail: errors,
                    binary: None,
                },
                Ok(_) => Compiled {
                    outcome: Outcome::WrongError,
                    detail: format!("compiler output does not match /{re}/: {errors}"),
                    binary: None,
                },
            },
        },
        (Expect::CompileError(_), true) => Compiled {
            outcome: Outcome::UnexpectedSuccess,
            detail: "expected a compile error, but nvcc compiled it".into(),
            binary: None,
        },
        (_, false) => Compiled {
            outcome: Outcome::CompileError,
            detail: errors,
            binary: None,
        },
        (_, true) => Compiled {
            outcome: Outcome::Pass,
            detail: if object_only {
                "compiled (-c, harness without main)".into()
            } else {
                "compiled and linked".into()
            },
            binary: (!object_only).then_some(out_path),
        },
    }
}

/// The compiler's error lines (at most five), or its last lines when none says `error`.
fn error_lines(log: &str) -> String {
    let errs: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("error"))
        .map(str::trim)
        .take(5)
        .collect();
    if errs.is_empty() {
        let lines: Vec<&str> = log.lines().collect();
        lines[lines.len().saturating_sub(3)..].join(" | ")
    } else {
        errs.join(" | ")
    }
}
