//! A regex compiled for confirming a match within one line of a log.
//!
//! The prefilter has already said which regexes can match a line; each then runs once on
//! a line of a few hundred bytes. For that, `regex::Regex` is the wrong size: it builds
//! reverse automata, lazy DFAs, a one-pass DFA and its own literal prefilters, which cost
//! about 70 µs and 10 KB per regex. A Thompson NFA with a bounded backtracker (and a PikeVM
//! for the rare line too long for it) costs a quarter of the time and a fifth of the
//! memory, and answers the same: both are engines of the `regex` crate, with its syntax
//! and leftmost-first semantics. Search caches are not kept per regex: one [`Scratch`]
//! per search is reset for each regex it runs.

use std::ops::Range;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use regex_automata::nfa::thompson::backtrack::{self, BoundedBacktracker};
use regex_automata::nfa::thompson::pikevm::{self, PikeVM};
use regex_automata::nfa::thompson::{self, NFA, WhichCaptures};
use regex_automata::util::prefilter::Prefilter;
use regex_automata::{Input, MatchKind};
use regex_syntax::hir::{Hir, literal};

#[derive(Debug)]
pub(crate) enum LineRegex {
    /// Every match is one of a few literals, exactly (`\[E01008\] out of memory`,
    /// `(?:CUDA error: )?out of memory`), in the regex's order of preference: each is
    /// searched for in the line and the leftmost wins (the most preferred of those that
    /// start there), as in the regex, and no automaton is built. The `regex` crate's own
    /// engine searches such a regex by its literals too.
    Literals(Vec<memchr::memmem::Finder<'static>>),
    /// Any other regex.
    Automaton(Box<Automaton>),
}

/// A [`LineRegex`] searched by automata.
#[derive(Debug)]
pub(crate) struct Automaton {
    plain: Engines,
    /// What every match starts with, as extracted (infinite: no finite set), for
    /// [`Automaton::hot`]. Narrowed to the prefilter's literals only once the regex is
    /// hot: that step was a fortieth of `errata check`, which compiles every regex of
    /// a knowledge base and makes few of them hot.
    prefixes: literal::Seq,
    /// Searches so far, counted until the regex is [`HOT_USES`] hot.
    uses: AtomicU32,
    /// The engines again with a prefilter over `prefixes` (`None`: no fast one), built
    /// once the regex is hot.
    hot: OnceLock<Option<Engines>>,
}

/// Both engines over one NFA (shared, not copied).
#[derive(Debug)]
struct Engines {
    backtrack: BoundedBacktracker,
    pikevm: PikeVM,
}

/// Searches after which a regex gets its prefilter. Where every match starts with one of
/// a regex's prefixes and those are searched fast (`memchr`, `memmem`, a vectorised set,
/// or an automaton over a case-insensitive prefix's spellings), both engines skip
/// straight to where one occurs instead of trying each byte of the line as a start:
/// measured on the benchmark log with 10,000 entries, 0.69 against 0.62 GB/s on one
/// thread once every regex has been met. Building a prefilter for every regex when it is
/// compiled cost that back on the first 128 MiB and 35 MB of peak memory; most regexes
/// a log meets are met a few times.
const HOT_USES: u32 = 32;

/// Search caches, reused across regexes (each use resets them for the regex at hand).
#[derive(Default)]
pub(crate) struct Scratch {
    backtrack: Option<backtrack::Cache>,
    pikevm: Option<pikevm::Cache>,
}

impl LineRegex {
    /// Compiles `hir`, refusing a program over `size_limit` bytes.
    pub fn new(hir: &Hir, size_limit: usize) -> Result<LineRegex, String> {
        // One compiler per thread, reused: a fresh one allocates and fills a table of
        // 10,000 entries (about 400 KB) the first time it compiles a Unicode class such
        // as `\s`, which was most of the cost of compiling thousands of regexes.
        thread_local! {
            static COMPILER: std::cell::RefCell<thompson::Compiler> =
                std::cell::RefCell::new(thompson::Compiler::new());
        }
        let prefixes = literal::Extractor::new()
            .kind(literal::ExtractKind::Prefix)
            .extract(hir);
        if let Some(literals) = exact_literals(hir, &prefixes, size_limit) {
            return Ok(LineRegex::Literals(literals));
        }
        let config = thompson::Config::new()
            .nfa_size_limit(Some(size_limit))
            .which_captures(WhichCaptures::Implicit);
        let nfa: NFA = COMPILER.with_borrow_mut(|compiler| {
            compiler
                .configure(config)
                .build_from_hir(hir)
                .map_err(|e| match e.size_limit() {
                    Some(limit) => format!(
                        "regex compiles to more than {limit} bytes; simplify its repetitions"
                    ),
                    None => e.to_string(),
                })
        })?;
        Ok(LineRegex::Automaton(Box::new(Automaton {
            plain: Engines::new(nfa, None)?,
            prefixes,
            uses: AtomicU32::new(0),
            hot: OnceLock::new(),
        })))
    }

