//! `cargo xtask bench` — match throughput, per-message latency, ranking accuracy, and
//! bundle build/load time and size, each against a baseline measured in the same run.
//!
//! Usage: `bench_match::run(&["--entries", "10000", "--log-mb", "1024", "--corpus", DIR])`.
//! Without `--corpus DIR` (a data directory, e.g. from `cargo xtask gen-corpus`), it
//! generates `--entries` entries the way `gen-corpus` does. The log is generated once (64 MiB of
//! realistic lines with about 1% known errors) and streamed `--log-mb` times through
//! `errata_consumer::Index::scan`, so the figure is the scanner's, not the generator's.
//! The baseline is the naive scanner: every entry's regex, one by one, on every line.

use std::io::Read;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use errata_consumer::{Bundle, Entry};

use crate::bench::{ms, ratio};
use serde_json::Value;

struct Options {
    entries: usize,
    log_mb: u64,
    baseline_kb: usize,
    corpus: Option<PathBuf>,
}

fn parse(args: &[String]) -> Result<Options> {
    let mut o = Options {
        entries: 10_000,
        log_mb: 1024,
        baseline_kb: 256,
        corpus: None,
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--entries" => o.entries = value()?.parse().context("--entries")?,
            "--log-mb" => o.log_mb = value()?.parse().context("--log-mb")?,
            "--baseline-kb" => o.baseline_kb = value()?.parse().context("--baseline-kb")?,
            "--corpus" => o.corpus = Some(PathBuf::from(value()?)),
            other => bail!(
                "unknown argument `{other}` (expected --entries N, --log-mb N, --baseline-kb N, --corpus DIR)"
            ),
        }
    }
    Ok(o)
}

