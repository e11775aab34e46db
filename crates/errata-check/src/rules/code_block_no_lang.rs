//! `code-block-no-lang` (warning): a code block has no language.
//!
//! Without a language the site cannot highlight the block and the snippet runner cannot
//! verify it. Use `text` for logs and error messages, `cuda`/`cpp` for CUDA C++,
//! `python`, or `bash`. Indented code blocks have no info string at all: fence them.

use errata_load::ArticleDoc;
use errata_model::snippet::FenceInfo;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

pub(super) fn article(_cx: &Ctx<'_>, doc: &ArticleDoc, out: &mut Vec<Diagnostic>) {
    for block in &doc.code_blocks {
        if FenceInfo::parse(&block.info).lang_raw.is_empty() {
            let start = block.range.start;
            out.push(
                diag(
                    "code-block-no-lang",
                    &doc.path,
                    Anchor::Bytes(start..start + 3),
                    "code block has no language",
                )
                .with_help("write the language after the fence, e.g. ```text for an error message"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn bare_fence_and_indented_block() {
        let body = "```\nRuntimeError\n```\n\n```text\nok\n```\n\nPara.\n\n    indented\n";
        let diags = only(
            check_files(&[("articles/cuda/b.md", valid_article("cuda/b", body))]),
            "code-block-no-lang",
        );
        assert_eq!(diags.len(), 2, "{diags:#?}");
    }
}
