//! `zh-missing` (error): a Chinese field is empty.
//!
//! `signature_zh`, `root_cause_zh` and every `dead_ends_zh` and `workarounds_zh` item
//! must hold the Simplified Chinese text that the Chinese site and `errata match --lang
//! zh` show (`errata migrate` adds an empty item per dead end for this rule to point at).

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(e) = &doc.entry else { return };
    for (pointer, text) in zh_fields(e) {
        if text.trim().is_empty() && doc.value.pointer(&pointer).is_some() {
            out.push(
                diag(
                    "zh-missing",
                    &doc.path,
                    Anchor::Value(pointer),
                    "Chinese text is empty",
                )
                .with_help("write the Simplified Chinese translation of the English field"),
            );
        }
    }
}

/// Every Chinese field with its English counterpart's text.
pub(super) fn zh_fields(e: &errata_model::Entry) -> Vec<(String, &str)> {
    let mut v = vec![
        ("/signature_zh".to_string(), e.signature_zh.as_str()),
        ("/root_cause_zh".to_string(), e.root_cause_zh.as_str()),
    ];
    v.extend(
        e.dead_ends_zh
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("/dead_ends_zh/{i}"), s.as_str())),
    );
    v.extend(
        e.workarounds_zh
            .iter()
            .enumerate()
            .map(|(i, s)| (format!("/workarounds_zh/{i}"), s.as_str())),
    );
    v
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn empty_zh() {
        let mut e = valid_entry("cuda/a");
        e["root_cause_zh"] = "".into();
        assert_eq!(
            entry_diags(&e, "zh-missing")[0].pointer(),
            Some("/root_cause_zh")
        );
    }
}
