//! `cargo xtask bench` (site part): times `errata build` on a generated corpus.
//!
//! Usage: `bench_site::run(&["DIR", "--runs", "3", "--bin", "target/release/errata"])`,
//! where DIR is a data directory from `cargo xtask gen-corpus --out DIR` (or a directory
//! holding one as `data/`). It reports
//!
//! 1. the full build into an empty directory (median of `--runs`, default 3) with its
//!    CPU time, peak memory and its own phase timings (`errata build --timings`),
//!    against a same-run baseline: copying the files it wrote into another empty
//!    directory (the file system's cost of creating that many files); then the full
//!    build over the previous site; and
//! 2. the rebuild after one entry changes, in `errata serve` (the long-lived preview that
//!    rebuilds incrementally): one entry's `root_cause`, then its `signature`, edited five
//!    times each in the copy of the corpus; the server's own timing of each rebuild
//!    (changed file reloaded and checked, dependent pages re-rendered and written),
//!    median, and its ratio to the full build.
//!
//! Targets (2-core CI machine): full build of 10,000 entries + 1,000 articles < 5 s;
//! one-entry rebuild < 300 ms. The corpus is copied to a scratch directory first, so the
//! input is never modified.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::bench::{Measured, all_files as files, build_release, measure, ms, ratio};
use crate::repo_root;

