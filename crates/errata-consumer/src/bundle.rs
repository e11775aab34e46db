//! Opening a bundle: read, verify, parse, compile.

use std::io::Read;
use std::path::Path;

use crate::archive::Archive;
use crate::entries_head::ENTRIES_HEAD;
use crate::matcher_index::ENTRIES_INDEX;
use crate::{Entry, Error, Found, Index, Manifest, ScanStats};

/// The member holding every entry as one JSON array, sorted by id.
pub const ENTRIES: &str = "entries.json";

/// The member holding the SQLite database (tables and full-text search).
pub const DATABASE: &str = "errata.sqlite";

/// How much of the archive [`Bundle::read`] reads and verifies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Every member ([`Bundle::open`]).
    Everything,
    /// The members up to and including `entries.json` ([`Bundle::open_for_matching`]).
    UpToEntries,
}

/// A verified bundle, ready to match logs.
#[derive(Debug)]
pub struct Bundle {
    manifest: Manifest,
    index: Index,
    /// Members asked for by [`Bundle::from_reader_keeping`], verified like the rest.
    kept: std::collections::BTreeMap<String, Vec<u8>>,
}

impl Bundle {
    /// Opens and verifies the bundle file at `path` (`errata-<version>.tar.gz`).
    pub fn open(path: impl AsRef<Path>) -> Result<Bundle, Error> {
        let file = std::fs::File::open(path.as_ref())?;
        Bundle::from_reader(std::io::BufReader::new(file))
    }

    /// Opens and verifies a bundle held in memory.
    pub fn from_bytes(bytes: &[u8]) -> Result<Bundle, Error> {
        Bundle::from_reader(bytes)
    }

    /// Opens and verifies a bundle read from `reader`, in one pass: every member is
    /// hashed and compared with the manifest, and only the entries are kept in memory.
    /// The first problem found is the error (an unknown `format_version` first of all).
    pub fn from_reader(reader: impl Read) -> Result<Bundle, Error> {
        Bundle::from_reader_keeping(reader, &[])
    }

    /// Opens and verifies the bundle file at `path`, keeping the members named in
    /// `keep` (e.g. [`DATABASE`]) in memory as well: see [`Bundle::member`].
    pub fn open_keeping(path: impl AsRef<Path>, keep: &[&str]) -> Result<Bundle, Error> {
        let file = std::fs::File::open(path.as_ref())?;
        Bundle::from_reader_keeping(std::io::BufReader::new(file), keep)
    }

    /// [`Bundle::from_reader`], keeping the members named in `keep` in memory. A kept
    /// member that the bundle lacks is an error.
    pub fn from_reader_keeping(reader: impl Read, keep: &[&str]) -> Result<Bundle, Error> {
        Bundle::read(reader, keep, Reading::Everything)
    }

    /// Opens the bundle file at `path` for answering questions about text and logs
    /// (`errata match`, `decode`, `incidents`, `audit`): the manifest and every member up
    /// to and including `entries.json` are read and verified as [`Bundle::open`] does,
    /// and reading stops there. The members after it (`entries.jsonl`, `errata.sqlite`,
    /// …) are neither read nor verified: nothing this bundle answers comes from them, and
    /// at 10,000 entries they are three quarters of what `open` inflates and hashes.
    /// `errata bundle verify` checks every member. The entries are typed from
    /// `entries.head.json` when the bundle has it ([`crate::entries_head`]).
    pub fn open_for_matching(path: impl AsRef<Path>) -> Result<Bundle, Error> {
        let file = std::fs::File::open(path.as_ref())?;
        Bundle::from_reader_for_matching(std::io::BufReader::new(file))
    }

    /// [`Bundle::open_for_matching`] of a bundle read from `reader`.
    pub fn from_reader_for_matching(reader: impl Read) -> Result<Bundle, Error> {
        Bundle::read(reader, &[], Reading::UpToEntries)
    }

