//! Path safety: nothing in the data (an id, a slug, a tag, a link, a symbolic link), in a
//! run record or in a bundle makes errata read or write outside the data directory or
//! the output directory. The real binary on hostile trees; one test per way out.
#![cfg(unix)]

mod common;

use std::path::Path;

use common::{errata, standalone_entry as entry, write_file as write};

/// Every path under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for item in std::fs::read_dir(dir).unwrap() {
            let item = item.unwrap();
            let rel = item
                .path()
                .strip_prefix(root)
                .unwrap()
                .display()
                .to_string();
            if item.file_type().unwrap().is_dir() {
                walk(root, &item.path(), out);
            }
            out.push(rel);
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

const TODAY: &str = "2026-11-30";

#[test]
fn symbolic_links_out_of_the_data_directory_are_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let secret = "TOPSECRET-7f3a";
    // Files a pull request could point at on the machine that checks it.
    write(
        root,
        "outside/secret.json",
        &format!("{{\"token\": \"{secret}\""),
    );
    write(
        root,
        "outside/notes/leak.md",
        &format!("---\ntitle: {secret}\nid: cuda/leak\n---\n{secret}\n"),
    );
    write(
        root,
        "data/signatures/cuda/out-of-memory.json",
        &entry("cuda/out-of-memory").to_string(),
    );
    let link = |target: &str, at: &str| {
        std::os::unix::fs::symlink(root.join(target), root.join(at)).unwrap();
    };
    link("outside/secret.json", "data/signatures/cuda/leak.json");
    std::fs::create_dir_all(root.join("data/articles")).unwrap();
    link("outside/notes", "data/articles/cuda");
    // A link that stays inside is still followed.
    link(
        "data/signatures/cuda/out-of-memory.json",
        "data/signatures/cuda/inside.json",
    );

    let run = errata(
        root,
        &["check", "data", "--format", "json", "--today", TODAY],
    );
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(!run.all().contains(secret), "{}", run.all());
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let diagnostics = doc["diagnostics"].as_array().unwrap();
    let rules_of = |file: &str| -> Vec<&str> {
        diagnostics
            .iter()
            .filter(|d| d["file"].as_str().unwrap().ends_with(file))
            .map(|d| d["rule"].as_str().unwrap())
            .collect()
    };
    assert_eq!(rules_of("signatures/cuda/leak.json"), ["unreadable"]);
    assert_eq!(rules_of("articles/cuda"), ["unreadable"]);
    // inside.json was read: its id does not match its name.
    assert!(rules_of("inside.json").contains(&"id-path-mismatch"));
}

#[test]
fn article_links_out_of_the_data_directory_are_reported_without_looking() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, "secret.txt", "exists");
    write(
        root,
        "data/signatures/cuda/out-of-memory.json",
        &entry("cuda/out-of-memory").to_string(),
    );
    write(
        root,
        "data/articles/cuda/a.md",
        "---\ntitle: A\nid: cuda/a\ndate: \"2025-01-01\"\n---\n# A\n\n\
         [entry](../../signatures/cuda/out-of-memory.json)\n\
         [exists outside](../../../secret.txt)\n\
         [far](../../../../../../../../etc/passwd)\n",
    );
    let run = errata(
        root,
        &["check", "data", "--format", "json", "--today", TODAY],
    );
    assert_eq!(run.code, 1, "{}", run.all());
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let messages: Vec<&str> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == "broken-link")
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(
        messages
            .iter()
            .all(|m| m.contains("outside the data directory")),
        "{messages:?}"
    );
}

#[test]
fn ids_tags_and_names_that_would_escape_or_clash_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // Each an id that a file name could carry: up and out, absolute, upper case (a clash
    // with `oom` on a case-insensitive file system), a Cyrillic look-alike of `oom`, and
    // a full-width solidus instead of `/`.
    let hostile = [
        ("dots", "cuda/../../../escaped"),
        ("absolute", "/tmp/escaped"),
        ("upper", "cuda/OOM"),
        ("lookalike", "cuda/\u{43e}\u{43e}m"),
        ("fullwidth", "cuda\u{ff0f}oom"),
    ];
    for (file, id) in hostile {
        write(
            root,
            &format!("data/signatures/cuda/{file}.json"),
            &entry(id).to_string(),
        );
    }
    // Files whose own names are the clash and the look-alike.
    write(
        root,
        "data/signatures/cuda/oom.json",
        &entry("cuda/oom").to_string(),
    );
    write(
        root,
        "data/signatures/cuda/OOM.json",
        &entry("cuda/OOM").to_string(),
    );
    write(
        root,
        "data/signatures/cuda/\u{43e}\u{43e}m.json",
        &entry("cuda/\u{43e}\u{43e}m").to_string(),
    );
    let run = errata(
        root,
        &["check", "data", "--format", "json", "--today", TODAY],
    );
    assert_eq!(run.code, 1, "{}", run.all());
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let diagnostics = doc["diagnostics"].as_array().unwrap();
    for name in [
        "dots.json",
        "absolute.json",
        "upper.json",
        "lookalike.json",
        "fullwidth.json",
        "OOM.json",
        "\u{43e}\u{43e}m.json",
    ] {
        assert!(
            diagnostics.iter().any(|d| {
                d["file"].as_str().unwrap().ends_with(&format!("/{name}"))
                    && d["severity"] == "error"
                    && (d["rule"] == "schema" || d["rule"] == "id-path-mismatch")
            }),
            "{name}: no schema or id-path-mismatch error"
        );
    }
    // And nothing is built from them.
    let run = errata(root, &["build", "data", "--out", "dist"]);
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(!root.join("dist/site").exists());
    assert!(!root.join("escaped").exists() && !Path::new("/tmp/escaped").exists());
}

