//! Load an errata data bundle and recognise known GPU/CUDA errors in logs.
//!
//! A bundle (`errata-<version>.tar.gz`, written by `errata bundle` or `errata build`) holds
//! the knowledge base: every entry, articles, run records, JSON Schemas and an SQLite
//! database. This crate reads the part a log scanner needs:
//!
//! - [`Bundle::open`] / [`Bundle::from_bytes`] read the archive in one pass, hash every
//!   member and compare it with `manifest.json`, refuse a `format_version` outside
//!   [`OLDEST_FORMAT_VERSION`]`..=`[`FORMAT_VERSION`] with a clear
//!   [`Error::UnsupportedFormat`], and compile the
//!   entries' regexes into an [`Index`].
//! - [`Bundle::match_text`] returns the known errors in a text as [`Found`]s: the
//!   [`Entry`], the 1-based line, the byte span, most specific first within a line.
//!   [`Entry::advice`] gives the root cause, what not to try and what to try, in English
//!   or Chinese ([`Lang`]).
//! - [`Bundle::scan`] does the same over a `Read` of any size, in bounded memory.
//!
//! The lower layers are public for tools that need them: [`archive::Archive`] (read and
//! check members without trusting them; `errata bundle verify` is built on it) and
//! [`Index`] (entries plus matcher, built from entries that did not come from a bundle).
//!
//! Dependencies are few on purpose: serde, tar, flate2, sha2, memchr and `errata-matcher`.
//!
//! # Example
//!
//! ```no_run
//! use errata_consumer::{Bundle, Lang};
//!
//! let bundle = Bundle::open("dist/bundle/errata-1.0.0.tar.gz")?;
//! let log = "step 12\nRuntimeError: CUDA error: an illegal memory access was encountered\n";
//! for found in bundle.match_text(log) {
//!     let advice = found.entry.advice(Lang::En);
//!     println!("line {}: {} — {}", found.line, found.entry.id, advice.root_cause);
//!     for step in advice.workarounds {
//!         println!("  try: {}", step.action);
//!     }
//! }
//! # Ok::<(), errata_consumer::Error>(())
//! ```
//!
//! `examples/scan_log.rs` is a complete program: `cargo run -p errata-consumer --example
//! scan_log -- BUNDLE [LOG]`.
#![deny(missing_docs)]

pub mod archive;
mod bundle;
pub mod entries_head;
mod entry;
mod error;
mod index;
mod log_file;
mod manifest;
pub mod matcher_index;
mod numbers;
mod scan;
pub mod summary;
mod xid_catalog;

pub use bundle::{Bundle, DATABASE, ENTRIES, parse_entries};
pub use entry::{Advice, DeadEnd, Entry, Lang, Step, Texts, Workaround};
pub use errata_matcher::Via;
pub use error::Error;
pub use index::{CHUNK_BYTES, Found, Index, JsonLines, MAX_LINE_BYTES, ScanStats};
pub use manifest::{Counts, FORMAT_VERSION, FileRecord, MANIFEST, Manifest, OLDEST_FORMAT_VERSION};
