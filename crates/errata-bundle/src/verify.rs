//! `errata bundle verify`: everything that can be wrong with a bundle file, each problem
//! naming the member (or file) at fault.

use std::path::Path;

use errata_consumer::archive::Archive;
use errata_consumer::{ENTRIES, MANIFEST, Manifest};

use crate::SHA256SUMS;
use crate::schemas::MANIFEST_SCHEMA;
use crate::write::parse_sums;

/// The outcome of verifying one bundle file.
#[derive(Debug, Clone, Default)]
pub struct VerifyReport {
    /// The manifest, when it could be read.
    pub manifest: Option<Manifest>,
    /// Each problem, as `<member or file>: <what is wrong>`; empty when the bundle is
    /// intact.
    pub problems: Vec<String>,
}

impl VerifyReport {
    /// True when nothing is wrong.
    pub fn is_ok(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Verifies `path`: its line in the `SHA256SUMS` beside it, that it is a well-formed
/// archive, the manifest against the manifest schema, every member's size and sha256
/// against the manifest, that nothing is missing or extra, and that `entries.json`
/// holds the number of entries the manifest counts.
pub fn verify(path: &Path) -> VerifyReport {
    verify_with_sums(path, &path.with_file_name(SHA256SUMS))
}

/// [`verify`] against the checksum file `sums` (as published with the bundle) instead of
/// the `SHA256SUMS` beside it.
pub fn verify_with_sums(path: &Path, sums: &Path) -> VerifyReport {
    let mut report = VerifyReport::default();
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            report.problems.push(format!("{}: {e}", path.display()));
            return report;
        }
    };

    match std::fs::read_to_string(sums) {
        Ok(text) => match parse_sums(&text).into_iter().find(|(f, _)| *f == name) {
            Some((_, expected)) => {
                let actual = errata_consumer::archive::sha256_hex(&bytes);
                if actual != expected {
                    report.problems.push(format!(
                        "{name}: sha256 {actual} differs from {SHA256SUMS} ({expected})"
                    ));
                }
            }
            None => report.problems.push(format!(
                "{}: has no line for {name} (a bundle is checked against the checksum file published with it)",
                sums.display()
            )),
        },
        Err(e) => report.problems.push(format!(
            "{}: {e} (a bundle is checked against the {SHA256SUMS} published with it; name it with --sums)",
            sums.display()
        )),
    }

    let head = errata_consumer::entries_head::ENTRIES_HEAD;
    let archive = match Archive::read(bytes.as_slice(), &|p| {
        p == ENTRIES || p == errata_consumer::matcher_index::ENTRIES_INDEX || p == head
    }) {
        Ok(a) => a,
        Err(e) => {
            report.problems.push(e.to_string());
            return report;
        }
    };
    match serde_json::from_slice::<serde_json::Value>(&archive.manifest_bytes) {
        Ok(value) => report.problems.extend(schema_problems(&value)),
        Err(e) => report
            .problems
            .push(format!("member `{MANIFEST}`: not JSON: {e}")),
    }
    let manifest = match archive.manifest() {
        Ok(m) => m,
        Err(e) => {
            report.problems.push(format!("member `{MANIFEST}`: {e}"));
            return report;
        }
    };
    report
        .problems
        .extend(archive.problems(&manifest).iter().map(ToString::to_string));
    if let Some(data) = archive.data(ENTRIES) {
        match errata_consumer::parse_entries(data) {
            Ok(entries) if entries.len() as u64 != manifest.counts.entries => {
                report.problems.push(format!(
                    "member `{ENTRIES}`: holds {} entries, the manifest counts {}",
                    entries.len(),
                    manifest.counts.entries
                ))
            }
            Ok(_) => {}
            Err(e) => report.problems.push(format!("member `{ENTRIES}`: {e}")),
        }
    }
    let index = errata_consumer::matcher_index::ENTRIES_INDEX;
    if let Some(data) = archive.data(index) {
        report.problems.extend(
            errata_consumer::matcher_index::problems(data)
                .into_iter()
                .map(|p| format!("member `{index}`: {p}")),
        );
    }
    if let (Some(data), Some(entries)) = (archive.data(head), archive.data(ENTRIES)) {
        report.problems.extend(
            errata_consumer::entries_head::problems(data, entries)
                .into_iter()
                .map(|p| format!("member `{head}`: {p}")),
        );
    }
    let expected_name =
        crate::write::bundle_file_name(manifest.version.parse().unwrap_or(crate::version::INITIAL));
    if name.starts_with("errata-") && name != expected_name {
        report.problems.push(format!(
            "{name}: the manifest says version {}, so the file should be {expected_name}",
            manifest.version
        ));
    }
    report.manifest = Some(manifest);
    report
}

/// Problems of a manifest against [`MANIFEST_SCHEMA`].
pub fn schema_problems(manifest: &serde_json::Value) -> Vec<String> {
    let schema: serde_json::Value = match serde_json::from_str(MANIFEST_SCHEMA) {
        Ok(s) => s,
        Err(e) => return vec![format!("bundle-manifest.schema.json: {e}")],
    };
    let validator = match jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&schema)
    {
        Ok(v) => v,
        Err(e) => return vec![format!("bundle-manifest.schema.json: {e}")],
    };
    validator
        .iter_errors(manifest)
        .map(|e| {
            format!(
                "member `{MANIFEST}`: {} at {}",
                e,
                if e.instance_path().as_str().is_empty() {
                    "/"
                } else {
                    e.instance_path().as_str()
                }
            )
        })
        .collect()
}
