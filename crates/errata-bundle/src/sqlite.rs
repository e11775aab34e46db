//! The bundle's SQLite database: entries, dead ends, workarounds and articles as
//! tables, with FTS5 full-text search in English and Chinese.
//!
//! Chinese has no spaces between words, so the Chinese index holds *bigrams*: every run
//! of CJK characters is written as its overlapping pairs (`内存不足` → `内存 存不 不足`,
//! a lone character stays as it is), and other text as it is. A query is segmented the
//! same way and searched as a phrase: `search_zh MATCH '"内存 存不 不足"'` finds exactly
//! the texts that contain `内存不足`. [`zh_query`] does this; the `meta` table documents
//! it for consumers in other languages.
//!
//! The file is byte-identical for the same input: built in a fresh file with a fixed page
//! size, rows inserted in id order, FTS indexes merged, then `VACUUM`ed; SQLite writes no
//! timestamps.

use std::path::Path;

use rusqlite::{Connection, params};
use serde_json::Value;

use crate::Error;

const SCHEMA: &str = "
PRAGMA page_size = 4096;
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE entries (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    domain TEXT NOT NULL,
    category TEXT NOT NULL,
    signature TEXT NOT NULL,
    signature_zh TEXT NOT NULL,
    regex TEXT NOT NULL,
    root_cause TEXT NOT NULL,
    root_cause_zh TEXT NOT NULL,
    error_code TEXT,
    json TEXT NOT NULL
);
CREATE TABLE dead_ends (
    entry_id TEXT NOT NULL REFERENCES entries(id),
    position INTEGER NOT NULL,
    action TEXT NOT NULL,
    why_fails TEXT NOT NULL,
    fail_rate REAL,
    PRIMARY KEY (entry_id, position)
) WITHOUT ROWID;
CREATE TABLE workarounds (
    entry_id TEXT NOT NULL REFERENCES entries(id),
    position INTEGER NOT NULL,
    action TEXT NOT NULL,
    action_zh TEXT NOT NULL,
    how TEXT NOT NULL,
    success_rate REAL,
    PRIMARY KEY (entry_id, position)
) WITHOUT ROWID;
CREATE TABLE articles (
    path TEXT PRIMARY KEY,
    id TEXT NOT NULL,
    lang TEXT NOT NULL,
    title TEXT NOT NULL,
    markdown TEXT NOT NULL,
    text TEXT NOT NULL
) WITHOUT ROWID;
CREATE VIRTUAL TABLE search_en USING fts5(signature, root_cause, workarounds, dead_ends, tokenize = 'porter unicode61');
CREATE VIRTUAL TABLE search_zh USING fts5(signature, root_cause, workarounds, tokenize = 'unicode61');
";

/// One article row.
pub(crate) struct ArticleRow<'a> {
    pub path: &'a str,
    pub id: &'a str,
    pub lang: &'a str,
    pub title: &'a str,
    pub markdown: &'a str,
    pub text: &'a str,
}

