//! The offline search index, one per language, split into shards that `static/search.js`
//! loads on demand.
//!
//! Why not pagefind: as a library it resolves to 189 crates (tokio, lol_html, clap,
//! async-compression, an embedded web UI) to index HTML after the fact, and its ranking
//! cannot use what errata knows best: each entry's `regex`. This index is built from the
//! data, costs no dependency, and ranks a pasted error message by (1) entries whose
//! regex matches it, (2) entries whose message it contains, (3) word/bigram scores.
//!
//! Tokens: lower-case ASCII words of two or more characters, and CJK text as
//! overlapping character bigrams (a lone CJK character is its own token), so Chinese is
//! searchable without a dictionary. `search.js` tokenises queries the same way.
//!
//! # Files
//!
//! Every document (entry or article page) has a numeric *key*: the FNV-1a hash of its
//! page path modulo `m`, the next free slot on a collision (slots handed out in page
//! order). Keys depend on the set of pages only, so adding or removing one page leaves
//! every other key as it was (unless it shared a collision chain), and an incremental
//! rebuild rewrites only the shards the change touches.
//!
//! - `search/<lang>/t<k>.js`, term shard `k` (of `shards`): the tokens whose hash
//!   (FNV-1a over code points, also computed by `search.js`) is `k` modulo `shards`:
//!   `ERRATA_SEARCH_SHARD("t",k,["token",[gap,weight,gap,weight,…],…]);` (a flat array
//!   of pairs rather than an object, so no token can collide with `__proto__`), where
//!   the keys of a token's documents are ascending and each is written as its
//!   difference from the previous one (the first as itself)
//! - `search/<lang>/d<k>.js`, document shard `k`: the documents whose key is `k` modulo
//!   `shards`: `ERRATA_SEARCH_SHARD("d",k,{"key":[kind,id,title,summary,sig,regex],…});`
//!   where kind is 0 (entry) or 1 (article), the page is `entries/<id>.html` or
//!   `articles/<id>.html`, and `sig` is the English message (lower case, spaces
//!   collapsed) when it differs from the title so lowered.
//!
//! The search page carries the document count and the shard count (`data-docs`,
//! `data-shards`). A query loads the term shards of its tokens, scores documents, then
//! loads the document shards of the best 50 only. Shards are scripts, not JSON fetched
//! with XHR, so the search also works from `file://`. At 10,000 entries a pasted error
//! message loads a few hundred kilobytes instead of the whole index.

use std::collections::{BTreeMap, BTreeSet};

use rayon::prelude::*;

use crate::pages::Ctx;
use crate::urls::{self, Lang};

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xf900..=0xfaff | 0x3040..=0x30ff | 0xac00..=0xd7af)
}

/// Splits text into search tokens (see the module doc). Must match `search.js`.
pub fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_token(text, |t| out.push(t.to_string()));
    out
}

/// Calls `f` with each search token of `text`, in order (repeats included).
fn each_token(text: &str, mut f: impl FnMut(&str)) {
    fn flush_word(word: &mut String, f: &mut dyn FnMut(&str)) {
        if word.chars().count() >= 2 {
            f(word);
        }
        word.clear();
    }
    let mut word = String::new();
    let mut cjk: Vec<char> = Vec::new();
    let mut pair = String::new();
    let mut flush_cjk = |cjk: &mut Vec<char>, f: &mut dyn FnMut(&str)| {
        if cjk.len() == 1 {
            pair.clear();
            pair.push(cjk[0]);
            f(&pair);
        }
        for w in cjk.windows(2) {
            pair.clear();
            pair.push(w[0]);
            pair.push(w[1]);
            f(&pair);
        }
        cjk.clear();
    };
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' {
            flush_cjk(&mut cjk, &mut f);
            word.push(c);
        } else if is_cjk(c) {
            flush_word(&mut word, &mut f);
            cjk.push(c);
        } else {
            flush_word(&mut word, &mut f);
            flush_cjk(&mut cjk, &mut f);
        }
    }
    flush_word(&mut word, &mut f);
    flush_cjk(&mut cjk, &mut f);
}

