//! Property tests: whatever bytes or JSON a contributor writes, loading and checking
//! never panics, and every diagnostic points inside its file.

use errata_check::{CheckOptions, check};
use errata_load::KnowledgeBase;
use proptest::prelude::*;

fn run(files: &[(&str, Vec<u8>)]) {
    let dir = tempfile::tempdir().unwrap();
    for (rel, bytes) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, bytes).unwrap();
    }
    let kb = KnowledgeBase::load(dir.path()).unwrap();
    let diags = check(&kb, &CheckOptions::default());
    for d in &diags {
        let loc = d.location.expect("every diagnostic is resolved");
        assert!(loc.line >= 1 && loc.column >= 1);
        if let Some(src) = kb.source(&d.file) {
            assert!(loc.start <= src.text.len() && loc.end <= src.text.len());
        }
    }
}

fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(serde_json::Value::from),
        ".{0,20}".prop_map(serde_json::Value::from),
        prop_oneof![
            Just("cuda/x"),
            Just("2025-13-40"),
            Just("https://localhost/"),
            Just("itâ€™s"),
            Just("(")
        ]
        .prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("id".to_string()),
                    Just("regex".to_string()),
                    Just("dead_ends".to_string()),
                    Just("versions".to_string()),
                    Just("transition_graph".to_string()),
                    Just("leads_to".to_string()),
                    "[a-z_]{1,8}"
                ],
                inner,
                0..8
            )
            .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(entry in prop::collection::vec(any::<u8>(), 0..512), article in prop::collection::vec(any::<u8>(), 0..512)) {
        run(&[("signatures/cuda/a.json", entry), ("articles/cuda/b.md", article)]);
    }

    #[test]
    fn random_json_never_panics(v in json_value()) {
        run(&[("signatures/cuda/a.json", serde_json::to_vec_pretty(&v).unwrap())]);
    }

    #[test]
    fn random_markdown_never_panics(body in "(---\n|#{1,7} |\\[x\\]\\(#?[a-z./]{0,8}\\)|```[a-z =()]{0,12}\n|>|\\* |[a-zâ€™ \n`]){0,40}") {
        run(&[("articles/cuda/b.md", body.into_bytes())]);
    }
}
