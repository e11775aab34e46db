//! The documentation of the rules this crate reports, for `errata explain`.

/// `(rule id, Markdown documentation)` for every rule `errata links` reports.
pub const RULE_DOCS: &[(&str, &str)] = &[
    (
        "link-dead",
        r#"# link-dead (error)

An external URL in an entry (`official_doc_url`, a `sources[]` item) or an article (a
link, an image, an autolink) does not work: the server answered with an error status
(404, 410, 500, …), the connection failed or timed out, or its redirects loop or go on
for more than 10 hops.

Reported by `errata links`, not by `errata check` (it needs the network). A link is
tried with `HEAD`, then with `GET` where `HEAD` is refused; connection errors, timeouts
and 5xx answers are retried with backoff before the link is called dead. A dead link is
checked again on every run (it is never served from the cache while online).

```json
"sources": ["https://forums.example.com/t/thread-that-was-deleted/123"]
```

Fix the URL, or point at an archived copy (for example on `web.archive.org`), or remove
the citation.
"#,
    ),
    (
        "link-redirect",
        r#"# link-redirect (warning)

An external URL works, but only through a permanent redirect (`301 Moved Permanently` or
`308 Permanent Redirect`): the page has moved and the old address may stop working.
The message names the URL the permanent redirects lead to. Temporary redirects (302,
303, 307) are not reported: they are how many sites route ordinary traffic.

```json
"official_doc_url": "http://docs.nvidia.com/cuda/cuda-runtime-api/"
```

Replace the URL with the one in the message (the `#fragment` you wrote is kept).
"#,
    ),
];

/// A rule's one-line summary (for SARIF's rule table), or `None` for a rule this crate
/// does not report.
///
/// ```
/// assert!(errata_links::rule_summary("link-dead").is_some());
/// assert_eq!(errata_links::rule_summary("date-order"), None);
/// ```
pub fn rule_summary(rule: &str) -> Option<&'static str> {
    match rule {
        "link-dead" => Some(
            "An external URL does not work (error status, connection failure, timeout, redirect loop).",
        ),
        "link-redirect" => Some(
            "An external URL permanently redirects (301/308) to another URL, which should be written instead.",
        ),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_documented_rule_has_a_summary_and_a_titled_doc() {
        for (rule, doc) in RULE_DOCS {
            assert!(rule_summary(rule).is_some(), "{rule}");
            assert!(doc.starts_with(&format!("# {rule} (")), "{rule}");
        }
    }
}
