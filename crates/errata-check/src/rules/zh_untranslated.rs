//! `zh-untranslated` (error): a Chinese field is not in Chinese.
//!
//! A `_zh` field fails when it equals its English counterpart, or when, after removing
//! `code spans`, URLs and identifiers (which legitimately stay in English), less than
//! half of what remains is Chinese: Han characters are counted one unit each and English
//! words one unit each. "在释放张量之前调用 `torch.cuda.synchronize()`" passes; an
//! English sentence pasted into `workarounds_zh` does not.

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use super::zh_missing::zh_fields;
use crate::context::Ctx;
use crate::text::chinese_share;

/// Below this share of Chinese (Han characters vs English words) a `_zh` text is English.
const MIN_CHINESE_SHARE: f64 = 0.5;

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(e) = &doc.entry else { return };
    for field in zh_fields(e) {
        let text = field.zh;
        if text.trim().is_empty() {
            continue;
        }
        let same = (!field.english.trim().is_empty() && field.english.trim() == text.trim())
            || e.workarounds.iter().any(|w| w.how.trim() == text.trim());
        let share = chinese_share(text);
        if same || share.is_some_and(|s| s < MIN_CHINESE_SHARE) {
            let why = if same {
                "is identical to the English text".to_string()
            } else {
                format!(
                    "is mostly English ({:.0}% Chinese)",
                    share.unwrap_or(0.0) * 100.0
                )
            };
            out.push(
                diag(
                    "zh-untranslated",
                    &doc.path,
                    Anchor::Value(field.pointer),
                    format!("Chinese field {why}"),
                )
                .with_help(
                    "translate it into Simplified Chinese; keep code and API names in `backticks`",
                ),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn english_in_zh_fields() {
        let mut e = valid_entry("cuda/a");
        e["workarounds_zh"][0] =
            "Bound-check the index against the allocation size before the load.".into();
        e["signature_zh"] = e["signature"].clone();
        let ptrs: Vec<_> = entry_diags(&e, "zh-untranslated")
            .iter()
            .filter_map(|d| d.pointer().map(String::from))
            .collect();
        assert_eq!(ptrs, ["/signature_zh", "/workarounds_zh/0"]);
    }

    #[test]
    fn a_dead_end_or_behaviour_change_left_in_english() {
        let mut e = valid_entry("cuda/a");
        e["dead_ends_zh"][0] = e["dead_ends"][0]["action"].clone();
        e["versions"][0]["behavior_change"] = "Returns 700 since CUDA 13.0.".into();
        e["versions"][0]["behavior_change_zh"] = "Returns 700 since CUDA 13.0.".into();
        let ptrs: Vec<_> = entry_diags(&e, "zh-untranslated")
            .iter()
            .filter_map(|d| d.pointer().map(String::from))
            .collect();
        // In file order: the versions come before the dead ends.
        assert_eq!(ptrs, ["/versions/0/behavior_change_zh", "/dead_ends_zh/0"]);
    }
}
