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
        "operator_action": "fix-code",
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
/// The bundle of the base entries, built under `dir`, and its members in archive order.
fn base_bundle_and_members(dir: &Path) -> (PathBuf, Vec<(String, Vec<u8>)>) {
    let data = make_kb(dir, &base_entries());
    let path = build(&data, &dir.join("good"));
    let all = members(&path);
    (path, all)
}

/// Where the member `name` is among `members` (it must be there).
fn position(members: &[(String, Vec<u8>)], name: &str) -> usize {
    members
        .iter()
        .position(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no member {name}"))
}

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
    let got: Vec<Value> = bundle.entries().iter().map(|e| e.raw()).collect();
    assert_eq!(got, expected);

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

/// `entries.json` is the array of `entries.jsonl`'s lines, one per line, which is the
/// layout the consumer's reader splits by newline instead of parsing the array twice.
#[test]
fn entries_json_holds_one_entry_per_line() {
    let dir = tempfile::tempdir().unwrap();
    let data = make_kb(dir.path(), &base_entries());
    let path = build(&data, &dir.path().join("dist/bundle"));
    let all = members(&path);
    let member = |name: &str| {
        let (_, bytes) = all.iter().find(|(n, _)| n == name).unwrap();
        String::from_utf8(bytes.clone()).unwrap()
    };
    let (array, lines) = (member("entries.json"), member("entries.jsonl"));
    let lines: Vec<&str> = lines.lines().collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(array, format!("[\n{}\n]\n", lines.join(",\n")));
    let parsed: Vec<Value> = serde_json::from_str(&array).unwrap();
    let each: Vec<Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(parsed, each);
}

#[test]
fn two_builds_are_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let data = make_kb(dir.path(), &base_entries());
    let a = build(&data, &dir.path().join("a"));
    // Whatever the number of threads.
    let one_thread = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    let b = one_thread.install(|| build(&data, &dir.path().join("b")));
    assert_eq!(std::fs::read(&a).unwrap(), std::fs::read(&b).unwrap());
    assert_eq!(
        std::fs::read(a.with_file_name("SHA256SUMS")).unwrap(),
        std::fs::read(b.with_file_name("SHA256SUMS")).unwrap()
    );
}

/// Rewrites `path` with `edit` applied to the uncompressed tar, and fixes SHA256SUMS so
/// that only the member-level check can catch the change.
/// A copy of the bundle at `path`, in `out`, with the first byte after `marker` in
/// `member` changed (the same size; the manifest's hashes no longer fit): its path.
fn flip_in_member(path: &Path, out: &Path, member: &str, marker: &[u8]) -> PathBuf {
    let mut tar_bytes = Vec::new();
    flate2::read::GzDecoder::new(std::fs::File::open(path).unwrap())
        .read_to_end(&mut tar_bytes)
        .unwrap();
    let start = tar::Archive::new(tar_bytes.as_slice())
        .entries()
        .unwrap()
        .map(|e| e.unwrap())
        .find(|e| e.path().unwrap().to_string_lossy() == member)
        .map(|e| e.raw_file_position() as usize)
        .unwrap();
    let at = start
        + tar_bytes[start..]
            .windows(marker.len())
            .position(|w| w == marker)
            .unwrap()
        + marker.len();
    rewrite_tar(path, out, |tar| {
        tar[at] = if tar[at] == b'q' { b'z' } else { b'q' };
    });
    out.join(path.file_name().unwrap())
}

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

fn member(path: &Path, name: &str) -> Vec<u8> {
    members(path)
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("no member {name}"))
        .1
}

fn open_db(dir: &Path, bundle: &Path) -> rusqlite::Connection {
    let db_path = dir.join("errata.sqlite");
    std::fs::write(&db_path, member(bundle, "errata.sqlite")).unwrap();
    rusqlite::Connection::open(&db_path).unwrap()
}

