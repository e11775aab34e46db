//! `date-format` (error): a date is not a real `YYYY-MM-DD` date.
//!
//! Applies to `first_seen`, `last_confirmed`, `last_updated`, each version's
//! `introduced`/`deprecated`/`removed`, and an article's `date`. `2025-1-5`,
//! `Jan 5 2025` and `2025-02-30` are all reported.

use errata_load::ArticleDoc;

use super::EntryInput;
use errata_model::date::Date;
use errata_model::{Anchor, Diagnostic};

use super::{diag, entry_dates};
use crate::context::Ctx;

const RULE: &str = "date-format";

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    for (pointer, value) in entry_dates(&doc.value) {
        if Date::parse(value).is_none() {
            out.push(bad(&doc.path, pointer, value));
        }
    }
}

pub(super) fn article(_cx: &Ctx<'_>, doc: &ArticleDoc, out: &mut Vec<Diagnostic>) {
    if let Some(date) = doc
        .front_value
        .as_ref()
        .and_then(|v| v.get("date"))
        .and_then(|d| d.as_str())
        && Date::parse(date).is_none()
    {
        out.push(bad(&doc.path, "/date".into(), date));
    }
}

fn bad(path: &std::path::Path, pointer: String, value: &str) -> Diagnostic {
    diag(
        RULE,
        path,
        Anchor::Value(pointer),
        format!("`{value}` is not a valid date"),
    )
    .with_help("write dates as YYYY-MM-DD, e.g. 2025-01-30")
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn malformed_and_impossible_dates() {
        let mut e = valid_entry("cuda/a");
        e["first_seen"] = "2025-1-5".into();
        e["versions"][0]["introduced"] = "2025-02-30".into();
        let diags = entry_diags(&e, "date-format");
        let ptrs: Vec<_> = diags.iter().filter_map(|d| d.pointer()).collect();
        // Sorted by position: `versions` comes before `first_seen` in the file.
        assert_eq!(ptrs, ["/versions/0/introduced", "/first_seen"]);
        let a = only(
            check_files(&[(
                "articles/cuda/b.md",
                "---\ntitle: T\nid: cuda/b\ndate: 30.01.2025\n---\n".into(),
            )]),
            "date-format",
        );
        assert_eq!(a.len(), 1);
    }
}
