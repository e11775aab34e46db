//! `cargo xtask fuzz [TARGET…] [--time SECONDS] [--smoke] [--merge]`: builds the fuzz
//! targets of `fuzz/` with coverage instrumentation and runs each under libFuzzer.
//!
//! The instrumentation is the one `cargo fuzz` uses, spelled with stable rustc options
//! (`-Cpasses=sancov-module` and LLVM's sanitizer-coverage flags, `--cfg fuzzing`), so a
//! plain `cargo build` on the stable toolchain makes the binaries and CI needs no extra
//! tool. The build goes to `target/fuzz` (its own target directory: the flags would
//! otherwise invalidate the normal build) for the host triple named explicitly, so that
//! the flags reach the targets' code but not build scripts and proc macros (which are
//! not linked with libFuzzer).
//!
//! Each target starts from its committed corpus (`fuzz/corpus/<target>/`, read only) and
//! the crashes found so far (`fuzz/regressions/<target>/`); what it finds goes to
//! `target/fuzz/runs/<target>/` (new inputs in `corpus/`, crashes in `crashes/`).
//! `--merge` then minimises the committed corpus with the new inputs (`-merge=1` into a
//! fresh directory that replaces it; `--time 0 --merge` merges the last run's finds
//! without fuzzing). The fuzzers run at `nice -n 19`: other work on the
//! machine comes first. A crash, timeout or out-of-memory fails the command; turn each
//! into a fix, a file in `fuzz/regressions/<target>/` and a test (see fuzz/README.md).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::repo_root;

/// Each target and the longest input it is given (bytes): about the size of the real
/// inputs it stands for, and small enough for many executions a second.
const TARGETS: &[(&str, usize)] = &[
    ("entry", 8192),
    ("article", 16384),
    ("fence_info", 256),
    ("bundle", 40960),
    ("matcher", 4096),
];

/// Seconds per target without `--time`, and with `--smoke` (CI).
const DEFAULT_SECONDS: u64 = 60;
const SMOKE_SECONDS: u64 = 15;

/// Stable rustc flags for libFuzzer's coverage feedback (what `cargo fuzz` passes, less
/// its nightly-only sanitizer).
const RUSTFLAGS: &str = "-Cpasses=sancov-module \
    -Cllvm-args=-sanitizer-coverage-level=4 \
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters \
    -Cllvm-args=-sanitizer-coverage-pc-table \
    -Cllvm-args=-sanitizer-coverage-trace-compares \
    --cfg fuzzing";

pub fn run(args: &[String]) -> Result<()> {
    let mut names: Vec<&str> = Vec::new();
    let mut seconds = None;
    let mut smoke = false;
    let mut merge = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--time" => {
                let v = it.next().context("--time needs a number of seconds")?;
                seconds = Some(v.parse::<u64>().context("--time")?);
            }
            "--smoke" => smoke = true,
            "--merge" => merge = true,
            name => match TARGETS.iter().find(|(t, _)| *t == name) {
                Some((t, _)) => names.push(t),
                None => bail!(
                    "unknown fuzz target or option `{name}` (targets: {}; options: --time SECONDS, --smoke, --merge)",
                    TARGETS
                        .iter()
                        .map(|(t, _)| *t)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            },
        }
    }
    if names.is_empty() {
        names = TARGETS.iter().map(|(t, _)| *t).collect();
    }
    let seconds = seconds.unwrap_or(if smoke {
        SMOKE_SECONDS
    } else {
        DEFAULT_SECONDS
    });

    let root = repo_root();
    let bin_dir = build(&root)?;
    let max_len = |name: &str| {
        TARGETS
            .iter()
            .find(|(t, _)| *t == name)
            .map_or(4096, |(_, n)| *n)
    };
    // The targets fuzz side by side, one per core (libFuzzer's own process is one
    // thread): on CI's two cores the smoke run takes half as long. Summaries are printed
    // in the targets' order. `--time 0 --merge` merges what the last run found without
    // fuzzing again (libFuzzer itself reads a total time of 0 as "forever").
    let outcomes: Vec<(&str, Outcome)> = if seconds > 0 {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let mut done = Vec::new();
        for batch in names.chunks(cores) {
            let runs: Vec<Result<Outcome>> = std::thread::scope(|scope| {
                let handles: Vec<_> = batch
                    .iter()
                    .map(|&name| {
                        let (root, bin_dir) = (&root, &bin_dir);
                        scope.spawn(move || fuzz_one(root, bin_dir, name, max_len(name), seconds))
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| Err(anyhow::anyhow!("a fuzzing thread panicked")))
                    })
                    .collect()
            });
            for (&name, run) in batch.iter().zip(runs) {
                done.push((name, run?));
            }
        }
        done
    } else {
        Vec::new()
    };
    let mut failed = Vec::new();
    for (name, outcome) in &outcomes {
        println!("{}", outcome.summary(name));
        if outcome.crashes > 0 || !outcome.ok {
            failed.push(*name);
        }
    }
    if merge {
        for name in names.iter().filter(|n| !failed.contains(n)) {
            let (before, after) = merge_corpus(&root, &bin_dir, name)?;
            println!("{name}: corpus merged: {before} -> {after} inputs");
        }
    }
    if !failed.is_empty() {
        bail!(
            "fuzzing found problems in: {} (inputs in target/fuzz/runs/<target>/crashes/)",
            failed.join(", ")
        );
    }
    Ok(())
}