#[test]
fn schemas_come_from_the_binary_or_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let data = make_kb(dir.path(), &base_entries());
    // The default: the schemas built into the program, whatever the working directory.
    let embedded = build(&data, &dir.path().join("embedded"));
    let kb = errata_load::KnowledgeBase::load(&data).unwrap();
    let from_dir = write_bundle(
        &kb,
        &BundleOptions {
            schema_dir: schema_dir(),
            ..options(&dir.path().join("dir"))
        },
    )
    .unwrap();
    for entry in std::fs::read_dir(schema_dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = format!("schema/{}", path.file_name().unwrap().to_string_lossy());
        let on_disk = std::fs::read(&path).unwrap();
        assert_eq!(member(&embedded, &name), on_disk, "{name}");
        assert_eq!(member(&from_dir, &name), on_disk, "{name}");
    }
    assert_eq!(
        std::fs::read(&embedded).unwrap(),
        std::fs::read(&from_dir).unwrap()
    );
    // A directory without an entry schema is an error, not a bundle without a version.
    let empty = dir.path().join("no-schemas");
    std::fs::create_dir_all(&empty).unwrap();
    let err = write_bundle(
        &kb,
        &BundleOptions {
            schema_dir: empty,
            ..options(&dir.path().join("none"))
        },
    )
    .unwrap_err();
    assert!(err.to_string().contains("entry.schema.json"), "{err}");
}

#[test]
fn articles_are_searchable_in_english_and_chinese() {
    let dir = tempfile::tempdir().unwrap();
    let data = make_kb(dir.path(), &base_entries());
    let path = build(&data, &dir.path().join("out"));
    let db = open_db(dir.path(), &path);
    let search = |table: &str, query: &str| -> Vec<(String, String)> {
        let sql = format!(
            "SELECT a.path, a.lang FROM {table} s JOIN articles a ON a.path = s.path WHERE {table} MATCH ?1 ORDER BY a.path"
        );
        let mut stmt = db.prepare(&sql).unwrap();
        stmt.query_map([query], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    let en = (
        "articles/cuda/debugging-illegal-access.md".to_string(),
        "en".to_string(),
    );
    let zh = (
        "articles/cuda/debugging-illegal-access.zh.md".to_string(),
        "zh".to_string(),
    );
    // English: a title word (stemmed: "debug" finds "Debugging") and a body word.
    assert_eq!(
        search("search_articles_en", "debug"),
        std::slice::from_ref(&en)
    );
    assert_eq!(
        search("search_articles_en", "sanitizer"),
        std::slice::from_ref(&en)
    );
    assert_eq!(search("search_articles_en", "title:illegal"), [en]);
    assert!(search("search_articles_en", "nccl").is_empty());
    // Chinese: a title word and a body word, segmented as the index is.
    let zh_query = errata_bundle::sqlite::zh_query;
    assert_eq!(
        search("search_articles_zh", &zh_query("调试")),
        std::slice::from_ref(&zh)
    );
    assert_eq!(
        search("search_articles_zh", &zh_query("运行")),
        std::slice::from_ref(&zh)
    );
    assert_eq!(
        search("search_articles_zh", &zh_query("非法内存访问")),
        [zh]
    );
    assert!(search("search_articles_zh", &zh_query("网络")).is_empty());
    // Each language in its own index.
    assert!(search("search_articles_en", &zh_query("调试")).is_empty());
    assert!(search("search_articles_zh", "debug").is_empty());
}

#[test]
fn the_database_is_compact_and_consistent() {
    let dir = tempfile::tempdir().unwrap();
    let data = make_kb(dir.path(), &base_entries());
    let path = build(&data, &dir.path().join("out"));
    let db = open_db(dir.path(), &path);
    let one = |sql: &str| -> String {
        db.query_row(sql, [], |r| r.get::<_, rusqlite::types::Value>(0))
            .map(|v| format!("{v:?}"))
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    };
    assert_eq!(one("PRAGMA integrity_check"), "Text(\"ok\")");
    assert_eq!(one("PRAGMA freelist_count"), "Integer(0)");
    for table in [
        "search_en",
        "search_zh",
        "search_articles_en",
        "search_articles_zh",
    ] {
        db.execute(
            &format!("INSERT INTO {table} ({table}) VALUES ('integrity-check')"),
            [],
        )
        .unwrap_or_else(|e| panic!("{table}: {e}"));
        // Build-time settings are not left behind for consumers that add rows.
        assert_eq!(
            one(&format!(
                "SELECT count(*) FROM {table}_config WHERE k = 'hashsize'"
            )),
            "Integer(0)"
        );
    }
    // Entry ids are unique and indexed.
    assert!(
        db.execute(
            "INSERT INTO entries (id, domain, category, signature, signature_zh, regex, root_cause, root_cause_zh, json) SELECT id, domain, category, signature, signature_zh, regex, root_cause, root_cause_zh, json FROM entries LIMIT 1",
            [],
        )
        .is_err()
    );
    let plan: String = db
        .query_row(
            "EXPLAIN QUERY PLAN SELECT rowid FROM entries WHERE id = 'cuda/oom'",
            [],
            |r| r.get(3),
        )
        .unwrap();
    assert!(plan.contains("INDEX"), "{plan}");
}

#[test]
fn sha256sums_lists_exactly_the_bundle_of_this_run() {
    let dir = tempfile::tempdir().unwrap();
    let data = make_kb(dir.path(), &base_entries());
    let fresh = build(&data, &dir.path().join("fresh"));
    let fresh_sums = std::fs::read_to_string(fresh.with_file_name("SHA256SUMS")).unwrap();
    assert_eq!(fresh_sums.lines().count(), 1, "{fresh_sums}");
    assert!(
        fresh_sums.ends_with("  errata-1.0.0.tar.gz\n"),
        "{fresh_sums}"
    );

    // A directory that already holds an older bundle, a SHA256SUMS naming it and a file
    // since deleted, and a stale line for this version.
    let out = dir.path().join("reused");
    std::fs::create_dir_all(&out).unwrap();
    let old = out.join("errata-0.9.0.tar.gz");
    std::fs::copy(&fresh, &old).unwrap();
    let h = "ab".repeat(32);
    std::fs::write(
        out.join("SHA256SUMS"),
        format!("{h}  errata-0.9.0.tar.gz\n{h}  errata-0.1.0.tar.gz\n{h}  errata-1.0.0.tar.gz\n"),
    )
    .unwrap();
    let again = build(&data, &out);
    assert_eq!(
        std::fs::read_to_string(out.join("SHA256SUMS")).unwrap(),
        fresh_sums,
        "SHA256SUMS depends only on what this run wrote"
    );
    assert!(verify(&again).is_ok(), "{:?}", verify(&again).problems);
    // The older file is left in place, but nothing vouches for it any more.
    assert!(old.is_file());
    let report = verify(&old);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("SHA256SUMS: has no line for errata-0.9.0.tar.gz")),
        "{:?}",
        report.problems
    );
}

