//! `outcome-invalid` (error): a line of an outcome record file is not a valid record of its entry.
//!
//! `outcomes/<domain>/<slug>.jsonl` holds what happened when people tried the dead ends
//! and workarounds of entry `<domain>/<slug>`, one JSON object a line (`errata outcome`
//! writes them):
//!
//! ```json
//! {"entry": "cuda/out-of-memory", "item": "workaround:1", "outcome": "worked", "date": "2026-11-26", "reporter": "github:alice"}
//! ```
//!
//! Each line must parse (no unknown keys), name the entry of its file, an item that
//! exists (`dead_end:<i>` or `workaround:<i>`, 0-based), an outcome `failed` or
//! `worked`, a date that is not in the future, an https `source` if any, a non-empty
//! `env` if any, and a `reporter`. Every bad line is reported at its place; the build
//! adds only valid records to the item's count.

use errata_model::{Anchor, Diagnostic};
use errata_outcomes::{Shape, validate};

use super::diag;
use crate::context::Ctx;

pub(super) fn corpus(cx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    for doc in &cx.kb.outcomes {
        for line in &doc.lines {
            let at = || Anchor::Bytes(line.range.clone());
            let record = match &line.record {
                Ok(r) => r,
                Err(why) => {
                    out.push(
                        diag("outcome-invalid", &doc.path, at(), format!("not an outcome record: {why}"))
                            .with_help("one JSON object a line: entry, item, outcome, date, reporter (env and source optional)"),
                    );
                    continue;
                }
            };
            if doc.path_id.as_deref() != Some(record.entry.as_str()) {
                out.push(
                    diag(
                        "outcome-invalid",
                        &doc.path,
                        at(),
                        format!(
                            "a record of `{}` in the outcome file of `{}`",
                            record.entry,
                            doc.path_id
                                .as_deref()
                                .unwrap_or("no entry (not outcomes/<domain>/<slug>.jsonl)")
                        ),
                    )
                    .with_help("keep each entry's records in outcomes/<domain>/<slug>.jsonl"),
                );
                continue;
            }
            let shape = cx
                .ids
                .get(record.entry.as_str())
                .and_then(|docs| docs.first())
                .and_then(|d| d.entry.as_ref())
                .map(|e| Shape {
                    dead_ends: e.dead_ends.len(),
                    workarounds: e.workarounds.len(),
                });
            for (field, message) in validate(record, shape, cx.today) {
                out.push(
                    diag(
                        "outcome-invalid",
                        &doc.path,
                        at(),
                        format!("`{field}`: {message}"),
                    )
                    .with_help("fix the record, or remove the line if it cannot be"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn every_bad_line_at_its_place() {
        let entry = serde_json::to_string_pretty(&valid_entry("cuda/a")).unwrap();
        let good = r#"{"entry": "cuda/a", "item": "workaround:0", "outcome": "worked", "date": "2025-12-01", "reporter": "github:alice"}"#;
        let lines = [
            good,
            "",
            "{not json",
            r#"{"entry": "cuda/a", "item": "workaround:4", "outcome": "maybe", "date": "2026-02-01", "reporter": "r"}"#,
            r#"{"entry": "cuda/b", "item": "dead_end:0", "outcome": "failed", "date": "2025-01-01", "reporter": "r"}"#,
        ]
        .join("\n");
        let d = only(
            check_files(&[
                ("signatures/cuda/a.json", entry),
                ("outcomes/cuda/a.jsonl", lines),
            ]),
            "outcome-invalid",
        );
        let got: Vec<(usize, String)> = d
            .iter()
            .map(|d| (d.location.map_or(0, |l| l.line), d.message.clone()))
            .collect();
        assert_eq!(got.len(), 5, "{got:#?}");
        assert_eq!(got[0].0, 3);
        assert!(got[0].1.starts_with("not an outcome record"));
        assert!(got[1..4].iter().all(|(line, _)| *line == 4), "{got:#?}");
        assert!(
            got[1..4]
                .iter()
                .any(|(_, m)| m.contains("has 1 workaround(s)")),
            "{got:#?}"
        );
        assert!(
            got.iter()
                .any(|(_, m)| m.contains("2026-02-01 is in the future"))
        );
        assert_eq!(got[4].0, 5);
        assert!(got[4].1.contains("a record of `cuda/b`"));
    }
}
