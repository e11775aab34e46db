//! `errata build` end to end: exit codes, refusal on errors, atomic replacement and
//! byte-identical output, run as a real process on copies of `data/`.

use std::path::{Path, PathBuf};

mod common;

/// A scratch project: a copy of `data/` and nothing else (no errata.toml, no site/: the
/// embedded theme and schemas are used).
fn project() -> tempfile::TempDir {
    common::data_copy()
}

/// Runs errata in `cwd`; returns the exit code and stderr.
fn errata(cwd: &Path, args: &[&str]) -> (i32, String) {
    let run = common::errata(cwd, args);
    (run.code, run.stderr)
}

fn tree(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        if p.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else {
            out.push((
                p.strip_prefix(root).unwrap().to_path_buf(),
                std::fs::read(&p).unwrap(),
            ));
        }
    }
    out.sort();
    out
}

#[test]
fn builds_data_into_dist_site_byte_identically() {
    let p = project();
    let (code, err) = errata(p.path(), &["build"]);
    assert_eq!(code, 0, "{err}");
    let site = p.path().join("dist/site");
    assert!(
        site.join("index.html").is_file() && site.join("zh/index.html").is_file(),
        "{err}"
    );
    let first = tree(&site);
    let (code, err) = errata(p.path(), &["build", "--out", "other"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        first,
        tree(&p.path().join("other/site")),
        "two builds differ"
    );
}

#[test]
fn refuses_to_publish_data_with_errors_and_keeps_the_previous_site() {
    let p = project();
    assert_eq!(errata(p.path(), &["build"]).0, 0);
    let before = tree(&p.path().join("dist/site"));
    let entry = std::fs::read_dir(p.path().join("data/signatures/cuda"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(&entry, "{ not json").unwrap();
    let (code, err) = errata(p.path(), &["build"]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("json-syntax") && err.contains("refusing"),
        "{err}"
    );
    assert_eq!(
        before,
        tree(&p.path().join("dist/site")),
        "previous site untouched"
    );
}

#[test]
fn a_broken_theme_fails_with_exit_2_and_keeps_the_previous_site() {
    let p = project();
    assert_eq!(errata(p.path(), &["build"]).0, 0);
    let before = tree(&p.path().join("dist/site"));
    std::fs::create_dir_all(p.path().join("site/templates")).unwrap();
    std::fs::write(
        p.path().join("site/templates/entry.html"),
        "{% extends \"base.html\" %}{% block content %}{{ e.nope.deeper }}{% endblock content %}",
    )
    .unwrap();
    let (code, err) = errata(p.path(), &["build"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("entry.html"), "names the template: {err}");
    assert_eq!(before, tree(&p.path().join("dist/site")));
    // No staging directory is left behind.
    let leftovers: Vec<_> = std::fs::read_dir(p.path().join("dist"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn theme_override_and_base_url_from_the_command_line() {
    let p = project();
    std::fs::create_dir_all(p.path().join("site/i18n")).unwrap();
    std::fs::write(
        p.path().join("site/i18n/en.toml"),
        "site_name = \"Local errata\"\n",
    )
    .unwrap();
    let (code, err) = errata(
        p.path(),
        &["build", "--base-url", "https://example.org/kb/"],
    );
    assert_eq!(code, 0, "{err}");
    let home = std::fs::read_to_string(p.path().join("dist/site/index.html")).unwrap();
    assert!(home.contains(">Local errata</a>"), "override used");
    assert!(
        home.contains("href=\"https://example.org/kb/index.html\""),
        "canonical uses --base-url"
    );
    assert!(
        home.contains("href=\"static/style.css\""),
        "links stay relative"
    );
    let zh = std::fs::read_to_string(p.path().join("dist/site/zh/index.html")).unwrap();
    assert!(zh.contains("首页"), "other strings still embedded");
}

#[test]
fn missing_data_dir_is_a_tool_failure() {
    let dir = tempfile::tempdir().unwrap();
    let (code, err) = errata(dir.path(), &["build", "no-such-dir"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no-such-dir"), "{err}");
}
