//! Every rule of `errata check`.
//!
//! [`check`] takes a loaded [`KnowledgeBase`] and returns every problem in it, resolved
//! to line:column and sorted: the load diagnostics (unreadable files, JSON syntax, front
//! matter), JSON Schema validation (`schema/*.schema.json`, compiled once per process),
//! and the semantic rules in [`rules`] — per entry, per article, and across the corpus
//! (duplicate ids, unknown references, regex overlap).
//!
//! Each rule lives in its own module under `rules/`, and that module's doc comment is the
//! text `errata explain <rule>` prints ([`rule_info`]).
//!
//! ```no_run
//! use errata_check::{check, CheckOptions};
//! let kb = errata_load::KnowledgeBase::load(std::path::Path::new("data")).unwrap();
//! let diagnostics = check(&kb, &CheckOptions::default());
//! assert!(!errata_check::has_errors(&diagnostics));
//! ```
#![deny(missing_docs)]

use std::collections::BTreeMap;

use errata_load::{KnowledgeBase, RuleLevel};
use errata_model::date::Date;
use errata_model::{Diagnostic, Severity};

mod canonical;
mod context;
pub mod migrate;
mod prose;
mod regexes;
pub mod rules;
mod run_records;
mod schema;
mod text;

pub use canonical::canonical_entry;
pub use rules::{CROSS_FILE_RULES, RULES, RuleInfo, rule_info};
pub use schema::{ARTICLE_SCHEMA, ENTRY_SCHEMA};
/// The English-prose test of `zh-untranslated`, shared with the site's test of every
/// rendered Chinese page so that both find the same runs.
pub use text::english_run;

/// How to check.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    /// "Today", for `date-in-future` and `stale`.
    pub today: Date,
    /// Rule id → level, from `errata.toml` `[rules]`.
    pub overrides: BTreeMap<String, RuleLevel>,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            today: Date::today(),
            overrides: BTreeMap::new(),
        }
    }
}

/// Checks the whole knowledge base: load diagnostics plus every rule, with severity
/// overrides applied, resolved to line:column and sorted.
pub fn check(kb: &KnowledgeBase, options: &CheckOptions) -> Vec<Diagnostic> {
    check_inner(kb, options, None)
}

/// [`check`], also returning the time each rule took, summed over files and threads
/// (`(rule, nanoseconds)`, the costliest first): `errata check --timings`.
pub fn check_timed(
    kb: &KnowledgeBase,
    options: &CheckOptions,
) -> (Vec<Diagnostic>, Vec<(String, u64)>) {
    let mut times = rules::RuleTimes::new();
    let diagnostics = check_inner(kb, options, Some(&mut times));
    (diagnostics, times.sorted())
}

fn check_inner(
    kb: &KnowledgeBase,
    options: &CheckOptions,
    times: Option<&mut rules::RuleTimes>,
) -> Vec<Diagnostic> {
    let started = std::time::Instant::now();
    let cx = context::Ctx::new(kb, options.today);
    let context_ns = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    let mut times = times;
    if let Some(t) = times.as_deref_mut() {
        // What every rule shares (the ids, the compiled regexes): timed like a rule.
        t.context = context_ns;
    }
    let mut diagnostics = kb.diagnostics.clone();
    diagnostics.extend(rules::run_all(&cx, times));
    diagnostics.retain_mut(|d| match options.overrides.get(d.rule) {
        Some(RuleLevel::Allow) => false,
        Some(RuleLevel::Error) => {
            d.severity = Severity::Error;
            true
        }
        Some(RuleLevel::Warning) => {
            d.severity = Severity::Warning;
            true
        }
        None => true,
    });
    kb.resolve(&mut diagnostics);
    diagnostics.dedup();
    diagnostics
}

/// Whether any diagnostic is an error.
pub fn has_errors(diagnostics: &[Diagnostic]) -> bool {
    diagnostics.iter().any(|d| d.severity == Severity::Error)
}

/// Validates the rule ids named in a configuration, so a typo in `errata.toml` is an error
/// rather than a silently ignored override.
pub fn unknown_rule_ids<'a>(ids: impl IntoIterator<Item = &'a String>) -> Vec<&'a str> {
    ids.into_iter()
        .map(String::as_str)
        .filter(|id| rule_info(id).is_none())
        .collect()
}