/// The term-shard hash: 32-bit FNV-1a over the token's code points. Must match
/// `search.js` (`shardOf`).
pub fn token_hash(token: &str) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for c in token.chars() {
        h ^= c as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

/// Field weights: what a term in that field is worth.
const W_TITLE: u32 = 8;
const W_CODE: u32 = 8;
const W_TAG: u32 = 4;
const W_BODY: u32 = 1;

/// How long a result's summary may be.
const SUMMARY_CHARS: usize = 140;

/// One document of the index.
#[derive(Debug, Clone, PartialEq)]
struct Doc {
    key: u32,
    /// `[kind,id,title,summary,sig,regex]` as JSON (the key is added when written).
    meta: String,
    /// Distinct tokens with the weight of their best field, sorted by token (see
    /// [`Doc::tokens`]).
    tokens: Tokens,
}

/// A document's distinct tokens, `\n`-separated (no token contains one), and their
/// weights: two allocations per document rather than one per token.
#[derive(Debug, Clone, PartialEq, Default)]
struct Tokens {
    text: String,
    weights: Vec<u8>,
}

impl Doc {
    fn tokens(&self) -> impl Iterator<Item = (&str, u32)> {
        self.tokens
            .text
            .split('\n')
            .zip(&self.tokens.weights)
            .map(|(t, w)| (t, u32::from(*w)))
    }
}

/// Shard count and key space, both functions of the number of documents only.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Layout {
    shards: u32,
    m: u32,
}

impl Layout {
    fn for_docs(n: usize) -> Layout {
        let n = n as u32;
        Layout {
            // About 32 documents per shard, at most 1024 shards.
            shards: n.div_ceil(32).max(1).next_power_of_two().min(1024),
            // Sixteen slots per document or more: few collisions, short keys.
            m: (n.max(1).next_power_of_two() * 16).max(1024),
        }
    }
}

/// The number of shards (of each kind) of an index of `docs` documents.
pub(crate) fn shards_for(docs: usize) -> u32 {
    Layout::for_docs(docs).shards
}

/// The search index of one language, kept in memory so an incremental rebuild can
/// update it document by document.
#[derive(Debug, Clone)]
pub(crate) struct SearchIndex {
    lang: Lang,
    layout: Layout,
    /// Page path (`entries/<id>.html`, `articles/<id>.html`) → document.
    docs: BTreeMap<String, Doc>,
    /// Term shard → token → postings `(key, weight)`, sorted by key.
    terms: Vec<BTreeMap<String, Vec<(u32, u32)>>>,
}

/// A document to index: an entry or an article, by id.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum DocRef {
    Entry(String),
    Article(String),
}

impl DocRef {
    pub(crate) fn page(&self) -> String {
        match self {
            DocRef::Entry(id) => urls::entry_page(id),
            DocRef::Article(id) => urls::article_page(id),
        }
    }
}

impl SearchIndex {
    /// Indexes every entry and article of the catalog.
    pub(crate) fn build(ctx: &Ctx<'_>, lang: Lang) -> SearchIndex {
        let refs: Vec<DocRef> = ctx
            .catalog
            .entries
            .keys()
            .map(|id| DocRef::Entry(id.to_string()))
            .chain(
                ctx.catalog
                    .articles
                    .keys()
                    .map(|id| DocRef::Article(id.to_string())),
            )
            .collect();
        let docs: BTreeMap<String, Doc> = refs
            .par_iter()
            .filter_map(|r| document(ctx, lang, r).map(|d| (r.page(), d)))
            .collect();
        let mut index = SearchIndex {
            lang,
            layout: Layout::for_docs(docs.len()),
            docs,
            terms: Vec::new(),
        };
        index.relayout();
        index
    }

    /// Assigns every key and rebuilds every shard from the documents.
    fn relayout(&mut self) {
        self.layout = Layout::for_docs(self.docs.len());
        let keys = assign_keys(self.docs.keys().map(String::as_str), self.layout.m);
        for (doc, key) in self.docs.values_mut().zip(keys) {
            doc.key = key;
        }
        let shards = self.layout.shards as usize;
        let mut terms: Vec<BTreeMap<String, Vec<(u32, u32)>>> = vec![BTreeMap::new(); shards];
        for doc in self.docs.values() {
            for (tok, w) in doc.tokens() {
                let s = (token_hash(tok) % self.layout.shards) as usize;
                match terms[s].get_mut(tok) {
                    Some(p) => p.push((doc.key, w)),
                    None => {
                        terms[s].insert(tok.to_string(), vec![(doc.key, w)]);
                    }
                }
            }
        }
        for shard in &mut terms {
            for postings in shard.values_mut() {
                postings.sort_unstable();
            }
        }
        self.terms = terms;
    }

