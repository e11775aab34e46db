//! Checking every external URL of an errata knowledge base, politely, with a cache.
//!
//! Entries cite documentation, forum threads and papers; articles link to them; links
//! rot. This crate is `errata links`:
//!
//! - [`collect`] finds every http(s) URL and where it is written (a JSON pointer such as
//!   `/workarounds/1/sources/0` in an entry, the URL's bytes in an article), as [`Site`]s;
//! - [`Checker`] requests each distinct URL once (HEAD, GET where HEAD is refused),
//!   follows redirects by hand, retries with backoff, honours `429 Retry-After`, and keeps
//!   to a concurrency limit overall and per host ([`CheckOptions`]), giving an [`Outcome`];
//! - [`Cache`] remembers outcomes with their time, so a scheduled job re-checks only what
//!   is due, and `--offline` can report from it alone;
//! - [`run`] ties them together and returns [`errata_model::Diagnostic`]s — `link-dead`
//!   (error) and `link-redirect` (warning), documented in [`RULE_DOCS`] — resolved to
//!   line:column by the loader.
//!
//! **Offline and unknown URLs.** With [`Settings::offline`], nothing touches the network:
//! every URL is answered from the cache whatever its age. A URL that was never checked
//! has no verdict; it is listed in [`Report::unknown`] (the CLI prints a note) and is not
//! a diagnostic, because "not checked yet" is not a problem in the data. The same goes
//! for a URL whose host still answers `429` after every retry.
//!
//! ```
//! // A knowledge base with one entry citing one page (never fetched here: offline).
//! let dir = tempfile::tempdir()?;
//! std::fs::create_dir_all(dir.path().join("signatures/cuda"))?;
//! std::fs::write(
//!     dir.path().join("signatures/cuda/oom.json"),
//!     r#"{"id": "cuda/oom", "official_doc_url": "https://docs.example.com/cuda#oom"}"#,
//! )?;
//! let kb = errata_load::KnowledgeBase::load(dir.path())?;
//!
//! let sites = errata_links::collect(&kb);
//! assert_eq!(sites[0].key, "https://docs.example.com/cuda");
//!
//! let settings = errata_links::Settings {
//!     offline: true,
//!     cache: dir.path().join("links.json"),
//!     ..errata_links::Settings::new()
//! };
//! let report = errata_links::run(&kb, &settings)?;
//! assert!(report.diagnostics.is_empty());
//! assert_eq!(report.unknown.len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod cache;
mod check;
mod collect;
mod diagnose;
mod duration;
mod outcome;
mod progress;
mod retry_after;
mod rules;
mod run;

use std::path::PathBuf;

pub use cache::{Cache, Cached};
pub use check::{CheckOptions, Checker};
pub use collect::{Site, collect, url_key};
pub use diagnose::diagnose;
pub use duration::parse_duration;
pub use outcome::Outcome;
pub use progress::Progress;
pub use retry_after::retry_after;
pub use rules::{RULE_DOCS, rule_summary};
pub use run::{Report, Settings, run};

/// A failure of the tool itself (exit code 2), never a problem in the data.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The cache file could not be read, parsed or written.
    #[error("link cache {}: {message}", path.display())]
    Cache {
        /// The cache file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// The HTTP client or its runtime could not be set up.
    #[error("cannot check links: {0}")]
    Client(String),
}