    /// The regex that matches `literal` and nothing else, case-sensitively.
    pub fn literal(literal: &str) -> LineRegex {
        LineRegex::Literals(vec![
            memchr::memmem::Finder::new(literal.as_bytes()).into_owned(),
        ])
    }

    /// The leftmost-first match in `haystack`.
    pub fn find(&self, haystack: &[u8], scratch: &mut Scratch) -> Option<Range<usize>> {
        match self {
            LineRegex::Literals(literals) => literals
                .iter()
                .filter_map(|finder| {
                    let start = finder.find(haystack)?;
                    Some(start..start + finder.needle().len())
                })
                // The first of those that start leftmost: `min_by_key` keeps the first.
                .min_by_key(|m| m.start),
            LineRegex::Automaton(automaton) => automaton.find(haystack, scratch),
        }
    }
}

/// The string `pattern` matches, when it is one literal as written: characters that
/// mean themselves and punctuation escaped with `\` (`cublas handle failed \[E01008\]`),
/// and no flag, class, group, repetition, anchor or escape such as `\s`. The parser
/// would give the same literal (a test holds the two together); `None` otherwise.
pub(crate) fn plain_literal(pattern: &str) -> Option<String> {
    let mut literal = String::with_capacity(pattern.len());
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next()? {
                e if e.is_ascii_punctuation() && regex_syntax::is_meta_character(e) => {
                    literal.push(e);
                }
                _ => return None,
            },
            // Flags and groups, classes, repetitions, anchors, alternation, any
            // character. (`-`, `&`, `~`, `#` and spaces mean themselves outside a class
            // and without the `x` flag, which would need a `(`.)
            '.' | '+' | '*' | '?' | '(' | ')' | '|' | '[' | ']' | '{' | '}' | '^' | '$' => {
                return None;
            }
            '\n' | '\r' => return None,
            c => literal.push(c),
        }
    }
    (!literal.is_empty()).then_some(literal)
}

/// The literals that are exactly `hir`'s matches, most preferred first, when there are
/// a few: every one of its extracted `prefixes` exact, and no look-around such as `$` or `\b`, which
/// the extraction does not see (the test `regex-automata`'s meta engine makes before it
/// searches by literals alone, except that it first shrinks the set for speed, which
/// leaves `out of (memory|resources)` an inexact `out of `). A set whose automaton would
/// pass `size_limit` is left to the compiler, which refuses it as it would the regex.
fn exact_literals(
    hir: &Hir,
    prefixes: &literal::Seq,
    size_limit: usize,
) -> Option<Vec<memchr::memmem::Finder<'static>>> {
    if !hir.properties().look_set().is_empty() || !prefixes.is_exact() {
        return None;
    }
    let literals = prefixes.literals()?;
    let bytes: usize = literals.iter().map(|l| l.as_bytes().len()).sum();
    if literals.is_empty()
        || literals.len() > MAX_LITERALS
        || literals.iter().any(|l| l.is_empty())
        || !literals_fit(bytes, size_limit)
    {
        return None;
    }
    Some(
        literals
            .iter()
            .map(|l| memchr::memmem::Finder::new(l.as_bytes()).into_owned())
            .collect(),
    )
}

/// Whether literals of `bytes` bytes in all are searched for as literals: a regex of more
/// would be left to the compiler, which may refuse it as too big (an NFA has a state or
/// more per byte, each a few dozen bytes), as it would the same regex written otherwise.
pub(crate) fn literals_fit(bytes: usize, size_limit: usize) -> bool {
    bytes.saturating_mul(64) <= size_limit
}

/// Literals a line is searched for one by one, at most: a line is a few hundred bytes,
/// and a regex with more spellings than this is rare.
const MAX_LITERALS: usize = 8;

impl Automaton {
    /// The engines to search with: with a prefilter once the regex is hot.
    fn engines(&self) -> &Engines {
        if !self.prefixes.is_finite() {
            return &self.plain;
        }
        if let Some(hot) = self.hot.get() {
            return hot.as_ref().unwrap_or(&self.plain);
        }
        if self.uses.fetch_add(1, Ordering::Relaxed) < HOT_USES {
            return &self.plain;
        }
        self.hot
            .get_or_init(|| {
                let mut prefixes = self.prefixes.clone();
                // What `Prefilter::from_hir_prefix` does before building.
                prefixes.optimize_for_prefix_by_preference();
                let prefixes = prefixes.literals().filter(|l| !l.is_empty())?;
                let prefilter = Prefilter::new(MatchKind::LeftmostFirst, prefixes)
                    .filter(Prefilter::is_fast)?;
                Engines::new(self.plain.backtrack.get_nfa().clone(), Some(prefilter)).ok()
            })
            .as_ref()
            .unwrap_or(&self.plain)
    }

