//! Resource limits end to end: the real binary on inputs built to exhaust it (a 1 GiB
//! single-line log, catastrophic and huge regexes, pathological Markdown, a compression
//! bomb). Each must end with a clear answer, within a watchdog's time (a hang detector,
//! not a speed test: speed is `cargo xtask bench`'s) and, where it is the point, within a
//! memory bound read from the kernel.
#![cfg(target_os = "linux")]

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{command, repo, standalone_entry, write_file as write};

/// What a run ended with, and the most memory it held (VmHWM, polled while it ran).
struct Ended {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    peak_rss_kib: u64,
}

/// Waits for `child` while polling its peak resident memory; kills it and fails the test
/// after `watchdog`.
fn watch(mut child: Child, watchdog: Duration) -> Ended {
    let pid = child.id();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).unwrap();
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stderr, &mut s).unwrap();
        s
    });
    let start = Instant::now();
    let mut peak = 0;
    let status = loop {
        if let Ok(text) = std::fs::read_to_string(format!("/proc/{pid}/status"))
            && let Some(kib) = text
                .lines()
                .find_map(|l| l.strip_prefix("VmHWM:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        {
            peak = peak.max(kib);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > watchdog {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("still running after {watchdog:?}: killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ended {
        code: status.code(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        peak_rss_kib: peak,
    }
}

fn spawn(cwd: &Path, args: &[&str], stdin: Stdio) -> Child {
    command(cwd, args)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start errata")
}

#[test]
fn a_1_gib_single_line_log_is_scanned_in_bounded_memory() {
    const GIB: usize = 1 << 30;
    let mut child = spawn(&repo(), &["match", "-", "--format", "json"], Stdio::piped());
    let mut stdin = child.stdin.take().unwrap();
    // 1 GiB with no line end, then a real error on the next line: the overlong line is
    // read in pieces, never held whole, and what follows it is still found.
    let writer = std::thread::spawn(move || {
        let block = vec![b'x'; 1 << 20];
        for _ in 0..GIB / block.len() {
            stdin.write_all(&block).unwrap();
        }
        stdin
            .write_all(b"\nRuntimeError: CUDA error: out of memory\n")
            .unwrap();
    });
    let ended = watch(child, Duration::from_secs(600));
    writer.join().unwrap();
    assert_eq!(
        ended.code,
        Some(1),
        "1: known errors found. {}",
        ended.stderr
    );
    let matches: Vec<serde_json::Value> = ended
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(matches.len(), 1, "{}", ended.stdout);
    assert_eq!(matches[0]["line"], 2, "{}", ended.stdout);
    assert_eq!(matches[0]["id"], "cuda/out-of-memory", "{}", ended.stdout);
    // The knowledge base's index and a few 16 MiB pieces in flight: far below the input.
    assert!(
        ended.peak_rss_kib < 512 * 1024,
        "peak RSS {} MiB for a 1 GiB line",
        ended.peak_rss_kib / 1024
    );
}

/// A knowledge base of one real entry (its references dropped) in `dir/data`.
fn one_entry(dir: &Path) -> serde_json::Value {
    let entry = standalone_entry("cuda/out-of-memory");
    write(
        dir,
        "data/signatures/cuda/out-of-memory.json",
        &entry.to_string(),
    );
    entry
}

#[test]
fn catastrophic_and_huge_regexes_are_refused_or_run_in_linear_time() {
    let dir = tempfile::tempdir().unwrap();
    let base = one_entry(dir.path());
    let hostile = [
        // Exponential for a backtracking engine on a long run of `a`s with no match.
        ("nested-quantifier", "(a+)+$".to_string(), "regex-no-match"),
        (
            "alternation-blowup",
            "(a|aa)+$".to_string(),
            "regex-no-match",
        ),
        // Compiles to gigabytes if nobody stops it.
        (
            "counted-counted",
            "a{1000}{1000}".to_string(),
            "regex-invalid",
        ),
        (
            "unicode-class-repeat",
            r"\w{500}\w{500}\w{500}".to_string(),
            "regex-invalid",
        ),
        // Deeper than any parser's stack should go, and longer than any real regex.
        (
            "deep-groups",
            format!("{}a{}", "(".repeat(20_000), ")".repeat(20_000)),
            "regex-invalid",
        ),
        (
            "huge-alternation",
            (0..200_000)
                .map(|i| format!("word{i}"))
                .collect::<Vec<_>>()
                .join("|"),
            "regex-invalid",
        ),
    ];
    for (slug, regex, _) in &hostile {
        let mut entry = base.clone();
        entry["id"] = format!("cuda/{slug}").into();
        entry["regex"] = regex.as_str().into();
        entry["signature"] = format!("{}!", "a".repeat(20_000)).into();
        entry["aliases"] = serde_json::json!([]);
        write(
            dir.path(),
            &format!("data/signatures/cuda/{slug}.json"),
            &entry.to_string(),
        );
    }
    let child = spawn(
        dir.path(),
        &["check", "data", "--format", "json", "--today", "2026-11-30"],
        Stdio::null(),
    );
    let ended = watch(child, Duration::from_secs(120));
    assert_eq!(ended.code, Some(1), "{}", ended.stderr);
    let doc: serde_json::Value = serde_json::from_str(&ended.stdout).unwrap();
    let diagnostics = doc["diagnostics"].as_array().unwrap();
    for (slug, _, rule) in &hostile {
        let found = diagnostics.iter().find(|d| {
            d["file"]
                .as_str()
                .unwrap()
                .ends_with(&format!("/{slug}.json"))
                && d["rule"] == *rule
        });
        let d = found.unwrap_or_else(|| panic!("{slug}: no {rule} in {}", ended.stdout));
        if *rule == "regex-invalid" {
            let message = d["message"].as_str().unwrap();
            assert!(
                message.contains("limit") || message.contains("more than"),
                "{slug}: the message says which limit: {message}"
            );
        }
    }
}

#[test]
fn pathological_markdown_checks_and_builds_in_bounded_time_and_memory() {
    let dir = tempfile::tempdir().unwrap();
    one_entry(dir.path());
    let mut body = String::from("# Deep\n\n");
    body += &"> ".repeat(50_000);
    body += "fifty thousand quotes deep\n\n";
    for depth in 0..1_500 {
        body += &"  ".repeat(depth);
        body += "- nested item\n";
    }
    body += "\n";
    body += &"[a link](https://example.com/page) ".repeat(100_000);
    body += "\n\n";
    body += &"*".repeat(100_000);
    body += "emphasis";
    body += &"_".repeat(100_000);
    body += "\n\n";
    body += &"[".repeat(100_000);
    body += "\n\n";
    body += &"<div>".repeat(20_000);
    body += "\n";
    let text = format!("---\ntitle: Deep\nid: cuda/deep\ndate: \"2025-01-01\"\n---\n{body}");
    assert!(text.len() < 8 << 20, "under the file-size limit");
    write(dir.path(), "data/articles/cuda/deep.md", &text);

    let check = spawn(
        dir.path(),
        &["check", "data", "--today", "2026-11-30"],
        Stdio::null(),
    );
    let ended = watch(check, Duration::from_secs(120));
    assert_eq!(ended.code, Some(0), "{}{}", ended.stdout, ended.stderr);
    let build = spawn(
        dir.path(),
        &["build", "data", "--out", "dist"],
        Stdio::null(),
    );
    let ended = watch(build, Duration::from_secs(300));
    assert_eq!(ended.code, Some(0), "{}", ended.stderr);
    let page =
        std::fs::read_to_string(dir.path().join("dist/site/articles/cuda/deep.html")).unwrap();
    assert!(page.contains("fifty thousand quotes deep"));
    assert_eq!(
        page.matches("href=\"https://example.com/page\"").count(),
        100_000
    );
    assert!(
        !page.contains("<div><div>"),
        "raw HTML in an article is escaped"
    );
    // Many times the 5 MB input, but bounded: nothing per page grows with nesting.
    assert!(
        ended.peak_rss_kib < 1024 * 1024,
        "peak RSS {} MiB",
        ended.peak_rss_kib / 1024
    );
}

#[test]
fn a_compression_bomb_bundle_is_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    // A bundle of 300 bytes whose database member says it holds 100 GB.
    let mut tar = Vec::new();
    for (path, size, body) in [
        ("manifest.json", 20, &br#"{"format_version":1}"#[..]),
        ("errata.sqlite", 100u64 << 30, &b""[..]),
    ] {
        let mut header = tar::Header::new_gnu();
        header.set_path(path).unwrap();
        header.set_size(size);
        header.set_mode(0o644);
        header.set_cksum();
        tar.extend_from_slice(header.as_bytes());
        tar.extend_from_slice(body);
        tar.resize(tar.len().div_ceil(512) * 512, 0);
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&tar).unwrap();
    let bomb = dir.path().join("errata-1.0.0.tar.gz");
    std::fs::write(&bomb, gz.finish().unwrap()).unwrap();
    let bomb = bomb.to_str().unwrap();

    let ended = watch(
        spawn(dir.path(), &["bundle", "verify", bomb], Stdio::null()),
        Duration::from_secs(60),
    );
    assert_eq!(ended.code, Some(1), "{}{}", ended.stdout, ended.stderr);
    let said = format!("{}{}", ended.stdout, ended.stderr);
    assert!(said.contains("larger than any bundle member"), "{said}");

    let ended = watch(
        spawn(dir.path(), &["match", "--bundle", bomb, "-"], Stdio::null()),
        Duration::from_secs(60),
    );
    assert_eq!(ended.code, Some(2), "{}", ended.stderr);
    assert!(
        ended.stderr.contains("larger than any bundle member"),
        "{}",
        ended.stderr
    );
    assert!(ended.peak_rss_kib < 256 * 1024);
}
