//! `id-path-mismatch` (error): an entry's or article's `id` is not its file path.
//!
//! The id of `signatures/<domain>/<slug>.json` must be `<domain>/<slug>`, and its
//! `domain` field must be `<domain>`; likewise an article's front-matter `id` for
//! `articles/<domain>/<slug>.md` (and its translation `<slug>.zh.md`). Ids are what
//! links, the site's URLs and the bundle use, so a mismatch breaks them all. Files nested
//! deeper or shallower than `<domain>/<slug>` are reported too.

use errata_load::ArticleDoc;

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

const RULE: &str = "id-path-mismatch";

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(e) = &doc.entry else { return };
    match &doc.path_id {
        None => out.push(
            diag(
                RULE,
                &doc.path,
                Anchor::File,
                "entry is not at `signatures/<domain>/<slug>.json`",
            )
            .with_help("move the file so that its path is `signatures/<domain>/<slug>.json`"),
        ),
        Some(path_id) => {
            if &e.id != path_id {
                out.push(
                    diag(
                        RULE,
                        &doc.path,
                        Anchor::Value("/id".into()),
                        format!("id `{}` does not match the file path (`{path_id}`)", e.id),
                    )
                    .with_help(format!("set `\"id\": \"{path_id}\"` or rename the file")),
                );
            }
            let domain = path_id.split('/').next().unwrap_or_default();
            if !e.domain.is_empty() && e.domain != domain {
                out.push(
                    diag(
                        RULE,
                        &doc.path,
                        Anchor::Value("/domain".into()),
                        format!(
                            "domain `{}` does not match the directory `{domain}`",
                            e.domain
                        ),
                    )
                    .with_help(format!("set `\"domain\": \"{domain}\"`")),
                );
            }
        }
    }
}

pub(super) fn article(_cx: &Ctx<'_>, doc: &ArticleDoc, out: &mut Vec<Diagnostic>) {
    let Some(front) = &doc.front else { return };
    match &doc.path_id {
        None => out.push(
            diag(
                RULE,
                &doc.path,
                Anchor::File,
                "article is not at `articles/<domain>/<slug>.md`",
            )
            .with_help("move the file so that its path is `articles/<domain>/<slug>.md`"),
        ),
        Some(path_id) if !front.id.is_empty() && &front.id != path_id => out.push(
            diag(
                RULE,
                &doc.path,
                Anchor::Value("/id".into()),
                format!(
                    "id `{}` does not match the file path (`{path_id}`)",
                    front.id
                ),
            )
            .with_help(format!("set `id: {path_id}`")),
        ),
        Some(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn entry_and_article_ids_must_match_paths() {
        let mut e = valid_entry("cuda/a");
        e["id"] = "cuda/b".into();
        let diags = only(
            check_files(&[
                (
                    "signatures/cuda/a.json",
                    serde_json::to_string_pretty(&e).unwrap(),
                ),
                ("articles/cuda/x.md", valid_article("why-x", "")),
                ("articles/cuda/y.md", valid_article("cuda/y", "")),
            ]),
            "id-path-mismatch",
        );
        assert_eq!(diags.len(), 2, "{diags:#?}");
        assert!(diags[0].message.contains("why-x"), "{diags:#?}");
        assert_eq!(diags[1].pointer(), Some("/id"));
        assert!(diags[1].message.contains("cuda/b"));
    }
}