/// Runs the match and bundle benchmarks and prints their figures.
pub fn run(args: &[String]) -> Result<()> {
    let o = parse(args)?;
    let scratch = tempfile::tempdir()?;
    let data = match &o.corpus {
        Some(dir) => dir.clone(),
        None => {
            let dir = scratch.path().join("data");
            crate::gen_corpus::generate(&dir, o.entries, 0, 42)?;
            dir
        }
    };

    // Bundle: build, size, load (verify + parse + compile).
    let t = Instant::now();
    let kb = errata_load::KnowledgeBase::load(&data)?;
    let load_kb = t.elapsed();
    let opts = errata_bundle::BundleOptions {
        out_dir: scratch.path().join("bundle"),
        schema_dir: crate::repo_root().join("schema"),
        source_commit: Some("0".repeat(40)),
        epoch: Some(0),
        ..Default::default()
    };
    let t = Instant::now();
    let path = errata_bundle::write_bundle(&kb, &opts)?;
    let build = t.elapsed();
    let size = std::fs::metadata(&path)?.len();
    let bytes = std::fs::read(&path)?;
    let t = Instant::now();
    let bundle = Bundle::from_bytes(&bytes)?;
    let load = t.elapsed();
    let entries = bundle.entries().to_vec();
    let n = entries.len();
    let raw = read_entries_json(&bytes)?;
    let t = Instant::now();
    let _: Vec<Value> = serde_json::from_slice(&raw)?;
    let parse_only = t.elapsed();
    let stats = bundle.index().matcher().stats();
    println!(
        "bundle: {n} entries, {:.2} MiB compressed ({:.0} bytes/entry)",
        mib(size),
        size as f64 / n.max(1) as f64
    );
    println!(
        "  knowledge base load {:.0} ms, bundle write {:.0} ms",
        ms(load_kb),
        ms(build)
    );
    println!(
        "  bundle open (verify + parse + compile) {:.0} ms = {:.1}x parsing entries.json alone ({:.0} ms)",
        ms(load),
        ratio(load, parse_only),
        ms(parse_only)
    );
    println!(
        "  matcher: {} prefiltered ({} confirm a second literal), {} without literals, {} literals, {} analyses read from the bundle",
        stats.prefiltered, stats.confirmed, stats.unfiltered, stats.literals, stats.known_analyses
    );

    // Ranking accuracy (each entry's own signature finds it first) and latency per
    // message: the first pass pays for each regex's first use (cache allocation), the
    // second is the steady state of a long-running scanner.
    let index = bundle.index();
    let mut first = 0usize;
    let mut passes = Vec::new();
    for pass in 0..2 {
        let mut latencies = Vec::with_capacity(n);
        for e in index.entries() {
            let t1 = Instant::now();
            let found = index.match_text(&e.signature);
            latencies.push(t1.elapsed());
            if pass == 0 && found.first().is_some_and(|f| f.entry.id == e.id) {
                first += 1;
            }
        }
        latencies.sort();
        passes.push(latencies);
    }
    for (name, latencies) in ["cold (first use of each regex)", "warm"]
        .iter()
        .zip(&passes)
    {
        let p = |q: f64| {
            latencies
                .get(((latencies.len() as f64 - 1.0) * q) as usize)
                .copied()
                .unwrap_or_default()
        };
        let mean = latencies.iter().sum::<Duration>().as_secs_f64() * 1e6 / n.max(1) as f64;
        println!(
            "latency per message, {name}: mean {mean:.1} µs, p50 {:.1} µs, p99 {:.1} µs (target < 20 µs)",
            us(p(0.5)),
            us(p(0.99))
        );
    }
    println!(
        "ranking: the right entry first for {:.1}% of the entries' own signatures",
        100.0 * first as f64 / n.max(1) as f64
    );

    // Throughput over a generated log: on one thread, then on one per core (what
    // `errata match` and `Index::scan` do).
    let log = generate_log(&entries, 64 << 20);
    let total = o.log_mb << 20;
    let threads = errata_consumer::Index::default_threads();
    let mut one_thread: Option<Duration> = None;
    for t in if threads > 1 {
        vec![1, threads]
    } else {
        vec![1]
    } {
        let start = Instant::now();
        let scan = index.scan_with_threads(Cycle::new(&log, total), t, |_| {})?;
        let took = start.elapsed();
        let mbps = mib(scan.bytes) / took.as_secs_f64();
        let versus = one_thread.map_or(String::new(), |t1| {
            format!(", {:.2}x one thread", ratio(t1, took))
        });
        println!(
            "throughput, {t} thread{}: {:.0} MiB of log, {} lines, {} matches in {:.2} s = {:.0} MiB/s = {:.0} MB/s{versus} (target >= 200 MB/s)",
            if t == 1 { "" } else { "s" },
            mib(scan.bytes),
            scan.lines,
            scan.matches,
            took.as_secs_f64(),
            mbps,
            scan.bytes as f64 / 1e6 / took.as_secs_f64(),
        );
        one_thread.get_or_insert(took);
    }

    // This repository's own knowledge base, for the start-up a user of the real bundle
    // sees (the 10k corpus is the stress case).
    let own = errata_load::KnowledgeBase::load(&crate::repo_root().join("data"))?;
    let own_bundle = errata_bundle::write_bundle(
        &own,
        &errata_bundle::BundleOptions {
            out_dir: scratch.path().join("own-bundle"),
            ..opts.clone()
        },
    )?;
    end_to_end(&path, &own_bundle, &log, o.log_mb.min(512))?;

    // Baseline: every regex on every line, on a sample.
    let naive: Vec<regex::Regex> = entries
        .iter()
        .filter_map(|e| regex::Regex::new(&e.regex).ok())
        .collect();
    let sample_end = log[..o.baseline_kb.min(log.len() >> 10) << 10]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let sample = std::str::from_utf8(&log[..sample_end])?;
    let t = Instant::now();
    let mut naive_matches = 0usize;
    for line in sample.lines() {
        naive_matches += naive.iter().filter(|r| r.is_match(line)).count();
    }
    let naive_took = t.elapsed();
    let naive_mbps = mib(sample.len() as u64) / naive_took.as_secs_f64();
    let t = Instant::now();
    let ours = index.scan(sample.as_bytes(), |_| {})?;
    let ours_took = t.elapsed();
    println!(
        "baseline (each of {} regexes on each line, {:.2} MiB sample): {:.2} MiB/s, {naive_matches} matches; the matcher: {} matches, {:.0}x faster on the same sample",
        naive.len(),
        mib(sample.len() as u64),
        naive_mbps,
        ours.matches,
        ratio(naive_took, ours_took)
    );
    Ok(())
}

