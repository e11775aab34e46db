//! Compiling a pattern set and scanning text with it.

use std::ops::Range;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::bytes::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use regex_syntax::ParserBuilder;

use crate::analyze;

/// Longest regex source accepted (bytes). Signatures are one line of a log.
pub const MAX_PATTERN_LEN: usize = 4096;
/// Compiled-program budget per regex: `(a{1000}){1000}` is refused, not built.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Lazy-DFA cache budget per regex; the total stays bounded with 10,000 patterns.
const DFA_SIZE_LIMIT: usize = 1 << 18;
/// Nesting budget: deeper than any real signature regex, shallow enough to be safe.
const NEST_LIMIT: u32 = 64;

/// One entry's way of being recognised: a regex and literal alternative spellings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pattern {
    /// The regex (Rust `regex` syntax), matched within one line.
    pub regex: String,
    /// Other spellings of the message, matched as plain text ignoring ASCII case.
    pub aliases: Vec<String>,
}

impl Pattern {
    /// A pattern with a regex and no aliases.
    pub fn new(regex: impl Into<String>) -> Pattern {
        Pattern {
            regex: regex.into(),
            aliases: Vec::new(),
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
    /// Patterns whose regex runs only when one of its literals is in the line.
    pub prefiltered: usize,
    /// Patterns whose regex runs on every chunk (no usable literal).
    pub unfiltered: usize,
    /// Distinct literals in the prefilter (regex literals and aliases).
    pub literals: usize,
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
    regex: Regex,
    specificity: u32,
    alias_specificity: Vec<u32>,
}

/// A compiled set of patterns. Cheap to share between threads (`Sync`).
#[derive(Debug)]
pub struct Matcher {
    patterns: Vec<Compiled>,
    prefilter: Option<AhoCorasick>,
    /// For each prefilter literal, what a hit on it means.
    targets: Vec<Vec<Target>>,
    /// Patterns without a usable literal, and one `RegexSet` that runs them all at once.
    unfiltered: Vec<usize>,
    unfiltered_set: Option<RegexSet>,
    prefiltered: usize,
}

impl Matcher {
    /// Compiles every pattern. Fails with every bad pattern's index and reason (syntax,
    /// too long, too big once compiled); never panics and never allocates without bound.
    pub fn new(patterns: &[Pattern]) -> Result<Matcher, Vec<(usize, String)>> {
        let mut errors = Vec::new();
        let mut compiled = Vec::with_capacity(patterns.len());
        let mut literals: Vec<(Vec<u8>, Target)> = Vec::new();
        let mut unfiltered = Vec::new();
        let mut unfiltered_src = Vec::new();
        for (i, pattern) in patterns.iter().enumerate() {
            match compile(&pattern.regex) {
                Ok((regex, source, specificity, required)) => {
                    match required {
                        Some(set) => {
                            literals.extend(set.into_iter().map(|l| (l, Target::Verify(i))))
                        }
                        None => {
                            unfiltered.push(i);
                            unfiltered_src.push(source);
                        }
                    }
                    let mut alias_specificity = Vec::with_capacity(pattern.aliases.len());
                    for (a, alias) in pattern.aliases.iter().enumerate() {
                        // An alias widens what finds the entry; it never makes the entry more
                        // specific than its regex says it is.
                        alias_specificity.push((alias.chars().count() as u32).min(specificity));
                        // An alias is one line of text; an empty one would match everything.
                        if !alias.trim().is_empty() && !alias.contains('\n') {
                            literals
                                .push((alias.as_bytes().to_ascii_lowercase(), Target::Alias(i, a)));
                        }
                    }
                    compiled.push(Compiled {
                        regex,
                        specificity,
                        alias_specificity,
                    });
                }
                Err(e) => errors.push((i, e)),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        let prefiltered = compiled.len() - unfiltered.len();
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
        } else {
            let ac = AhoCorasickBuilder::new()
                .match_kind(MatchKind::Standard)
                .ascii_case_insensitive(true)
                .kind(Some(AhoCorasickKind::DFA))
                .build(&keys)
                .map_err(|e| vec![(0, format!("the prefilter does not build: {e}"))])?;
            Some(ac)
        };
        Ok(Matcher {
            patterns: compiled,
            prefilter,
            targets,
            unfiltered,
            unfiltered_set,
            prefiltered,
        })
    }

    /// Number of patterns.
    pub fn len(&self) -> usize {
        self.patterns.len()
    }

    /// True when there are no patterns.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The specificity of pattern `i`'s regex (see [`Match::specificity`]).
    pub fn specificity(&self, i: usize) -> Option<u32> {
        self.patterns.get(i).map(|p| p.specificity)
    }

    /// Numbers about this matcher.
    pub fn stats(&self) -> Stats {
        Stats {
            patterns: self.patterns.len(),
            prefiltered: self.prefiltered,
            unfiltered: self.unfiltered.len(),
            literals: self.targets.len(),
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
    pub fn scan(&self, text: &[u8], mut emit: impl FnMut(&Match)) {
        let mut hits: Vec<(usize, Hit)> = Vec::new();
        if let Some(ac) = &self.prefilter {
            for m in ac.find_overlapping_iter(text) {
                for &target in &self.targets[m.pattern().as_usize()] {
                    hits.push((
                        m.start(),
                        Hit {
                            target,
                            span: m.start()..m.end(),
                        },
                    ));
                }
            }
        }
        if let Some(set) = &self.unfiltered_set {
            for k in set.matches(text).iter() {
                let p = self.unfiltered[k];
                // Regexes are line-bound, so each match lies in one line.
                for m in self.patterns[p].regex.find_iter(text) {
                    hits.push((
                        m.start(),
                        Hit {
                            target: Target::Verify(p),
                            span: m.start()..m.end(),
                        },
                    ));
                }
            }
        }
        if hits.is_empty() {
            return;
        }
        hits.sort_by_key(|(start, hit)| (*start, target_key(hit.target)));

        let mut lines = LineCounter::new(text);
        let mut found: Vec<Match> = Vec::new();
        let mut i = 0;
        while i < hits.len() {
            let (line, range) = lines.line_of(hits[i].0);
            let mut j = i;
            // A hit at the `\n` itself belongs to this line (see `line_of`), so the group
            // is never empty.
            while j < hits.len() && hits[j].0 <= range.end {
                j += 1;
            }
            self.resolve_line(text, line, range, &hits[i..j], &mut found);
            found.sort_by(rank);
            for m in &found {
                emit(m);
            }
            found.clear();
            i = j;
        }
    }

    /// Turns the hits of one line into at most one match per pattern.
    fn resolve_line(
        &self,
        text: &[u8],
        line: usize,
        range: Range<usize>,
        hits: &[(usize, Hit)],
        out: &mut Vec<Match>,
    ) {
        let mut candidates: Vec<(usize, Hit)> = hits
            .iter()
            .map(|(_, h)| (target_pattern(h.target), h.clone()))
            .collect();
        candidates.sort_by_key(|(p, h)| (*p, target_key(h.target), h.span.start));
        let mut k = 0;
        while k < candidates.len() {
            let p = candidates[k].0;
            let mut end = k;
            while end < candidates.len() && candidates[end].0 == p {
                end += 1;
            }
            let compiled = &self.patterns[p];
            let group = &candidates[k..end];
            // The regex first (it gives the real span); an alias if the regex does not match.
            let regex_match = group
                .iter()
                .any(|(_, h)| matches!(h.target, Target::Verify(_)))
                .then(|| {
                    compiled
                        .regex
                        .find(&text[range.clone()])
                        .map(|m| range.start + m.start()..range.start + m.end())
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
            k = end;
        }
    }
}

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

/// Parses, checks and compiles one regex: (regex, line-bound source, specificity,
/// prefilter literals).
#[allow(clippy::type_complexity)]
fn compile(pattern: &str) -> Result<(Regex, String, u32, Option<Vec<Vec<u8>>>), String> {
    if pattern.len() > MAX_PATTERN_LEN {
        return Err(format!(
            "regex is {} bytes long; the limit is {MAX_PATTERN_LEN}",
            pattern.len()
        ));
    }
    if pattern.is_empty() {
        return Err("regex is empty (it would match every line)".into());
    }
    let hir = ParserBuilder::new()
        .nest_limit(NEST_LIMIT)
        .multi_line(true)
        .crlf(true)
        .build()
        .parse(pattern)
        .map_err(|e| e.to_string())?;
    let hir = analyze::line_bound(hir);
    let specificity = analyze::specificity(&hir);
    let required = analyze::required_literals(&hir);
    let source = hir.to_string();
    let regex = RegexBuilder::new(&source)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(DFA_SIZE_LIMIT)
        .nest_limit(NEST_LIMIT * 2)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(limit) => {
                format!("regex compiles to more than {limit} bytes; simplify its repetitions")
            }
            other => other.to_string(),
        })?;
    if regex.is_match(b"") {
        return Err("regex matches the empty string (it would match every line)".into());
    }
    Ok((regex, source, specificity, required))
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
            // Counting is a tight loop the compiler vectorises; lines between hits are
            // never looked at one by one.
            self.line += skipped.iter().filter(|&&b| b == b'\n').count();
            self.start = self.end
                + skipped
                    .iter()
                    .rposition(|&b| b == b'\n')
                    .map_or(0, |i| i + 1);
            self.end = find_newline(self.text, offset);
        }
        (self.line, self.start..self.end)
    }
}

/// Offset of the first `\n` at or after `from`, or the text's length.
fn find_newline(text: &[u8], from: usize) -> usize {
    text[from..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(text.len(), |i| from + i)
}
