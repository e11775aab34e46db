//! The knowledge base inside the binary: `match`, `decode` and `mcp` answer in a
//! directory with no data, `--version` names what is built in, and an explicit `--data`
//! that does not exist is an error rather than a silent fallback.

mod common;

use common::{errata, errata_with_stdin, repo};

#[test]
fn match_answers_from_the_built_in_knowledge_base_in_an_empty_directory() {
    let dir = tempfile::tempdir().expect("tempdir");
    let log = b"epoch 3 step 120 loss 0.42\nRuntimeError: CUDA error: an illegal memory access was encountered\nOSError: (External) CUBLAS error(13).\n";
    let run = errata_with_stdin(dir.path(), &["match", "--format", "json"], log);
    assert_eq!(run.code, 1, "{}", run.all());
    let ids: Vec<String> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("json"))
        .map(|v| format!("{}:{}", v["line"], v["id"].as_str().unwrap_or_default()))
        .collect();
    assert_eq!(
        ids,
        ["2:cuda/illegal-memory-access", "3:cublas/execution-failed"]
    );
    // The same answers as from the repository's data directory.
    let here = errata_with_stdin(&repo(), &["match", "--format", "json"], log);
    assert_eq!(here.stdout, run.stdout);
    // Nothing was written into the directory.
    assert_eq!(std::fs::read_dir(dir.path()).expect("read").count(), 0);
}

#[test]
fn the_built_in_knowledge_base_is_read_without_writing_files() {
    // `match`, `decode` and `incidents` read the packed entries straight out of the
    // binary: nothing is unpacked into a temporary directory (it used to be, which was
    // most of their start-up). TMPDIR names a file, so that any temporary directory
    // would fail to be made, even for root.
    let dir = tempfile::tempdir().expect("tempdir");
    let not_a_dir = tempfile::NamedTempFile::new().expect("file");
    let log = tempfile::NamedTempFile::new().expect("log file");
    std::fs::write(
        log.path(),
        b"RuntimeError: CUDA error: an illegal memory access was encountered\n",
    )
    .expect("write log");
    for args in [
        &["match", "--format", "json", common::s(log.path())][..],
        &["decode", "700"],
        &["incidents", common::s(log.path())],
    ] {
        let out = common::command(dir.path(), args)
            .env("TMPDIR", not_a_dir.path())
            .output()
            .expect("run errata");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains("cuda/illegal-memory-access"),
            "{args:?}: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn version_names_the_built_in_knowledge_base() {
    let run = errata(&repo(), &["--version"]);
    assert_eq!(run.code, 0, "{}", run.all());
    let entries = std::fs::read_dir(repo().join("data/signatures"))
        .expect("signatures")
        .flat_map(|d| std::fs::read_dir(d.expect("dir").path()).expect("domain"))
        .count();
    assert!(
        run.stdout.starts_with(&format!(
            "errata {} (knowledge base: {entries} entries, data ",
            env!("CARGO_PKG_VERSION")
        )),
        "{}",
        run.stdout
    );
}

#[test]
fn an_explicit_data_directory_that_does_not_exist_is_an_error() {
    let dir = tempfile::tempdir().expect("tempdir");
    for args in [
        &["match", "--data", "nowhere"][..],
        &["decode", "700", "--data", "nowhere"],
    ] {
        let run = errata_with_stdin(dir.path(), args, b"CUDA error: out of memory\n");
        assert_eq!(run.code, 2, "{args:?}: {}", run.all());
        assert!(run.stderr.contains("nowhere"), "{}", run.stderr);
    }
}