pub fn run(args: &[String]) -> Result<()> {
    if crate::bench::in_release("bench-site", args)? {
        return Ok(());
    }
    let mut dir: Option<PathBuf> = None;
    let mut runs = 3usize;
    let mut bin: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--runs" => runs = value()?.parse().context("--runs")?,
            "--bin" => bin = Some(PathBuf::from(value()?)),
            other if !other.starts_with('-') && dir.is_none() => dir = Some(PathBuf::from(other)),
            other => bail!("unknown argument `{other}` (expected DIR [--runs N] [--bin PATH])"),
        }
    }
    let dir = dir.context("usage: bench-site DIR [--runs N] [--bin PATH] (DIR from `cargo xtask gen-corpus --out DIR`)")?;
    let data = if dir.join("signatures").is_dir() {
        dir.clone()
    } else {
        dir.join("data")
    };
    if !data.join("signatures").is_dir() {
        bail!(
            "{} has no signatures/ (nor data/signatures/)",
            dir.display()
        );
    }
    let bin = match bin {
        // The build runs in a scratch directory, so a relative path must be made absolute.
        Some(b) => b
            .canonicalize()
            .with_context(|| format!("--bin {}", b.display()))?,
        None => build_release(&repo_root())?,
    };

    // Work on a copy: the rebuild step edits an entry. A scratch directory left by an
    // earlier run is moved aside and deleted at the end, not now (see below).
    let scratch = repo_root().join("target/bench/site");
    let leftover = repo_root().join(format!("target/bench/site.old-{}", std::process::id()));
    if scratch.exists() {
        std::fs::rename(&scratch, &leftover)
            .with_context(|| format!("moving {} aside", scratch.display()))?;
    }
    let work = scratch.join("data");
    copy_dir(&data, &work)?;
    // `errata build` also writes the bundle, which embeds the schemas from `schema/`.
    copy_dir(&repo_root().join("schema"), &scratch.join("schema"))?;
    let out = scratch.join("dist");
    let (entries, articles) = (
        count(&work.join("signatures"), ".json"),
        count(&work.join("articles"), ".md"),
    );
    println!("\n== site build ({entries} entries, {articles} article files) ==");

    // A full build renders every page either way; what differs is writing: into an
    // empty directory every file is a new inode (what CI publishing from a clean clone
    // does), over the previous site unchanged files become hard links to its files.
    //
    // Nothing is deleted before or between the empty-dir builds. On ext4 without a
    // journal (the disk of this project's machines), the inode allocator skips inodes
    // freed in the last minutes (`recently_deleted` in perf profiles), so creating
    // 34,000 files soon after deleting as many costs several times the system time.
    // The same-run baseline is copying the files the build wrote into an empty
    // directory, one file after the other (what `cp -r` does): the file system's own cost
    // of creating this site, which moves with the file system's state as the build does.
    let mut fresh = Vec::new();
    let mut copies = Vec::new();
    let mut phases = String::new();
    let mut empties = Vec::new();
    for k in 0..runs.max(1) {
        let empty = scratch.join(format!("dist-empty-{k}"));
        let run = build(&bin, &scratch, &work, &empty)?;
        phases = run.stderr.clone();
        fresh.push(run);
        let start = Instant::now();
        copy_dir(&empty.join("site"), &scratch.join(format!("copy-{k}")))?;
        copies.push(start.elapsed());
        empties.push(empty);
    }
    let last = empties.pop().context("at least one run")?;
    std::fs::rename(&last, &out)?;
    let mut over = Vec::new();
    for _ in 0..runs.max(1) {
        over.push(build(&bin, &scratch, &work, &out)?.wall);
    }
    fresh.sort_by_key(|r| r.wall);
    copies.sort();
    over.sort();
    let median = &fresh[fresh.len() / 2];
    let full = median.wall;
    let copy = copies[copies.len() / 2];
    let full_over = over[over.len() / 2];
    println!(
        "full build, empty dir  {:>9.1} ms   (median of {}, range {:.0}-{:.0} ms; target < 2000 ms)",
        ms(full),
        fresh.len(),
        ms(fresh[0].wall),
        ms(fresh[fresh.len() - 1].wall)
    );
    println!(
        "                                     CPU user {:.0} ms + system {:.0} ms, peak RSS {:.0} MB (the median run)",
        ms(median.user),
        ms(median.sys),
        median.rss as f64 / 1e6
    );
    println!(
        "  copying its files    {:>9.1} ms   (baseline: the site copied into an empty dir, 1 thread; median of {}) build/copy = {:.2}x",
        ms(copy),
        copies.len(),
        ratio(full, copy)
    );
    println!(
        "full build, over site  {:>9.1} ms   (median of {}; unchanged files hard-linked) = {:.2}x the empty-dir build",
        ms(full_over),
        over.len(),
        ratio(full_over, full)
    );
    for line in phases
        .lines()
        .filter(|l| l.starts_with("timing:") || l.starts_with("built "))
    {
        println!("    {line}");
    }
    // The search index: a query loads a few shards, never the whole thing.
    for lang in ["en", "zh"] {
        let mut sizes: Vec<u64> = files(&out.join("site/search").join(lang))
            .iter()
            .filter_map(|p| std::fs::metadata(p).ok().map(|m| m.len()))
            .collect();
        sizes.sort_unstable();
        if let (Some(max), false) = (sizes.last(), sizes.is_empty()) {
            println!(
                "search index ({lang})     {:>9.1} MiB in {} shards (median {:.1} KiB, largest {:.1} KiB), loaded on demand",
                sizes.iter().sum::<u64>() as f64 / (1024.0 * 1024.0),
                sizes.len(),
                sizes[sizes.len() / 2] as f64 / 1024.0,
                *max as f64 / 1024.0
            );
        }
    }

    let entry = first_file(&work.join("signatures"))?.context("corpus has no entries")?;
    let text = std::fs::read_to_string(&entry)?;
    let original: serde_json::Value =
        serde_json::from_str(&text).with_context(|| entry.display().to_string())?;
    let rebuilds = serve_rebuilds(&bin, &scratch, &work, &entry, &original)?;
    std::fs::write(&entry, text)?;
    for (what, times) in &rebuilds {
        let median = times[times.len() / 2];
        println!(
            "rebuild after 1 entry  {:>9.1} ms   rebuild/full = {:.3}   ({what}; errata serve, median of {}; target < 300 ms)",
            median,
            median / ms(full),
            times.len()
        );
    }
    // Deleted last, after every measurement (see above): a build started in the next
    // few minutes on this file system will be slower for it.
    let _ = std::fs::remove_dir_all(&leftover);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

