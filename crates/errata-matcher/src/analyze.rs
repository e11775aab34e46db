//! What the matcher learns from a regex's syntax tree before compiling it.
//!
//! Three things, all computed on the [`Hir`] that `regex-syntax` parses:
//!
//! - [`line_bound`]: the same regex with `\n` removed from every class and literal, so
//!   that no match can cross a line. The matcher then searches a whole chunk of a log at
//!   once and still reports exactly what a line-by-line search would (like `grep`).
//! - [`required_literal_sets`]: small sets of strings such that every match contains
//!   one string of *each* set (`kernel\s+failed\s+\[E0*42\]` gives `kernel`, `failed`
//!   and `42]`). The matcher triggers on the most selective set and confirms the others
//!   before running the regex; a regex with none always runs.
//! - [`specificity`]: how many characters a match must spell out literally, the main key
//!   of the ranking (a longer fixed text names a more specific error).

use regex_syntax::hir::{
    Class, ClassBytes, ClassBytesRange, ClassUnicode, ClassUnicodeRange, Hir, HirKind, Look,
};

/// A prefilter literal shorter than this would fire on too many lines to be worth it.
pub(crate) const MIN_LITERAL_LEN: usize = 3;
/// More alternatives than this and the literal set stops being a useful filter.
const MAX_LITERALS: usize = 64;

/// The regex with `\n` made unmatchable: classes lose it, literals containing it fail.
pub(crate) fn line_bound(hir: Hir) -> Hir {
    match hir.into_kind() {
        HirKind::Literal(lit) if lit.0.contains(&b'\n') => Hir::fail(),
        HirKind::Literal(lit) => Hir::literal(lit.0),
        HirKind::Class(Class::Unicode(mut c)) => {
            c.difference(&ClassUnicode::new([ClassUnicodeRange::new('\n', '\n')]));
            Hir::class(Class::Unicode(c))
        }
        HirKind::Class(Class::Bytes(mut c)) => {
            c.difference(&ClassBytes::new([ClassBytesRange::new(b'\n', b'\n')]));
            Hir::class(Class::Bytes(c))
        }
        HirKind::Repetition(mut rep) => {
            rep.sub = Box::new(line_bound(*rep.sub));
            Hir::repetition(rep)
        }
        HirKind::Capture(mut cap) => {
            cap.sub = Box::new(line_bound(*cap.sub));
            Hir::capture(cap)
        }
        HirKind::Concat(subs) => Hir::concat(subs.into_iter().map(line_bound).collect()),
        HirKind::Alternation(subs) => Hir::alternation(subs.into_iter().map(line_bound).collect()),
        kind @ (HirKind::Empty | HirKind::Look(_)) => match kind {
            HirKind::Look(look) => Hir::look(ascii_word(look)),
            _ => Hir::empty(),
        },
    }
}

/// A word boundary judged on ASCII: a log's error names are ASCII, and a Unicode word
/// boundary costs a table lookup per character on every line the regex runs on (a
/// quarter of all matching time, measured). The two differ only next to a non-ASCII
/// letter: `CUDA错误` has an ASCII boundary after `CUDA` (so `\bCUDA\b` finds it), and
/// none in Unicode.
fn ascii_word(look: Look) -> Look {
    match look {
        Look::WordUnicode => Look::WordAscii,
        Look::WordUnicodeNegate => Look::WordAsciiNegate,
        Look::WordStartUnicode => Look::WordStartAscii,
        Look::WordEndUnicode => Look::WordEndAscii,
        Look::WordStartHalfUnicode => Look::WordStartHalfAscii,
        Look::WordEndHalfUnicode => Look::WordEndHalfAscii,
        other => other,
    }
}

/// The number of characters every match spells out literally: literals count their
/// characters, a case-insensitive letter (`[Aa]`) counts one, any wider class or
/// assertion counts nothing, a repetition counts its minimum, an alternation its weakest
/// branch.
pub(crate) fn specificity(hir: &Hir) -> u32 {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => 0,
        HirKind::Literal(lit) => String::from_utf8_lossy(&lit.0).chars().count() as u32,
        HirKind::Class(class) => u32::from(class_letter(class).is_some()),
        HirKind::Repetition(rep) => rep.min.min(1_000).saturating_mul(specificity(&rep.sub)),
        HirKind::Capture(cap) => specificity(&cap.sub),
        HirKind::Concat(subs) => subs.iter().map(specificity).fold(0, u32::saturating_add),
        HirKind::Alternation(subs) => subs.iter().map(specificity).min().unwrap_or(0),
    }
}

/// A set of strings (ASCII lower-cased: the prefilter ignores ASCII case).
pub(crate) type LiteralSet = Vec<Vec<u8>>;