/// Builds every fuzz target; returns the directory of the binaries.
fn build(root: &Path) -> Result<PathBuf> {
    let host = host_triple()?;
    let target_dir = root.join("target/fuzz");
    let started = Instant::now();
    let status = crate::cargo()
        .current_dir(root.join("fuzz"))
        .args([
            "build",
            "--release",
            "--locked",
            "--bins",
            "--target",
            &host,
        ])
        .arg("--target-dir")
        .arg(&target_dir)
        // CARGO_ENCODED_RUSTFLAGS would take precedence over RUSTFLAGS.
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env("RUSTFLAGS", RUSTFLAGS)
        .status()
        .context("running cargo build for fuzz/")?;
    if !status.success() {
        bail!("building the fuzz targets failed");
    }
    eprintln!(
        "fuzz: targets built in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(target_dir.join(host).join("release"))
}

fn host_triple() -> Result<String> {
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .context("running rustc -vV")?;
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("host: ").map(str::to_string))
        .context("rustc -vV names no host")
}

/// What one fuzzing run did.
struct Outcome {
    runs: u64,
    seconds: f64,
    corpus: usize,
    new_inputs: usize,
    crashes: usize,
    /// libFuzzer exited successfully.
    ok: bool,
}

impl Outcome {
    fn summary(&self, name: &str) -> String {
        format!(
            "{name}: {} runs in {:.0} s ({:.0}/s), {} committed inputs, {} new, {} crashes",
            self.runs,
            self.seconds,
            self.runs as f64 / self.seconds.max(0.001),
            self.corpus,
            self.new_inputs,
            self.crashes
        )
    }
}

