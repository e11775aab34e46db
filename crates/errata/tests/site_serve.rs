//! `errata serve` as a real process: it serves the built site on 127.0.0.1, injects the
//! reload script, and rebuilds when an entry changes (the version endpoint moves and
//! the page shows the new text).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

mod common;

/// Stops the server when the test ends, pass or fail.
struct Serve(Child);

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn get(addr: &str, path: &str) -> String {
    let mut s = TcpStream::connect(addr).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

#[test]
fn serve_rebuilds_on_change_and_signals_reload() {
    let dir = common::data_copy();
    let mut child = common::command(dir.path(), &["serve", "--port", "0", "--exit-after", "120"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .expect("start errata serve");
    let stderr = child.stderr.take().unwrap();
    let _serve = Serve(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let addr = loop {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("serve prints its URL");
        if let Some(rest) = line.split(" at http://").nth(1) {
            break rest.split('/').next().unwrap().to_string();
        }
    };
    let entry = std::fs::read_dir(dir.path().join("data/signatures/cuda"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let id = format!("cuda/{}", entry.file_stem().unwrap().to_string_lossy());
    let page = get(&addr, &format!("/entries/{id}.html"));
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(
        page.contains("<script src=\"/__errata/reload.js\"></script></body>"),
        "reload script injected"
    );
    let version = |addr: &str| {
        get(addr, "/__errata/version")
            .rsplit("\r\n\r\n")
            .next()
            .unwrap_or("")
            .to_string()
    };
    let before = version(&addr);

    let mut value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&entry).unwrap()).unwrap();
    let marker = "Edited while serving: the preview must show this sentence.";
    value["root_cause"] = serde_json::Value::String(format!(
        "{} {marker}",
        value["root_cause"].as_str().unwrap()
    ));
    std::fs::write(&entry, serde_json::to_string_pretty(&value).unwrap() + "\n").unwrap();

    let deadline = Instant::now() + Duration::from_secs(60);
    while version(&addr) == before {
        assert!(Instant::now() < deadline, "no rebuild within 60 s");
        std::thread::sleep(Duration::from_millis(200));
    }
    let page = get(&addr, &format!("/entries/{id}.html"));
    assert!(page.contains(marker), "rebuilt page shows the edit");
    assert!(get(&addr, "/no/such/page").starts_with("HTTP/1.1 404"));
}