    /// Shards per kind.
    #[cfg(test)]
    pub(crate) fn shards(&self) -> u32 {
        self.layout.shards
    }

    /// Every file of the index: `(path, bytes)`.
    pub(crate) fn files(&self) -> Vec<(String, Vec<u8>)> {
        let by_shard = self.docs_by_shard();
        (0..self.layout.shards)
            .into_par_iter()
            .flat_map_iter(|k| {
                [
                    self.term_file(k),
                    self.doc_file(k, by_shard.get(&k).map_or(&[][..], Vec::as_slice)),
                ]
            })
            .collect()
    }

    fn docs_by_shard(&self) -> BTreeMap<u32, Vec<&Doc>> {
        let mut by_shard: BTreeMap<u32, Vec<&Doc>> = BTreeMap::new();
        for doc in self.docs.values() {
            by_shard
                .entry(doc.key % self.layout.shards)
                .or_default()
                .push(doc);
        }
        for docs in by_shard.values_mut() {
            docs.sort_unstable_by_key(|d| d.key);
        }
        by_shard
    }

    /// Re-indexes these documents (an entry or article that no longer exists is
    /// removed) and returns the shard files that changed, and `true` when those are
    /// every file of the index (the layout changed: other shard files are stale).
    pub(crate) fn update(
        &mut self,
        ctx: &Ctx<'_>,
        changed: &BTreeSet<DocRef>,
    ) -> (Vec<(String, Vec<u8>)>, bool) {
        let before = self.layout;
        let mut dirty_terms: BTreeSet<u32> = BTreeSet::new();
        let mut dirty_docs: BTreeSet<u32> = BTreeSet::new();
        let mut pages_changed = false;
        // Take out the documents that changed (keeping their keys), put the new ones in.
        let mut fresh: Vec<String> = Vec::new();
        for r in changed {
            let page = r.page();
            let new = document(ctx, self.lang, r);
            let old = self.docs.get(&page);
            if old.map(|d| (&d.meta, &d.tokens)) == new.as_ref().map(|d| (&d.meta, &d.tokens)) {
                continue;
            }
            pages_changed |= old.is_some() != new.is_some();
            let old_key = match self.docs.remove(&page) {
                Some(old) => {
                    self.unpost(&old, &mut dirty_terms);
                    dirty_docs.insert(old.key % self.layout.shards);
                    Some(old.key)
                }
                None => None,
            };
            if let Some(mut doc) = new {
                doc.key = old_key.unwrap_or(0);
                self.docs.insert(page.clone(), doc);
                fresh.push(page);
            }
        }
        if Layout::for_docs(self.docs.len()) != before {
            self.relayout();
            return (self.files(), true);
        }
        let mut moved: Vec<String> = Vec::new();
        if pages_changed {
            // Keys depend on the set of pages: new pages need one, and the keys of the
            // others move only when a collision chain changed.
            let keys = assign_keys(self.docs.keys().map(String::as_str), self.layout.m);
            let fresh_set: BTreeSet<&str> = fresh.iter().map(String::as_str).collect();
            let mut unposted: Vec<Doc> = Vec::new();
            for ((page, doc), key) in self.docs.iter().zip(&keys) {
                if !fresh_set.contains(page.as_str()) && doc.key != *key {
                    moved.push(page.clone());
                    unposted.push(doc.clone());
                }
            }
            for doc in &unposted {
                self.unpost(doc, &mut dirty_terms);
                dirty_docs.insert(doc.key % self.layout.shards);
            }
            for (doc, key) in self.docs.values_mut().zip(keys) {
                doc.key = key;
            }
        }
        let repost: Vec<Doc> = fresh
            .iter()
            .chain(&moved)
            .filter_map(|page| self.docs.get(page).cloned())
            .collect();
        for doc in &repost {
            self.post(doc, &mut dirty_terms);
            dirty_docs.insert(doc.key % self.layout.shards);
        }
        let mut files: Vec<(String, Vec<u8>)> =
            dirty_terms.into_iter().map(|k| self.term_file(k)).collect();
        if !dirty_docs.is_empty() {
            let mut by_shard: BTreeMap<u32, Vec<&Doc>> =
                dirty_docs.iter().map(|&k| (k, Vec::new())).collect();
            for doc in self.docs.values() {
                if let Some(list) = by_shard.get_mut(&(doc.key % self.layout.shards)) {
                    list.push(doc);
                }
            }
            for (k, mut docs) in by_shard {
                docs.sort_unstable_by_key(|d| d.key);
                files.push(self.doc_file(k, &docs));
            }
        }
        (files, false)
    }

