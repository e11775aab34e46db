//! Compiling a pattern set and scanning text with it.

use std::ops::Range;

use std::collections::HashMap;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use regex_syntax::ParserBuilder;

use crate::analyze::{self, LiteralSet};
use crate::gram_search::GramSearch;
use crate::line_regex::{LineRegex, Scratch};

/// Longest regex source accepted (bytes). Signatures are one line of a log.
pub const MAX_PATTERN_LEN: usize = 4096;
/// Compiled-program budget per regex: `(a{1000}){1000}` is refused, not built.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Besides the literal set that triggers a pattern, at most this many more are confirmed
/// in the line before its regex runs.
const MAX_CONFIRM_SETS: usize = 2;
/// Nesting budget: deeper than any real signature regex, shallow enough to be safe.
const NEST_LIMIT: u32 = 64;

/// One entry's way of being recognised: a regex and literal alternative spellings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pattern {
    /// The regex (Rust `regex` syntax), matched within one line.
    pub regex: String,
    /// Other spellings of the message, matched as plain text ignoring ASCII case.
    pub aliases: Vec<String>,
    /// A more general regex that matches wherever this one does: on a line where it
    /// does not match, this pattern's regex is not run. Patterns that differ in one
    /// detail (the number in `CUDA error 700`) share a gate, which runs once per line
    /// instead of once per pattern.
    pub gate: Option<String>,
}

impl Pattern {
    /// A pattern with a regex and no aliases.
    pub fn new(regex: impl Into<String>) -> Pattern {
        Pattern {
            regex: regex.into(),
            aliases: Vec::new(),
            gate: None,
        }
    }

    /// The same pattern with these aliases.
    pub fn with_aliases<S: Into<String>>(
        mut self,
        aliases: impl IntoIterator<Item = S>,
    ) -> Pattern {
        self.aliases = aliases.into_iter().map(Into::into).collect();
        self
    }

    /// The same pattern behind `gate` (see [`Pattern::gate`]).
    pub fn with_gate(mut self, gate: impl Into<String>) -> Pattern {
        self.gate = Some(gate.into());
        self
    }
}

/// How a match was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Via {
    /// The pattern's regex matched.
    Regex,
    /// The alias with this index (in [`Pattern::aliases`]) occurs in the line.
    Alias(usize),
}

/// One pattern found in one line.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Match {
    /// Index of the pattern, in the order given to [`Matcher::new`].
    pub pattern: usize,
    /// Byte range of the match in the text that was searched.
    pub span: Range<usize>,
    /// 0-based index of the line the match is on, counted in the text searched.
    pub line: usize,
    /// How it matched.
    pub via: Via,
    /// Characters the pattern spells out literally (the first ranking key).
    pub specificity: u32,
}

/// Numbers about a compiled matcher (for benchmarks and diagnostics).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// Patterns compiled.
    pub patterns: usize,
    /// Patterns whose regex runs only when its literals are in the line.
    pub prefiltered: usize,
    /// Patterns whose regex runs on every chunk (no usable literal).
    pub unfiltered: usize,
    /// Distinct literals in the prefilter (regex trigger literals and aliases).
    pub literals: usize,
    /// Patterns that must also find a second (or third) literal in the line.
    pub confirmed: usize,
    /// Patterns whose [`Analysis`] was given ([`Matcher::new_lazy_analysed`]) rather
    /// than made by parsing their regex.
    pub known_analyses: usize,
}

/// What a prefilter literal stands for.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// Pattern `p`'s regex may match here: run it on the line.
    Verify(usize),
    /// Pattern `p`'s alias `a` matched (aliases are plain text: no verification).
    Alias(usize, usize),
}

#[derive(Debug)]
struct Compiled {
    /// Line-bound, and built for searching one line (at once, or on first use).
    regex: LazyRegex,
    /// For a pattern without literals only: the same regex built for searching a whole
    /// chunk of log (lazy DFAs and all), since nothing narrows it down to lines.
    chunk_regex: Option<Regex>,
    specificity: u32,
    alias_specificity: Vec<u32>,
    /// Literal sets that must each also occur in the line (ASCII lower-cased), each
    /// literal's searcher built once here rather than at every line it is looked for in.
    confirm: Vec<Vec<memchr::memmem::Finder<'static>>>,
    /// Index in [`Matcher::gates`] of the regex that must match the line first.
    gate: Option<usize>,
}

/// A compiled set of patterns. Cheap to share between threads (`Sync`).
#[derive(Debug)]
pub struct Matcher {
    /// `None` for a pattern that does not compile (see [`Matcher::build`]).
    patterns: Vec<Option<Compiled>>,
    prefilter: Option<Prefilter>,
    /// For each prefilter literal, what a hit on it means.
    targets: Vec<Vec<Target>>,
    /// Patterns without a usable literal, and one `RegexSet` that runs them all at once.
    unfiltered: Vec<usize>,
    unfiltered_set: Option<RegexSet>,
    prefiltered: usize,
    /// The distinct gates of the patterns (see [`Pattern::gate`]), compiled on first use.
    gates: Vec<Gate>,
    known_analyses: usize,
}