    /// The leftmost-first match in `haystack`.
    pub fn find(&self, haystack: &[u8], scratch: &mut Scratch) -> Option<Range<usize>> {
        let Engines { backtrack, pikevm } = self.engines();
        let input = Input::new(haystack);
        let found = if haystack.len() <= backtrack.max_haystack_len() {
            let cache = scratch
                .backtrack
                .get_or_insert_with(|| backtrack.create_cache());
            cache.reset(backtrack);
            // Only fails for a haystack longer than checked above.
            backtrack.try_find(cache, input).ok().flatten()
        } else {
            let cache = scratch.pikevm.get_or_insert_with(|| pikevm.create_cache());
            cache.reset(pikevm);
            pikevm.find(cache, input)
        };
        found.map(|m| m.range())
    }
}

impl Engines {
    fn new(nfa: NFA, prefilter: Option<Prefilter>) -> Result<Engines, String> {
        let backtrack = BoundedBacktracker::builder()
            .configure(backtrack::Config::new().prefilter(prefilter.clone()))
            .build_from_nfa(nfa.clone())
            .map_err(|e| e.to_string())?;
        let pikevm = PikeVM::builder()
            .configure(pikevm::Config::new().prefilter(prefilter))
            .build_from_nfa(nfa)
            .map_err(|e| e.to_string())?;
        Ok(Engines { backtrack, pikevm })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line_regex(pattern: &str) -> LineRegex {
        LineRegex::new(&regex_syntax::parse(pattern).unwrap(), 1 << 20).unwrap()
    }

    #[test]
    fn finds_what_the_regex_crate_finds() {
        let mut scratch = Scratch::default();
        let long = format!("{}CUDA error: out of memory", "x".repeat(1 << 20));
        for (pattern, haystack) in [
            (r"out of (memory|resources)", "CUDA error: out of memory"),
            (r"\d+ MiB", "tried to allocate 20 MiB (12 MiB free)"),
            (r"(?i)illegal memory", "an ILLEGAL Memory access"),
            (r"a+?", "baaa"),
            (r"nothing", "CUDA error: out of memory"),
            (r"CUDA error: (out of memory|.*)", long.as_str()),
            // Prefilters: one prefix, an optional one, a case-insensitive one (an
            // automaton over its spellings), and prefixes found only after a false start.
            (r"out of memory", "no memory here, then: out of memory"),
            (
                r"(?:CUDA error: )?out of memory",
                "RuntimeError: out of memory",
            ),
            (
                r"(?:CUDA error: )?out of memory",
                "CUDA error: CUDA error: out of memory",
            ),
            (
                r"(?i)cublas_status_[a-z_]+",
                "got CUBLAS_STATUS_EXECUTION_FAILED when",
            ),
            (
                r"(?i)(nccl|cudnn) error: \w+",
                "NCCL warn; cuDNN Error: bad",
            ),
            (
                r"Xid \(PCI:[0-9a-f:.]+\): (79|48),",
                "Xid (PCI:0000:3b:00): 13, Xid (PCI:0000:3b:00): 79, pid",
            ),
        ] {
            let want = regex::bytes::Regex::new(pattern)
                .unwrap()
                .find(haystack.as_bytes())
                .map(|m| m.range());
            // Cold (plain engines), then hot (with the prefilter, where there is one).
            let regex = line_regex(pattern);
            for search in 0..HOT_USES + 2 {
                assert_eq!(
                    regex.find(haystack.as_bytes(), &mut scratch),
                    want,
                    "{pattern}, search {search}"
                );
            }
        }
    }

    fn automaton(pattern: &str) -> Box<Automaton> {
        match line_regex(pattern) {
            LineRegex::Automaton(automaton) => automaton,
            LineRegex::Literals(_) => panic!("{pattern} was taken for literals"),
        }
    }

    #[test]
    fn a_hot_regex_gets_its_prefilter_only_where_one_is_fast() {
        let mut scratch = Scratch::default();
        let mut hot = |pattern: &str| {
            let regex = automaton(pattern);
            for _ in 0..=HOT_USES {
                regex.find(b"a line without it", &mut scratch);
            }
            regex.hot.get().map(Option::is_some)
        };
        assert_eq!(
            hot(r"(?:CUDA error: )?out of (memory|resources) \d+"),
            Some(true)
        );
        // No finite set of prefixes: nothing to build, nothing kept.
        assert_eq!(hot(r"\w+ error"), None);
        let cold = automaton(r"out of memory\b");
        cold.find(b"out of memory", &mut scratch);
        assert!(cold.hot.get().is_none());
    }

    #[test]
    fn only_a_regex_that_is_its_literals_is_searched_by_them() {
        let literals = |pattern: &str| matches!(line_regex(pattern), LineRegex::Literals(_));
        for pattern in [
            r"out of memory",
            r"cublas handle failed to initialize \[E01008\]",
            r"(?:CUDA error: )?out of memory",
            r"out of (memory|resources)",
            r"(?i)oom",
            r"CUDA error: [Oo]ut of memory",
        ] {
            assert!(literals(pattern), "{pattern}");
        }
        for pattern in [
            // Look-around the extraction does not see; a class; a repetition; a match
            // that may be empty.
            r"out of memory$",
            r"\bout of memory",
            r"\d+ MiB",
            r"memory\s+pool",
            r"CUDA error: (out of memory|.*)",
            r"(?:out of memory)?",
            // Too many spellings to list.
            r"(?i)illegal memory",
        ] {
            assert!(!literals(pattern), "{pattern}");
        }
        // Alternatives that begin alike, and a shorter one that is preferred: the
        // leftmost-first match, as the regex crate reports it.
        let mut scratch = Scratch::default();
        for (pattern, haystack) in [
            (
                r"(?:CUDA error: )?out of memory",
                "CUDA error: out of memory",
            ),
            (
                r"(?:CUDA error: )??out of memory",
                "CUDA error: out of memory",
            ),
            (r"out of (mem|memory)", "out of memory"),
            (r"out of (memory|mem)", "out of memory"),
            (r"(?i)OOM", "CUDA oom: Oom"),
            (r"memory|out of memory", "out of memory"),
            (r"[Ee]rror 7|rror 700", "CUDA error 700"),
        ] {
            let want = regex::bytes::Regex::new(pattern)
                .unwrap()
                .find(haystack.as_bytes())
                .map(|m| m.range());
            assert!(want.is_some(), "{pattern}");
            let regex = line_regex(pattern);
            assert!(matches!(regex, LineRegex::Literals(_)), "{pattern}");
            assert_eq!(
                regex.find(haystack.as_bytes(), &mut scratch),
                want,
                "{pattern}"
            );
        }
    }

    #[test]
    fn a_plain_literal_is_what_the_parser_reads() {
        let parsed = |p: &str| crate::matcher::parse_line_bound(p).ok();
        for (pattern, want) in [
            (
                r"cublas handle failed \[E01008\]",
                Some("cublas handle failed [E01008]"),
            ),
            (
                r"cuda-malloc & co #1 ~ 100%",
                Some("cuda-malloc & co #1 ~ 100%"),
            ),
            (r"out of memory\.", Some("out of memory.")),
            ("显存不足", Some("显存不足")),
            (r"out of memory\s", None),
            (r"a.b", None),
            (r"(?i)oom", None),
            (r"oom$", None),
            (r"x{2}", None),
            (r"\", None),
            ("", None),
        ] {
            assert_eq!(plain_literal(pattern).as_deref(), want, "{pattern}");
        }
        // Whatever it takes for a literal, the parser reads as that literal: random
        // patterns over an alphabet of metacharacters, escapes and plain characters.
        let alphabet: Vec<char> = r"ab -#&~%[](){}.*+?|^$\\sdE0:".chars().collect();
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut taken = 0;
        for _ in 0..20_000 {
            let len = 1 + (state >> 60) as usize % 8;
            let pattern: String = (0..len)
                .map(|_| {
                    state ^= state << 13;
                    state ^= state >> 7;
                    state ^= state << 17;
                    alphabet[(state % alphabet.len() as u64) as usize]
                })
                .collect();
            if let Some(literal) = plain_literal(&pattern) {
                taken += 1;
                assert_eq!(
                    parsed(&pattern),
                    Some(Hir::literal(literal.as_bytes())),
                    "{pattern:?}"
                );
            }
        }
        assert!(taken > 1000, "only {taken} plain literals drawn");
    }

    #[test]
    fn size_limit_is_an_error() {
        let hir = regex_syntax::parse(r"(a{1000}){1000}").unwrap();
        let err = LineRegex::new(&hir, 1 << 20).unwrap_err();
        assert!(err.contains("more than"), "{err}");
    }
}
