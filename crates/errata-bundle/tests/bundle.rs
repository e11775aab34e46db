//! The bundle end to end, on real files in temporary directories: write, read back with
//! the consumer, reproduce, corrupt, diff and version, search.

use std::io::Read;
use std::path::{Path, PathBuf};

use errata_bundle::{Bump, BundleOptions, Diff, Snapshot, Version, verify, write_bundle};
use errata_consumer::Bundle;
use serde_json::{Value, json};

fn schema_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../schema")
}

/// A complete entry, shaped like the ones in `data/`.
fn entry(id: &str, signature: &str, regex: &str, aliases: &[&str]) -> Value {
    json!({
        "id": id,
        "signature": signature,
        "signature_zh": format!("运行时错误：{signature}"),
        "regex": regex,
        "domain": id.split('/').next().unwrap_or("cuda"),
        "category": "runtime_error",
        "subcategory": null,
        "root_cause": format!("Root cause of {id}: the kernel touched memory it does not own."),
        "root_cause_type": "generic",
        "root_cause_zh": format!("{id} 的根本原因：内核访问了不属于它的显存。"),
        "versions": [{"version": "CUDA 12.4", "introduced": null, "deprecated": null, "removed": null, "behavior_change": null, "status": "active"}],
        "os_specific": {},
        "dead_ends": [{"action": "Reinstall the driver", "why_fails": "The driver is fine; the bug is in the program.", "fail_rate": 0.9, "condition": "", "sources": []}],
        "workarounds": [
            {"action": "Run under compute-sanitizer", "success_rate": 0.8, "how": "compute-sanitizer --tool memcheck python train.py", "condition": "", "sources": []},
            {"action": "Set CUDA_LAUNCH_BLOCKING=1", "success_rate": 0.6, "how": "Export it before the run to get the failing kernel.", "condition": "", "sources": []}
        ],
        "workarounds_zh": ["使用 compute-sanitizer 运行", "设置 CUDA_LAUNCH_BLOCKING=1 以定位出错的内核"],
        "transition_graph": {"leads_to": [], "preceded_by": [], "frequently_confused_with": []},
        "official_doc_url": "https://docs.nvidia.com/cuda/",
        "official_doc_section": null,
        "error_code": null,
        "verification_tier": "community",
        "confidence": 0.8,
        "fix_success_rate": 0.7,
        "resolvable": "true",
        "first_seen": "2024-01-01",
        "last_confirmed": "2025-01-01",
        "last_updated": "2025-01-01",
        "evidence_count": 3,
        "tags": ["memory"],
        "locale": "en",
        "aliases": aliases
    })
}

fn write_entry(data: &Path, value: &Value) {
    let id = value["id"].as_str().unwrap();
    let path = data.join("signatures").join(format!("{id}.json"));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(value).unwrap() + "\n").unwrap();
}

fn base_entries() -> Vec<Value> {
    let mut illegal = entry(
        "cuda/illegal-address",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        r"CUDA error: an illegal memory access was encountered",
        &["cudaErrorIllegalAddress"],
    );
    illegal["signature_zh"] = json!("运行时错误：CUDA错误：遇到非法内存访问");
    vec![
        illegal,
        entry(
            "cuda/oom",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
            r"CUDA out of memory\. Tried to allocate [\d.]+ [GM]iB",
            &[],
        ),
        entry(
            "cuda/generic-error",
            "RuntimeError: CUDA error: unspecified launch failure",
            r"CUDA error: .+",
            &[],
        ),
        entry(
            "nccl/timeout",
            "Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 600000 milliseconds before timing out",
            r"(?i)watchdog caught collective operation timeout",
            &["NCCL collective timeout"],
        ),
    ]
}

/// A knowledge base in `dir/data`: entries, an article and its translation, a run record.
fn make_kb(dir: &Path, entries: &[Value]) -> PathBuf {
    let data = dir.join("data");
    for e in entries {
        write_entry(&data, e);
    }
    let articles = data.join("articles/cuda");
    std::fs::create_dir_all(&articles).unwrap();
    std::fs::write(
        articles.join("debugging-illegal-access.md"),
        "---\ntitle: Debugging illegal memory access\nid: cuda/debugging-illegal-access\ndate: \"2025-01-01\"\nsignatures: [cuda/illegal-address]\n---\n# Debugging\n\nRun **compute-sanitizer** first.\n\n```bash\ncompute-sanitizer python x.py\n```\n",
    )
    .unwrap();
    std::fs::write(
        articles.join("debugging-illegal-access.zh.md"),
        "---\ntitle: 调试非法内存访问\nid: cuda/debugging-illegal-access\ndate: \"2025-01-01\"\ntranslation_of: cuda/debugging-illegal-access\nsource_hash: x\n---\n# 调试\n\n先运行 compute-sanitizer。\n",
    )
    .unwrap();
    let runs = data.join("runs/cuda");
    std::fs::create_dir_all(&runs).unwrap();
    std::fs::write(
        runs.join("debugging-illegal-access.json"),
        "{\"outcome\":\"pass\"}\n",
    )
    .unwrap();
    data
}