impl Matcher {
    /// Compiles every pattern. Fails with every bad pattern's index and reason (syntax,
    /// too long, too big once compiled, matches the empty string); never panics and
    /// never allocates without bound.
    pub fn new(patterns: &[Pattern]) -> Result<Matcher, Vec<(usize, String)>> {
        Matcher::without_errors(Matcher::build(patterns))
    }

    /// The matcher, when no pattern was refused.
    #[allow(clippy::type_complexity)]
    fn without_errors(
        built: Result<(Matcher, Vec<(usize, String)>), Vec<(usize, String)>>,
    ) -> Result<Matcher, Vec<(usize, String)>> {
        let (matcher, errors) = built?;
        if errors.is_empty() {
            Ok(matcher)
        } else {
            Err(errors)
        }
    }

    /// Compiles every pattern that can be compiled, and returns the others' indices and
    /// reasons beside the matcher: a bad pattern never matches, the rest work. This is
    /// what the checker uses (it reports each bad regex and checks the others). Fails
    /// only when the patterns cannot be combined at all.
    #[allow(clippy::type_complexity)]
    pub fn build(
        patterns: &[Pattern],
    ) -> Result<(Matcher, Vec<(usize, String)>), Vec<(usize, String)>> {
        Matcher::build_with(patterns, false, AhoCorasickKind::DFA)
    }

    /// [`Matcher::build`] for matching short texts (an entry's signature, a pasted
    /// message) rather than logs: the same answers and errors; when the literals need
    /// an Aho-Corasick automaton (one is under three bytes), a kind that takes a
    /// fraction of the time to build and more per byte to run. `errata check` matches
    /// every signature against every regex with it.
    #[allow(clippy::type_complexity)]
    pub fn build_for_short_texts(
        patterns: &[Pattern],
    ) -> Result<(Matcher, Vec<(usize, String)>), Vec<(usize, String)>> {
        Matcher::build_with(patterns, false, AhoCorasickKind::ContiguousNFA)
    }

    /// [`Matcher::new`] for patterns that were checked when they were written (a
    /// bundle's): each regex is parsed and analysed now, and compiled the first time a
    /// line needs it, so that opening 10,000 patterns does not compile 10,000 regexes. A
    /// regex that does not parse is still an error here; one that only compiling would
    /// refuse (too big, or matching the empty string, which `errata check` reports)
    /// never matches instead.
    pub fn new_lazy(patterns: &[Pattern]) -> Result<Matcher, Vec<(usize, String)>> {
        Matcher::new_lazy_analysed(patterns, Vec::new())
    }

    /// [`Matcher::new_lazy`] with the [`Analysis`] of some patterns already known
    /// (`analyses[i]` for pattern `i`; a missing or `None` one is analysed now): a
    /// bundle carries its patterns' analyses, so that opening it parses none of its
    /// regexes. An analysis is trusted as given; it must be what [`Analysis::of`] says
    /// of the same regex, under the same [`ANALYSIS_VERSION`], or lines that match the
    /// regex may be missed.
    pub fn new_lazy_analysed(
        patterns: &[Pattern],
        analyses: Vec<Option<Analysis>>,
    ) -> Result<Matcher, Vec<(usize, String)>> {
        Matcher::without_errors(Matcher::build_with_analyses(
            patterns,
            true,
            AhoCorasickKind::DFA,
            analyses,
        ))
    }

    #[allow(clippy::type_complexity)]
    fn build_with(
        patterns: &[Pattern],
        lazy: bool,
        prefilter_kind: AhoCorasickKind,
    ) -> Result<(Matcher, Vec<(usize, String)>), Vec<(usize, String)>> {
        Matcher::build_with_analyses(patterns, lazy, prefilter_kind, Vec::new())
    }

