//! `stale` (warning): the entry was last confirmed more than a year ago.
//!
//! Drivers, CUDA and PyTorch change quickly; an entry nobody has confirmed for a year may
//! describe behaviour that no longer exists. Re-check it and update `last_confirmed`
//! (and `last_updated` if you changed anything).

use super::EntryInput;
use errata_model::date::Date;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

pub(super) fn entry(cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(confirmed) = doc
        .entry
        .as_ref()
        .and_then(|e| Date::parse(&e.last_confirmed))
    else {
        return;
    };
    let year_ago = cx.today.minus_years(1);
    if confirmed < year_ago {
        out.push(
            diag(
                "stale",
                &doc.path,
                Anchor::Value("/last_confirmed".into()),
                format!(
                    "last confirmed {confirmed}, more than a year before {}",
                    cx.today
                ),
            )
            .with_help("reproduce the error on a current stack and update `last_confirmed`"),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn over_a_year() {
        let mut e = valid_entry("cuda/a");
        e["last_confirmed"] = "2024-12-31".into();
        assert_eq!(entry_diags(&e, "stale").len(), 1);
        e["last_confirmed"] = "2025-01-01".into();
        assert!(entry_diags(&e, "stale").is_empty());
    }
}
