//! Entry regexes, compiled the way every consumer of the bundle will compile them (the
//! Rust `regex` crate), with size limits so a hostile pattern cannot exhaust memory, plus
//! a literal prefilter that makes "which regexes match which signatures" (`regex-overlap`)
//! near-linear instead of quadratic.

use aho_corasick::AhoCorasick;
use regex::{Regex, RegexBuilder};
use regex_syntax::hir::literal::Extractor;

/// Compiled-program and lazy-DFA budgets per entry regex. Real signature regexes use a few
/// kilobytes; these bounds stop pathological counted repetitions (`(a{1000}){1000}`).
const SIZE_LIMIT: usize = 1 << 20;
const DFA_SIZE_LIMIT: usize = 1 << 20;
/// Longer patterns are rejected before parsing.
pub(crate) const MAX_PATTERN_LEN: usize = 4096;

#[derive(Debug, Clone)]
pub(crate) struct CompiledRegex {
    pub regex: Regex,
}

pub(crate) fn compile(pattern: &str) -> Result<CompiledRegex, String> {
    if pattern.len() > MAX_PATTERN_LEN {
        return Err(format!(
            "pattern is {} bytes long; the limit is {MAX_PATTERN_LEN}",
            pattern.len()
        ));
    }
    RegexBuilder::new(pattern)
        .size_limit(SIZE_LIMIT)
        .dfa_size_limit(DFA_SIZE_LIMIT)
        .nest_limit(64)
        .build()
        .map(|regex| CompiledRegex { regex })
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => {
                format!("pattern compiles to more than {limit} bytes; simplify it")
            }
            other => other.to_string(),
        })
}

/// For each regex, the literals one of which must occur in any text it matches.
/// `None` means "no usable literal": the regex is tried on every text.
fn required_literals(pattern: &str) -> Option<Vec<Vec<u8>>> {
    let hir = regex_syntax::ParserBuilder::new()
        .nest_limit(64)
        .build()
        .parse(pattern)
        .ok()?;
    let mut extractor = Extractor::new();
    extractor.kind(regex_syntax::hir::literal::ExtractKind::Prefix);
    let mut seq = extractor.extract(&hir);
    seq.optimize_for_prefix_by_preference();
    let lits = seq.literals()?;
    if lits.is_empty() || lits.iter().any(|l| l.as_bytes().len() < 3) {
        return None;
    }
    Some(lits.iter().map(|l| l.as_bytes().to_vec()).collect())
}

/// A set of regexes that can answer "which of you match this text?" quickly.
pub(crate) struct RegexIndex<'r> {
    regexes: Vec<(usize, &'r Regex)>,
    prefilter: Option<AhoCorasick>,
    /// Pattern index in the automaton → position in `regexes`.
    literal_owner: Vec<usize>,
    always: Vec<usize>,
}

impl<'r> RegexIndex<'r> {
    /// `regexes`: (caller's id, regex, source pattern).
    pub fn new(regexes: Vec<(usize, &'r Regex, &str)>) -> RegexIndex<'r> {
        let mut literals = Vec::new();
        let mut literal_owner = Vec::new();
        let mut always = Vec::new();
        let mut kept = Vec::with_capacity(regexes.len());
        for (pos, (id, regex, pattern)) in regexes.into_iter().enumerate() {
            kept.push((id, regex));
            match required_literals(pattern) {
                Some(lits) => {
                    for lit in lits {
                        literals.push(lit);
                        literal_owner.push(pos);
                    }
                }
                None => always.push(pos),
            }
        }
        let prefilter = AhoCorasick::new(&literals).ok();
        if prefilter.is_none() {
            // The automaton could not be built (should not happen): fall back to trying all.
            always = (0..kept.len()).collect();
        }
        RegexIndex {
            regexes: kept,
            prefilter,
            literal_owner,
            always,
        }
    }

    /// The caller ids of every regex that matches `text`, sorted and deduplicated.
    pub fn matching(&self, text: &str) -> Vec<usize> {
        let mut candidates: Vec<usize> = self.always.clone();
        if let Some(ac) = &self.prefilter {
            candidates.extend(
                ac.find_overlapping_iter(text)
                    .map(|m| self.literal_owner[m.pattern().as_usize()]),
            );
        }
        candidates.sort_unstable();
        candidates.dedup();
        let mut out: Vec<usize> = candidates
            .into_iter()
            .filter(|&pos| self.regexes[pos].1.is_match(text))
            .map(|pos| self.regexes[pos].0)
            .collect();
        out.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_patterns_are_refused_not_compiled() {
        assert!(compile(r"(a{1000}){1000}").is_err());
        assert!(compile(&"(".repeat(200)).is_err());
        assert!(compile(&"a".repeat(MAX_PATTERN_LEN + 1)).is_err());
        assert!(compile(r"CUDA error: (an )?illegal memory access").is_ok());
    }

    #[test]
    fn index_agrees_with_brute_force() {
        let patterns = [
            "out of memory",
            r"illegal memory access was encountered$",
            r".*launch failure",
            "(?i)DEVICE-side assert",
        ];
        let compiled: Vec<Regex> = patterns
            .iter()
            .map(|p| compile(p).map(|c| c.regex).unwrap())
            .collect();
        let index = RegexIndex::new(
            compiled
                .iter()
                .enumerate()
                .map(|(i, r)| (i, r, patterns[i]))
                .collect(),
        );
        for text in [
            "CUDA out of memory",
            "an illegal memory access was encountered",
            "unspecified launch failure",
            "device-side assert triggered",
            "nothing",
        ] {
            let brute: Vec<usize> = compiled
                .iter()
                .enumerate()
                .filter(|(_, r)| r.is_match(text))
                .map(|(i, _)| i)
                .collect();
            assert_eq!(index.matching(text), brute, "{text}");
        }
    }
}
