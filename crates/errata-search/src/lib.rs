//! Full-text search over the SQLite database of an errata data bundle (`errata.sqlite`).
//!
//! The bundle writer (`errata-bundle`) builds four FTS5 tables: `search_en` and
//! `search_zh` over entries (`rowid` = `entries.rowid`), `search_articles_en` and
//! `search_articles_zh` over articles. This crate owns the query side and the one rule
//! both sides share: Chinese has no spaces between words, so Chinese text is indexed as
//! overlapping bigrams ([`zh_segment`]) and queried as phrases of them ([`zh_query`]).
//!
//! A user's query is never passed to FTS5 as query syntax: every word becomes a quoted
//! phrase (English words as prefixes), so `"`, `*`, `NEAR` or `)` in a pasted error
//! message cannot make the search fail.
//!
//! One ranking, the site's: an entry whose signature is the pasted text, then those
//! whose regex or alias recognises it, come first (the matcher's own order among several), then the full-text
//! hits by BM25. Scores are 0–1, higher better: a recognised entry scores 1 (then 0.99,
//! 0.98 … in the matcher's order), a full-text hit `0.9·b/(1+b)` for its BM25 magnitude
//! `b`, so no word match outranks a recognised message. Ties go by kind and id, so the
//! same query on the same bundle gives the same answer.

use std::sync::Mutex;

use rusqlite::{Connection, MAIN_DB, OpenFlags, params};

/// The language of a search: which tables it reads (`En`: `search_en`,
/// `search_articles_en`; `Zh`: `search_zh`, `search_articles_zh`, bigrams). The same type
/// as the consumer's, so a caller's language goes to matching and search alike.
pub use errata_consumer::Lang;

/// What a hit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// An entry: `id` is its id.
    Entry,
    /// An article or translation: `id` is its id, `path` its bundle member.
    Article,
}

/// One search result.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Hit {
    /// Entry or article.
    pub kind: Kind,
    /// `<domain>/<slug>`.
    pub id: String,
    /// The entry's signature (in the language searched) or the article's title.
    pub title: String,
    /// The bundle member of an article (`articles/cuda/x.zh.md`); `None` for entries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// 0–1, higher better: 1 for the entry that recognises the query itself, below 0.9
    /// for word matches (see the crate documentation).
    pub score: f64,
}

/// Why a search could not be made.
#[derive(Debug)]
pub enum Error {
    /// The bytes are not an errata bundle database (or SQLite failed).
    Database(String),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Database(e) => write!(f, "search database: {e}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::Database(e.to_string())
    }
}

/// A bundle's database, opened read-only in memory.
///
/// The connection sits behind a mutex so that one index can serve several threads (an
/// MCP server's requests, Python threads); each search is a few milliseconds.
#[derive(Debug)]
pub struct SearchIndex {
    conn: Mutex<Connection>,
}

/// The tables a search reads, by language: entries, then articles.
fn tables(lang: Lang) -> (&'static str, &'static str) {
    match lang {
        Lang::En => ("search_en", "search_articles_en"),
        Lang::Zh => ("search_zh", "search_articles_zh"),
    }
}

