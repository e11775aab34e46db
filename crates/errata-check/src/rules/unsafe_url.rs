//! `unsafe-url` (error): a URL is not a public https URL.
//!
//! `official_doc_url`, every `sources[]` item, and every absolute link in an article must
//! be `https://` to a public host. Reported: other schemes (`http:`, `javascript:`,
//! `data:`, `file:`, `ftp:`), URLs that do not parse, and hosts that are loopback,
//! private, link-local or internal (`localhost`, `127.0.0.1`, `10.x`, `192.168.x`,
//! `169.254.x`, `*.local`, `*.internal`). The site only turns https URLs into links.
//! `mailto:` links in articles are allowed.

use errata_load::ArticleDoc;

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

const RULE: &str = "unsafe-url";

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(e) = &doc.entry else { return };
    let mut urls: Vec<(String, &str)> = Vec::new();
    if let Some(u) = &e.official_doc_url {
        urls.push(("/official_doc_url".into(), u));
    }
    for (i, d) in e.dead_ends.iter().enumerate() {
        urls.extend(
            d.sources
                .iter()
                .enumerate()
                .map(|(j, s)| (format!("/dead_ends/{i}/sources/{j}"), s.as_str())),
        );
    }
    for (i, w) in e.workarounds.iter().enumerate() {
        urls.extend(
            w.sources
                .iter()
                .enumerate()
                .map(|(j, s)| (format!("/workarounds/{i}/sources/{j}"), s.as_str())),
        );
    }
    for (pointer, url) in urls {
        if let Err(why) = check_url(url) {
            out.push(
                diag(
                    RULE,
                    &doc.path,
                    Anchor::Value(pointer),
                    format!("`{url}`: {why}"),
                )
                .with_help(HELP),
            );
        }
    }
}

pub(super) fn article(_cx: &Ctx<'_>, doc: &ArticleDoc, out: &mut Vec<Diagnostic>) {
    for link in &doc.links {
        let dest = link.dest.trim();
        let Some((scheme, _)) = dest.split_once(':') else {
            continue;
        };
        let is_scheme = !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c));
        if !is_scheme || scheme.eq_ignore_ascii_case("mailto") {
            continue;
        }
        if let Err(why) = check_url(dest) {
            out.push(
                diag(
                    RULE,
                    &doc.path,
                    errata_model::Anchor::Bytes(link.range.clone()),
                    format!("`{dest}`: {why}"),
                )
                .with_help(HELP),
            );
        }
    }
}

const HELP: &str = "link to the public https:// page";

/// Accepts only https URLs to public hosts.
pub(crate) fn check_url(text: &str) -> Result<(), String> {
    let url = url::Url::parse(text).map_err(|e| format!("not a valid URL ({e})"))?;
    if url.scheme() != "https" {
        return Err(format!(
            "scheme `{}:` is not allowed; only https",
            url.scheme()
        ));
    }
    match url.host_str() {
        None => Err("has no host".into()),
        Some(host) => errata_model::host::public_host(host),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::check_url;

    #[test]
    fn schemes_and_hosts() {
        assert!(check_url("https://docs.nvidia.com/cuda/").is_ok());
        for bad in [
            "http://docs.nvidia.com",
            "javascript:alert(1)",
            "data:text/html,x",
            "file:///etc/passwd",
            "https://localhost/x",
            "https://127.0.0.1/",
            "https://10.0.0.8/",
            "https://[::1]/",
            "https://intranet/",
            "https://x.internal/",
            "not a url",
        ] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn entry_sources_and_article_links() {
        let mut e = valid_entry("cuda/a");
        e["workarounds"][0]["sources"] = serde_json::json!(["http://example.com/x"]);
        let diags = only(
            check_files(&[
                ("signatures/cuda/a.json", serde_json::to_string(&e).unwrap()),
                (
                    "articles/cuda/b.md",
                    valid_article(
                        "cuda/b",
                        "[x](javascript:alert(1)) [ok](https://example.com) [m](mailto:a@b.org)\n",
                    ),
                ),
            ]),
            "unsafe-url",
        );
        assert_eq!(diags.len(), 2, "{diags:#?}");
    }
}