#[test]
fn hostile_tags_become_pages_inside_the_site() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut e = entry("cuda/out-of-memory");
    e["tags"] = serde_json::json!([
        "../../../../escaped-tag",
        "/tmp/abs-tag",
        "CUDA Graphs",
        "cuda-graphs",
        "\u{202e}gpj.exe",
        "con",
        "a/b\\c"
    ]);
    write(
        root,
        "data/signatures/cuda/out-of-memory.json",
        &e.to_string(),
    );
    let run = errata(root, &["build", "data", "--out", "dist"]);
    assert_eq!(run.code, 0, "{}", run.all());
    assert_eq!(
        tree(&root.join("dist"))
            .iter()
            .filter(|p| p.contains(".."))
            .count(),
        0
    );
    let outside: Vec<String> = tree(root)
        .into_iter()
        .filter(|p| !p.starts_with("data") && !p.starts_with("dist"))
        .collect();
    assert!(outside.is_empty(), "{outside:?}");
    assert!(!Path::new("/tmp/abs-tag").exists());
    let tags: Vec<String> = tree(&root.join("dist/site/tags"));
    // "CUDA Graphs" and "cuda-graphs" share one page; no tag page is outside tags/.
    assert!(tags.iter().any(|t| t == "cuda-graphs.html"), "{tags:?}");
    assert!(
        tags.iter().all(|t| !t.contains('/') && t.is_ascii()),
        "{tags:?}"
    );
}

#[test]
fn an_output_directory_over_the_data_or_through_a_link_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // A data directory called `site`: `--out .` would replace it with the rendered site.
    write(
        root,
        "site/signatures/cuda/out-of-memory.json",
        &entry("cuda/out-of-memory").to_string(),
    );
    let before = tree(&root.join("site"));
    let run = errata(root, &["build", "site", "--out", "."]);
    assert_eq!(run.code, 2, "{}", run.all());
    assert!(run.stderr.contains("data directory"), "{}", run.stderr);
    assert_eq!(tree(&root.join("site")), before, "the data is untouched");
    let run = errata(root, &["bundle", "--data", "site", "--out", "site"]);
    assert_eq!(run.code, 2, "{}", run.all());
    assert_eq!(tree(&root.join("site")), before);

    // dist/site a symbolic link to a directory elsewhere: refused, the target untouched.
    write(root, "elsewhere/keep.txt", "keep");
    std::fs::create_dir_all(root.join("dist")).unwrap();
    std::os::unix::fs::symlink(root.join("elsewhere"), root.join("dist/site")).unwrap();
    let run = errata(root, &["build", "site", "--out", "dist"]);
    assert_eq!(run.code, 2, "{}", run.all());
    assert_eq!(tree(&root.join("elsewhere")), ["keep.txt"]);
}

#[test]
fn bundle_members_that_leave_the_archive_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    for (name, member) in [
        ("dots", "../../escaped.json"),
        ("absolute", "/tmp/escaped.json"),
        ("backslash", "entries\\..\\..\\escaped.json"),
    ] {
        // The tar crate refuses to write such names, so the header is filled by hand.
        let mut header = tar::Header::new_old();
        header.as_old_mut().name[..member.len()].copy_from_slice(member.as_bytes());
        header.set_size(2);
        header.set_mode(0o644);
        header.set_cksum();
        let mut tar = header.as_bytes().to_vec();
        tar.extend_from_slice(b"{}");
        tar.resize(1024 + 2048, 0);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, &tar).unwrap();
        let path = dir.path().join(format!("{name}.tar.gz"));
        std::fs::write(&path, gz.finish().unwrap()).unwrap();
        let path = path.to_str().unwrap();
        let run = errata(dir.path(), &["bundle", "verify", path]);
        assert_eq!(run.code, 1, "{name}: {}", run.all());
        assert!(
            run.all().contains("unsafe member path"),
            "{name}: {}",
            run.all()
        );
        let run = errata(dir.path(), &["match", "--bundle", path, "-"]);
        assert_eq!(run.code, 2, "{name}: {}", run.all());
    }
    assert!(!dir.path().join("../escaped.json").exists());
    assert!(!Path::new("/tmp/escaped.json").exists());
}
