//! `rate-basis-mismatch` (error): a counted basis does not add up to its rate.
//!
//! With `"kind": "reports"` or `"runs"`, `n` is the number of `items` and `k` the number
//! of them whose `outcome` goes the rate's way (`failed` for a dead end's `fail_rate`,
//! `worked` for a workaround's `success_rate`), and the rate is K/N to two decimals:
//! `{"n": 4, "k": 3}` goes with 0.75. A report is re-openable: an https `url` (the
//! comment's anchor where there is one) and the reporter's own words in `quote`. A run
//! names its snippet as `<data file>:<line>`.
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

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
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
                let at = format!("/{list}/{i}");
                for (pointer, message) in problems(b, rate, key, side) {
                    out.push(
                        diag(
                            "rate-basis-mismatch",
                            &doc.path,
                            Anchor::Value(format!("{at}{pointer}")),
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
        let here = format!("/basis/items/{j}");
        if b.kind == "reports" {
            let url = it.url.as_deref().unwrap_or("");
            if !url.starts_with("https://") {
                out.push((
                    format!("{here}/url"),
                    "a counted report needs the https URL of its thread".into(),
                ));
            }
            if it.quote.trim().is_empty() {
                out.push((
                    format!("{here}/quote"),
                    "a counted report needs the reporter's own words in `quote`".into(),
                ));
            }
        } else {
            let run = it.run.as_deref().unwrap_or("");
            let well_formed = run
                .rsplit_once(':')
                .is_some_and(|(f, l)| !f.is_empty() && l.parse::<usize>().is_ok());
            if !well_formed {
                out.push((
                    format!("{here}/run"),
                    format!("`{run}` is not `<data file>:<line>` of a snippet"),
                ));
            }
        }
    }
    out
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
        e["dead_ends"][0]["fail_rate"] = 1.0.into();
        e["dead_ends"][0]["basis"] =
            json!({"kind": "reports", "n": 1, "k": 1, "items": [report("worked")]});
        e["workarounds"][0]["basis"] = json!({"kind": "outcomes", "n": 2, "k": 2});
        let d = entry_diags(&e, "rate-basis-mismatch");
        assert_eq!(d.len(), 2, "{d:#?}");
        assert_eq!(d[0].pointer(), Some("/dead_ends/0/basis/k"));
        assert!(d[0].message.contains("0 listed item(s) say `failed`"));
        assert_eq!(d[1].pointer(), Some("/workarounds/0/basis/kind"));
    }
}
