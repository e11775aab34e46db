//! `heading-skip` (warning): a heading skips a level.
//!
//! `#` followed by `###` leaves a hole in the document outline, which screen readers and
//! the site's table of contents rely on. Go down one level at a time (going back up any
//! number of levels is fine).

use errata_load::ArticleDoc;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

pub(super) fn article(_cx: &Ctx<'_>, doc: &ArticleDoc, out: &mut Vec<Diagnostic>) {
    let mut prev: Option<u8> = None;
    for h in &doc.headings {
        if let Some(p) = prev
            && h.level > p + 1
        {
            out.push(
                diag(
                    "heading-skip",
                    &doc.path,
                    Anchor::Bytes(h.range.clone()),
                    format!("heading level {} follows level {p}", h.level),
                )
                .with_help(format!("use a level-{} heading here", p + 1)),
            );
        }
        prev = Some(h.level);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn skipped_level() {
        let body = "# A\n\n### C\n\n## B\n\n### C2\n\n# D\n";
        let diags = only(
            check_files(&[("articles/cuda/b.md", valid_article("cuda/b", body))]),
            "heading-skip",
        );
        assert_eq!(diags.len(), 1);
        assert_eq!(diags[0].location.unwrap().line, 8);
    }
}
