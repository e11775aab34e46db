//! What the site is built from: the knowledge base sorted and cross-referenced once,
//! so that every page is a pure function of the catalog.

use std::collections::BTreeMap;

use errata_load::{ArticleDoc, EntryDoc, KnowledgeBase};
use errata_model::Entry;

use crate::urls::{is_safe_id, tag_slug};

/// An article with its Chinese translation, if any.
pub struct ArticlePair<'kb> {
    /// `<domain>/<slug>`.
    pub id: &'kb str,
    /// The English original.
    pub en: &'kb ArticleDoc,
    /// `<slug>.zh.md`, when it exists.
    pub zh: Option<&'kb ArticleDoc>,
}

/// How an article's translation stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Translation {
    /// `<slug>.zh.md` exists and its `source_hash` is the English file's sha256.
    Current,
    /// It exists but was made from another version of the English text.
    Outdated,
    /// There is none.
    Missing,
}

impl ArticlePair<'_> {
    /// The state of the Chinese translation.
    pub fn translation(&self) -> Translation {
        match self.zh {
            None => Translation::Missing,
            Some(zh) => {
                let hash = zh.front.as_ref().and_then(|f| f.source_hash.as_deref());
                if hash.is_some_and(|h| h.eq_ignore_ascii_case(&self.en.sha256)) {
                    Translation::Current
                } else {
                    Translation::Outdated
                }
            }
        }
    }

    /// The English title (the id when the front matter has none).
    pub fn title(&self) -> &str {
        self.en
            .front
            .as_ref()
            .map(|f| f.title.as_str())
            .filter(|t| !t.trim().is_empty())
            .unwrap_or(self.id)
    }

    /// The publication date from the front matter.
    pub fn date(&self) -> &str {
        self.en.front.as_ref().map_or("", |f| f.date.as_str())
    }
}

/// What one tag page lists. Tags are grouped by slug, so "CUDA Graphs" and
/// "cuda-graphs" are one tag (and one file) rather than two pages fighting over a path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TagGroup<'kb> {
    /// The spelling shown: the most used one (on a tie, the first in byte order).
    pub name: &'kb str,
    /// Ids of the entries carrying it, sorted.
    pub entries: Vec<&'kb str>,
    /// Ids of the articles carrying it, sorted.
    pub articles: Vec<&'kb str>,
}

impl TagGroup<'_> {
    /// How many entries and articles carry it.
    pub fn count(&self) -> usize {
        self.entries.len() + self.articles.len()
    }
}

/// Entries and articles, sorted by id, with their cross-references. Everything is
/// borrowed from the documents, so building it for 10,000 entries takes milliseconds
/// (an incremental rebuild builds it anew each time).
pub struct Catalog<'kb> {
    /// Entries by id (only those whose id is a safe path).
    pub entries: BTreeMap<&'kb str, (&'kb Entry, &'kb EntryDoc)>,
    /// Articles by id.
    pub articles: BTreeMap<&'kb str, ArticlePair<'kb>>,
    /// entry id → ids of the articles naming it in `signatures`.
    pub articles_of_entry: BTreeMap<&'kb str, Vec<&'kb str>>,
    /// domain → entry ids and article ids.
    pub domains: BTreeMap<&'kb str, (Vec<&'kb str>, Vec<&'kb str>)>,
    /// tag slug → the tag's page: every spelling with that slug, grouped.
    pub tags: BTreeMap<String, TagGroup<'kb>>,
    /// Ids skipped because they are not safe paths (reported by the checker too).
    pub skipped: Vec<String>,
}