fn options(out: &Path) -> BundleOptions {
    BundleOptions {
        out_dir: out.to_path_buf(),
        schema_dir: schema_dir(),
        source_commit: Some("0123456789abcdef0123456789abcdef01234567".into()),
        epoch: Some(1_700_000_000),
        ..BundleOptions::default()
    }
}

fn build(data: &Path, out: &Path) -> PathBuf {
    let kb = errata_load::KnowledgeBase::load(data).unwrap();
    write_bundle(&kb, &options(out)).unwrap()
}

/// Members of a bundle: (path, content), in archive order.
fn members(path: &Path) -> Vec<(String, Vec<u8>)> {
    let file = std::fs::File::open(path).unwrap();
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(file));
    tar.entries()
        .unwrap()
        .map(|e| {
            let mut e = e.unwrap();
            let name = e.path().unwrap().to_string_lossy().into_owned();
            let mut data = Vec::new();
            e.read_to_end(&mut data).unwrap();
            (name, data)
        })
        .collect()
}

#[test]
fn round_trip_through_the_consumer() {
    let dir = tempfile::tempdir().unwrap();
    let data = make_kb(dir.path(), &base_entries());
    let out = dir.path().join("dist/bundle");
    let path = build(&data, &out);
    assert_eq!(path.file_name().unwrap(), "errata-1.0.0.tar.gz");
    assert!(out.join("SHA256SUMS").is_file() && out.join("CHANGELOG.md").is_file());

    let bundle = Bundle::open(&path).unwrap();
    let m = bundle.manifest();
    assert_eq!(
        (
            m.counts.entries,
            m.counts.articles,
            m.counts.translations,
            m.counts.runs
        ),
        (4, 1, 1, 1)
    );
    assert_eq!(m.build_date, "2023-11-14T22:13:20Z");
    assert_eq!(m.schema_version.split('.').count(), 3);
    let mut expected = base_entries();
    expected.sort_by(|a, b| a["id"].as_str().cmp(&b["id"].as_str()));
    let got: Vec<&Value> = bundle.entries().iter().map(|e| e.raw()).collect();
    assert_eq!(got, expected.iter().collect::<Vec<_>>());

    // Each entry's own signature and aliases find it first.
    for e in bundle.entries() {
        for text in std::iter::once(&e.signature).chain(&e.aliases) {
            let found = bundle.match_text(text);
            assert_eq!(
                found.first().map(|f| f.entry.id.as_str()),
                Some(e.id.as_str()),
                "{text}"
            );
        }
    }
    let names: Vec<String> = members(&path).into_iter().map(|(n, _)| n).collect();
    assert_eq!(names[0], "manifest.json");
    let mut rest = names[1..].to_vec();
    rest.sort();
    assert_eq!(rest, names[1..], "members after the manifest are sorted");
    for wanted in [
        "entries.json",
        "entries.jsonl",
        "errata.sqlite",
        "articles/cuda/debugging-illegal-access.txt",
        "articles/cuda/debugging-illegal-access.zh.md",
        "runs/cuda/debugging-illegal-access.json",
        "schema/entry.schema.json",
        "CHANGELOG.md",
    ] {
        assert!(
            names.iter().any(|n| n == wanted),
            "{wanted} missing from {names:?}"
        );
    }
    assert!(verify(&path).is_ok(), "{:?}", verify(&path).problems);
}

#[test]
fn two_builds_are_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let data = make_kb(dir.path(), &base_entries());
    let a = build(&data, &dir.path().join("a"));
    let b = build(&data, &dir.path().join("b"));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(
        std::fs::read(a.with_file_name("SHA256SUMS")).unwrap(),
        std::fs::read(b.with_file_name("SHA256SUMS")).unwrap()
    );
}

/// Rewrites `path` with `edit` applied to the uncompressed tar, and fixes SHA256SUMS so
/// that only the member-level check can catch the change.
fn rewrite_tar(path: &Path, out: &Path, edit: impl FnOnce(&mut Vec<u8>)) {
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut tar)
        .unwrap();
    edit(&mut tar);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    std::io::Write::write_all(&mut gz, &tar).unwrap();
    let bytes = gz.finish().unwrap();
    std::fs::create_dir_all(out).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::write(out.join(&name), &bytes).unwrap();
    let hash = errata_consumer::archive::sha256_hex(&bytes);
    std::fs::write(out.join("SHA256SUMS"), format!("{hash}  {name}\n")).unwrap();
}

