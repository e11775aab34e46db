//! `zh-missing` (error): a Chinese field is empty.
//!
//! `signature_zh`, `root_cause_zh` and every `dead_ends_zh` and `workarounds_zh` item
//! must hold the Simplified Chinese text that the Chinese site and `errata match --lang
//! zh` show (`errata migrate` adds an empty item per dead end for this rule to point at).
//! A `behavior_change` needs its `behavior_change_zh`, and an `os_specific` note its
//! `os_specific_zh` under the same key: a Chinese page shows no English prose.

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(e) = &doc.entry else { return };
    let empty = |pointer: String, out: &mut Vec<Diagnostic>| {
        out.push(
            diag(
                "zh-missing",
                &doc.path,
                Anchor::Value(pointer),
                "Chinese text is empty",
            )
            .with_help("write the Simplified Chinese translation of the English field"),
        );
    };
    for field in zh_fields(e) {
        if field.zh.trim().is_empty() && doc.value.pointer(&field.pointer).is_some() {
            empty(field.pointer, out);
        }
    }
    // A versions row or an OS note in English with no Chinese beside it: the zh page
    // would show it in English. Pointed at the English text, the field to translate.
    for (i, v) in e.versions.iter().enumerate() {
        let english = v.behavior_change.as_deref().unwrap_or("");
        let zh = v.behavior_change_zh.as_deref().unwrap_or("");
        if !english.trim().is_empty() && zh.trim().is_empty() {
            out.push(
                diag(
                    "zh-missing",
                    &doc.path,
                    Anchor::Value(format!("/versions/{i}/behavior_change")),
                    "this behaviour change has no Chinese text",
                )
                .with_help("add `behavior_change_zh` beside it, in Simplified Chinese"),
            );
        }
    }
    for (os, note) in &e.os_specific {
        let zh = e.os_specific_zh.get(os).map_or("", String::as_str);
        if !note.trim().is_empty() && zh.trim().is_empty() {
            out.push(
                diag(
                    "zh-missing",
                    &doc.path,
                    Anchor::Value(format!("/os_specific/{}", crate::text::pointer_token(os))),
                    format!("the `{os}` note has no Chinese text"),
                )
                .with_help(format!(
                    "add `\"{os}\"` to `os_specific_zh`, in Simplified Chinese"
                )),
            );
        }
    }
}

/// A Chinese field, where it is, and the English text it translates.
pub(super) struct ZhField<'e> {
    pub pointer: String,
    pub zh: &'e str,
    pub english: &'e str,
}

/// Every Chinese field present, with its English counterpart's text.
pub(super) fn zh_fields(e: &errata_model::Entry) -> Vec<ZhField<'_>> {
    fn field<'e>(pointer: String, zh: &'e str, english: &'e str) -> ZhField<'e> {
        ZhField {
            pointer,
            zh,
            english,
        }
    }
    let mut v = vec![
        field("/signature_zh".into(), &e.signature_zh, &e.signature),
        field("/root_cause_zh".into(), &e.root_cause_zh, &e.root_cause),
    ];
    v.extend(e.dead_ends_zh.iter().enumerate().map(|(i, s)| {
        let english = e.dead_ends.get(i).map_or("", |d| d.action.as_str());
        field(format!("/dead_ends_zh/{i}"), s, english)
    }));
    v.extend(e.workarounds_zh.iter().enumerate().map(|(i, s)| {
        let english = e.workarounds.get(i).map_or("", |w| w.action.as_str());
        field(format!("/workarounds_zh/{i}"), s, english)
    }));
    v.extend(e.versions.iter().enumerate().filter_map(|(i, ver)| {
        let zh = ver.behavior_change_zh.as_deref()?;
        let english = ver.behavior_change.as_deref().unwrap_or("");
        Some(field(
            format!("/versions/{i}/behavior_change_zh"),
            zh,
            english,
        ))
    }));
    v.extend(e.os_specific_zh.iter().map(|(os, zh)| {
        let english = e.os_specific.get(os).map_or("", String::as_str);
        field(
            format!("/os_specific_zh/{}", crate::text::pointer_token(os)),
            zh,
            english,
        )
    }));
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

    #[test]
    fn a_behaviour_change_or_os_note_without_chinese() {
        let mut e = valid_entry("cuda/a");
        e["versions"][0]["behavior_change"] = "Returns 700 since CUDA 13.0.".into();
        e["os_specific"] =
            serde_json::json!({"linux": "Reload nvidia_uvm.", "wsl": "Restart WSL."});
        e["os_specific_zh"] = serde_json::json!({"linux": "重新加载 `nvidia_uvm`。"});
        let ptrs: Vec<_> = entry_diags(&e, "zh-missing")
            .iter()
            .filter_map(|d| d.pointer().map(String::from))
            .collect();
        assert_eq!(ptrs, ["/versions/0/behavior_change", "/os_specific/wsl"]);
        e["versions"][0]["behavior_change_zh"] = "自 CUDA 13.0 起返回 700。".into();
        e["os_specific_zh"]["wsl"] = "重启 WSL。".into();
        assert!(entry_diags(&e, "zh-missing").is_empty());
    }
}
