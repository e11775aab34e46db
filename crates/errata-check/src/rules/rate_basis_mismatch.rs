//! `rate-basis-mismatch` (error): a counted basis does not add up to its rate.
//!
//! With `"kind": "reports"` or `"runs"`, `n` is the number of `items` and `k` the number
//! of them whose `outcome` goes the rate's way (`failed` for a dead end's `fail_rate`,
//! `worked` for a workaround's `success_rate`), and the rate is K/N to two decimals:
//! `{"n": 4, "k": 3}` goes with 0.75. A report is re-openable: an https `url` (the
//! comment's anchor where there is one) and the reporter's own words in `quote`; and
//! one or two reports are not a count (one thread's luck reads as "1 of 1"): with fewer
//! than three, the rate is an `estimate`, and the threads go in the item's `sources`. A run
//! names its snippet as `<data file>:<line>` (`articles/cuda/sticky-errors.md:142`, the
//! line of the opening fence; an entry's `verify` by the line its run record gives), and
//! that snippet must have a current run-tier record under `runs/` (same file and line,
//! the code as it is now) whose outcome confirmed its annotation (`pass` or
//! `expected-error-observed`): a run that was never made, was made of other code, or
//! contradicted its annotation counts for nothing. Whether the run shows the item failing
//! or working is the editor's reading of what the snippet does, written in `outcome`.
//!
//! An `outcomes` basis is what the build makes of an item's outcome records
//! (`outcomes/<domain>/<slug>.jsonl`, see `outcome-invalid`); it is never stored in an
//! entry, where it could drift from the records: record outcomes with `errata outcome`.
//!
//! Every problem of every basis is reported, each at its own field.

use super::EntryInput;
use errata_model::{Anchor, Basis, Diagnostic};

use super::diag;
use crate::context::Ctx;
use crate::run_records::{RunRecords, confirming_run};

pub(super) fn entry(cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(e) = &doc.entry else { return };
    let dead_ends = e.dead_ends.iter().map(|d| (d.fail_rate, d.basis.as_ref()));
    let workarounds = e
        .workarounds
        .iter()
        .map(|w| (w.success_rate, w.basis.as_ref()));
    let lists: [(&str, &str, &str, Vec<_>); 2] = [
        ("dead_ends", "fail_rate", "failed", dead_ends.collect()),
        (
            "workarounds",
            "success_rate",
            "worked",
            workarounds.collect(),
        ),
    ];
    for (list, key, side, items) in lists {
        for (i, (rate, basis)) in items.into_iter().enumerate() {
            if let Some(b) = basis {
                let mut found = problems(b, rate, key, side);
                if b.kind == "runs" {
                    found.extend(unconfirmed_runs(cx, b));
                }
                for (pointer, message) in found {
                    out.push(
                        diag(
                            "rate-basis-mismatch",
                            &doc.path,
                            Anchor::Value(format!("/{list}/{i}{pointer}")),
                            message,
                        )
                        .with_help(format!(
                            "count N items, K of them `{side}`, and write `{key}` = K/N to two decimals; or make it `{{\"kind\": \"estimate\"}}`"
                        )),
                    );
                }
            }
        }
    }
}

/// Reports a `reports` basis needs: fewer are an estimate (what counts as a report, and
/// when to stop counting, is `docs/evidence.md`'s).
const MIN_REPORTS: u64 = 3;