    #[allow(clippy::type_complexity)]
    fn build_with_analyses(
        patterns: &[Pattern],
        lazy: bool,
        prefilter_kind: AhoCorasickKind,
        analyses: Vec<Option<Analysis>>,
    ) -> Result<(Matcher, Vec<(usize, String)>), Vec<(usize, String)>> {
        let mut errors = Vec::new();
        let mut analysed = Vec::with_capacity(patterns.len());
        let (results, known_analyses) = compile_all(patterns, lazy, analyses);
        for (i, result) in results.into_iter().enumerate() {
            match result {
                Ok(c) => analysed.push(Some(c)),
                Err(e) => {
                    errors.push((i, e));
                    analysed.push(None);
                }
            }
        }

        // A set triggers its pattern wherever one of its strings occurs, so the set whose
        // strings the fewest other patterns share is the most selective trigger; the
        // next ones are confirmed in the line before the regex runs.
        let mut shared: HashMap<Vec<u8>, usize> = HashMap::new();
        for c in analysed.iter().flatten() {
            let mut mine: Vec<&Vec<u8>> = c.sets.iter().flatten().collect();
            mine.sort_unstable();
            mine.dedup();
            for lit in mine {
                *shared.entry(lit.clone()).or_default() += 1;
            }
        }
        // How widely a string is shared stands in for how common it is in log text, except
        // for a short number: one pattern's own (`500` in `CUDA error 500`), yet log
        // lines are full of them (timestamps, ports, step counts), so it goes last.
        let cost = |set: &LiteralSet| {
            let widest = set.iter().map(|l| shared.get(l).copied().unwrap_or(0));
            let shortest = set.iter().map(Vec::len).min().unwrap_or(0);
            (
                set.iter().any(|l| is_short_number(l)),
                widest.max().unwrap_or(0),
                std::cmp::Reverse(shortest),
                set.len(),
            )
        };

        let mut compiled = Vec::with_capacity(patterns.len());
        let mut gates: Vec<Gate> = Vec::new();
        let mut gate_index: HashMap<&str, usize> = HashMap::new();
        let mut literals: Vec<(Vec<u8>, Target)> = Vec::new();
        let mut unfiltered = Vec::new();
        let mut unfiltered_src = Vec::new();
        for (i, (pattern, analysed)) in patterns.iter().zip(analysed).enumerate() {
            let Some(Analysed {
                regex,
                hir,
                specificity,
                mut sets,
            }) = analysed
            else {
                compiled.push(None);
                continue;
            };
            sets.sort_by_cached_key(|set| cost(set));
            let mut sets = sets.into_iter();
            let mut chunk_regex = None;
            match sets.next() {
                Some(trigger) => {
                    literals.extend(trigger.into_iter().map(|l| (l, Target::Verify(i))));
                }
                None => {
                    let Some(hir) = hir.as_ref() else {
                        errors.push((i, "a pattern without literals lost its syntax tree".into()));
                        compiled.push(None);
                        continue;
                    };
                    let source = hir.to_string();
                    match RegexBuilder::new(&source)
                        .size_limit(REGEX_SIZE_LIMIT)
                        .nest_limit(NEST_LIMIT * 2)
                        .build()
                    {
                        Ok(re) => chunk_regex = Some(re),
                        Err(e) => {
                            errors.push((i, e.to_string()));
                            compiled.push(None);
                            continue;
                        }
                    }
                    unfiltered.push(i);
                    unfiltered_src.push(source);
                }
            }
            let confirm: Vec<Vec<memchr::memmem::Finder<'static>>> = sets
                .take(MAX_CONFIRM_SETS)
                .map(|set| {
                    set.iter()
                        .map(|lit| memchr::memmem::Finder::new(lit).into_owned())
                        .collect()
                })
                .collect();
            let mut alias_specificity = Vec::with_capacity(pattern.aliases.len());
            for (a, alias) in pattern.aliases.iter().enumerate() {
                // An alias widens what finds the entry; it never makes the entry more
                // specific than its regex says it is.
                alias_specificity.push((alias.chars().count() as u32).min(specificity));
                // An alias is one line of text; an empty one would match everything.
                if !alias.trim().is_empty() && !alias.contains('\n') {
                    literals.push((alias.as_bytes().to_ascii_lowercase(), Target::Alias(i, a)));
                }
            }
            let gate = match pattern.gate.as_deref() {
                None => None,
                Some(source) => match gate_index.get(source) {
                    Some(&g) => Some(g),
                    None => {
                        // Checked now like every regex; compiled the first time a line
                        // needs it.
                        if let Err(e) = check_source(source).and_then(|()| parse_line_bound(source))
                        {
                            errors.push((i, format!("its gate: {e}")));
                            compiled.push(None);
                            continue;
                        }
                        gates.push(Gate::new(source));
                        gate_index.insert(source, gates.len() - 1);
                        Some(gates.len() - 1)
                    }
                },
            };
            compiled.push(Some(Compiled {
                regex: LazyRegex::new(regex, &pattern.regex),
                chunk_regex,
                specificity,
                alias_specificity,
                confirm,
                gate,
            }));
        }
        let prefiltered = compiled.iter().flatten().count() - unfiltered.len();
        let unfiltered_set = if unfiltered_src.is_empty() {
            None
        } else {
            let set = RegexSetBuilder::new(&unfiltered_src)
                .size_limit(
                    REGEX_SIZE_LIMIT
                        .saturating_mul(unfiltered_src.len())
                        .min(256 << 20),
                )
                .dfa_size_limit(8 << 20)
                .build()
                .map_err(|e| {
                    vec![(
                        unfiltered[0],
                        format!("the patterns without literals do not compile together: {e}"),
                    )]
                })?;
            Some(set)
        };
        // One prefilter literal may stand for several targets.
        literals.sort_by(|a, b| a.0.cmp(&b.0));
        let mut keys: Vec<Vec<u8>> = Vec::new();
        let mut targets: Vec<Vec<Target>> = Vec::new();
        for (lit, target) in literals {
            if keys.last() != Some(&lit) {
                keys.push(lit);
                targets.push(Vec::new());
            }
            if let Some(t) = targets.last_mut() {
                t.push(target);
            }
        }
        let prefilter = if keys.is_empty() {
            None
        } else if let Some(grams) = GramSearch::new(&keys) {
            Some(Prefilter::Grams(Box::new(grams)))
        } else {
            let ac = AhoCorasickBuilder::new()
                .match_kind(MatchKind::Standard)
                .ascii_case_insensitive(true)
                .kind(Some(prefilter_kind))
                .build(&keys)
                .map_err(|e| vec![(0, format!("the prefilter does not build: {e}"))])?;
            Some(Prefilter::Automaton(ac))
        };
        let matcher = Matcher {
            patterns: compiled,
            prefilter,
            targets,
            unfiltered,
            unfiltered_set,
            prefiltered,
            gates,
            known_analyses,
        };
        Ok((matcher, errors))
    }

