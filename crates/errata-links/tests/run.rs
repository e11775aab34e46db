//! A whole run on a real knowledge base on disk: collection, dedupe, the cache, offline,
//! and diagnostics at the URL's line:column.

mod support;

use std::path::Path;
use std::time::{Duration, SystemTime};

use errata_links::{CheckOptions, Settings, collect, run};
use errata_load::KnowledgeBase;
use errata_model::{Anchor, Severity};
use support::{Reply, Server, redirect};

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// An entry and an article (plus translation) citing `base` URLs in every supported way.
fn knowledge_base(base: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let entry = format!(
        r#"{{
  "id": "cuda/oom",
  "official_doc_url": "{base}/docs#oom",
  "dead_ends": [
    {{ "action": "x", "sources": ["{base}/gone", "not a url"] }}
  ],
  "workarounds": [
    {{ "action": "a", "sources": [] }},
    {{ "action": "b", "sources": ["mailto:x@example.com", "{base}/old"] }}
  ]
}}
"#
    );
    write(dir.path(), "signatures/cuda/oom.json", &entry);
    let article = format!(
        "---\ntitle: OOM\nid: cuda/oom\ndate: \"2025-01-01\"\n---\n# OOM\n\nSee [the docs]({base}/docs) and\n<{base}/gone>, ![img]({base}/docs#fig), [local](other.md).\n"
    );
    write(dir.path(), "articles/cuda/oom.md", &article);
    write(
        dir.path(),
        "articles/cuda/oom.zh.md",
        &format!(
            "---\ntitle: 内存\nid: cuda/oom\ndate: \"2025-01-01\"\n---\n见[文档]({base}/old)。\n"
        ),
    );
    dir
}

fn server() -> Server {
    Server::start(|_, path, _| match path {
        "/docs" => Reply::Status(200, vec![]),
        "/old" => redirect(301, "/new"),
        "/new" => Reply::Status(200, vec![]),
        _ => Reply::Status(410, vec![]),
    })
}

fn settings(cache: &Path) -> Settings {
    Settings {
        check: CheckOptions {
            timeout: Duration::from_secs(2),
            retries: 0,
            allow_hosts: vec!["127.0.0.1".into()],
            ..CheckOptions::default()
        },
        cache: cache.to_path_buf(),
        ..Settings::new()
    }
}

#[test]
fn collects_every_url_with_its_place() {
    let dir = knowledge_base("https://x.example");
    let kb = KnowledgeBase::load(dir.path()).unwrap();
    let sites = collect(&kb);
    let got: Vec<_> = sites
        .iter()
        .map(|s| {
            let file = s
                .file
                .strip_prefix(dir.path())
                .unwrap()
                .to_str()
                .unwrap()
                .to_string();
            let place = match &s.anchor {
                Anchor::Value(p) => p.clone(),
                Anchor::Bytes(r) => kb.source(&s.file).unwrap().text[r.clone()].to_string(),
                other => format!("{other:?}"),
            };
            (file, s.url.as_str(), place)
        })
        .collect();
    let x = "https://x.example";
    let expected = [
        (
            "signatures/cuda/oom.json".to_string(),
            format!("{x}/docs#oom"),
            "/official_doc_url".to_string(),
        ),
        (
            "signatures/cuda/oom.json".into(),
            format!("{x}/gone"),
            "/dead_ends/0/sources/0".into(),
        ),
        (
            "signatures/cuda/oom.json".into(),
            format!("{x}/old"),
            "/workarounds/1/sources/1".into(),
        ),
        // In articles the anchor is the URL's own bytes.
        (
            "articles/cuda/oom.md".into(),
            format!("{x}/docs"),
            format!("{x}/docs"),
        ),
        (
            "articles/cuda/oom.md".into(),
            format!("{x}/gone"),
            format!("{x}/gone"),
        ),
        (
            "articles/cuda/oom.md".into(),
            format!("{x}/docs#fig"),
            format!("{x}/docs#fig"),
        ),
        (
            "articles/cuda/oom.zh.md".into(),
            format!("{x}/old"),
            format!("{x}/old"),
        ),
    ];
    let expected: Vec<_> = expected
        .iter()
        .map(|(f, u, p)| (f.clone(), u.as_str(), p.clone()))
        .collect();
    let mut got = got;
    got.sort();
    let mut expected = expected;
    expected.sort();
    assert_eq!(got, expected);
    assert_eq!(
        sites
            .iter()
            .filter(|s| s.key == format!("{x}/docs"))
            .count(),
        3,
        "fragments share a key"
    );
}

