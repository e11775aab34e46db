//! `entries.head.json`: every entry without its advice, so that a bundle opened for
//! matching can start answering before it has read `entries.json`.
//!
//! What the matcher and a match's report need from an entry (id, signature, regex,
//! aliases, tier, error code, operator action, transition graph, affected environments)
//! is about a seventh of its text; the root cause, dead ends and workarounds are the rest.
//! At 10,000 entries, inflating, hashing and splitting the whole of `entries.json` was
//! most of the 177 ms `errata match` took to start. With the heads, a reader opening a
//! bundle for matching types the entries and builds its matcher while `entries.json` is
//! still being inflated, then gives each entry its text from it, once its lines fit the
//! heads (as many, each holding its head's id; `Bundle::open_for_matching`). The member
//! is derived data, laid out like `entries.json` (one entry per line, in the same order):
//! the bundle writer makes it from the entries and `errata bundle verify` makes it again
//! and compares. A bundle without it (older ones) opens by reading `entries.json`, as
//! before.

use serde::{Deserialize, Serialize};

/// The member's path: sorted before `entries.json`, so that a reader can stop before it.
pub const ENTRIES_HEAD: &str = "entries.head.json";

/// The typed part of an entry ([`crate::Entry`]'s public fields), as read from an entry
/// or from its line of `entries.head.json`.
#[derive(Serialize, Deserialize)]
pub(crate) struct Head {
    pub(crate) id: String,
    pub(crate) signature: String,
    #[serde(default)]
    pub(crate) signature_zh: String,
    pub(crate) regex: String,
    #[serde(default)]
    pub(crate) aliases: Vec<String>,
    #[serde(default)]
    pub(crate) verification_tier: String,
    #[serde(default)]
    pub(crate) error_code: Option<String>,
    #[serde(default)]
    pub(crate) operator_action: Option<String>,
    #[serde(default)]
    pub(crate) transition_graph: Graph,
    #[serde(default)]
    pub(crate) affects: Vec<errata_model::Affect>,
}

#[derive(Serialize, Deserialize, Default)]
pub(crate) struct Graph {
    #[serde(default)]
    pub(crate) leads_to: Vec<String>,
    #[serde(default)]
    pub(crate) preceded_by: Vec<String>,
}

/// The member for these entries (each one's JSON text, in `entries.json`'s order): `[`,
/// one compact head per line (each but the last followed by a comma), `]`. The same
/// bytes for the same entries.
pub fn build<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = b"[".to_vec();
    let mut first = true;
    for text in entries {
        let head: Head = serde_json::from_str(text)?;
        out.extend_from_slice(if first { b"\n" } else { b",\n" });
        serde_json::to_writer(&mut out, &head)?;
        first = false;
    }
    out.extend_from_slice(if first { b"]\n" } else { b"\n]\n" });
    Ok(out)
}

/// What is wrong with `head` as the `entries.head.json` of `entries_json` (empty when it
/// is exactly what [`build`] makes of those entries): what `errata bundle verify` reports.
pub fn problems(head: &[u8], entries_json: &[u8]) -> Vec<String> {
    let Ok(text) = std::str::from_utf8(entries_json) else {
        return vec!["cannot be checked: entries.json is not UTF-8".into()];
    };
    let spans = match crate::bundle::element_spans(text) {
        Ok(spans) => spans,
        Err(e) => return vec![format!("cannot be checked: {e}")],
    };
    let expected = match build(spans.iter().map(|s| &text[s.clone()])) {
        Ok(expected) => expected,
        Err(e) => return vec![format!("cannot be checked: an entry does not read: {e}")],
    };
    if expected == head {
        return Vec::new();
    }
    // Name the first entry whose head differs (line 0 is the opening bracket; the comma
    // after a head only says that another follows).
    let line = |l: &[u8]| l.strip_suffix(b",").unwrap_or(l).to_vec();
    let differs = expected
        .split(|&b| b == b'\n')
        .zip(head.split(|&b| b == b'\n'))
        .position(|(a, b)| line(a) != line(b));
    let lines = |bytes: &[u8]| bytes.split(|&b| b == b'\n').count();
    match differs {
        Some(line) if line >= 1 && line <= spans.len() => {
            let id = serde_json::from_str::<Head>(&text[spans[line - 1].clone()])
                .map_or_else(|_| String::new(), |h| h.id);
            vec![format!(
                "entry #{} (`{id}`) differs from its entry in entries.json",
                line - 1
            )]
        }
        _ if lines(head) != lines(&expected) => vec![format!(
            "holds {} lines where the {} entries of entries.json make {}",
            lines(head),
            spans.len(),
            lines(&expected)
        )],
        _ => vec!["differs from what the entries of entries.json make".into()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENTRY: &str = r#"{"id":"cuda/x","signature":"boom","regex":"boom","root_cause":"why","aliases":["bang"],"transition_graph":{"leads_to":["cuda/y"]},"dead_ends":[],"workarounds":[]}"#;

    #[test]
    fn the_head_is_the_entry_without_its_advice_and_verifies() {
        let other = ENTRY.replace("cuda/x", "cuda/y");
        let head = build([ENTRY, other.as_str()]).expect("build");
        let text = String::from_utf8(head.clone()).expect("utf-8");
        assert!(text.starts_with("[\n{\"id\":\"cuda/x\""), "{text}");
        assert!(text.ends_with("}\n]\n"), "{text}");
        assert_eq!(text.lines().count(), 4);
        assert!(!text.contains("root_cause"), "{text}");
        assert!(text.contains(r#""aliases":["bang"]"#), "{text}");
        assert_eq!(build([]).expect("none"), b"[]\n");

        let entries_json = format!("[\n{ENTRY},\n{other}\n]\n");
        assert!(problems(&head, entries_json.as_bytes()).is_empty());
        // Any layout of entries.json checks the same.
        let compact = format!("[{ENTRY},{other}]");
        assert!(problems(&head, compact.as_bytes()).is_empty());

        let changed = text.replace(r#"["bang"]"#, r#"["bong"]"#);
        assert_eq!(
            problems(changed.as_bytes(), entries_json.as_bytes()),
            ["entry #0 (`cuda/x`) differs from its entry in entries.json"]
        );
        let short = build([ENTRY]).expect("one");
        let got = problems(&short, entries_json.as_bytes());
        assert_eq!(got.len(), 1);
        assert!(got[0].contains("`cuda/y`"), "{got:?}");
        let got = problems(b"[]\n", b"not json");
        assert!(got[0].starts_with("cannot be checked"), "{got:?}");
    }
}