    /// Number of patterns.
    pub fn len(&self) -> usize {
        self.patterns.len()
    }

    /// True when there are no patterns.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The specificity of pattern `i`'s regex (see [`Match::specificity`]); `None` for
    /// a pattern that did not compile.
    pub fn specificity(&self, i: usize) -> Option<u32> {
        self.patterns.get(i)?.as_ref().map(|p| p.specificity)
    }

    /// Whether pattern `i`'s regex (alone, line-bound, without its aliases) matches
    /// somewhere in `text`. `false` for a pattern that did not compile.
    pub fn is_match(&self, i: usize, text: &str) -> bool {
        self.patterns
            .get(i)
            .and_then(Option::as_ref)
            .is_some_and(|p| {
                p.regex
                    .find(text.as_bytes(), &mut Scratch::default())
                    .is_some()
            })
    }

    /// Numbers about this matcher.
    pub fn stats(&self) -> Stats {
        Stats {
            patterns: self.patterns.len(),
            prefiltered: self.prefiltered,
            unfiltered: self.unfiltered.len(),
            literals: self.targets.len(),
            confirmed: self
                .patterns
                .iter()
                .flatten()
                .filter(|p| !p.confirm.is_empty())
                .count(),
            known_analyses: self.known_analyses,
        }
    }

    /// Every pattern that matches somewhere in `text`, once each (its first match),
    /// most specific first. This is the question "which entries does this message
    /// name?", and the checker's `regex-overlap` question.
    pub fn matches(&self, text: &str) -> Vec<Match> {
        let mut found: Vec<Match> = Vec::new();
        self.scan(text.as_bytes(), |m| found.push(m.clone()));
        found.sort_by_key(|m| (m.pattern, m.span.start));
        found.dedup_by_key(|m| m.pattern);
        found.sort_by(rank);
        found
    }

    /// Scans `text` line by line (a match never crosses a `\n`) and calls `emit` for
    /// every pattern found on every line: lines in order, and within a line the most
    /// specific match first. A pattern is reported at most once per line.
    ///
    /// `text` may be a whole chunk of a log: the prefilter and the pattern-less
    /// `RegexSet` run over the chunk once, and regexes run only on lines where they can
    /// match. Invalid UTF-8 is searched as bytes.
    pub fn scan(&self, text: &[u8], emit: impl FnMut(&Match)) {
        self.scan_inner(text, emit);
    }

    /// [`Matcher::scan`], returning the number of `\n`s in `text`: the scan walks the
    /// lines from hit to hit anyway, so only the lines after the last hit are counted
    /// apart (where hits are dense, a second pass over the whole chunk cost a tenth of
    /// a scan).
    pub fn scan_counting_lines(&self, text: &[u8], emit: impl FnMut(&Match)) -> u64 {
        let (counted, end) = self.scan_inner(text, emit);
        counted + memchr::memchr_iter(b'\n', &text[end..]).count() as u64
    }

    /// Scans, returning how many `\n`s lie before offset `end` of `text` (the end of
    /// the last line with hits, or 0).
    fn scan_inner(&self, text: &[u8], emit: impl FnMut(&Match)) -> (u64, usize) {
        // The hits of a 1 MiB chunk of a busy log run to megabytes: a fresh vector at
        // every chunk had the kernel zero new pages for each. Each thread keeps its own
        // (taken out while in use, so a scan inside `emit` gets another).
        thread_local! {
            static HITS: std::cell::Cell<Vec<(usize, Found)>> = const { std::cell::Cell::new(Vec::new()) };
        }
        // Put back empty below, so it is empty here.
        let mut hits = HITS.take();
        let counted = self.scan_with(text, &mut hits, emit);
        hits.clear();
        HITS.set(hits);
        counted
    }

    fn scan_with(
        &self,
        text: &[u8],
        hits: &mut Vec<(usize, Found)>,
        mut emit: impl FnMut(&Match),
    ) -> (u64, usize) {
        if let Some(prefilter) = &self.prefilter {
            // One hit per occurrence of a literal; the patterns it stands for are read
            // per line (a literal such as `cuda` stands for dozens).
            prefilter.for_each(text, |literal, start, end| {
                hits.push((
                    start,
                    Found {
                        source: Source::Literal(literal),
                        span: start..end,
                    },
                ));
            });
        }
        if let Some(set) = &self.unfiltered_set {
            for k in set.matches(text).iter() {
                let p = self.unfiltered[k];
                let Some(re) = self.patterns[p]
                    .as_ref()
                    .and_then(|c| c.chunk_regex.as_ref())
                else {
                    continue;
                };
                // Regexes are line-bound, so each match lies in one line.
                for m in re.find_iter(text) {
                    hits.push((
                        m.start(),
                        Found {
                            source: Source::Target(Target::Verify(p)),
                            span: m.start()..m.end(),
                        },
                    ));
                }
            }
        }
        if hits.is_empty() {
            return (0, 0);
        }
        // Unstable (no scratch buffer the size of the hits at every chunk), and still one
        // order: distinct hits differ in start, source or end.
        hits.sort_unstable_by_key(|(start, hit)| (*start, hit.source.key(), hit.span.end));

        let mut lines = LineCounter::new(text);
        let mut found: Vec<Match> = Vec::new();
        // Search caches live as long as the scan: a backtracker's cache is kilobytes.
        let mut scratch = Scratch::default();
        let mut memo = LineMemo::default();
        // The candidates of one line, kept across lines so that a line with hits costs
        // no allocation.
        let mut candidates = Vec::new();
        let mut i = 0;
        while i < hits.len() {
            let (line, range) = lines.line_of(hits[i].0);
            let mut j = i;
            // A hit at the `\n` itself belongs to this line (see `line_of`), so the group
            // is never empty.
            while j < hits.len() && hits[j].0 <= range.end {
                j += 1;
            }
            self.resolve_line(
                text,
                (line, range),
                &hits[i..j],
                (&mut scratch, &mut memo, &mut candidates),
                &mut found,
            );
            found.sort_by(rank);
            for m in &found {
                emit(m);
            }
            found.clear();
            i = j;
        }
        lines.counted()
    }

