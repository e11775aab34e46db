//! Text measures shared by several rules.

/// Whether a character is a Han ideograph (CJK Unified Ideographs and extensions,
/// compatibility ideographs).
pub(crate) fn is_han(c: char) -> bool {
    matches!(c as u32,
        0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0x20000..=0x2A6DF | 0x2A700..=0x2EBEF | 0x30000..=0x3134F)
}

/// The share of Chinese in a text, in [0, 1]: Han characters divided by Han characters
/// plus English words, after removing what legitimately stays in English inside Chinese
/// prose: `code spans`, URLs, and identifiers (tokens with `_ . ( ) / :` or digits, or
/// camelCase, such as `cudaDeviceReset()` or `torch.cuda.synchronize`). Each Han
/// character counts as one unit and each remaining English word as one, so "CUDA 错误：
/// 驱动程序正在关闭" is mostly Chinese while an English sentence is 0.
///
/// Returns `None` when nothing is left to measure (the text is only code or empty).
pub(crate) fn chinese_share(text: &str) -> Option<f64> {
    let mut han = 0usize;
    let mut words = 0usize;
    let mut in_code = false;
    for segment in text.split('`') {
        if in_code {
            in_code = false;
            continue;
        }
        in_code = true;
        for token in segment.split(|c: char| c.is_whitespace() || is_cjk_punct(c)) {
            han += token.chars().filter(|&c| is_han(c)).count();
            // Split the non-Han parts of the token into ASCII words.
            for word in
                token.split(|c: char| is_han(c) || c == ',' || c == ';' || c == '!' || c == '?')
            {
                let word = word.trim_matches(|c: char| !c.is_alphanumeric());
                if word.chars().any(|c| c.is_ascii_alphabetic()) && !is_identifier_like(word) {
                    words += 1;
                }
            }
        }
    }
    let total = han + words;
    (total > 0).then(|| han as f64 / total as f64)
}

/// The first run of four or more English words in `text` outside its `code spans`, as a
/// reader of a Chinese page would meet it: a word is ASCII letters (with `'` or `-`
/// inside) between spaces and light punctuation, and a Chinese character or a full stop
/// ends a run. The site's test of every Chinese page calls this on the page's text
/// outside code, so a `_zh` text that passes here shows no English sentence there.
pub fn english_run(text: &str) -> Option<String> {
    let mut run: Vec<&str> = Vec::new();
    let long_enough = |run: &Vec<&str>| (run.len() >= 4).then(|| run.join(" "));
    for (i, segment) in text.split('`').enumerate() {
        if i % 2 == 1 {
            // Inside `code`.
            if let Some(found) = long_enough(&run) {
                return Some(found);
            }
            run.clear();
            continue;
        }
        for piece in segment.split(|c: char| !c.is_ascii()) {
            for token in piece.split_whitespace() {
                let word = token.trim_matches(|c: char| ",.;:!?()\"".contains(c));
                let is_word = word.len() > 1
                    && word.starts_with(|c: char| c.is_ascii_alphabetic())
                    && word
                        .chars()
                        .all(|c| c.is_ascii_alphabetic() || c == '\'' || c == '-');
                if is_word {
                    run.push(word);
                }
                if !is_word || token.ends_with(['.', '!', '?']) {
                    if let Some(found) = long_enough(&run) {
                        return Some(found);
                    }
                    run.clear();
                }
            }
            if let Some(found) = long_enough(&run) {
                return Some(found);
            }
            run.clear();
        }
    }
    long_enough(&run)
}

fn is_cjk_punct(c: char) -> bool {
    matches!(c as u32, 0x3000..=0x303F | 0xFF00..=0xFFEF)
}

fn is_identifier_like(word: &str) -> bool {
    if word.starts_with("http") && word.contains("://") {
        return true;
    }
    if word.contains(['_', '.', '(', ')', '/', ':', '=', '<', '>', '[', ']', '#']) {
        return true;
    }
    // Interior capitals (camelCase) or digits mixed in: an API name, not prose.
    let mut chars = word.chars();
    chars.next();
    chars.any(|c| c.is_ascii_uppercase() || c.is_ascii_digit())
}

