//! Entries plus the compiled matcher: the part of a bundle that answers questions.

use std::io::Read;
use std::ops::Range;

use errata_matcher::{Matcher, Pattern, Via};

use crate::scan::{self, Chunker};
use crate::{Entry, Error};

/// How much of a stream [`Index::scan`] searches at once.
pub const CHUNK_BYTES: usize = 1 << 20;
/// A line longer than this is searched in pieces of this size (a match cannot span two
/// pieces). It bounds memory on input that has no newlines at all.
pub const MAX_LINE_BYTES: usize = 16 << 20;

/// Entries and a matcher compiled from their regexes and aliases.
#[derive(Debug)]
pub struct Index {
    entries: Vec<Entry>,
    matcher: Matcher,
    /// The bare-number patterns, compiled after the entries' own: pattern
    /// `entries.len() + i` is `numbers[i]`.
    numbers: Vec<crate::numbers::NumberPattern>,
}

/// What pattern `i` of the matcher is.
enum PatternOf<'a> {
    Entry(usize),
    Number(&'a crate::numbers::NumberPattern),
    /// An Xid line, answered from NVIDIA's catalog when no other pattern matched it.
    XidLine,
}

/// A known error found in some text.
#[derive(Debug, Clone, PartialEq)]
pub struct Found<'a> {
    /// The entry that recognised it.
    pub entry: &'a Entry,
    /// 1-based line number.
    pub line: u64,
    /// 1-based byte column of the match's start in its line.
    pub column: usize,
    /// Byte range of the match in the whole input.
    pub span: Range<u64>,
    /// The matched text (lossily decoded when the input is not UTF-8).
    pub text: String,
    /// Whether the entry's regex or one of its aliases matched.
    pub via: Via,
    /// Ranking key: characters the entry's pattern spells out literally.
    pub specificity: u32,
    /// For a bare-number line (`CUBLAS error 13`): the family the line named and the
    /// number, decoded in that family's table to the entry's `error_code`.
    pub number: Option<(&'static str, i64)>,
}

impl Found<'_> {
    /// This match as one JSON object: where (`line`, `column`, `span`, `text`), which
    /// entry (`id`, `signature`, `via`, `specificity`), and its advice in `lang`
    /// (`root_cause`, `dead_ends`, `workarounds`, each most likely first).
    pub fn to_json(&self, lang: crate::Lang) -> serde_json::Value {
        let mut json = serde_json::to_value(self.where_and_which(lang))
            .unwrap_or_else(|_| serde_json::Value::Object(serde_json::Map::new()));
        if let (Some(object), serde_json::Value::Object(advice)) =
            (json.as_object_mut(), advice_json(self.entry, lang))
        {
            object.extend(advice);
        }
        json
    }

    /// The first keys of [`Found::to_json`]: where the match is and which entry it is.
    fn where_and_which(&self, lang: crate::Lang) -> WhereAndWhich<'_> {
        WhereAndWhich {
            line: self.line,
            column: self.column,
            span: [self.span.start, self.span.end],
            text: &self.text,
            id: &self.entry.id,
            signature: self.entry.signature(lang),
            via: match (self.number, self.via) {
                (Some((family, n)), _) => format!("number:{family}:{n}").into(),
                (None, Via::Regex) => "regex".into(),
                (None, Via::Alias(i)) => format!("alias:{i}").into(),
            },
            specificity: self.specificity,
        }
    }
}

/// [`Found::where_and_which`]'s keys, in their order: serialized straight to the output
/// for each match (a `serde_json::Value` built per match was a map of owned keys and
/// strings to allocate and free, once for every matched line of a log).
#[derive(serde::Serialize)]
struct WhereAndWhich<'a> {
    line: u64,
    column: usize,
    span: [u64; 2],
    text: &'a str,
    id: &'a str,
    signature: &'a str,
    via: std::borrow::Cow<'a, str>,
    specificity: u32,
}