    fn read(reader: impl Read, keep: &[&str], reading: Reading) -> Result<Bundle, Error> {
        std::thread::scope(|scope| {
            // Typing the entries and preparing the matcher are half of opening a large
            // bundle. They start as soon as `entries.json` has been read (reading for
            // matching: as soon as the heads and analyses before it have, see
            // `parse_members`), while the members after it are still inflated and
            // hashed; their result is used only
            // once the whole archive has verified, and errors keep their order
            // (archive, manifest, entries, count, patterns).
            let (to_parser, from_archive) = std::sync::mpsc::sync_channel::<(String, Vec<u8>)>(1);
            let keep_entries_json = keep.contains(&ENTRIES);
            let heads = reading == Reading::UpToEntries;
            let check_texts = reading == Reading::Everything;
            let parsed = scope
                .spawn(move || parse_members(from_archive, heads, check_texts, keep_entries_json));
            let archive = Archive::read_handing_over(
                reader,
                &|path| {
                    path == ENTRIES
                        || path == ENTRIES_INDEX
                        || (heads && path == ENTRIES_HEAD)
                        || keep.contains(&path)
                },
                &crate::archive::Limits::DEFAULT,
                &[ENTRIES_HEAD, ENTRIES_INDEX, ENTRIES],
                to_parser,
                match reading {
                    Reading::Everything => None,
                    Reading::UpToEntries => Some(&[ENTRIES]),
                },
            )?;
            let manifest = archive.manifest()?;
            if let Some(problem) = archive.problems(&manifest).into_iter().next() {
                return Err(problem);
            }
            let (entries_json, count, index) = parsed
                .join()
                .map_err(|_| Error::Entries("the thread reading the entries panicked".into()))??;
            if count as u64 != manifest.counts.entries {
                return Err(Error::Entries(format!(
                    "{count} entries, but the manifest counts {}",
                    manifest.counts.entries
                )));
            }
            let index = index?;
            let mut kept = std::collections::BTreeMap::new();
            for &name in keep {
                let bytes = if name == ENTRIES {
                    entries_json.clone().unwrap_or_default()
                } else {
                    archive
                        .data(name)
                        .ok_or_else(|| Error::Member {
                            member: name.into(),
                            problem: "missing".into(),
                        })?
                        .to_vec()
                };
                kept.insert(name.to_string(), bytes);
            }
            Ok(Bundle {
                manifest,
                index,
                kept,
            })
        })
    }

    /// A member kept by [`Bundle::open_keeping`] / [`Bundle::from_reader_keeping`]
    /// (verified against the manifest like every member).
    pub fn member(&self, path: &str) -> Option<&[u8]> {
        self.kept.get(path).map(Vec::as_slice)
    }

    /// The manifest (version, counts, hashes).
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The entries and the matcher.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// Every entry, sorted by id.
    pub fn entries(&self) -> &[Entry] {
        self.index.entries()
    }

    /// The entry with this id.
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.index.entry(id)
    }

    /// Every known error in `text`, by line, most specific first within a line.
    pub fn match_text(&self, text: &str) -> Vec<Found<'_>> {
        self.index.match_text(text)
    }

    /// Scans a stream of any size in bounded memory (see [`Index::scan`]).
    pub fn scan(
        &self,
        reader: impl Read,
        on_match: impl FnMut(Found<'_>),
    ) -> std::io::Result<ScanStats> {
        self.index.scan(reader, on_match)
    }
}

/// Parses `entries.json` (an array of entry objects).
///
/// The array is split into its entries' texts at once; typing each entry is most of
/// the work (a third of opening a 10,000-entry bundle), so it runs on every core, in
/// order-keeping chunks. The first bad entry (by position) is the error.
pub fn parse_entries(bytes: &[u8]) -> Result<Vec<Entry>, Error> {
    parse_entries_owned(bytes.to_vec(), true)
}