/// The first mojibake sequence in a text: UTF-8 bytes that were decoded as Windows-1252
/// or Latin-1 (`itâ€™s`, `Ã©`), or a U+FFFD replacement character. Returns its byte range.
pub(crate) fn find_mojibake(text: &str) -> Option<std::ops::Range<usize>> {
    let mut prev: Option<(usize, char)> = None;
    for (i, c) in text.char_indices() {
        if c == '\u{FFFD}' {
            return Some(i..i + c.len_utf8());
        }
        if let Some((start, p)) = prev
            && ('\u{C2}'..='\u{EF}').contains(&p)
            && is_cp1252_continuation(c)
        {
            return Some(start..i + c.len_utf8());
        }
        prev = Some((i, c));
    }
    None
}

/// Characters that a UTF-8 continuation byte (0x80–0xBF) turns into under Windows-1252 or
/// Latin-1 decoding.
fn is_cp1252_continuation(c: char) -> bool {
    matches!(
        c,
        '\u{80}'
            ..='\u{BF}'
                | '€'
                | '‚'
                | 'ƒ'
                | '„'
                | '…'
                | '†'
                | '‡'
                | 'ˆ'
                | '‰'
                | 'Š'
                | '‹'
                | 'Œ'
                | 'Ž'
                | '\u{2018}'
                | '\u{2019}'
                | '\u{201C}'
                | '\u{201D}'
                | '•'
                | '–'
                | '—'
                | '˜'
                | '™'
                | 'š'
                | '›'
                | 'œ'
                | 'ž'
                | 'Ÿ'
    )
}

/// Normalised text for "is this the same sentence?" comparisons: lower-case words only.
pub(crate) fn normalized_words(text: &str) -> Vec<String> {
    words(text).map(str::to_lowercase).collect()
}

/// How many words [`normalized_words`] gives, without allocating them.
pub(crate) fn word_count(text: &str) -> usize {
    words(text).count()
}

fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
}

/// `key` as one JSON Pointer reference token (RFC 6901: `~` is `~0`, `/` is `~1`).
pub(crate) fn pointer_token(key: &str) -> std::borrow::Cow<'_, str> {
    if key.contains(['~', '/']) {
        key.replace('~', "~0").replace('/', "~1").into()
    } else {
        key.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn english_runs_are_sentences_outside_code() {
        assert_eq!(
            english_run("先用 compute-sanitizer 运行程序：Run the program under it."),
            Some("Run the program under it".to_string())
        );
        // Names, versions and short terms in Chinese prose are not sentences.
        assert_eq!(english_run("PyTorch 2.4 与 CUDA 12.4 的 NCCL 后端"), None);
        assert_eq!(
            english_run("`an illegal memory access was encountered` 是粘滞错误"),
            None
        );
        // A full stop or a Chinese character ends a run; a comma does not.
        assert_eq!(english_run("It failed. Then it worked 了"), None);
        assert_eq!(
            english_run("打印“out of range, do you have”"),
            Some("out of range do you have".to_string())
        );
        assert_eq!(english_run("one two three `code` four five six"), None);
    }

    #[test]
    fn chinese_share_ignores_code_and_identifiers() {
        let zh = "在释放张量之前调用 `torch.cuda.synchronize()`，并确保 CUDA 流已完成。";
        assert!(chinese_share(zh).unwrap() > 0.8, "{:?}", chinese_share(zh));
        let en = "Ensure all CUDA streams are synchronized before freeing tensors.";
        assert_eq!(chinese_share(en), Some(0.0));
        assert_eq!(chinese_share("`cudaDeviceReset()`"), None);
        let mixed = "CUDA 错误：驱动程序处于对请求操作无效的状态 (cudaErrorDriverNotReady)";
        assert!(chinese_share(mixed).unwrap() > 0.9);
    }

    #[test]
    fn mojibake_is_found_and_real_accents_are_not() {
        let text = "While functionally correct, itâ€™s less efficient";
        let r = find_mojibake(text).unwrap();
        assert_eq!(&text[r], "â€");
        assert!(find_mojibake("cafÃ© crÃ¨me").is_some());
        assert!(find_mojibake("café crème, naïve, 中文, it’s").is_none());
        assert!(find_mojibake("bad \u{FFFD} byte").is_some());
    }
}
