//! `rate-range` (error): a rate is outside [0, 1].
//!
//! `fail_rate`, `success_rate`, `confidence` and `fix_success_rate` are probabilities:
//! write 0.85, not 85.

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let v = &doc.value;
    let mut rates = vec![
        ("/confidence".to_string(), v.get("confidence")),
        ("/fix_success_rate".to_string(), v.get("fix_success_rate")),
    ];
    for (list, key) in [("dead_ends", "fail_rate"), ("workarounds", "success_rate")] {
        for (i, item) in v
            .get(list)
            .and_then(|l| l.as_array())
            .into_iter()
            .flatten()
            .enumerate()
        {
            rates.push((format!("/{list}/{i}/{key}"), item.get(key)));
        }
    }
    for (pointer, value) in rates {
        if let Some(x) = value.and_then(|x| x.as_f64())
            && !(0.0..=1.0).contains(&x)
        {
            out.push(
                diag(
                    "rate-range",
                    &doc.path,
                    Anchor::Value(pointer),
                    format!("{x} is outside [0, 1]"),
                )
                .with_help("rates are probabilities between 0 and 1 (write 0.85, not 85)"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn percentages_and_negatives() {
        let mut e = valid_entry("cuda/a");
        e["confidence"] = 85.into();
        e["workarounds"][0]["success_rate"] = (-0.1).into();
        let ptrs: Vec<_> = entry_diags(&e, "rate-range")
            .iter()
            .filter_map(|d| d.pointer().map(String::from))
            .collect();
        assert_eq!(ptrs, ["/workarounds/0/success_rate", "/confidence"]);
    }
}