    /// Turns the hits of one line into at most one match per pattern.
    fn resolve_line(
        &self,
        text: &[u8],
        (line, range): (usize, Range<usize>),
        hits: &[(usize, Found)],
        (scratch, memo, candidates): (&mut Scratch, &mut LineMemo, &mut Vec<(usize, Hit)>),
        out: &mut Vec<Match>,
    ) {
        memo.start_line();
        candidates.clear();
        let line_text = &text[range.clone()];
        for (_, found) in hits {
            let targets = match &found.source {
                Source::Literal(k) => self.targets[*k].as_slice(),
                Source::Target(t) => std::slice::from_ref(t),
            };
            for &target in targets {
                // A regex behind a gate this line does not pass cannot match it: left out
                // here, before the sort. A line naming `cuda` twice (`CUDA error: …`)
                // sets off the 150 bare-number patterns behind one gate for each, and
                // sorting those candidates only to skip them was a tenth of a scan with
                // this repository's knowledge base.
                if let Target::Verify(p) = target
                    && let Some(Some(Compiled { gate: Some(g), .. })) = self.patterns.get(p)
                    && !memo.gate_passes(*g, &self.gates, line_text)
                {
                    continue;
                }
                candidates.push((
                    target_pattern(target),
                    Hit {
                        target,
                        span: found.span.clone(),
                    },
                ));
            }
        }
        // Each hit's targets are in this order already (a literal's targets are listed by
        // pattern), so the candidates are a few sorted runs, which a stable sort merges.
        candidates.sort_by_key(|(p, h)| (*p, target_key(h.target), h.span.start, h.span.end));
        let mut k = 0;
        while k < candidates.len() {
            let p = candidates[k].0;
            let mut end = k;
            while end < candidates.len() && candidates[end].0 == p {
                end += 1;
            }
            let group = &candidates[k..end];
            k = end;
            let Some(compiled) = &self.patterns[p] else {
                continue;
            };
            // The regex first (it gives the real span), once its other required literals
            // are confirmed in the line; an alias if the regex does not match. Its gate
            // was passed already: a regex candidate behind a gate the line fails was left
            // out above, so a group holds one only where the gate let the line through.
            let regex_match = (group
                .iter()
                .any(|(_, h)| matches!(h.target, Target::Verify(_)))
                && compiled
                    .confirm
                    .iter()
                    .all(|set| memo.contains_any(line_text, set)))
            .then(|| {
                compiled
                    .regex
                    .find(line_text, scratch)
                    .map(|m| range.start + m.start..range.start + m.end)
            });
            let best_alias = group
                .iter()
                .filter_map(|(_, h)| match h.target {
                    Target::Alias(_, a) => Some((compiled.alias_specificity[a], h.span.clone(), a)),
                    Target::Verify(_) => None,
                })
                .max_by_key(|(s, span, _)| (*s, std::cmp::Reverse(span.start)));
            let by_regex = regex_match.flatten().map(|span| Match {
                pattern: p,
                span,
                line,
                via: Via::Regex,
                specificity: compiled.specificity,
            });
            let by_alias = best_alias.map(|(specificity, span, a)| Match {
                pattern: p,
                span,
                line,
                via: Via::Alias(a),
                specificity,
            });
            let chosen = match (by_regex, by_alias) {
                (Some(r), Some(a)) => Some(if a.specificity > r.specificity { a } else { r }),
                (r, a) => r.or(a),
            };
            out.extend(chosen);
        }
    }
}

/// Whether `literal` is a number of at most four digits, decimal or hexadecimal (`500`,
/// `1f4`): a string that occurs on most lines of a log.
fn is_short_number(literal: &[u8]) -> bool {
    literal.len() <= 4
        && literal.iter().any(u8::is_ascii_digit)
        && literal.iter().all(u8::is_ascii_hexdigit)
}

/// Finds every occurrence of the prefilter's literals (overlapping, ignoring ASCII case).
#[derive(Debug)]
enum Prefilter {
    /// By hashed four-byte windows: several times faster over log text.
    Grams(Box<GramSearch>),
    /// For a literal set with a literal too short for grams.
    Automaton(AhoCorasick),
}