/// The last keys of [`Found::to_json`]: the entry's advice in `lang` (`root_cause`,
/// `operator_action`, `dead_ends`, `workarounds`, each most likely first). The same for
/// every match of the entry.
fn advice_json(entry: &Entry, lang: crate::Lang) -> serde_json::Value {
    serde_json::to_value(AdviceJson::of(entry, lang))
        .unwrap_or_else(|_| serde_json::Value::Object(serde_json::Map::new()))
}

/// [`advice_json`]'s keys in their order, serialized straight to text by
/// [`JsonLines`] (a `serde_json::Value` built for each of a log's thousands of distinct
/// entries was most of the writing thread's time).
#[derive(serde::Serialize)]
struct AdviceJson<'a> {
    root_cause: &'a str,
    operator_action: &'a Option<String>,
    dead_ends: Vec<StepJson<'a>>,
    workarounds: Vec<StepJson<'a>>,
}

impl<'a> AdviceJson<'a> {
    fn of(entry: &'a Entry, lang: crate::Lang) -> AdviceJson<'a> {
        let advice = entry.advice(lang);
        let steps = |steps: Vec<crate::Step<'a>>, dead_end: bool| {
            steps
                .into_iter()
                .map(|step| StepJson { step, dead_end })
                .collect()
        };
        AdviceJson {
            root_cause: advice.root_cause,
            operator_action: &entry.operator_action,
            dead_ends: steps(advice.dead_ends, true),
            workarounds: steps(advice.workarounds, false),
        }
    }
}

/// One dead end (`action`, `why_fails`, `fail_rate`, `basis`, `evidence`) or workaround
/// (`how` and `success_rate` instead). A rate is a number only when it was counted: an
/// estimate is words.
struct StepJson<'a> {
    step: crate::Step<'a>,
    dead_end: bool,
}

impl serde::Serialize for StepJson<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let (detail, rate) = match self.dead_end {
            true => ("why_fails", "fail_rate"),
            false => ("how", "success_rate"),
        };
        let s = &self.step;
        let mut map = serializer.serialize_map(Some(5))?;
        map.serialize_entry("action", s.action)?;
        map.serialize_entry(detail, s.detail)?;
        map.serialize_entry(rate, &s.is_counted().then_some(s.rate))?;
        map.serialize_entry("basis", &BasisJson(s))?;
        map.serialize_entry("evidence", &s.evidence)?;
        map.end()
    }
}

/// `{"kind": …, "k": …, "n": …}` for a counted rate, `{"kind": "estimate"}` otherwise.
struct BasisJson<'s, 'a>(&'s crate::Step<'a>);

impl serde::Serialize for BasisJson<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let counted = self.0.counted();
        let mut map = serializer.serialize_map(Some(if counted.is_some() { 3 } else { 1 }))?;
        map.serialize_entry("kind", self.0.basis_kind())?;
        if let Some((k, n)) = counted {
            map.serialize_entry("k", &k)?;
            map.serialize_entry("n", &n)?;
        }
        map.end()
    }
}

/// Writes matches as JSON lines, each exactly `Found::to_json` followed by `\n`, with
/// each entry's advice serialized once: a log that repeats one error ten thousand times
/// costs one serialization of its advice, not ten thousand. Holds at most one string
/// per entry of the index.
#[derive(Debug)]
pub struct JsonLines {
    lang: crate::Lang,
    /// Entry id → its advice as JSON object members, without the braces. Looked up once
    /// per match, so with foldhash rather than SipHash, and by `&str` (an entry's id is
    /// copied into the map once, not at every match).
    advice: foldhash::HashMap<String, String>,
    /// The current match's first members, reused from match to match.
    head: Vec<u8>,
}

impl JsonLines {
    /// A writer of matches with their advice in `lang`.
    pub fn new(lang: crate::Lang) -> JsonLines {
        JsonLines {
            lang,
            advice: foldhash::HashMap::default(),
            head: Vec::new(),
        }
    }

