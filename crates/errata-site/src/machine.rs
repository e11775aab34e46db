//! Machine-readable outputs: `sitemap.xml`, Atom feeds, `robots.txt`, and the JSON API
//! mirror (`api/v1/<id>.json`, `api/v1/index.json`).

use serde_json::{Value, json};

use crate::Error;
use crate::pages::Ctx;
use crate::urls::{self, Lang};

/// The JSON API: each entry exactly as written in the data (the bundle's content), and
/// an index of every entry and article.
pub(crate) fn api(ctx: &Ctx<'_>) -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    let mut entries = Vec::new();
    for (id, (e, doc)) in &ctx.catalog.entries {
        let mut bytes = serde_json::to_vec_pretty(&doc.value()).unwrap_or_default();
        bytes.push(b'\n');
        files.push((format!("api/v1/{id}.json"), bytes));
        entries.push(json!({
            "id": id,
            "signature": e.signature,
            "signature_zh": e.signature_zh,
            "error_code": e.error_code,
            "last_updated": e.last_updated,
            "api": format!("{id}.json"),
            "page": urls::entry_page(id),
        }));
    }
    let articles: Vec<Value> = ctx
        .catalog
        .articles
        .iter()
        .map(|(id, a)| {
            json!({"id": id, "title": a.title(), "date": a.date(),
                   "translation_zh": match a.translation() {
                       crate::catalog::Translation::Current => "current",
                       crate::catalog::Translation::Outdated => "outdated",
                       crate::catalog::Translation::Missing => "missing",
                   },
                   "page": urls::article_page(id)})
        })
        .collect();
    let index = json!({"version": 1, "entries": entries, "articles": articles});
    let mut bytes = serde_json::to_vec_pretty(&index).unwrap_or_default();
    bytes.push(b'\n');
    files.push(("api/v1/index.json".to_string(), bytes));
    files
}

/// `sitemap.xml`: every page in both languages, with `hreflang` alternates.
pub(crate) fn sitemap(ctx: &Ctx<'_>, pages: &[(String, String)]) -> Result<String, Error> {
    let base = &ctx.opts.base_url;
    let urls: Vec<Value> = pages
        .iter()
        .flat_map(|(page, lastmod)| {
            Lang::ALL.iter().map(move |lang| {
                json!({
                    "loc": urls::absolute(base, &lang.file(page)),
                    "lastmod": lastmod,
                    "alternates": Lang::ALL.iter().map(|l| json!({"lang": l.code(), "href": urls::absolute(base, &l.file(page))})).collect::<Vec<_>>(),
                })
            })
        })
        .collect();
    let mut tctx = tera::Context::new();
    tctx.insert("urls", &urls);
    ctx.theme.render("en", "sitemap.xml", &tctx)
}

/// `feed.xml` (and `zh/feed.xml`): the 50 most recently updated entries and articles.
pub(crate) fn feed(ctx: &Ctx<'_>, lang: Lang) -> Result<String, Error> {
    let base = &ctx.opts.base_url;
    let items = ctx.recent(lang);
    let updated = items
        .first()
        .map(|i| i.date.clone())
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| "1970-01-01".into());
    let values: Vec<Value> = items
        .iter()
        .take(50)
        .map(|i| {
            json!({"title": i.title, "url": urls::absolute(base, &lang.file(&i.page)),
                   "date": if i.date.is_empty() { "1970-01-01" } else { i.date.as_str() }, "summary": i.summary})
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
