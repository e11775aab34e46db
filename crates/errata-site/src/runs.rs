//! Snippet run records (`<data>/runs/**/*.json`, `schema/run-record.schema.json`) and
//! the verdict badge each snippet earns from them.
//!
//! A record applies to a snippet only while the sha256 of the snippet's code equals the
//! record's: edit the code and the page says "stale" until the snippet is run again.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::error::{Error, ErrorKind};

/// One run of one snippet (the fields the site shows).
#[derive(Debug, Clone, Deserialize)]
#[allow(missing_docs)]
pub struct RunRecord {
    pub file: String,
    pub line: u64,
    pub sha256: String,
    pub tier: String,
    pub outcome: String,
    #[serde(default)]
    pub gpu_name: Option<String>,
    #[serde(default)]
    pub compute_capability: Option<String>,
    #[serde(default)]
    pub cuda_version: Option<String>,
    pub date: String,
}

#[derive(Deserialize)]
struct RunFile {
    records: Vec<RunRecord>,
}

/// Every record, indexed by (data-relative file, code sha256) and by file alone.
#[derive(Debug, Default)]
pub struct Runs {
    by_hash: BTreeMap<(String, String), Vec<RunRecord>>,
    files: BTreeMap<String, usize>,
}

/// What the page says about one snippet (or one entry's reproducer). Fields: the GPU
/// name, CUDA version, run date and outcome from the newest matching record.
#[derive(Debug, Clone, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Verdict {
    /// No record for this file at all.
    Unverified,
    /// Records exist for the file, none for this code: the code changed since.
    Stale,
    /// Ran on a GPU and behaved as annotated.
    Verified {
        gpu: String,
        cuda: String,
        date: String,
    },
    /// Compiled (no GPU run) as annotated.
    Compiles { date: String },
    /// Passed the static tier only.
    Static { date: String },
    /// Contradicted its annotation.
    Failing { outcome: String, date: String },
    /// Not run (skipped, ignored, infrastructure failure): never counted as a pass.
    Skipped { outcome: String, date: String },
}

impl Verdict {
    /// The CSS/badge kind: `unverified`, `stale`, `verified`, `compiles`, `static`,
    /// `failing`, `skipped`.
    pub fn kind(&self) -> &'static str {
        match self {
            Verdict::Unverified => "unverified",
            Verdict::Stale => "stale",
            Verdict::Verified { .. } => "verified",
            Verdict::Compiles { .. } => "compiles",
            Verdict::Static { .. } => "static",
            Verdict::Failing { .. } => "failing",
            Verdict::Skipped { .. } => "skipped",
        }
    }
}

impl Runs {
    /// Reads every `*.json` under `<data>/runs/` (sorted). No directory means no records.
    pub fn load(data_dir: &Path) -> Result<Runs, Error> {
        let dir = data_dir.join("runs");
        let mut runs = Runs::default();
        if !dir.is_dir() {
            return Ok(runs);
        }
        for item in walkdir::WalkDir::new(&dir).sort_by_file_name() {
            let item =
                item.map_err(|e| Error::new(ErrorKind::Io, e.to_string()).with_path(&dir))?;
            if !item.file_type().is_file() || item.path().extension().is_none_or(|x| x != "json") {
                continue;
            }
            let text =
                std::fs::read_to_string(item.path()).map_err(|e| Error::io(item.path(), e))?;
            let file: RunFile = serde_json::from_str(&text).map_err(|e| {
                Error::new(ErrorKind::RunRecords, e.to_string()).with_path(item.path())
            })?;
            for record in file.records {
                runs.add(record);
            }
        }
        for list in runs.by_hash.values_mut() {
            // Newest first; ties broken by tier so the order never depends on file order.
            list.sort_by(|a, b| {
                b.date
                    .cmp(&a.date)
                    .then_with(|| tier_rank(&b.tier).cmp(&tier_rank(&a.tier)))
            });
        }
        Ok(runs)
    }

    /// Adds one record.
    pub fn add(&mut self, record: RunRecord) {
        *self.files.entry(record.file.clone()).or_default() += 1;
        self.by_hash
            .entry((record.file.clone(), record.sha256.clone()))
            .or_default()
            .push(record);
    }

    /// Number of distinct snippets (file, hash) with a passing GPU run.
    pub fn verified_count(&self) -> usize {
        self.by_hash
            .values()
            .filter(|list| {
                list.first()
                    .is_some_and(|r| matches!(verdict_of(r), Verdict::Verified { .. }))
            })
            .count()
    }

