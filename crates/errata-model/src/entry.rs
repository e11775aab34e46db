use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// One signature entry: a known error, why it happens, what does not help and what does.
///
/// The JSON Schema in `schema/entry.schema.json` is the authority on which keys exist and
/// which are required; this type is deliberately lenient (every field has a default and
/// unknown keys are ignored) so that the semantic rules can still run on an entry whose
/// schema validation failed for an unrelated key.
///
/// Field order here is the canonical key order that `errata fmt` writes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[allow(missing_docs)] // The fields are documented in the schema and docs/data.md.
pub struct Entry {
    pub id: String,
    pub signature: String,
    pub signature_zh: String,
    pub regex: String,
    pub domain: String,
    pub category: String,
    pub subcategory: Option<String>,
    pub root_cause: String,
    pub root_cause_type: String,
    pub root_cause_zh: String,
    pub versions: Vec<VersionInfo>,
    pub os_specific: BTreeMap<String, String>,
    /// Chinese text of each `os_specific` note, under the same key.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub os_specific_zh: BTreeMap<String, String>,
    pub dead_ends: Vec<DeadEnd>,
    pub dead_ends_zh: Vec<String>,
    pub workarounds: Vec<Workaround>,
    pub workarounds_zh: Vec<String>,
    pub transition_graph: TransitionGraph,
    pub official_doc_url: Option<String>,
    pub official_doc_section: Option<String>,
    pub error_code: Option<String>,
    pub verification_tier: String,
    pub confidence: f64,
    pub fix_success_rate: f64,
    pub resolvable: String,
    /// What the operator on call does (an enum in the schema); empty when absent.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub operator_action: String,
    pub first_seen: String,
    pub last_confirmed: String,
    pub last_updated: String,
    pub evidence_count: u64,
    pub tags: Vec<String>,
    pub locale: String,
    pub aliases: Vec<String>,
    /// Environments known to produce the error (`errata audit`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub affects: Vec<Affect>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<Snippet>,
}

/// One environment known to produce an entry's error: facts of an environment report
/// and the condition each must meet (see `schema/entry.schema.json`, `affects`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Affect {
    /// Fact name → condition (`>=2.18.1, <2.19.3`, `none`, `true`); all must hold.
    pub when: BTreeMap<String, String>,
    /// `error` (the error will happen; the default) or `warning` (it can).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<String>,
    /// Why these facts produce the error, in English.
    pub note: String,
    /// The same, in Chinese.
    pub note_zh: String,
}

impl Entry {
    /// Splits `id` into `(domain, slug)`; `None` when it has no `/`.
    pub fn domain_and_slug(&self) -> Option<(&str, &str)> {
        self.id.split_once('/')
    }

    /// Every transition-graph edge as `(field name, index, target id)`.
    pub fn edges(&self) -> impl Iterator<Item = (&'static str, usize, &str)> {
        let g = &self.transition_graph;
        let named = [
            ("leads_to", &g.leads_to),
            ("preceded_by", &g.preceded_by),
            ("frequently_confused_with", &g.frequently_confused_with),
        ];
        named.into_iter().flat_map(|(name, ids)| {
            ids.iter()
                .enumerate()
                .map(move |(i, id)| (name, i, id.as_str()))
        })
    }
}

/// One row of the versions table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[allow(missing_docs)]
pub struct VersionInfo {
    pub version: String,
    pub introduced: Option<String>,
    pub deprecated: Option<String>,
    pub removed: Option<String>,
    pub behavior_change: Option<String>,
    /// Chinese text of `behavior_change`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub behavior_change_zh: Option<String>,
    pub status: String,
}

/// Something people try that does not fix the error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[allow(missing_docs)]
pub struct DeadEnd {
    pub action: String,
    pub why_fails: String,
    pub fail_rate: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basis: Option<Basis>,
    pub condition: String,
    pub sources: Vec<String>,
}

/// Something that does fix the error, under a condition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[allow(missing_docs)]
pub struct Workaround {
    pub action: String,
    pub success_rate: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basis: Option<Basis>,
    pub how: String,
    pub condition: String,
    pub sources: Vec<String>,
}

