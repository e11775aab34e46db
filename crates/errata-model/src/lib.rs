//! The plain data types of the errata knowledge base.
//!
//! Everything else in errata reads and writes these types:
//!
//! - [`Entry`]: one signature entry (`data/signatures/<domain>/<slug>.json`).
//! - [`FrontMatter`]: the YAML header of an article (`data/articles/<domain>/<slug>.md`).
//! - [`Diagnostic`]: one problem found in one file, anchored by an [`Anchor`] that the
//!   loader later resolves to a line and column.
//! - [`snippet::Annotations`]: the grammar of code-fence annotations
//!   (`expect=…`, `harness=…`, `ignore(reason)`, …).
//! - [`slug::heading_slug`]: the one definition of a heading's `#anchor`, shared by the
//!   link checker and the site so that they can never disagree.
//! - [`cuda_errors`]: the `cudaError_t` table generated from CUDA's own headers.
//!
//! This crate does no I/O: it is the bottom of the crate graph.
//!
//! ```
//! let json = r#"{"id": "cuda/oom", "signature": "CUDA out of memory"}"#;
//! let entry: errata_model::Entry = serde_json::from_str(json).unwrap();
//! assert_eq!(entry.domain_and_slug(), Some(("cuda", "oom")));
//! ```
#![deny(missing_docs)]

pub mod cuda_errors;
pub mod date;
mod diagnostic;
mod entry;
mod frontmatter;
pub mod host;
pub mod slug;
pub mod snippet;
pub mod status_codes;
pub mod xid;

pub use diagnostic::{Anchor, Diagnostic, Location, Severity};
pub use entry::{
    Affect, Basis, BasisItem, DeadEnd, Entry, Snippet, TransitionGraph, VersionInfo, Workaround,
    estimate_band, estimate_words, rate_shown, truncate, wilson_interval,
};
pub use frontmatter::FrontMatter;
