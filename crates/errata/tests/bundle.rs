//! `errata bundle` and the bundle of `errata build` end to end, as a real process: the
//! bundle does not depend on the working directory (the JSON Schemas are built into the
//! binary), `--schema DIR` still overrides them, and `verify` accepts what was written.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repo root")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for item in std::fs::read_dir(from).unwrap() {
        let item = item.unwrap();
        let target = to.join(item.file_name());
        if item.file_type().unwrap().is_dir() {
            copy_dir(&item.path(), &target);
        } else {
            std::fs::copy(item.path(), &target).unwrap();
        }
    }
}

/// Runs errata in `cwd`; returns the exit code and stdout + stderr.
fn errata(cwd: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_errata"))
        .args(args)
        .current_dir(cwd)
        .env("SOURCE_DATE_EPOCH", "1767225600")
        .env(
            "ERRATA_SOURCE_COMMIT",
            "0123456789abcdef0123456789abcdef01234567",
        )
        .output()
        .expect("run errata");
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
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

fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temporary path")
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