/// `errata match` as a user runs it: the release binary, the bundle, a log file of
/// `log_mb` MiB (the generated lines repeated), JSON to a file. Against the same run's
/// floors: reading the file (`cat`) and GNU grep with one regex.
fn end_to_end(
    bundle: &std::path::Path,
    own_bundle: &std::path::Path,
    lines: &[u8],
    log_mb: u64,
) -> Result<()> {
    use crate::bench::measure;
    use std::process::Command;
    let root = crate::repo_root();
    let bin = root.join("target/release/errata");
    let log = root.join(format!("target/bench/match-{log_mb}.log"));
    let want = log_mb << 20;
    if std::fs::metadata(&log).map(|m| m.len()).unwrap_or(0) != want {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&log)?);
        std::io::copy(&mut Cycle::new(lines, want), &mut f)?;
    }
    // The median of `n` runs: a process of a tenth of a second varies by half that on
    // this machine from run to run, so the short ones get more runs.
    let median = |n: usize,
                  cmd: &mut dyn FnMut() -> Result<crate::bench::Measured>|
     -> Result<crate::bench::Measured> {
        let mut runs = Vec::new();
        for _ in 0..n {
            runs.push(cmd()?);
        }
        runs.sort_by_key(|r| r.wall);
        Ok(runs.swap_remove(n / 2))
    };
    let best = |cmd: &mut dyn FnMut() -> Result<crate::bench::Measured>| median(3, cmd);
    // `errata match --format <format>` of `log` with `bundle`, to a file: the median of
    // `runs` runs.
    let answer_as = |format: &str, runs: usize, bundle: &std::path::Path, log: &std::path::Path| {
        median(runs, &mut || {
            measure(
                Command::new(&bin)
                    .args(["match", "--format", format, "--bundle"])
                    .arg(bundle)
                    .arg(log),
            )
        })
    };
    // The same with JSON, what most of the figures below measure.
    let answer = |runs: usize, bundle: &std::path::Path, log: &std::path::Path| {
        answer_as("json", runs, bundle, log)
    };
    let empty = std::path::Path::new("/dev/null");
    let start_up = answer(11, bundle, empty)?;
    let own_start_up = answer(11, own_bundle, empty)?;
    // What most users run: `errata match` where there is no data directory, answering
    // from the knowledge base built into the binary (this repository's `data/`).
    let nowhere = tempfile::tempdir()?;
    let built_in = median(11, &mut || {
        measure(
            Command::new(&bin)
                .args(["match", "--format", "json"])
                .arg(empty)
                .current_dir(nowhere.path()),
        )
    })?;
    // A short log with known errors in it: the start-up plus every matched entry's advice,
    // which is what a user waits for after a failed job.
    let short_log = root.join("target/bench/match-short.log");
    std::fs::write(&short_log, &lines[..lines.len().min(64 << 10)])?;
    let first_answer = answer(11, bundle, &short_log)?;
    if first_answer.code != 1 {
        bail!(
            "errata match found no known error in {} (exit {}): {}",
            short_log.display(),
            first_answer.code,
            first_answer.stderr
        );
    }
    // The log is read once first, so that every timed run finds it in the page cache (a
    // run that read it from disk measured the disk: 0.5 GB/s for `cat` on this VM).
    measure(Command::new("cat").arg(&log))?;
    let run = answer(5, bundle, &log)?;
    // The default output (what `errata match big.log > report.txt` writes): each entry's
    // advice once, then a line per match; a tenth of the JSON's bytes on this log.
    let human = answer_as("human", 5, bundle, &log)?;
    // The knowledge base users run: fewer entries than the 10k bundle, but short literals
    // (error numbers, `): `) that a log is full of.
    let own_run = answer(3, own_bundle, &log)?;
    let cat = best(&mut || measure(Command::new("cat").arg(&log)))?;
    let grep = best(&mut || {
        measure(
            Command::new("grep")
                .args(["-c", "-E", "CUDA error: [a-z ]+ failed"])
                .arg(&log),
        )
    });
    let mbps = |d: Duration| want as f64 / 1e6 / d.as_secs_f64();
    println!(
        "\nerrata match end to end ({log_mb} MiB log, the 10k bundle, JSON to a file): {:.2} s = {:.0} MB/s   peak RSS {:.0} MB   (target >= 1500 MB/s  -> {})",
        run.wall.as_secs_f64(),
        mbps(run.wall),
        run.rss as f64 / 1e6,
        if mbps(run.wall) >= 1500.0 {
            "met"
        } else {
            "NOT met"
        }
    );
    println!(
        "  the same with the default (human) output: {:.2} s = {:.0} MB/s = {:.2}x the JSON run's speed   peak RSS {:.0} MB",
        human.wall.as_secs_f64(),
        mbps(human.wall),
        ratio(run.wall, human.wall),
        human.rss as f64 / 1e6,
    );
    println!(
        "  start-up (verify the bundle, compile the matcher, nothing to read) {:.0} ms   peak RSS {:.0} MB   (target < 100 ms  -> {})",
        ms(start_up.wall),
        start_up.rss as f64 / 1e6,
        if start_up.wall < Duration::from_millis(100) {
            "met"
        } else {
            "NOT met"
        }
    );
    println!(
        "  first answers (a 64 KiB log with known errors, their advice reported) {:.0} ms = {:.2}x the start-up   peak RSS {:.0} MB",
        ms(first_answer.wall),
        first_answer.wall.as_secs_f64() / start_up.wall.as_secs_f64(),
        first_answer.rss as f64 / 1e6,
    );
    println!(
        "  start-up with this repository's knowledge base ({} MiB bundle) {:.0} ms   peak RSS {:.0} MB",
        std::fs::metadata(own_bundle)?.len() >> 20,
        ms(own_start_up.wall),
        own_start_up.rss as f64 / 1e6,
    );
    println!(
        "  start-up with the knowledge base built into errata (no data directory, no bundle) {:.0} ms   peak RSS {:.0} MB   = {:.2}x its bundle's",
        ms(built_in.wall),
        built_in.rss as f64 / 1e6,
        built_in.wall.as_secs_f64() / own_start_up.wall.as_secs_f64(),
    );
    println!(
        "  the same log with this repository's knowledge base: {:.2} s = {:.0} MB/s   peak RSS {:.0} MB",
        own_run.wall.as_secs_f64(),
        mbps(own_run.wall),
        own_run.rss as f64 / 1e6,
    );
    println!(
        "  cat (read floor) {:.0} MB/s = {:.1}x errata",
        mbps(cat.wall),
        ratio(run.wall, cat.wall)
    );
    if let Ok(grep) = grep {
        println!(
            "  GNU grep, one regex {:.0} MB/s = {:.1}x errata",
            mbps(grep.wall),
            ratio(run.wall, grep.wall)
        );
    }
    Ok(())
}

