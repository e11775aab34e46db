//! Machine-readable outputs: `sitemap.xml`, Atom feeds, `robots.txt`, and the JSON API
//! mirror (`api/v1/<id>.json`, `api/v1/index.json`).

use serde_json::{Value, json};

use crate::Error;
use crate::pages::Ctx;
use crate::urls::{self, Lang};

/// `api/v1/<id>.json`: the entry exactly as written in the data (the bundle's content).
pub(crate) fn api_entry(ctx: &Ctx<'_>, id: &str) -> Option<(String, Vec<u8>)> {
    let (_, doc) = ctx.catalog.entries.get(id)?;
    let mut bytes = doc.text().as_bytes().to_vec();
    if !bytes.ends_with(b"\n") {
        bytes.push(b'\n');
    }
    Some((format!("api/v1/{id}.json"), bytes))
}

#[derive(serde::Serialize)]
struct ApiIndex<'a> {
    version: u32,
    entries: Vec<ApiEntry<'a>>,
    articles: Vec<ApiArticle<'a>>,
}

#[derive(serde::Serialize)]
struct ApiEntry<'a> {
    id: &'a str,
    signature: &'a str,
    signature_zh: &'a str,
    error_code: Option<&'a str>,
    last_updated: &'a str,
    api: String,
    page: String,
}

#[derive(serde::Serialize)]
struct ApiArticle<'a> {
    id: &'a str,
    title: &'a str,
    date: &'a str,
    translation_zh: &'static str,
    page: String,
}

/// `api/v1/index.json`: every entry and article.
pub(crate) fn api_index(ctx: &Ctx<'_>) -> Vec<u8> {
    let entries = ctx
        .catalog
        .entries
        .iter()
        .map(|(id, (e, _))| ApiEntry {
            id,
            signature: &e.signature,
            signature_zh: &e.signature_zh,
            error_code: e.error_code.as_deref(),
            last_updated: &e.last_updated,
            api: format!("{id}.json"),
            page: urls::entry_page(id),
        })
        .collect();
    let articles = ctx
        .catalog
        .articles
        .iter()
        .map(|(id, a)| ApiArticle {
            id,
            title: a.title(),
            date: a.date(),
            translation_zh: match a.translation() {
                crate::catalog::Translation::Current => "current",
                crate::catalog::Translation::Outdated => "outdated",
                crate::catalog::Translation::Missing => "missing",
            },
            page: urls::article_page(id),
        })
        .collect();
    let index = ApiIndex {
        version: 1,
        entries,
        articles,
    };
    let mut bytes = serde_json::to_vec_pretty(&index).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Every language-neutral page with its last-modified date from the data.
fn sitemap_pages(ctx: &Ctx<'_>) -> Vec<(String, String)> {
    let catalog = ctx.catalog;
    let mut pages: Vec<(String, String)> = vec![
        ("index.html".into(), String::new()),
        ("translations.html".into(), String::new()),
    ];
    pages.extend(
        catalog
            .entries
            .iter()
            .map(|(id, (e, _))| (urls::entry_page(id), e.last_updated.clone())),
    );
    pages.extend(
        catalog
            .articles
            .iter()
            .map(|(id, a)| (urls::article_page(id), a.date().to_string())),
    );
    pages.extend(
        catalog
            .domains
            .keys()
            .map(|d| (urls::domain_page(d), String::new())),
    );
    pages.extend(
        catalog
            .tags
            .keys()
            .map(|slug| (urls::tag_slug_page(slug), String::new())),
    );
    pages
}

#[derive(serde::Serialize)]
struct SitemapUrl {
    loc: String,
    lastmod: String,
    alternates: Vec<Alternate>,
}

#[derive(serde::Serialize)]
struct Alternate {
    lang: &'static str,
    href: String,
}

/// `sitemap.xml`: every page in both languages, with `hreflang` alternates.
pub(crate) fn sitemap(ctx: &Ctx<'_>) -> Result<String, Error> {
    if ctx.theme.is_default("sitemap.xml") {
        return Ok(sitemap_direct(ctx));
    }
    sitemap_template(ctx)
}

/// What the embedded `templates/sitemap.xml` renders, written directly: 22,000 URLs
/// through the template engine take a tenth of a second, and the sitemap changes with
/// every added entry. (A unit test keeps the two identical.)
fn sitemap_direct(ctx: &Ctx<'_>) -> String {
    let base = &ctx.opts.base_url;
    let pages = sitemap_pages(ctx);
    let mut out: Vec<u8> = Vec::with_capacity(128 + pages.len() * 2 * 320);
    out.extend_from_slice(b"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\" xmlns:xhtml=\"http://www.w3.org/1999/xhtml\">\n");
    let esc = |out: &mut Vec<u8>, text: &str| {
        // Writing into a Vec cannot fail.
        let _ = tera::escape_html(text, out);
    };
    for (page, lastmod) in &pages {
        let hrefs: Vec<String> = Lang::ALL
            .iter()
            .map(|l| urls::absolute(base, &l.file(page)))
            .collect();
        for loc in &hrefs {
            out.extend_from_slice(b"  <url>\n    <loc>");
            esc(&mut out, loc);
            out.extend_from_slice(b"</loc>\n");
            if !lastmod.is_empty() {
                out.extend_from_slice(b"    <lastmod>");
                esc(&mut out, lastmod);
                out.extend_from_slice(b"</lastmod>\n");
            }
            for (lang, href) in Lang::ALL.iter().zip(&hrefs) {
                out.extend_from_slice(b"    <xhtml:link rel=\"alternate\" hreflang=\"");
                esc(&mut out, lang.code());
                out.extend_from_slice(b"\" href=\"");
                esc(&mut out, href);
                out.extend_from_slice(b"\"/>\n");
            }
            out.extend_from_slice(b"  </url>\n");
        }
    }
    out.extend_from_slice(b"</urlset>\n");
    String::from_utf8(out).unwrap_or_default()
}

/// `sitemap.xml` through the theme's template (when it overrides the default).
fn sitemap_template(ctx: &Ctx<'_>) -> Result<String, Error> {
    let base = &ctx.opts.base_url;
    let urls: Vec<SitemapUrl> = sitemap_pages(ctx)
        .into_iter()
        .flat_map(|(page, lastmod)| {
            let alternates: Vec<Alternate> = Lang::ALL
                .iter()
                .map(|l| Alternate {
                    lang: l.code(),
                    href: urls::absolute(base, &l.file(&page)),
                })
                .collect();
            Lang::ALL
                .iter()
                .map(|lang| SitemapUrl {
                    loc: urls::absolute(base, &lang.file(&page)),
                    lastmod: lastmod.clone(),
                    alternates: alternates
                        .iter()
                        .map(|a| Alternate {
                            lang: a.lang,
                            href: a.href.clone(),
                        })
                        .collect(),
                })
                .collect::<Vec<_>>()
        })
        .collect();
    let mut tctx = tera::Context::new();
    tctx.insert("urls", &urls);
    ctx.theme.render("en", "sitemap.xml", &tctx)
}

/// `feed.xml` (and `zh/feed.xml`): the 50 most recently updated entries and articles.
pub(crate) fn feed(ctx: &Ctx<'_>, lang: Lang) -> Result<String, Error> {
    let base = &ctx.opts.base_url;
    let items = ctx.recent(lang, (true, true), 50, true);
    let updated = items
        .first()
        .map(|i| i.date.to_string())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "1970-01-01".into());
    let values: Vec<Value> = items
        .iter()
        .take(50)
        .map(|i| {
            json!({"title": i.title, "url": urls::absolute(base, &lang.file(&i.page)),
                   "date": if i.date.is_empty() { "1970-01-01" } else { i.date }, "summary": i.summary})
        })
        .collect();
    let mut tctx = tera::Context::new();
    tctx.insert("lang", lang.code());
    tctx.insert("feed_id", &urls::absolute(base, &lang.file("feed.xml")));
    tctx.insert("self_url", &urls::absolute(base, &lang.file("feed.xml")));
    tctx.insert("home_url", &urls::absolute(base, &lang.file("index.html")));
    tctx.insert("updated", &updated);
    tctx.insert("items", &values);
    ctx.theme.render(lang.code(), "feed.xml", &tctx)
}