/// [`parse_entries`] of bytes it may keep: every entry's JSON text is a span of them.
pub(crate) fn parse_entries_owned(bytes: Vec<u8>, check_texts: bool) -> Result<Vec<Entry>, Error> {
    let text = std::sync::Arc::new(
        String::from_utf8(bytes)
            .map_err(|e| Error::Entries(format!("not a JSON array of entries: {e}")))?,
    );
    // A bundle that errata wrote holds one entry per line: the lines are the entries,
    // found without reading the JSON twice. Any other layout, and any line that is not
    // an entry, takes the general way, which also words every error.
    if let Some(spans) = line_spans(&text)
        && let Ok(entries) = type_entries(&text, &spans, check_texts)
    {
        return Ok(entries);
    }
    let spans = element_spans(&text)?;
    type_entries(&text, &spans, check_texts)
}

/// What the members handed over by the archive reader make: `entries.json` when the
/// caller keeps it, the number of entries, and their index.
type Parsed = (Option<Vec<u8>>, usize, Result<Index, Error>);

/// Types the entries and builds their index from the members `from_archive` hands over
/// (`entries.head.json` and `entries.index.json` when the bundle has them, then
/// `entries.json`; they come in that order).
///
/// With `heads`, the entries are typed from `entries.head.json` and the matcher is built
/// as soon as the analyses are in hand, while `entries.json` is still being inflated; a
/// second thread then fits its lines to the entries, and each entry gets its text.
/// Heads that do not fit (a bundle not written by errata) leave it to the general way:
/// typing every entry from `entries.json`, which also words every error.
fn parse_members(
    from_archive: std::sync::mpsc::Receiver<(String, Vec<u8>)>,
    heads: bool,
    check_texts: bool,
    keep_entries_json: bool,
) -> Result<Parsed, Error> {
    let (mut head, mut analyses, mut entries_json) = (None, None, None);
    while entries_json.is_none() && !(heads && head.is_some() && analyses.is_some()) {
        match from_archive.recv() {
            Ok((name, bytes)) if name == ENTRIES => entries_json = Some(bytes),
            Ok((name, bytes)) if name == ENTRIES_HEAD => head = Some(bytes),
            Ok((_, bytes)) => analyses = Some(bytes),
            Err(_) => break,
        }
    }
    let from_heads = head
        .as_deref()
        .filter(|_| heads)
        .and_then(entries_from_heads);
    let bytes = match from_heads {
        Some(entries) => {
            let ids: Vec<String> = entries.iter().map(|e| e.id.clone()).collect();
            let (index, texts) = std::thread::scope(|scope| {
                let ids = &ids;
                let texts = scope.spawn(move || {
                    until_entries(&from_archive, entries_json).map(|b| fit_texts(b, ids))
                });
                let known = analyses.as_deref().and_then(crate::matcher_index::read);
                let index = Index::with_analyses(entries, known);
                (index, texts.join())
            });
            let texts = texts
                .map_err(|_| Error::Entries("the thread reading the entries panicked".into()))??;
            match (index, texts) {
                (Ok(mut index), Ok((all, spans))) => {
                    let kept = keep_entries_json.then(|| all.as_bytes().to_vec());
                    for (entry, span) in index.entries_mut().iter_mut().zip(spans) {
                        entry.attach(all.clone(), span);
                    }
                    return Ok((kept, ids.len(), Ok(index)));
                }
                (_, Err(bytes)) => bytes,
                (Err(_), Ok((all, _))) => std::sync::Arc::unwrap_or_clone(all).into_bytes(),
            }
        }
        None => until_entries(&from_archive, entries_json)?,
    };
    // A caller may keep `entries.json` itself: a copy then, since the entries keep the
    // bytes they were read from.
    let kept = keep_entries_json.then(|| bytes.clone());
    // Matching types an entry's advice when it reports it; a full read checks every
    // entry's now.
    let entries = parse_entries_owned(bytes, check_texts)?;
    let known = analyses.as_deref().and_then(crate::matcher_index::read);
    Ok((kept, entries.len(), Index::with_analyses(entries, known)))
}

