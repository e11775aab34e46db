//! The bundle's SQLite database: entries, dead ends, workarounds and articles as
//! tables, with FTS5 full-text search in English and Chinese over entries and articles.
//!
//! | table | what |
//! |---|---|
//! | `meta` | `format_version`, `version`, `schema_version`, and how `search_zh` is segmented |
//! | `entries` | one row per entry (`rowid` in id order), key fields and the entry's `json` |
//! | `dead_ends`, `workarounds` | one row per item, by `entry_id` and `position` |
//! | `articles` | one row per article or translation: `path` (the bundle member), `id`, `lang`, `title`, `markdown` (the file), `text` (plain) |
//! | `search_en` | FTS5 (porter) over each entry's signature, root cause, workarounds and dead ends; `rowid` = `entries.rowid` |
//! | `search_zh` | FTS5 over the Chinese signature, root cause and workarounds (bigrams, below); `rowid` = `entries.rowid` |
//! | `search_articles_en` | FTS5 (porter) over English articles: `path` (unindexed, = `articles.path`), `title`, `text` |
//! | `search_articles_zh` | FTS5 over Chinese translations, the same columns, title and text as bigrams |
//!
//! Chinese has no spaces between words, so the Chinese indexes hold *bigrams*: every run
//! of CJK characters is written as its overlapping pairs (`内存不足` → `内存 存不 不足`,
//! a lone character stays as it is), and other text as it is. A query is segmented the
//! same way and searched as a phrase: `search_zh MATCH '"内存 存不 不足"'` finds exactly
//! the texts that contain `内存不足`. [`zh_query`] does this; the `meta` table documents
//! it for consumers in other languages.
//!
//! The file is byte-identical for the same input. It is built in memory (16 KiB pages)
//! by one fixed sequence of statements in one transaction — each table filled in id (or
//! path) order, one after the other so that its pages are contiguous, the id index
//! built after the rows, then each full-text index, whose whole input stays in memory
//! until the commit so that it is written as a single segment (nothing to merge, no free
//! pages, no `VACUUM`) — and serialised; SQLite writes no timestamps.

use errata_model::Entry;
use rusqlite::{Connection, MAIN_DB, OpenFlags, params};

use crate::Error;

