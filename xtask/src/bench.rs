//! `cargo xtask bench [--entries N] [--articles M] [--quick] [--only check|match|site|py]`:
//! every performance figure of errata, each reported as a ratio against a baseline
//! measured in the same run. Started from the usual debug build of xtask, it re-runs
//! itself from a release build, since parts of it time code inside this process.
//!
//! 1. `errata check` on a generated corpus (default 10,000 entries + 1,000 articles):
//!    wall time (median of five runs after one uncounted) and peak RSS of the release binary, against two baselines:
//!    reading every file (the I/O floor) and Python's `json.load` of every entry (the
//!    floor of any Python validator).
//! 2. Matching (`bench_match`): throughput on one thread and on one per core (what
//!    `errata match` uses), latency per message, ranking, bundle load and size, and
//!    `errata match` end to end: a large log, an empty one (start-up) and a short one
//!    with known errors (the first answers, advice included).
//! 3. Site build: the full `errata build`, and the incremental rebuild after one entry
//!    changes in `errata serve` (as a ratio to the full build).
//! 4. The Python package (`bench_py`): import time, bundle load, `match()` latency,
//!    `scan()` throughput against `errata match` on the same log, wheel size, and Spark's
//!    local mode per core against the CLI on one thread (1 GiB once started); peak RSS of
//!    each (`scan()` and the CLI also on a quarter of the log).
//!
//! Targets (2-core CI machine; the contract's Numbers): check of 10k+1k < 0.5 s, and
//! linear to 50k entries (10k, 25k and 50k measured; µs per entry compared); full build of
//! 10k+1k < 2 s; rebuild < 300 ms; `errata match` ≥ 1.5 GB/s end-to-end on a 512 MiB log
//! with a 10k-entry bundle, bundle load < 100 ms; Python `scan` within 10% of the CLI at
//! equal threads; Spark per core within 2x of the CLI on a 1 GiB input once started.
//! Peak RSS is reported with each process figure. deadends.dev's own
//! validator on its corpus is compared only where that corpus is present
//! (`target/bench/deadends/`, e.g. from a fetched copy): not in CI.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::repo_root;

pub fn run(args: &[String]) -> Result<()> {
    if in_release("bench", args)? {
        return Ok(());
    }
    let (mut entries, mut articles, mut quick) = (10_000usize, 1_000usize, false);
    let mut only: Option<String> = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--entries" => entries = value()?.parse().context("--entries")?,
            "--articles" => articles = value()?.parse().context("--articles")?,
            "--quick" => quick = true,
            "--only" => only = Some(value()?.clone()),
            other => {
                bail!(
                    "unknown argument `{other}` (expected --entries N --articles M --quick --only check|match|site|py)"
                )
            }
        }
    }
    if let Some(part) = &only
        && !["check", "match", "site", "py"].contains(&part.as_str())
    {
        bail!("--only {part}: expected check, match, site or py");
    }
    let wanted = |part: &str| only.as_deref().is_none_or(|o| o == part);
    let root = repo_root();
    let bin = build_release(&root)?;
    let corpus = root.join("target/bench/corpus");
    crate::gen_corpus::generate(&corpus, entries, articles, 42)?;
    println!(
        "corpus: {entries} entries, {articles} articles in {}",
        corpus.display()
    );

    if wanted("check") {
        let at_10k = check_bench(&bin, &corpus)?;
        if !quick {
            // Linear to 50k: the same generator at 25k and 50k entries (articles 10%).
            let mut per_entry = vec![(entries, at_10k)];
            for n in [25_000usize, 50_000] {
                let dir = root.join(format!("target/bench/corpus-{n}"));
                crate::gen_corpus::generate(&dir, n, n / 10, 42)?;
                per_entry.push((n, check_time(&bin, &dir)?));
            }
            linearity(&per_entry);
        }
    }
    let log_mb = if quick { "64" } else { "1024" };
    let corpus_arg = corpus.to_string_lossy().into_owned();
    if wanted("match") {
        crate::bench_match::run(&[
            "--corpus".into(),
            corpus_arg.clone(),
            "--log-mb".into(),
            log_mb.into(),
        ])?;
    }
    if wanted("py") {
        crate::bench_py::run(&root, &bin, if quick { 64 } else { 256 })?;
    }
    if wanted("site") {
        // The site part copies the corpus and reports the build's own phase timings.
        crate::bench_site::run(&[
            corpus_arg,
            "--bin".into(),
            bin.to_string_lossy().into_owned(),
        ])?;
    }
    Ok(())
}

