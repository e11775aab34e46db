//! `tier-unsupported` (error): `verification_tier`, `confidence` or `fix_success_rate` claims more than the entry's evidence.
//!
//! These three are not typed by feel: they follow from what the entry rests on.
//!
//! `verification_tier`, weakest to strongest:
//! - `ai_generated`: nothing checked; always allowed.
//! - `community`: at least one dead end or workaround has a counted basis stored in the
//!   entry (`reports` or `runs`: people's outcomes were counted). Outcome records are
//!   folded in at build time and never stored in an entry, so they do not raise it.
//! - `human_reviewed`, `official`: need a review record naming the reviewer; this
//!   version of errata reads no review records, so neither can be claimed yet.
//! - `reproduced`: the entry's `verify` snippet has a current run-tier record under
//!   `runs/` (same file, same code) whose outcome is `pass` or
//!   `expected-error-observed`: a GPU produced the error. Written by `cargo xtask
//!   snippets --ingest`, never by hand.
//!
//! `confidence` (that the entry is right) is at most its tier's ceiling: 0.5 for
//! `ai_generated`, 0.7 for `community`, 0.8 for `reproduced`, 0.9 for
//! `human_reviewed`, 1 for `official`. An entry nobody checked is not 85% likely to be
//! right because its author felt so.
//!
//! `fix_success_rate`, when some workaround's rate was counted, is at most the highest
//! upper end of their 95% Wilson intervals: the entry cannot claim its workarounds fix
//! more than the best counted one could. Without a counted workaround it is an estimate
//! and is shown as words.
//!
//! `errata migrate` lowers a `confidence` above its ceiling.

use super::EntryInput;
use errata_model::{Anchor, Diagnostic, Entry, wilson_interval};

use super::diag;
use crate::context::Ctx;
use crate::run_records::{RunRecords, confirming_run};

/// The highest `confidence` a tier supports.
pub fn confidence_ceiling(tier: &str) -> f64 {
    match tier {
        "official" => 1.0,
        "human_reviewed" => 0.9,
        "reproduced" => 0.8,
        "community" => 0.7,
        _ => 0.5,
    }
}

pub(super) fn entry(cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(e) = &doc.entry else { return };
    let mut push = |pointer: &str, message: String, help: &str| {
        out.push(
            diag(
                "tier-unsupported",
                &doc.path,
                Anchor::Value(pointer.into()),
                message,
            )
            .with_help(help.to_string()),
        );
    };
    let tier = e.verification_tier.as_str();
    let why_not = match tier {
        "community" if !has_counted_basis(e) => Some(
            "`community` needs at least one dead end or workaround with a counted basis"
                .to_string(),
        ),
        "human_reviewed" | "official" => Some(format!(
            "`{tier}` needs a review record naming the reviewer, and this errata reads none yet"
        )),
        "reproduced" => reproduced(cx, doc, e).err(),
        _ => None,
    };
    if let Some(why) = why_not {
        push(
            "/verification_tier",
            why,
            "claim the tier the evidence supports (`ai_generated` when nothing was checked)",
        );
    }
    let ceiling = confidence_ceiling(tier);
    if doc.value.get("confidence").is_some() && e.confidence > ceiling + 1e-9 {
        push(
            "/confidence",
            format!(
                "confidence {} is above {ceiling}, the most a `{tier}` entry supports",
                e.confidence
            ),
            "lower it to the tier's ceiling (`errata explain tier-unsupported`), or raise the tier with evidence",
        );
    }
    let best = e
        .workarounds
        .iter()
        .filter_map(|w| w.basis.as_ref().and_then(errata_model::Basis::counted))
        .map(|(k, n)| wilson_interval(k, n).1)
        .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
    if let Some(best) = best
        && doc.value.get("fix_success_rate").is_some()
        && e.fix_success_rate > best + 0.005
    {
        push(
            "/fix_success_rate",
            format!(
                "fix_success_rate {} is above {best:.2}, the top of the best counted workaround's 95% interval",
                e.fix_success_rate
            ),
            "no entry fixes more often than its best counted workaround can",
        );
    }
}

fn has_counted_basis(e: &Entry) -> bool {
    e.dead_ends
        .iter()
        .filter_map(|d| d.basis.as_ref())
        .chain(e.workarounds.iter().filter_map(|w| w.basis.as_ref()))
        .any(|b| b.counted().is_some())
}

