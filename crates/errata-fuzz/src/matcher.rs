//! The multi-regex matcher on hostile regexes and lines.

use std::collections::BTreeSet;

use errata_matcher::{Match, Matcher, Pattern, REGEX_SIZE_LIMIT, Via};
use regex::bytes::{Regex, RegexBuilder};

/// At most this many patterns per input: enough for the prefilter to share literals
/// between patterns, few enough to keep an input fast.
const MAX_PATTERNS: usize = 8;

/// The input (UTF-8, lossily) is patterns, a blank line, then a log: one pattern per
/// line, `regex<TAB>alias<TAB>alias…`. Compiles them and scans the log.
///
/// Invariants: compiling never fails as a whole for bad patterns (each is reported by
/// index, and never matches); every match lies on one line of the log, with the right
/// line number, at most once per pattern and line; and the matcher agrees with the
/// `regex` crate line by line: a pattern is reported on a line exactly when its regex
/// (multi-line, CRLF-aware, as the matcher parses it) or one of its aliases (ASCII case
/// ignored) occurs there, and a regex match has the span `regex` finds.
pub fn matcher(data: &[u8]) {
    let input = String::from_utf8_lossy(data);
    let (head, log) = input.split_once("\n\n").unwrap_or((&input, ""));
    let patterns: Vec<Pattern> = head
        .split('\n')
        .take(MAX_PATTERNS)
        .map(|line| {
            let mut parts = line.split('\t');
            let regex = parts.next().unwrap_or_default();
            Pattern::new(regex).with_aliases(parts)
        })
        .collect();
    let Ok((matcher, errors)) = Matcher::build(&patterns) else {
        return;
    };
    let failed: BTreeSet<usize> = errors.iter().map(|(i, _)| *i).collect();
    assert!(failed.iter().all(|&i| i < patterns.len()));
    assert_eq!(
        failed.len(),
        errors.len(),
        "each bad pattern is reported once"
    );

    let mut found: Vec<Match> = Vec::new();
    matcher.scan(log.as_bytes(), |m| found.push(m.clone()));
    let mut again = Vec::new();
    matcher.scan(log.as_bytes(), |m| again.push(m.clone()));
    assert_eq!(found, again, "scanning is deterministic");

    let lines: Vec<(usize, &str)> = line_starts(log);
    let mut reported = BTreeSet::new();
    let mut last_line = 0;
    for m in &found {
        assert!(
            m.pattern < patterns.len() && !failed.contains(&m.pattern),
            "{m:?}"
        );
        assert!(m.line >= last_line, "lines in order");
        last_line = m.line;
        let (start, line) = *lines.get(m.line).expect("a match is on a line of the log");
        assert!(
            m.span.start >= start && m.span.end <= start + line.len(),
            "{m:?} is not inside line {} {line:?}",
            m.line
        );
        assert!(
            reported.insert((m.line, m.pattern)),
            "one match per pattern and line"
        );
        let matched = &log.as_bytes()[m.span.clone()];
        match m.via {
            Via::Alias(a) => {
                let alias = patterns[m.pattern].aliases.get(a).expect("an alias index");
                assert!(matched.eq_ignore_ascii_case(alias.as_bytes()), "{m:?}");
            }
            Via::Regex => {
                if let Some(re) = oracle(&patterns[m.pattern].regex) {
                    let expected = re
                        .find(line.as_bytes())
                        .map(|f| start + f.start()..start + f.end());
                    assert_eq!(Some(m.span.clone()), expected, "regex {:?}", re.as_str());
                }
            }
        }
    }

    for (p, pattern) in patterns.iter().enumerate() {
        if failed.contains(&p) {
            continue;
        }
        let re = oracle(&pattern.regex);
        let aliases: Vec<Vec<u8>> = pattern
            .aliases
            .iter()
            .filter(|a| !a.trim().is_empty() && !a.contains('\n'))
            .map(|a| a.as_bytes().to_ascii_lowercase())
            .collect();
        for (n, (_, line)) in lines.iter().enumerate() {
            let lowered = line.as_bytes().to_ascii_lowercase();
            let by_alias = aliases
                .iter()
                .any(|a| lowered.windows(a.len()).any(|w| w == a.as_slice()));
            let Some(by_regex) = re.as_ref().map(|re| re.is_match(line.as_bytes())) else {
                continue;
            };
            assert_eq!(
                reported.contains(&(n, p)),
                by_regex || by_alias,
                "pattern {p} {pattern:?} on line {n} {line:?}: regex matches {by_regex}, an alias {by_alias}"
            );
        }
    }
}

/// The pattern as the `regex` crate reads it with the matcher's flags, when it compiles
/// within a budget like the matcher's.
fn oracle(pattern: &str) -> Option<Regex> {
    RegexBuilder::new(pattern)
        .multi_line(true)
        .crlf(true)
        .size_limit(REGEX_SIZE_LIMIT * 4)
        .build()
        .ok()
}

/// Each line of the log (without its `\n`) and its byte offset.
fn line_starts(log: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = 0;
    for line in log.split('\n') {
        out.push((start, line));
        start += line.len() + 1;
    }
    out
}