    /// The newest run-tier record of the snippet at `file:line` (data-relative) that
    /// confirmed its annotation: what a `runs` basis item names. `errata check`
    /// (`rate-basis-mismatch`) has made sure the record is of the code as it is now.
    pub fn confirming_run_at(&self, file: &str, line: u64) -> Option<&RunRecord> {
        self.by_hash
            .range((file.to_string(), String::new())..)
            .take_while(|((f, _), _)| f == file)
            .flat_map(|(_, list)| list)
            .filter(|r| {
                r.line == line
                    && r.tier == "run"
                    && matches!(r.outcome.as_str(), "pass" | "expected-error-observed")
            })
            .max_by(|a, b| a.date.cmp(&b.date))
    }

    /// The verdict for the snippet with this code in `file` (data-relative, `/`-separated).
    pub fn verdict(&self, file: &str, code: &str) -> Verdict {
        let hash = errata_load::sha256_hex(code.as_bytes());
        match self.by_hash.get(&(file.to_string(), hash)) {
            Some(list) => list.first().map_or(Verdict::Unverified, verdict_of),
            None if self.files.contains_key(file) => Verdict::Stale,
            None => Verdict::Unverified,
        }
    }
}

fn tier_rank(tier: &str) -> u8 {
    match tier {
        "run" => 3,
        "compile" => 2,
        "static" => 1,
        _ => 0,
    }
}

fn verdict_of(r: &RunRecord) -> Verdict {
    let date = r.date.clone();
    match r.outcome.as_str() {
        "pass" | "expected-error-observed" => match r.tier.as_str() {
            "run" => Verdict::Verified {
                gpu: r.gpu_name.clone().unwrap_or_else(|| "GPU".into()),
                cuda: r.cuda_version.clone().unwrap_or_else(|| "?".into()),
                date,
            },
            "compile" => Verdict::Compiles { date },
            _ => Verdict::Static { date },
        },
        "skipped-no-gpu" | "ignored" | "infra-error" => Verdict::Skipped {
            outcome: r.outcome.clone(),
            date,
        },
        other => Verdict::Failing {
            outcome: other.to_string(),
            date,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(file: &str, code: &str, tier: &str, outcome: &str, date: &str) -> RunRecord {
        RunRecord {
            file: file.into(),
            line: 3,
            sha256: errata_load::sha256_hex(code.as_bytes()),
            tier: tier.into(),
            outcome: outcome.into(),
            gpu_name: Some("NVIDIA H200".into()),
            compute_capability: Some("9.0".into()),
            cuda_version: Some("13.0".into()),
            date: date.into(),
        }
    }

    #[test]
    fn verdicts_follow_the_code_hash() {
        let mut runs = Runs::default();
        runs.add(record(
            "articles/cuda/a.md",
            "int main(){}",
            "run",
            "pass",
            "2026-01-02",
        ));
        runs.add(record(
            "articles/cuda/a.md",
            "x()",
            "compile",
            "compile-error",
            "2026-01-03",
        ));
        runs.add(record(
            "articles/cuda/a.md",
            "y()",
            "static",
            "skipped-no-gpu",
            "2026-01-03",
        ));
        assert_eq!(
            runs.verdict("articles/cuda/a.md", "int main(){}"),
            Verdict::Verified {
                gpu: "NVIDIA H200".into(),
                cuda: "13.0".into(),
                date: "2026-01-02".into()
            }
        );
        assert_eq!(
            runs.verdict("articles/cuda/a.md", "int main(){ }").kind(),
            "stale"
        );
        assert_eq!(
            runs.verdict("articles/cuda/b.md", "int main(){}").kind(),
            "unverified"
        );
        assert_eq!(runs.verdict("articles/cuda/a.md", "x()").kind(), "failing");
        assert_eq!(runs.verdict("articles/cuda/a.md", "y()").kind(), "skipped");
        assert_eq!(runs.verified_count(), 1);
    }

    #[test]
    fn loads_run_files_and_rejects_malformed_ones() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("runs")).unwrap();
        let r = record("articles/cuda/a.md", "k", "compile", "pass", "2026-02-01");
        let json = serde_json::json!({"version": 1, "records": [{
            "file": r.file, "line": 3, "sha256": r.sha256, "tier": "compile", "outcome": "pass",
            "expect": "ok", "gpu_name": null, "compute_capability": null, "driver_version": null,
            "cuda_version": null, "nvcc_version": "13.0", "torch_version": null,
            "python_version": null, "duration_ms": 5, "stderr_excerpt": "", "date": "2026-02-01"}]});
        std::fs::write(dir.path().join("runs/a.json"), json.to_string()).unwrap();
        let runs = Runs::load(dir.path()).unwrap();
        assert_eq!(
            runs.verdict("articles/cuda/a.md", "k"),
            Verdict::Compiles {
                date: "2026-02-01".into()
            }
        );
        std::fs::write(dir.path().join("runs/b.json"), "{\"records\": 5}").unwrap();
        assert_eq!(
            Runs::load(dir.path()).err().map(|e| e.kind()),
            Some(ErrorKind::RunRecords)
        );
    }
}
