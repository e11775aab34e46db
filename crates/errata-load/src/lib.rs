//! Loading an errata knowledge base from disk.
//!
//! [`KnowledgeBase::load`] walks a data directory (sorted, deterministic), reads every
//! entry and article in parallel, and parses each one as far as it goes:
//!
//! - an entry becomes an [`EntryDoc`]: its text (the JSON tree is parsed on demand by
//!   [`EntryDoc::value`], one entry at a time, for schema validation and the bundle)
//!   and, when it deserializes, the typed [`errata_model::Entry`];
//! - an article becomes an [`ArticleDoc`]: its front matter and the structure the
//!   checker, the snippet runner and the site need (headings with their slugs, links,
//!   fenced code blocks), all with byte offsets.
//!
//! Problems found while loading (unreadable files, invalid UTF-8, JSON syntax errors,
//! missing front matter) are [`errata_model::Diagnostic`]s collected in
//! [`KnowledgeBase::diagnostics`]; one bad file never stops the others from loading.
//!
//! Diagnostics carry an [`errata_model::Anchor`] (a JSON pointer, say) rather than a
//! position. [`KnowledgeBase::resolve`] turns anchors into line:column at the end, and
//! re-scans only the files that have diagnostics, which keeps a clean corpus fast.
//!
//! ```no_run
//! let kb = errata_load::KnowledgeBase::load(std::path::Path::new("data")).unwrap();
//! println!("{} entries, {} articles", kb.entries.len(), kb.articles.len());
//! ```
#![deny(missing_docs)]

mod article;
pub mod config;
mod entry;
mod frontmatter_spans;
mod json_spans;
mod knowledge_base;
pub mod markdown;
mod outcome;
mod source;

pub use article::{ArticleDoc, CodeBlock, Heading, Link};
pub use config::{Config, RuleLevel};
pub use entry::EntryDoc;
pub use knowledge_base::{KnowledgeBase, LoadError};
pub use outcome::{OutcomeDoc, OutcomeLine, load_outcomes, outcome_index};
pub use source::{LineIndex, MAX_FILE_BYTES, SourceFile, data_relative, read_bounded};

/// Hex sha256 of some bytes: the one hash function of errata (snippet hashes,
/// translation `source_hash`, bundle members).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}
