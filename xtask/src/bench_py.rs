//! `cargo xtask bench --only py`: the Python package's figures against the CLI, in the
//! same run (`crates/errata-py/bench.py`): import time, bundle load, `match()` latency per
//! message, `scan()` throughput against `errata match` on the same log and knowledge
//! base, the wheel's size, and Spark's local mode (`examples/spark/scan_logs.py`) per
//! core against the CLI on one thread, on 1 GiB of logs (`--quick`: 0.25 GiB); the peak
//! RSS of `scan()` and of the CLI on the log and on a quarter of it, and of Spark's JVM
//! and workers.
//!
//! Builds the wheel (`py-wheel`) and a virtual environment with it in `target/bench/`,
//! and a log of `--log-mb` MiB from the whole-job fixture log with noise between.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, ensure};

pub fn run(root: &Path, bin: &Path, log_mb: usize) -> Result<()> {
    let wheels = root.join("target/bench/wheels");
    crate::py_wheel::run(&["--out".into(), wheels.to_string_lossy().into_owned()])?;
    let wheel = only_file(&wheels, ".whl")?;
    let bundle = only_file(&root.join("crates/errata-py/python/errata/data"), ".tar.gz")?;
    let venv = root.join("target/bench/py-venv");
    if venv.exists() {
        std::fs::remove_dir_all(&venv)
            .with_context(|| format!("cannot remove {}", venv.display()))?;
    }
    let status = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()?;
    ensure!(status.success(), "python3 -m venv failed ({status})");
    let python = venv.join("bin/python");
    let status = Command::new(&python)
        .args(["-m", "pip", "install", "-q", "--disable-pip-version-check"])
        .arg(&wheel)
        .status()?;
    ensure!(
        status.success(),
        "pip install of the wheel failed ({status})"
    );
    // The Spark figure needs pyspark (and a Java runtime), pinned where the Spark test
    // pins them. Without a network or Java it is skipped, and says so; the rest still runs.
    let spark = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "-q",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg(root.join(".ci/requirements-py-tests.txt"))
        .status()?;
    if !spark.success() {
        println!("(pyspark could not be installed ({spark}): the Spark figure is skipped)");
    }

    let log = root.join("target/bench/py.log");
    write_log(root, &log, log_mb)?;
    println!("\n== Python package (crates/errata-py) against the CLI, {log_mb} MiB log");
    let status = Command::new(&python)
        .arg(root.join("crates/errata-py/bench.py"))
        .arg("--bin")
        .arg(bin)
        .arg("--bundle")
        .arg(&bundle)
        .arg("--log")
        .arg(&log)
        .arg("--wheel")
        .arg(&wheel)
        .arg("--spark-gib")
        .arg(if log_mb < 256 { "0.25" } else { "1" })
        .current_dir(root)
        .status()?;
    ensure!(status.success(), "bench.py failed ({status})");
    Ok(())
}

/// The one file in `dir` whose name ends with `suffix`.
fn only_file(dir: &Path, suffix: &str) -> Result<PathBuf> {
    let found: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(suffix))
        .collect();
    ensure!(
        found.len() == 1,
        "expected one {suffix} in {}, found {found:?}",
        dir.display()
    );
    Ok(found[0].clone())
}

/// A log of about `mb` MiB: the lines of `tests/fixtures/logs/*.tsv` (errors and noise)
/// every 50 lines among training-progress lines.
fn write_log(root: &Path, path: &Path, mb: usize) -> Result<()> {
    use std::fmt::Write as _;
    let fixture =
        std::fs::read_to_string(root.join("tests/fixtures/logs/ddp-training-incident.tsv"))
            .context("reading the fixture log")?;
    let lines: Vec<&str> = fixture
        .lines()
        .filter_map(|row| row.split_once('\t').map(|(_, line)| line))
        .collect();
    let mut out = String::with_capacity(mb << 20);
    let mut i = 0usize;
    while out.len() < mb << 20 {
        if i.is_multiple_of(50) {
            out.push_str(lines[(i / 50) % lines.len()]);
            out.push('\n');
        } else {
            let _ = writeln!(
                out,
                "[2026-11-25 02:{:02}:{:02}] INFO: step {i} | loss {}.{:03} | throughput {} img/s",
                i % 60,
                (i / 60) % 60,
                i % 7,
                i % 1000,
                3000 + i % 97
            );
        }
        i += 1;
    }
    std::fs::write(path, out).with_context(|| format!("cannot write {}", path.display()))
}
