//! Incremental rebuilds ([`SiteState::rebuild`]) against full builds: on a generated
//! knowledge base of a few hundred entries, every kind of change (signature, Chinese
//! title, tags, transition graph, dates, root cause, a new entry in a new domain, a
//! deleted entry, broken JSON, articles and their translations, run records) leaves the
//! output directory byte-identical to a full build of the changed data, and a small
//! change re-renders only a few outputs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use errata_load::KnowledgeBase;
use errata_site::{SiteOptions, SiteState, render};
use serde_json::{Value, json};

const DOMAINS: &[&str] = &["cuda", "pytorch", "nccl", "triton"];
const TAGS: &[&str] = &[
    "memory",
    "launch",
    "driver",
    "python",
    "distributed",
    "compiler",
    "显存",
];

fn entry_json(i: usize, n: usize) -> Value {
    let domain = DOMAINS[i % DOMAINS.len()];
    let id = format!("{domain}/e-{i:04}");
    let other = |k: usize| {
        let j = (i + k) % n;
        format!("{}/e-{j:04}", DOMAINS[j % DOMAINS.len()])
    };
    let mut tags = vec![TAGS[i % TAGS.len()].to_string()];
    if i.is_multiple_of(3) {
        tags.push(TAGS[(i / 3) % TAGS.len()].to_string());
    }
    if i % 50 == 7 {
        tags.push(format!("rare-{i}"));
    }
    json!({
        "id": id,
        "signature": format!("RuntimeError: {domain} failure number {i} (code E{i:04})"),
        "signature_zh": if i.is_multiple_of(5) { String::new() } else { format!("运行错误：{domain} 第 {i} 号故障") },
        "regex": format!("failure number {i}\\b"),
        "domain": domain,
        "category": "runtime_error",
        "root_cause": format!("Cause {i}: a `kernel` touched memory it did not own."),
        "root_cause_zh": if i.is_multiple_of(7) { String::new() } else { format!("原因 {i}：内核访问了不属于它的内存。") },
        "workarounds": [{"action": format!("Fix {i}"), "success_rate": 0.5, "how": "Do it.", "condition": "", "sources": ["https://example.org/x"]}],
        "workarounds_zh": [format!("修复 {i}")],
        "dead_ends": [{"action": "Retry", "why_fails": "It fails again.", "fail_rate": 0.9, "condition": "", "sources": []}],
        "transition_graph": {
            "leads_to": if i.is_multiple_of(4) { vec![other(1)] } else { vec![] },
            "preceded_by": if i % 4 == 1 { vec![other(n - 1)] } else { vec![] },
            "frequently_confused_with": if i.is_multiple_of(6) { vec![other(17)] } else { vec![] },
        },
        "error_code": if i.is_multiple_of(9) { Some("cudaErrorMemoryAllocation") } else { None },
        "first_seen": "2024-01-01",
        "last_confirmed": "2025-06-01",
        "last_updated": format!("2025-{:02}-{:02}", 1 + i % 12, 1 + i % 28),
        "tags": tags,
        "aliases": [],
    })
}

fn article_text(i: usize, n_entries: usize, title: &str) -> String {
    let domain = DOMAINS[i % DOMAINS.len()];
    let sigs: Vec<String> = (0..3)
        .map(|k| {
            let j = (i * 7 + k * 13) % n_entries;
            format!("{}/e-{j:04}", DOMAINS[j % DOMAINS.len()])
        })
        .collect();
    format!(
        "---\ntitle: \"{title}\"\nid: {domain}/a-{i:03}\ndate: 2025-{:02}-10\nsignatures: [{}]\ntags: [{}]\n---\n\n# {title}\n\nWhy failure {i} happens, in one paragraph.\n\n## Fix\n\n```python\nimport torch\nprint({i})\n```\n\nSee [the first entry](../../signatures/{}.json).\n",
        1 + i % 12,
        sigs.join(", "),
        TAGS[(i + 2) % TAGS.len()],
        sigs[0],
    )
}

