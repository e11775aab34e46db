//! Run records (`schema/run-record.schema.json`): one JSON file per article or entry
//! under `<data>/runs/`, holding what a run tier observed for each of its snippets.
//! A record applies only while its `sha256` still matches the snippet's code.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::outcome::{Outcome, Tier};

/// `stderr_excerpt` is at most this many characters (the schema's `maxLength`).
pub const EXCERPT_CHARS: usize = 4000;

/// One run of one snippet.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunRecord {
    /// The article or entry, relative to the data directory, `/`-separated.
    pub file: String,
    /// 1-based line of the opening fence (or the `verify` key).
    pub line: usize,
    /// sha256 of the snippet's code (joined `cont` program).
    pub sha256: String,
    /// The tier that produced the record.
    pub tier: Tier,
    /// The outcome.
    pub outcome: Outcome,
    /// The expectation as annotated.
    pub expect: String,
    /// GPU model, e.g. `NVIDIA H200`.
    pub gpu_name: Option<String>,
    /// e.g. `9.0`.
    pub compute_capability: Option<String>,
    /// NVIDIA driver version.
    pub driver_version: Option<String>,
    /// CUDA runtime version used.
    pub cuda_version: Option<String>,
    /// nvcc version used to compile it.
    pub nvcc_version: Option<String>,
    /// PyTorch version.
    pub torch_version: Option<String>,
    /// Python version.
    pub python_version: Option<String>,
    /// Wall-clock duration.
    pub duration_ms: u64,
    /// The end of stderr (at most [`EXCERPT_CHARS`] characters).
    pub stderr_excerpt: String,
    /// YYYY-MM-DD.
    pub date: String,
}

/// One records file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordFile {
    /// Always 1.
    pub version: u32,
    /// The records, sorted by line.
    pub records: Vec<RunRecord>,
}

/// `<data>/runs/<file without extension>.json`.
pub fn records_path(data_dir: &Path, data_file: &str) -> PathBuf {
    let stem = match data_file.rsplit_once('.') {
        Some((stem, _)) if !stem.is_empty() && !stem.ends_with('/') => stem,
        _ => data_file,
    };
    data_dir.join("runs").join(format!("{stem}.json"))
}

/// The last [`EXCERPT_CHARS`] characters of `stderr` (where errors are).
pub fn excerpt(stderr: &str) -> String {
    let n = stderr.chars().count();
    stderr
        .chars()
        .skip(n.saturating_sub(EXCERPT_CHARS))
        .collect()
}