/// `entries.json`: `bytes` when already received, else what `from_archive` hands over
/// next under that name.
fn until_entries(
    from_archive: &std::sync::mpsc::Receiver<(String, Vec<u8>)>,
    bytes: Option<Vec<u8>>,
) -> Result<Vec<u8>, Error> {
    if let Some(bytes) = bytes {
        return Ok(bytes);
    }
    loop {
        match from_archive.recv() {
            Ok((name, bytes)) if name == ENTRIES => return Ok(bytes),
            Ok(_) => {}
            Err(_) => {
                return Err(Error::Member {
                    member: ENTRIES.into(),
                    problem: "missing".into(),
                });
            }
        }
    }
}

/// The entries typed from `entries.head.json` (one head per line, as errata writes it),
/// each without its text yet; `None` when it does not read so.
fn entries_from_heads(head: &[u8]) -> Option<Vec<Entry>> {
    let text = std::str::from_utf8(head).ok()?;
    line_spans(text)?
        .into_iter()
        .map(|span| Entry::from_head(&text[span]).ok())
        .collect()
}

/// `entries.json`'s text and its lines, when line `i` is the entry with id `ids[i]`:
/// there are as many lines as heads and each holds its head's id (the manifest vouches
/// for both members; `errata bundle verify` checks that each head is its entry's). The
/// bytes back when they do not fit.
#[allow(clippy::type_complexity)]
fn fit_texts(
    bytes: Vec<u8>,
    ids: &[String],
) -> Result<(std::sync::Arc<String>, Vec<std::ops::Range<usize>>), Vec<u8>> {
    let text = String::from_utf8(bytes).map_err(|e| e.into_bytes())?;
    let Some(spans) = line_spans(&text) else {
        return Err(text.into_bytes());
    };
    let fits = spans.len() == ids.len()
        && spans.iter().zip(ids).all(|(span, id)| {
            serde_json::to_string(id).is_ok_and(|id| {
                let needle = format!("\"id\":{id}");
                memchr::memmem::find(text[span.clone()].as_bytes(), needle.as_bytes()).is_some()
            })
        });
    if !fits {
        return Err(text.into_bytes());
    }
    Ok((std::sync::Arc::new(text), spans))
}

/// The entries of an `entries.json` laid out as errata writes it: `[`, one entry per
/// line (each but the last followed by a comma), `]`, each on a line of its own. `None`
/// for any other layout.
///
/// Each span holds one line's text; that it is one JSON value is for the typing to
/// find (`serde_json` refuses any text after the value). When every line is one, the
/// file is exactly the array of those values.
fn line_spans(text: &str) -> Option<Vec<std::ops::Range<usize>>> {
    let body = text.strip_prefix("[\n")?.strip_suffix("\n]\n")?;
    let offset = "[\n".len();
    let mut spans = Vec::new();
    let mut start = 0;
    for end in memchr::memchr_iter(b'\n', body.as_bytes()) {
        // Every line before the last ends with the comma between two entries.
        let value = body[start..end].strip_suffix(',')?;
        spans.push(offset + start..offset + start + value.len());
        start = end + 1;
    }
    spans.push(offset + start..offset + body.len());
    Some(spans)
}

/// The elements of a JSON array of any layout, each as the span of its text.
pub(crate) fn element_spans(text: &str) -> Result<Vec<std::ops::Range<usize>>, Error> {
    let values: Vec<&serde_json::value::RawValue> = serde_json::from_str(text)
        .map_err(|e| Error::Entries(format!("not a JSON array of entries: {e}")))?;
    // Each element borrows from `text`: its position is the offset of its slice.
    Ok(values
        .iter()
        .map(|v| {
            let start = v.get().as_ptr() as usize - text.as_ptr() as usize;
            start..start + v.get().len()
        })
        .collect())
}