fn mib(b: u64) -> f64 {
    b as f64 / (1 << 20) as f64
}
fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn read_entries_json(bundle: &[u8]) -> Result<Vec<u8>> {
    let archive =
        errata_consumer::archive::Archive::read(bundle, &|p| p == errata_consumer::ENTRIES)?;
    Ok(archive
        .data(errata_consumer::ENTRIES)
        .unwrap_or_default()
        .to_vec())
}

/// About `size` bytes of training-log lines; one line in 100 is an entry's signature.
fn generate_log(entries: &[Entry], size: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(size + 256);
    let mut state = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut i = 0u64;
    while out.len() < size {
        i += 1;
        let r = next();
        let line = match r % 100 {
            0 if !entries.is_empty() => format!(
                "[rank{}] {}",
                r % 8,
                entries[(r >> 8) as usize % entries.len()].signature
            ),
            1..=60 => format!(
                "2025-01-01 12:00:{:02} INFO train step {i} loss {:.4} lr 3.0e-4 grad_norm {:.3} tokens/s {}",
                i % 60,
                (r % 10_000) as f64 / 1e4,
                (r % 977) as f64 / 100.0,
                r % 90_000
            ),
            61..=80 => format!(
                "[W socket.cpp:{}] [c10d] The client socket has timed out after {}s while trying to connect to (10.0.0.{}, 29500).",
                r % 900,
                r % 600,
                r % 255
            ),
            81..=95 => format!(
                "  File \"/opt/conda/lib/python3.11/site-packages/torch/nn/modules/module.py\", line {}, in _call_impl",
                r % 2000
            ),
            _ => format!(
                "NCCL INFO Channel {:02}/32 : {} -> {} via P2P/CUMEM/read",
                r % 32,
                r % 8,
                (r >> 3) % 8
            ),
        };
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out
}

/// Streams `total` bytes by repeating `data` (which ends with a newline).
struct Cycle<'a> {
    data: &'a [u8],
    pos: usize,
    left: u64,
}

impl<'a> Cycle<'a> {
    fn new(data: &'a [u8], total: u64) -> Self {
        Cycle {
            data,
            pos: 0,
            left: total,
        }
    }
}

impl Read for Cycle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 || self.data.is_empty() {
            return Ok(0);
        }
        let n = buf
            .len()
            .min(self.data.len() - self.pos)
            .min(self.left as usize);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos = (self.pos + n) % self.data.len();
        self.left -= n as u64;
        Ok(n)
    }
}
