//! `errata links` end to end: the real binary on a temporary knowledge base whose URLs
//! point at a real HTTP server on 127.0.0.1.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::sync::{Arc, Mutex};

/// A one-request-per-connection HTTP server: `/ok` 200, `/old` 301 → `/ok`, else 404.
/// Returns its port and the request lines it saw.
fn server() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request = String::new();
            let _ = reader.read_line(&mut request);
            let mut line = String::new();
            while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                line.clear();
            }
            let path = request.split_whitespace().nth(1).unwrap_or("").to_string();
            log.lock().unwrap().push(request.trim().to_string());
            let head = match path.as_str() {
                "/ok" => "200 OK\r\n".to_string(),
                "/old" => {
                    format!("301 Moved Permanently\r\nLocation: http://127.0.0.1:{port}/ok\r\n")
                }
                _ => "404 Not Found\r\n".to_string(),
            };
            let mut stream = stream;
            let _ = write!(
                stream,
                "HTTP/1.1 {head}Content-Length: 0\r\nConnection: close\r\n\r\n"
            );
        }
    });
    (port, seen)
}

fn write(root: &Path, rel: &str, text: &str) {
    let path = root.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn errata(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_errata"))
        .current_dir(dir)
        .arg("links")
        // The test server listens on 127.0.0.1, a loopback host errata refuses otherwise.
        .args(["--allow-host", "127.0.0.1"])
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    (
        code,
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn dead_links_exit_1_with_json_positions_and_the_cache_serves_offline() {
    let (port, seen) = server();
    let dir = tempfile::tempdir().unwrap();
    let base = format!("http://127.0.0.1:{port}");
    write(
        dir.path(),
        "data/signatures/cuda/oom.json",
        &format!(
            "{{\n  \"id\": \"cuda/oom\",\n  \"official_doc_url\": \"{base}/ok\",\n  \"workarounds\": [\n    {{ \"sources\": [\"{base}/missing\"] }}\n  ]\n}}\n"
        ),
    );
    write(
        dir.path(),
        "data/articles/cuda/oom.md",
        &format!(
            "---\ntitle: OOM\nid: cuda/oom\ndate: \"2025-01-01\"\n---\n# OOM\n\nMoved: [docs]({base}/old), dead: <{base}/missing>.\n"
        ),
    );

    let (code, stdout, stderr) = errata(
        dir.path(),
        &["--format", "json", "--cache", "cache/links.json"],
    );
    assert_eq!(code, 1, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let got: Vec<_> = json["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["file"].as_str().unwrap().to_string(),
                d["line"].as_u64().unwrap(),
                d["column"].as_u64().unwrap(),
                d["rule"].as_str().unwrap().to_string(),
                d["pointer"].as_str().map(str::to_string),
            )
        })
        .collect();
    let expected = [
        ("data/articles/cuda/oom.md", 8, 15, "link-redirect", None),
        // After "Moved: [docs](", the URL, "/old), dead: <".
        (
            "data/articles/cuda/oom.md",
            8,
            15 + base.len() as u64 + 14,
            "link-dead",
            None,
        ),
        (
            "data/signatures/cuda/oom.json",
            5,
            19,
            "link-dead",
            Some("/workarounds/0/sources/0"),
        ),
    ];
    let expected: Vec<_> = expected
        .iter()
        .map(|(f, l, c, r, p)| (f.to_string(), *l, *c, r.to_string(), p.map(str::to_string)))
        .collect();
    assert_eq!(got, expected, "{stdout}");
    assert_eq!(json["summary"]["errors"], 2);
    assert_eq!(json["summary"]["warnings"], 1);
    // /missing is written twice but asked once (HEAD, then GET to confirm the 404).
    let missing = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.contains("/missing "))
        .count();
    assert_eq!(missing, 2, "{:?}", seen.lock().unwrap());

    // Offline, the same verdicts come from the cache and the server hears nothing.
    let before = seen.lock().unwrap().len();
    let (code, offline_stdout, _) = errata(
        dir.path(),
        &[
            "--format",
            "json",
            "--cache",
            "cache/links.json",
            "--offline",
        ],
    );
    assert_eq!(code, 1);
    assert_eq!(offline_stdout, stdout);
    assert_eq!(seen.lock().unwrap().len(), before);

    // Offline with no cache: nothing is known, nothing is an error, and stderr says so.
    let (code, stdout, stderr) = errata(
        dir.path(),
        &["--offline", "--cache", "elsewhere.json", "--format", "json"],
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("\"errors\": 0"), "{stdout}");
    assert!(stderr.contains("never checked"), "{stderr}");
}

#[test]
fn bad_flags_and_missing_data_are_usage_errors() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, stderr) = errata(dir.path(), &["--max-age", "seven days"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("invalid duration"), "{stderr}");
    let (code, _, stderr) = errata(dir.path(), &["no-such-dir"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no-such-dir"), "{stderr}");
}
