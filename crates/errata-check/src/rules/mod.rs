//! The rules, one module each. A module's `//!` doc comment is its `errata explain` page
//! (collected by `build.rs`); its first line gives the id, default severity and summary.
//!
//! A rule module exposes any of:
//! - `entry(cx, doc, out)`: runs on each entry file that parsed as JSON;
//! - `article(cx, doc, out)`: runs on each article and translation;
//! - `corpus(cx, out)`: runs once, across files.

use std::path::Path;

use errata_load::{ArticleDoc, EntryDoc};
use errata_model::{Anchor, Diagnostic, Severity};
use rayon::prelude::*;

use crate::context::Ctx;

mod asymmetric_edge;
mod broken_link;
pub(crate) use broken_link::normalize as normalize_path;
mod code_block_no_lang;
mod date_format;
mod date_in_future;
mod date_order;
mod duplicate_id;
mod duplicate_text;
mod empty_dead_end_action;
mod empty_field;
mod error_code_unknown;
mod error_string_mismatch;
mod evidence_mismatch;
mod file_too_large;
mod frontmatter;
mod heading_skip;
mod id_path_mismatch;
mod json_syntax;
mod link_dead;
mod link_redirect;
mod mojibake;
mod outcome_invalid;
mod rate_basis_mismatch;
mod rate_basis_missing;
mod rate_range;
mod redundant_how;
mod regex_invalid;
mod regex_no_match;
mod regex_overlap;
mod schema;
mod snippet_annotation;
mod stale;
mod tier_unsupported;
pub use tier_unsupported::confidence_ceiling;
mod translation_outdated;
mod unknown_reference;
mod unreadable;
mod unsafe_url;
mod zh_count_mismatch;
mod zh_missing;
mod zh_untranslated;

/// A rule's identity and documentation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleInfo {
    /// The stable id, e.g. `date-order`.
    pub id: &'static str,
    /// Default severity (overridable in `errata.toml`).
    pub severity: Severity,
    /// One line.
    pub summary: &'static str,
    /// The full explanation (Markdown).
    pub doc: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/rules_table.rs"));

/// Looks a rule up by id.
pub fn rule_info(id: &str) -> Option<&'static RuleInfo> {
    RULES.iter().find(|r| r.id == id)
}

/// An entry as the per-entry rules see it: the loaded document (through `Deref`) plus
/// its JSON as written. The JSON is parsed for the duration of this entry's check only:
/// 10,000 parsed trees at once would cost five times the corpus text.
pub(crate) struct EntryInput<'a> {
    pub doc: &'a EntryDoc,
    pub value: serde_json::Value,
}

impl std::ops::Deref for EntryInput<'_> {
    type Target = EntryDoc;
    fn deref(&self) -> &EntryDoc {
        self.doc
    }
}