    /// Writes `found` as one line of JSON.
    pub fn write(
        &mut self,
        found: &Found<'_>,
        out: &mut impl std::io::Write,
    ) -> std::io::Result<()> {
        let lang = self.lang;
        // One look-up for an entry already seen; a new entry's advice is serialized here
        // and kept once this match is written.
        let mut new_members = None;
        let advice = match self.advice.get(found.entry.id.as_str()) {
            Some(members) => members.as_str(),
            None => {
                let whole = serde_json::to_string(&AdviceJson::of(found.entry, lang))
                    .unwrap_or_else(|_| "{}".to_string());
                // `{…}` → `…`: members to splice after the head's.
                new_members
                    .insert(whole[1..whole.len() - 1].to_string())
                    .as_str()
            }
        };
        // `{head…}` + `,` + `advice…` + `}`: the members of both objects, in order.
        self.head.clear();
        serde_json::to_writer(&mut self.head, &found.where_and_which(lang))?;
        out.write_all(&self.head[..self.head.len() - 1])?;
        out.write_all(b",")?;
        out.write_all(advice.as_bytes())?;
        out.write_all(b"}\n")?;
        if let Some(members) = new_members {
            self.advice.insert(found.entry.id.clone(), members);
        }
        Ok(())
    }
}

/// Totals of a [`Index::scan`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ScanStats {
    /// Bytes read.
    pub bytes: u64,
    /// Lines read (a last line without `\n` counts).
    pub lines: u64,
    /// Matches reported.
    pub matches: u64,
}

impl Index {
    /// Reads the entries' regexes and aliases, in the given order, into one matcher.
    /// Each regex is parsed now (one that does not parse is an error) and compiled the
    /// first time a line needs it (`errata_matcher::Matcher::new_lazy`): a log meets the
    /// regexes of a few entries, and a bundle's were checked when it was written. A
    /// regex that only compiling would refuse (too big, matching the empty string) never
    /// matches.
    pub fn new(entries: Vec<Entry>) -> Result<Index, Error> {
        Index::with_analyses(entries, None)
    }

    /// [`Index::new`] with the analyses of some regexes already known (a bundle's
    /// `entries.index.json`, [`crate::matcher_index`]): an entry whose regex is among
    /// them is not parsed now.
    pub fn with_analyses(
        entries: Vec<Entry>,
        mut known: Option<std::collections::HashMap<String, errata_matcher::Analysis>>,
    ) -> Result<Index, Error> {
        let numbers = crate::numbers::patterns(&entries);
        let patterns: Vec<Pattern> = entries
            .iter()
            .map(|e| Pattern::new(e.regex.clone()).with_aliases(e.aliases.iter().cloned()))
            .chain(
                numbers
                    .iter()
                    .map(|n| Pattern::new(n.regex.clone()).with_gate(n.gate.clone())),
            )
            .chain(std::iter::once(Pattern::new(
                crate::xid_catalog::XID_LINE.to_string(),
            )))
            .collect();
        let analyses = match known.as_mut() {
            Some(known) => entries
                .iter()
                // Taken out: two entries with one regex analyse it once, the second now.
                .map(|e| known.remove(&e.regex))
                .collect(),
            None => Vec::new(),
        };
        let matcher = Matcher::new_lazy_analysed(&patterns, analyses).map_err(|errors| {
            Error::Patterns(
                errors
                    .into_iter()
                    .map(|(i, why)| {
                        (
                            entries
                                .get(i)
                                .or_else(|| {
                                    let n = numbers.get(i.checked_sub(entries.len())?)?;
                                    entries.get(n.entry)
                                })
                                .map_or_else(String::new, |e| e.id.clone()),
                            why,
                        )
                    })
                    .collect(),
            )
        })?;
        Ok(Index {
            entries,
            matcher,
            numbers,
        })
    }

    /// Every entry, in bundle order (sorted by id).
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The entries, to complete those read from their heads (their patterns stay as
    /// built).
    pub(crate) fn entries_mut(&mut self) -> &mut [Entry] {
        &mut self.entries
    }

    /// The entry with this id.
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.entries
            .binary_search_by(|e| e.id.as_str().cmp(id))
            .ok()
            .map(|i| &self.entries[i])
            .or_else(|| self.entries.iter().find(|e| e.id == id))
    }

