//! Replays every committed fuzz input through its target, without instrumentation: the
//! minimised corpus (`fuzz/corpus/<target>/`) and every crash, timeout or out-of-memory
//! found so far (`fuzz/regressions/<target>/`). So each bug the fuzzer found stays fixed
//! on every `cargo test --workspace`, and the corpus stays valid input for the targets.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz")
}

fn inputs(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

/// Runs every input of `kind` (`corpus` or `regressions`) through its target; returns
/// how many ran, per target.
fn replay(kind: &str) -> Vec<(&'static str, usize)> {
    let mut failures = Vec::new();
    let mut counts = Vec::new();
    for &(name, target) in errata_fuzz::TARGETS {
        let files = inputs(&fuzz_dir().join(kind).join(name));
        for file in &files {
            let data = std::fs::read(file).expect("a committed input is readable");
            if let Err(panic) = catch_unwind(AssertUnwindSafe(|| target(&data))) {
                let message = panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failures.push(format!("{}: {message}", file.display()));
            }
        }
        counts.push((name, files.len()));
    }
    assert!(
        failures.is_empty(),
        "inputs that fail:\n{}",
        failures.join("\n")
    );
    counts
}

#[test]
fn corpus_replays_cleanly() {
    let counts = replay("corpus");
    // A target with no corpus would make this test pass without testing it.
    for (name, n) in counts {
        assert!(n >= 5, "fuzz/corpus/{name} has {n} inputs");
    }
}

#[test]
fn every_regression_stays_fixed() {
    let counts = replay("regressions");
    assert!(counts.iter().map(|(_, n)| n).sum::<usize>() >= 1);
}

/// The bundle target's seeds reach past the archive checks: the real bundle (mode 0)
/// and the tar without its database (mode 1, gzipped as the target does) open.
#[test]
fn bundle_seeds_open() {
    use std::io::Write;
    let dir = fuzz_dir().join("corpus/bundle");
    let real = std::fs::read(dir.join("seed-real-tar-gz")).expect("the real bundle seed");
    let bundle = errata_consumer::Bundle::from_bytes(&real[1..]).expect("the real bundle opens");
    assert_eq!(bundle.entries().len(), 3);
    let tar = std::fs::read(dir.join("seed-no-database-tar")).expect("the tar seed");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar[1..]).expect("gzip in memory");
    let gz = gz.finish().expect("gzip in memory");
    let bundle = errata_consumer::Bundle::from_bytes(&gz).expect("the tar seed opens");
    assert_eq!(bundle.entries().len(), 3);
}
