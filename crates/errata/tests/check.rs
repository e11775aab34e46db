//! End-to-end tests of `errata check`, `explain`, `fmt` and `new`, running the real binary
//! on real files: the seed fixtures (snapshot), the bundled `data/`, and hostile input.
//!
//! Snapshots live in `tests/snapshots/`; run with `UPDATE_SNAPSHOTS=1` to rewrite them
//! after an intended change, and review the diff.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn errata(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_errata"))
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn json_of(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

fn snapshot(name: &str, actual: &str) {
    let path = repo_root().join("tests/snapshots").join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        expected == actual,
        "snapshot {name} differs; rerun with UPDATE_SNAPSHOTS=1 and review.\n--- actual ---\n{actual}"
    );
}

#[test]
fn seeds_full_diagnostics_snapshot() {
    let out = errata(
        &repo_root(),
        &[
            "check",
            "tests/fixtures/seeds",
            "--format",
            "json",
            "--today",
            "2026-11-21",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    snapshot("seeds-check.json", &String::from_utf8(out.stdout).unwrap());
}

#[test]
fn seeds_each_known_defect_is_caught() {
    let out = errata(
        &repo_root(),
        &[
            "check",
            "tests/fixtures/seeds",
            "--format",
            "json",
            "--today",
            "2026-11-21",
        ],
    );
    let doc = json_of(&out);
    let found = |rule: &str, file: &str, pointer: Option<&str>| {
        doc["diagnostics"].as_array().unwrap().iter().any(|d| {
            d["rule"] == rule
                && d["file"].as_str().unwrap().ends_with(file)
                && pointer.is_none_or(|p| d["pointer"] == p)
        })
    };
    let free = "illegal-memory-access-after-free.json";
    let unload = "cuda-error-driver-unloading.json";
    assert!(
        found("date-order", free, Some("/last_confirmed")),
        "dates out of order"
    );
    assert!(found(
        "empty-dead-end-action",
        free,
        Some("/dead_ends/0/action")
    ));
    assert!(found(
        "empty-dead-end-action",
        unload,
        Some("/dead_ends/1/action")
    ));
    assert!(
        found("zh-untranslated", free, Some("/workarounds_zh/0")),
        "English in a _zh field"
    );
    // The seed's message ("... encountered after a cudaFree call ...") is not what the
    // runtime prints for cudaErrorIllegalAddress, and its regex matches only that.
    assert!(
        found("error-string-mismatch", free, Some("/regex")),
        "a regex that does not recognise its own error_code"
    );
    assert!(
        found("error-code-unknown", unload, Some("/error_code")),
        "made-up cudaErrorDriverNotReady (804)"
    );
    assert!(found("redundant-how", unload, Some("/workarounds/2/how")));
    assert!(found(
        "broken-link",
        "runtime-errors-memory-failures.md",
        None
    ));
    assert!(
        found("frontmatter", "runtime-errors-memory-failures.md", None),
        "article without front matter"
    );
    assert!(found(
        "id-path-mismatch",
        "why-am-i-getting-a-cuda-illegal-memory.md",
        None
    ));
    assert!(found(
        "mojibake",
        "why-does-cudadevicereset-cause-cuda-access-violations-after.md",
        None
    ));
}

/// The newest date written in `data/` (entries' `last_updated`, articles' `date`): the
/// day the knowledge base was last edited, as `YYYY-MM-DD`.
fn newest_date_in_data() -> String {
    let date = first_date_in();
    let mut newest = String::new();
    let mut stack = vec![repo_root().join("data")];
    while let Some(dir) = stack.pop() {
        for item in std::fs::read_dir(&dir).unwrap() {
            let path = item.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            for line in text.lines() {
                let line = line.trim();
                if (line.starts_with("\"last_updated\"") || line.starts_with("date:"))
                    && let Some(d) = date(line)
                {
                    newest = newest.max(d);
                }
            }
        }
    }
    assert_eq!(newest.len(), 10, "no date in data/");
    newest
}

/// The first `YYYY-MM-DD` in a line.
fn first_date_in() -> impl Fn(&str) -> Option<String> {
    |line: &str| {
        let b = line.as_bytes();
        (0..b.len().saturating_sub(9)).find_map(|i| {
            let s = &b[i..i + 10];
            let digits = |r: std::ops::Range<usize>| s[r].iter().all(u8::is_ascii_digit);
            (digits(0..4) && s[4] == b'-' && digits(5..7) && s[7] == b'-' && digits(8..10))
                .then(|| String::from_utf8_lossy(s).into_owned())
        })
    }
}

/// Clean on the day it was last edited: the check does not depend on the clock, and a
/// date after that day (`date-in-future`) or an entry already stale then is an error.
#[test]
fn bundled_data_is_clean() {
    let today = newest_date_in_data();
    let out = errata(
        &repo_root(),
        &[
            "check",
            "data",
            "--format",
            "json",
            "--deny-warnings",
            "--today",
            &today,
            "--timings",
        ],
    );
    let doc = json_of(&out);
    assert_eq!(doc["summary"]["errors"], 0, "{doc:#}");
    assert_eq!(doc["summary"]["warnings"], 0, "{doc:#}");
    assert_eq!(out.status.code(), Some(0));
    assert!(doc["summary"]["files"].as_u64().unwrap() >= 5);
    // --timings writes to standard error, so standard output stays one JSON document.
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("timing: load") && stderr.contains(" files), check "),
        "{stderr}"
    );
    // And the ten costliest rules, each named with what it ran on.
    let rules: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("timing:   "))
        .collect();
    assert_eq!(rules.len(), 10, "{stderr}");
    // Which ten depends on the machine; each names what it ran on and its time.
    assert!(
        rules.iter().all(|l| {
            ["(entries)", "(articles)", "(corpus)", "(context: "]
                .iter()
                .any(|kind| l.contains(kind))
                && l.trim_end().ends_with(" ms")
        }),
        "{stderr}"
    );
}

