//! The bodies of errata's fuzz targets: each takes arbitrary bytes, feeds them to the
//! real entry point of one parser, and asserts what must hold for every input (no panic,
//! spans inside the input, the same answer twice, agreement with a second way of
//! computing it). A failed assertion panics, which is what a fuzzer reports.
//!
//! Two callers: the libFuzzer binaries in `fuzz/` (built with coverage instrumentation by
//! `cargo xtask fuzz`), and `tests/replay.rs`, which runs every committed corpus input and
//! every crash found so far (`fuzz/corpus/<target>/`, `fuzz/regressions/<target>/`)
//! through the same functions in a plain `cargo test`.
//!
//! | target | feeds |
//! | --- | --- |
//! | [`entry`] | an entry file: loading, the checker's rules, every report format |
//! | [`article`] | an article: front matter, Markdown structure with offsets, the checker, reports |
//! | [`fence_info`] | a code fence's info string and an entry's `verify.annotations` |
//! | [`bundle`] | a bundle: raw `.tar.gz`, a tar (gzipped here), or `entries.json` in a valid archive |
//! | [`matcher`] | regexes (with aliases) and log lines: compile, scan, compare with `regex` |
#![deny(missing_docs)]

mod bundle;
mod fence_info;
mod knowledge_base;
mod matcher;

pub use bundle::{bundle, valid_archive};
pub use fence_info::fence_info;
pub use knowledge_base::{article, entry};
pub use matcher::matcher;

/// A target: arbitrary bytes in, a panic for a broken invariant.
pub type Target = fn(&[u8]);

/// Every target, by the name its fuzz binary, corpus and regression directories have.
pub const TARGETS: &[(&str, Target)] = &[
    ("entry", entry),
    ("article", article),
    ("fence_info", fence_info),
    ("bundle", bundle),
    ("matcher", matcher),
];
