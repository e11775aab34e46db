//! Finding every external URL in a knowledge base, with where it is written.

use std::path::PathBuf;

use errata_load::KnowledgeBase;
use errata_model::Anchor;

/// One place an external URL is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    /// The URL as written.
    pub url: String,
    /// The distinct-URL key it is checked (and cached) under: see [`url_key`].
    pub key: String,
    /// The file it is written in.
    pub file: PathBuf,
    /// Where in the file: a JSON pointer in an entry, the URL's bytes in an article.
    pub anchor: Anchor,
}

/// Every http(s) URL in the knowledge base, in file order: each entry's
/// `official_doc_url` and the `sources[]` of its dead ends and workarounds, and every
/// Markdown link, image and autolink of every article and translation.
///
/// Entries are read from the raw JSON rather than the typed entry, so that a URL in an
/// entry with an unrelated schema error is still checked. Anything that is not an
/// http(s) URL (a relative link, `mailto:`, a typo) is left to `errata check`.
pub fn collect(kb: &KnowledgeBase) -> Vec<Site> {
    let mut sites = Vec::new();
    for doc in &kb.entries {
        let value = doc.value();
        let mut push = |pointer: String, value: &serde_json::Value| {
            if let Some(url) = value.as_str() {
                push_site(&mut sites, url, &doc.path, Anchor::Value(pointer));
            }
        };
        if let Some(url) = value.get("official_doc_url") {
            push("/official_doc_url".into(), url);
        }
        for list in ["dead_ends", "workarounds"] {
            let Some(items) = value.get(list).and_then(|v| v.as_array()) else {
                continue;
            };
            for (i, item) in items.iter().enumerate() {
                let Some(sources) = item.get("sources").and_then(|v| v.as_array()) else {
                    continue;
                };
                for (j, source) in sources.iter().enumerate() {
                    push(format!("/{list}/{i}/sources/{j}"), source);
                }
            }
        }
    }
    for article in &kb.articles {
        let text = kb.source(&article.path).map(|s| &*s.text);
        for link in &article.links {
            // Point at the URL itself rather than at the `[` that opens the link.
            let written = text.and_then(|t| t.get(link.range.clone()));
            let range = match written.and_then(|w| w.find(link.dest.as_str())) {
                Some(at) => link.range.start + at..link.range.start + at + link.dest.len(),
                None => link.range.clone(),
            };
            push_site(&mut sites, &link.dest, &article.path, Anchor::Bytes(range));
        }
    }
    sites
}

fn push_site(sites: &mut Vec<Site>, url: &str, file: &std::path::Path, anchor: Anchor) {
    if let Some(key) = url_key(url) {
        sites.push(Site {
            url: url.to_string(),
            key,
            file: file.to_path_buf(),
            anchor,
        });
    }
}

/// The key a URL is checked and cached under, or `None` when it is not an absolute
/// http(s) URL. The fragment is dropped (it is never sent to the server, so
/// `page#a` and `page#b` are one request) and the URL is normalised (scheme and host
/// lower-cased, default port removed).
///
/// ```
/// use errata_links::url_key;
/// assert_eq!(url_key("HTTPS://Docs.Example.com:443/a#b").as_deref(), Some("https://docs.example.com/a"));
/// assert_eq!(url_key("mailto:x@example.com"), None);
/// assert_eq!(url_key("../other.md"), None);
/// ```
pub fn url_key(url: &str) -> Option<String> {
    let mut parsed = url::Url::parse(url.trim()).ok()?;
    if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
        return None;
    }
    parsed.set_fragment(None);
    Some(parsed.into())
}
