//! A number beyond `f64` in an entry is a JSON syntax error at its position, not an
//! entry whose JSON tree is missing (fuzz regression `fuzz/regressions/entry/`).

use std::path::Path;

use errata_load::KnowledgeBase;
use errata_model::Anchor;

fn load(text: &str) -> KnowledgeBase {
    let root = Path::new("data");
    let path = root.join("signatures/cuda/a.json");
    KnowledgeBase::from_files(root, vec![(path, text.as_bytes().to_vec())])
}

#[test]
fn a_number_beyond_f64_is_a_syntax_error_where_it_is() {
    let digits = format!(r#"{{"id": "cuda/a", "x": {}}}"#, "9".repeat(400));
    for text in [
        r#"{"id": "cuda/a", "x_extra": 1e999}"#,
        r#"{"id": "cuda/a", "x_extra": [-2.5E+0400]}"#,
        r#"{"id": "cuda/a", "x": {"y": 1e400}}"#,
        &digits,
    ] {
        let kb = load(text);
        assert!(kb.entries.is_empty(), "{text}");
        let d = &kb.diagnostics[0];
        assert_eq!(d.rule, "json-syntax");
        assert!(d.message.contains("number out of range"), "{}", d.message);
        let at = text.find(|c: char| c.is_ascii_digit()).unwrap();
        match &d.anchor {
            Anchor::Bytes(r) => assert!(r.start >= at && r.start <= text.len(), "{r:?} in {text}"),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn large_numbers_within_f64_still_load() {
    let digits = "9".repeat(305);
    for text in [
        r#"{"id": "cuda/a", "x_extra": 1e308, "y": "1e999 in a string"}"#.to_string(),
        format!(r#"{{"id": "cuda/a", "x_extra": {digits}}}"#),
    ] {
        let kb = load(&text);
        assert_eq!(kb.entries.len(), 1, "{text}: {:?}", kb.diagnostics);
        assert!(kb.diagnostics.is_empty());
        assert_ne!(kb.entries[0].value(), serde_json::Value::Null);
    }
}
