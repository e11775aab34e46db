//! `date-order` (error): dates that must be in order are not.
//!
//! `first_seen` must not be after `last_confirmed` or `last_updated` (an error cannot be
//! confirmed before it was first seen), and within each version row `introduced` ≤
//! `deprecated` ≤ `removed`. Malformed dates are left to `date-format`.

use super::EntryInput;
use errata_model::date::Date;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

const RULE: &str = "date-order";

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(e) = &doc.entry else { return };
    let first = Date::parse(&e.first_seen);
    for (key, value) in [
        ("last_confirmed", &e.last_confirmed),
        ("last_updated", &e.last_updated),
    ] {
        if let (Some(first), Some(later)) = (first, Date::parse(value))
            && later < first
        {
            out.push(
                diag(RULE, &doc.path, Anchor::Value(format!("/{key}")), format!("{key} ({later}) is before first_seen ({first})"))
                    .with_help("an error cannot be confirmed or updated before it was first seen; fix whichever date is wrong"),
            );
        }
    }
    for (i, v) in e.versions.iter().enumerate() {
        let dates = [
            ("introduced", &v.introduced),
            ("deprecated", &v.deprecated),
            ("removed", &v.removed),
        ];
        let parsed: Vec<_> = dates
            .iter()
            .filter_map(|(k, d)| d.as_deref().and_then(Date::parse).map(|d| (*k, d)))
            .collect();
        for pair in parsed.windows(2) {
            let ((k1, d1), (k2, d2)) = (pair[0], pair[1]);
            if d2 < d1 {
                out.push(
                    diag(
                        RULE,
                        &doc.path,
                        Anchor::Value(format!("/versions/{i}/{k2}")),
                        format!("{k2} ({d2}) is before {k1} ({d1})"),
                    )
                    .with_help("in a version row, introduced ≤ deprecated ≤ removed"),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn seen_after_confirmed_and_versions_out_of_order() {
        let mut e = valid_entry("cuda/a");
        e["first_seen"] = "2025-01-20".into();
        e["last_confirmed"] = "2024-06-01".into();
        e["versions"][0]["removed"] = "2023-01-01".into();
        let diags = entry_diags(&e, "date-order");
        let ptrs: Vec<_> = diags.iter().filter_map(|d| d.pointer()).collect();
        assert_eq!(ptrs, ["/versions/0/removed", "/last_confirmed"]);
    }
}