/// Reads a records file, bounded like every file of a data directory (a record file is
/// data: it may come from a pull request or back from another machine).
pub fn read(path: &Path) -> Result<RecordFile, String> {
    let text = errata_load::read_bounded(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Adds `records` to their files under `<data>/runs/`, replacing older records of the
/// same snippet (same file, and same line or same code); returns the files written.
pub fn merge_into(data_dir: &Path, records: &[RunRecord]) -> Result<Vec<PathBuf>, String> {
    let mut by_file: std::collections::BTreeMap<&str, Vec<&RunRecord>> = Default::default();
    for r in records {
        by_file.entry(r.file.as_str()).or_default().push(r);
    }
    // The records come back from another machine (the runner pack's results): a `file`
    // that is not a data file's relative path must not choose where to write. All are
    // checked before anything is written.
    for file in by_file.keys() {
        let normal = Path::new(file)
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !normal || !(file.starts_with("articles/") || file.starts_with("signatures/")) {
            return Err(format!(
                "run record for `{file}`: not a data file's relative path; nothing was written"
            ));
        }
    }
    let mut written = Vec::new();
    for (file, new) in by_file {
        let path = records_path(data_dir, file);
        let mut existing = if path.exists() {
            read(&path)?
        } else {
            RecordFile {
                version: 1,
                records: Vec::new(),
            }
        };
        // A new record replaces the old one of the same place or of the same code (the
        // snippet moved since its last run).
        existing.records.retain(|old| {
            !new.iter()
                .any(|n| n.line == old.line || n.sha256 == old.sha256)
        });
        existing.records.extend(new.into_iter().cloned());
        existing.records.sort_by_key(|r| r.line);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        let mut text = serde_json::to_string_pretty(&existing).map_err(|e| e.to_string())?;
        text.push('\n');
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        written.push(path);
    }
    Ok(written)
}

/// Whether a record still describes a snippet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// A snippet of that file still has the recorded hash.
    Current,
    /// The snippet changed: the record no longer counts.
    Stale,
}

/// A record is current while some snippet of its file has its hash. The line is where
/// the snippet was when it ran: text added above it (a new source, a longer root
/// cause) moves it without changing what ran, so it is not compared, as the site's
/// "verified" badge does not compare it either.
pub fn freshness(record: &RunRecord, snippets: &[(String, usize, String)]) -> Freshness {
    let current = snippets
        .iter()
        .any(|(f, _, h)| *f == record.file && *h == record.sha256);
    if current {
        Freshness::Current
    } else {
        Freshness::Stale
    }
}

/// Each program of `snippets` as a record names it: its data file, the line of its first
/// block and the sha256 of its code (what [`freshness`] and [`crate::pack::ingest`] compare).
pub fn current(snippets: &[crate::Snippet]) -> Vec<(String, usize, String)> {
    current_of(&crate::programs(snippets), snippets)
}

/// [`current`] of programs already grouped from `snippets`.
pub(crate) fn current_of(
    programs: &[crate::Program],
    snippets: &[crate::Snippet],
) -> Vec<(String, usize, String)> {
    programs
        .iter()
        .map(|p| {
            let h = &snippets[p.parts[0]];
            (h.data_file.clone(), h.line, p.sha256.clone())
        })
        .collect()
}

/// Every record under `<data>/runs/` with its freshness against `snippets` (the current
/// extraction of the same data directory). Unreadable files are returned as errors.
pub fn load_all(
    data_dir: &Path,
    snippets: &[crate::Snippet],
) -> (Vec<(RunRecord, Freshness)>, Vec<String>) {
    let current = current(snippets);
    let mut out = Vec::new();
    let mut errors = Vec::new();
    let mut stack = vec![data_dir.join("runs")];
    let mut files = Vec::new();
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json") {
                files.push(p);
            }
        }
    }
    files.sort();
    for f in files {
        match read(&f) {
            Ok(file) => {
                for r in file.records {
                    let fresh = freshness(&r, &current);
                    out.push((r, fresh));
                }
            }
            Err(e) => errors.push(e),
        }
    }
    (out, errors)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(file: &str) -> RunRecord {
        serde_json::from_value(serde_json::json!({
            "file": file, "line": 3, "sha256": "0".repeat(64), "tier": "run",
            "outcome": "pass", "expect": "ok", "gpu_name": null,
            "compute_capability": null, "driver_version": null, "cuda_version": null,
            "nvcc_version": null, "torch_version": null, "python_version": null,
            "duration_ms": 1, "stderr_excerpt": "", "date": "2026-11-25"
        }))
        .expect("a record")
    }

    #[test]
    fn records_naming_a_file_outside_the_data_directory_write_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(&data).unwrap();
        for hostile in [
            "../../escaped.md",
            "articles/../../../escaped.md",
            "/tmp/escaped.md",
            "runs/x.md",
            "",
        ] {
            let records = [record("articles/cuda/ok.md"), record(hostile)];
            let err = merge_into(&data, &records).unwrap_err();
            assert!(
                err.contains("not a data file's relative path"),
                "{hostile}: {err}"
            );
            assert!(!data.join("runs").exists(), "{hostile}: nothing written");
        }
        assert!(!dir.path().join("escaped.json").exists());
        let written = merge_into(&data, &[record("articles/cuda/ok.md")]).unwrap();
        assert_eq!(written, [data.join("runs/articles/cuda/ok.json")]);
    }

    #[test]
    fn a_new_run_replaces_the_record_of_a_moved_snippet() {
        let dir = tempfile::tempdir().unwrap();
        let mut old = record("articles/cuda/ok.md");
        old.date = "2026-11-01".into();
        let mut other = record("articles/cuda/ok.md");
        other.line = 40;
        other.sha256 = "1".repeat(64);
        merge_into(dir.path(), &[old, other]).unwrap();
        // The same code, now 5 lines lower: one record for it, at its new line.
        let mut moved = record("articles/cuda/ok.md");
        moved.line = 8;
        merge_into(dir.path(), &[moved]).unwrap();
        let file = read(&records_path(dir.path(), "articles/cuda/ok.md")).unwrap();
        let lines: Vec<(usize, &str)> = file
            .records
            .iter()
            .map(|r| (r.line, r.date.as_str()))
            .collect();
        assert_eq!(lines, [(8, "2026-11-25"), (40, "2026-11-25")]);
    }
}
