//! `duplicate-text` (warning): a sentence of a root cause, dead end or workaround is repeated verbatim in another entry.
//!
//! Each entry is written for its error. A sentence copied from another entry ("Restart
//! the process and check your kernels for out-of-bounds accesses in every place they
//! index memory.") is template text: it fits both errors, and so tells the reader of
//! neither what is specific to theirs. The rule compares the sentences of `root_cause`,
//! `root_cause_zh`, each dead end's `action` and `why_fails`, and each workaround's
//! `action`, `how` and `workarounds_zh` across all entries, ignoring case, spacing and
//! closing punctuation. Short sentences (under 6 words, or 12 characters of Chinese)
//! are not compared: "Restart the process." may well be right for many errors.
//!
//! Every copy is reported, each naming another entry with the sentence: either file may
//! be the one a pull request changed. Say what is true of this error instead: which call
//! returns it, in which situation, and what this error's reader should do.

use std::collections::BTreeSet;

use errata_model::{Anchor, Diagnostic, Entry};

use super::diag;
use crate::context::Ctx;
use crate::prose::{self, Field};
use crate::text::is_han;

const RULE: &str = "duplicate-text";
/// Sentences shorter than this (English words) are not compared.
const MIN_WORDS: usize = 6;
/// Sentences with fewer Han characters than this (and too few words) are not compared.
const MIN_HAN: usize = 12;

pub(super) fn corpus(cx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    use rayon::prelude::*;
    // Each entry's sentences, split, normalised and hashed on every core (the costly
    // part), as (hash, index of the field in `prose_fields`). Only the hashes are kept:
    // the 300,000 sentences of a 10,000-entry corpus held as strings were a fifth of
    // the check's fresh memory. Each is normalised into one buffer per entry.
    let per_entry: Vec<Vec<(u64, usize)>> = cx
        .kb
        .entries
        .par_iter()
        .map(|doc| {
            let Some(e) = &doc.entry else {
                return Vec::new();
            };
            let mut buf = String::new();
            let mut hashes = Vec::new();
            for (f, (_, text)) in prose_fields(e).enumerate() {
                for_each_sentence(text, &mut buf, |s| hashes.push((hash(s), f)));
            }
            hashes
        })
        .collect();
    // Every (hash, entry, field), sorted on every core: equal sentences end up side by
    // side. A group whose entries differ is then compared by text, which the few
    // sentences that really repeat (and any hash collision) need.
    let mut all: Vec<(u64, usize, usize)> =
        Vec::with_capacity(per_entry.iter().map(Vec::len).sum());
    for (i, hashes) in per_entry.into_iter().enumerate() {
        all.extend(hashes.into_iter().map(|(h, f)| (h, i, f)));
    }
    all.par_sort_unstable();
    // Each field that shares a sentence with another entry, naming the first other entry
    // (several shared sentences of one field with one entry are one finding). Every
    // copy is reported, not only the later one: either may be the file that changed.
    let mut found: BTreeSet<(usize, usize, usize)> = BTreeSet::new();
    for group in all.chunk_by(|a, b| a.0 == b.0) {
        if group.iter().all(|&(_, i, _)| i == group[0].1) {
            continue;
        }
        let mut texts: Vec<(String, usize, usize)> = Vec::new();
        for &(h, i, f) in group {
            let Some(text) = cx.kb.entries[i]
                .entry
                .as_ref()
                .and_then(|e| prose_fields(e).nth(f))
                .map(|(_, t)| t)
            else {
                continue;
            };
            let mut buf = String::new();
            for_each_sentence(text, &mut buf, |s| {
                if hash(s) == h {
                    texts.push((s.to_string(), i, f));
                }
            });
        }
        texts.sort_unstable();
        texts.dedup();
        for same in texts.chunk_by(|a, b| a.0 == b.0) {
            for (_, i, f) in same {
                if let Some((_, other, _)) = same.iter().find(|(_, j, _)| j != i) {
                    found.insert((*i, *f, *other));
                }
            }
        }
    }
    let mut reported: BTreeSet<(usize, usize)> = BTreeSet::new();
    for (i, f, other) in &found {
        if !reported.insert((*i, *f)) {
            continue;
        }
        let (Some(doc), Some(original)) =
            (cx.kb.entries.get(*i), cx.kb.entries[*other].entry.as_ref())
        else {
            continue;
        };
        let Some(pointer) = doc
            .entry
            .as_ref()
            .and_then(|e| prose_fields(e).nth(*f))
            .map(|(field, _)| field.pointer())
        else {
            continue;
        };
        out.push(
            diag(
                RULE,
                &doc.path,
                Anchor::Value(pointer),
                format!("a sentence here is also in `{}`", original.id),
            )
            .with_help("write what is specific to this error (which call returns it, when, and what to do) instead of reusing another entry's text"),
        );
    }
}

/// The prose fields the rule compares (its doc comment lists them), in
/// [`prose::prose_fields`]' order: a field is named by its position among them.
fn prose_fields(e: &Entry) -> impl Iterator<Item = (Field, &str)> {
    prose::prose_fields(e).filter(|(field, _)| match field {
        Field::DeadEnd(_, key) | Field::Workaround(_, key) => *key != "condition",
        Field::DeadEndZh(_) => false,
        Field::RootCause | Field::RootCauseZh | Field::WorkaroundZh(_) => true,
    })
}