#[test]
fn one_request_per_url_and_every_place_reported_at_its_line() {
    let server = server();
    let dir = knowledge_base(&format!("http://127.0.0.1:{}", server.port));
    let kb = KnowledgeBase::load(dir.path()).unwrap();
    let report = run(&kb, &settings(&dir.path().join("cache/links.json"))).unwrap();

    // /docs is written three times (two with fragments), /gone twice, /old twice.
    for path in ["/docs", "/gone", "/old"] {
        let heads: Vec<_> = server
            .requests(path)
            .into_iter()
            .filter(|r| r.starts_with("HEAD"))
            .collect();
        assert_eq!(heads.len(), 1, "{path}: {:?}", server.requests(path));
    }
    assert_eq!(
        (report.sites, report.urls, report.checked, report.cached),
        (7, 3, 3, 0)
    );

    let got: Vec<_> = report
        .diagnostics
        .iter()
        .map(|d| {
            let loc = d.location.unwrap();
            (
                d.file.file_name().unwrap().to_str().unwrap(),
                loc.line,
                loc.column,
                d.rule,
                d.severity,
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("oom.md", 9, 2, "link-dead", Severity::Error),
            ("oom.zh.md", 6, 7, "link-redirect", Severity::Warning),
            ("oom.json", 5, 34, "link-dead", Severity::Error),
            ("oom.json", 9, 58, "link-redirect", Severity::Warning),
        ]
    );
    // Each points at the URL itself (in an entry, at its JSON string).
    for d in &report.diagnostics {
        let text = &kb.source(&d.file).unwrap().text;
        let at = text[d.location.unwrap().start..].trim_start_matches('"');
        assert!(
            at.starts_with(&format!("http://127.0.0.1:{}/", server.port)),
            "{d:?}"
        );
    }
    let moved = &report.diagnostics[3];
    assert!(
        moved
            .message
            .ends_with(&format!("http://127.0.0.1:{}/new", server.port)),
        "{}",
        moved.message
    );
}

#[test]
fn the_cache_spares_fresh_results_and_rechecks_dead_and_expired_ones() {
    let server = server();
    let dir = knowledge_base(&format!("http://127.0.0.1:{}", server.port));
    let kb = KnowledgeBase::load(dir.path()).unwrap();
    let cache = dir.path().join("links.json");
    let day0 = SystemTime::now();
    run(
        &kb,
        &Settings {
            now: day0,
            ..settings(&cache)
        },
    )
    .unwrap();
    let first = std::fs::read_to_string(&cache).unwrap();
    let requests = server.seen().len();

    // A day later: /docs and /old are fresh; /gone is dead, so it is asked again.
    let report = run(
        &kb,
        &Settings {
            now: day0 + Duration::from_secs(86_400),
            ..settings(&cache)
        },
    )
    .unwrap();
    assert_eq!((report.checked, report.cached), (1, 2));
    let again: Vec<_> = server.seen()[requests..]
        .iter()
        .map(|s| s.path.clone())
        .collect();
    assert!(again.iter().all(|p| p == "/gone"), "{again:?}");
    assert_eq!(
        report.diagnostics.len(),
        4,
        "cached results still produce diagnostics"
    );

    // Eight days later everything is due.
    let report = run(
        &kb,
        &Settings {
            now: day0 + Duration::from_secs(8 * 86_400),
            ..settings(&cache)
        },
    )
    .unwrap();
    assert_eq!((report.checked, report.cached), (3, 0));

    // The file is sorted JSON, stamped with the time of the check.
    let value: serde_json::Value = serde_json::from_str(&first).unwrap();
    let keys: Vec<_> = value["links"]
        .as_object()
        .unwrap()
        .keys()
        .cloned()
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    assert_eq!(keys.len(), 3);
}

#[test]
fn offline_reports_from_the_cache_alone() {
    let server = server();
    let dir = knowledge_base(&format!("http://127.0.0.1:{}", server.port));
    let kb = KnowledgeBase::load(dir.path()).unwrap();
    let cache = dir.path().join("links.json");

    // Nothing cached: no request, no diagnostics, every URL unknown, no cache written.
    let offline = |now| Settings {
        offline: true,
        now,
        ..settings(&cache)
    };
    let report = run(&kb, &offline(SystemTime::now())).unwrap();
    assert!(server.seen().is_empty());
    assert!(report.diagnostics.is_empty());
    assert_eq!(report.unknown.len(), 3);
    assert!(!cache.exists());

    // Once checked, offline answers from the cache whatever its age.
    run(&kb, &settings(&cache)).unwrap();
    let requests = server.seen().len();
    let report = run(
        &kb,
        &offline(SystemTime::now() + Duration::from_secs(365 * 86_400)),
    )
    .unwrap();
    assert_eq!(server.seen().len(), requests);
    assert_eq!(report.diagnostics.len(), 4);
    assert!(report.unknown.is_empty());

    // A corrupt cache is an error offline (there is nothing else to report from) and a
    // note online (the cache is rebuilt).
    std::fs::write(&cache, "garbage").unwrap();
    assert!(run(&kb, &offline(SystemTime::now())).is_err());
    let report = run(&kb, &settings(&cache)).unwrap();
    assert!(
        report.notes[0].contains("not valid JSON"),
        "{:?}",
        report.notes
    );
    assert!(std::fs::read_to_string(&cache).unwrap().starts_with('{'));
}