impl Prefilter {
    fn for_each(&self, text: &[u8], mut found: impl FnMut(usize, usize, usize)) {
        match self {
            Prefilter::Grams(grams) => grams.for_each(text, found),
            Prefilter::Automaton(ac) => {
                for m in ac.find_overlapping_iter(text) {
                    found(m.pattern().as_usize(), m.start(), m.end());
                }
            }
        }
    }
}

/// Something found in a chunk, before it is read as the patterns it stands for.
#[derive(Debug, Clone)]
struct Found {
    source: Source,
    span: Range<usize>,
}

/// What a [`Found`] is: a prefilter literal (standing for each of its targets) or one
/// target (a pattern without literals, found by the chunk's `RegexSet`).
#[derive(Debug, Clone, Copy)]
enum Source {
    Literal(usize),
    Target(Target),
}

impl Source {
    fn key(self) -> (usize, usize, usize) {
        match self {
            Source::Literal(k) => (0, k, 0),
            Source::Target(t) => {
                let (p, a) = target_key(t);
                (1, p, a)
            }
        }
    }
}

/// One pattern (or alias) that may match at a span of a line.
#[derive(Debug, Clone)]
struct Hit {
    target: Target,
    span: Range<usize>,
}

fn target_pattern(t: Target) -> usize {
    match t {
        Target::Verify(p) | Target::Alias(p, _) => p,
    }
}

fn target_key(t: Target) -> (usize, usize) {
    match t {
        Target::Verify(p) => (p, 0),
        Target::Alias(p, a) => (p, a + 1),
    }
}

/// The ranking, most specific first: more literal characters; then the longer match;
/// then the earlier match; then the pattern given first.
fn rank(a: &Match, b: &Match) -> std::cmp::Ordering {
    b.specificity
        .cmp(&a.specificity)
        .then_with(|| b.span.len().cmp(&a.span.len()))
        .then_with(|| a.span.start.cmp(&b.span.start))
        .then_with(|| a.pattern.cmp(&b.pattern))
}

/// What one regex compiles to, before the prefilter is planned.
struct Analysed {
    /// `None` when compiling is left to first use ([`Matcher::new_lazy`]).
    regex: Option<LineRegex>,
    /// The line-bound syntax tree of a pattern without literals (compiled again for
    /// whole chunks); `None` for the others, whose trees are not kept: 10,000 of them
    /// were tens of megabytes for the kernel to zero at every start.
    hir: Option<regex_syntax::hir::Hir>,
    specificity: u32,
    sets: Vec<LiteralSet>,
}

/// A pattern's line regex, compiled when it is built or on first use. Compiling is
/// most of the cost of a matcher over many patterns, and a log scan uses the regexes of
/// the few patterns whose literals occur in it; a reader of a checked bundle need not
/// pay for the rest at every start.
struct LazyRegex {
    /// The regex's source, parsed again and compiled on first use (a source is a
    /// fraction of its syntax tree's size).
    source: Option<Box<str>>,
    /// `Some(None)`: the regex turned out too big, or to match the empty string, and
    /// never matches.
    cell: std::sync::OnceLock<Option<LineRegex>>,
}

impl LazyRegex {
    fn new(regex: Option<LineRegex>, source: &str) -> LazyRegex {
        match regex {
            Some(regex) => LazyRegex {
                source: None,
                cell: std::sync::OnceLock::from(Some(regex)),
            },
            None => LazyRegex {
                source: Some(source.into()),
                cell: std::sync::OnceLock::new(),
            },
        }
    }

    fn find(&self, haystack: &[u8], scratch: &mut Scratch) -> Option<Range<usize>> {
        self.regex()?.find(haystack, scratch)
    }

    /// The compiled regex, compiled now if it was not yet; `None` for one that does not
    /// compile (too big, or matching the empty string).
    fn regex(&self) -> Option<&LineRegex> {
        self.cell
            .get_or_init(|| {
                let source = self.source.as_deref()?;
                // A regex that is one literal as written needs no parsing: a quarter of
                // the regexes a big knowledge base meets in a log, each parsed on first
                // use.
                if let Some(literal) = crate::line_regex::plain_literal(source)
                    .filter(|l| crate::line_regex::literals_fit(l.len(), REGEX_SIZE_LIMIT))
                {
                    return Some(LineRegex::literal(&literal));
                }
                let hir = parse_line_bound(source).ok()?;
                let regex = LineRegex::new(&hir, REGEX_SIZE_LIMIT).ok()?;
                // What `compile` refuses, a lazy matcher never matches.
                regex
                    .find(b"", &mut Scratch::default())
                    .is_none()
                    .then_some(regex)
            })
            .as_ref()
    }
}

impl std::fmt::Debug for LazyRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyRegex")
            .field("compiled", &self.cell.get().is_some())
            .finish()
    }
}

