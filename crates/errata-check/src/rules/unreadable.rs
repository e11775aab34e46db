//! `unreadable` (error): a file in the data directory cannot be read.
//!
//! Permission errors, symbolic-link loops, entries that are not regular files, and
//! articles that are not valid UTF-8 are reported here, at the file, and the rest of the
//! knowledge base is still checked.

#[cfg(test)]
mod tests {
    #[cfg(unix)]
    #[test]
    fn symlink_loops_are_reported_and_the_rest_is_checked() {
        let dir = tempfile::tempdir().unwrap();
        let sig = dir.path().join("signatures/cuda");
        std::fs::create_dir_all(&sig).unwrap();
        std::os::unix::fs::symlink(&sig, sig.join("loop")).unwrap();
        std::fs::write(sig.join("a.json"), "{").unwrap();
        let kb = errata_load::KnowledgeBase::load(dir.path()).unwrap();
        let diags = crate::check(&kb, &crate::CheckOptions::default());
        assert!(
            diags
                .iter()
                .any(|d| d.rule == "unreadable" && d.message.contains("loop")),
            "{diags:#?}"
        );
        assert!(diags.iter().any(|d| d.rule == "json-syntax"));
    }
}