/// Independent requirements of `hir`: every match contains one string of each set. Only
/// useful sets are kept (every string at least [`MIN_LITERAL_LEN`] bytes), sorted and
/// without repeats; empty when nothing useful is known.
pub(crate) fn required_literal_sets(hir: &Hir) -> Vec<LiteralSet> {
    let mut sets = Vec::new();
    collect_required(hir, &mut sets);
    sets.retain(|set| quality(set) >= MIN_LITERAL_LEN);
    sets.sort();
    sets.dedup();
    sets
}

/// Pushes every requirement found in `hir`: the pieces of a concatenation are each
/// required, so each contributes its own set.
fn collect_required(hir: &Hir, out: &mut Vec<LiteralSet>) {
    if let Some(set) = exact(hir) {
        out.push(set);
        return;
    }
    match hir.kind() {
        HirKind::Repetition(rep) if rep.min >= 1 => collect_required(&rep.sub, out),
        HirKind::Capture(cap) => collect_required(&cap.sub, out),
        HirKind::Alternation(_) => out.extend(required(hir)),
        HirKind::Concat(subs) => {
            // Runs of adjacent exactly-known pieces multiply into literals ("CUDA" then
            // "[Ee]rror" gives "cuda error"); a piece that is not exact ends the run.
            let mut run: Option<LiteralSet> = None;
            for sub in subs {
                match exact(sub) {
                    Some(set) => {
                        run = Some(match run.take() {
                            None => set,
                            Some(prefix) => product(&prefix, &set).unwrap_or_else(|| {
                                out.push(prefix);
                                set
                            }),
                        });
                    }
                    None => {
                        out.extend(run.take());
                        collect_required(sub, out);
                    }
                }
            }
            out.extend(run);
        }
        _ => {}
    }
}

/// The shortest literal of a set: the prefilter is only as selective as that.
fn quality(set: &[Vec<u8>]) -> usize {
    set.iter().map(Vec::len).min().unwrap_or(0)
}

fn better(a: Option<Vec<Vec<u8>>>, b: Option<Vec<Vec<u8>>>) -> Option<Vec<Vec<u8>>> {
    match (a, b) {
        (Some(a), Some(b)) => {
            let (qa, qb) = (quality(&a), quality(&b));
            Some(if qb > qa || (qb == qa && b.len() < a.len()) {
                b
            } else {
                a
            })
        }
        (a, b) => a.or(b),
    }
}

fn required(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    if let Some(set) = exact(hir) {
        return Some(set);
    }
    match hir.kind() {
        HirKind::Repetition(rep) if rep.min >= 1 => required(&rep.sub),
        HirKind::Capture(cap) => required(&cap.sub),
        HirKind::Alternation(subs) => {
            let mut all = Vec::new();
            for sub in subs {
                let set = required(sub)?;
                all.extend(set);
            }
            normalize(all)
        }
        HirKind::Concat(subs) => {
            // Runs of adjacent exactly-known pieces multiply into literals ("CUDA" then
            // "[Ee]rror" gives "cuda error"); a piece that is not exact ends the run and
            // may itself contribute a requirement. The best candidate wins.
            let mut best = None;
            let mut run: Option<Vec<Vec<u8>>> = None;
            for sub in subs {
                match exact(sub) {
                    Some(set) => {
                        run = Some(match run.take() {
                            None => set,
                            Some(prefix) => match product(&prefix, &set) {
                                Some(p) => p,
                                None => {
                                    best = better(best, Some(prefix));
                                    set
                                }
                            },
                        });
                    }
                    None => {
                        best = better(best, run.take());
                        best = better(best, required(sub));
                    }
                }
            }
            better(best, run)
        }
        _ => None,
    }
}

/// The complete set of strings `hir` can match, when it is small and known exactly.
fn exact(hir: &Hir) -> Option<Vec<Vec<u8>>> {
    match hir.kind() {
        HirKind::Empty => Some(vec![Vec::new()]),
        HirKind::Literal(lit) => Some(vec![lit.0.to_ascii_lowercase()]),
        HirKind::Class(class) => class_letter(class).map(|c| vec![c]),
        HirKind::Capture(cap) => exact(&cap.sub),
        HirKind::Repetition(rep) if Some(rep.min) == rep.max && rep.min <= 16 => {
            let sub = exact(&rep.sub)?;
            let mut acc = vec![Vec::new()];
            for _ in 0..rep.min {
                acc = product(&acc, &sub)?;
            }
            Some(acc)
        }
        HirKind::Concat(subs) => {
            let mut acc = vec![Vec::new()];
            for sub in subs {
                acc = product(&acc, &exact(sub)?)?;
            }
            Some(acc)
        }
        HirKind::Alternation(subs) => {
            let mut all = Vec::new();
            for sub in subs {
                all.extend(exact(sub)?);
            }
            normalize(all)
        }
        _ => None,
    }
}

