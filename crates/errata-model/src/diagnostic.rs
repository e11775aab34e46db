use std::path::PathBuf;

use serde::Serialize;

/// How serious a diagnostic is. Errors fail `errata check`; warnings do not unless
/// `--deny-warnings` is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Fails the check (exit code 1).
    Error,
    /// Reported, but the check still passes.
    Warning,
}

impl Severity {
    /// The lower-case name used in every output format.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// What part of a file a diagnostic is about, before it is resolved to a line and column.
///
/// Rules produce anchors; only the files that do have diagnostics are ever re-scanned to
/// turn a JSON pointer into a byte range, which keeps a clean corpus fast to check.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Anchor {
    /// The whole file (reported at 1:1).
    File,
    /// A byte range in the file's text.
    Bytes(std::ops::Range<usize>),
    /// The JSON value at this pointer (RFC 6901), e.g. `/dead_ends/0/action`.
    Value(String),
    /// The key (property name) at this pointer, e.g. an unknown key.
    Key(String),
}

/// A resolved position: 1-based line and column (in Unicode scalar values), plus the byte
/// range it covers so that a renderer can underline it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Location {
    /// 1-based line.
    pub line: usize,
    /// 1-based column, counted in characters.
    pub column: usize,
    /// Start of the underlined bytes.
    pub start: usize,
    /// End (exclusive) of the underlined bytes.
    pub end: usize,
}

/// One problem in one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// The stable rule id, e.g. `date-order`.
    pub rule: &'static str,
    /// Error or warning (after configuration overrides).
    pub severity: Severity,
    /// The file, as given to or found by the tool.
    pub file: PathBuf,
    /// What the diagnostic points at.
    pub anchor: Anchor,
    /// Filled in by the loader's resolver; `None` until then.
    pub location: Option<Location>,
    /// One sentence: what is wrong.
    pub message: String,
    /// One sentence: how to fix it.
    pub help: Option<String>,
}

impl Diagnostic {
    /// A new error diagnostic.
    pub fn error(
        rule: &'static str,
        file: impl Into<PathBuf>,
        anchor: Anchor,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            rule,
            severity: Severity::Error,
            file: file.into(),
            anchor,
            location: None,
            message: message.into(),
            help: None,
        }
    }

    /// A new warning diagnostic.
    pub fn warning(
        rule: &'static str,
        file: impl Into<PathBuf>,
        anchor: Anchor,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(rule, file, anchor, message)
        }
    }

    /// Adds a help line.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// The JSON pointer this diagnostic is about, when it is about a JSON value or key.
    pub fn pointer(&self) -> Option<&str> {
        match &self.anchor {
            Anchor::Value(p) | Anchor::Key(p) => Some(p),
            Anchor::File | Anchor::Bytes(_) => None,
        }
    }

    /// The order every output uses: file, line, column, rule, message.
    pub fn sort_key(&self) -> (&std::path::Path, usize, usize, &'static str, &str) {
        let loc = self.location.unwrap_or_default();
        (&self.file, loc.line, loc.column, self.rule, &self.message)
    }
}
