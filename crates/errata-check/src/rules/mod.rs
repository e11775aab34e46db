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
mod reference_uncited;
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
type RegexRule = fn(&Ctx<'_>, &EntryDoc, &mut Vec<Diagnostic>);
type ArticleRule = fn(&Ctx<'_>, &ArticleDoc, &mut Vec<Diagnostic>);
type CorpusRule = fn(&Ctx<'_>, &mut Vec<Diagnostic>);

const ENTRY_RULES: &[(&str, EntryRule)] = &[
    ("schema", schema::entry),
    ("id-path-mismatch", id_path_mismatch::entry),
    ("date-format", date_format::entry),
    ("date-order", date_order::entry),
    ("date-in-future", date_in_future::entry),
    ("rate-range", rate_range::entry),
    ("rate-basis-missing", rate_basis_missing::entry),
    ("rate-basis-mismatch", rate_basis_mismatch::entry),
    ("empty-dead-end-action", empty_dead_end_action::entry),
    ("empty-field", empty_field::entry),
    ("zh-missing", zh_missing::entry),
    ("zh-untranslated", zh_untranslated::entry),
    ("zh-count-mismatch", zh_count_mismatch::entry),
    ("unsafe-url", unsafe_url::entry),
    ("error-code-unknown", error_code_unknown::entry),
    ("mojibake", mojibake::entry),
    ("redundant-how", redundant_how::entry),
    ("evidence-mismatch", evidence_mismatch::entry),
    ("reference-uncited", reference_uncited::entry),
    ("tier-unsupported", tier_unsupported::entry),
    ("stale", stale::entry),
    ("snippet-annotation", snippet_annotation::entry),
];

/// The per-entry rules that need the compiled regexes ([`Ctx::regexes`]); they run once
/// the regexes are built, while the rules above run during the build.
const REGEX_RULES: &[(&str, RegexRule)] = &[
    ("regex-invalid", regex_invalid::entry),
    ("regex-no-match", regex_no_match::entry),
    ("error-string-mismatch", error_string_mismatch::entry),
];

const ARTICLE_RULES: &[(&str, ArticleRule)] = &[
    ("frontmatter", frontmatter::article),
    ("id-path-mismatch", id_path_mismatch::article),
    ("broken-link", broken_link::article),
    ("code-block-no-lang", code_block_no_lang::article),
    ("snippet-annotation", snippet_annotation::article),
    ("heading-skip", heading_skip::article),
    ("date-format", date_format::article),
    ("date-in-future", date_in_future::article),
    ("mojibake", mojibake::article),
    ("unsafe-url", unsafe_url::article),
    ("unknown-reference", unknown_reference::article),
    ("translation-outdated", translation_outdated::article),
];

const CORPUS_RULES: &[(&str, CorpusRule)] = &[
    ("duplicate-id", duplicate_id::corpus),
    ("unknown-reference", unknown_reference::corpus),
    ("asymmetric-edge", asymmetric_edge::corpus),
    ("regex-overlap", regex_overlap::corpus),
    ("duplicate-text", duplicate_text::corpus),
    ("outcome-invalid", outcome_invalid::corpus),
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

/// Time spent in each rule, summed over every file and thread (`errata check
/// --timings`): what to profile first.
#[derive(Default)]
pub(crate) struct RuleTimes {
    entry: Vec<std::sync::atomic::AtomicU64>,
    regex: Vec<std::sync::atomic::AtomicU64>,
    article: Vec<std::sync::atomic::AtomicU64>,
    corpus: Vec<u64>,
    /// Building the shared context (`Ctx::new`: ids, the compiled regex matcher).
    pub(crate) context: u64,
}

impl RuleTimes {
    pub(crate) fn new() -> RuleTimes {
        let zeros = |n: usize| {
            (0..n)
                .map(|_| std::sync::atomic::AtomicU64::new(0))
                .collect()
        };
        RuleTimes {
            entry: zeros(ENTRY_RULES.len()),
            regex: zeros(REGEX_RULES.len()),
            article: zeros(ARTICLE_RULES.len()),
            corpus: vec![0; CORPUS_RULES.len()],
            context: 0,
        }
    }

    /// `(rule, nanoseconds)`, the costliest first; a rule id that runs per entry and per
    /// article is listed once per kind (`unsafe-url (entries)`).
    pub(crate) fn sorted(&self) -> Vec<(String, u64)> {
        use std::sync::atomic::Ordering::Relaxed;
        let mut out: Vec<(String, u64)> = ENTRY_RULES
            .iter()
            .zip(&self.entry)
            .map(|((n, _), t)| (format!("{n} (entries)"), t.load(Relaxed)))
            .chain(
                REGEX_RULES
                    .iter()
                    .zip(&self.regex)
                    .map(|((n, _), t)| (format!("{n} (entries)"), t.load(Relaxed))),
            )
            .chain(
                ARTICLE_RULES
                    .iter()
                    .zip(&self.article)
                    .map(|((n, _), t)| (format!("{n} (articles)"), t.load(Relaxed))),
            )
            .chain(
                CORPUS_RULES
                    .iter()
                    .zip(&self.corpus)
                    .map(|((n, _), t)| (format!("{n} (corpus)"), *t)),
            )
            .chain(std::iter::once((
                "(context: ids, regex matcher)".to_string(),
                self.context,
            )))
            .collect();
        out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }
}

/// Runs `f`, adding its time to `slot` when timings are wanted.
fn timed<T>(slot: Option<&std::sync::atomic::AtomicU64>, f: impl FnOnce() -> T) -> T {
    match slot {
        None => f(),
        Some(slot) => {
            let start = std::time::Instant::now();
            let out = f();
            let ns = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
            slot.fetch_add(ns, std::sync::atomic::Ordering::Relaxed);
            out
        }
    }
}

pub(crate) fn run_all(cx: &Ctx<'_>, mut times: Option<&mut RuleTimes>) -> Vec<Diagnostic> {
    let shared = times.as_deref();
    // The regexes take a tenth of a check to compile; the rules that do not need them
    // run meanwhile, on the other threads.
    let (regex_ns, mut all) = rayon::join(
        || {
            let start = std::time::Instant::now();
            cx.regexes();
            u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX)
        },
        || {
            let per_entry = cx.kb.entries.par_iter().flat_map_iter(|doc| {
                let input = EntryInput {
                    doc,
                    value: doc.value(),
                };
                let mut out = Vec::new();
                for (i, (_, rule)) in ENTRY_RULES.iter().enumerate() {
                    timed(shared.map(|t| &t.entry[i]), || rule(cx, &input, &mut out));
                }
                out
            });
            let per_article = cx.kb.articles.par_iter().flat_map_iter(|doc| {
                let mut out = Vec::new();
                for (i, (_, rule)) in ARTICLE_RULES.iter().enumerate() {
                    timed(shared.map(|t| &t.article[i]), || rule(cx, doc, &mut out));
                }
                out
            });
            per_entry.chain(per_article).collect::<Vec<Diagnostic>>()
        },
    );
    all.par_extend(cx.kb.entries.par_iter().flat_map_iter(|doc| {
        let mut out = Vec::new();
        for (i, (_, rule)) in REGEX_RULES.iter().enumerate() {
            timed(shared.map(|t| &t.regex[i]), || rule(cx, doc, &mut out));
        }
        out
    }));
    if let Some(t) = times.as_deref_mut() {
        t.context = t.context.saturating_add(regex_ns);
    }
    for (i, (_, rule)) in CORPUS_RULES.iter().enumerate() {
        let start = std::time::Instant::now();
        rule(cx, &mut all);
        if let Some(t) = times.as_deref_mut() {
            t.corpus[i] = u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX);
        }
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