#[test]
fn json_shape_and_line_column_of_a_value() {
    let out = errata(
        &repo_root(),
        &[
            "check",
            "tests/fixtures/seeds/signatures/cuda/illegal-memory-access-after-free.json",
            "--format",
            "json",
            "--today",
            "2026-11-21",
        ],
    );
    let doc = json_of(&out);
    let d = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["rule"] == "date-order")
        .unwrap()
        .clone();
    // `"last_confirmed": "2024-06-01",` is on line 88; the value starts at column 21.
    assert_eq!(
        d["file"],
        "tests/fixtures/seeds/signatures/cuda/illegal-memory-access-after-free.json"
    );
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(88), Some(21))
    );
    assert_eq!(d["severity"], "error");
    for key in [
        "rule", "severity", "file", "line", "column", "pointer", "message", "help",
    ] {
        assert!(d.get(key).is_some(), "missing {key}");
    }
    // A single file is reported alone.
    assert!(
        doc["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["file"].as_str().unwrap().ends_with("after-free.json"))
    );
}

#[test]
fn sarif_and_github_formats() {
    let root = repo_root();
    let sarif = json_of(&errata(
        &root,
        &[
            "check",
            "tests/fixtures/seeds",
            "--format",
            "sarif",
            "--today",
            "2026-11-21",
        ],
    ));
    assert_eq!(sarif["version"], "2.1.0");
    let results = sarif["runs"][0]["results"].as_array().unwrap();
    assert!(results.iter().any(|r| r["ruleId"] == "error-code-unknown"));
    // Every rule links its documentation, an anchor that docs/rules.md has.
    let rules_doc = std::fs::read_to_string(root.join("docs/rules.md")).unwrap();
    for rule in sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
    {
        let id = rule["id"].as_str().unwrap();
        let uri = rule["helpUri"].as_str().unwrap_or_default();
        assert_eq!(
            uri,
            format!("https://github.com/errata-kb/errata/blob/main/docs/rules.md#{id}")
        );
        assert!(rules_doc.contains(&format!("<a id=\"{id}\"></a>")), "{id}");
    }
    let gh = errata(
        &root,
        &[
            "check",
            "tests/fixtures/seeds",
            "--format",
            "github",
            "--today",
            "2026-11-21",
        ],
    );
    let text = String::from_utf8(gh.stdout).unwrap();
    assert!(
        text.lines()
            .all(|l| l.starts_with("::error file=") || l.starts_with("::warning file=")),
        "{text}"
    );
}

fn write(dir: &Path, rel: &str, bytes: &[u8]) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