/// Ok when `verify` has a current passing run record, else why not.
fn reproduced(cx: &Ctx<'_>, doc: &EntryInput<'_>, e: &Entry) -> Result<(), String> {
    let Some(verify) = &e.verify else {
        return Err("`reproduced` needs a `verify` snippet that a GPU ran".into());
    };
    let rel = errata_load::data_relative(&doc.path, &cx.kb.root)
        .ok_or_else(|| "the entry is outside the data directory".to_string())?;
    match confirming_run(cx, &rel, None, &verify.code) {
        RunRecords::Confirmed => Ok(()),
        RunRecords::NoFile(runs) => Err(format!(
            "`reproduced` needs a run record of `verify`; there is no {}",
            runs.display()
        )),
        RunRecords::Unreadable(runs, err) => {
            Err(format!("{}: not a run-record file ({err})", runs.display()))
        }
        RunRecords::NotConfirmed => Err("`reproduced` needs a current run-tier record of `verify` that passed; the records are for other code, another tier, or failed".into()),
    }
}

#[cfg(test)]
mod tests {

    use super::super::testing::*;
    use serde_json::json;

    #[test]
    fn tiers_need_their_evidence() {
        let mut e = valid_entry("cuda/a");
        assert!(entry_diags(&e, "tier-unsupported").is_empty());
        e["verification_tier"] = "community".into();
        assert_eq!(entry_diags(&e, "tier-unsupported").len(), 1);
        e["dead_ends"][0]["fail_rate"] = 1.0.into();
        e["dead_ends"][0]["basis"] = json!({"kind": "reports", "n": 3, "k": 3, "items": [
            {"url": "https://a.example/1", "outcome": "failed", "quote": "q"},
            {"url": "https://a.example/2", "outcome": "failed", "quote": "q"},
            {"url": "https://a.example/3", "outcome": "failed", "quote": "q"}]});
        assert!(entry_diags(&e, "tier-unsupported").is_empty());
        e["verification_tier"] = "official".into();
        let d = entry_diags(&e, "tier-unsupported");
        assert_eq!(d.len(), 1, "{d:#?}");
        assert_eq!(d[0].pointer(), Some("/verification_tier"));
        assert!(d[0].message.contains("review record"));
    }

    #[test]
    fn confidence_ceiling_and_fix_rate_bound() {
        let mut e = valid_entry("cuda/a"); // ai_generated: 0.8 is above its 0.5
        e["confidence"] = 0.8.into();
        let d = entry_diags(&e, "tier-unsupported");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].pointer(), Some("/confidence"));
        e["confidence"] = 0.5.into();
        // 1 of 4 worked: the interval tops out at 0.70, so 0.8 claims more.
        e["workarounds"][0]["success_rate"] = 0.25.into();
        e["workarounds"][0]["basis"] = json!({"kind": "reports", "n": 4, "k": 1, "items": [
            {"url": "https://a.example/1", "outcome": "worked", "quote": "q"},
            {"url": "https://a.example/2", "outcome": "failed", "quote": "q"},
            {"url": "https://a.example/3", "outcome": "failed", "quote": "q"},
            {"url": "https://a.example/4", "outcome": "failed", "quote": "q"}]});
        e["fix_success_rate"] = 0.8.into();
        let d = entry_diags(&e, "tier-unsupported");
        assert_eq!(d.len(), 1, "{d:#?}");
        assert_eq!(d[0].pointer(), Some("/fix_success_rate"));
        e["fix_success_rate"] = 0.6.into();
        assert!(entry_diags(&e, "tier-unsupported").is_empty());
    }

    #[test]
    fn reproduced_needs_a_current_passing_run() {
        let code = "int main() { return 0; }\n";
        let mut e = valid_entry("cuda/a");
        e["confidence"] = 0.5.into();
        e["verification_tier"] = "reproduced".into();
        e["verify"] = json!({"lang": "cuda", "annotations": "expect=ok", "code": code});
        let entry = serde_json::to_string_pretty(&e).unwrap();
        let record = |sha: &str, outcome: &str| {
            json!({"version": 1, "records": [{"file": "signatures/cuda/a.json", "line": 9, "sha256": sha,
                "tier": "run", "outcome": outcome, "expect": "ok", "gpu_name": "NVIDIA H200",
                "compute_capability": "9.0", "driver_version": "580", "cuda_version": "13.5",
                "nvcc_version": null, "torch_version": null, "python_version": null,
                "duration_ms": 1, "stderr_excerpt": "", "date": "2025-12-01"}]})
            .to_string()
        };
        let hash = errata_load::sha256_hex(code.as_bytes());
        let with = |records: Option<String>| {
            let mut files = vec![("signatures/cuda/a.json", entry.clone())];
            if let Some(r) = records {
                files.push(("runs/signatures/cuda/a.json", r));
            }
            only(check_files(&files), "tier-unsupported")
        };
        assert_eq!(with(None).len(), 1);
        assert_eq!(
            with(Some(record(&"0".repeat(64), "pass"))).len(),
            1,
            "other code"
        );
        assert_eq!(with(Some(record(&hash, "wrong-error"))).len(), 1, "failed");
        assert!(with(Some(record(&hash, "expected-error-observed"))).is_empty());
    }
}