/// `robots.txt`: everything may be crawled; the sitemap is named.
pub(crate) fn robots(ctx: &Ctx<'_>) -> String {
    format!(
        "User-agent: *\nAllow: /\n\nSitemap: {}\n",
        urls::absolute(&ctx.opts.base_url, "sitemap.xml")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_sitemap_is_the_template_rendered() {
        let data = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(data.path().join("signatures/cuda")).unwrap();
        for (slug, date, tag) in [("a", "2026-01-02", "x & <y>"), ("b", "", "显存")] {
            std::fs::write(
                data.path().join(format!("signatures/cuda/{slug}.json")),
                format!(
                    r#"{{"id": "cuda/{slug}", "signature": "E", "last_updated": "{date}", "tags": ["{tag}"]}}"#
                ),
            )
            .unwrap();
        }
        let kb = errata_load::KnowledgeBase::load(data.path()).unwrap();
        let catalog = crate::catalog::Catalog::new(&kb);
        let theme = crate::theme::Theme::load(None).unwrap();
        let runs = crate::runs::Runs::default();
        for base in ["/", "https://example.org/kb&'\"<x>/"] {
            let opts = crate::SiteOptions::default().with_base_url(base);
            let ctx = Ctx {
                theme: &theme,
                opts: &opts,
                catalog: &catalog,
                runs: &runs,
                outcomes: &errata_outcomes::Index::default(),
                data_root: &kb.root,
                texts: &kb,
            };
            assert_eq!(
                sitemap_direct(&ctx),
                sitemap_template(&ctx).unwrap(),
                "{base}"
            );
        }
    }
}
