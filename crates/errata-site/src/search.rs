//! The offline search index, one per language, loaded by `static/search.js`.
//!
//! Why not pagefind: as a library it resolves to 189 crates (tokio, lol_html, clap,
//! async-compression, an embedded web UI) to index HTML after the fact, and its ranking
//! cannot use what errata knows best: each entry's `regex`. This index is built from the
//! data, costs no dependency, and ranks a pasted error message by (1) entries whose
//! regex matches it, (2) entries whose message it contains, (3) word/bigram scores.
//!
//! Format (`search/<lang>.js`, a script file so it also loads from `file://`):
//! `window.ERRATA_SEARCH = {"docs": [[href, title, summary, kind, signature]],
//! "terms": {token: [doc, weight, doc, weight, …]}, "regexes": [[doc, pattern]]}`.
//!
//! Tokens: lower-case ASCII words of two or more characters, and CJK text as
//! overlapping character bigrams (a lone CJK character is its own token), so Chinese is
//! searchable without a dictionary. `search.js` tokenises queries the same way.

use std::collections::HashMap;

use serde_json::{Value, json};

use crate::pages::Ctx;
use crate::urls::Lang;

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xf900..=0xfaff | 0x3040..=0x30ff | 0xac00..=0xd7af)
}

/// Splits text into search tokens (see the module doc). Must match `search.js`.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    let flush_word = |word: &mut String, out: &mut Vec<String>| {
        if word.chars().count() >= 2 {
            out.push(std::mem::take(word));
        }
        word.clear();
    };
    let flush_cjk = |cjk: &mut Vec<char>, out: &mut Vec<String>| {
        if cjk.len() == 1 {
            out.push(cjk[0].to_string());
        }
        for pair in cjk.windows(2) {
            out.push(pair.iter().collect());
        }
        cjk.clear();
    };
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' {
            flush_cjk(&mut cjk, &mut out);
            word.push(c);
        } else if is_cjk(c) {
            flush_word(&mut word, &mut out);
            cjk.push(c);
        } else {
            flush_word(&mut word, &mut out);
            flush_cjk(&mut cjk, &mut out);
        }
    }
    flush_word(&mut word, &mut out);
    flush_cjk(&mut cjk, &mut out);
    out
}

/// Field weights: what a term in that field is worth.
const W_TITLE: u32 = 8;
const W_CODE: u32 = 8;
const W_TAG: u32 = 4;
const W_BODY: u32 = 1;

struct Builder {
    docs: Vec<Value>,
    /// token → (doc, weight) in doc order (documents are added one after another).
    terms: HashMap<String, Vec<(usize, u32)>>,
    regexes: Vec<Value>,
}

impl Builder {
    fn add(&mut self, doc: usize, text: &str, weight: u32) {
        for tok in tokens(text) {
            let postings = self.terms.entry(tok).or_default();
            match postings.last_mut() {
                // A term is worth its best field: a word repeated in a long body never
                // outweighs the same word in the title.
                Some((d, w)) if *d == doc => *w = (*w).max(weight),
                _ => postings.push((doc, weight)),
            }
        }
    }
}