    fn unpost(&mut self, doc: &Doc, dirty: &mut BTreeSet<u32>) {
        for (tok, _) in doc.tokens() {
            let s = token_hash(tok) % self.layout.shards;
            dirty.insert(s);
            let shard = &mut self.terms[s as usize];
            if let Some(postings) = shard.get_mut(tok) {
                if let Ok(i) = postings.binary_search_by_key(&doc.key, |p| p.0) {
                    postings.remove(i);
                }
                if postings.is_empty() {
                    shard.remove(tok);
                }
            }
        }
    }

    fn post(&mut self, doc: &Doc, dirty: &mut BTreeSet<u32>) {
        for (tok, w) in doc.tokens() {
            let s = token_hash(tok) % self.layout.shards;
            dirty.insert(s);
            let shard = &mut self.terms[s as usize];
            if !shard.contains_key(tok) {
                shard.insert(tok.to_string(), Vec::new());
            }
            let Some(postings) = shard.get_mut(tok) else {
                continue;
            };
            match postings.binary_search_by_key(&doc.key, |p| p.0) {
                Ok(i) => postings[i].1 = w,
                Err(i) => postings.insert(i, (doc.key, w)),
            }
        }
    }

    fn dir(&self) -> String {
        format!("search/{}", self.lang.code())
    }

    fn term_file(&self, k: u32) -> (String, Vec<u8>) {
        let shard = &self.terms[k as usize];
        let mut out = String::with_capacity(64 + shard.len() * 48);
        out.push_str(&format!("ERRATA_SEARCH_SHARD(\"t\",{k},["));
        let mut num = itoa_buf();
        for (i, (tok, postings)) in shard.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_json_string(&mut out, tok);
            out.push_str(",[");
            // Keys are sorted: each is written as the gap from the previous one, which
            // makes the long postings of common words less than half as long.
            let mut previous = 0;
            for (j, (key, w)) in postings.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                out.push_str(num.format(key - previous));
                out.push(',');
                out.push_str(num.format(*w));
                previous = *key;
            }
            out.push(']');
        }
        out.push_str("]);\n");
        (format!("{}/t{k}.js", self.dir()), out.into_bytes())
    }

    fn doc_file(&self, k: u32, docs: &[&Doc]) -> (String, Vec<u8>) {
        let mut out =
            String::with_capacity(64 + docs.iter().map(|d| d.meta.len() + 12).sum::<usize>());
        out.push_str(&format!("ERRATA_SEARCH_SHARD(\"d\",{k},["));
        let mut num = itoa_buf();
        for (i, doc) in docs.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(num.format(doc.key));
            out.push(',');
            out.push_str(&doc.meta);
        }
        out.push_str("]);\n");
        (format!("{}/d{k}.js", self.dir()), out.into_bytes())
    }
}

/// A tiny integer formatter (no allocation per number).
struct NumBuf([u8; 10]);

fn itoa_buf() -> NumBuf {
    NumBuf([0; 10])
}

