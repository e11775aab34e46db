//! Test helpers: a valid entry to mutate, and a real on-disk knowledge base to check.

use errata_load::KnowledgeBase;
use errata_model::Diagnostic;
use errata_model::date::Date;
use serde_json::{Value, json};

use crate::{CheckOptions, check};

/// A complete entry that passes every rule (as of 2026-01-01).
pub(crate) fn valid_entry(id: &str) -> Value {
    let slug = id.split('/').nth(1).unwrap_or("x");
    json!({
        "id": id,
        "signature": format!("CUDA error: {slug} happened"),
        "signature_zh": "CUDA 错误：发生了问题",
        // The enumerator too: `error-string-mismatch` wants the regex to recognise the
        // code it names.
        "regex": format!("CUDA error: {slug} happened|cudaErrorIllegalAddress"),
        "domain": "cuda",
        "category": "runtime_error",
        "subcategory": null,
        "root_cause": format!("A kernel read memory that {slug} did not own."),
        "root_cause_type": "generic",
        "root_cause_zh": format!("内核读取了不属于 {slug} 的内存。"),
        "versions": [{"version": "CUDA 13.0", "introduced": "2024-01-01", "deprecated": null, "removed": null, "behavior_change": null, "status": "active"}],
        "os_specific": {},
        "dead_ends": [{"action": "Add more synchronisation", "why_fails": "It hides the race.", "fail_rate": 0.7, "basis": {"kind": "estimate"}, "condition": "", "sources": ["https://docs.nvidia.com/cuda/a"]}],
        "dead_ends_zh": ["加更多同步：这只会掩盖竞争。"],
        "workarounds": [{"action": "Fix the index", "success_rate": 0.9, "basis": {"kind": "estimate"}, "how": format!("Bound-check the index of {slug} against the allocation size before the load."), "condition": "", "sources": ["https://docs.nvidia.com/cuda/b"]}],
        "workarounds_zh": [format!("在读取 {slug} 之前检查索引是否超出分配的大小。")],
        "transition_graph": {"leads_to": [], "preceded_by": [], "frequently_confused_with": []},
        "official_doc_url": "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__TYPES.html",
        "official_doc_section": null,
        "error_code": "cudaErrorIllegalAddress",
        "verification_tier": "ai_generated",
        "confidence": 0.5,
        "fix_success_rate": 0.8,
        "resolvable": "true",
        "operator_action": "fix-code",
        "first_seen": "2025-01-01",
        "last_confirmed": "2025-06-01",
        "last_updated": "2025-06-01",
        "evidence_count": 2,
        "tags": ["memory"],
        "locale": "en",
        "aliases": []
    })
}

/// A valid article with front matter.
pub(crate) fn valid_article(id: &str, body: &str) -> String {
    format!("---\ntitle: \"An article\"\nid: {id}\ndate: \"2025-01-01\"\n---\n{body}")
}

/// Writes files into a temp data dir, loads and checks it with today = 2026-01-01.
pub(crate) fn check_files(files: &[(&str, String)]) -> Vec<Diagnostic> {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let kb = KnowledgeBase::load(dir.path()).unwrap();
    let options = CheckOptions {
        today: Date::parse("2026-01-01").unwrap(),
        ..CheckOptions::default()
    };
    check(&kb, &options)
}

/// Checks one entry (at its id's path) and returns the diagnostics of `rule`.
pub(crate) fn entry_diags(value: &Value, rule: &str) -> Vec<Diagnostic> {
    let id = value["id"].as_str().unwrap_or("cuda/x");
    let text = serde_json::to_string_pretty(value).unwrap();
    only(
        check_files(&[(&format!("signatures/{id}.json"), text)]),
        rule,
    )
}

/// Keeps the diagnostics of one rule.
pub(crate) fn only(diags: Vec<Diagnostic>, rule: &str) -> Vec<Diagnostic> {
    diags.into_iter().filter(|d| d.rule == rule).collect()
}

#[test]
fn the_valid_entry_and_article_are_clean() {
    let diags = check_files(&[
        (
            "signatures/cuda/a.json",
            serde_json::to_string_pretty(&valid_entry("cuda/a")).unwrap(),
        ),
        (
            "articles/cuda/b.md",
            valid_article("cuda/b", "# B\n\nText.\n"),
        ),
    ]);
    assert!(diags.is_empty(), "{diags:#?}");
}