/// Builds `search/<lang>.js`.
pub(crate) fn build(ctx: &Ctx<'_>, lang: Lang) -> String {
    let zh = lang == Lang::Zh;
    let mut b = Builder {
        docs: Vec::new(),
        terms: HashMap::new(),
        regexes: Vec::new(),
    };
    let kind = |k: &str| ctx.theme.text(lang.code(), &format!("kind_{k}"), &[]);
    for (id, (e, _)) in &ctx.catalog.entries {
        let doc = b.docs.len();
        let title = if zh && !e.signature_zh.trim().is_empty() {
            &e.signature_zh
        } else {
            &e.signature
        };
        let cause = if zh && !e.root_cause_zh.trim().is_empty() {
            &e.root_cause_zh
        } else {
            &e.root_cause
        };
        b.docs.push(json!([
            crate::urls::entry_page(id),
            title,
            crate::pages::truncate(cause, 140),
            kind("entry"),
            normalise(&e.signature),
        ]));
        // The English message is indexed in both languages: people paste it as printed.
        b.add(doc, &e.signature, W_TITLE);
        if zh {
            b.add(doc, &e.signature_zh, W_TITLE);
            b.add(doc, &e.root_cause_zh, W_BODY);
            for w in &e.workarounds_zh {
                b.add(doc, w, W_BODY);
            }
        }
        for alias in &e.aliases {
            b.add(doc, alias, W_TITLE);
        }
        if let Some(code) = &e.error_code {
            b.add(doc, code, W_CODE);
        }
        b.add(doc, id, W_TAG);
        for tag in &e.tags {
            b.add(doc, tag, W_TAG);
        }
        b.add(doc, &e.root_cause, W_BODY);
        for w in &e.workarounds {
            b.add(doc, &w.action, W_BODY);
        }
        if !e.regex.trim().is_empty() {
            b.regexes.push(json!([doc, e.regex]));
        }
    }
    for id in ctx.catalog.articles.keys() {
        let Some(item) = ctx.article_item(id, lang) else {
            continue;
        };
        let doc = b.docs.len();
        b.add(doc, &item.title, W_TITLE);
        b.add(doc, &item.summary, W_BODY);
        if let Some(pair) = ctx.catalog.articles.get(id)
            && let Some(front) = &pair.en.front
        {
            for tag in &front.tags {
                b.add(doc, tag, W_TAG);
            }
            if zh && item.title != pair.title() {
                b.add(doc, pair.title(), W_TITLE);
            }
        }
        b.docs.push(json!([
            item.page,
            item.title,
            item.summary,
            kind("article"),
            ""
        ]));
    }
    // Written by hand rather than through a `Value`: a large corpus has a million
    // postings, and one allocation per number is most of the cost. Tokens are sorted so
    // the file is byte-identical from build to build.
    let mut terms: Vec<(String, Vec<(usize, u32)>)> = b.terms.into_iter().collect();
    terms.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    let mut out = String::with_capacity(1 << 20);
    out.push_str("window.ERRATA_SEARCH = {\"docs\":");
    out.push_str(&serde_json::to_string(&b.docs).unwrap_or_else(|_| "[]".into()));
    out.push_str(",\"terms\":{");
    for (i, (tok, postings)) in terms.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&serde_json::to_string(tok).unwrap_or_else(|_| "\"\"".into()));
        out.push_str(":[");
        for (j, (d, w)) in postings.iter().enumerate() {
            if j > 0 {
                out.push(',');
            }
            out.push_str(&format!("{d},{w}"));
        }
        out.push(']');
    }
    out.push_str("},\"regexes\":");
    out.push_str(&serde_json::to_string(&b.regexes).unwrap_or_else(|_| "[]".into()));
    out.push_str("};\n");
    // JSON is valid JavaScript; escape `<` anyway so the file is inert if ever inlined.
    out.replace('<', "\\u003c")
}

fn normalise(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_file_is_json_after_the_assignment() {
        let theme = crate::theme::Theme::load(None).unwrap();
        let data = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(data.path().join("signatures/cuda")).unwrap();
        std::fs::write(
            data.path().join("signatures/cuda/oom.json"),
            r#"{"id": "cuda/oom", "signature": "CUDA error: out of memory <x>", "signature_zh": "显存不足", "regex": "out of memory"}"#,
        )
        .unwrap();
        let kb = errata_load::KnowledgeBase::load(data.path()).unwrap();
        let catalog = crate::catalog::Catalog::new(&kb);
        let runs = crate::runs::Runs::default();
        let opts = crate::SiteOptions::default();
        let ctx = Ctx {
            theme: &theme,
            opts: &opts,
            catalog: &catalog,
            runs: &runs,
            data_root: &kb.root,
            kb: &kb,
        };
        let js = build(&ctx, Lang::Zh);
        let json = js
            .strip_prefix("window.ERRATA_SEARCH = ")
            .and_then(|s| s.strip_suffix(";\n"))
            .unwrap();
        let v: Value = serde_json::from_str(json).unwrap();
        assert_eq!(v["docs"][0][0], "entries/cuda/oom.html");
        assert_eq!(v["terms"]["显存"], json!([0, W_TITLE]));
        assert_eq!(v["terms"]["memory"], json!([0, W_TITLE]));
        assert_eq!(v["regexes"][0], json!([0, "out of memory"]));
        assert!(!js.contains('<'));
    }

    #[test]
    fn english_words_and_chinese_bigrams() {
        assert_eq!(
            tokens("CUDA error: out_of memory (2)"),
            ["cuda", "error", "out_of", "memory"]
        );
        assert_eq!(
            tokens("非法内存访问"),
            ["非法", "法内", "内存", "存访", "访问"]
        );
        assert_eq!(tokens("显存 OOM"), ["显存", "oom"]);
        assert_eq!(tokens("错"), ["错"]);
    }
}
