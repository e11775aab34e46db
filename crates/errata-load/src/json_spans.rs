//! JSON pointer → byte range, for files that have diagnostics.

use std::ops::Range;

use jsonc_parser::ast::{ObjectPropName, Value};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, CommentCollectionStrategy, ParseOptions};

/// A parsed JSON text that can answer "where is `/dead_ends/0/action`?".
pub(crate) struct JsonSpans<'a> {
    root: Option<Value<'a>>,
}

impl<'a> JsonSpans<'a> {
    /// Parses `text`. Only called on text that `serde_json` already accepted, whose
    /// nesting is therefore bounded by serde_json's recursion limit.
    pub(crate) fn parse(text: &'a str) -> JsonSpans<'a> {
        let strict = ParseOptions {
            allow_comments: false,
            allow_loose_object_property_names: false,
            allow_trailing_commas: false,
            allow_missing_commas: false,
            allow_single_quoted_strings: false,
            allow_hexadecimal_numbers: false,
            allow_unary_plus_numbers: false,
            allow_bare_decimal_point_numbers: false,
            allow_non_finite_numbers: false,
            allow_extended_string_escapes: false,
        };
        let collect = CollectOptions {
            comments: CommentCollectionStrategy::Off,
            tokens: false,
        };
        let root = jsonc_parser::parse_to_ast(text, &collect, &strict)
            .ok()
            .and_then(|r| r.value);
        JsonSpans { root }
    }

    /// The range of the value at `pointer`, or of its key when `key` is set. Falls back to
    /// the nearest ancestor that exists (a missing key points at its parent object).
    pub(crate) fn locate(&self, pointer: &str, key: bool) -> Option<Range<usize>> {
        let mut value = self.root.as_ref()?;
        let mut found = value.range();
        let mut key_range = None;
        for token in pointer.split('/').skip(1) {
            let token = token.replace("~1", "/").replace("~0", "~");
            match value {
                Value::Object(obj) => {
                    let Some(prop) = obj.properties.iter().find(|p| prop_name(&p.name) == token)
                    else {
                        return Some(to_range(found));
                    };
                    key_range = Some(prop.name.range());
                    value = &prop.value;
                }
                Value::Array(arr) => {
                    let Some(v) = token
                        .parse::<usize>()
                        .ok()
                        .and_then(|i| arr.elements.get(i))
                    else {
                        return Some(to_range(found));
                    };
                    key_range = None;
                    value = v;
                }
                _ => return Some(to_range(found)),
            }
            found = value.range();
        }
        match (key, key_range) {
            (true, Some(k)) => Some(to_range(k)),
            _ => Some(to_range(found)),
        }
    }
}

fn prop_name<'b>(name: &'b ObjectPropName<'_>) -> &'b str {
    match name {
        ObjectPropName::String(s) => &s.value,
        ObjectPropName::Word(w) => w.value,
    }
}

fn to_range(r: jsonc_parser::common::Range) -> Range<usize> {
    r.start..r.end
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_values_keys_and_missing_keys() {
        let text = r#"{"a": {"b": [1, "two"]}, "c~/d": null}"#;
        let spans = JsonSpans::parse(text);
        assert_eq!(&text[spans.locate("/a/b/1", false).unwrap()], "\"two\"");
        assert_eq!(&text[spans.locate("/a", true).unwrap()], "\"a\"");
        assert_eq!(&text[spans.locate("/c~0~1d", false).unwrap()], "null");
        // Missing key: the parent object.
        assert_eq!(
            &text[spans.locate("/a/zzz", false).unwrap()],
            r#"{"b": [1, "two"]}"#
        );
        assert_eq!(spans.locate("", false), Some(0..text.len()));
    }
}