fn zh_text(i: usize, en: &str, current: bool) -> String {
    let domain = DOMAINS[i % DOMAINS.len()];
    let hash = if current {
        errata_load::sha256_hex(en.as_bytes())
    } else {
        "0".repeat(64)
    };
    format!(
        "---\ntitle: \"文章 {i}\"\nid: {domain}/a-{i:03}\ndate: 2025-01-10\ntranslation_of: {domain}/a-{i:03}\nsource_hash: {hash}\n---\n\n# 文章 {i}\n\n中文正文。\n"
    )
}

struct Corpus {
    dir: tempfile::TempDir,
    n: usize,
}

impl Corpus {
    fn new(n: usize, articles: usize) -> Corpus {
        let dir = tempfile::tempdir().unwrap();
        let c = Corpus { dir, n };
        for i in 0..n {
            c.write_entry(i, &entry_json(i, n));
        }
        for i in 0..articles {
            let en = article_text(i, n, &format!("Article {i}"));
            c.write(&c.article_rel(i, false), &en);
            if i % 3 != 2 {
                c.write(
                    &c.article_rel(i, true),
                    &zh_text(i, &en, i.is_multiple_of(3)),
                );
            }
        }
        c
    }

    fn data(&self) -> &Path {
        self.dir.path()
    }

    fn entry_rel(&self, i: usize) -> String {
        format!("signatures/{}/e-{i:04}.json", DOMAINS[i % DOMAINS.len()])
    }

    fn article_rel(&self, i: usize, zh: bool) -> String {
        let lang = if zh { ".zh" } else { "" };
        format!("articles/{}/a-{i:03}{lang}.md", DOMAINS[i % DOMAINS.len()])
    }

    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.data().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn write_entry(&self, i: usize, value: &Value) -> PathBuf {
        self.write(
            &self.entry_rel(i),
            &(serde_json::to_string_pretty(value).unwrap() + "\n"),
        )
    }

    fn entry(&self, i: usize) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.data().join(self.entry_rel(i))).unwrap())
            .unwrap()
    }

    /// Edits entry `i` with `f` and returns its path.
    fn edit(&self, i: usize, f: impl FnOnce(&mut Value)) -> PathBuf {
        let mut v = self.entry(i);
        f(&mut v);
        self.write_entry(i, &v)
    }
}

/// Every file and directory under `root`: path → bytes (`None` for a directory).
fn tree(root: &Path) -> BTreeMap<String, Option<Vec<u8>>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let rel = p
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if p.is_dir() {
            if !rel.is_empty() {
                out.insert(rel, None);
            }
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        } else {
            out.insert(rel, Some(std::fs::read(&p).unwrap()));
        }
    }
    out
}

/// Fails with the first differing paths, not a 10 MB diff.
fn assert_same_tree(step: &str, incremental: &Path, full: &Path) {
    let a = tree(incremental);
    let b = tree(full);
    let mut problems = Vec::new();
    for (path, bytes) in &b {
        match a.get(path) {
            None => problems.push(format!("missing {path}")),
            Some(x) if x != bytes => problems.push(format!("differs {path}")),
            _ => {}
        }
    }
    for path in a.keys() {
        if !b.contains_key(path) {
            problems.push(format!("extra {path}"));
        }
    }
    assert!(
        problems.is_empty(),
        "{step}: incremental output differs from a full build ({} paths): {:?}",
        problems.len(),
        &problems[..problems.len().min(20)]
    );
}

fn full_build_into(data: &Path, opts: &SiteOptions, out: &Path) {
    let kb = KnowledgeBase::load(data).unwrap();
    let site = render(&kb, opts).unwrap();
    site.files.write_atomically(out).unwrap();
}

/// A change to the data: returns the paths it touched.
type Change<'a> = Box<dyn Fn() -> Vec<PathBuf> + 'a>;