/// Runs git in `dir`, failing the test when it fails.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=errata test",
            "-c",
            "user.email=test@errata.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .output()
        .unwrap_or_else(|e| panic!("git {args:?}: {e}"));
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[test]
fn a_dirty_data_directory_is_recorded_as_such() {
    if std::env::var_os("ERRATA_SOURCE_COMMIT").is_some() {
        eprintln!("skipped: ERRATA_SOURCE_COMMIT is set, so git is not asked");
        return;
    }
    if std::process::Command::new("git")
        .arg("--version")
        .output()
        .map_or(true, |o| !o.status.success())
    {
        eprintln!("skipped: no git");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let data = make_kb(&repo, &base_entries());
    std::fs::write(repo.join("README.md"), "outside the data\n").unwrap();
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "data"]);
    let head = git(&repo, &["rev-parse", "HEAD"]);
    let commit = |name: &str| {
        let kb = errata_load::KnowledgeBase::load(&data).unwrap();
        let opts = BundleOptions {
            source_commit: None,
            ..options(&dir.path().join(name))
        };
        let written = errata_bundle::write_bundle_report(&kb, &opts).unwrap();
        let report = verify(&written.path);
        assert!(report.is_ok(), "{name}: {:?}", report.problems);
        written.manifest.source_commit
    };
    assert_eq!(commit("clean"), Some(head.clone()));

    // A change outside the data directory does not change what the bundle holds.
    std::fs::write(repo.join("README.md"), "edited\n").unwrap();
    assert_eq!(commit("outside"), Some(head.clone()));

    // An edited entry, an untracked one, a deleted article: dirty.
    let dirty = Some(format!("{head}-dirty"));
    let oom = data.join("signatures/cuda/oom.json");
    let original = std::fs::read(&oom).unwrap();
    std::fs::write(
        &oom,
        String::from_utf8_lossy(&original).replace("2.00 GiB", "4.00 GiB"),
    )
    .unwrap();
    assert_eq!(commit("edited"), dirty);
    std::fs::write(&oom, &original).unwrap();
    assert_eq!(commit("restored"), Some(head.clone()));
    write_entry(
        &data,
        &entry("cuda/untracked", "CUDA error: untracked", "untracked", &[]),
    );
    assert_eq!(commit("untracked"), dirty);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "more"]);
    std::fs::remove_file(data.join("articles/cuda/debugging-illegal-access.zh.md")).unwrap();
    let head2 = git(&repo, &["rev-parse", "HEAD"]);
    assert_eq!(commit("deleted"), Some(format!("{head2}-dirty")));

    // Outside a git repository: unknown.
    let loose = make_kb(&dir.path().join("loose"), &base_entries());
    let kb = errata_load::KnowledgeBase::load(&loose).unwrap();
    let opts = BundleOptions {
        source_commit: None,
        ..options(&dir.path().join("loose-out"))
    };
    let written = errata_bundle::write_bundle_report(&kb, &opts).unwrap();
    let in_a_repo = std::process::Command::new("git")
        .args(["rev-parse", "--is-inside-work-tree"])
        .current_dir(&loose)
        .output()
        .is_ok_and(|o| o.status.success());
    if !in_a_repo {
        assert_eq!(written.manifest.source_commit, None);
    }
}

