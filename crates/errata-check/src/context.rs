//! What the rules share: the knowledge base, "today", the id index and the compiled
//! regexes, built once per check.

use std::collections::HashMap;

use errata_load::{EntryDoc, KnowledgeBase};
use errata_model::date::Date;
use rayon::prelude::*;

use crate::regex_index::{CompiledRegex, compile};

pub(crate) struct Ctx<'a> {
    pub kb: &'a KnowledgeBase,
    pub today: Date,
    /// Entry id → the entries that declare it (more than one is `duplicate-id`).
    pub ids: HashMap<&'a str, Vec<&'a EntryDoc>>,
    /// Article id → exists (English originals only).
    pub article_ids: HashMap<&'a str, &'a errata_load::ArticleDoc>,
    /// Per entry (same index as `kb.entries`): its compiled regex, or why it failed.
    pub regexes: Vec<Option<Result<CompiledRegex, String>>>,
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
        let regexes = kb
            .entries
            .par_iter()
            .map(|doc| {
                doc.entry
                    .as_ref()
                    .filter(|e| !e.regex.trim().is_empty())
                    .map(|e| compile(&e.regex))
            })
            .collect();
        Ctx {
            kb,
            today,
            ids,
            article_ids,
            regexes,
        }
    }

    /// Whether an entry id exists.
    pub fn entry_exists(&self, id: &str) -> bool {
        self.ids.contains_key(id)
    }
}
