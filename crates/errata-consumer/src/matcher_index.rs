//! `entries.index.json`: what the matcher learns from each entry's regex (its
//! specificity and required literal sets, [`errata_matcher::Analysis`]), computed when the
//! bundle is written so that opening it parses none of the regexes.
//!
//! Analysing 10,000 regexes was a third of the CPU time of opening a bundle of that size
//! for matching. The member is derived data: `errata bundle verify` analyses every regex
//! again and compares, a bundle without it (older ones) is analysed when it opens, and
//! one written by another [`errata_matcher::ANALYSIS_VERSION`] is ignored.

use std::collections::HashMap;

use errata_matcher::{ANALYSIS_VERSION, Analysis};
use serde::{Deserialize, Serialize};

/// The member's path: sorted before `entries.json`, so that a reader that stops after
/// the entries has it.
pub const ENTRIES_INDEX: &str = "entries.index.json";

#[derive(Serialize, Deserialize)]
struct File {
    /// [`ANALYSIS_VERSION`] of the program that wrote it.
    analysis_version: u32,
    /// One per distinct regex that has required literals, sorted by regex.
    patterns: Vec<Record>,
}

#[derive(Serialize, Deserialize)]
struct Record {
    regex: String,
    specificity: u32,
    sets: Vec<Vec<Literal>>,
}

/// A literal as text when it is UTF-8 (nearly always), else as its bytes.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum Literal {
    Text(String),
    Bytes(Vec<u8>),
}

impl Literal {
    fn new(bytes: Vec<u8>) -> Literal {
        match String::from_utf8(bytes) {
            Ok(text) => Literal::Text(text),
            Err(e) => Literal::Bytes(e.into_bytes()),
        }
    }

    fn into_bytes(self) -> Vec<u8> {
        match self {
            Literal::Text(text) => text.into_bytes(),
            Literal::Bytes(bytes) => bytes,
        }
    }
}

/// The member for these regexes (an entry's, in any order, repeats allowed): the same
/// bytes for the same set of regexes. A regex that does not parse, or has no required
/// literal, is left out (a reader analyses it itself).
pub fn build<'a>(regexes: impl IntoIterator<Item = &'a str>) -> Vec<u8> {
    let mut distinct: Vec<&str> = regexes.into_iter().collect();
    distinct.sort_unstable();
    distinct.dedup();
    let analysed = Analysis::of_all(&distinct);
    let patterns = distinct
        .into_iter()
        .zip(analysed)
        .filter_map(|(regex, analysis)| {
            let Analysis { specificity, sets } = analysis.ok()?;
            (!sets.is_empty()).then(|| Record {
                regex: regex.to_string(),
                specificity,
                sets: sets
                    .into_iter()
                    .map(|set| set.into_iter().map(Literal::new).collect())
                    .collect(),
            })
        })
        .collect();
    let file = File {
        analysis_version: ANALYSIS_VERSION,
        patterns,
    };
    // Serialising plain structs of strings and numbers does not fail.
    serde_json::to_vec(&file).unwrap_or_default()
}

/// The analyses the member holds, by regex; `None` when it was written by another
/// analysis version or does not parse (the reader then analyses every regex itself).
pub fn read(bytes: &[u8]) -> Option<HashMap<String, Analysis>> {
    let file: File = serde_json::from_slice(bytes).ok()?;
    (file.analysis_version == ANALYSIS_VERSION).then(|| {
        file.patterns
            .into_iter()
            .map(|r| {
                let sets = r
                    .sets
                    .into_iter()
                    .map(|set| set.into_iter().map(Literal::into_bytes).collect())
                    .collect();
                (
                    r.regex,
                    Analysis {
                        specificity: r.specificity,
                        sets,
                    },
                )
            })
            .collect()
    })
}

/// What is wrong with the member, checked against a fresh analysis of each regex it
/// holds: one line per regex whose stored analysis differs (for `errata bundle verify`).
pub fn problems(bytes: &[u8]) -> Vec<String> {
    let Ok(file) = serde_json::from_slice::<File>(bytes) else {
        return vec!["is not a matcher index".into()];
    };
    if file.analysis_version != ANALYSIS_VERSION {
        // Written by another version: readers ignore it, so it cannot mislead them.
        return Vec::new();
    }
    let Some(stored) = read(bytes) else {
        return vec!["is not a matcher index".into()];
    };
    let mut regexes: Vec<&String> = stored.keys().collect();
    regexes.sort_unstable();
    let fresh = Analysis::of_all(&regexes.iter().map(|r| r.as_str()).collect::<Vec<_>>());
    regexes
        .into_iter()
        .zip(fresh)
        .filter(|(regex, fresh)| fresh.as_ref().ok() != stored.get(*regex))
        .map(|(regex, _)| format!("the analysis of regex {regex:?} is not what the regex says"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The member round-trips every analysis, says the same thing whatever the order of
    /// its input, leaves out what a reader must analyse itself, and is refused when
    /// another analysis version wrote it.
    #[test]
    fn the_member_holds_each_regexs_analysis() {
        let regexes = [
            "CUDA error: out of memory",
            r"(?i)illegal\s+address",
            r"\d+",
            "(",
        ];
        let bytes = build(regexes);
        assert_eq!(bytes, build(regexes.iter().rev().copied()));
        let stored = read(&bytes).expect("readable");
        assert_eq!(stored.len(), 2, "{:?}", stored.keys());
        for regex in &regexes[..2] {
            assert_eq!(
                stored.get(*regex),
                Some(&Analysis::of(regex).expect("parses"))
            );
        }
        assert!(problems(&bytes).is_empty());

        let text = String::from_utf8(bytes).expect("utf-8");
        let wrong = text.replacen("memory", "mem0ry", 1);
        assert_eq!(problems(wrong.as_bytes()).len(), 1, "{wrong}");
        let other = text.replacen(
            &format!("\"analysis_version\":{ANALYSIS_VERSION}"),
            "\"analysis_version\":0",
            1,
        );
        assert!(read(other.as_bytes()).is_none());
        assert_eq!(problems(b"[]"), ["is not a matcher index"]);
    }
}
