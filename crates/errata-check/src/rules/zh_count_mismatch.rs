//! `zh-count-mismatch` (error): `dead_ends_zh` or `workarounds_zh` does not have one item per dead end or workaround.
//!
//! The i-th item of `dead_ends_zh` is the Chinese of the i-th dead end, and the i-th item
//! of `workarounds_zh` that of the i-th workaround; a missing or extra item shifts every
//! translation onto the wrong one.

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(e) = &doc.entry else { return };
    let lists = [
        (
            "dead_ends_zh",
            "dead end",
            e.dead_ends.len(),
            e.dead_ends_zh.len(),
        ),
        (
            "workarounds_zh",
            "workaround",
            e.workarounds.len(),
            e.workarounds_zh.len(),
        ),
    ];
    for (field, what, en, zh) in lists {
        // A missing `dead_ends_zh` is the schema's to report (a required key).
        if en != zh && doc.value.get(field).is_some() {
            out.push(
                diag(
                    "zh-count-mismatch",
                    &doc.path,
                    Anchor::Value(format!("/{field}")),
                    format!("{zh} Chinese {what}(s) for {en} {what}(s)"),
                )
                .with_help(format!(
                    "give `{field}` exactly one translation per {what}, in the same order"
                )),
            );
        }
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

    #[test]
    fn dead_ends_counted_too() {
        let mut e = valid_entry("cuda/a");
        e["dead_ends_zh"] = serde_json::json!([]);
        let d = entry_diags(&e, "zh-count-mismatch");
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].pointer(), Some("/dead_ends_zh"));
        assert!(
            d[0].message
                .contains("0 Chinese dead end(s) for 1 dead end(s)")
        );
    }
}