/// Benchmarks time optimised code: the matcher and the bundle reader run inside this
/// process, and `cargo xtask` builds it unoptimised (36 MiB/s instead of 170 for the
/// matcher). Run from a debug build, re-runs `command` from a release build of xtask
/// and returns `Ok(true)` once that has succeeded; from a release build, `Ok(false)`.
pub(crate) fn in_release(command: &str, args: &[String]) -> Result<bool> {
    if !cfg!(debug_assertions) {
        return Ok(false);
    }
    let status = crate::cargo()
        .args(["run", "--release", "--quiet", "-p", "xtask", "--", command])
        .args(args)
        .current_dir(repo_root())
        .status()
        .context("cannot run cargo run --release -p xtask")?;
    if !status.success() {
        bail!("the release build of `xtask {command}` failed ({status})");
    }
    Ok(true)
}

/// Builds the release `errata` binary the benchmarks time.
pub(crate) fn build_release(root: &Path) -> Result<PathBuf> {
    let status = crate::cargo()
        .args(["build", "--release", "--quiet", "-p", "errata"])
        .current_dir(root)
        .status()
        .context("cannot run cargo build")?;
    if !status.success() {
        bail!("cargo build --release -p errata failed");
    }
    Ok(root.join("target/release/errata"))
}

/// What [`measure`] saw of one run of a command.
pub(crate) struct Measured {
    pub wall: Duration,
    /// Peak resident set size, bytes.
    pub rss: u64,
    pub code: i32,
    /// User and system CPU time: the figures that stay meaningful on a busy machine, and
    /// the system part is where file-system costs show.
    pub user: Duration,
    pub sys: Duration,
    pub stderr: String,
}

impl Measured {
    pub fn cpu(&self) -> Duration {
        self.user + self.sys
    }
}

/// Runs a command (stdout discarded, stderr kept) and measures it. The peak RSS comes
/// from `/usr/bin/time` where it exists: Linux carries a process's high-water mark across
/// `exec` from the address space it replaced, so a child of this (large) process would
/// report this process's peak as its own.
pub(crate) fn measure(cmd: &mut Command) -> Result<Measured> {
    let time = Path::new("/usr/bin/time");
    if time.exists() {
        let rss_file = tempfile::NamedTempFile::new()?;
        let mut wrapped = Command::new(time);
        wrapped
            .args(["-f", "%M", "-o"])
            .arg(rss_file.path())
            .arg(cmd.get_program())
            .args(cmd.get_args());
        if let Some(dir) = cmd.get_current_dir() {
            wrapped.current_dir(dir);
        }
        for (k, v) in cmd.get_envs() {
            match v {
                Some(v) => wrapped.env(k, v),
                None => wrapped.env_remove(k),
            };
        }
        let mut m = measure_direct(&mut wrapped)?;
        let kb: u64 = std::fs::read_to_string(rss_file.path())?
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or(0);
        m.rss = kb * 1024;
        return Ok(m);
    }
    measure_direct(cmd)
}