fn hash(s: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

/// Calls `each` with the sentences of `text` long enough to compare, normalised (in
/// `buf`): lower case, runs of white space as one space, closing punctuation dropped. A
/// sentence ends at `.`, `!` or `?` followed by white space and a character that is not a
/// lower-case letter ("e.g. cudaMalloc" goes on), at `。！？；`, and at a line break.
fn for_each_sentence(text: &str, buf: &mut String, mut each: impl FnMut(&str)) {
    let mut start = 0;
    for (k, c) in text.char_indices() {
        let end = k + c.len_utf8();
        let ends = match c {
            '。' | '！' | '？' | '；' | '\n' => true,
            '.' | '!' | '?' => {
                let mut rest = text[end..].chars();
                match rest.next() {
                    None => true,
                    Some(w) if w.is_whitespace() => rest
                        .find(|c| !c.is_whitespace())
                        .is_none_or(|n| !n.is_lowercase()),
                    Some(_) => false,
                }
            }
            _ => false,
        };
        if ends {
            if normalise(buf, &text[start..end]) {
                each(buf);
            }
            start = end;
        }
    }
    if normalise(buf, &text[start..]) {
        each(buf);
    }
}

/// Writes the normalised form of the sentence `raw` into `buf`; false (and `buf`
/// undefined) when it is too short to compare.
fn normalise(buf: &mut String, raw: &str) -> bool {
    buf.clear();
    let mut words = 0;
    for word in raw.split_whitespace() {
        if words > 0 {
            buf.push(' ');
        }
        buf.push_str(word);
        words += 1;
    }
    if words < MIN_WORDS && raw.chars().filter(|&c| is_han(c)).count() < MIN_HAN {
        return false;
    }
    // Most sentences are ASCII, lower-cased in place; `to_lowercase` knows the rest
    // (a final sigma, for one).
    if buf.is_ascii() {
        buf.make_ascii_lowercase();
    } else {
        *buf = buf.to_lowercase();
    }
    let kept = buf
        .trim_end_matches(['.', '!', '?', '。', '！', '？', '；', ':', '：'])
        .len();
    buf.truncate(kept);
    true
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    fn sentences(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        super::for_each_sentence(text, &mut String::new(), |s| out.push(s.to_string()));
        out
    }

    fn two(a: serde_json::Value, b: serde_json::Value) -> Vec<errata_model::Diagnostic> {
        only(
            check_files(&[
                ("signatures/cuda/a.json", serde_json::to_string(&a).unwrap()),
                ("signatures/cuda/b.json", serde_json::to_string(&b).unwrap()),
            ]),
            "duplicate-text",
        )
    }

    #[test]
    fn sentences_split_where_a_reader_would() {
        assert_eq!(
            sentences(
                "Run it with CUDA_LAUNCH_BLOCKING=1 set, e.g. in the shell. Then read the trace it prints on stderr!"
            ),
            vec![
                "run it with cuda_launch_blocking=1 set, e.g. in the shell",
                "then read the trace it prints on stderr"
            ]
        );
        // Short sentences are not compared; Chinese splits at 。
        assert_eq!(sentences("Restart it. Then retry."), Vec::<String>::new());
        assert_eq!(
            sentences("内核启动是异步的，所以错误通常由之后的调用报告。重启。").len(),
            1
        );
    }

    #[test]
    fn a_copied_workaround_sentence_is_reported_in_both_entries() {
        let mut a = valid_entry("cuda/a");
        let mut b = valid_entry("cuda/b");
        let shared = "Check every cudaMalloc return value before the pointer reaches a kernel.";
        a["workarounds"][0]["how"] = format!("Bound-check the index first. {shared}").into();
        b["root_cause"] =
            "The device pointer was never allocated by the process that used it.".into();
        b["workarounds"][0]["how"] = format!("{}  ", shared.to_uppercase()).into();
        let mut found = two(a, b);
        found.sort_by(|x, y| x.file.cmp(&y.file));
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(found[0].file.ends_with("a.json"));
        assert!(
            found[0].message.contains("`cuda/b`"),
            "{}",
            found[0].message
        );
        assert!(found[1].file.ends_with("b.json"));
        assert!(
            found[1].message.contains("`cuda/a`"),
            "{}",
            found[1].message
        );
        for d in &found {
            assert_eq!(d.pointer(), Some("/workarounds/0/how"));
            assert_eq!(d.severity, errata_model::Severity::Warning);
        }
    }

    #[test]
    fn different_text_and_short_sentences_pass() {
        // valid_entry's texts are short or differ per slug only in the signature.
        let mut a = valid_entry("cuda/a");
        let mut b = valid_entry("cuda/b");
        a["root_cause"] = "The kernel indexes past the end of its input when n is odd.".into();
        b["root_cause"] =
            "The kernel reads a pointer that another stream has already freed.".into();
        a["dead_ends"][0]["why_fails"] = "It hides the race.".into();
        b["dead_ends"][0]["why_fails"] = "It hides the race.".into();
        assert_eq!(two(a, b).len(), 0);
    }

    #[test]
    fn repeated_chinese_is_reported_too() {
        let mut a = valid_entry("cuda/a");
        let mut b = valid_entry("cuda/b");
        let zh = "用计算消毒器运行一次，找到发生非法访问的那个内核和线程。";
        a["workarounds_zh"][0] = zh.into();
        b["workarounds_zh"][0] = format!("先看日志。{zh}").into();
        let found = two(a, b);
        assert_eq!(found.len(), 2, "{found:#?}");
        assert!(
            found
                .iter()
                .all(|d| d.pointer() == Some("/workarounds_zh/0"))
        );
    }
}