/// Times `errata serve`'s incremental rebuild: edits one entry a few times (its root
/// cause, then its signature, which also reaches list pages and linked entries) and
/// reads the time the server reports for each rebuild (from the change being seen to
/// the pages being written, the check of the changed file included; the polling delay
/// is not). Each edit waits for the previous rebuild's background full check, so
/// rebuilds are timed on an otherwise idle server.
fn serve_rebuilds(
    bin: &Path,
    cwd: &Path,
    data: &Path,
    entry: &Path,
    original: &serde_json::Value,
) -> Result<Vec<(&'static str, Vec<f64>)>> {
    use std::io::BufRead;
    use std::process::Stdio;
    use std::sync::mpsc;

    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut child = Command::new(bin)
        .arg("serve")
        .arg(data)
        .args(["--port", "0", "--exit-after", "900", "--poll-ms", "50"])
        .current_dir(cwd)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {} serve", bin.display()))?;
    let stderr = child.stderr.take().context("serve's stderr")?;
    let _serve = Kill(child);
    let (tx, rx) = mpsc::channel::<String>();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let wait_for = |prefix: &str| -> Result<String> {
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx
                .recv_timeout(left)
                .with_context(|| format!("errata serve: no `{prefix}` line"))?;
            if line.starts_with(prefix) {
                return Ok(line);
            }
        }
    };
    wait_for("serving ")?;
    let mut results = Vec::new();
    for (what, field) in [
        ("root cause edited", "root_cause"),
        ("signature edited", "signature"),
    ] {
        let mut times = Vec::new();
        for i in 0..5 {
            let mut value = original.clone();
            let old = value[field].as_str().unwrap_or("").to_string();
            value[field] = serde_json::Value::String(format!("{old} (bench edit {i})"));
            std::fs::write(entry, serde_json::to_string_pretty(&value)? + "\n")?;
            let line = wait_for("rebuilt in ")?;
            let ms: f64 = line
                .trim_start_matches("rebuilt in ")
                .split(' ')
                .next()
                .and_then(|n| n.parse().ok())
                .with_context(|| format!("unexpected line: {line}"))?;
            if i == 0 {
                println!("    {line}");
            }
            times.push(ms);
            wait_for("full check:")?;
        }
        times.sort_by(f64::total_cmp);
        results.push((what, times));
    }
    Ok(results)
}

fn build(bin: &Path, cwd: &Path, data: &Path, out: &Path) -> Result<Measured> {
    let run = measure(
        Command::new(bin)
            .arg("build")
            .arg(data)
            .arg("--out")
            .arg(out)
            .arg("--timings")
            .current_dir(cwd)
            .env("SOURCE_DATE_EPOCH", "1767225600"),
    )
    .with_context(|| format!("cannot run {}", bin.display()))?;
    if run.code != 0 {
        let tail: Vec<&str> = run.stderr.lines().rev().take(15).collect();
        bail!(
            "errata build exited {}:\n{}",
            run.code,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    Ok(run)
}

fn copy_dir(from: &Path, to: &Path) -> Result<()> {
    std::fs::create_dir_all(to).with_context(|| to.display().to_string())?;
    for item in std::fs::read_dir(from).with_context(|| from.display().to_string())? {
        let item = item?;
        let target = to.join(item.file_name());
        if item.file_type()?.is_dir() {
            copy_dir(&item.path(), &target)?;
        } else {
            std::fs::copy(item.path(), &target)
                .with_context(|| item.path().display().to_string())?;
        }
    }
    Ok(())
}

fn count(dir: &Path, suffix: &str) -> usize {
    files(dir)
        .iter()
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .count()
}

fn first_file(dir: &Path) -> Result<Option<PathBuf>> {
    Ok(files(dir)
        .into_iter()
        .find(|p| p.extension().is_some_and(|x| x == "json")))
}
