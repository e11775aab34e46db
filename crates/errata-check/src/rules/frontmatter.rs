//! `frontmatter` (error): an article's front matter is missing, not YAML, or invalid.
//!
//! Every article starts with a YAML block between two `---` lines holding at least
//! `title`, `id` (`<domain>/<slug>`, equal to the file path) and `date` (`YYYY-MM-DD`),
//! optionally `signatures` (entry ids), `tags`, and in a translation `translation_of`
//! with `source_hash`. The block is validated against `schema/article.schema.json`;
//! unknown keys are errors.

use errata_load::ArticleDoc;
use errata_model::Diagnostic;

use crate::context::Ctx;

pub(super) fn article(_cx: &Ctx<'_>, doc: &ArticleDoc, out: &mut Vec<Diagnostic>) {
    let Some(value) = &doc.front_value else {
        return;
    };
    match crate::schema::article_validator() {
        Ok(v) => crate::schema::validate(v, value, "frontmatter", &doc.path, out),
        Err(e) => out.push(super::diag(
            "frontmatter",
            &doc.path,
            errata_model::Anchor::File,
            format!("internal error: the article schema does not compile: {e}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn missing_unknown_and_wrong_keys() {
        let diags = only(
            check_files(&[
                ("articles/cuda/none.md", "# No front matter\n".into()),
                (
                    "articles/cuda/bad.md",
                    "---\ntitle: T\nid: cuda/bad\ndate: \"2025-01-01\"\nauthor: me\n---\n".into(),
                ),
                (
                    "articles/cuda/notitle.md",
                    "---\nid: cuda/notitle\ndate: \"2025-01-01\"\n---\n".into(),
                ),
            ]),
            "frontmatter",
        );
        let msgs: Vec<_> = diags
            .iter()
            .map(|d| {
                (
                    d.file.file_name().unwrap().to_string_lossy().into_owned(),
                    d.message.clone(),
                )
            })
            .collect();
        assert_eq!(msgs.len(), 3, "{msgs:#?}");
        assert!(msgs[0].1.contains("unknown key `author`"));
        let loc = diags[0].location.unwrap();
        assert_eq!((loc.line, loc.column), (5, 1));
        assert!(msgs[1].1.contains("no front matter"));
        assert!(msgs[2].1.contains("`title`"));
    }
}
