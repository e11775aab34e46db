//! Interrupted work: real `errata build`, `errata fmt` and `errata links` processes are
//! killed with SIGKILL at points spread over their run, and what they leave behind is
//! checked: the previous output or the new one, whole, never a mixture or nothing; the
//! sources as they were; and a lock that keeps two builds apart.
#![cfg(unix)]

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::{command, copy_dir, data_copy, errata};

/// Every file under `dir`: `/`-separated relative path → bytes (empty when missing).
fn snapshot(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    fn walk(root: &Path, dir: &Path, files: &mut BTreeMap<String, Vec<u8>>) {
        let Ok(items) = std::fs::read_dir(dir) else {
            return;
        };
        for item in items {
            let item = item.unwrap();
            let path = item.path();
            if item.file_type().unwrap().is_dir() {
                walk(root, &path, files);
            } else {
                let rel = path.strip_prefix(root).unwrap();
                files.insert(
                    rel.to_string_lossy().replace('\\', "/"),
                    std::fs::read(&path).unwrap(),
                );
            }
        }
    }
    let mut files = BTreeMap::new();
    walk(dir, dir, &mut files);
    files
}

/// Kills `child` (SIGKILL: no destructor, no signal handler runs) after `delay`, or lets
/// it finish if it is done before; returns whether it was killed.
fn kill_after(mut child: Child, delay: Duration) -> bool {
    let deadline = Instant::now() + delay;
    loop {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        if Instant::now() >= deadline {
            child.kill().unwrap();
            child.wait().unwrap();
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// Kill points spread over `total`: the middle of each of `n` equal slices, moved by a
/// fixed pseudo-random jitter of up to a third of a slice, so they do not fall into step
/// with the work's own phases.
fn kill_points(total: Duration, n: u32) -> Vec<Duration> {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    (0..n)
        .map(|i| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let jitter = (seed >> 33) as f64 / f64::from(1u32 << 31) - 0.5; // [-0.5, 0.5)
            let at = (f64::from(i) + 0.5 + jitter * 0.66) / f64::from(n);
            total.mul_f64(at.max(0.0))
        })
        .collect()
}

/// Runs `n` kills spread over `total` (see [`kill_points`]), calling `run(i, at)` for
/// each, which returns whether its process was killed before it finished. A round in
/// which fewer than half the runs were killed mid-way says the first timing was slow
/// (a cold cache, a busy machine), so the round is repeated over half the time, up to
/// four rounds; returns the kills of the last round.
fn kill_rounds(total: Duration, n: u32, mut run: impl FnMut(usize, Duration) -> bool) -> usize {
    let mut total = total;
    let mut killed = 0;
    for _ in 0..4 {
        killed = 0;
        for (i, at) in kill_points(total, n).into_iter().enumerate() {
            killed += usize::from(run(i, at));
        }
        if killed * 2 >= n as usize {
            break;
        }
        total = total.mul_f64(0.5);
    }
    killed
}

fn spawn_quiet(cwd: &Path, args: &[&str]) -> Child {
    command(cwd, args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start errata")
}

/// A second knowledge base that builds to a different site and bundle: one entry's root
/// cause changed.
fn edited_copy(from: &Path, to: &Path) {
    copy_dir(from, to);
    let path = to.join("signatures/cuda/out-of-memory.json");
    let text = std::fs::read_to_string(&path).unwrap();
    let mut entry: serde_json::Value = serde_json::from_str(&text).unwrap();
    let root_cause = entry["root_cause"].as_str().unwrap().to_string();
    entry["root_cause"] = format!("{root_cause} This build is the edited one.").into();
    std::fs::write(&path, serde_json::to_string_pretty(&entry).unwrap() + "\n").unwrap();
}

#[test]
fn a_build_killed_at_any_point_leaves_one_whole_site_and_bundle() {
    let dir = data_copy();
    let root = dir.path();
    edited_copy(&root.join("data"), &root.join("data-b"));
    let sources = [snapshot(&root.join("data")), snapshot(&root.join("data-b"))];

    // The two outputs a finished build can leave, each built once into its own place.
    // The kills are spread over the shorter of the two builds' times (the machine may be
    // busy with other tests), so that most of them land before the build is done.
    let start = Instant::now();
    let run = errata(root, &["build", "data", "--out", "dist-a"]);
    let time_a = start.elapsed();
    assert_eq!(run.code, 0, "{}", run.all());
    let start = Instant::now();
    let run = errata(root, &["build", "data-b", "--out", "dist-b"]);
    let build_time = start.elapsed().min(time_a).mul_f64(0.9);
    assert_eq!(run.code, 0, "{}", run.all());
    let sites = [
        snapshot(&root.join("dist-a/site")),
        snapshot(&root.join("dist-b/site")),
    ];
    let bundles = [
        snapshot(&root.join("dist-a/bundle")),
        snapshot(&root.join("dist-b/bundle")),
    ];
    assert_ne!(sites[0], sites[1]);
    assert_ne!(bundles[0], bundles[1]);

    // dist/ starts as build A; each run builds the other knowledge base into it and is
    // killed part-way (or finishes).
    let run = errata(root, &["build", "data", "--out", "dist"]);
    assert_eq!(run.code, 0, "{}", run.all());
    let killed = kill_rounds(build_time, 10, |i, at| {
        let data = if i % 2 == 0 { "data-b" } else { "data" };
        let child = spawn_quiet(root, &["build", data, "--out", "dist"]);
        let killed = kill_after(child, at);
        let site = snapshot(&root.join("dist/site"));
        let bundle = snapshot(&root.join("dist/bundle"));
        assert!(
            sites.contains(&site),
            "kill {i} at {at:?}: the site is neither build's whole site ({} files)",
            site.len()
        );
        assert!(
            bundles.contains(&bundle),
            "kill {i} at {at:?}: the bundle directory is neither build's ({:?})",
            bundle.keys().collect::<Vec<_>>()
        );
        let verify = errata(
            root,
            &[
                "bundle",
                "verify",
                "dist/bundle/errata-1.0.0.tar.gz",
                "--sums",
                "dist/bundle/SHA256SUMS",
            ],
        );
        assert_eq!(verify.code, 0, "kill {i} at {at:?}: {}", verify.all());
        killed
    });
    assert!(
        killed >= 5,
        "only {killed} of 10 runs were killed mid-way, in every round"
    );
    assert_eq!(
        snapshot(&root.join("data")),
        sources[0],
        "sources untouched"
    );
    assert_eq!(
        snapshot(&root.join("data-b")),
        sources[1],
        "sources untouched"
    );

    // The next build finishes, and clears what the killed ones left beside dist/site.
    let run = errata(root, &["build", "data-b", "--out", "dist"]);
    assert_eq!(run.code, 0, "{}", run.all());
    assert_eq!(snapshot(&root.join("dist/site")), sites[1]);
    assert_eq!(snapshot(&root.join("dist/bundle")), bundles[1]);
    let mut left: Vec<String> = std::fs::read_dir(root.join("dist"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    left.sort();
    assert_eq!(left, ["bundle", "site"]);
}

#[test]
fn a_second_build_waits_for_the_first_instead_of_writing_beside_it() {
    let dir = data_copy();
    let root = dir.path();
    edited_copy(&root.join("data"), &root.join("data-b"));
    let run = errata(root, &["build", "data", "--out", "dist"]);
    assert_eq!(run.code, 0, "{}", run.all());
    let site_a = snapshot(&root.join("dist/site"));

    // This test holds the lock a running build would hold.
    let lock = errata_outdir::DirLock::acquire(&root.join("dist"), || {
        panic!("nothing else holds the lock yet")
    })
    .unwrap();
    let mut child = command(root, &["build", "data-b", "--out", "dist"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (lines_tx, lines_rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = lines_tx.send(line);
        }
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut said = Vec::new();
    while !said
        .iter()
        .any(|l: &String| l.contains("waiting for another errata"))
    {
        let left = deadline.saturating_duration_since(Instant::now());
        match lines_rx.recv_timeout(left) {
            Ok(line) => said.push(line),
            Err(_) => panic!("the second build never said it waits: {said:?}"),
        }
    }
    // It has checked the data and waits; it has written nothing.
    std::thread::sleep(Duration::from_millis(500));
    assert!(child.try_wait().unwrap().is_none(), "{said:?}");
    assert_eq!(snapshot(&root.join("dist/site")), site_a);
    drop(lock);
    let status = child.wait().unwrap();
    reader.join().unwrap();
    assert!(status.success());
    assert_ne!(
        snapshot(&root.join("dist/site")),
        site_a,
        "built once let in"
    );

    // Two real builds at once, of different data: both succeed, and dist/ holds one
    // build's site with the same build's bundle.
    let a = spawn_quiet(root, &["build", "data", "--out", "dist"]);
    let b = spawn_quiet(root, &["build", "data-b", "--out", "dist"]);
    for mut child in [a, b] {
        assert!(child.wait().unwrap().success());
    }
    let run = errata(root, &["build", "data", "--out", "dist-a"]);
    assert_eq!(run.code, 0, "{}", run.all());
    let run = errata(root, &["build", "data-b", "--out", "dist-b"]);
    assert_eq!(run.code, 0, "{}", run.all());
    let pair = (
        snapshot(&root.join("dist/site")),
        snapshot(&root.join("dist/bundle")),
    );
    let a = (
        snapshot(&root.join("dist-a/site")),
        snapshot(&root.join("dist-a/bundle")),
    );
    let b = (
        snapshot(&root.join("dist-b/site")),
        snapshot(&root.join("dist-b/bundle")),
    );
    assert!(
        pair == a || pair == b,
        "the site and bundle are not one build's"
    );
}

#[test]
fn fmt_killed_at_any_point_leaves_every_entry_whole() {
    let dir = data_copy();
    let root = dir.path();
    let signatures = root.join("data/signatures");
    let canonical = snapshot(&signatures);
    // The same entries written on one line each: valid, and not canonical.
    let compact: BTreeMap<String, Vec<u8>> = canonical
        .iter()
        .map(|(rel, bytes)| {
            let value: serde_json::Value = serde_json::from_slice(bytes).unwrap();
            (rel.clone(), serde_json::to_vec(&value).unwrap())
        })
        .collect();
    let write_compact = || {
        for (rel, bytes) in &compact {
            std::fs::write(signatures.join(rel), bytes).unwrap();
        }
    };

    write_compact();
    let start = Instant::now();
    let run = errata(root, &["fmt"]);
    let fmt_time = start.elapsed().mul_f64(0.9);
    assert_eq!(run.code, 0, "{}", run.all());
    assert_eq!(snapshot(&signatures), canonical);

    let killed = kill_rounds(fmt_time, 10, |i, at| {
        write_compact();
        let killed = kill_after(spawn_quiet(root, &["fmt"]), at);
        for (rel, bytes) in snapshot(&signatures) {
            if rel.ends_with(".json") {
                assert!(
                    bytes == canonical[&rel] || bytes == compact[&rel],
                    "kill {i} at {at:?}: {rel} is neither the old nor the formatted file"
                );
            }
        }
        killed
    });
    assert!(
        killed >= 5,
        "only {killed} of 10 runs were killed mid-way, in every round"
    );

    // A temporary file a killed fmt left (planted here, with a dead process's pid, since
    // a SIGKILL between create and rename is a narrow window) goes on the next run; a
    // live process's stays.
    let dead = {
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    let cuda = signatures.join("cuda");
    let stray = cuda.join(format!(".out-of-memory.json.{dead}.errata-tmp"));
    std::fs::write(&stray, "{\"half\":").unwrap();
    let live = cuda.join(format!(
        ".out-of-memory.json.{}.errata-tmp",
        std::process::id()
    ));
    std::fs::write(&live, "{").unwrap();
    let run = errata(root, &["fmt"]);
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(!stray.exists(), "a dead run's temporary file is removed");
    assert!(live.exists(), "a live run's temporary file is left alone");
    std::fs::remove_file(&live).unwrap();
    assert_eq!(snapshot(&signatures), canonical);
}

/// A slow HTTP server: every URL answers 200 after `delay`.
fn slow_server(delay: Duration) -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || {
                use std::io::Write;
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                while reader.read_line(&mut line).unwrap_or(0) > 0 && line != "\r\n" {
                    line.clear();
                }
                std::thread::sleep(delay);
                let mut stream = stream;
                let _ = stream.write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n",
                );
            });
        }
    });
    port
}

#[test]
fn the_link_cache_survives_a_killed_links_run() {
    let port = slow_server(Duration::from_millis(150));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let article = |urls: std::ops::Range<u32>| {
        let links: String = urls
            .map(|n| format!("- <http://127.0.0.1:{port}/page/{n}>\n"))
            .collect();
        let path = root.join("data/articles/cuda/links.md");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            path,
            format!(
                "---\ntitle: Links\nid: cuda/links\ndate: \"2025-01-01\"\n---\n# Links\n\n{links}"
            ),
        )
        .unwrap();
    };
    let links = [
        "links",
        // The test server is on 127.0.0.1, a loopback host errata refuses otherwise.
        "--allow-host",
        "127.0.0.1",
        "--cache",
        "cache/links.json",
        "--per-host",
        "2",
        "--concurrency",
        "4",
    ];
    article(0..8);
    let run = errata(root, &links);
    assert_eq!(run.code, 0, "{}", run.all());
    let cache_path = root.join("cache/links.json");
    let first = std::fs::read(&cache_path).unwrap();

    // More links, so a run takes a while; killed part-way each time.
    article(0..40);
    let start = Instant::now();
    let run = errata(root, &links);
    let links_time = start.elapsed();
    assert_eq!(run.code, 0, "{}", run.all());
    std::fs::write(&cache_path, &first).unwrap();
    for (i, at) in kill_points(links_time, 6).into_iter().enumerate() {
        kill_after(spawn_quiet(root, &links), at);
        let text = std::fs::read(&cache_path).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&text)
            .unwrap_or_else(|e| panic!("kill {i} at {at:?}: the cache is not JSON: {e}"));
        assert!(value.get("version").is_some(), "kill {i}: {value}");
        // The cache still serves an offline run: every link it knew is known.
        let offline = errata(
            root,
            &[
                "links",
                "--allow-host",
                "127.0.0.1",
                "--cache",
                "cache/links.json",
                "--offline",
            ],
        );
        assert_ne!(offline.code, 2, "kill {i}: {}", offline.all());
    }
    let strays: Vec<_> = std::fs::read_dir(root.join("cache"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n != "links.json")
        .collect();
    // A kill between the temporary file's creation and its rename can leave one; it is
    // never read as the cache.
    assert!(strays.len() <= 1, "{strays:?}");
}
