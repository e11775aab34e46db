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
