//! `zh-untranslated` (error): a Chinese field is not in Chinese.
//!
//! A `_zh` field fails when it equals its English counterpart, or when, after removing
//! `code spans`, URLs and identifiers (which legitimately stay in English), less than
//! half of what remains is Chinese: Han characters are counted one unit each and English
//! words one unit each. "在释放张量之前调用 `torch.cuda.synchronize()`" passes; an
//! English sentence pasted into `workarounds_zh` does not.
//!
//! It also fails when it holds a run of four or more English words outside `code spans`
//! (a Chinese character or a full stop ends a run), even in a mostly Chinese text: a log
//! message quoted in Chinese quotation marks, “GPU device may be out of range”, is
//! English prose on the Chinese page; set it as `code`. The site's test of every Chinese
//! page applies the same test (`english_run`) to the rendered pages.

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use super::zh_missing::zh_fields;
use crate::context::Ctx;
use crate::text::{chinese_share, english_run};

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
        let sentence = english_run(text);
        if same || share.is_some_and(|s| s < MIN_CHINESE_SHARE) || sentence.is_some() {
            let why = if same {
                "is identical to the English text".to_string()
            } else if let Some(s) = share.filter(|&s| s < MIN_CHINESE_SHARE) {
                format!("is mostly English ({:.0}% Chinese)", s * 100.0)
            } else {
                format!(
                    "holds English prose outside `code`: \"{}\"",
                    sentence.unwrap_or_default()
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
    fn an_english_message_quoted_in_chinese_prose() {
        let mut e = valid_entry("cuda/a");
        e["root_cause_zh"] =
            "当前版本对这个错误码打印的是“GPU device may be out of range, do you have enough GPUs?”。"
                .into();
        // The same message as code, and names and short terms in prose, pass.
        e["workarounds_zh"][0] =
            "当前版本打印 `GPU device may be out of range, do you have enough GPUs?`；PyTorch 2.4 与 CUDA 12.4 的 NCCL 后端也一样。"
                .into();
        let diags = entry_diags(&e, "zh-untranslated");
        let ptrs: Vec<_> = diags.iter().filter_map(|d| d.pointer()).collect();
        assert_eq!(ptrs, ["/root_cause_zh"]);
        assert!(
            diags[0]
                .message
                .contains("\"GPU device may be out of range do you have enough GPUs\""),
            "{}",
            diags[0].message
        );
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