impl NumBuf {
    fn format(&mut self, mut n: u32) -> &str {
        let mut i = self.0.len();
        loop {
            i -= 1;
            self.0[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        // Only ASCII digits were written.
        std::str::from_utf8(&self.0[i..]).unwrap_or("0")
    }
}

/// A JSON string literal, with `<` escaped too so the file is inert if ever inlined.
fn push_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '<' => out.push_str("\\u003c"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            // U+2028/2029 are valid in JSON but end a line in older JavaScript.
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// 64-bit FNV-1a of a page path: where its key probing starts.
fn page_hash(page: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in page.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Keys for pages given in order: hash slot, linear probing on collision.
fn assign_keys<'a>(pages: impl Iterator<Item = &'a str>, m: u32) -> Vec<u32> {
    let mut taken = vec![false; m as usize];
    pages
        .map(|page| {
            let mut k = (page_hash(page) % u64::from(m)) as usize;
            while taken[k] {
                k = (k + 1) % taken.len();
            }
            taken[k] = true;
            k as u32
        })
        .collect()
}

/// Collects a document's tokens, each with the weight of its best field: the tokens
/// go into one buffer, and only the distinct ones are kept.
#[derive(Default)]
struct Terms {
    buf: String,
    /// (start, end, weight) in `buf`.
    spans: Vec<(u32, u32, u8)>,
}

impl Terms {
    fn add(&mut self, text: &str, weight: u32) {
        each_token(text, |t| {
            let start = self.buf.len() as u32;
            self.buf.push_str(t);
            self.spans
                .push((start, self.buf.len() as u32, weight.min(255) as u8));
        });
    }

    fn finish(mut self) -> Tokens {
        let buf = &self.buf;
        let text = |s: &(u32, u32, u8)| &buf[s.0 as usize..s.1 as usize];
        // A term is worth its best field: a word repeated in a long body never
        // outweighs the same word in the title.
        self.spans
            .sort_unstable_by(|a, b| text(a).cmp(text(b)).then_with(|| b.2.cmp(&a.2)));
        self.spans.dedup_by(|a, b| text(a) == text(b));
        let mut out = Tokens {
            text: String::with_capacity(buf.len().min(4096)),
            weights: Vec::with_capacity(self.spans.len()),
        };
        for (i, span) in self.spans.iter().enumerate() {
            if i > 0 {
                out.text.push('\n');
            }
            out.text.push_str(text(span));
            out.weights.push(span.2);
        }
        out
    }
}

/// The document of an entry or article, `None` when it is not in the catalog.
fn document(ctx: &Ctx<'_>, lang: Lang, r: &DocRef) -> Option<Doc> {
    let zh = lang == Lang::Zh;
    let mut t = Terms::default();
    let mut meta = String::with_capacity(256);
    meta.push('[');
    match r {
        DocRef::Entry(id) => {
            let e = ctx.catalog.entry(id)?;
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
            let sig = normalise(&e.signature);
            meta.push_str("0,");
            push_json_string(&mut meta, id);
            meta.push(',');
            push_json_string(&mut meta, title);
            meta.push(',');
            push_json_string(&mut meta, &errata_model::truncate(cause, SUMMARY_CHARS));
            meta.push(',');
            // The client lowers the title itself when this is empty.
            push_json_string(&mut meta, if sig == normalise(title) { "" } else { &sig });
            meta.push(',');
            push_json_string(&mut meta, e.regex.trim());
            // The English message is indexed in both languages: people paste it as printed.
            t.add(&e.signature, W_TITLE);
            if zh {
                t.add(&e.signature_zh, W_TITLE);
                t.add(&e.root_cause_zh, W_BODY);
                for w in &e.workarounds_zh {
                    t.add(w, W_BODY);
                }
            }
            for alias in &e.aliases {
                t.add(alias, W_TITLE);
            }
            if let Some(code) = &e.error_code {
                t.add(code, W_CODE);
            }
            t.add(id, W_TAG);
            for tag in &e.tags {
                t.add(tag, W_TAG);
            }
            t.add(&e.root_cause, W_BODY);
            for w in &e.workarounds {
                t.add(&w.action, W_BODY);
            }
        }
        DocRef::Article(id) => {
            let pair = ctx.catalog.articles.get(id.as_str())?;
            let item = ctx.article_item(id, lang, true)?;
            meta.push_str("1,");
            push_json_string(&mut meta, id);
            meta.push(',');
            push_json_string(&mut meta, &item.title);
            meta.push(',');
            push_json_string(
                &mut meta,
                &errata_model::truncate(&item.summary, SUMMARY_CHARS),
            );
            meta.push_str(",\"\",\"\"");
            t.add(&item.title, W_TITLE);
            t.add(&item.summary, W_BODY);
            if let Some(front) = &pair.en.front {
                for tag in &front.tags {
                    t.add(tag, W_TAG);
                }
            }
            if zh && item.title != pair.title() {
                t.add(pair.title(), W_TITLE);
            }
        }
    }
    meta.push(']');
    Some(Doc {
        key: 0,
        meta,
        tokens: t.finish(),
    })
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
    use serde_json::{Value, json};

    /// `(kind, k, {name: value})` of a shard file.
    fn parse_shard(bytes: &[u8]) -> (String, u32, serde_json::Map<String, Value>) {
        let text = std::str::from_utf8(bytes).unwrap();
        let body = text
            .strip_prefix("ERRATA_SEARCH_SHARD(")
            .and_then(|s| s.strip_suffix(");\n"))
            .unwrap();
        let v: Value = serde_json::from_str(&format!("[{body}]")).unwrap();
        let pairs = v[2].as_array().unwrap();
        let map = pairs
            .chunks(2)
            .map(|p| (p[0].to_string().trim_matches('"').to_string(), p[1].clone()))
            .collect();
        (
            v[0].as_str().unwrap().to_string(),
            v[1].as_u64().unwrap() as u32,
            map,
        )
    }

    #[test]
    fn shards_are_json_after_the_call_and_find_their_documents() {
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
            outcomes: &errata_outcomes::Index::default(),
            data_root: &kb.root,
            texts: &kb,
        };
        let index = SearchIndex::build(&ctx, Lang::Zh);
        assert_eq!(index.shards(), 1);
        let files = index.files();
        let paths: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(paths, ["search/zh/t0.js", "search/zh/d0.js"]);
        let (kind, k, terms) = parse_shard(&files[0].1);
        assert_eq!((kind.as_str(), k), ("t", 0));
        let key = terms["显存"][0].as_u64().unwrap();
        assert_eq!(terms["显存"], json!([key, W_TITLE]));
        assert_eq!(terms["memory"], json!([key, W_TITLE]));
        let (_, _, docs) = parse_shard(&files[1].1);
        assert_eq!(
            docs[&key.to_string()],
            json!([
                0,
                "cuda/oom",
                "显存不足",
                "",
                "cuda error: out of memory <x>",
                "out of memory"
            ])
        );
        assert!(files.iter().all(|(_, b)| !b.contains(&b'<')));
    }

    #[test]
    fn keys_survive_insertions_and_collisions_probe() {
        let pages: Vec<String> = (0..300).map(|i| format!("entries/d/e{i}.html")).collect();
        let m = Layout::for_docs(pages.len()).m;
        let keys = assign_keys(pages.iter().map(String::as_str), m);
        let distinct: BTreeSet<u32> = keys.iter().copied().collect();
        assert_eq!(distinct.len(), pages.len());
        let mut more = pages.clone();
        more.insert(7, "entries/d/new.html".into());
        let keys2 = assign_keys(more.iter().map(String::as_str), m);
        let moved = pages
            .iter()
            .enumerate()
            .filter(|(i, _)| {
                let j = if *i >= 7 { i + 1 } else { *i };
                keys[*i] != keys2[j]
            })
            .count();
        assert!(moved <= 1, "{moved} keys moved");
        // Same colliding hash: the second probes to the next slot.
        assert_eq!(assign_keys(["a", "a"].into_iter(), 1024).len(), 2);
    }

    #[test]
    fn token_hash_is_fnv1a_over_code_points() {
        // The same numbers `search.js` computes (Math.imul over code points).
        assert_eq!(token_hash(""), 0x811c_9dc5);
        assert_eq!(token_hash("a"), 0xe40c_292c);
        assert_eq!(token_hash("显存"), {
            let mut h: u32 = 0x811c_9dc5;
            for c in ['显', '存'] {
                h = (h ^ c as u32).wrapping_mul(16_777_619);
            }
            h
        });
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