fn product(a: &[Vec<u8>], b: &[Vec<u8>]) -> Option<Vec<Vec<u8>>> {
    if a.len().saturating_mul(b.len()) > MAX_LITERALS {
        return None;
    }
    let mut out = Vec::with_capacity(a.len() * b.len());
    for x in a {
        for y in b {
            let mut s = x.clone();
            s.extend_from_slice(y);
            out.push(s);
        }
    }
    normalize(out)
}

fn normalize(mut set: Vec<Vec<u8>>) -> Option<Vec<Vec<u8>>> {
    set.sort();
    set.dedup();
    (set.len() <= MAX_LITERALS).then_some(set)
}

/// A class that is one character, or one ASCII letter in both cases (`(?i)a` is `[Aa]`),
/// as the lower-case bytes the prefilter searches for. Wider case folds (`(?i)k` also
/// matches the Kelvin sign) are not letters here: the ASCII-only prefilter would miss
/// them.
fn class_letter(class: &Class) -> Option<Vec<u8>> {
    match class {
        Class::Unicode(c) => {
            let chars: Vec<char> = c.iter().flat_map(|r| r.start()..=r.end()).take(3).collect();
            match chars.as_slice() {
                [one] => Some(one.to_string().to_ascii_lowercase().into_bytes()),
                [a, b] if a.is_ascii_alphabetic() && a.eq_ignore_ascii_case(b) => {
                    Some(vec![a.to_ascii_lowercase() as u8])
                }
                _ => None,
            }
        }
        Class::Bytes(c) => {
            let bytes: Vec<u8> = c.iter().flat_map(|r| r.start()..=r.end()).take(3).collect();
            match bytes.as_slice() {
                [one] => Some(vec![one.to_ascii_lowercase()]),
                [a, b] if a.is_ascii_alphabetic() && a.eq_ignore_ascii_case(b) => {
                    Some(vec![a.to_ascii_lowercase()])
                }
                _ => None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(p: &str) -> Hir {
        regex_syntax::parse(p).unwrap()
    }

    fn sets(p: &str) -> Vec<Vec<String>> {
        required_literal_sets(&parse(p))
            .into_iter()
            .map(|set| {
                set.into_iter()
                    .map(|l| String::from_utf8(l).unwrap())
                    .collect()
            })
            .collect()
    }

    #[test]
    fn every_required_piece_is_its_own_set() {
        assert_eq!(
            sets("CUDA error: out of memory"),
            [["cuda error: out of memory"]]
        );
        assert_eq!(
            sets(r"Tried to allocate \d+ MiB"),
            [vec![" mib"], vec!["tried to allocate "]]
        );
        assert_eq!(sets(r"^.*device-side assert.*$"), [["device-side assert"]]);
        assert_eq!(sets("(?i)cuda error"), [["cuda error"]]);
        assert_eq!(sets("(out of|no) memory"), [["no memory", "out of memory"]]);
        assert_eq!(
            sets(r"kernel\s+failed\s+\[E0*42\]"),
            [vec!["42]"], vec!["failed"], vec!["kernel"]]
        );
        assert_eq!(
            sets(r"(?:CUDA error: )?kernel failed"),
            [["kernel failed"]],
            "an optional piece is not required"
        );
        assert!(sets(r"\d+\s+\w+").is_empty());
        assert!(
            sets("ab.*cd").is_empty(),
            "two-byte literals are too weak to filter on"
        );
        assert_eq!(sets("非法内存访问"), [["非法内存访问"]]);
    }

    #[test]
    fn specificity_counts_literal_characters() {
        assert_eq!(specificity(&parse("CUDA error")), 10);
        assert_eq!(specificity(&parse("(?i)CUDA error")), 10);
        assert_eq!(specificity(&parse(r"CUDA error: .*")), 12);
        assert_eq!(specificity(&parse("(foo|ba)r")), 3);
        assert_eq!(specificity(&parse("x{3}")), 3);
        assert_eq!(specificity(&parse("内存")), 2);
    }

    #[test]
    fn line_bound_regexes_never_match_a_newline() {
        let re = regex::Regex::new(&line_bound(parse(r"a\s+b")).to_string()).unwrap();
        assert!(re.is_match("a  b"));
        assert!(!re.is_match("a\nb"));
        let re = regex::Regex::new(&line_bound(parse(r"(?s)a.b|x\ny")).to_string()).unwrap();
        assert!(re.is_match("a-b"));
        assert!(!re.is_match("a\nb"));
        assert!(!re.is_match("x\ny"));
    }
}
