//! `translation-outdated` (warning): the English article changed after it was translated.
//!
//! A translation (`<slug>.zh.md`) records in `source_hash` the sha256 of the English
//! file it was made from. When the English file's hash differs, the translation may say
//! something the original no longer does; the site then shows the English text with a
//! notice. Update the translation, then set `source_hash` to the output of
//! `sha256sum articles/<domain>/<slug>.md`.

use errata_load::ArticleDoc;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

pub(super) fn article(cx: &Ctx<'_>, doc: &ArticleDoc, out: &mut Vec<Diagnostic>) {
    let (Some(front), Some(_)) = (&doc.front, &doc.lang) else {
        return;
    };
    let (Some(source_id), Some(hash)) = (&front.translation_of, &front.source_hash) else {
        return;
    };
    let Some(source) = cx.article_ids.get(source_id.as_str()) else {
        return;
    };
    if &source.sha256 != hash {
        out.push(
            diag(
                "translation-outdated",
                &doc.path,
                Anchor::Value("/source_hash".into()),
                format!(
                    "`{}` changed since this translation was made",
                    source.path.display()
                ),
            )
            .with_help(format!(
                "update the translation, then set `source_hash: {}`",
                source.sha256
            )),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn hash_differs() {
        let en = valid_article("cuda/b", "# B\n");
        let hash = errata_load::sha256_hex(en.as_bytes());
        let zh = |h: &str| {
            format!(
                "---\ntitle: 乙\nid: cuda/b\ndate: \"2025-01-01\"\ntranslation_of: cuda/b\nsource_hash: {h}\n---\n# 乙\n"
            )
        };
        let current = check_files(&[
            ("articles/cuda/b.md", en.clone()),
            ("articles/cuda/b.zh.md", zh(&hash)),
        ]);
        assert!(current.is_empty(), "{current:#?}");
        let stale = only(
            check_files(&[
                ("articles/cuda/b.md", en),
                ("articles/cuda/b.zh.md", zh(&"0".repeat(64))),
            ]),
            "translation-outdated",
        );
        assert_eq!(stale.len(), 1);
    }
}
