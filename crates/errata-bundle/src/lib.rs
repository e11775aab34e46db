//! Write, verify and compare errata data bundles.
//!
//! A bundle is `errata-<version>.tar.gz` plus a `SHA256SUMS` and a `CHANGELOG.md` beside
//! it. `SHA256SUMS` lists exactly the bundle file that run wrote (other files in the
//! directory are neither listed nor vouched for), so it is the same bytes for the same
//! input. The archive's members, in this order:
//!
//! | member | what |
//! |---|---|
//! | `manifest.json` | format_version, data version, schema version, counts, source commit, build date, size and sha256 of every other member (`schema/bundle-manifest.schema.json`) |
//! | `CHANGELOG.md` | what changed in each version |
//! | `LICENSE` | the knowledge base's licence, `<data>/LICENSE`, when there is one |
//! | `articles/<domain>/<slug>[.zh].md` / `.txt` | articles as written, and as plain text |
//! | `entries.head.json` | every entry without its advice, laid out as `entries.json` ([`errata_consumer::entries_head`]) |
//! | `entries.index.json` | each entry regex's analysis for the matcher ([`errata_consumer::matcher_index`]) |
//! | `entries.json` / `entries.jsonl` | every entry, sorted by id (one array / one per line) |
//! | `errata.sqlite` | tables plus FTS5 search over entries and articles, in English and Chinese (see [`sqlite`]) |
//! | `runs/…` | snippet run records, as in `data/runs/` |
//! | `schema/*.json` | the JSON Schemas, as built into this program ([`schemas`]) |
//!
//! [`write_bundle`] builds it from a loaded [`errata_load::KnowledgeBase`]: the same
//! input gives the same bytes (fixed member order, mtimes, owners and modes; a gzip
//! header without a timestamp, compressed in fixed pieces whatever the number of
//! threads; a deterministically built SQLite file; the build date from
//! `SOURCE_DATE_EPOCH`; the source commit, `-dirty` when the data directory has
//! uncommitted changes). With [`BundleOptions::previous`] it compares the new content
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
mod gz;
mod json;
mod plaintext;
pub mod schemas;
pub mod sqlite;
mod verify;
pub mod version;
mod write;

use std::path::{Path, PathBuf};

pub use diff::{Changed, Diff, Snapshot};
pub use error::Error;
pub use plaintext::markdown_to_text;
pub use schemas::MANIFEST_SCHEMA;
pub use verify::{VerifyReport, schema_problems, verify, verify_with_sums};
pub use version::{Bump, Version};
pub use write::{Written, bundle_file_name, write_bundle, write_bundle_report};

/// The changelog member (and the file beside the bundle).
pub const CHANGELOG: &str = "CHANGELOG.md";
/// The knowledge base's licence (`<data>/LICENSE`), carried as an archive member.
pub const LICENSE: &str = "LICENSE";
/// The checksum file beside the bundle.
pub const SHA256SUMS: &str = "SHA256SUMS";

/// How to write a bundle.
#[derive(Debug, Clone)]
pub struct BundleOptions {
    /// Where the bundle goes (`dist/bundle`).
    pub out_dir: PathBuf,
    /// Where the JSON Schemas to include come from: empty (the default) for the ones
    /// embedded in this program ([`schemas::EMBEDDED`]), else every `*.json` in this
    /// directory. `entry.schema.json`'s `x-schema-version` is the schema version.
    pub schema_dir: PathBuf,
    /// The version to write; `None`: the previous bundle's, bumped, or 1.0.0.
    pub version: Option<Version>,
    /// The previous bundle, to diff against for the version and the changelog.
    pub previous: Option<PathBuf>,
    /// The source commit; `None`: `ERRATA_SOURCE_COMMIT`, else `git rev-parse HEAD` in
    /// the data directory, with `-dirty` appended when `git status` reports changes
    /// (modified, staged, deleted or untracked files) inside the data directory; else
    /// unknown. Given here or in the environment, it must be hex, optionally with
    /// `-dirty`.
    pub source_commit: Option<String>,
    /// Build time (Unix seconds); `None`: `SOURCE_DATE_EPOCH`, else 0.
    pub epoch: Option<u64>,
}

impl Default for BundleOptions {
    fn default() -> Self {
        BundleOptions {
            out_dir: PathBuf::from("dist/bundle"),
            schema_dir: PathBuf::new(),
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
        if let Some(c) = &self.source_commit {
            return valid_commit(c).then(|| c.clone());
        }
        if let Ok(c) = std::env::var("ERRATA_SOURCE_COMMIT") {
            let c = c.trim().to_ascii_lowercase();
            return valid_commit(&c).then_some(c);
        }
        git_commit(data_dir)
    }
}

/// `<hex>` (7 to 64 lower-case digits), optionally followed by `-dirty`, as the manifest
/// schema allows.
fn valid_commit(c: &str) -> bool {
    let hex = c.strip_suffix(DIRTY).unwrap_or(c);
    (7..=64).contains(&hex.len())
        && hex
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// The suffix of a source commit whose data directory had uncommitted changes.
pub const DIRTY: &str = "-dirty";

/// `git rev-parse HEAD` in `data_dir`, plus [`DIRTY`] when `git status` shows anything
/// changed or untracked under `data_dir` (only the data is in the bundle; the schemas
/// come from this program).
fn git_commit(data_dir: &Path) -> Option<String> {
    let dir = if data_dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        data_dir
    };
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        out.status.success().then_some(out.stdout)
    };
    let head = String::from_utf8(git(&["rev-parse", "HEAD"])?).ok()?;
    let head = head.trim();
    if !valid_commit(head) || head.ends_with(DIRTY) {
        return None;
    }
    // `-- .`: paths under `dir` only (git resolves them against `-C`).
    let status = git(&["status", "--porcelain", "--untracked-files=all", "--", "."])?;
    Some(if status.is_empty() {
        head.to_string()
    } else {
        format!("{head}{DIRTY}")
    })
}