/// What a rate rests on (docs/evidence.md): K of N counted reports, runs or
/// outcome records, or an editor's estimate with nothing counted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Basis {
    /// `reports`, `runs`, `outcomes` or `estimate` (the schema holds the list).
    pub kind: String,
    /// How many were counted (absent for an estimate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub n: Option<u64>,
    /// How many of them went the rate's way: failed for a dead end, worked for a
    /// workaround (absent for an estimate).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub k: Option<u64>,
    /// The counted reports or runs, one each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub items: Vec<BasisItem>,
}

impl Basis {
    /// `K of N` when counted; `None` for an estimate or an incomplete basis.
    pub fn counted(&self) -> Option<(u64, u64)> {
        match (self.kind.as_str(), self.k, self.n) {
            ("estimate", _, _) => None,
            (_, Some(k), Some(n)) if n > 0 && k <= n => Some((k, n)),
            _ => None,
        }
    }
}

/// One counted report (`url`) or run (`run`: `<data file>:<line>` of the snippet).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BasisItem {
    /// The thread, with the comment anchor where there is one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// The run record's snippet, `<data file>:<line>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run: Option<String>,
    /// `failed` or `worked`.
    pub outcome: String,
    /// The reporter's own words that show the action and the outcome.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub quote: String,
}

impl BasisItem {
    /// A run's snippet as (data file, line), when `run` is a well-formed
    /// `<data file>:<line>`.
    pub fn run_snippet(&self) -> Option<(&str, usize)> {
        let (file, line) = self.run.as_deref()?.rsplit_once(':')?;
        Some((file, line.parse().ok()?)).filter(|(f, _)| !f.is_empty())
    }
}

/// The words an estimated rate is shown with (never a percentage): `rate` is the
/// editor's judgement of how often a dead end fails or a workaround works.
/// Returns `(english, chinese)`.
pub fn estimate_words(rate: f64, dead_end: bool) -> (&'static str, &'static str) {
    const FAILS: [(&str, &str); 4] = [
        ("sometimes fails", "有时无效"),
        ("often fails", "经常无效"),
        ("usually fails", "通常无效"),
        ("almost always fails", "几乎总是无效"),
    ];
    const WORKS: [(&str, &str); 4] = [
        ("sometimes works", "有时有效"),
        ("often works", "经常有效"),
        ("usually works", "通常有效"),
        ("almost always works", "几乎总是有效"),
    ];
    let words = if dead_end { FAILS } else { WORKS };
    words[estimate_band(rate)]
}

/// Which of four bands an estimated share falls in, lowest first (below 0.4, from 0.4,
/// from 0.6, from 0.85): every face words an estimate by its band, never its digits.
pub fn estimate_band(rate: f64) -> usize {
    match rate {
        r if r >= 0.85 => 3,
        r if r >= 0.6 => 2,
        r if r >= 0.4 => 1,
        _ => 0,
    }
}