/// Types the entry at each span of `text`, on every core.
fn type_entries(
    text: &std::sync::Arc<String>,
    spans: &[std::ops::Range<usize>],
    check_texts: bool,
) -> Result<Vec<Entry>, Error> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = spans.len().div_ceil(threads).max(256);
    let typed = |start: usize, part: &[std::ops::Range<usize>]| {
        // Sized up front: a collected `Result<Vec<_>, _>` grows by doubling, and each
        // growth copies every entry so far into freshly faulted memory.
        let mut out = Vec::with_capacity(part.len());
        for (i, span) in part.iter().enumerate() {
            let entry = Entry::from_shared(text.clone(), span.clone()).and_then(|e| {
                if check_texts {
                    e.check_texts()?;
                }
                Ok(e)
            });
            out.push(entry.map_err(|e| Error::Entries(format!("entry #{}: {e}", start + i)))?);
        }
        Ok::<_, Error>(out)
    };
    if spans.len() <= chunk {
        return typed(0, spans);
    }
    std::thread::scope(|scope| {
        let workers: Vec<_> = spans
            .chunks(chunk)
            .enumerate()
            .map(|(k, part)| scope.spawn(move || typed(k * chunk, part)))
            .collect();
        let mut entries = Vec::with_capacity(spans.len());
        for worker in workers {
            let part = worker
                .join()
                .map_err(|_| Error::Entries("a thread typing the entries panicked".into()))??;
            entries.extend(part);
        }
        Ok(entries)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENTRY: &str = r#"{"id":"cuda/x","signature":"boom","regex":"boom","root_cause":"why","dead_ends":[{"action":"retry","why_fails":"no","fail_rate":0.5}],"workarounds":[{"action":"fix","how":"so","success_rate":0.9}]}"#;

    /// The layout errata writes (one entry per line) and any other read as the same
    /// entries; a line that is not one entry, or a bad entry, takes the general way and
    /// is worded as it would be in a compact array.
    #[test]
    fn entries_read_alike_whatever_the_layout() {
        let other = ENTRY.replace("cuda/x", "cuda/y").replace("boom", "bang");
        let compact = format!("[{ENTRY},{other}]");
        let lined = format!("[\n{ENTRY},\n{other}\n]\n");
        let pretty = serde_json::to_string_pretty(
            &serde_json::from_str::<serde_json::Value>(&compact).expect("json"),
        )
        .expect("pretty")
            + "\n";
        let two_on_a_line = format!("[\n{ENTRY},{other}\n]\n");
        let expected = parse_entries(compact.as_bytes()).expect("compact");
        assert_eq!(expected.len(), 2);
        assert!(line_spans(&compact).is_none());
        let spans = line_spans(&lined).expect("errata's layout");
        let by_lines = type_entries(&std::sync::Arc::new(lined.clone()), &spans, true);
        assert_eq!(by_lines.expect("each line is an entry"), expected);
        for text in [&lined, &pretty, &two_on_a_line] {
            let got = parse_entries(text.as_bytes()).expect(text);
            let ids: Vec<&str> = got.iter().map(|e| e.id.as_str()).collect();
            assert_eq!(ids, ["cuda/x", "cuda/y"], "{text}");
            assert_eq!(got[1].regex, "bang");
        }
        assert_eq!(parse_entries(lined.as_bytes()).expect("lined"), expected);

        let bad = other.replace(r#""root_cause":"why""#, r#""root_cause":7"#);
        let words = |text: String| parse_entries(text.as_bytes()).expect_err("bad").to_string();
        let compact_error = words(format!("[{ENTRY},{bad}]"));
        assert!(compact_error.contains("entry #1"), "{compact_error}");
        assert_eq!(words(format!("[\n{ENTRY},\n{bad}\n]\n")), compact_error);
        // Not an array of entries at all, though laid out in lines.
        let half = words(format!("[\n{ENTRY},\n{{\"id\":\n]\n"));
        assert!(half.contains("not a JSON array of entries"), "{half}");
    }

    /// Hands `members` over as the archive reader would, and returns what the parser
    /// makes of them.
    fn parse(members: &[(&str, String)], heads: bool) -> Result<Vec<Entry>, Error> {
        let (to, from) = std::sync::mpsc::sync_channel(members.len());
        for (name, text) in members {
            to.send((name.to_string(), text.clone().into_bytes()))
                .expect("send");
        }
        drop(to);
        let (_, count, index) = parse_members(from, heads, false, false)?;
        let entries = index?.entries().to_vec();
        assert_eq!(entries.len(), count);
        Ok(entries)
    }

    /// Entries are typed from heads that fit `entries.json` (same count, each line holding
    /// its head's id), and get their texts from it; heads that do not fit, or reading
    /// without heads, type them from `entries.json`.
    #[test]
    fn heads_that_fit_are_used_and_others_are_not() {
        let other = ENTRY.replace("cuda/x", "cuda/y").replace("boom", "bang");
        let entries_json = format!("[\n{ENTRY},\n{other}\n]\n");
        let head = |entries: &[&str]| {
            String::from_utf8(crate::entries_head::build(entries.iter().copied()).expect("head"))
                .expect("utf-8")
        };
        // A head that says more than its entry shows where an entry was typed from.
        let telling = head(&[ENTRY, &other])
            .replace(r#""signature":"boom""#, r#""signature":"from the head""#);
        let index = crate::matcher_index::build(["boom", "bang"]);
        let index = String::from_utf8(index).expect("utf-8");
        let members = |head: &str| {
            vec![
                (ENTRIES_HEAD, head.to_string()),
                (ENTRIES_INDEX, index.clone()),
                (ENTRIES, entries_json.clone()),
            ]
        };
        let from_heads = parse(&members(&telling), true).expect("heads");
        assert_eq!(from_heads[0].signature, "from the head");
        assert_eq!(from_heads[0].raw_json(), ENTRY);
        assert_eq!(from_heads[1].root_cause(crate::Lang::En), "why");

        let from_entries = parse_entries(entries_json.as_bytes()).expect("entries");
        // Not asked to use heads; heads in another order; a head missing.
        let swapped = head(&[&other, ENTRY]);
        let short = head(&[ENTRY]);
        for (members, heads) in [
            (members(&telling), false),
            (members(&swapped), true),
            (members(&short), true),
        ] {
            let got = parse(&members, heads).expect("entries.json");
            assert_eq!(got, from_entries);
            assert_eq!(got[0].signature, "boom");
        }
        // Without `entries.json`, heads or not, it is missing.
        let err = parse(&members(&telling)[..2], true).expect_err("no entries.json");
        assert!(err.to_string().contains("missing"), "{err}");
    }

    /// Matching types an entry's advice when first asked for; a full read (and
    /// `parse_entries`) checks it up front, so a malformed one is an error there.
    #[test]
    fn advice_is_typed_on_first_use_and_checked_by_a_full_read() {
        let good = format!("[{ENTRY}]");
        let lazy = parse_entries_owned(good.clone().into_bytes(), false).expect("parse");
        assert_eq!(lazy[0].root_cause(crate::Lang::En), "why");
        assert_eq!(lazy[0].dead_ends()[0].action, "retry");
        assert_eq!(lazy[0].workarounds()[0].how, "so");
        assert_eq!(lazy, parse_entries(good.as_bytes()).expect("checked"));

        let bad = format!(
            "[{}]",
            ENTRY.replace(r#""root_cause":"why""#, r#""root_cause":7"#)
        );
        let err = parse_entries(bad.as_bytes()).expect_err("a number is no root cause");
        assert!(err.to_string().contains("entry #0"), "{err}");
        let lazy = parse_entries_owned(bad.into_bytes(), false).expect("not typed yet");
        assert!(lazy[0].check_texts().is_err());
        assert_eq!(lazy[0].root_cause(crate::Lang::En), "");
        assert!(lazy[0].workarounds().is_empty());
    }
}
