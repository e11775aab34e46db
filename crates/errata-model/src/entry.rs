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
#[allow(missing_docs)] // The fields are documented in the schema and DESIGN.md.
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
    pub dead_ends: Vec<DeadEnd>,
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
    pub first_seen: String,
    pub last_confirmed: String,
    pub last_updated: String,
    pub evidence_count: u64,
    pub tags: Vec<String>,
    pub locale: String,
    pub aliases: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<Snippet>,
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
    pub how: String,
    pub condition: String,
    pub sources: Vec<String>,
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
