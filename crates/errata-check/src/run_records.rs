//! Looking up a snippet's run records (`<data>/runs/<data file without its extension>.json`,
//! written by `cargo xtask snippets --ingest`) for the rules that rest on them: a
//! `reproduced` tier (`tier-unsupported`) and a `runs` basis (`rate-basis-mismatch`).

use std::path::PathBuf;

use crate::context::Ctx;

/// What the run records say about one snippet.
pub(crate) enum RunRecords {
    /// `runs/` has no record file for the snippet's data file.
    NoFile(PathBuf),
    /// The record file is not JSON.
    Unreadable(PathBuf, String),
    /// A run-tier record of this very code confirmed its annotation: the outcome was
    /// `pass` or `expected-error-observed`.
    Confirmed,
    /// The records are of other code, another tier or line, or the run contradicted the
    /// annotation.
    NotConfirmed,
}

/// The records of the snippet whose code is `code` in `file` (data-relative, `/`-separated)
/// and, when given, whose fence opens on `line`.
pub(crate) fn confirming_run(
    cx: &Ctx<'_>,
    file: &str,
    line: Option<usize>,
    code: &str,
) -> RunRecords {
    let stem = file.rsplit_once('.').map_or(file, |(stem, _)| stem);
    let path = cx.kb.root.join("runs").join(format!("{stem}.json"));
    let Ok(text) = std::fs::read_to_string(&path) else {
        return RunRecords::NoFile(path);
    };
    let records: serde_json::Value = match serde_json::from_str(&text) {
        Ok(v) => v,
        Err(err) => return RunRecords::Unreadable(path, err.to_string()),
    };
    let hash = errata_load::sha256_hex(code.as_bytes());
    let confirmed = records["records"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|r| {
            r["file"] == file
                && line.is_none_or(|l| r["line"].as_u64() == Some(l as u64))
                && r["sha256"] == hash.as_str()
                && r["tier"] == "run"
                && matches!(
                    r["outcome"].as_str(),
                    Some("pass" | "expected-error-observed")
                )
        });
    if confirmed {
        RunRecords::Confirmed
    } else {
        RunRecords::NotConfirmed
    }
}