#[test]
fn incremental_rebuilds_equal_full_builds() {
    let corpus = Corpus::new(300, 24);
    let out = tempfile::tempdir().unwrap();
    let site = out.path().join("site");
    let opts = SiteOptions::default().with_base_url("https://example.org/kb/");
    let kb = KnowledgeBase::load(corpus.data()).unwrap();
    let (mut state, report) = SiteState::full_build(kb, opts.clone(), &site).unwrap();
    assert!(report.full && report.pages > 600, "{report:?}");
    let check = |step: &str| {
        let reference = out.path().join("reference");
        full_build_into(corpus.data(), &opts, &reference);
        assert_same_tree(step, &site, &reference);
    };
    check("initial");

    // The benchmark's change: one entry's root cause. Only its own outputs, its
    // listings (summaries) and its search documents.
    let p = corpus.edit(10, |v| {
        v["root_cause"] = json!("Edited cause: the `stream` was destroyed early.");
    });
    let r = state.rebuild(&[p]).unwrap();
    assert!(!r.full && r.reloaded == 1, "{r:?}");
    assert!(r.rendered <= 20, "a root cause edit re-rendered {r:?}");
    check("root cause");

    let steps: Vec<(&str, Change<'_>)> = vec![
        (
            "signature (linked from graphs and articles)",
            Box::new(|| {
                vec![corpus.edit(1, |v| {
                    v["signature"] = json!("RuntimeError: a brand new message <b>&</b>");
                })]
            }),
        ),
        (
            "Chinese title removed",
            Box::new(|| vec![corpus.edit(2, |v| v["signature_zh"] = json!(""))]),
        ),
        (
            "tags: a new tag, and the last entry of a rare tag leaves it",
            Box::new(|| vec![corpus.edit(7, |v| v["tags"] = json!(["brand-new-tag", "memory"]))]),
        ),
        (
            "tags: another spelling of an existing tag shares its page",
            Box::new(|| vec![corpus.edit(9, |v| v["tags"] = json!(["Memory", "Brand New Tag"]))]),
        ),
        (
            "tags: spellings of one tag take turns being the most used",
            Box::new(|| {
                vec![
                    corpus.edit(11, |v| v["tags"] = json!(["Brand New Tag"])),
                    corpus.edit(7, |v| v["tags"] = json!(["memory"])),
                ]
            }),
        ),
        (
            "transition graph: a new edge, and one to a missing id",
            Box::new(|| {
                vec![corpus.edit(3, |v| {
                    v["transition_graph"]["leads_to"] =
                        json!(["cuda/e-0004", "cuda/does-not-exist"]);
                })]
            }),
        ),
        (
            "last_updated: now the newest",
            Box::new(|| vec![corpus.edit(5, |v| v["last_updated"] = json!("2026-01-01"))]),
        ),
        (
            "error code and translation state",
            Box::new(|| {
                vec![corpus.edit(14, |v| {
                    v["error_code"] = json!("cudaErrorInvalidValue");
                    v["root_cause_zh"] = json!("");
                })]
            }),
        ),
        (
            "a new entry in a new domain, named by an existing edge",
            Box::new(|| {
                let mut v = entry_json(3, corpus.n);
                v["id"] = json!("newdomain/brand-new");
                v["signature"] = json!("NewError: something never seen before");
                vec![
                    corpus.write(
                        "signatures/newdomain/brand-new.json",
                        &serde_json::to_string_pretty(&v).unwrap(),
                    ),
                    corpus.edit(20, |v| {
                        v["transition_graph"]["leads_to"] = json!(["newdomain/brand-new"]);
                    }),
                ]
            }),
        ),
        (
            "an entry deleted (others link to it)",
            Box::new(|| {
                let path = corpus.data().join(corpus.entry_rel(4));
                std::fs::remove_file(&path).unwrap();
                vec![path]
            }),
        ),
        (
            "the only entry of a domain deleted",
            Box::new(|| {
                let path = corpus.data().join("signatures/newdomain/brand-new.json");
                std::fs::remove_file(&path).unwrap();
                vec![path]
            }),
        ),
        (
            "broken JSON (the entry drops out of the site)",
            Box::new(|| vec![corpus.write(&corpus.entry_rel(8), "{ not json")]),
        ),
        (
            "fixed again",
            Box::new(|| vec![corpus.write_entry(8, &entry_json(8, corpus.n))]),
        ),
        (
            "article: new title and signatures (outdates its translation)",
            Box::new(|| {
                let en = article_text(0, 40, "A renamed article");
                vec![corpus.write(&corpus.article_rel(0, false), &en)]
            }),
        ),
        (
            "article: translation brought up to date",
            Box::new(|| {
                let en = std::fs::read_to_string(corpus.data().join(corpus.article_rel(0, false)))
                    .unwrap();
                vec![corpus.write(&corpus.article_rel(0, true), &zh_text(0, &en, true))]
            }),
        ),
        (
            "article: a translation added",
            Box::new(|| {
                let en = std::fs::read_to_string(corpus.data().join(corpus.article_rel(2, false)))
                    .unwrap();
                vec![corpus.write(&corpus.article_rel(2, true), &zh_text(2, &en, true))]
            }),
        ),
        (
            "article deleted, with its translation",
            Box::new(|| {
                let en = corpus.data().join(corpus.article_rel(3, false));
                let zh = corpus.data().join(corpus.article_rel(3, true));
                std::fs::remove_file(&en).unwrap();
                std::fs::remove_file(&zh).unwrap();
                vec![en, zh]
            }),
        ),
        (
            "many entries at once (a branch switch)",
            Box::new(|| {
                (40..70)
                    .map(|i| corpus.edit(i, |v| v["signature_zh"] = json!(format!("批量 {i}"))))
                    .collect()
            }),
        ),
        (
            "a run record (verdicts can change anywhere)",
            Box::new(|| {
                let code = "import torch\nprint(1)\n";
                let record = json!({"version": 1, "records": [{
                    "file": corpus.article_rel(1, false), "line": 12,
                    "sha256": errata_load::sha256_hex(code.as_bytes()),
                    "tier": "static", "outcome": "pass", "date": "2026-01-02"}]});
                vec![corpus.write("runs/static.json", &record.to_string())]
            }),
        ),
        (
            "a file outside the data layout (ignored)",
            Box::new(|| vec![corpus.write("notes.txt", "hello")]),
        ),
    ];
    for (step, change) in steps {
        let changed = change();
        let report = state.rebuild(&changed).unwrap();
        eprintln!("{step}: {report:?}");
        check(step);
    }

    // A malformed run record fails the rebuild and changes nothing; once it is fixed,
    // the same paths go through.
    let bad = corpus.write("runs/bad.json", "{\"records\": 5}");
    let edited = corpus.edit(11, |v| {
        v["signature"] = json!("Edited next to a bad record")
    });
    assert!(state.rebuild(&[bad.clone(), edited.clone()]).is_err());
    std::fs::remove_file(&bad).unwrap();
    state.rebuild(&[bad, edited]).unwrap();
    check("after a failed rebuild");
}

#[test]
fn rebuild_takes_paths_relative_to_the_current_directory_or_absolute() {
    let corpus = Corpus::new(20, 2);
    let out = tempfile::tempdir().unwrap();
    let site = out.path().join("site");
    let kb = KnowledgeBase::load(corpus.data()).unwrap();
    let (mut state, _) = SiteState::full_build(kb, SiteOptions::default(), &site).unwrap();
    let path = corpus.edit(0, |v| v["signature"] = json!("Changed: absolute path"));
    let report = state.rebuild(&[path]).unwrap();
    assert_eq!(report.reloaded, 1);
    let page = std::fs::read_to_string(site.join("entries/cuda/e-0000.html")).unwrap();
    assert!(page.contains("Changed: absolute path"));
    // Nothing to do for a path outside the data directory.
    let report = state
        .rebuild(&[PathBuf::from("/nowhere/at/all.json")])
        .unwrap();
    assert_eq!((report.reloaded, report.written), (0, 0));
}
