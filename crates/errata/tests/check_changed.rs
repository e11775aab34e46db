//! `errata check --changed [REV]` on a real git repository: a scratch clone-like project
//! with a copy of `data/` committed on `main` and a pull-request branch on top.

mod common;
use common::{data_copy, errata, git};

/// A repository with `data/` committed on `main`, then a branch `pr` checked out.
fn repo_on_a_branch() -> tempfile::TempDir {
    let dir = data_copy();
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "the knowledge base"]);
    git(dir.path(), &["checkout", "-q", "-b", "pr"]);
    dir
}

fn json(out: &common::Run) -> serde_json::Value {
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", out.all()))
}

fn files_reported(doc: &serde_json::Value) -> Vec<String> {
    let mut files: Vec<String> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["file"].as_str().unwrap().to_string())
        .collect();
    files.dedup();
    files
}

#[test]
fn only_the_files_of_the_pull_request_are_reported() {
    let dir = repo_on_a_branch();
    let root = dir.path();
    let entry = root.join("data/signatures/cuda/out-of-memory.json");
    // A committed change that breaks one entry, and an untracked new file with an error.
    let text = std::fs::read_to_string(&entry).unwrap();
    std::fs::write(
        &entry,
        text.replacen("\"confidence\": ", "\"confidence\": 7", 1),
    )
    .unwrap();
    git(root, &["commit", "-qam", "break one entry"]);
    let other = root.join("data/signatures/cuda/illegal-memory-access.json");
    let mut new: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&other).unwrap()).unwrap();
    new["id"] = "cuda/brand-new".into();
    let new_path = root.join("data/signatures/cuda/brand-new.json");
    std::fs::write(&new_path, serde_json::to_string_pretty(&new).unwrap()).unwrap();

    // Default: against the merge base with main.
    let out = errata(root, &["check", "--changed", "--format", "json"]);
    assert_eq!(out.code, 1, "{}", out.all());
    let doc = json(&out);
    assert_eq!(doc["summary"]["files"], 2, "{doc:#}");
    assert_eq!(
        files_reported(&doc),
        [
            "data/signatures/cuda/brand-new.json",
            "data/signatures/cuda/out-of-memory.json"
        ],
        "{doc:#}"
    );
    // The copy is checked against the whole corpus: its regex overlaps the original's,
    // which is not part of the change (so it is not reported there).
    let rules: Vec<&str> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["file"].as_str().unwrap().ends_with("brand-new.json"))
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert!(rules.contains(&"duplicate-text"), "{rules:?}");
    assert!(
        out.stderr.contains("checking 2 changed file(s)"),
        "{}",
        out.stderr
    );

    // Against an explicit revision: HEAD sees only the untracked file.
    let out = errata(root, &["check", "--changed", "HEAD", "--format", "json"]);
    assert_eq!(
        files_reported(&json(&out)),
        ["data/signatures/cuda/brand-new.json"]
    );

    // Nothing changed: clean, exit 0.
    std::fs::remove_file(&new_path).unwrap();
    git(root, &["checkout", "-q", "main"]);
    let out = errata(root, &["check", "--changed", "--format", "json"]);
    assert_eq!(out.code, 0, "{}", out.all());
    assert_eq!(json(&out)["summary"]["files"], 0);
}

#[test]
fn deleting_an_entry_reports_the_references_it_breaks() {
    let dir = repo_on_a_branch();
    let root = dir.path();
    // Some entry that another entry (or article) points at.
    let target = "data/signatures/cuda/cuda-error-driver-unloading.json";
    git(root, &["rm", "-q", target]);
    git(root, &["commit", "-qm", "remove an entry"]);
    let out = errata(root, &["check", "--changed", "--format", "json"]);
    assert_eq!(out.code, 1, "{}", out.all());
    let doc = json(&out);
    let broken: Vec<&serde_json::Value> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == "unknown-reference" || d["rule"] == "broken-link")
        .collect();
    assert!(!broken.is_empty(), "{doc:#}");
    assert!(
        broken.iter().all(|d| !d["file"]
            .as_str()
            .unwrap()
            .ends_with("driver-unloading.json")),
        "{doc:#}"
    );
}

#[test]
fn clear_errors_outside_git_and_for_unknown_revisions() {
    let dir = data_copy();
    let out = errata(dir.path(), &["check", "--changed"]);
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(
        out.stderr.contains("not in a git repository"),
        "{}",
        out.stderr
    );

    let dir = repo_on_a_branch();
    let out = errata(dir.path(), &["check", "--changed", "no-such-branch"]);
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(
        out.stderr.contains("`no-such-branch` is not a commit"),
        "{}",
        out.stderr
    );
    // --changed takes the data directory from errata.toml, never from PATHs.
    let out = errata(dir.path(), &["check", "--changed=HEAD", "data"]);
    assert_eq!(out.code, 2, "{}", out.all());
}