const SCHEMA: &str = "
PRAGMA page_size = 16384;
PRAGMA journal_mode = OFF;
PRAGMA synchronous = OFF;
PRAGMA temp_store = MEMORY;
PRAGMA foreign_keys = OFF;
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE entries (
    rowid INTEGER PRIMARY KEY,
    id TEXT NOT NULL,
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
CREATE VIRTUAL TABLE search_articles_en USING fts5(path UNINDEXED, title, text, tokenize = 'porter unicode61');
CREATE VIRTUAL TABLE search_articles_zh USING fts5(path UNINDEXED, title, text, tokenize = 'unicode61');
";

/// The full-text tables, in the order they are filled.
const FTS_TABLES: [&str; 4] = [
    "search_en",
    "search_zh",
    "search_articles_en",
    "search_articles_zh",
];

/// Bytes of pending full-text data an index keeps in memory before writing a segment
/// (FTS5's `hashsize`; its default is 1 MiB). Larger than any index here, so that each
/// one is written once, as one segment, at the commit.
const FTS_HASH_SIZE: i64 = 1 << 30;

/// Everything the database holds of one entry, prepared beforehand (on any thread:
/// [`EntryRow::new`] is the part of the work that parallelises).
pub(crate) struct EntryRow<'a> {
    id: &'a str,
    domain: &'a str,
    category: &'a str,
    signature: &'a str,
    signature_zh: &'a str,
    regex: &'a str,
    root_cause: &'a str,
    root_cause_zh: &'a str,
    error_code: Option<&'a str>,
    /// The entry's JSON as written in `entries.jsonl`.
    json: &'a str,
    /// `(action, why_fails, fail_rate)`.
    dead_ends: Vec<(&'a str, &'a str, Option<f64>)>,
    /// `(action, action_zh, how, success_rate)`.
    workarounds: Vec<(&'a str, &'a str, &'a str, Option<f64>)>,
    /// `search_en`'s workarounds and dead_ends columns.
    en: [String; 2],
    /// `search_zh`'s columns, segmented.
    zh: [String; 3],
}

impl<'a> EntryRow<'a> {
    /// The row of `e`, whose one-line JSON is `json`.
    pub(crate) fn new(e: &'a Entry, json: &'a str) -> EntryRow<'a> {
        let join = |parts: &mut dyn Iterator<Item = &'a str>| {
            let mut out = String::new();
            for t in parts.filter(|t| !t.is_empty()) {
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(t);
            }
            out
        };
        let zh_work: Vec<String> = e.workarounds_zh.iter().map(|w| zh_segment(w)).collect();
        EntryRow {
            id: &e.id,
            domain: &e.domain,
            category: &e.category,
            signature: &e.signature,
            signature_zh: &e.signature_zh,
            regex: &e.regex,
            root_cause: &e.root_cause,
            root_cause_zh: &e.root_cause_zh,
            error_code: e.error_code.as_deref(),
            json,
            dead_ends: e
                .dead_ends
                .iter()
                .map(|d| (d.action.as_str(), d.why_fails.as_str(), Some(d.fail_rate)))
                .collect(),
            workarounds: e
                .workarounds
                .iter()
                .enumerate()
                .map(|(p, w)| {
                    (
                        w.action.as_str(),
                        e.workarounds_zh.get(p).map_or("", String::as_str),
                        w.how.as_str(),
                        Some(w.success_rate),
                    )
                })
                .collect(),
            en: [
                join(
                    &mut e
                        .workarounds
                        .iter()
                        .flat_map(|w| [w.action.as_str(), w.how.as_str()]),
                ),
                join(
                    &mut e
                        .dead_ends
                        .iter()
                        .flat_map(|d| [d.action.as_str(), d.why_fails.as_str()]),
                ),
            ],
            zh: [
                zh_segment(&e.signature_zh),
                zh_segment(&e.root_cause_zh),
                zh_work.join("\n"),
            ],
        }
    }
}

/// One article row.
pub(crate) struct ArticleRow<'a> {
    pub path: &'a str,
    pub id: &'a str,
    pub lang: &'a str,
    pub title: &'a str,
    pub markdown: &'a str,
    pub text: &'a str,
}