/// [`measure`] without `/usr/bin/time`: the RSS is wait4's.
fn measure_direct(cmd: &mut Command) -> Result<Measured> {
    // A file, not a pipe: nothing has to drain it while we wait.
    let mut stderr_file = tempfile::tempfile().context("a temporary file for stderr")?;
    // Standard output to a file too, not /dev/null: GNU grep notices /dev/null and stops
    // at its first match, which made the grep baseline absurdly fast.
    let stdout_file = tempfile::tempfile().context("a temporary file for stdout")?;
    let start = Instant::now();
    let child = cmd
        .stdout(stdout_file)
        .stderr(stderr_file.try_clone()?)
        .spawn()
        .context("cannot start")?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: `rusage` is plain data; wait4 fills it for our own child, which we reap here
    // instead of through `Child::wait`.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall = start.elapsed();
    if r < 0 {
        bail!("wait4 failed: {}", std::io::Error::last_os_error());
    }
    let code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        -1
    };
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    let mut stderr = String::new();
    {
        use std::io::{Read, Seek};
        stderr_file.rewind()?;
        stderr_file.read_to_string(&mut stderr)?;
    }
    Ok(Measured {
        wall,
        rss: usage.ru_maxrss as u64 * 1024,
        code,
        user: tv(usage.ru_utime),
        sys: tv(usage.ru_stime),
        stderr,
    })
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// `errata check` on a corpus: the median wall and CPU time of five runs after one
/// that is not counted (it brings the binary and the corpus into memory, and on this
/// VM its page faults cost several times a later run's), and the peak RSS of all.
#[derive(Clone, Copy)]
struct CheckRun {
    wall: Duration,
    cpu: Duration,
    rss: u64,
}

fn check_time(bin: &Path, corpus: &Path) -> Result<CheckRun> {
    check_runs(bin, corpus, true)
}

/// [`check_time`]; `clean`: the corpus must check clean (exit 0), else errors (exit 1)
/// are expected and only a tool failure is refused.
fn check_runs(bin: &Path, corpus: &Path, clean: bool) -> Result<CheckRun> {
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    let mut rss = 0;
    for run in 0..6 {
        let m = measure(
            Command::new(bin)
                .args(["check", "--today", "2026-11-21"])
                .arg(corpus),
        )?;
        if m.code != 0 && (clean || m.code != 1) {
            bail!(
                "errata check on {} exited {}: the corpus must check {}",
                corpus.display(),
                m.code,
                if clean {
                    "clean"
                } else {
                    "without a tool failure"
                }
            );
        }
        if run > 0 {
            walls.push(m.wall);
            cpus.push(m.cpu());
        }
        rss = rss.max(m.rss);
    }
    Ok(CheckRun {
        wall: median(walls),
        cpu: median(cpus),
        rss,
    })
}

/// Time per entry at each size, against the smallest: 1.0 is linear.
fn linearity(sizes: &[(usize, CheckRun)]) {
    let Some((n0, first)) = sizes.first() else {
        return;
    };
    let n0 = *n0;
    let per0 = first.wall.as_secs_f64() / n0 as f64;
    let mut worst: f64 = 0.0;
    for (n, CheckRun { wall: t, rss, .. }) in sizes {
        let (n, t, rss) = (*n, *t, *rss);
        let per = t.as_secs_f64() / n as f64;
        worst = worst.max(per / per0);
        println!(
            "  check {n:>6} entries  {:>9.1} ms   {:>6.1} µs/entry = {:.2}x the {n0}-entry figure   peak RSS {:>6.1} MB",
            ms(t),
            per * 1e6,
            per / per0,
            rss as f64 / 1e6
        );
    }
    println!(
        "  target: linear to 50k (µs per entry within 1.25x of 10k's)  -> {}",
        if worst <= 1.25 { "met" } else { "NOT met" }
    );
}

fn check_bench(bin: &Path, corpus: &Path) -> Result<CheckRun> {
    // Warm the page cache so every contender reads from memory.
    let files = all_files(corpus);
    let io = median((0..3).map(|_| read_all(&files)).collect());
    let run = check_time(bin, corpus)?;
    let CheckRun {
        wall: check,
        cpu,
        rss,
    } = run;
    println!("\n== check ==");
    println!(
        "errata check           {:>9.1} ms   peak RSS {:>6.1} MB   CPU {:.1} ms",
        ms(check),
        rss as f64 / 1e6,
        ms(cpu)
    );
    println!(
        "  read all files       {:>9.1} ms   (I/O floor)   check/read = {:.1}x",
        ms(io),
        ratio(check, io)
    );
    let py = "import json,sys,glob\nfor p in glob.glob(sys.argv[1]+'/signatures/**/*.json', recursive=True):\n    json.load(open(p))";
    if let Ok(Measured {
        wall: t, code: 0, ..
    }) = measure(Command::new("python3").args(["-c", py]).arg(corpus))
    {
        println!(
            "  python json.load     {:>9.1} ms   (parse only)  check/python = {:.2}x",
            ms(t),
            ratio(check, t)
        );
    }
    println!(
        "  target: < 500 ms  -> {}",
        if check < Duration::from_millis(500) {
            "met"
        } else {
            "NOT met"
        }
    );
    let deadends = repo_root().join("target/bench/deadends");
    if deadends.join("generator/validate.py").is_file() {
        deadends_bench(bin, &deadends)?;
    } else {
        println!(
            "  deadends.dev's validator on its own corpus: not measured ({} absent; a clone of github.com/dbwls99706/deadends.dev goes there)",
            deadends.display()
        );
    }
    Ok(run)
}