/// Builds the database in `dir` (a scratch directory) and returns its bytes.
pub(crate) fn build(
    dir: &Path,
    meta: &[(&str, String)],
    entries: &[&Value],
    articles: &[ArticleRow<'_>],
) -> Result<Vec<u8>, Error> {
    let path = dir.join("errata.sqlite");
    let mut db = Connection::open(&path)?;
    db.execute_batch(SCHEMA)?;
    let tx = db.transaction()?;
    {
        let mut put_meta = tx.prepare("INSERT INTO meta (key, value) VALUES (?1, ?2)")?;
        for (k, v) in meta {
            put_meta.execute(params![k, v])?;
        }
        put_meta.execute(params!["fts_zh", "search_zh holds CJK runs as overlapping bigrams; segment a query the same way and MATCH it as a phrase"])?;
        let mut put_entry = tx.prepare(
            "INSERT INTO entries (rowid, id, domain, category, signature, signature_zh, regex, root_cause, root_cause_zh, error_code, json)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
        )?;
        let mut put_dead = tx.prepare("INSERT INTO dead_ends VALUES (?1, ?2, ?3, ?4, ?5)")?;
        let mut put_work = tx.prepare("INSERT INTO workarounds VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
        let mut put_en = tx.prepare("INSERT INTO search_en (rowid, signature, root_cause, workarounds, dead_ends) VALUES (?1, ?2, ?3, ?4, ?5)")?;
        let mut put_zh = tx.prepare("INSERT INTO search_zh (rowid, signature, root_cause, workarounds) VALUES (?1, ?2, ?3, ?4)")?;
        for (i, e) in entries.iter().enumerate() {
            let rowid = i as i64 + 1;
            let s = |k: &str| e.get(k).and_then(Value::as_str).unwrap_or_default();
            let id = s("id");
            put_entry.execute(params![
                rowid,
                id,
                s("domain"),
                s("category"),
                s("signature"),
                s("signature_zh"),
                s("regex"),
                s("root_cause"),
                s("root_cause_zh"),
                e.get("error_code").and_then(Value::as_str),
                serde_json::to_string(e).unwrap_or_default(),
            ])?;
            let list = |k: &str| {
                e.get(k)
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default()
            };
            let field = |v: &Value, k: &str| {
                v.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            let dead_ends = list("dead_ends");
            for (p, d) in dead_ends.iter().enumerate() {
                put_dead.execute(params![
                    id,
                    p as i64,
                    field(d, "action"),
                    field(d, "why_fails"),
                    d.get("fail_rate").and_then(Value::as_f64)
                ])?;
            }
            let workarounds = list("workarounds");
            let zh = list("workarounds_zh");
            for (p, w) in workarounds.iter().enumerate() {
                let action_zh = zh.get(p).and_then(Value::as_str).unwrap_or_default();
                put_work.execute(params![
                    id,
                    p as i64,
                    field(w, "action"),
                    action_zh,
                    field(w, "how"),
                    w.get("success_rate").and_then(Value::as_f64)
                ])?;
            }
            let join = |items: &[Value], keys: &[&str]| {
                items
                    .iter()
                    .flat_map(|v| keys.iter().map(move |k| field(v, k)))
                    .filter(|t| !t.is_empty())
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            put_en.execute(params![
                rowid,
                s("signature"),
                s("root_cause"),
                join(&workarounds, &["action", "how"]),
                join(&dead_ends, &["action", "why_fails"])
            ])?;
            let zh_work: Vec<String> = zh
                .iter()
                .filter_map(Value::as_str)
                .map(zh_segment)
                .collect();
            put_zh.execute(params![
                rowid,
                zh_segment(s("signature_zh")),
                zh_segment(s("root_cause_zh")),
                zh_work.join("\n")
            ])?;
        }
        let mut put_article = tx.prepare("INSERT INTO articles VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
        for a in articles {
            put_article.execute(params![a.path, a.id, a.lang, a.title, a.markdown, a.text])?;
        }
    }
    tx.commit()?;
    // One b-tree per index, then a compact file: the layout depends only on the content.
    db.execute_batch(
        "INSERT INTO search_en (search_en) VALUES ('optimize');
         INSERT INTO search_zh (search_zh) VALUES ('optimize');
         VACUUM;",
    )?;
    db.close().map_err(|(_, e)| Error::Sqlite(e))?;
    std::fs::read(&path).map_err(|e| Error::io(&path, e))
}

/// CJK characters are indexed as bigrams (see the module documentation).
fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2FA1F | 0x3040..=0x30FF | 0xAC00..=0xD7AF)
}

/// Text with every run of CJK characters replaced by its overlapping bigrams, separated
/// by spaces; other text is kept (the tokenizer splits it).
pub fn zh_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len() * 2);
    let mut run: Vec<char> = Vec::new();
    let flush = |run: &mut Vec<char>, out: &mut String| {
        match run.len() {
            0 => {}
            1 => {
                out.push(' ');
                out.push(run[0]);
                out.push(' ');
            }
            _ => {
                out.push(' ');
                let pairs: Vec<String> = run.windows(2).map(|w| w.iter().collect()).collect();
                out.push_str(&pairs.join(" "));
                out.push(' ');
            }
        }
        run.clear();
    };
    for c in text.chars() {
        if is_cjk(c) {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out
}

/// An FTS5 query for `search_zh` that finds texts containing `query` (each
/// whitespace-separated word of it, in any order).
pub fn zh_query(query: &str) -> String {
    query
        .split_whitespace()
        .map(|word| {
            let seg = zh_segment(word);
            let tokens: Vec<&str> = seg.split_whitespace().collect();
            let phrase = tokens.join(" ").replace('"', "\"\"");
            // A single CJK character only occurs inside bigrams: match it as a prefix.
            if word.chars().count() == 1 && word.chars().all(is_cjk) {
                format!("\"{phrase}\"*")
            } else {
                format!("\"{phrase}\"")
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bigrams() {
        assert_eq!(
            zh_segment("内存不足")
                .split_whitespace()
                .collect::<Vec<_>>(),
            ["内存", "存不", "不足"]
        );
        assert_eq!(
            zh_segment("CUDA错误：显存")
                .split_whitespace()
                .collect::<Vec<_>>(),
            ["CUDA", "错误", "：", "显存"]
        );
        assert_eq!(zh_query("内存不足 CUDA"), "\"内存 存不 不足\" \"CUDA\"");
    }
}