/// A gate (see [`Pattern::gate`]), compiled on first use by the `regex` crate's own
/// engines rather than as a [`LineRegex`]. A gate runs on every line that names its
/// family (`cuda`, `nccl`, …), far more often than any one pattern's regex, and a handful
/// of them exist: a lazy DFA per gate is worth its few kilobytes, where the backtracker
/// tried the gate from every position of each such line (a third of a scan's time with
/// this repository's knowledge base, measured).
struct Gate {
    source: Box<str>,
    /// `Some(None)`: the gate does not compile, and stops nothing.
    cell: std::sync::OnceLock<Option<regex_automata::meta::Regex>>,
}

impl Gate {
    fn new(source: &str) -> Gate {
        Gate {
            source: source.into(),
            cell: std::sync::OnceLock::new(),
        }
    }

    /// Whether the gate lets `line` through: it matches somewhere in it, or it does not
    /// compile (a gate only ever saves work).
    fn passes(&self, line: &[u8]) -> bool {
        self.cell
            .get_or_init(|| {
                // Parsed as every pattern is, so it means what it would as a LineRegex.
                let hir = parse_line_bound(&self.source).ok()?;
                regex_automata::meta::Regex::builder()
                    .configure(
                        regex_automata::meta::Config::new()
                            .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
                            .utf8_empty(false),
                    )
                    .build_from_hir(&hir)
                    .ok()
            })
            .as_ref()
            .is_none_or(|gate| gate.is_match(line))
    }
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("compiled", &self.cell.get().is_some())
            .finish()
    }
}

/// [`compile`] for every pattern, in order, on all cores (10,000 regexes take a quarter
/// of a second on one); `lazy`: parsed and analysed, not compiled.
fn compile_all(
    patterns: &[Pattern],
    lazy: bool,
    mut analyses: Vec<Option<Analysis>>,
) -> (Vec<Result<Analysed, String>>, usize) {
    analyses.resize_with(patterns.len(), || None);
    // A known analysis stands for parsing the regex; the rest are analysed, on as many
    // threads as there are cores when there are many.
    let mut out: Vec<Option<Result<Analysed, String>>> = analyses
        .into_iter()
        .map(|a| match a {
            Some(Analysis { specificity, sets }) if lazy && !sets.is_empty() => {
                Some(Ok(Analysed {
                    regex: None,
                    hir: None,
                    specificity,
                    sets,
                }))
            }
            _ => None,
        })
        .collect();
    let todo: Vec<usize> = (0..patterns.len()).filter(|&i| out[i].is_none()).collect();
    let known = patterns.len() - todo.len();
    for (i, result) in todo.iter().zip(compile_each(patterns, &todo, lazy)) {
        out[*i] = Some(result);
    }
    let results = out
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("the pattern was not analysed".into())))
        .collect();
    (results, known)
}

/// [`compile`] of `patterns[i]` for each `i` of `which`, in that order.
fn compile_each(
    patterns: &[Pattern],
    which: &[usize],
    lazy: bool,
) -> Vec<Result<Analysed, String>> {
    on_every_core(which, "the regex compiler panicked", |&i| {
        compile(&patterns[i].regex, lazy)
    })
}

/// `f` of each item, in order, on as many threads as there are cores when there are
/// many items. A panic in a worker is a bug in the regex engine: each of its items gets
/// `panicked` as its error rather than the caller being aborted.
fn on_every_core<T: Sync, R: Send>(
    items: &[T],
    panicked: &str,
    f: impl Fn(&T) -> Result<R, String> + Sync,
) -> Vec<Result<R, String>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = items.len().div_ceil(threads).max(256);
    if items.len() <= chunk {
        return items.iter().map(&f).collect();
    }
    let f = &f;
    std::thread::scope(|scope| {
        let workers: Vec<_> = items
            .chunks(chunk)
            .map(|part| {
                let worker = scope.spawn(move || part.iter().map(f).collect::<Vec<_>>());
                (part.len(), worker)
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|(n, worker)| {
                worker
                    .join()
                    .unwrap_or_else(|_| (0..n).map(|_| Err(panicked.to_string())).collect())
            })
            .collect()
    })
}

/// The version of [`Analysis::of`]: it changes whenever the analysis could say something
/// else of the same regex, so that analyses stored by another version are not trusted.
pub const ANALYSIS_VERSION: u32 = 1;

/// What the matcher learns from a regex before compiling it: its specificity (the
/// ranking key) and its required literal sets (every match contains one string of each
/// set), the strings that decide which lines the regex runs on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    /// Characters every match spells out literally.
    pub specificity: u32,
    /// The required literal sets, as the matcher looks for them (lower-cased where the
    /// regex is case-insensitive); empty when the regex has none and runs on every line.
    pub sets: Vec<Vec<Vec<u8>>>,
}

impl Analysis {
    /// Parses and analyses `regex` as a pattern's regex is (line-bound, with the same
    /// limits); an error is what [`Matcher::new`] would report for it.
    pub fn of(regex: &str) -> Result<Analysis, String> {
        analysed_tree(regex).map(|(_, analysis)| analysis)
    }

    /// [`Analysis::of`] each regex, in order, on every core.
    pub fn of_all(regexes: &[&str]) -> Vec<Result<Analysis, String>> {
        on_every_core(regexes, "the regex parser panicked", |r| Analysis::of(r))
    }
}

