//! `zh-count-mismatch` (error): `workarounds_zh` does not have one item per workaround.
//!
//! The i-th item of `workarounds_zh` is the translation of the i-th workaround; a missing
//! or extra item shifts every translation onto the wrong workaround.

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(e) = &doc.entry else { return };
    let (en, zh) = (e.workarounds.len(), e.workarounds_zh.len());
    if en != zh {
        out.push(
            diag(
                "zh-count-mismatch",
                &doc.path,
                Anchor::Value("/workarounds_zh".into()),
                format!("{zh} Chinese workaround(s) for {en} workaround(s)"),
            )
            .with_help(
                "give `workarounds_zh` exactly one translation per workaround, in the same order",
            ),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn counts_differ() {
        let mut e = valid_entry("cuda/a");
        e["workarounds_zh"]
            .as_array_mut()
            .unwrap()
            .push("多余的一条。".into());
        assert_eq!(entry_diags(&e, "zh-count-mismatch").len(), 1);
    }
}