impl<'kb> Catalog<'kb> {
    /// Builds the catalog. The first entry or article with a given id wins (duplicates
    /// are a check error, so a published build has none).
    pub fn new(kb: &'kb KnowledgeBase) -> Catalog<'kb> {
        Catalog::from_docs(&kb.entries, &kb.articles)
    }

    /// Builds the catalog from entry and article documents, each in path order (as a
    /// [`KnowledgeBase`] holds them).
    pub fn from_docs(
        entry_docs: impl IntoIterator<Item = &'kb EntryDoc>,
        article_docs: impl IntoIterator<Item = &'kb ArticleDoc>,
    ) -> Catalog<'kb> {
        let mut entries = BTreeMap::new();
        let mut skipped = Vec::new();
        for doc in entry_docs {
            let Some(entry) = doc.entry.as_ref() else {
                continue;
            };
            if !is_safe_id(&entry.id) {
                skipped.push(entry.id.clone());
                continue;
            }
            entries.entry(entry.id.as_str()).or_insert((entry, doc));
        }
        let mut articles: BTreeMap<&'kb str, ArticlePair<'kb>> = BTreeMap::new();
        let mut translations = BTreeMap::new();
        for doc in article_docs {
            let Some(id) = doc.path_id.as_deref() else {
                continue;
            };
            if !is_safe_id(id) {
                skipped.push(id.to_string());
                continue;
            }
            if doc.lang.as_deref() == Some("zh") {
                translations.entry(id).or_insert(doc);
            } else {
                articles.entry(id).or_insert(ArticlePair {
                    id,
                    en: doc,
                    zh: None,
                });
            }
        }
        for (id, zh) in translations {
            if let Some(pair) = articles.get_mut(id) {
                pair.zh = Some(zh);
            }
        }

        let mut articles_of_entry: BTreeMap<&'kb str, Vec<&'kb str>> = BTreeMap::new();
        let mut domains: BTreeMap<&'kb str, (Vec<&'kb str>, Vec<&'kb str>)> = BTreeMap::new();
        let mut tags: BTreeMap<String, TagGroup<'kb>> = BTreeMap::new();
        let mut spellings: BTreeMap<String, BTreeMap<&'kb str, usize>> = BTreeMap::new();
        let mut tag = |name: &'kb str, id: &'kb str, article: bool| {
            let slug = tag_slug(name);
            *spellings
                .entry(slug.clone())
                .or_default()
                .entry(name)
                .or_default() += 1;
            let group = tags.entry(slug).or_default();
            let ids = if article {
                &mut group.articles
            } else {
                &mut group.entries
            };
            // Ids come in order; two spellings of one tag on one document count once.
            if ids.last() != Some(&id) {
                ids.push(id);
            }
        };
        for (&id, (entry, _)) in &entries {
            let domain = id.split('/').next().unwrap_or_default();
            domains.entry(domain).or_default().0.push(id);
            for name in unique(&entry.tags) {
                tag(name, id, false);
            }
        }
        for (&id, pair) in &articles {
            let domain = id.split('/').next().unwrap_or_default();
            domains.entry(domain).or_default().1.push(id);
            if let Some(front) = &pair.en.front {
                for name in unique(&front.tags) {
                    tag(name, id, true);
                }
                for sig in unique(&front.signatures) {
                    articles_of_entry.entry(sig).or_default().push(id);
                }
            }
        }
        for (slug, group) in &mut tags {
            // The most used spelling; on a tie, the first in byte order.
            let best = spellings.get(slug).and_then(|names| {
                names
                    .iter()
                    .max_by_key(|&(&name, &n)| (n, std::cmp::Reverse(name)))
            });
            group.name = best.map_or("", |(&name, _)| name);
        }
        Catalog {
            entries,
            articles,
            articles_of_entry,
            domains,
            tags,
            skipped,
        }
    }

    /// The entry with this id.
    pub fn entry(&self, id: &str) -> Option<&'kb Entry> {
        self.entries.get(id).map(|(e, _)| *e)
    }
}

/// The distinct non-empty values of a list, trimmed and sorted.
pub(crate) fn unique(items: &[String]) -> Vec<&str> {
    let mut seen: Vec<&str> = items
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    seen.sort_unstable();
    seen.dedup();
    seen
}
