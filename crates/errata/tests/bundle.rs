//! `errata bundle` and the bundle of `errata build` end to end, as a real process: the
//! bundle does not depend on the working directory (the JSON Schemas are built into the
//! binary), `--schema DIR` still overrides them, and `verify` accepts what was written.

use std::path::PathBuf;

mod common;
use common::{copy_dir, repo, s};

/// Runs errata in `cwd`; returns the exit code and stdout + stderr.
fn errata(cwd: &std::path::Path, args: &[&str]) -> (i32, String) {
    let run = common::errata(cwd, args);
    (run.code, run.all())
}

/// A copy of `data/` in `dir/data`, and an empty working directory `dir/elsewhere`
/// (no `schema/`, no `errata.toml`).
fn scratch() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    copy_dir(&repo().join("data"), &data);
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    (dir, data, elsewhere)
}

#[test]
fn bundle_a_data_directory_from_another_working_directory() {
    let (dir, data, elsewhere) = scratch();
    let out = dir.path().join("out");
    let (code, log) = errata(
        &elsewhere,
        &["bundle", "--data", s(&data), "--out", s(&out)],
    );
    assert_eq!(code, 0, "{log}");
    let bundle = out.join("errata-1.0.0.tar.gz");
    let (code, log) = errata(&elsewhere, &["bundle", "verify", s(&bundle)]);
    assert_eq!(code, 0, "{log}");

    // The same bundle from inside the data directory, with relative paths.
    let (code, log) = errata(&data, &["bundle", "--data", ".", "--out", "../out2"]);
    assert_eq!(code, 0, "{log}");
    assert_eq!(
        std::fs::read(&bundle).unwrap(),
        std::fs::read(dir.path().join("out2/errata-1.0.0.tar.gz")).unwrap()
    );

    // `--schema DIR` bundles those files instead: the committed ones give the same bytes.
    let out3 = dir.path().join("out3");
    let schema = repo().join("schema");
    let (code, log) = errata(
        &elsewhere,
        &[
            "bundle",
            "--data",
            s(&data),
            "--out",
            s(&out3),
            "--schema",
            s(&schema),
        ],
    );
    assert_eq!(code, 0, "{log}");
    assert_eq!(
        std::fs::read(&bundle).unwrap(),
        std::fs::read(out3.join("errata-1.0.0.tar.gz")).unwrap()
    );
    // A schema directory that does not exist is a tool failure, naming it.
    let (code, log) = errata(
        &elsewhere,
        &[
            "bundle",
            "--data",
            s(&data),
            "--out",
            s(&dir.path().join("out4")),
            "--schema",
            "no-such-dir",
        ],
    );
    assert_eq!(code, 2, "{log}");
    assert!(log.contains("no-such-dir"), "{log}");
}

#[test]
fn build_a_data_directory_from_another_working_directory() {
    let (dir, data, elsewhere) = scratch();
    let dist = dir.path().join("dist");
    let (code, log) = errata(&elsewhere, &["build", s(&data), "--out", s(&dist)]);
    assert_eq!(code, 0, "{log}");
    let bundle = dist.join("bundle/errata-1.0.0.tar.gz");
    assert!(bundle.is_file(), "{log}");
    let (code, log) = errata(&elsewhere, &["bundle", "verify", s(&bundle)]);
    assert_eq!(code, 0, "{log}");
    let sums = std::fs::read_to_string(dist.join("bundle/SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), 1, "{sums}");
}