/// A regex's line-bound syntax tree and its [`Analysis`], after the checks on its source.
fn analysed_tree(regex: &str) -> Result<(regex_syntax::hir::Hir, Analysis), String> {
    check_source(regex)?;
    let hir = parse_line_bound(regex)?;
    let analysis = Analysis {
        specificity: analyze::specificity(&hir),
        sets: analyze::required_literal_sets(&hir),
    };
    Ok((hir, analysis))
}

/// Parses, checks and compiles one regex (`lazy`: parses and checks it, leaving the
/// compiling to first use).
fn compile(pattern: &str, lazy: bool) -> Result<Analysed, String> {
    let (hir, Analysis { specificity, sets }) = analysed_tree(pattern)?;
    // A pattern without literals runs on every chunk of a log (so it is compiled now
    // either way, and refused now if it matches the empty string).
    let regex = if lazy && !sets.is_empty() {
        None
    } else {
        let regex = LineRegex::new(&hir, REGEX_SIZE_LIMIT)?;
        if regex.find(b"", &mut Scratch::default()).is_some() {
            return Err("regex matches the empty string (it would match every line)".into());
        }
        Some(regex)
    };
    Ok(Analysed {
        regex,
        hir: sets.is_empty().then_some(hir),
        specificity,
        sets,
    })
}

/// The checks on a regex's source before it is parsed: not too long, not empty.
fn check_source(pattern: &str) -> Result<(), String> {
    if pattern.len() > MAX_PATTERN_LEN {
        return Err(format!(
            "regex is {} bytes long; the limit is {MAX_PATTERN_LEN}",
            pattern.len()
        ));
    }
    if pattern.is_empty() {
        return Err("regex is empty (it would match every line)".into());
    }
    Ok(())
}

/// A regex's syntax tree, parsed the way every pattern is (multi-line, CRLF-aware,
/// nesting-limited) and rewritten so that no match crosses a line.
pub(crate) fn parse_line_bound(pattern: &str) -> Result<regex_syntax::hir::Hir, String> {
    let hir = ParserBuilder::new()
        .nest_limit(NEST_LIMIT)
        .multi_line(true)
        .crlf(true)
        .build()
        .parse(pattern)
        .map_err(|e| e.to_string())?;
    Ok(analyze::line_bound(hir))
}

/// What the patterns of one line share, worked out once per line: the line ASCII
/// lower-cased on first use, for confirming required literals (which are stored
/// lower-cased, as the ASCII-case-insensitive prefilter sees them), and the gates already
/// run on it. One memo serves a whole scan; [`LineMemo::start_line`] resets it.
#[derive(Default)]
struct LineMemo {
    text: Vec<u8>,
    ready: bool,
    /// Gates already run on this line, and whether each matched (see [`Pattern::gate`]).
    gates: Vec<(usize, bool)>,
}

impl LineMemo {
    /// Forgets the previous line.
    fn start_line(&mut self) {
        self.ready = false;
        self.gates.clear();
    }

    /// Whether gate `g` matches this line, running it at most once per line.
    fn gate_passes(&mut self, g: usize, gates: &[Gate], line: &[u8]) -> bool {
        if let Some(&(_, passes)) = self.gates.iter().find(|(k, _)| *k == g) {
            return passes;
        }
        // A gate that does not compile stops nothing: it only ever saves work.
        let passes = gates.get(g).is_none_or(|gate| gate.passes(line));
        self.gates.push((g, passes));
        passes
    }

    fn contains_any(&mut self, line: &[u8], set: &[memchr::memmem::Finder<'static>]) -> bool {
        if !self.ready {
            self.text.clear();
            self.text.extend(line.iter().map(u8::to_ascii_lowercase));
            self.ready = true;
        }
        set.iter().any(|lit| lit.find(&self.text).is_some())
    }
}

/// Maps byte offsets to lines, walking forward only (offsets come in order).
struct LineCounter<'a> {
    text: &'a [u8],
    /// The current line: its index, start, and end (the offset of its `\n`, or the
    /// text's length).
    line: usize,
    start: usize,
    end: usize,
}

impl<'a> LineCounter<'a> {
    fn new(text: &'a [u8]) -> Self {
        LineCounter {
            text,
            line: 0,
            start: 0,
            end: find_newline(text, 0),
        }
    }

    /// The line containing `offset` (never before the previous offset asked): its index
    /// and byte range without the `\n`. An offset at a `\n` belongs to the line it ends.
    fn line_of(&mut self, offset: usize) -> (usize, Range<usize>) {
        if offset > self.end {
            let skipped = &self.text[self.end..offset];
            // Lines between hits are never looked at one by one.
            self.line += memchr::memchr_iter(b'\n', skipped).count();
            self.start = self.end + memchr::memrchr(b'\n', skipped).map_or(0, |i| i + 1);
            self.end = find_newline(self.text, offset);
        }
        (self.line, self.start..self.end)
    }

    /// The `\n`s before the end of the current line, and that end.
    fn counted(&self) -> (u64, usize) {
        (self.line as u64, self.end)
    }
}

/// Offset of the first `\n` at or after `from`, or the text's length.
fn find_newline(text: &[u8], from: usize) -> usize {
    memchr::memchr(b'\n', &text[from..]).map_or(text.len(), |i| from + i)
}
