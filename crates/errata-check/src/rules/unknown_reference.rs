//! `unknown-reference` (error): a reference names an entry or article that does not exist.
//!
//! Every id in an entry's `transition_graph` (`leads_to`, `preceded_by`,
//! `frequently_confused_with`), every id in an article's front-matter `signatures`, and a
//! translation's `translation_of` must name an existing entry (or, for `translation_of`,
//! article). The site turns them into links; a dangling one is a broken link.

use errata_load::ArticleDoc;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

const RULE: &str = "unknown-reference";

pub(super) fn corpus(cx: &Ctx<'_>, out: &mut Vec<Diagnostic>) {
    for doc in &cx.kb.entries {
        let Some(e) = &doc.entry else { continue };
        for (field, i, id) in e.edges() {
            if !cx.entry_exists(id) {
                out.push(
                    diag(RULE, &doc.path, Anchor::Value(format!("/transition_graph/{field}/{i}")), format!("no entry has the id `{id}`"))
                        .with_help("use the id of an existing entry (`<domain>/<slug>`, its path under signatures/)"),
                );
            }
        }
    }
}

pub(super) fn article(cx: &Ctx<'_>, doc: &ArticleDoc, out: &mut Vec<Diagnostic>) {
    let Some(front) = &doc.front else { return };
    for (i, id) in front.signatures.iter().enumerate() {
        if !cx.entry_exists(id) {
            out.push(
                diag(
                    RULE,
                    &doc.path,
                    Anchor::Value(format!("/signatures/{i}")),
                    format!("no entry has the id `{id}`"),
                )
                .with_help("list the ids of existing entries this article is about"),
            );
        }
    }
    if let Some(source) = &front.translation_of
        && !cx.article_ids.contains_key(source.as_str())
    {
        out.push(
            diag(
                RULE,
                &doc.path,
                Anchor::Value("/translation_of".into()),
                format!("no article has the id `{source}`"),
            )
            .with_help("`translation_of` is the id of the English article this file translates"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn dangling_edges_and_article_signatures() {
        let mut e = valid_entry("cuda/a");
        e["transition_graph"]["leads_to"] = serde_json::json!(["cuda/missing"]);
        let diags = only(
            check_files(&[
                ("signatures/cuda/a.json", serde_json::to_string(&e).unwrap()),
                ("articles/cuda/b.md", "---\ntitle: T\nid: cuda/b\ndate: \"2025-01-01\"\nsignatures: [cuda/a, cuda/nope]\n---\n".into()),
            ]),
            "unknown-reference",
        );
        let ptrs: Vec<_> = diags
            .iter()
            .map(|d| {
                (
                    d.pointer().unwrap_or_default().to_string(),
                    d.location.unwrap().line,
                )
            })
            .collect();
        assert_eq!(
            ptrs,
            [
                ("/signatures/1".to_string(), 5),
                ("/transition_graph/leads_to/0".to_string(), 1)
            ]
        );
    }
}
