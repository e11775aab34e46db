//! `schema` (error): an entry does not match `schema/entry.schema.json`.
//!
//! Missing keys, unknown keys (typos must not pass silently), wrong types and values
//! outside an enumeration (`resolvable`, `verification_tier`, `locale`, a version's
//! `status`) are reported at the offending key or value. Date formats and rate bounds are
//! reported by `date-format` and `rate-range` instead.

use super::EntryInput;
use errata_model::Diagnostic;

use crate::context::Ctx;

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    match crate::schema::entry_validator() {
        Ok(v) => crate::schema::validate(v, &doc.value, "schema", &doc.path, out),
        Err(e) => out.push(super::diag(
            "schema",
            &doc.path,
            errata_model::Anchor::File,
            format!("internal error: the entry schema does not compile: {e}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn unknown_missing_and_enum() {
        let mut e = valid_entry("cuda/a");
        e["sigature"] = "typo".into();
        e.as_object_mut().unwrap().remove("root_cause");
        e["resolvable"] = "maybe".into();
        e["dead_ends"][0]["fail_rate"] = "high".into();
        let diags = entry_diags(&e, "schema");
        let msgs: Vec<_> = diags.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(diags.len(), 4, "{msgs:#?}");
        assert!(msgs.iter().any(|m| m.contains("unknown key `sigature`")));
        assert!(
            msgs.iter()
                .any(|m| m.contains("missing required key `root_cause`"))
        );
        assert!(msgs.iter().any(|m| m.contains("\"maybe\"")));
        assert!(
            diags
                .iter()
                .any(|d| d.pointer() == Some("/dead_ends/0/fail_rate"))
        );
    }
}