#[test]
fn given_commits_may_say_dirty() {
    let dir = tempfile::tempdir().unwrap();
    let data = make_kb(dir.path(), &base_entries());
    let kb = errata_load::KnowledgeBase::load(&data).unwrap();
    for (given, recorded) in [
        ("0123456789abcdef", Some("0123456789abcdef")),
        ("0123456789abcdef-dirty", Some("0123456789abcdef-dirty")),
        ("0123456789ABCDEF", None),
        ("not-a-commit", None),
        ("0123456789abcdef-modified", None),
    ] {
        let opts = BundleOptions {
            source_commit: Some(given.into()),
            ..options(&dir.path().join(given))
        };
        let written = errata_bundle::write_bundle_report(&kb, &opts).unwrap();
        assert_eq!(
            written.manifest.source_commit.as_deref(),
            recorded,
            "{given}"
        );
        assert!(verify(&written.path).is_ok(), "{given}");
    }
}

/// The bundle carries each entry regex's analysis (`entries.index.json`, before
/// `entries.json`); opening it for matching uses them instead of parsing the regexes,
/// and answers as an index that analysed every regex itself does; `verify` analyses the
/// regexes again and names the member when a stored analysis is not what its regex says.
#[test]
fn the_matcher_index_is_carried_used_and_verified() {
    use errata_consumer::matcher_index::{ENTRIES_INDEX, read};
    let dir = tempfile::tempdir().unwrap();
    let (path, all) = base_bundle_and_members(dir.path());
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    let at = |name: &str| position(&all, name);
    assert!(at(ENTRIES_INDEX) < at("entries.json"), "{names:?}");
    let stored = read(&all[at(ENTRIES_INDEX)].1).expect("a readable index");

    let bundle = Bundle::open_for_matching(&path).unwrap();
    let with_literals = bundle
        .entries()
        .iter()
        .filter(|e| errata_matcher::Analysis::of(&e.regex).is_ok_and(|a| !a.sets.is_empty()))
        .count();
    assert!(with_literals > 0);
    assert_eq!(stored.len(), with_literals);
    assert_eq!(
        bundle.index().matcher().stats().known_analyses,
        with_literals
    );
    let fresh = errata_consumer::Index::new(bundle.entries().to_vec()).unwrap();
    assert_eq!(fresh.matcher().stats().known_analyses, 0);
    for e in bundle.entries() {
        for text in std::iter::once(&e.signature).chain(&e.aliases) {
            let ids = |found: Vec<errata_consumer::Found<'_>>| {
                found
                    .into_iter()
                    .map(|f| (f.entry.id.clone(), f.span))
                    .collect::<Vec<_>>()
            };
            assert_eq!(
                ids(bundle.match_text(text)),
                ids(fresh.match_text(text)),
                "{text}"
            );
        }
    }

    // A literal of the stored analysis changed (same size): the hashes catch it, and
    // so does the fresh analysis.
    let bad = flip_in_member(
        &path,
        &dir.path().join("bad"),
        ENTRIES_INDEX,
        b"\"sets\":[[\"",
    );
    let report = verify(&bad);
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains(&format!("`{ENTRIES_INDEX}`"))
                && p.contains("is not what the regex says")),
        "{:?}",
        report.problems
    );
}