/// deadends.dev's validator (`python3 -m generator.validate --data-only`, which needs
/// the `jsonschema` package) on its own canons, against `errata check` on the same
/// number of errata entries (each validator on valid data of its own format) and on the
/// canons themselves, laid out as entries. The canons are not errata's schema, so that
/// last run reports a hundred thousand schema errors and spends most of its time
/// printing them: a figure for the record, not the target's.
fn deadends_bench(bin: &Path, deadends: &Path) -> Result<()> {
    let canons = all_files(&deadends.join("data/canons"))
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect::<Vec<_>>();
    let theirs = measure(
        Command::new("python3")
            .args(["-m", "generator.validate", "--data-only"])
            .current_dir(deadends),
    )?;
    if theirs.code != 0 {
        println!(
            "  deadends.dev's validator exited {} (is `jsonschema` installed?): not compared\n{}",
            theirs.code,
            theirs.stderr.lines().last().unwrap_or_default()
        );
        return Ok(());
    }
    let same_size = repo_root().join("target/bench/corpus-deadends-size");
    crate::gen_corpus::generate(&same_size, canons.len(), 0, 42)?;
    let ours = check_time(bin, &same_size)?;
    println!(
        "  deadends.dev's validator, {} canons  {:>9.1} ms   errata check on {} entries {:.1} ms = {:.0}x faster",
        canons.len(),
        ms(theirs.wall),
        canons.len(),
        ms(ours.wall),
        ratio(theirs.wall, ours.wall)
    );
    println!(
        "  target: >= 100x deadends.dev's validator  -> {}",
        if ratio(theirs.wall, ours.wall) >= 100.0 {
            "met"
        } else {
            "NOT met"
        }
    );
    // The canons as entries: signatures/<domain>/<slug>-<environment>.json.
    let laid_out = repo_root().join("target/bench/deadends-as-entries");
    let _ = std::fs::remove_dir_all(&laid_out);
    let root = deadends.join("data/canons");
    for canon in &canons {
        let Ok(rel) = canon.strip_prefix(&root) else {
            continue;
        };
        let mut parts = rel.iter().map(|p| p.to_string_lossy().into_owned());
        let Some(domain) = parts.next() else { continue };
        let name = parts.collect::<Vec<_>>().join("-");
        let to = laid_out.join("signatures").join(domain).join(name);
        std::fs::create_dir_all(to.parent().context("a parent")?)?;
        std::fs::copy(canon, &to)?;
    }
    let on_canons = check_runs(bin, &laid_out, false)?;
    println!(
        "  errata check on the canons themselves {:>9.1} ms = {:.0}x faster (every canon fails errata's schema: the time is mostly printing those errors)",
        ms(on_canons.wall),
        ratio(theirs.wall, on_canons.wall)
    );
    Ok(())
}

/// Every file under `dir`, sorted.
pub(crate) fn all_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p)
            } else {
                out.push(p)
            }
        }
    }
    out.sort();
    out
}

fn read_all(files: &[PathBuf]) -> Duration {
    let start = Instant::now();
    let total: usize = files
        .iter()
        .map(|f| std::fs::read(f).map_or(0, |b| b.len()))
        .sum();
    std::hint::black_box(total);
    start.elapsed()
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

pub(crate) fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}
