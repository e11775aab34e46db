//! `empty-field` (error): a required text field is blank.
//!
//! `signature`, `regex`, `domain`, `category`, `root_cause`, `root_cause_type`,
//! `operator_action` (the schema allows it empty only so that a scaffold is not a schema
//! error: it is this rule's), each
//! version's `version`, each dead end's `why_fails`, and each workaround's `action` and
//! `how` must say something. (Empty dead-end actions have their own rule,
//! `empty-dead-end-action`; empty Chinese fields are `zh-missing`.)

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(e) = &doc.entry else { return };
    let mut fields: Vec<(String, &str)> = vec![
        ("/signature".into(), &e.signature),
        ("/regex".into(), &e.regex),
        ("/domain".into(), &e.domain),
        ("/category".into(), &e.category),
        ("/root_cause".into(), &e.root_cause),
        ("/root_cause_type".into(), &e.root_cause_type),
        ("/operator_action".into(), &e.operator_action),
    ];
    fields.extend(
        e.versions
            .iter()
            .enumerate()
            .map(|(i, v)| (format!("/versions/{i}/version"), v.version.as_str())),
    );
    fields.extend(
        e.dead_ends
            .iter()
            .enumerate()
            .map(|(i, d)| (format!("/dead_ends/{i}/why_fails"), d.why_fails.as_str())),
    );
    for (i, w) in e.workarounds.iter().enumerate() {
        fields.push((format!("/workarounds/{i}/action"), &w.action));
        fields.push((format!("/workarounds/{i}/how"), &w.how));
    }
    for (pointer, text) in fields {
        // Only report present-but-blank values; a missing key is a `schema` error.
        if text.trim().is_empty() && doc.value.pointer(&pointer).is_some() {
            let name = pointer.rsplit('/').next().unwrap_or_default().to_string();
            out.push(
                diag(
                    "empty-field",
                    &doc.path,
                    Anchor::Value(pointer),
                    format!("`{name}` is empty"),
                )
                .with_help(if name == "operator_action" {
                    "choose what the operator on call does: fix-code, fix-config, \
                     fix-environment, restart-process, reset-gpu, reboot-node, \
                     drain-and-inspect, replace-hardware or none"
                } else {
                    "fill it in"
                }),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn blank_required_text() {
        let mut e = valid_entry("cuda/a");
        e["root_cause"] = "".into();
        e["workarounds"][0]["how"] = " ".into();
        e["operator_action"] = "".into();
        let ptrs: Vec<_> = entry_diags(&e, "empty-field")
            .iter()
            .filter_map(|d| d.pointer().map(String::from))
            .collect();
        assert_eq!(
            ptrs,
            ["/root_cause", "/workarounds/0/how", "/operator_action"]
        );
    }
}