#[test]
fn every_flipped_member_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let data = make_kb(dir.path(), &base_entries());
    let path = build(&data, &dir.path().join("good"));
    // Where each member's content starts in the tar stream.
    let mut tar_bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&path).unwrap())
        .read_to_end(&mut tar_bytes)
        .unwrap();
    let positions: Vec<(String, u64, u64)> = tar::Archive::new(tar_bytes.as_slice())
        .entries()
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.path().unwrap().to_string_lossy().into_owned(),
                e.raw_file_position(),
                e.size(),
            )
        })
        .collect();
    assert!(positions.len() > 10);
    for (i, (name, pos, size)) in positions.iter().enumerate() {
        let out = dir.path().join(format!("bad{i}"));
        let at = (pos + size / 2) as usize;
        rewrite_tar(&path, &out, |tar| tar[at] ^= 0x01);
        let bad = out.join(path.file_name().unwrap());
        let report = verify(&bad);
        assert!(!report.is_ok(), "flipping {name} went unnoticed");
        assert!(
            report
                .problems
                .iter()
                .any(|p| p.contains(&format!("`{name}`"))),
            "{name}: {:?}",
            report.problems
        );
        assert!(
            Bundle::open(&bad).is_err(),
            "the consumer accepted a corrupt {name}"
        );
    }
}

#[test]
fn tampered_or_truncated_files_fail() {
    let dir = tempfile::tempdir().unwrap();
    let data = make_kb(dir.path(), &base_entries());
    let path = build(&data, &dir.path().join("good"));
    let bytes = std::fs::read(&path).unwrap();

    // A flipped byte in the compressed file: SHA256SUMS catches it.
    let mut flipped = bytes.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x40;
    std::fs::write(&path, &flipped).unwrap();
    let report = verify(&path);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("differs from SHA256SUMS")),
        "{:?}",
        report.problems
    );

    // Truncated, with a matching SHA256SUMS: the archive itself fails.
    let cut = &bytes[..bytes.len() / 2];
    std::fs::write(&path, cut).unwrap();
    let name = path.file_name().unwrap().to_string_lossy().into_owned();
    std::fs::write(
        path.with_file_name("SHA256SUMS"),
        format!("{}  {name}\n", errata_consumer::archive::sha256_hex(cut)),
    )
    .unwrap();
    let report = verify(&path);
    assert!(!report.is_ok());
    assert!(Bundle::open(&path).is_err());
    assert!(
        Bundle::from_bytes(&bytes[..bytes.len() - 9]).is_err(),
        "a gzip without its trailer must fail"
    );

    // An extra member that the manifest does not list is named.
    let out = dir.path().join("extra");
    std::fs::write(&path, &bytes).unwrap();
    rewrite_tar(&path, &out, |tar| {
        let end = tar.len() - 1024; // the two zero blocks
        let mut builder = tar::Builder::new(Vec::new());
        let mut header = tar::Header::new_gnu();
        header.set_size(3);
        header.set_mode(0o644);
        builder
            .append_data(&mut header, "zz-extra.txt", &b"hi\n"[..])
            .unwrap();
        let extra = builder.into_inner().unwrap();
        let mut new = tar[..end].to_vec();
        new.extend_from_slice(&extra);
        *tar = new;
    });
    let report = verify(&out.join(&name));
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("`zz-extra.txt`: not listed")),
        "{:?}",
        report.problems
    );
}