fn fuzz_one(
    root: &Path,
    bin_dir: &Path,
    name: &str,
    max_len: usize,
    seconds: u64,
) -> Result<Outcome> {
    let run_dir = root.join("target/fuzz/runs").join(name);
    let new_corpus = run_dir.join("corpus");
    let crashes = run_dir.join("crashes");
    // Fresh directories each run: what they hold afterwards is what this run found
    // (copy a crash to fuzz/regressions/ before the next run).
    for dir in [&new_corpus, &crashes] {
        if dir.exists() {
            std::fs::remove_dir_all(dir).with_context(|| format!("clearing {}", dir.display()))?;
        }
    }
    for dir in [&new_corpus, &crashes] {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let corpus = root.join("fuzz/corpus").join(name);
    let regressions = root.join("fuzz/regressions").join(name);
    let started = Instant::now();
    let mut cmd = Command::new("nice");
    cmd.args(["-n", "19"])
        .arg(bin_dir.join(name))
        .arg(&new_corpus)
        .args([&corpus, &regressions].into_iter().filter(|d| d.is_dir()))
        .arg(format!("-max_total_time={seconds}"))
        .arg(format!("-max_len={max_len}"))
        // Every target answers a real-sized input in milliseconds: 10 s is a hang.
        .arg("-timeout=10")
        .arg("-rss_limit_mb=2048")
        .arg("-print_final_stats=1")
        .arg(format!("-artifact_prefix={}/", crashes.display()));
    let out = cmd
        .output()
        .with_context(|| format!("running the fuzz target {name}"))?;
    let elapsed = started.elapsed().as_secs_f64();
    let log = String::from_utf8_lossy(&out.stderr);
    std::fs::write(run_dir.join("log.txt"), log.as_bytes())?;
    let stat = |key: &str| {
        log.lines()
            .filter_map(|l| l.strip_prefix(key))
            .filter_map(|v| v.trim().trim_start_matches(':').trim().parse::<u64>().ok())
            .next_back()
    };
    let crash_files = count_files(&crashes);
    if !out.status.success() {
        // The tail of libFuzzer's report: the failing input and the panic message.
        let tail: Vec<&str> = log.lines().rev().take(40).collect();
        for line in tail.into_iter().rev() {
            eprintln!("  {line}");
        }
    }
    Ok(Outcome {
        runs: stat("stat::number_of_executed_units").unwrap_or(0),
        seconds: elapsed,
        corpus: count_files(&corpus),
        new_inputs: count_files(&new_corpus),
        crashes: crash_files,
        ok: out.status.success(),
    })
}

/// Bytes of committed corpus per target at most: the corpus lives in the repository.
const CORPUS_BUDGET: u64 = 256 * 1024;

/// Minimises the committed corpus together with the last run's new inputs: libFuzzer
/// keeps a small set of inputs with the same edge coverage (`-use_counters=0`: hit
/// counts would keep thousands of inputs, megabytes, for little), written to a fresh
/// directory that then replaces `fuzz/corpus/<target>`. The seeds are always kept; past
/// [`CORPUS_BUDGET`] the smallest other inputs are kept (libFuzzer's merge also prefers
/// them). Returns the input counts before and after.
fn merge_corpus(root: &Path, bin_dir: &Path, name: &str) -> Result<(usize, usize)> {
    let corpus = root.join("fuzz/corpus").join(name);
    let new_corpus = root.join("target/fuzz/runs").join(name).join("corpus");
    let merged = root.join("target/fuzz/runs").join(name).join("merged");
    if merged.exists() {
        std::fs::remove_dir_all(&merged)?;
    }
    std::fs::create_dir_all(&merged)?;
    let before = count_files(&corpus);
    // The seeds (`seed-*`: real inputs from the repository, such as a whole bundle) stay:
    // they start the merged corpus, so libFuzzer adds only what they do not cover.
    let mut seeds = Vec::new();
    for e in std::fs::read_dir(&corpus).into_iter().flatten().flatten() {
        if e.file_name().to_string_lossy().starts_with("seed-") {
            std::fs::copy(e.path(), merged.join(e.file_name()))?;
            seeds.push(e.path());
        }
    }
    let seed_bytes: u64 = seeds
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum();
    let status = Command::new("nice")
        .args(["-n", "19"])
        .arg(bin_dir.join(name))
        .args(["-merge=1", "-use_counters=0"])
        .arg(&merged)
        .args([&corpus, &new_corpus].into_iter().filter(|d| d.is_dir()))
        .output()
        .with_context(|| format!("merging the corpus of {name}"))?
        .status;
    if !status.success() {
        bail!("merging the corpus of {name} failed");
    }
    let mut files: Vec<(u64, PathBuf)> = std::fs::read_dir(&merged)?
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with("seed-"))
        .filter_map(|e| Some((e.metadata().ok()?.len(), e.path())))
        .collect();
    files.sort();
    let mut total = seed_bytes;
    for (len, path) in files {
        total += len;
        if total > CORPUS_BUDGET {
            std::fs::remove_file(&path)?;
        }
    }
    if corpus.exists() {
        std::fs::remove_dir_all(&corpus)?;
    }
    std::fs::rename(&merged, &corpus).with_context(|| format!("replacing {}", corpus.display()))?;
    Ok((before, count_files(&corpus)))
}

fn count_files(dir: &Path) -> usize {
    std::fs::read_dir(dir).map_or(0, |d| d.flatten().filter(|e| e.path().is_file()).count())
}
