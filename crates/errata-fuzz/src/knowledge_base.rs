//! Entries and articles, loaded from memory exactly as from a data directory, then
//! checked and reported in every format.

use std::path::{Path, PathBuf};

use errata_check::{CheckOptions, canonical_entry, check};
use errata_load::{ArticleDoc, KnowledgeBase, SourceFile};
use errata_model::date::Date;
use errata_report::{Context, Format};

/// The data directory the inputs pretend to be in (it need not exist).
const ROOT: &str = "fuzz-data";

/// An entry file (`signatures/cuda/fuzz.json`): loaded, formatted (`errata fmt`),
/// checked, and reported.
///
/// Invariants: what loads parses again as JSON (the checker and the bundle parse it
/// again); canonical formatting is idempotent and keeps the value; see also
/// [`check_and_report`].
pub fn entry(data: &[u8]) {
    let kb = load(&[("signatures/cuda/fuzz.json", data)]);
    for doc in &kb.entries {
        let value: serde_json::Value =
            serde_json::from_str(doc.text()).expect("a loaded entry parses again as JSON");
        let once = canonical_entry(doc.text()).expect("a loaded entry can be formatted");
        let twice = canonical_entry(&once).expect("a formatted entry can be formatted");
        assert_eq!(once, twice, "formatting is idempotent");
        let formatted: serde_json::Value =
            serde_json::from_str(&once).expect("formatted output is JSON");
        assert_eq!(formatted, value, "formatting keeps the value");
    }
    check_and_report(&kb);
}

/// An article (`articles/cuda/fuzz.md`) and the same bytes as its Chinese translation
/// (`fuzz.zh.md`): front matter, headings, links and code blocks with their offsets,
/// then the checker (translation rules included) and the reports.
///
/// Invariants: every range the loader records lies inside the file on character
/// boundaries, in order, with the right line number; a fence's info string is found at
/// its recorded offset; see also [`check_and_report`].
pub fn article(data: &[u8]) {
    let kb = load(&[
        ("articles/cuda/fuzz.md", data),
        ("articles/cuda/fuzz.zh.md", data),
    ]);
    for doc in &kb.articles {
        let src = kb
            .source(&doc.path)
            .expect("a loaded article has its source");
        article_invariants(src, doc);
    }
    check_and_report(&kb);
}

fn load(files: &[(&str, &[u8])]) -> KnowledgeBase {
    let files = files
        .iter()
        .map(|(path, data)| (Path::new(ROOT).join(path), data.to_vec()))
        .collect::<Vec<(PathBuf, Vec<u8>)>>();
    KnowledgeBase::from_files(Path::new(ROOT), files)
}

fn article_invariants(src: &SourceFile, doc: &ArticleDoc) {
    let text: &str = &src.text;
    let within = |r: &std::ops::Range<usize>, what: &str| {
        assert!(
            r.start <= r.end
                && r.end <= text.len()
                && text.is_char_boundary(r.start)
                && text.is_char_boundary(r.end),
            "{what} {r:?} is not a range of the {}-byte text",
            text.len()
        );
    };
    within(&doc.front_range, "front matter");
    within(&doc.body_range, "body");
    assert!(doc.front_range.end <= doc.body_range.start);
    let mut last = 0;
    for h in &doc.headings {
        within(&h.range, "heading");
        assert!((1..=6).contains(&h.level), "heading level {}", h.level);
        assert!(h.range.start >= doc.body_range.start && h.range.start >= last);
        last = h.range.start;
    }
    for l in &doc.links {
        within(&l.range, "link");
        assert!(l.range.start >= doc.body_range.start);
    }
    for b in &doc.code_blocks {
        within(&b.range, "code block");
        within(&(b.info_offset..b.info_offset), "code block info");
        let line = 1 + text[..b.range.start].matches('\n').count();
        assert_eq!(b.line, line, "code block line");
        // The info string is unescaped by the Markdown parser (`\x`, `&amp;`), and a lone
        // carriage return inside it is dropped; otherwise it is found verbatim at its
        // offset, which is where the snippet rules point their diagnostics.
        if b.fenced && !b.info.contains(['\\', '&']) {
            let line = text[b.info_offset..].split('\n').next().unwrap_or_default();
            assert!(
                line.replace('\r', "").starts_with(b.info.as_str()),
                "info {:?} not at offset {}",
                b.info,
                b.info_offset
            );
        }
    }
}

/// Checks the knowledge base twice and renders the result in every format.
///
/// Invariants: the same diagnostics both times (the checker runs in parallel); each one
/// resolved to a location inside its file on character boundaries, sorted; JSON and SARIF
/// output are JSON.
fn check_and_report(kb: &KnowledgeBase) {
    let options = CheckOptions {
        // A fixed "today": `stale` and `date-in-future` depend on it.
        today: Date::parse("2026-01-01").expect("a valid date"),
        overrides: Default::default(),
    };
    let diagnostics = check(kb, &options);
    assert_eq!(diagnostics, check(kb, &options), "check is deterministic");
    for d in &diagnostics {
        let loc = d.location.as_ref().expect("every diagnostic is resolved");
        assert!(loc.line >= 1 && loc.column >= 1, "{d:?}");
        if let Some(src) = kb.source(&d.file) {
            let text: &str = &src.text;
            assert!(
                loc.start <= loc.end
                    && loc.end <= text.len()
                    && text.is_char_boundary(loc.start)
                    && text.is_char_boundary(loc.end),
                "{d:?} points outside its {}-byte file",
                text.len()
            );
        }
    }
    assert!(
        diagnostics.is_sorted_by_key(|d| d.sort_key()),
        "diagnostics are sorted"
    );
    let source = |p: &Path| kb.source(p).map(|s| s.text.as_str());
    let rule_summary = |id: &str| errata_check::rule_info(id).map(|r| r.summary);
    let cx = Context {
        files: kb.sources().len(),
        source: &source,
        rule_summary: &rule_summary,
        color: false,
    };
    for format in [Format::Human, Format::Json, Format::Sarif, Format::Github] {
        let out = errata_report::render(format, &diagnostics, &cx);
        if matches!(format, Format::Json | Format::Sarif) {
            serde_json::from_str::<serde_json::Value>(&out)
                .unwrap_or_else(|e| panic!("{format:?} output is not JSON: {e}"));
        }
    }
}
