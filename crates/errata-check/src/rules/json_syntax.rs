//! `json-syntax` (error): an entry file is not valid JSON or not UTF-8.
//!
//! Every file under `signatures/` must be one UTF-8 JSON object. This rule reports empty
//! files, invalid UTF-8 (at the first bad byte), syntax errors (at the offending
//! character), and nesting deeper than 128 levels (entries are shallow; deeper input is
//! rejected rather than risking the checker's stack).
//!
//! The rest of the knowledge base is still checked: one broken file never hides another.

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn empty_binary_truncated_and_deep_files() {
        let deep = "[".repeat(200_000);
        let diags = only(
            check_files(&[
                ("signatures/cuda/empty.json", String::new()),
                (
                    "signatures/cuda/trunc.json",
                    "{\"id\": \"cuda/trunc\",".into(),
                ),
                ("signatures/cuda/deep.json", deep),
                (
                    "signatures/cuda/ok.json",
                    serde_json::to_string(&valid_entry("cuda/ok")).unwrap(),
                ),
            ]),
            "json-syntax",
        );
        let files: Vec<_> = diags
            .iter()
            .map(|d| d.file.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(files, ["deep.json", "empty.json", "trunc.json"]);
        assert!(
            diags[0].message.contains("recursion limit"),
            "{}",
            diags[0].message
        );
    }

    #[test]
    fn a_repeated_key_is_refused_where_it_repeats() {
        let text = "{\n  \"id\": \"cuda/a\",\n  \"regex\": \"a\",\n  \"regex\": \"b\"\n}";
        let diags = only(
            check_files(&[("signatures/cuda/a.json", text.to_string())]),
            "json-syntax",
        );
        assert_eq!(diags.len(), 1, "{diags:#?}");
        assert!(diags[0].message.contains("duplicate field `regex`"));
        assert_eq!(diags[0].location.unwrap().line, 4);
    }

    #[test]
    fn invalid_utf8_points_at_the_byte() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("signatures/cuda/bin.json");
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, b"{\n  \"id\": \"\xff\xfe\"\n}").unwrap();
        let kb = errata_load::KnowledgeBase::load(dir.path()).unwrap();
        let diags = crate::check(&kb, &crate::CheckOptions::default());
        let d = diags.iter().find(|d| d.rule == "json-syntax").unwrap();
        let loc = d.location.unwrap();
        assert_eq!((loc.line, loc.column), (2, 10));
    }
}
