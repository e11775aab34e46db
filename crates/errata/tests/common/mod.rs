//! What the end-to-end tests of the `errata` binary share: the repository, copies of its
//! `data/`, and running the real binary with a fixed build date and commit.

// Each test file compiles this module on its own and uses a part of it.
#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repo root")
}

/// Copies the directory tree `from` to `to`.
pub fn copy_dir(from: &Path, to: &Path) {
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

/// A temporary directory holding a copy of the repository's `data/` in `data/`.
pub fn data_copy() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&repo().join("data"), &dir.path().join("data"));
    dir
}

/// How a run of the binary ended.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// Standard output then standard error.
    pub fn all(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

/// `errata args…` in `cwd`, with a fixed build date and source commit, ready to run.
pub fn command(cwd: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_errata"));
    command
        .args(args)
        .current_dir(cwd)
        .env("SOURCE_DATE_EPOCH", "1767225600")
        .env(
            "ERRATA_SOURCE_COMMIT",
            "0123456789abcdef0123456789abcdef01234567",
        );
    command
}

/// Runs `errata args…` in `cwd` (see [`command`]).
pub fn errata(cwd: &Path, args: &[&str]) -> Run {
    errata_with_stdin(cwd, args, b"")
}

/// [`errata`] with `stdin` on standard input.
pub fn errata_with_stdin(cwd: &Path, args: &[&str], stdin: &[u8]) -> Run {
    let mut child = command(cwd, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run errata");
    // A writer thread, so a large input cannot dead-lock against a full stdout pipe.
    let mut pipe = child.stdin.take().expect("stdin");
    let input = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // errata may exit before reading everything (a usage error): not a test failure.
        let _ = pipe.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait for errata");
    writer.join().expect("stdin writer");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The path as `&str` (temporary paths are UTF-8 here).
pub fn s(p: &Path) -> &str {
    p.to_str().expect("UTF-8 temporary path")
}

/// Runs git in `dir` with a fixed identity, no signing and `main` as the default
/// branch; panics on failure with git's output.
pub fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=errata test",
            "-c",
            "user.email=test@example.org",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .output()
        .expect("git");
    assert!(
        out.status.success(),
        "git {args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Writes `text` to `root/rel`, creating its directory.
pub fn write_file(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().expect("a file in a directory")).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The repository's `cuda/out-of-memory` entry as `id`, with its references dropped, so
/// that it checks on its own in a one-entry knowledge base.
pub fn standalone_entry(id: &str) -> serde_json::Value {
    let text =
        std::fs::read_to_string(repo().join("data/signatures/cuda/out-of-memory.json")).unwrap();
    let mut entry: serde_json::Value = serde_json::from_str(&text).unwrap();
    entry["id"] = id.into();
    // The copy travels without the run records beside data/, so it claims no more than its
    // own file shows: `reproduced` needs a record, `community` only the counted reports.
    if entry["verification_tier"] == "reproduced" {
        entry["verification_tier"] = "community".into();
    }
    // Nor the articles whose GPU runs some of its rates count: those become estimates.
    for list in ["dead_ends", "workarounds"] {
        if let Some(items) = entry[list].as_array_mut() {
            for item in items.iter_mut().filter(|i| i["basis"]["kind"] == "runs") {
                item["basis"] = serde_json::json!({"kind": "estimate"});
            }
        }
    }
    entry["transition_graph"] = serde_json::json!({
        "leads_to": [], "preceded_by": [], "frequently_confused_with": []
    });
    entry
}