/// Opening for matching types the entries from `entries.head.json` and gives each its
/// text from `entries.json`: the same entries as a full read. A head changed in the
/// archive is named by `verify` (its hash, and the entry it no longer matches).
#[test]
fn entries_open_from_their_heads_and_the_heads_verify() {
    use errata_consumer::entries_head::ENTRIES_HEAD;
    let dir = tempfile::tempdir().unwrap();
    let (path, all) = base_bundle_and_members(dir.path());
    let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
    let at = |name: &str| position(&all, name);
    let index = errata_consumer::matcher_index::ENTRIES_INDEX;
    assert!(at(ENTRIES_HEAD) < at(index), "{names:?}");
    assert!(at(ENTRIES_HEAD) < at("entries.json"), "{names:?}");
    let head = String::from_utf8(all[at(ENTRIES_HEAD)].1.clone()).unwrap();
    assert!(!head.contains("root_cause"), "{head}");
    assert_eq!(head.lines().count(), base_entries().len() + 2, "{head}");

    let full = Bundle::open(&path).unwrap();
    let matching = Bundle::open_for_matching(&path).unwrap();
    assert_eq!(full.entries().len(), matching.entries().len());
    for (a, b) in full.entries().iter().zip(matching.entries()) {
        let fields = |e: &errata_consumer::Entry| {
            format!(
                "{} {} {} {} {:?} {} {:?} {:?} {:?} {:?} {:?}",
                e.id,
                e.signature,
                e.signature_zh,
                e.regex,
                e.aliases,
                e.verification_tier,
                e.error_code,
                e.operator_action,
                e.leads_to,
                e.preceded_by,
                e.affects
            )
        };
        assert_eq!(fields(a), fields(b));
        assert_eq!(a.raw_json(), b.raw_json(), "{}", a.id);
        assert_eq!(a.texts(), b.texts(), "{}", a.id);
        assert!(!b.texts().root_cause.is_empty(), "{}", b.id);
    }
    assert!(verify(&path).is_ok());

    // One byte of a head's signature changed (same size).
    let bad = flip_in_member(
        &path,
        &dir.path().join("bad"),
        ENTRIES_HEAD,
        b"\"signature\":\"",
    );
    let report = verify(&bad);
    let about_head: Vec<&String> = report
        .problems
        .iter()
        .filter(|p| p.contains(&format!("`{ENTRIES_HEAD}`")))
        .collect();
    assert!(
        about_head.iter().any(|p| p.contains("sha256"))
            && about_head
                .iter()
                .any(|p| p.contains("entry #0") && p.contains("differs from its entry")),
        "{:?}",
        report.problems
    );
    let err = Bundle::open_for_matching(&bad).unwrap_err().to_string();
    assert!(err.contains(ENTRIES_HEAD), "{err}");
}