type EntryRule = fn(&Ctx<'_>, &EntryInput<'_>, &mut Vec<Diagnostic>);
type ArticleRule = fn(&Ctx<'_>, &ArticleDoc, &mut Vec<Diagnostic>);
type CorpusRule = fn(&Ctx<'_>, &mut Vec<Diagnostic>);

const ENTRY_RULES: &[EntryRule] = &[
    schema::entry,
    id_path_mismatch::entry,
    date_format::entry,
    date_order::entry,
    date_in_future::entry,
    rate_range::entry,
    rate_basis_missing::entry,
    rate_basis_mismatch::entry,
    empty_dead_end_action::entry,
    empty_field::entry,
    zh_missing::entry,
    zh_untranslated::entry,
    zh_count_mismatch::entry,
    regex_invalid::entry,
    regex_no_match::entry,
    unsafe_url::entry,
    error_code_unknown::entry,
    error_string_mismatch::entry,
    mojibake::entry,
    redundant_how::entry,
    evidence_mismatch::entry,
    tier_unsupported::entry,
    stale::entry,
    snippet_annotation::entry,
];

const ARTICLE_RULES: &[ArticleRule] = &[
    frontmatter::article,
    id_path_mismatch::article,
    broken_link::article,
    code_block_no_lang::article,
    snippet_annotation::article,
    heading_skip::article,
    date_format::article,
    date_in_future::article,
    mojibake::article,
    unsafe_url::article,
    unknown_reference::article,
    translation_outdated::article,
];

const CORPUS_RULES: &[CorpusRule] = &[
    duplicate_id::corpus,
    unknown_reference::corpus,
    asymmetric_edge::corpus,
    regex_overlap::corpus,
    duplicate_text::corpus,
    outcome_invalid::corpus,
];

/// Rules whose verdict on a file depends on other files: the corpus rules above, plus
/// the article rules that look at another file (a link's target, the English original of
/// a translation). Checking a few files on their own (`errata serve` after an edit)
/// leaves these to a check of the whole knowledge base; on a partial one they would
/// report false positives. A new rule that reads another file belongs here.
pub const CROSS_FILE_RULES: &[&str] = &[
    "duplicate-id",
    "unknown-reference",
    "asymmetric-edge",
    "regex-overlap",
    "duplicate-text",
    "broken-link",
    "translation-outdated",
];

pub(crate) fn run_all(cx: &Ctx<'_>) -> Vec<Diagnostic> {
    let per_entry = cx.kb.entries.par_iter().flat_map_iter(|doc| {
        let input = EntryInput {
            doc,
            value: doc.value(),
        };
        let mut out = Vec::new();
        for rule in ENTRY_RULES {
            rule(cx, &input, &mut out);
        }
        out
    });
    let per_article = cx.kb.articles.par_iter().flat_map_iter(|doc| {
        let mut out = Vec::new();
        for rule in ARTICLE_RULES {
            rule(cx, doc, &mut out);
        }
        out
    });
    let mut all: Vec<Diagnostic> = per_entry.chain(per_article).collect();
    for rule in CORPUS_RULES {
        rule(cx, &mut all);
    }
    all
}

/// The index of `doc` in `cx.kb.entries` (per-entry rules get the document, not its index).
pub(crate) fn entry_index(cx: &Ctx<'_>, doc: &EntryDoc) -> Option<usize> {
    // `doc` is an element of `cx.kb.entries`: its index follows from its address.
    let base = cx.kb.entries.as_ptr() as usize;
    let i = (doc as *const EntryDoc as usize).checked_sub(base)?
        / std::mem::size_of::<EntryDoc>().max(1);
    std::ptr::eq(cx.kb.entries.get(i)?, doc).then_some(i)
}

/// A diagnostic with the rule's default severity.
pub(crate) fn diag(
    rule: &'static str,
    file: &Path,
    anchor: Anchor,
    message: impl Into<String>,
) -> Diagnostic {
    let severity = rule_info(rule).map_or(Severity::Error, |r| r.severity);
    Diagnostic {
        severity,
        ..Diagnostic::error(rule, file, anchor, message)
    }
}

/// Every date-valued JSON pointer of an entry, with its value (when it is a string).
pub(crate) fn entry_dates(value: &serde_json::Value) -> Vec<(String, &str)> {
    let mut out = Vec::new();
    for key in ["first_seen", "last_confirmed", "last_updated"] {
        if let Some(s) = value.get(key).and_then(|v| v.as_str()) {
            out.push((format!("/{key}"), s));
        }
    }
    if let Some(versions) = value.get("versions").and_then(|v| v.as_array()) {
        for (i, v) in versions.iter().enumerate() {
            for key in ["introduced", "deprecated", "removed"] {
                if let Some(s) = v.get(key).and_then(|v| v.as_str()) {
                    out.push((format!("/versions/{i}/{key}"), s));
                }
            }
        }
    }
    out
}

/// Calls `visit(pointer, string)` for every string in a JSON value, in document order.
/// The pointer is built in one buffer; a caller that keeps it copies it.
pub(crate) fn visit_strings<'v>(
    value: &'v serde_json::Value,
    pointer: &mut String,
    visit: &mut impl FnMut(&str, &'v str),
) {
    match value {
        serde_json::Value::String(s) => visit(pointer, s),
        serde_json::Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let len = pointer.len();
                // Writing into the buffer allocates nothing (unlike `format!`).
                let _ = std::fmt::Write::write_fmt(pointer, format_args!("/{i}"));
                visit_strings(item, pointer, visit);
                pointer.truncate(len);
            }
        }
        serde_json::Value::Object(map) => {
            for (k, v) in map {
                let len = pointer.len();
                pointer.push('/');
                pointer.push_str(&crate::text::pointer_token(k));
                visit_strings(v, pointer, visit);
                pointer.truncate(len);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
pub(crate) mod testing;

#[cfg(test)]
mod tests {
    #[test]
    fn every_cross_file_rule_is_a_rule() {
        for id in super::CROSS_FILE_RULES {
            assert!(super::rule_info(id).is_some(), "{id} is not a rule id");
        }
    }
}
