//! `file-too-large` (error): a data file is larger than 8 MiB and was not parsed.
//!
//! No real entry or article comes near this size; a file that does is generated or
//! corrupted, and parsing it would slow every check down. Split it or remove it.

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn a_100_mb_file_is_reported_without_being_parsed() {
        let big = format!("\"{}\"", "x".repeat(100 * 1024 * 1024));
        let diags = check_files(&[
            ("signatures/cuda/big.json", big),
            (
                "signatures/cuda/ok.json",
                serde_json::to_string(&valid_entry("cuda/ok")).unwrap(),
            ),
        ]);
        assert_eq!(only(diags.clone(), "file-too-large").len(), 1);
        assert_eq!(diags.len(), 1, "{diags:#?}");
    }
}
