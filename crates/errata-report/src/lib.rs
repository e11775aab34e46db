//! Printing diagnostics.
//!
//! [`render`] turns resolved, sorted [`Diagnostic`]s into one of the [`Format`]s.
//! The caller supplies a [`Context`]: how many files were checked, a way to fetch a
//! file's text (for source excerpts) and the rule summaries (for SARIF).
//!
//! ```
//! use errata_model::{Anchor, Diagnostic, Location};
//! use errata_report::{render, Context, Format};
//!
//! let mut d = Diagnostic::error("date-order", "data/x.json", Anchor::Value("/first_seen".into()), "out of order");
//! d.location = Some(Location { line: 1, column: 1, start: 0, end: 0 });
//! let cx = Context { files: 1, source: &|_| None, rule_summary: &|_| None, color: false };
//! let json = render(Format::Json, &[d], &cx);
//! assert!(json.contains("\"rule\": \"date-order\""));
//! ```
#![deny(missing_docs)]

use std::path::Path;

use errata_model::Diagnostic;

mod github;
mod human;
mod json;
mod sarif;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// rustc-style text with source excerpts.
    Human,
    /// `{"version":1,"summary":…,"diagnostics":[…]}`.
    Json,
    /// SARIF 2.1.0.
    Sarif,
    /// GitHub Actions workflow commands (`::error file=…::…`).
    Github,
}

/// What the renderers need besides the diagnostics.
pub struct Context<'a> {
    /// How many files were checked (for the summary).
    pub files: usize,
    /// The text of a file, for excerpts.
    pub source: &'a dyn Fn(&Path) -> Option<&'a str>,
    /// A rule's one-line summary, for SARIF's rule table.
    pub rule_summary: &'a dyn Fn(&str) -> Option<&'static str>,
    /// Colour the human output.
    pub color: bool,
}

/// Error and warning counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    /// Errors.
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
}

/// Counts errors and warnings.
pub fn counts(diagnostics: &[Diagnostic]) -> Counts {
    let errors = diagnostics
        .iter()
        .filter(|d| d.severity == errata_model::Severity::Error)
        .count();
    Counts {
        errors,
        warnings: diagnostics.len() - errors,
    }
}

/// Renders `diagnostics` (already resolved and sorted) in `format`.
pub fn render(format: Format, diagnostics: &[Diagnostic], cx: &Context<'_>) -> String {
    match format {
        Format::Human => human::render(diagnostics, cx),
        Format::Json => json::render(diagnostics, cx),
        Format::Sarif => sarif::render(diagnostics, cx),
        Format::Github => github::render(diagnostics),
    }
}

/// A path as every format prints it: `/`-separated.
pub(crate) fn slash_path(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}
