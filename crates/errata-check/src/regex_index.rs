//! Entry regexes, compiled the way every consumer of the bundle will compile them (the
//! Rust `regex` crate), with size limits so a hostile pattern cannot exhaust memory, plus
//! a literal index that makes "which regexes could match which signatures"
//! (`regex-overlap`) near-linear instead of quadratic.

use std::collections::{HashMap, HashSet};

use aho_corasick::{AhoCorasick, AhoCorasickKind};
use regex::{Regex, RegexBuilder};
use regex_syntax::hir::literal::{ExtractKind, Extractor, Seq};

/// Compiled-program and lazy-DFA budgets per entry regex. Real signature regexes use a few
/// kilobytes; these bounds stop pathological counted repetitions (`(a{1000}){1000}`).
const SIZE_LIMIT: usize = 1 << 20;
const DFA_SIZE_LIMIT: usize = 1 << 20;
/// Longer patterns are rejected before parsing.
pub(crate) const MAX_PATTERN_LEN: usize = 4096;
/// Literals shorter than this select too many signatures to be worth indexing.
const MIN_LITERAL_LEN: usize = 3;

/// What the checker keeps of an entry's regex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RegexStatus {
    /// It does not compile (the reason).
    Invalid(String),
    /// It compiles; whether it matches the entry's own signature.
    Valid { matches_signature: bool },
}

pub(crate) fn compile(pattern: &str) -> Result<Regex, String> {
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
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => {
                format!("pattern compiles to more than {limit} bytes; simplify it")
            }
            other => other.to_string(),
        })
}

/// Prefix and suffix literal sets of a regex: any text it matches contains one literal of
/// each set that is `Some`. A set is `None` when it has no usable (long enough) literal.
type Literals = (Option<Vec<Vec<u8>>>, Option<Vec<Vec<u8>>>);

fn required_literals(pattern: &str) -> Literals {
    let Ok(hir) = regex_syntax::ParserBuilder::new()
        .nest_limit(64)
        .build()
        .parse(pattern)
    else {
        return (None, None);
    };
    let extract = |suffix: bool| -> Option<Vec<Vec<u8>>> {
        let mut ex = Extractor::new();
        ex.kind(if suffix {
            ExtractKind::Suffix
        } else {
            ExtractKind::Prefix
        });
        let mut seq: Seq = ex.extract(&hir);
        if suffix {
            seq.optimize_for_suffix_by_preference();
        } else {
            seq.optimize_for_prefix_by_preference();
        }
        let lits = seq.literals()?;
        if lits.is_empty() || lits.iter().any(|l| l.as_bytes().len() < MIN_LITERAL_LEN) {
            return None;
        }
        Some(lits.iter().map(|l| l.as_bytes().to_vec()).collect())
    };
    (extract(false), extract(true))
}

/// One Aho-Corasick automaton over many regexes' literals.
struct LiteralSet {
    automaton: Option<AhoCorasick>,
    literals: Vec<Vec<u8>>,
    owner: Vec<usize>,
}

impl LiteralSet {
    fn push(&mut self, id: usize, lits: Vec<Vec<u8>>) {
        self.owner.extend(std::iter::repeat_n(id, lits.len()));
        self.literals.extend(lits);
    }

    fn build(mut self) -> Option<LiteralSet> {
        self.automaton = Some(
            AhoCorasick::builder()
                .kind(Some(AhoCorasickKind::ContiguousNFA))
                .build(&self.literals)
                .ok()?,
        );
        self.literals = Vec::new();
        Some(self)
    }

    fn hits(&self, text: &str) -> HashSet<usize> {
        match &self.automaton {
            Some(ac) => ac
                .find_overlapping_iter(text)
                .map(|m| self.owner[m.pattern().as_usize()])
                .collect(),
            None => HashSet::new(),
        }
    }
}

/// Which regexes could match a text, from their required literals alone: a regex is a
/// candidate when the text contains one of its prefix literals (if it has any) and one of
/// its suffix literals (if it has any).
pub(crate) struct LiteralIndex {
    prefix: LiteralSet,
    suffix: LiteralSet,
    needs: HashMap<usize, (bool, bool)>,
    /// Regexes without any usable literal: candidates for every text.
    always: Vec<usize>,
}

impl LiteralIndex {
    /// `patterns`: (caller's id, regex source).
    pub fn new<'p>(patterns: impl IntoIterator<Item = (usize, &'p str)>) -> LiteralIndex {
        let empty = || LiteralSet {
            automaton: None,
            literals: Vec::new(),
            owner: Vec::new(),
        };
        let (mut prefix, mut suffix) = (empty(), empty());
        let mut needs = HashMap::new();
        let mut always = Vec::new();
        for (id, pattern) in patterns {
            match required_literals(pattern) {
                (None, None) => always.push(id),
                (p, s) => {
                    needs.insert(id, (p.is_some(), s.is_some()));
                    if let Some(p) = p {
                        prefix.push(id, p);
                    }
                    if let Some(s) = s {
                        suffix.push(id, s);
                    }
                }
            }
        }
        match (prefix.build(), suffix.build()) {
            (Some(prefix), Some(suffix)) => LiteralIndex {
                prefix,
                suffix,
                needs,
                always,
            },
            _ => {
                // The automata could not be built (should not happen): all are candidates.
                always.extend(needs.keys());
                LiteralIndex {
                    prefix: empty(),
                    suffix: empty(),
                    needs: HashMap::new(),
                    always,
                }
            }
        }
    }

    /// The ids of the regexes that could match `text`, sorted and deduplicated.
    pub fn candidates(&self, text: &str) -> Vec<usize> {
        let (p, s) = (self.prefix.hits(text), self.suffix.hits(text));
        let mut out = self.always.clone();
        out.extend(p.union(&s).copied().filter(|id| {
            let (need_p, need_s) = self.needs.get(id).copied().unwrap_or((false, false));
            (!need_p || p.contains(id)) && (!need_s || s.contains(id))
        }));
        out.sort_unstable();
        out.dedup();
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
    fn candidates_never_miss_a_real_match() {
        let patterns = [
            "out of memory",
            r"illegal memory access was encountered$",
            r".*launch failure",
            "(?i)DEVICE-side assert",
            r"kernel\s+failed\s+\[E0*123\]",
        ];
        let index = LiteralIndex::new(patterns.iter().copied().enumerate());
        for text in [
            "CUDA out of memory",
            "an illegal memory access was encountered",
            "unspecified launch failure",
            "device-side assert triggered",
            "kernel  failed [E00123]",
            "nothing",
        ] {
            let truth: Vec<usize> = patterns
                .iter()
                .enumerate()
                .filter(|(_, p)| compile(p).unwrap().is_match(text))
                .map(|(i, _)| i)
                .collect();
            let candidates = index.candidates(text);
            assert!(
                truth.iter().all(|i| candidates.contains(i)),
                "{text}: {candidates:?} misses {truth:?}"
            );
        }
        // Both the prefix (`kernel`) and the suffix (`123]`) literal must occur.
        assert!(!index.candidates("kernel failed [E00999]").contains(&4));
    }
}
