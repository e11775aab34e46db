//! Write, verify and compare errata data bundles.
//!
//! A bundle is `errata-<version>.tar.gz` plus a `SHA256SUMS` line and a `CHANGELOG.md`
//! beside it. Its members, in this order:
//!
//! | member | what |
//! |---|---|
//! | `manifest.json` | format_version, data version, schema version, counts, source commit, build date, size and sha256 of every other member (`schema/bundle-manifest.schema.json`) |
//! | `CHANGELOG.md` | what changed in each version |
//! | `articles/<domain>/<slug>[.zh].md` / `.txt` | articles as written, and as plain text |
//! | `entries.json` / `entries.jsonl` | every entry, sorted by id (one array / one per line) |
//! | `errata.sqlite` | tables plus FTS5 search in English and Chinese (see [`sqlite`]) |
//! | `runs/…` | snippet run records, as in `data/runs/` |
//! | `schema/*.json` | the JSON Schemas |
//!
//! [`write_bundle`] builds it from a loaded [`errata_load::KnowledgeBase`]: the same
//! input gives the same bytes (fixed member order, mtimes, owners and modes; a gzip
//! header without a timestamp; a deterministically built SQLite file; the build date from
//! `SOURCE_DATE_EPOCH`). With [`BundleOptions::previous`] it compares the new content
//! with the previous bundle ([`Diff`]) and picks the version from the semver bump.
//! [`verify()`] checks a bundle file and names the member that is wrong. Reading bundles
//! is `errata-consumer`'s job; this crate builds on its [`errata_consumer::archive`].
//!
//! # Example
//!
//! ```no_run
//! use errata_bundle::{BundleOptions, verify, write_bundle};
//!
//! let kb = errata_load::KnowledgeBase::load("data".as_ref())?;
//! let path = write_bundle(&kb, &BundleOptions::default())?;
//! let report = verify(&path);
//! assert!(report.is_ok(), "{:?}", report.problems);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

mod diff;
mod error;
mod plaintext;
pub mod sqlite;
mod verify;
pub mod version;
mod write;

use std::path::{Path, PathBuf};

pub use diff::{Changed, Diff, Snapshot};
pub use error::Error;
pub use plaintext::markdown_to_text;
pub use verify::{MANIFEST_SCHEMA, VerifyReport, schema_problems, verify};
pub use version::{Bump, Version};
pub use write::{Written, bundle_file_name, write_bundle, write_bundle_report};

/// The changelog member (and the file beside the bundle).
pub const CHANGELOG: &str = "CHANGELOG.md";
/// The checksum file beside the bundle.
pub const SHA256SUMS: &str = "SHA256SUMS";

/// How to write a bundle.
#[derive(Debug, Clone)]
pub struct BundleOptions {
    /// Where the bundle goes (`dist/bundle`).
    pub out_dir: PathBuf,
    /// The JSON Schemas to include; `entry.schema.json`'s `x-schema-version` is the
    /// schema version (`schema`).
    pub schema_dir: PathBuf,
    /// The version to write; `None`: the previous bundle's, bumped, or 1.0.0.
    pub version: Option<Version>,
    /// The previous bundle, to diff against for the version and the changelog.
    pub previous: Option<PathBuf>,
    /// The source commit; `None`: `ERRATA_SOURCE_COMMIT`, else `git rev-parse HEAD` in
    /// the data directory, else unknown.
    pub source_commit: Option<String>,
    /// Build time (Unix seconds); `None`: `SOURCE_DATE_EPOCH`, else 0.
    pub epoch: Option<u64>,
}

impl Default for BundleOptions {
    fn default() -> Self {
        BundleOptions {
            out_dir: PathBuf::from("dist/bundle"),
            schema_dir: PathBuf::from("schema"),
            version: None,
            previous: None,
            source_commit: None,
            epoch: None,
        }
    }
}

impl BundleOptions {
    fn epoch(&self) -> Result<u64, Error> {
        if let Some(e) = self.epoch {
            return Ok(e);
        }
        match std::env::var("SOURCE_DATE_EPOCH") {
            Ok(v) if !v.trim().is_empty() => v.trim().parse().map_err(|_| {
                Error::Invalid(format!("SOURCE_DATE_EPOCH={v} is not a number of seconds"))
            }),
            _ => Ok(0),
        }
    }

    fn source_commit(&self, data_dir: &Path) -> Option<String> {
        let valid = |s: &str| {
            (7..=64).contains(&s.len())
                && s.bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        };
        if let Some(c) = &self.source_commit {
            return valid(c).then(|| c.clone());
        }
        if let Ok(c) = std::env::var("ERRATA_SOURCE_COMMIT") {
            let c = c.trim().to_ascii_lowercase();
            return valid(&c).then_some(c);
        }
        let dir = if data_dir.as_os_str().is_empty() {
            Path::new(".")
        } else {
            data_dir
        };
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(["rev-parse", "HEAD"])
            .output()
            .ok()?;
        let c = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (out.status.success() && valid(&c)).then_some(c)
    }
}
