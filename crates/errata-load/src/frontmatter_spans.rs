//! JSON pointer → byte range inside an article's YAML front matter.
//!
//! Front matter is a flat mapping of scalars and short lists, so a line scan is enough:
//! `/key` finds the line `key: value`, `/key/N` the N-th item of its flow (`[a, b]`) or
//! block (`- a`) list. Anything not found falls back to the key, then to the whole block.

use std::ops::Range;

pub(crate) fn locate(text: &str, front: Range<usize>, pointer: &str, key: bool) -> Range<usize> {
    let block = &text[front.clone()];
    let mut parts = pointer.split('/').skip(1);
    let Some(name) = parts.next() else {
        return front.start..front.start;
    };
    let index: Option<usize> = parts.next().and_then(|p| p.parse().ok());

    let mut offset = front.start;
    let mut lines = block.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        let line_start = offset;
        offset += line.len();
        let Some(rest) = line.strip_prefix(name).and_then(|r| r.strip_prefix(':')) else {
            continue;
        };
        let key_range = line_start..line_start + name.len();
        if key {
            return key_range;
        }
        let value_start = line_start + name.len() + 1 + (rest.len() - rest.trim_start().len());
        let value = rest.trim();
        let Some(index) = index else {
            return if value.is_empty() {
                key_range
            } else {
                value_start..value_start + value.len()
            };
        };
        if let Some(inner) = value.strip_prefix('[') {
            // Flow list: find the index-th comma-separated item.
            let mut item_start = value_start + 1;
            for (i, item) in inner.trim_end_matches(']').split(',').enumerate() {
                if i == index {
                    let lead = item.len() - item.trim_start().len();
                    let s = item_start + lead;
                    return s..s + item.trim().len();
                }
                item_start += item.len() + 1;
            }
            return value_start..value_start + value.len();
        }
        // Block list: the following `- item` lines.
        let mut item_offset = offset;
        for (i, item_line) in lines.by_ref().enumerate() {
            let trimmed = item_line.trim_start();
            let Some(item) = trimmed.strip_prefix('-') else {
                break;
            };
            if i == index {
                let s = item_offset
                    + (item_line.len() - item.len())
                    + (item.len() - item.trim_start().len());
                return s..s + item.trim().len();
            }
            item_offset += item_line.len();
        }
        return key_range;
    }
    front.start..front.start
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_scalars_and_list_items() {
        let text = "---\ntitle: Hello\nsignatures: [cuda/a, cuda/b]\ntags:\n  - x\n  - yy\n---\n";
        let front = 4..text.len() - 4;
        let at = |p, k| &text[locate(text, front.clone(), p, k)];
        assert_eq!(at("/title", false), "Hello");
        assert_eq!(at("/title", true), "title");
        assert_eq!(at("/signatures/1", false), "cuda/b");
        assert_eq!(at("/tags/1", false), "yy");
        assert_eq!(locate(text, front.clone(), "/missing", false), 4..4);
    }
}
