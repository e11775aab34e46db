//! Index pages: home, per-domain, per-tag, translation status, search, 404.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Value, json};

use crate::Error;
use crate::catalog::Translation;
use crate::pages::Ctx;
use crate::urls::{self, Lang};

/// A listed item: an entry or an article, with the date it is sorted by. The summary
/// is only computed where it is shown (feeds, search): an article's is a Markdown parse.
pub(crate) struct Item<'a> {
    pub title: Cow<'a, str>,
    pub page: String,
    pub date: &'a str,
    pub kind: &'static str,
    pub summary: String,
}

/// How a list template sees an item.
#[derive(Serialize)]
struct ListItem<'i> {
    title: &'i str,
    href: String,
    date: &'i str,
    kind: &'i str,
}

impl<'a> Ctx<'a> {
    pub(crate) fn entry_item(&self, id: &str, lang: Lang, summary: bool) -> Option<Item<'a>> {
        let e = self.catalog.entry(id)?;
        let zh = lang == Lang::Zh && !e.signature_zh.trim().is_empty();
        let summary = if summary {
            let cause = if lang == Lang::Zh && !e.root_cause_zh.trim().is_empty() {
                &e.root_cause_zh
            } else {
                &e.root_cause
            };
            errata_model::truncate(cause, 200)
        } else {
            String::new()
        };
        Some(Item {
            title: Cow::Borrowed(if zh { &e.signature_zh } else { &e.signature }),
            page: urls::entry_page(id),
            date: &e.last_updated,
            kind: "entry",
            summary,
        })
    }

    pub(crate) fn article_item(&self, id: &str, lang: Lang, summary: bool) -> Option<Item<'a>> {
        let a = self.catalog.articles.get(id)?;
        let summary = if summary {
            let text = self.source_text(a.en);
            crate::pages::first_paragraph(text.get(a.en.body_range.clone()).unwrap_or(""))
        } else {
            String::new()
        };
        Some(Item {
            title: Cow::Owned(self.article_title(a, lang)),
            page: urls::article_page(id),
            date: a.date(),
            kind: "article",
            summary,
        })
    }

    /// The `limit` most recent entries and/or articles, newest first (date, then page
    /// path, for a stable order). Only those are turned into items.
    pub(crate) fn recent(
        &self,
        lang: Lang,
        (entries, articles): (bool, bool),
        limit: usize,
        summary: bool,
    ) -> Vec<Item<'a>> {
        // (date, page prefix, id): the page is `<prefix><id>.html`.
        type Key<'k> = (&'k str, &'static str, &'k str);
        let mut keys: Vec<Key<'_>> = Vec::new();
        if entries {
            keys.extend(
                self.catalog
                    .entries
                    .iter()
                    .map(|(id, (e, _))| (e.last_updated.as_str(), "entries/", *id)),
            );
        }
        if articles {
            keys.extend(
                self.catalog
                    .articles
                    .iter()
                    .map(|(id, a)| (a.date(), "articles/", *id)),
            );
        }
        fn page<'k>(k: &Key<'k>) -> impl Iterator<Item = u8> + 'k {
            k.1.bytes().chain(k.2.bytes()).chain(".html".bytes())
        }
        let order = |a: &Key<'_>, b: &Key<'_>| b.0.cmp(a.0).then_with(|| page(a).cmp(page(b)));
        if keys.len() > limit && limit > 0 {
            keys.select_nth_unstable_by(limit - 1, order);
            keys.truncate(limit);
        }
        keys.sort_unstable_by(order);
        keys.truncate(limit);
        keys.into_iter()
            .filter_map(|(_, prefix, id)| {
                if prefix == "entries/" {
                    self.entry_item(id, lang, summary)
                } else {
                    self.article_item(id, lang, summary)
                }
            })
            .collect()
    }

    fn list_values<'i>(
        &self,
        items: &'i [Item<'_>],
        kinds: &'i (String, String),
        lang_root: &str,
    ) -> Vec<ListItem<'i>> {
        items
            .iter()
            .map(|i| ListItem {
                title: &i.title,
                href: format!("{lang_root}{}", i.page),
                date: i.date,
                kind: if i.kind == "entry" {
                    &kinds.0
                } else {
                    &kinds.1
                },
            })
            .collect()
    }

    /// The UI names of the two kinds of item, entry and article.
    fn kinds(&self, lang: Lang) -> (String, String) {
        (
            self.theme.text(lang.code(), "kind_entry", &[]),
            self.theme.text(lang.code(), "kind_article", &[]),
        )
    }

    fn frame_ctx(
        &self,
        lang: Lang,
        page: &str,
        title: &str,
        description: &str,
    ) -> (String, String, tera::Context) {
        let file = lang.file(page);
        let root = urls::root_of(&file);
        let lang_root = format!("{root}{}", lang.prefix());
        let ctx = self.base(lang, page, title, description);
        (file, lang_root, ctx)
    }

    pub(crate) fn home_page(&self, lang: Lang) -> Result<(String, String), Error> {
        let t = |k: &str| self.theme.text(lang.code(), k, &[]);
        let (file, lang_root, mut ctx) =
            self.frame_ctx(lang, "index.html", &t("home_title"), &t("home_lead"));
        let recent: Vec<Item> = self.recent(lang, (true, false), 15, false);
        let articles: Vec<Item> = self.recent(lang, (false, true), 10, false);
        let kinds = self.kinds(lang);
        let domains: Vec<Value> = self
            .catalog
            .domains
            .iter()
            .map(|(d, (e, a))| json!({"name": d, "count": e.len() + a.len(), "href": format!("{lang_root}{}", urls::domain_page(d))}))
            .collect();
        let mut tags: Vec<(&str, &str, usize)> = self
            .catalog
            .tags
            .iter()
            .map(|(slug, g)| (g.name, slug.as_str(), g.count()))
            .collect();
        tags.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(b.0)));
        tags.truncate(40);
        let tags: Vec<Value> = tags
            .into_iter()
            .map(|(t, slug, n)| json!({"name": t, "count": n, "href": format!("{lang_root}{}", urls::tag_slug_page(slug))}))
            .collect();
        ctx.insert(
            "stats",
            &json!({
                "entries": self.catalog.entries.len(),
                "articles": self.catalog.articles.len(),
                "domains": self.catalog.domains.len(),
                "verified": self.runs.verified_count(),
                "cuda_codes": errata_model::cuda_errors::covered(self.catalog.entries.values().map(|(e, _)| *e)).len(),
                "cuda_codes_total": errata_model::cuda_errors::runtime_code_count(),
            }),
        );
        ctx.insert("recent", &self.list_values(&recent, &kinds, &lang_root));
        ctx.insert("articles", &self.list_values(&articles, &kinds, &lang_root));
        ctx.insert("domains", &domains);
        ctx.insert("tags", &tags);
        ctx.insert(
            "json_ld",
            &crate::pages::json_ld(&json!({
                "@context": "https://schema.org", "@type": "WebSite", "name": t("site_name"),
                "inLanguage": lang.code(), "url": crate::urls::absolute(&self.opts.base_url, &lang.file("index.html")),
            })),
        );
        Ok((file, self.theme.render(lang.code(), "home.html", &ctx)?))
    }

    fn list_page(
        &self,
        lang: Lang,
        page: &str,
        heading: &str,
        entries: &[&str],
        articles: &[&str],
    ) -> Result<(String, String), Error> {
        let (file, lang_root, mut ctx) = self.frame_ctx(lang, page, heading, heading);
        let mut items: Vec<Item> = articles
            .iter()
            .filter_map(|id| self.article_item(id, lang, false))
            .chain(
                entries
                    .iter()
                    .filter_map(|id| self.entry_item(id, lang, false)),
            )
            .collect();
        items.sort_by(|a, b| {
            a.kind
                .cmp(b.kind)
                .then_with(|| a.title.cmp(&b.title))
                .then_with(|| a.page.cmp(&b.page))
        });
        ctx.insert("heading", heading);
        let kinds = self.kinds(lang);
        ctx.insert("items", &self.list_values(&items, &kinds, &lang_root));
        Ok((file, self.theme.render(lang.code(), "list.html", &ctx)?))
    }

    pub(crate) fn domain_page(&self, domain: &str, lang: Lang) -> Result<(String, String), Error> {
        let (entries, articles) = self
            .catalog
            .domains
            .get(domain)
            .cloned()
            .unwrap_or_default();
        let heading = self
            .theme
            .text(lang.code(), "domain_heading", &[("name", domain)]);
        self.list_page(
            lang,
            &urls::domain_page(domain),
            &heading,
            &entries,
            &articles,
        )
    }

    /// The page of the tag with this slug.
    pub(crate) fn tag_page(&self, slug: &str, lang: Lang) -> Result<(String, String), Error> {
        let group = self.catalog.tags.get(slug).cloned().unwrap_or_default();
        let heading = self
            .theme
            .text(lang.code(), "tag_heading", &[("name", group.name)]);
        self.list_page(
            lang,
            &urls::tag_slug_page(slug),
            &heading,
            &group.entries,
            &group.articles,
        )
    }

    pub(crate) fn translations_page(&self, lang: Lang) -> Result<(String, String), Error> {
        let t = |k: &str| self.theme.text(lang.code(), k, &[]);
        let (file, lang_root, mut ctx) = self.frame_ctx(
            lang,
            "translations.html",
            &t("translation_status"),
            &t("translation_intro"),
        );
        let (mut current, mut outdated, mut missing) = (0, 0, 0);
        let mut rows: Vec<(u8, Value)> = Vec::new();
        for (id, pair) in &self.catalog.articles {
            let (rank, state) = match pair.translation() {
                Translation::Missing => {
                    missing += 1;
                    (0, "missing")
                }
                Translation::Outdated => {
                    outdated += 1;
                    (1, "outdated")
                }
                Translation::Current => {
                    current += 1;
                    (2, "current")
                }
            };
            rows.push((
                rank,
                json!({"title": self.article_title(pair, lang),
                       // An English title on the Chinese page is the name of the English text.
                       "title_lang": if lang == Lang::Zh && pair.zh.is_none() { "en" } else { "" },
                       "href": format!("{lang_root}{}", urls::article_page(id)),
                       "state": state, "label": t(&format!("tr_{state}"))}),
            ));
        }
        // Work to do first: missing, then outdated, then current; by id within each.
        rows.sort_by_key(|(rank, _)| *rank);
        let entries_translated = self
            .catalog
            .entries
            .values()
            .filter(|(e, _)| {
                !e.signature_zh.trim().is_empty() && !e.root_cause_zh.trim().is_empty()
            })
            .count();
        ctx.insert(
            "status",
            &json!({"current": current, "outdated": outdated, "missing": missing,
                    "entries_translated": entries_translated, "entries_total": self.catalog.entries.len()}),
        );
        ctx.insert(
            "rows",
            &rows.into_iter().map(|(_, v)| v).collect::<Vec<_>>(),
        );
        Ok((
            file,
            self.theme.render(lang.code(), "translations.html", &ctx)?,
        ))
    }

    pub(crate) fn search_page(&self, lang: Lang) -> Result<(String, String), Error> {
        let title = self.theme.text(lang.code(), "search_title", &[]);
        let (file, _, mut ctx) = self.frame_ctx(lang, "search.html", &title, &title);
        // Every entry and article is one document of the index.
        let docs = self.catalog.entries.len() + self.catalog.articles.len();
        ctx.insert(
            "search",
            &json!({"docs": docs, "shards": crate::search::shards_for(docs)}),
        );
        Ok((file, self.theme.render(lang.code(), "search.html", &ctx)?))
    }

    /// The 404 page is served for any missing path, at any depth, so its links are
    /// absolute from the configured base URL rather than relative.
    pub(crate) fn not_found_page(&self, lang: Lang) -> Result<(String, String), Error> {
        let title = self.theme.text(lang.code(), "not_found_title", &[]);
        let (file, _, mut ctx) = self.frame_ctx(lang, "404.html", &title, &title);
        let base = format!("{}/", self.opts.base_url.trim_end_matches('/'));
        ctx.insert("root", &base);
        ctx.insert("lang_root", &format!("{base}{}", lang.prefix()));
        let languages: Vec<Value> = Lang::ALL
            .iter()
            .map(|l| json!({"code": l.code(), "name": self.theme.text(l.code(), "lang_name", &[]),
                            "current": *l == lang, "href": format!("{base}{}", l.file("index.html"))}))
            .collect();
        ctx.insert("languages", &languages);
        Ok((file, self.theme.render(lang.code(), "404.html", &ctx)?))
    }
}