/// Each problem as (pointer below the item, message).
fn problems(b: &Basis, rate: f64, key: &str, side: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    match b.kind.as_str() {
        "reports" | "runs" => {}
        "outcomes" => {
            out.push((
                "/basis/kind".into(),
                "an `outcomes` basis is made by the build from outcome records, not stored: keep `reports` or `estimate` here and record outcomes with `errata outcome`".into(),
            ));
            return out;
        }
        // `estimate` has nothing to add up; an unknown kind is the schema's.
        _ => return out,
    }
    let (Some(n), Some(k)) = (b.n, b.k) else {
        return out; // the schema requires both
    };
    if k > n {
        out.push(("/basis/k".into(), format!("k = {k} is more than n = {n}")));
    }
    if b.kind == "reports" && n < MIN_REPORTS {
        out.push((
            "/basis/n".into(),
            format!("{n} report(s) are too few to count: with fewer than {MIN_REPORTS}, the rate is an estimate"),
        ));
    }
    if b.items.len() as u64 != n {
        out.push((
            "/basis/n".into(),
            format!("n = {n} but {} item(s) are listed", b.items.len()),
        ));
    }
    let going = b.items.iter().filter(|it| it.outcome == side).count() as u64;
    if going != k {
        out.push((
            "/basis/k".into(),
            format!("k = {k} but {going} listed item(s) say `{side}`"),
        ));
    }
    if n > 0 && k <= n {
        let expected = k as f64 / n as f64;
        // Two decimals either way of a half (5 of 8 is 0.625: 0.62 and 0.63 both
        // round it); the epsilon absorbs the binary error of 0.62 - 0.625.
        if (rate - expected).abs() > 0.005 + 1e-9 {
            out.push((
                format!("/{key}"),
                format!("{key} is {rate} but {k} of {n} is {expected:.2}"),
            ));
        }
    }
    for (j, it) in b.items.iter().enumerate() {
        // Written out only for an item with a problem (most items have none).
        let here = || format!("/basis/items/{j}");
        if b.kind == "reports" {
            let url = it.url.as_deref().unwrap_or("");
            if !url.starts_with("https://") {
                out.push((
                    format!("{}/url", here()),
                    "a counted report needs the https URL of its thread".into(),
                ));
            }
            if it.quote.trim().is_empty() {
                out.push((
                    format!("{}/quote", here()),
                    "a counted report needs the reporter's own words in `quote`".into(),
                ));
            }
        } else {
            if it.run_snippet().is_none() {
                let run = it.run.as_deref().unwrap_or("");
                out.push((
                    format!("{}/run", here()),
                    format!("`{run}` is not `<data file>:<line>` of a snippet"),
                ));
            }
        }
    }
    out
}

/// Each `runs` item whose snippet has no current run-tier record confirming its
/// annotation, as (pointer below the item, message). A malformed `run` is `problems`'.
fn unconfirmed_runs(cx: &Ctx<'_>, b: &Basis) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (j, it) in b.items.iter().enumerate() {
        let Some((file, line)) = it.run_snippet() else {
            continue;
        };
        let pointer = format!("/basis/items/{j}/run");
        let Some(code) = snippet_code(cx, file, line) else {
            out.push((
                pointer,
                format!("`{file}:{line}` is not a snippet of this knowledge base (an article's opening fence, or an entry's `verify`)"),
            ));
            continue;
        };
        if !matches!(
            confirming_run(cx, file, Some(line), &code),
            RunRecords::Confirmed
        ) {
            out.push((
                pointer,
                format!("`{file}:{line}` has no current run-tier record that confirmed its annotation (run it on a GPU with `cargo xtask snippets --pack`, then `--ingest`)"),
            ));
        }
    }
    out
}