/// The 95% Wilson score interval of K successes in N trials, as `(low, high)`: the
/// range shown beside a small count so "3 of 3" does not read as a certainty.
pub fn wilson_interval(k: u64, n: u64) -> (f64, f64) {
    if n == 0 {
        return (0.0, 1.0);
    }
    let z = 1.959_963_984_540_054_f64;
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * ((p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt()) / denom;
    ((centre - half).max(0.0), (centre + half).min(1.0))
}

/// How a rate is shown everywhere (site, `errata match`, the consumer crate, Python,
/// MCP): a counted basis as "3 of 4 reports" (with its 95% interval below 20), anything
/// else as words marked as an estimate, never as a bare percentage. `dead_end` picks
/// "fails" or "works"; `zh` the language.
pub fn rate_shown(rate: f64, basis: Option<&Basis>, dead_end: bool, zh: bool) -> String {
    let counted = basis.and_then(|b| b.counted().map(|kn| (b.kind.as_str(), kn)));
    let Some((kind, (k, n))) = counted else {
        let (en, cn) = estimate_words(rate, dead_end);
        return if zh {
            format!("{cn}（编者估计）")
        } else {
            format!("{en} (editor's estimate)")
        };
    };
    // An `outcomes` basis with items is counted reports with outcome records added.
    let with_reports = basis.is_some_and(|b| !b.items.is_empty());
    let interval = (n < 20).then(|| {
        let (lo, hi) = wilson_interval(k, n);
        (lo * 100.0, hi * 100.0)
    });
    if zh {
        let (unit, measure) = match kind {
            "runs" => ("次运行", "次"),
            "outcomes" if with_reports => ("条报告与结果记录", "条"),
            "outcomes" => ("条结果记录", "条"),
            _ => ("份报告", "份"),
        };
        let verdict = if dead_end { "无效" } else { "有效" };
        let mut s = format!("{n} {unit}中 {k} {measure}{verdict}");
        if let Some((lo, hi)) = interval {
            s.push_str(&format!("（95% 区间 {lo:.0}–{hi:.0}%）"));
        }
        s
    } else {
        let unit = match kind {
            "runs" => "runs",
            "outcomes" if with_reports => "reports and recorded outcomes",
            "outcomes" => "recorded outcomes",
            _ => "reports",
        };
        let verdict = if dead_end { "failed" } else { "worked" };
        let mut s = format!("{verdict} in {k} of {n} {unit}");
        if let Some((lo, hi)) = interval {
            s.push_str(&format!(" (95% interval {lo:.0}–{hi:.0}%)"));
        }
        s
    }
}

#[cfg(test)]
mod evidence_tests {
    use super::*;

    fn counted(kind: &str, k: u64, n: u64) -> Basis {
        Basis {
            kind: kind.into(),
            n: Some(n),
            k: Some(k),
            items: Vec::new(),
        }
    }

    #[test]
    fn estimates_are_words_and_counts_are_counts() {
        let est = Basis {
            kind: "estimate".into(),
            ..Basis::default()
        };
        assert_eq!(
            rate_shown(0.9, Some(&est), true, false),
            "almost always fails (editor's estimate)"
        );
        assert_eq!(rate_shown(0.5, None, false, true), "经常有效（编者估计）");
        assert!(!rate_shown(0.73, Some(&est), true, false).contains('%'));
        assert_eq!(
            rate_shown(0.75, Some(&counted("reports", 3, 4)), true, false),
            "failed in 3 of 4 reports (95% interval 30–95%)"
        );
        assert_eq!(
            rate_shown(0.75, Some(&counted("reports", 3, 4)), false, true),
            "4 份报告中 3 份有效（95% 区间 30–95%）"
        );
        assert_eq!(
            rate_shown(0.85, Some(&counted("runs", 17, 20)), false, false),
            "worked in 17 of 20 runs"
        );
    }

    #[test]
    fn wilson_interval_known_values() {
        // 3 of 4: 0.301 to 0.954 (Wilson, z = 1.96).
        let (lo, hi) = wilson_interval(3, 4);
        assert!(
            (lo - 0.3006).abs() < 1e-3 && (hi - 0.9544).abs() < 1e-3,
            "{lo} {hi}"
        );
        assert_eq!(wilson_interval(0, 0), (0.0, 1.0));
        let (lo, hi) = wilson_interval(10, 10);
        assert!(
            (hi - 1.0).abs() < 1e-9 && lo > 0.69 && lo < 0.73,
            "{lo} {hi}"
        );
    }
}

/// Links to other entries (by id).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
#[allow(missing_docs)]
pub struct TransitionGraph {
    pub leads_to: Vec<String>,
    pub preceded_by: Vec<String>,
    pub frequently_confused_with: Vec<String>,
}

/// An entry's optional reproducer: a code snippet with its annotations, checked by the
/// snippet tiers exactly like a fenced block in an article.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Snippet {
    /// The language (`cuda`, `python`, `bash`, …).
    pub lang: String,
    /// Annotations in the fence-info grammar, e.g. `expect=cuda:cudaErrorIllegalAddress`.
    pub annotations: String,
    /// The code.
    pub code: String,
}

/// `text` trimmed to at most `max` characters, cut at a character boundary, with `…` when
/// cut: a cause in a page description, a search result or an assistant's answer.
pub fn truncate(text: &str, max: usize) -> String {
    let text = text.trim();
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}