/// A real entry from data/, alone: its transition-graph edges are removed so that it is
/// clean without its neighbours.
fn good_entry(id: &str) -> Vec<u8> {
    let mut out = serde_json::to_string_pretty(&common::standalone_entry(id)).unwrap();
    out.push('\n');
    out.into_bytes()
}

#[test]
fn hostile_input_never_crashes_and_hides_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(d, "signatures/cuda/empty.json", b"");
    write(
        d,
        "signatures/cuda/junk.json",
        &[0u8, 159, 146, 150, 255, 0, 1, 2],
    );
    write(
        d,
        "signatures/cuda/deep.json",
        "[".repeat(200_000).as_bytes(),
    );
    write(
        d,
        "signatures/cuda/big.json",
        &vec![b' '; 100 * 1024 * 1024],
    );
    write(d, "articles/cuda/deep.md", ">".repeat(200_000).as_bytes());
    write(d, "articles/cuda/junk.md", &[0xff, 0xfe, b'#', b' ', b'x']);
    // A readable entry with one real defect, to prove the others hide nothing.
    let mut defective: serde_json::Value =
        serde_json::from_slice(&good_entry("cuda/out-of-memory")).unwrap();
    defective["regex"] = "never matches".into();
    write(
        d,
        "signatures/cuda/out-of-memory.json",
        defective.to_string().as_bytes(),
    );
    #[cfg(unix)]
    std::os::unix::fs::symlink(d.join("signatures"), d.join("signatures/cuda/loop")).unwrap();
    let out = errata(
        d,
        &["check", ".", "--format", "json", "--today", "2026-11-21"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = json_of(&out);
    let rules: Vec<(String, String)> = doc["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["file"].as_str().unwrap().to_string(),
                d["rule"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let has = |file: &str, rule: &str| rules.iter().any(|(f, r)| f.ends_with(file) && r == rule);
    assert!(has("empty.json", "json-syntax"), "{rules:?}");
    assert!(has("junk.json", "json-syntax"));
    assert!(has("deep.json", "json-syntax"));
    assert!(has("big.json", "file-too-large"));
    assert!(has("junk.md", "unreadable"));
    assert!(has("deep.md", "frontmatter"));
    #[cfg(unix)]
    assert!(has("loop", "unreadable"));
    assert!(has("out-of-memory.json", "regex-no-match"), "{rules:?}");
}

#[cfg(unix)]
#[test]
fn unreadable_file_is_a_diagnostic_and_missing_dir_is_exit_2() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "signatures/cuda/secret.json", b"{}");
    let p = dir.path().join("signatures/cuda/secret.json");
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o000)).unwrap();
    // Root reads anything: run the check as an unprivileged user then (CI runs as root),
    // so that the file is really unreadable to it. Never skipped in silence.
    let out = if std::fs::read(&p).is_ok() {
        for d in [
            dir.path().to_path_buf(),
            dir.path().join("signatures"),
            dir.path().join("signatures/cuda"),
        ] {
            std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let as_nobody = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_errata"))
            .args(["check", ".", "--format", "json"])
            .current_dir(dir.path())
            .output()
            .expect("running as root: setpriv (util-linux) must exist to test an unreadable file");
        assert!(
            as_nobody.status.code() == Some(1),
            "errata check as nobody: {:?} {}",
            as_nobody.status,
            String::from_utf8_lossy(&as_nobody.stderr)
        );
        as_nobody
    } else {
        errata(dir.path(), &["check", ".", "--format", "json"])
    };
    let doc = json_of(&out);
    assert!(
        doc["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["rule"] == "unreadable"),
        "{doc}"
    );
    let missing = errata(dir.path(), &["check", "no-such-dir"]);
    assert_eq!(missing.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("no-such-dir"));
}

#[test]
fn config_overrides_and_deny_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    write(
        d,
        "kb/signatures/cuda/out-of-memory.json",
        &good_entry("cuda/out-of-memory"),
    );
    // last_confirmed is in 2026; a 2028 "today" makes it stale (a warning).
    let out = errata(
        d,
        &["check", "kb", "--format", "json", "--today", "2028-01-01"],
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(
        json_of(&out)["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["rule"] == "stale" && d["severity"] == "warning")
    );
    assert_eq!(
        errata(
            d,
            &["check", "kb", "--today", "2028-01-01", "--deny-warnings"]
        )
        .status
        .code(),
        Some(1)
    );
    write(
        d,
        "errata.toml",
        b"data_dir = \"kb\"\n[rules]\nstale = \"error\"\n",
    );
    let out = errata(d, &["check", "--format", "json", "--today", "2028-01-01"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        json_of(&out)["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["rule"] == "stale" && d["severity"] == "error")
    );
    write(d, "errata.toml", b"[rules]\nstael = \"allow\"\n");
    let out = errata(d, &["check", "kb"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("stael"));
}

#[test]
fn explain_every_rule() {
    let root = repo_root();
    let list = String::from_utf8(errata(&root, &["explain"]).stdout).unwrap();
    // The contract lives in the repository: every rule is listed in docs/rules.md.
    let contract = std::fs::read_to_string(root.join("docs/rules.md")).expect("docs/rules.md");
    for rule in [
        "json-syntax",
        "schema",
        "id-path-mismatch",
        "duplicate-id",
        "date-format",
        "date-order",
        "date-in-future",
        "rate-range",
        "empty-dead-end-action",
        "empty-field",
        "zh-missing",
        "zh-untranslated",
        "zh-count-mismatch",
        "regex-invalid",
        "regex-no-match",
        "regex-overlap",
        "unknown-reference",
        "asymmetric-edge",
        "unsafe-url",
        "error-code-unknown",
        "mojibake",
        "redundant-how",
        "evidence-mismatch",
        "reference-uncited",
        "stale",
        "frontmatter",
        "broken-link",
        "code-block-no-lang",
        "snippet-annotation",
        "heading-skip",
        "translation-outdated",
        "link-dead",
        "link-redirect",
    ] {
        assert!(
            list.lines().any(|l| l.starts_with(rule)),
            "{rule} missing from `errata explain`"
        );
        let page = errata(&root, &["explain", rule]);
        assert_eq!(page.status.code(), Some(0));
        assert!(
            String::from_utf8(page.stdout).unwrap().len() > 100,
            "{rule} has no real documentation"
        );
        assert!(
            contract.contains(&format!("`{rule}`")),
            "{rule} not in docs/rules.md"
        );
    }
    // And every rule `errata explain` lists, not only the ones named above.
    for line in list.lines() {
        let rule = line.split_whitespace().next().unwrap_or_default();
        assert!(
            contract.contains(&format!("`{rule}`")),
            "{rule} (from `errata explain`) not in docs/rules.md"
        );
    }
    assert_eq!(
        errata(&root, &["explain", "no-such-rule"]).status.code(),
        Some(2)
    );
}

#[test]
fn fmt_is_canonical_idempotent_and_new_scaffolds() {
    let root = repo_root();
    // The bundled data is already canonical.
    assert_eq!(
        errata(&root, &["fmt", "--check", "data"]).status.code(),
        Some(0)
    );
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let mut v: serde_json::Value =
        serde_json::from_slice(&good_entry("cuda/out-of-memory")).unwrap();
    let obj = v.as_object_mut().unwrap();
    let id = obj.shift_remove("id").unwrap();
    obj.insert("id".into(), id); // now last: not canonical
    write(
        d,
        "data/signatures/cuda/out-of-memory.json",
        serde_json::to_string(&v).unwrap().as_bytes(),
    );
    assert_eq!(errata(d, &["fmt", "--check"]).status.code(), Some(1));
    assert_eq!(errata(d, &["fmt"]).status.code(), Some(0));
    let once = std::fs::read(d.join("data/signatures/cuda/out-of-memory.json")).unwrap();
    assert_eq!(
        once,
        good_entry("cuda/out-of-memory"),
        "fmt restores the canonical form"
    );
    assert_eq!(errata(d, &["fmt", "--check"]).status.code(), Some(0));

    let out = errata(d, &["new", "cuda/brand-new"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        errata(d, &["new", "cuda/brand-new"]).status.code(),
        Some(2),
        "never overwrites"
    );
    assert_eq!(errata(d, &["new", "Bad/Id"]).status.code(), Some(2));
    let check = json_of(&errata(
        d,
        &[
            "check",
            "data/signatures/cuda/brand-new.json",
            "--format",
            "json",
        ],
    ));
    let rules: std::collections::BTreeSet<&str> = check["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    // Only "fill this in" rules: no schema or structural problems.
    let allowed = ["empty-field", "zh-missing", "empty-dead-end-action"];
    assert!(rules.iter().all(|r| allowed.contains(r)), "{rules:?}");
    assert!(rules.contains("empty-field"));
}

/// `errata migrate` brings the seeds (schema 1: no `basis`, no `dead_ends_zh`) to schema
/// 2 without inventing anything: every rate an estimate, an empty Chinese dead end each
/// for `zh-missing` to point at; a second run and `--check` find nothing left to do.
#[test]
fn migrate_brings_schema_1_entries_over() {
    let dir = tempfile::tempdir().unwrap();
    let src = repo_root().join("tests/fixtures/seeds/signatures/cuda");
    let dest = dir.path().join("signatures/cuda");
    std::fs::create_dir_all(&dest).unwrap();
    for f in std::fs::read_dir(&src).unwrap().flatten() {
        std::fs::copy(f.path(), dest.join(f.file_name())).unwrap();
    }
    let rules = |out: &Output| -> Vec<(String, String)> {
        json_of(out)["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                (
                    d["rule"].as_str().unwrap().to_string(),
                    d["pointer"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect()
    };
    let before = rules(&errata(dir.path(), &["check", ".", "--format", "json"]));
    let missing = before
        .iter()
        .filter(|(r, _)| r == "rate-basis-missing")
        .count();
    assert!(missing > 0, "{before:?}");

    let check_only = errata(dir.path(), &["migrate", ".", "--check"]);
    assert_eq!(check_only.status.code(), Some(1));
    let out = errata(dir.path(), &["migrate", "."]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("{missing} rate(s) marked `estimate`")),
        "{stderr}"
    );
    assert!(stderr.contains("left to do"), "{stderr}");

    let after = rules(&errata(dir.path(), &["check", ".", "--format", "json"]));
    assert!(
        after.iter().all(|(r, _)| r != "rate-basis-missing"),
        "{after:?}"
    );
    // No missing key left but `operator_action`, which only a reader can choose:
    // migrate says so, and the schema rule points at each entry.
    let schema_root: Vec<&(String, String)> = after
        .iter()
        .filter(|(r, p)| r == "schema" && p.is_empty())
        .collect();
    assert_eq!(schema_root.len(), 2, "{after:?}");
    assert!(
        stderr.contains("2 entries without `operator_action`"),
        "{stderr}"
    );
    let untranslated: Vec<&String> = after
        .iter()
        .filter(|(r, _)| r == "zh-missing")
        .map(|(_, p)| p)
        .filter(|p| p.starts_with("/dead_ends_zh/"))
        .collect();
    assert!(!untranslated.is_empty(), "{after:?}");

    let again = errata(dir.path(), &["migrate", ".", "--check"]);
    assert_eq!(
        again.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&again.stdout)
    );
    assert_eq!(
        errata(dir.path(), &["fmt", ".", "--check"]).status.code(),
        Some(0),
        "migrated entries are canonically formatted"
    );
}

/// Colour on a terminal only, and never with `NO_COLOR` (https://no-color.org), in
/// `check`'s human output. Run under `script(1)`, which gives errata a terminal and
/// records what the terminal showed.
#[test]
fn no_color_turns_colour_off_on_a_terminal() {
    let root = repo_root();
    let run = |no_color: bool| {
        let dir = tempfile::tempdir().unwrap();
        let typescript = dir.path().join("typescript");
        let command = format!(
            "{}'{}' check tests/fixtures/seeds --today 2026-11-21",
            if no_color { "NO_COLOR=1 " } else { "" },
            env!("CARGO_BIN_EXE_errata"),
        );
        let status = Command::new("script")
            .args(["-q", "-e", "-c", &command])
            .arg(&typescript)
            .current_dir(&root)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .status()
            .expect("script(1) from util-linux");
        assert_eq!(status.code(), Some(1), "the seeds have errors");
        String::from_utf8_lossy(&std::fs::read(typescript).unwrap()).into_owned()
    };
    let coloured = run(false);
    assert!(coloured.contains("error"), "{coloured}");
    assert!(coloured.contains('\u{1b}'), "a terminal gets colour");
    let plain = run(true);
    assert!(plain.contains("error"), "{plain}");
    assert!(!plain.contains('\u{1b}'), "NO_COLOR: {plain}");
}
