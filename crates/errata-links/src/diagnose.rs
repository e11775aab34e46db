//! Turning results into diagnostics at every place a URL is written.

use std::collections::BTreeMap;

use errata_model::Diagnostic;

use crate::collect::Site;
use crate::outcome::Outcome;

/// `link-dead` (error) and `link-redirect` (warning) for every site whose URL has such a
/// result; nothing for live URLs and URLs without a verdict.
pub fn diagnose(sites: &[Site], outcomes: &BTreeMap<String, Outcome>) -> Vec<Diagnostic> {
    let mut diagnostics = Vec::new();
    for site in sites {
        match outcomes.get(&site.key) {
            Some(Outcome::Dead { reason, .. }) => diagnostics.push(
                Diagnostic::error("link-dead", &site.file, site.anchor.clone(), format!("dead link: {} ({reason})", site.url))
                    .with_help("fix or replace the URL; if the page is gone for good, cite an archived copy or remove the citation"),
            ),
            Some(Outcome::Moved { to, .. }) => {
                let to = with_fragment_of(&site.url, to);
                diagnostics.push(
                    Diagnostic::warning(
                        "link-redirect",
                        &site.file,
                        site.anchor.clone(),
                        format!("{} redirects permanently to {to}", site.url),
                    )
                    .with_help(format!("replace the URL with {to}")),
                );
            }
            Some(Outcome::Alive { .. } | Outcome::Unknown { .. }) | None => {}
        }
    }
    diagnostics
}

/// A redirect target never carries the fragment the author wrote (it is not sent to the
/// server); the suggested replacement keeps it.
fn with_fragment_of(written: &str, to: &str) -> String {
    match (written.split_once('#'), to.contains('#')) {
        (Some((_, fragment)), false) => format!("{to}#{fragment}"),
        _ => to.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use errata_model::{Anchor, Severity};

    #[test]
    fn every_site_of_a_url_gets_its_result() {
        let site = |url: &str, key: &str, file: &str| Site {
            url: url.into(),
            key: key.into(),
            file: file.into(),
            anchor: Anchor::Value("/official_doc_url".into()),
        };
        let sites = [
            site("https://a/x#sec", "https://a/x", "one.json"),
            site("https://a/x", "https://a/x", "two.json"),
            site("https://b/", "https://b/", "three.json"),
            site("https://c/", "https://c/", "four.json"),
        ];
        let outcomes = BTreeMap::from([
            (
                "https://a/x".to_string(),
                Outcome::Moved {
                    status: 200,
                    to: "https://a/y".into(),
                },
            ),
            (
                "https://b/".to_string(),
                Outcome::Dead {
                    status: Some(404),
                    reason: "HTTP 404 Not Found".into(),
                },
            ),
            ("https://c/".to_string(), Outcome::Alive { status: 200 }),
        ]);
        let diags = diagnose(&sites, &outcomes);
        let got: Vec<_> = diags
            .iter()
            .map(|d| (d.rule, d.severity, d.file.to_str().unwrap()))
            .collect();
        assert_eq!(
            got,
            [
                ("link-redirect", Severity::Warning, "one.json"),
                ("link-redirect", Severity::Warning, "two.json"),
                ("link-dead", Severity::Error, "three.json"),
            ]
        );
        assert!(
            diags[0].message.ends_with("https://a/y#sec"),
            "{}",
            diags[0].message
        );
        assert!(
            diags[1].message.ends_with("https://a/y"),
            "{}",
            diags[1].message
        );
        assert!(diags[2].message.contains("HTTP 404"));
    }
}