/// Builds the database (in memory) and returns its bytes.
pub(crate) fn build(
    meta: &[(&str, String)],
    entries: &[EntryRow<'_>],
    articles: &[ArticleRow<'_>],
) -> Result<Vec<u8>, Error> {
    build_in_memory(meta, entries, articles).map_err(|e| match e {
        Error::Sqlite(rusqlite::Error::SqliteFailure(f, _))
            if f.code == rusqlite::ErrorCode::DiskFull =>
        {
            Error::Invalid(
                "the SQLite database outgrew SQLite's in-memory limit (1 GiB)".to_string(),
            )
        }
        e => e,
    })
}

fn build_in_memory(
    meta: &[(&str, String)],
    entries: &[EntryRow<'_>],
    articles: &[ArticleRow<'_>],
) -> Result<Vec<u8>, Error> {
    // SQLite's `memdb` VFS: the database is one buffer, handed over without a page by
    // page copy, with a proper file header. A name without a leading `/` is private to
    // this connection (concurrent builds do not share it).
    let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
        | OpenFlags::SQLITE_OPEN_CREATE
        | OpenFlags::SQLITE_OPEN_URI
        | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut db = Connection::open_with_flags("file:errata-bundle.sqlite?vfs=memdb", flags)?;
    db.execute_batch(SCHEMA)?;
    let tx = db.transaction()?;
    for table in FTS_TABLES {
        tx.execute(
            &format!("INSERT INTO {table} ({table}, rank) VALUES ('hashsize', ?1)"),
            [FTS_HASH_SIZE],
        )?;
    }
    {
        let mut put_meta = tx.prepare("INSERT INTO meta (key, value) VALUES (?1, ?2)")?;
        for (k, v) in meta {
            put_meta.execute(params![k, v])?;
        }
        put_meta.execute(params!["fts_zh", "search_zh and search_articles_zh hold CJK runs as overlapping bigrams; segment a query the same way and MATCH it as a phrase"])?;
        insert_tables(&tx, entries, articles)?;
        // Built after the rows, in one go: its pages are contiguous too.
        tx.execute_batch("CREATE UNIQUE INDEX entries_id ON entries (id);")?;
        insert_search(&tx, entries, articles)?;
    }
    tx.commit()?;
    // The indexes are written; new connections get FTS5's default pending size back.
    for table in FTS_TABLES {
        db.execute(
            &format!("DELETE FROM {table}_config WHERE k = 'hashsize'"),
            [],
        )?;
    }
    let bytes = db.serialize(MAIN_DB)?.to_vec();
    db.close().map_err(|(_, e)| Error::Sqlite(e))?;
    Ok(bytes)
}

fn insert_tables(
    tx: &rusqlite::Transaction<'_>,
    entries: &[EntryRow<'_>],
    articles: &[ArticleRow<'_>],
) -> Result<(), Error> {
    let mut put_entry = tx.prepare(
        "INSERT INTO entries (rowid, id, domain, category, signature, signature_zh, regex, root_cause, root_cause_zh, error_code, json)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?;
    let mut put_dead = tx.prepare("INSERT INTO dead_ends VALUES (?1, ?2, ?3, ?4, ?5)")?;
    let mut put_work = tx.prepare("INSERT INTO workarounds VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
    // One table after the other, so that each one's pages are contiguous in the file
    // (which compresses better than interleaved pages).
    for (i, e) in entries.iter().enumerate() {
        put_entry.execute(params![
            i as i64 + 1,
            e.id,
            e.domain,
            e.category,
            e.signature,
            e.signature_zh,
            e.regex,
            e.root_cause,
            e.root_cause_zh,
            e.error_code,
            e.json,
        ])?;
    }
    for e in entries {
        for (p, (action, why_fails, rate)) in e.dead_ends.iter().enumerate() {
            put_dead.execute(params![e.id, p as i64, action, why_fails, rate])?;
        }
    }
    for e in entries {
        for (p, (action, action_zh, how, rate)) in e.workarounds.iter().enumerate() {
            put_work.execute(params![e.id, p as i64, action, action_zh, how, rate])?;
        }
    }
    let mut put_article = tx.prepare("INSERT INTO articles VALUES (?1, ?2, ?3, ?4, ?5, ?6)")?;
    for a in articles {
        put_article.execute(params![a.path, a.id, a.lang, a.title, a.markdown, a.text])?;
    }
    Ok(())
}

fn insert_search(
    tx: &rusqlite::Transaction<'_>,
    entries: &[EntryRow<'_>],
    articles: &[ArticleRow<'_>],
) -> Result<(), Error> {
    {
        let mut put_en = tx.prepare("INSERT INTO search_en (rowid, signature, root_cause, workarounds, dead_ends) VALUES (?1, ?2, ?3, ?4, ?5)")?;
        for (i, e) in entries.iter().enumerate() {
            put_en.execute(params![
                i as i64 + 1,
                e.signature,
                e.root_cause,
                e.en[0],
                e.en[1]
            ])?;
        }
    }
    {
        let mut put_zh = tx.prepare("INSERT INTO search_zh (rowid, signature, root_cause, workarounds) VALUES (?1, ?2, ?3, ?4)")?;
        for (i, e) in entries.iter().enumerate() {
            put_zh.execute(params![i as i64 + 1, e.zh[0], e.zh[1], e.zh[2]])?;
        }
    }
    let mut put_en =
        tx.prepare("INSERT INTO search_articles_en (path, title, text) VALUES (?1, ?2, ?3)")?;
    for a in articles.iter().filter(|a| a.lang == "en") {
        put_en.execute(params![a.path, a.title, a.text])?;
    }
    let mut put_zh =
        tx.prepare("INSERT INTO search_articles_zh (path, title, text) VALUES (?1, ?2, ?3)")?;
    for a in articles.iter().filter(|a| a.lang == "zh") {
        put_zh.execute(params![a.path, zh_segment(a.title), zh_segment(a.text)])?;
    }
    Ok(())
}

// The bigram rule is shared with the query side, which owns it.
pub use errata_search::{zh_query, zh_segment};