    /// The compiled matcher (entry `i` is pattern `i`).
    pub fn matcher(&self) -> &Matcher {
        &self.matcher
    }

    /// Every known error in `text`: lines in order, and within a line the most specific
    /// entry first (see `errata_matcher` for the ranking rule).
    pub fn match_text(&self, text: &str) -> Vec<Found<'_>> {
        let mut raw = Vec::new();
        self.matcher.scan(text.as_bytes(), |m| raw.push(m.clone()));
        self.answers(text.as_bytes(), &raw)
            .map(|m| self.found(text.as_bytes(), 0, 0, m))
            .collect()
    }

    fn pattern_of(&self, pattern: usize) -> PatternOf<'_> {
        match pattern.checked_sub(self.entries.len()) {
            None => PatternOf::Entry(pattern),
            Some(k) => match self.numbers.get(k) {
                Some(number) => PatternOf::Number(number),
                None => PatternOf::XidLine,
            },
        }
    }

    /// The matches that are answers: a bare-number match is left out when its entry
    /// already matched the same line by its own words, and an Xid line's catalog answer
    /// when anything else matched the line (an entry knows that Xid) or NVIDIA documents
    /// no such number. (The matcher reports a line's matches together, so only that run
    /// of matches is compared.)
    fn answers<'m>(
        &self,
        chunk: &'m [u8],
        matches: &'m [errata_matcher::Match],
    ) -> impl Iterator<Item = &'m errata_matcher::Match> {
        matches.iter().enumerate().filter_map(move |(i, m)| {
            let same_line = |o: &&errata_matcher::Match| o.line == m.line;
            let others = || {
                let before = matches[..i].iter().rev().take_while(same_line);
                let after = matches[i + 1..].iter().take_while(same_line);
                before.chain(after)
            };
            match self.pattern_of(m.pattern) {
                PatternOf::Entry(_) => Some(m),
                PatternOf::Number(number) => {
                    // Its entry matched by its own words, or by an earlier number
                    // pattern of the same value (the phrase and glog's check).
                    let before = matches[..i].iter().rev().take_while(same_line);
                    let said = others().any(|o| o.pattern == number.entry)
                        || before.into_iter().any(|o| {
                            matches!(self.pattern_of(o.pattern), PatternOf::Number(n) if n.entry == number.entry)
                        });
                    (!said).then_some(m)
                }
                PatternOf::XidLine => {
                    let documented = std::str::from_utf8(&chunk[m.span.clone()])
                        .ok()
                        .and_then(crate::xid_catalog::entry_for)
                        .is_some();
                    (documented && others().next().is_none()).then_some(m)
                }
            }
        })
    }

    /// Scans a stream of any size in bounded memory (a few chunks of about
    /// [`CHUNK_BYTES`], or of a piece of an overlong line, at a time), calling `on_match`
    /// for each known error found, in the order of [`Index::match_text`]. The chunks are
    /// searched on one thread per core (up to 8); `on_match` runs on the calling thread.
    /// A live input (a pipe whose writer is idle, as with `tail -f`) is reported up to
    /// its last complete line before the scan waits for more.
    pub fn scan(
        &self,
        reader: impl Read,
        on_match: impl FnMut(Found<'_>),
    ) -> std::io::Result<ScanStats> {
        self.scan_with_threads(reader, scan::default_threads(), on_match)
    }

    /// The number of threads [`Index::scan`] searches with: one per core, up to 8.
    pub fn default_threads() -> usize {
        scan::default_threads()
    }

    /// [`Index::scan`] on `threads` threads (0 or 1: on the calling thread only). The
    /// matches and their order do not depend on `threads`.
    pub fn scan_with_threads(
        &self,
        reader: impl Read,
        threads: usize,
        on_match: impl FnMut(Found<'_>),
    ) -> std::io::Result<ScanStats> {
        self.scan_source(Chunker::new(reader), threads, |_| {}, on_match)
    }

    /// [`Index::scan_with_threads`], calling `on_progress` with the bytes searched so
    /// far after each chunk.
    pub(crate) fn scan_source_reporting(
        &self,
        reader: impl Read,
        threads: usize,
        on_progress: impl FnMut(u64),
        on_match: impl FnMut(Found<'_>),
    ) -> std::io::Result<ScanStats> {
        self.scan_source(Chunker::new(reader), threads, on_progress, on_match)
    }

    /// [`Index::scan_with_threads`] of bytes already in memory (a mapped file): the same
    /// matches in the same order, with no copy of the input. `errata match` maps a log
    /// file and scans it this way, so that no thread spends its time copying the file
    /// out of the page cache while the others search.
    pub fn scan_bytes(
        &self,
        bytes: &[u8],
        threads: usize,
        on_match: impl FnMut(Found<'_>),
    ) -> ScanStats {
        self.scan_bytes_with_progress(bytes, threads, |_| {}, on_match)
    }

    /// [`Index::scan_bytes`], calling `on_progress` with the bytes searched so far after
    /// each chunk (on the calling thread, as `on_match`), for a progress bar.
    pub fn scan_bytes_with_progress(
        &self,
        bytes: &[u8],
        threads: usize,
        on_progress: impl FnMut(u64),
        on_match: impl FnMut(Found<'_>),
    ) -> ScanStats {
        // A slice is never short of bytes: the only error a scan returns is a read's.
        self.scan_source(
            scan::SliceChunker::new(bytes),
            threads,
            on_progress,
            on_match,
        )
        .unwrap_or_default()
    }

    fn scan_source<S: scan::ChunkSource>(
        &self,
        source: S,
        threads: usize,
        mut on_progress: impl FnMut(u64),
        mut on_match: impl FnMut(Found<'_>),
    ) -> std::io::Result<ScanStats> {
        let mut stats = ScanStats::default();
        let mut last_byte = b'\n';
        scan::scan_chunks(&self.matcher, source, threads, |scanned| {
            let chunk = scanned.chunk.as_ref();
            // `stats.lines` counts completed lines, so a piece of a long line keeps the
            // line number of the piece before it.
            let (base_line, base_offset) = (stats.lines, stats.bytes);
            for m in self.answers(chunk, &scanned.matches) {
                stats.matches += 1;
                on_match(self.found(chunk, base_line, base_offset, m));
            }
            stats.lines += scanned.newlines;
            stats.bytes += chunk.len() as u64;
            last_byte = chunk.last().copied().unwrap_or(last_byte);
            on_progress(stats.bytes);
        })?;
        if last_byte != b'\n' {
            stats.lines += 1;
        }
        Ok(stats)
    }

    fn found(
        &self,
        chunk: &[u8],
        base_line: u64,
        base_offset: u64,
        m: &errata_matcher::Match,
    ) -> Found<'_> {
        let line_start = memchr::memrchr(b'\n', &chunk[..m.span.start]).map_or(0, |i| i + 1);
        let text = String::from_utf8_lossy(&chunk[m.span.clone()]);
        let (entry, number) = match self.pattern_of(m.pattern) {
            PatternOf::Entry(i) => (&self.entries[i], None),
            PatternOf::Number(n) => (&self.entries[n.entry], Some(n)),
            // `answers` kept it only when the catalog documents the number.
            PatternOf::XidLine => match crate::xid_catalog::entry_for(&text) {
                Some(entry) => (entry, None),
                None => (&self.entries[0], None),
            },
        };
        Found {
            entry,
            line: base_line + m.line as u64 + 1,
            column: m.span.start - line_start + 1,
            span: base_offset + m.span.start as u64..base_offset + m.span.end as u64,
            text: text.into_owned(),
            via: m.via,
            specificity: m.specificity,
            number: number.map(|n| (n.family, n.number)),
        }
    }
}
