//! What the rules share: the knowledge base, "today", the id index and the compiled
//! regexes, built once per check.

use std::collections::HashMap;

use crate::regexes::Regexes;
use errata_load::{EntryDoc, KnowledgeBase};
use errata_model::date::Date;

pub(crate) struct Ctx<'a> {
    pub kb: &'a KnowledgeBase,
    pub today: Date,
    /// Entry id → the entries that declare it (more than one is `duplicate-id`).
    pub ids: HashMap<&'a str, Vec<&'a EntryDoc>>,
    /// Article id → exists (English originals only).
    pub article_ids: HashMap<&'a str, &'a errata_load::ArticleDoc>,
    /// Normalised article path → article, for resolving relative links.
    pub article_paths: HashMap<std::path::PathBuf, &'a errata_load::ArticleDoc>,
    /// The data directory with symbolic links resolved (`None` when it cannot be: a
    /// knowledge base loaded from memory), to tell whether a link target leaves it.
    pub canonical_root: Option<std::path::PathBuf>,
    /// Every entry's regex: whether it compiles, matches its own signature, and which
    /// signatures it matches. Built on first use ([`Ctx::regexes`]): the rules that do
    /// not need it run while it is built (`rules::run_all`).
    regexes: std::sync::OnceLock<Regexes>,
}

impl<'a> Ctx<'a> {
    pub fn new(kb: &'a KnowledgeBase, today: Date) -> Ctx<'a> {
        let mut ids: HashMap<&str, Vec<&EntryDoc>> = HashMap::new();
        for doc in &kb.entries {
            if let Some(e) = &doc.entry
                && !e.id.is_empty()
            {
                ids.entry(e.id.as_str()).or_default().push(doc);
            }
        }
        let article_ids = kb
            .articles
            .iter()
            .filter(|a| a.lang.is_none())
            .filter_map(|a| a.path_id.as_deref().map(|id| (id, a)))
            .collect();
        let article_paths = kb
            .articles
            .iter()
            .map(|a| (crate::rules::normalize_path(&a.path), a))
            .collect();
        let canonical_root = kb.root.canonicalize().ok();
        Ctx {
            kb,
            today,
            ids,
            article_ids,
            article_paths,
            canonical_root,
            regexes: std::sync::OnceLock::new(),
        }
    }

    /// The compiled regexes, built by the first caller (another caller waits for it).
    pub fn regexes(&self) -> &Regexes {
        self.regexes.get_or_init(|| Regexes::new(self.kb))
    }

    /// Whether an entry id exists.
    pub fn entry_exists(&self, id: &str) -> bool {
        self.ids.contains_key(id)
    }
}
