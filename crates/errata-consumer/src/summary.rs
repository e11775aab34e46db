//! A bounded answer for an assistant: one result per known error with the lines it was
//! seen on, the advice cut to what one acts on, and a size cap that says what it left
//! out. A 500-line OOM log is one result, not 500 copies of the same entry.

use serde_json::{Value, json};

use errata_model::truncate;

use crate::{Found, Lang};

/// How much a summary may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Known errors (distinct entries) described; more are counted in `left_out`.
    pub entries: usize,
    /// Line numbers listed per entry (all are counted in `matched_lines`).
    pub lines_per_entry: usize,
    /// Dead ends and workarounds listed per entry, most likely first.
    pub steps: usize,
    /// Characters of a root cause or a `how` before it is cut with `…`.
    pub text_chars: usize,
    /// Bytes of the whole JSON answer, about: entries past it are left out.
    pub bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            entries: 10,
            lines_per_entry: 20,
            steps: 3,
            text_chars: 600,
            bytes: 32 * 1024,
        }
    }
}

/// The summary of `found` (in the order [`crate::Index::match_text`] gives): `results`,
/// one per entry in order of first appearance, each with `id`, `signature`, `lines`
/// (the first [`Limits::lines_per_entry`]), `matched_lines`, `text` (the first match),
/// `root_cause`, `dead_ends` and `workarounds` (`action`, `how`/`why_fails`, `rate` —
/// a number only when counted — and `evidence`); `left_out`: known errors not described
/// and why, or `null`.
pub fn summary(found: &[Found<'_>], lang: Lang, limits: &Limits) -> Value {
    // Group by entry, keeping the order of first appearance; only a line's first match
    // (its most specific entry) counts for that line.
    let mut order: Vec<&str> = Vec::new();
    let mut by_entry: std::collections::HashMap<&str, (&Found<'_>, Vec<u64>)> =
        std::collections::HashMap::new();
    let mut last_line = None;
    for f in found {
        if last_line == Some(f.line) {
            continue;
        }
        last_line = Some(f.line);
        let slot = by_entry.entry(f.entry.id.as_str()).or_insert_with(|| {
            order.push(f.entry.id.as_str());
            (f, Vec::new())
        });
        slot.1.push(f.line);
    }
    let mut results = Vec::new();
    let mut bytes = 64;
    let mut left_out = 0usize;
    for id in &order {
        let (first, lines) = &by_entry[id];
        if results.len() >= limits.entries {
            left_out += 1;
            continue;
        }
        let advice = first.entry.advice(lang);
        let steps = |steps: &[crate::Step<'_>], detail: &str| -> Vec<Value> {
            steps
                .iter()
                .take(limits.steps)
                .map(|s| {
                    json!({
                        "action": s.action,
                        detail: truncate(s.detail, limits.text_chars / 2),
                        "rate": s.is_counted().then_some(s.rate),
                        "evidence": s.evidence,
                    })
                })
                .collect()
        };
        let result = json!({
            "id": first.entry.id,
            "signature": first.entry.signature(lang),
            "lines": lines.iter().take(limits.lines_per_entry).collect::<Vec<_>>(),
            "matched_lines": lines.len(),
            "text": truncate(&first.text, 200),
            "root_cause": truncate(advice.root_cause, limits.text_chars),
            "operator_action": first.entry.operator_action,
            "dead_ends": steps(&advice.dead_ends, "why_fails"),
            "workarounds": steps(&advice.workarounds, "how"),
        });
        let size = result.to_string().len();
        if bytes + size > limits.bytes {
            left_out += 1;
            continue;
        }
        bytes += size;
        results.push(result);
    }
    json!({
        "results": results,
        "left_out": (left_out > 0).then(|| json!({
            "known_errors": left_out,
            "why": format!(
                "at most {} known errors and about {} KiB per answer; send fewer lines, or call get_entry for one entry",
                limits.entries,
                limits.bytes / 1024
            ),
        })),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Entry, Index};

    fn index() -> Index {
        let entry = |id: &str, regex: &str| {
            Entry::from_value(json!({"id": id, "signature": regex, "regex": regex,
                "root_cause": "x".repeat(2000),
                "workarounds": [{"action": "a", "how": "h", "success_rate": 0.5, "basis": {"kind": "estimate"}}]}))
            .expect("entry")
        };
        Index::new(vec![
            entry("a/one", "ONE"),
            entry("b/two", "TWO"),
            entry("c/three", "THREE"),
        ])
        .expect("index")
    }

    #[test]
    fn one_result_per_entry_and_what_was_left_out() {
        let index = index();
        let text = "ONE\nTWO\nONE\nTHREE\nONE\n";
        let found = index.match_text(text);
        let all = summary(&found, Lang::En, &Limits::default());
        let results = all["results"].as_array().expect("results");
        assert_eq!(results.len(), 3);
        assert_eq!(results[0]["id"], "a/one");
        assert_eq!(results[0]["lines"], json!([1, 3, 5]));
        assert_eq!(results[0]["matched_lines"], 3);
        assert!(
            results[0]["root_cause"]
                .as_str()
                .expect("cause")
                .ends_with('…')
        );
        assert!(all["left_out"].is_null());

        let two = Limits {
            entries: 2,
            lines_per_entry: 2,
            ..Limits::default()
        };
        let capped = summary(&found, Lang::En, &two);
        assert_eq!(capped["results"].as_array().expect("results").len(), 2);
        assert_eq!(capped["results"][0]["lines"], json!([1, 3]));
        assert_eq!(capped["results"][0]["matched_lines"], 3);
        assert_eq!(capped["left_out"]["known_errors"], 1);

        let tiny = Limits {
            bytes: 900,
            ..Limits::default()
        };
        let small = summary(&found, Lang::En, &tiny);
        assert!(
            small.to_string().len() < 1200,
            "{}",
            small.to_string().len()
        );
        assert!(small["left_out"]["known_errors"].as_u64().expect("n") >= 1);
    }
}