impl SearchIndex {
    /// Opens the database held in `bytes` (the bundle member `errata.sqlite`), after
    /// checking that it has the tables a search reads.
    pub fn from_bytes(bytes: &[u8]) -> Result<SearchIndex, Error> {
        let mut conn = Connection::open_in_memory_with_flags(
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.deserialize_read_exact(MAIN_DB, bytes, bytes.len(), true)?;
        conn.execute_batch("PRAGMA query_only = ON;")?;
        for table in [
            "entries",
            "articles",
            "search_en",
            "search_zh",
            "search_articles_en",
            "search_articles_zh",
        ] {
            let found: i64 = conn.query_row(
                "SELECT count(*) FROM sqlite_schema WHERE name = ?1",
                [table],
                |r| r.get(0),
            )?;
            if found == 0 {
                return Err(Error::Database(format!(
                    "no table `{table}`: not an errata bundle database"
                )));
            }
        }
        Ok(SearchIndex {
            conn: Mutex::new(conn),
        })
    }

    /// Entries and articles for `query`, best first, at most `limit`: the entries of
    /// `index` that recognise the query (a pasted error message), then those and the
    /// articles containing every word of it. An empty query finds nothing.
    pub fn search(
        &self,
        index: &errata_consumer::Index,
        query: &str,
        lang: Lang,
        limit: usize,
    ) -> Result<Vec<Hit>, Error> {
        if query.trim().is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let mut hits: Vec<Hit> = Vec::new();
        // The signature itself, in the language searched (a Chinese signature is not
        // what the entries' regexes recognise), then what the regexes recognise.
        for e in index.entries() {
            if same_words(e.signature(lang), query) {
                hits.push(Hit {
                    kind: Kind::Entry,
                    id: e.id.clone(),
                    title: e.signature(lang).to_string(),
                    path: None,
                    score: 1.0,
                });
            }
        }
        for found in index.match_text(query) {
            if hits.iter().any(|h| h.id == found.entry.id) || found.entry.catalog_source().is_some()
            {
                continue;
            }
            let rank = hits.len() as f64;
            // Below an exact signature, in the matcher's order.
            hits.push(Hit {
                kind: Kind::Entry,
                id: found.entry.id.clone(),
                title: found.entry.signature(lang).to_string(),
                path: None,
                score: (1.0 - rank / 100.0).max(0.91),
            });
        }
        for hit in self.words(query, lang, limit)? {
            if hit.kind == Kind::Entry
                && hits.iter().any(|h| h.kind == Kind::Entry && h.id == hit.id)
            {
                continue;
            }
            hits.push(hit);
        }
        hits.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| (a.kind as u8).cmp(&(b.kind as u8)))
                .then_with(|| a.id.cmp(&b.id))
                .then_with(|| a.path.cmp(&b.path))
        });
        hits.truncate(limit);
        Ok(hits)
    }

    /// Entries and articles that contain every word of `query`, by BM25, scored 0–0.9.
    fn words(&self, query: &str, lang: Lang, limit: usize) -> Result<Vec<Hit>, Error> {
        let fts = match lang {
            Lang::En => en_query(query),
            Lang::Zh => zh_query(query),
        };
        if fts.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let conn = self
            .conn
            .lock()
            .map_err(|_| Error::Database("a search panicked earlier".into()))?;
        let (entries, articles) = tables(lang);
        let title = match lang {
            Lang::En => "e.signature",
            Lang::Zh => "e.signature_zh",
        };
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let mut hits = Vec::new();
        let mut stmt = conn.prepare(&format!(
            "SELECT e.id, {title}, bm25({entries}) AS score FROM {entries} \
             JOIN entries e ON e.rowid = {entries}.rowid \
             WHERE {entries} MATCH ?1 ORDER BY score, e.id LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![fts, limit], |r| {
            Ok(Hit {
                kind: Kind::Entry,
                id: r.get(0)?,
                title: r.get(1)?,
                path: None,
                score: r.get(2)?,
            })
        })?;
        for row in rows {
            hits.push(row?);
        }
        let mut stmt = conn.prepare(&format!(
            "SELECT a.id, a.title, a.path, bm25({articles}) AS score FROM {articles} \
             JOIN articles a ON a.path = {articles}.path \
             WHERE {articles} MATCH ?1 ORDER BY score, a.path LIMIT ?2"
        ))?;
        let rows = stmt.query_map(params![fts, limit], |r| {
            Ok(Hit {
                kind: Kind::Article,
                id: r.get(0)?,
                title: r.get(1)?,
                path: Some(r.get(2)?),
                score: r.get(3)?,
            })
        })?;
        for row in rows {
            hits.push(row?);
        }
        // BM25 (negative, lower better) as 0–0.9, higher better; one ranking across
        // both tables (BM25 scores of one query are comparable enough to interleave).
        for h in &mut hits {
            let b = h.score.abs();
            h.score = 0.9 * b / (1.0 + b);
        }
        Ok(hits)
    }
}

/// An FTS5 query for the English tables: each word of `query` as a quoted prefix phrase
/// (`"illegal"* "memory"*`), all required. Characters FTS5 would read as syntax are
/// inside quotes, so any text is a valid query.
pub fn en_query(query: &str) -> String {
    query
        .split(|c: char| !c.is_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .map(|w| format!("\"{w}\"*"))
        .collect::<Vec<_>>()
        .join(" ")
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

/// Whether two texts are the same words, ignoring case and spacing: what
/// `split_whitespace().join(" ").to_lowercase()` of each would compare, word by word and
/// without building either string (a search compares the query with every signature).
fn same_words(a: &str, b: &str) -> bool {
    let (mut a, mut b) = (a.split_whitespace(), b.split_whitespace());
    loop {
        match (a.next(), b.next()) {
            (None, None) => return true,
            (Some(x), Some(y)) => {
                let same = if x.is_ascii() && y.is_ascii() {
                    x.eq_ignore_ascii_case(y)
                } else {
                    // Not ASCII: Unicode lower-casing (a Kelvin sign is a `k`, and a
                    // word-final capital sigma a final sigma, as in the whole text).
                    x.to_lowercase() == y.to_lowercase()
                };
                if !same {
                    return false;
                }
            }
            _ => return false,
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn same_words_is_the_joined_lower_case_comparison() {
        let joined = |t: &str| {
            t.split_whitespace()
                .collect::<Vec<_>>()
                .join(" ")
                .to_lowercase()
        };
        let texts = [
            "CUDA error: out of memory",
            "cuda  ERROR:\tout of memory ",
            "CUDA error: out of",
            "CUDA error: out of memory memory",
            "\u{212A}ernel failed",
            "kernel failed",
            "ΟΔΟΣ κλειστή",
            "οδος κλειστή",
            "οδος κλειστη",
            "显存 不足",
            "显存不足",
            "",
            "   ",
        ];
        for a in texts {
            for b in texts {
                assert_eq!(
                    super::same_words(a, b),
                    joined(a) == joined(b),
                    "{a:?} vs {b:?}"
                );
            }
        }
    }

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

    #[test]
    fn english_queries_are_always_valid_fts() {
        assert_eq!(en_query("illegal memory"), "\"illegal\"* \"memory\"*");
        assert_eq!(
            en_query("\"NEAR(a b)\" OR *"),
            "\"NEAR\"* \"a\"* \"b\"* \"OR\"*"
        );
        assert_eq!(en_query(" ()\"* "), "");
    }

    #[test]
    fn not_a_database() {
        assert!(SearchIndex::from_bytes(b"not sqlite").is_err());
        assert!(SearchIndex::from_bytes(b"").is_err());
    }
}
