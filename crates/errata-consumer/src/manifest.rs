//! `manifest.json`: what a bundle holds and how to check it.

use serde::{Deserialize, Serialize};

/// The bundle layout this crate writes. 2 added the manifest's `license`.
pub const FORMAT_VERSION: u64 = 2;

/// The oldest layout this crate still reads (a format 1 manifest has no `license`). A
/// bundle outside `OLDEST_FORMAT_VERSION..=FORMAT_VERSION` is refused: the layout may have
/// changed in ways this reader would misread silently.
pub const OLDEST_FORMAT_VERSION: u64 = 1;

/// The name of the manifest member; it is the first member of every bundle.
pub const MANIFEST: &str = "manifest.json";

/// The parsed `manifest.json` (described by `schema/bundle-manifest.schema.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    /// The bundle layout version ([`FORMAT_VERSION`]).
    pub format_version: u64,
    /// Always `errata`.
    pub name: String,
    /// The data version (semver): major for removed entries or breaking schema changes,
    /// minor for added entries, patch for content changes.
    pub version: String,
    /// The entry schema's `x-schema-version`.
    pub schema_version: String,
    /// The git commit the data was built from, when known.
    pub source_commit: Option<String>,
    /// Build time (RFC 3339, UTC), from `SOURCE_DATE_EPOCH` (1970-01-01 by default, so
    /// that builds are reproducible).
    pub build_date: String,
    /// How many of each thing the bundle holds.
    pub counts: Counts,
    /// The knowledge base's licence as an SPDX expression (from the
    /// `SPDX-License-Identifier:` line of `<data>/LICENSE`, whose text is the `LICENSE`
    /// member), or `None` when the data directory states none. Absent in format 1.
    #[serde(default)]
    pub license: Option<String>,
    /// Every member except the manifest itself, sorted by path.
    pub files: Vec<FileRecord>,
}

/// Counts of the bundle's contents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Counts {
    /// Signature entries.
    pub entries: u64,
    /// English articles.
    pub articles: u64,
    /// Translated articles.
    pub translations: u64,
    /// Snippet run records.
    pub runs: u64,
}

/// One member of the bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileRecord {
    /// Path inside the archive (`/`-separated, relative).
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Lower-case hex sha256 of the content.
    pub sha256: String,
}
