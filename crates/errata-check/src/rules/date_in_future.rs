//! `date-in-future` (error): a date is after today.
//!
//! "Today" is the system date, or `--today YYYY-MM-DD` (which CI and tests use so that
//! results do not depend on the calendar). Applies to every entry date and to an
//! article's `date`.

use errata_load::ArticleDoc;

use super::EntryInput;
use errata_model::date::Date;
use errata_model::{Anchor, Diagnostic};

use super::{diag, entry_dates};
use crate::context::Ctx;

const RULE: &str = "date-in-future";

pub(super) fn entry(cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    for (pointer, value) in entry_dates(&doc.value) {
        if let Some(d) = Date::parse(value).filter(|d| *d > cx.today) {
            out.push(future(&doc.path, pointer, d, cx.today));
        }
    }
}

pub(super) fn article(cx: &Ctx<'_>, doc: &ArticleDoc, out: &mut Vec<Diagnostic>) {
    if let Some(d) = doc
        .front
        .as_ref()
        .and_then(|f| Date::parse(&f.date))
        .filter(|d| *d > cx.today)
    {
        out.push(future(&doc.path, "/date".into(), d, cx.today));
    }
}

fn future(path: &std::path::Path, pointer: String, date: Date, today: Date) -> Diagnostic {
    diag(
        RULE,
        path,
        Anchor::Value(pointer),
        format!("{date} is in the future (today is {today})"),
    )
    .with_help("use the date the event actually happened")
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn dates_after_today() {
        let mut e = valid_entry("cuda/a");
        e["last_updated"] = "2026-01-02".into();
        assert_eq!(entry_diags(&e, "date-in-future").len(), 1);
        let a = only(
            check_files(&[(
                "articles/cuda/b.md",
                "---\ntitle: T\nid: cuda/b\ndate: \"2027-01-01\"\n---\n".into(),
            )]),
            "date-in-future",
        );
        assert_eq!(a.len(), 1);
    }
}