#[test]
fn versions_follow_the_diff() {
    let dir = tempfile::tempdir().unwrap();
    let entries = base_entries();
    let data = make_kb(dir.path(), &entries);
    let v1 = build(&data, &dir.path().join("v1"));
    let bundle_with = |name: &str, previous: &Path| {
        let kb = errata_load::KnowledgeBase::load(&data).unwrap();
        let opts = BundleOptions {
            previous: Some(previous.to_path_buf()),
            ..options(&dir.path().join(name))
        };
        errata_bundle::write_bundle_report(&kb, &opts).unwrap()
    };

    // Nothing changed: same version.
    let same = bundle_with("same", &v1);
    assert_eq!(same.manifest.version, "1.0.0");
    assert_eq!(same.diff.as_ref().unwrap().bump, Bump::None);

    // A content change: patch, naming the field.
    let mut changed = entries[1].clone();
    changed["root_cause"] = json!("A different explanation.");
    write_entry(&data, &changed);
    let patch = bundle_with("patch", &v1);
    assert_eq!(patch.manifest.version, "1.0.1");
    let diff = patch.diff.unwrap();
    assert_eq!(diff.changed.len(), 1);
    assert_eq!(
        (diff.changed[0].id.as_str(), diff.changed[0].fields.clone()),
        ("cuda/oom", vec!["root_cause".to_string()])
    );

    // An added entry: minor.
    write_entry(
        &data,
        &entry(
            "cuda/new-one",
            "CUDA error: misaligned address",
            "misaligned address",
            &[],
        ),
    );
    let minor = bundle_with("minor", &patch.path);
    assert_eq!(minor.manifest.version, "1.1.0");
    assert_eq!(minor.diff.as_ref().unwrap().added, ["cuda/new-one"]);
    let changelog = std::fs::read_to_string(minor.path.with_file_name("CHANGELOG.md")).unwrap();
    assert!(
        changelog.contains("## 1.1.0")
            && changelog.contains("## 1.0.1")
            && changelog.contains("## 1.0.0"),
        "{changelog}"
    );
    assert!(changelog.find("## 1.1.0") < changelog.find("## 1.0.1"));

    // A removed entry: major.
    std::fs::remove_file(data.join("signatures/cuda/generic-error.json")).unwrap();
    let major = bundle_with("major", &minor.path);
    assert_eq!(major.manifest.version, "2.0.0");
    assert_eq!(major.diff.as_ref().unwrap().removed, ["cuda/generic-error"]);

    // `errata bundle diff` on two files agrees.
    let diff = Diff::between(
        &Snapshot::open(&v1).unwrap(),
        &Snapshot::open(&major.path).unwrap(),
    );
    assert_eq!(diff.bump, Bump::Major);
    assert_eq!(diff.added, ["cuda/new-one"]);
    assert_eq!(diff.removed, ["cuda/generic-error"]);
    assert!(
        diff.render().contains("~ cuda/oom (root_cause)"),
        "{}",
        diff.render()
    );
}

#[test]
fn schema_changes_bump_by_their_own_version() {
    let snap = |schema: &str| Snapshot {
        schema_version: schema.into(),
        format_version: 1,
        version: Some(Version {
            major: 3,
            minor: 1,
            patch: 4,
        }),
        ..Snapshot::default()
    };
    let old = snap("1.2.0");
    assert_eq!(Diff::between(&old, &snap("2.0.0")).bump, Bump::Major);
    assert_eq!(Diff::between(&old, &snap("1.3.0")).bump, Bump::Minor);
    assert_eq!(Diff::between(&old, &snap("1.2.1")).bump, Bump::Patch);
    assert_eq!(Diff::between(&old, &snap("1.2.0")).bump, Bump::None);
    assert_eq!(
        Diff::between(&old, &snap("2.0.0"))
            .next_version()
            .to_string(),
        "4.0.0"
    );
}

#[test]
fn sqlite_full_text_search_in_english_and_chinese() {
    let dir = tempfile::tempdir().unwrap();
    let data = make_kb(dir.path(), &base_entries());
    let path = build(&data, &dir.path().join("out"));
    let db_bytes = members(&path)
        .into_iter()
        .find(|(n, _)| n == "errata.sqlite")
        .unwrap()
        .1;
    let db_path = dir.path().join("errata.sqlite");
    std::fs::write(&db_path, db_bytes).unwrap();
    let db = rusqlite::Connection::open(&db_path).unwrap();
    let search = |table: &str, query: &str| -> Vec<String> {
        let sql = format!(
            "SELECT e.id FROM {table} JOIN entries e ON e.rowid = {table}.rowid WHERE {table} MATCH ?1 ORDER BY e.id"
        );
        let mut stmt = db.prepare(&sql).unwrap();
        stmt.query_map([query], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(
        search("search_en", "illegal memory"),
        ["cuda/illegal-address"]
    );
    assert_eq!(search("search_en", "watchdog"), ["nccl/timeout"]);
    assert_eq!(search("search_en", "sanitizer").len(), 4);
    // Chinese: a two-character word and a longer phrase, segmented as the index is.
    assert_eq!(
        search("search_zh", &errata_bundle::sqlite::zh_query("显存")).len(),
        4
    );
    assert_eq!(
        search(
            "search_zh",
            &errata_bundle::sqlite::zh_query("访问了不属于")
        )
        .len(),
        4
    );
    assert_eq!(
        search("search_zh", &errata_bundle::sqlite::zh_query("非法内存")),
        ["cuda/illegal-address"]
    );
    assert!(search("search_zh", &errata_bundle::sqlite::zh_query("网络")).is_empty());
    let n: i64 = db
        .query_row("SELECT count(*) FROM workarounds", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 8);
}
