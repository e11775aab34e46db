//! Entry regexes, compiled once per check by the matcher that consumers of the bundle use
//! ([`errata_matcher`]), so that "compiles", "matches its own signature" and "matches
//! another entry's signature" mean here exactly what they mean in a log scanner: the Rust
//! `regex` syntax, line-bound, under the same size limits, and a regex that matches the
//! empty string is refused.

use errata_load::KnowledgeBase;
use errata_matcher::{Matcher, Pattern, Via};
use rayon::prelude::*;

/// What the checker knows about one entry's regex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RegexStatus {
    /// It does not compile (the reason).
    Invalid(String),
    /// It compiles; whether it matches the entry's own signature.
    Valid { matches_signature: bool },
}

pub(crate) struct Regexes {
    /// Per entry (same index as `kb.entries`); `None` when the entry has no regex.
    pub status: Vec<Option<RegexStatus>>,
    matcher: Option<Matcher>,
    /// Matcher pattern → entry index.
    entry_of: Vec<usize>,
    /// Entry index → matcher pattern (`None`: no regex).
    pattern_of: Vec<Option<usize>>,
}

impl Regexes {
    pub fn new(kb: &KnowledgeBase) -> Regexes {
        let mut entry_of = Vec::new();
        let mut patterns = Vec::new();
        for (i, doc) in kb.entries.iter().enumerate() {
            if let Some(e) = doc.entry.as_ref().filter(|e| !e.regex.trim().is_empty()) {
                entry_of.push(i);
                patterns.push(Pattern::new(e.regex.as_str()));
            }
        }
        let (matcher, errors) = match Matcher::build_for_short_texts(&patterns) {
            Ok((matcher, errors)) => (Some(matcher), errors),
            // The patterns could not be combined at all; the reason names one of them.
            Err(errors) => (None, errors),
        };
        let mut status: Vec<Option<RegexStatus>> = vec![None; kb.entries.len()];
        for (k, why) in errors {
            if let Some(&i) = entry_of.get(k) {
                status[i] = Some(RegexStatus::Invalid(why));
            }
        }
        if let Some(m) = &matcher {
            let found: Vec<(usize, RegexStatus)> = entry_of
                .par_iter()
                .enumerate()
                .filter(|&(_, &i)| status[i].is_none())
                .filter_map(|(k, &i)| {
                    let signature = &kb.entries[i].entry.as_ref()?.signature;
                    let matches_signature = m.is_match(k, signature);
                    Some((i, RegexStatus::Valid { matches_signature }))
                })
                .collect();
            for (i, s) in found {
                status[i] = Some(s);
            }
        }
        let mut pattern_of = vec![None; kb.entries.len()];
        for (k, &i) in entry_of.iter().enumerate() {
            pattern_of[i] = Some(k);
        }
        Regexes {
            status,
            matcher,
            entry_of,
            pattern_of,
        }
    }

    /// Whether entry `i`'s regex matches `text` as a log scanner would (one line at a
    /// time); `None` when the entry has no regex or it does not compile.
    pub fn entry_matches(&self, i: usize, text: &str) -> Option<bool> {
        let k = (*self.pattern_of.get(i)?)?;
        match self.status.get(i)? {
            Some(RegexStatus::Valid { .. }) => Some(self.matcher.as_ref()?.is_match(k, text)),
            _ => None,
        }
    }

    /// The entries whose regex matches `text` (sorted).
    pub fn matching(&self, text: &str) -> Vec<usize> {
        let Some(m) = &self.matcher else {
            return Vec::new();
        };
        let mut out: Vec<usize> = m
            .matches(text)
            .into_iter()
            .filter(|found| found.via == Via::Regex)
            .filter_map(|found| self.entry_of.get(found.pattern).copied())
            .collect();
        out.sort_unstable();
        out
    }
}