/// The code of the snippet at `file:line` (data-relative): an article's fenced block
/// opening on that line, or an entry's `verify` (whose line only its run record knows).
fn snippet_code(cx: &Ctx<'_>, file: &str, line: usize) -> Option<String> {
    let relative = |p: &std::path::Path| errata_load::data_relative(p, &cx.kb.root);
    if let Some(a) = cx
        .kb
        .articles
        .iter()
        .find(|a| relative(&a.path).as_deref() == Some(file))
    {
        return a
            .code_blocks
            .iter()
            .find(|b| b.fenced && b.line == line)
            .map(|b| b.code.clone());
    }
    cx.kb
        .entries
        .iter()
        .find(|e| relative(&e.path).as_deref() == Some(file))
        .and_then(|e| e.entry.as_ref()?.verify.as_ref())
        .map(|v| v.code.clone())
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use serde_json::json;

    fn report(outcome: &str) -> serde_json::Value {
        json!({"url": "https://github.com/pytorch/pytorch/issues/1#issuecomment-2", "outcome": outcome, "quote": "still the same error"})
    }

    #[test]
    fn a_count_that_adds_up_is_clean() {
        let mut e = valid_entry("cuda/a");
        e["dead_ends"][0]["fail_rate"] = 0.67.into();
        e["dead_ends"][0]["basis"] = json!({"kind": "reports", "n": 3, "k": 2, "items": [report("failed"), report("failed"), report("worked")]});
        assert!(
            entry_diags(&e, "rate-basis-mismatch").is_empty(),
            "{:?}",
            entry_diags(&e, "rate-basis-mismatch")
        );
    }

    #[test]
    fn every_problem_at_its_field() {
        let mut e = valid_entry("cuda/a");
        // Rate 0.9 for 1 of 2; n says 3; one item has no https URL and no quote.
        e["workarounds"][0]["success_rate"] = 0.9.into();
        e["workarounds"][0]["basis"] = json!({"kind": "reports", "n": 3, "k": 1, "items": [
            report("worked"),
            {"url": "http://example.com/t", "outcome": "failed", "quote": " "}
        ]});
        let d = entry_diags(&e, "rate-basis-mismatch");
        let got: Vec<(Option<&str>, &str)> = d
            .iter()
            .map(|d| (d.pointer(), d.message.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                // Sorted by position: the rate comes before its basis in the file.
                (
                    Some("/workarounds/0/success_rate"),
                    "success_rate is 0.9 but 1 of 3 is 0.33"
                ),
                (
                    Some("/workarounds/0/basis/n"),
                    "n = 3 but 2 item(s) are listed"
                ),
                (
                    Some("/workarounds/0/basis/items/1/url"),
                    "a counted report needs the https URL of its thread"
                ),
                (
                    Some("/workarounds/0/basis/items/1/quote"),
                    "a counted report needs the reporter's own words in `quote`"
                ),
            ],
            "{d:#?}"
        );
    }

    /// One or two threads are a story, not a count: the basis must be an estimate. Runs
    /// are not held to it (one run of a snippet is the whole experiment).
    #[test]
    fn fewer_than_three_reports_are_an_estimate() {
        for n in [1u64, 2] {
            let mut e = valid_entry("cuda/a");
            e["workarounds"][0]["success_rate"] = 1.0.into();
            let items: Vec<_> = (0..n).map(|_| report("worked")).collect();
            e["workarounds"][0]["basis"] =
                json!({"kind": "reports", "n": n, "k": n, "items": items});
            let d = entry_diags(&e, "rate-basis-mismatch");
            assert_eq!(d.len(), 1, "{d:#?}");
            assert_eq!(d[0].pointer(), Some("/workarounds/0/basis/n"));
            assert_eq!(
                d[0].message,
                format!(
                    "{n} report(s) are too few to count: with fewer than 3, the rate is an estimate"
                )
            );
        }
    }

    #[test]
    fn a_count_on_a_half_rounds_either_way() {
        let items: Vec<_> = (0..8)
            .map(|i| report(if i < 5 { "worked" } else { "failed" }))
            .collect();
        for rate in [0.62, 0.63] {
            let mut e = valid_entry("cuda/a");
            e["workarounds"][0]["success_rate"] = rate.into();
            e["workarounds"][0]["basis"] =
                json!({"kind": "reports", "n": 8, "k": 5, "items": items});
            assert!(entry_diags(&e, "rate-basis-mismatch").is_empty(), "{rate}");
        }
        let mut e = valid_entry("cuda/a");
        e["workarounds"][0]["success_rate"] = 0.64.into();
        e["workarounds"][0]["basis"] = json!({"kind": "reports", "n": 8, "k": 5, "items": items});
        assert_eq!(entry_diags(&e, "rate-basis-mismatch").len(), 1);
    }

    #[test]
    fn k_counts_the_rates_side_and_outcomes_are_refused() {
        let mut e = valid_entry("cuda/a");
        e["dead_ends"][0]["fail_rate"] = 0.67.into();
        e["dead_ends"][0]["basis"] = json!({"kind": "reports", "n": 3, "k": 2,
            "items": [report("worked"), report("failed"), report("worked")]});
        e["workarounds"][0]["basis"] = json!({"kind": "outcomes", "n": 2, "k": 2});
        let d = entry_diags(&e, "rate-basis-mismatch");
        assert_eq!(d.len(), 2, "{d:#?}");
        assert_eq!(d[0].pointer(), Some("/dead_ends/0/basis/k"));
        assert!(d[0].message.contains("1 listed item(s) say `failed`"));
        assert_eq!(d[1].pointer(), Some("/workarounds/0/basis/kind"));
    }

    /// A `runs` item counts only where the knowledge base has that snippet and a current
    /// run-tier record of it that confirmed its annotation.
    #[test]
    fn a_run_needs_its_snippet_and_a_current_confirming_record() {
        let code = "int main() { return 0; }\n";
        let article = valid_article(
            "cuda/b",
            &format!("Text.\n\n```cuda expect=ok requires=gpu\n{code}```\n"),
        );
        // The fence is on line 8: five lines of front matter, the text, a blank line.
        let line = 8;
        let mut e = valid_entry("cuda/a");
        e["workarounds"][0]["success_rate"] = 1.0.into();
        e["workarounds"][0]["basis"] = json!({"kind": "runs", "n": 1, "k": 1, "items": [
            {"run": format!("articles/cuda/b.md:{line}"), "outcome": "worked"}]});
        let entry = serde_json::to_string_pretty(&e).unwrap();
        let record = |line: usize, sha: &str, outcome: &str| {
            json!({"version": 1, "records": [{"file": "articles/cuda/b.md", "line": line,
                "sha256": sha, "tier": "run", "outcome": outcome, "expect": "ok",
                "gpu_name": "NVIDIA H200", "compute_capability": "9.0", "driver_version": "580",
                "cuda_version": "13.5", "nvcc_version": null, "torch_version": null,
                "python_version": null, "duration_ms": 1, "stderr_excerpt": "",
                "date": "2025-12-01"}]})
            .to_string()
        };
        let hash = errata_load::sha256_hex(code.as_bytes());
        let with = |records: Option<String>, entry: &str| {
            let mut files = vec![
                ("signatures/cuda/a.json", entry.to_string()),
                ("articles/cuda/b.md", article.clone()),
            ];
            if let Some(r) = records {
                files.push(("runs/articles/cuda/b.json", r));
            }
            only(check_files(&files), "rate-basis-mismatch")
        };
        let confirmed = with(Some(record(line, &hash, "pass")), &entry);
        assert!(confirmed.is_empty(), "{confirmed:#?}");
        for (records, why) in [
            (None, "no record"),
            (Some(record(line, &"0".repeat(64), "pass")), "other code"),
            (Some(record(line + 1, &hash, "pass")), "another snippet"),
            (Some(record(line, &hash, "contradicted")), "contradicted"),
        ] {
            let d = with(records, &entry);
            assert_eq!(d.len(), 1, "{why}: {d:#?}");
            assert_eq!(d[0].pointer(), Some("/workarounds/0/basis/items/0/run"));
            assert!(d[0].message.contains("no current run-tier record"), "{why}");
        }
        // A line where no fence opens names no snippet.
        let elsewhere = entry.replace(&format!("b.md:{line}"), "b.md:3");
        let d = with(Some(record(line, &hash, "pass")), &elsewhere);
        assert_eq!(d.len(), 1, "{d:#?}");
        assert!(d[0].message.contains("is not a snippet"), "{d:#?}");
        // A run that is not `<data file>:<line>` is reported once, as malformed.
        for malformed in ["articles/cuda/b.md", ":8", "articles/cuda/b.md:x"] {
            let bad = entry.replace(&format!("articles/cuda/b.md:{line}"), malformed);
            let d = with(Some(record(line, &hash, "pass")), &bad);
            assert_eq!(d.len(), 1, "{malformed}: {d:#?}");
            assert!(
                d[0].message.contains("is not `<data file>:<line>`"),
                "{malformed}: {d:#?}"
            );
        }
    }
}
