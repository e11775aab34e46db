//! The run tier's hand-off: a self-contained runner pack (compiled binaries, Python
//! scripts, `manifest.json` and the standard-library-only `run.py`) that runs on a GPU
//! machine with no Rust toolchain and no network, and the ingestion of its
//! `results.json` into verdicts and run records.

use std::path::{Path, PathBuf};
use std::process::Command;

use errata_model::snippet::{Expect, Lang, Requirement};
use serde::{Deserialize, Serialize};

use crate::classify::{RunOutput, classify};
use crate::extract::{Program, Snippet};
use crate::harness;
use crate::outcome::{Outcome, Tier, Verdict};
use crate::record::{RunRecord, excerpt};
use crate::toolchain::CUDA_WHEEL_VERSION;
use crate::trust::Trust;

/// The runner script, embedded.
pub const RUNNER_PY: &str = include_str!("../tools/runner.py");

/// Default run timeout when a snippet sets none.
pub const DEFAULT_TIMEOUT_S: u64 = 60;

/// One thing to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackItem {
    /// `<n>`: unique in the pack.
    pub id: String,
    /// The file as shown.
    pub file: String,
    /// The file relative to the data directory.
    pub data_file: String,
    /// Line of the program's first block.
    pub line: usize,
    /// `cuda` or `python`.
    pub lang: String,
    /// The expectation.
    pub expect: String,
    /// `exe` or `python`.
    pub kind: String,
    /// Path inside the pack.
    pub path: String,
    /// Seconds before the process group is killed.
    pub timeout_s: u64,
    /// `memcheck`/`racecheck` for `expect=sanitizer:…`.
    pub sanitizer: Option<String>,
    /// `requires=gpu`.
    pub needs_gpu: bool,
    /// Imports torch.
    pub needs_torch: bool,
    /// sha256 of the program's code when packed.
    pub sha256: String,
}

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always 1.
    pub version: u32,
    /// sha256 over the items: ties results to their pack.
    pub pack_id: String,
    /// nvcc that compiled the binaries.
    pub nvcc_version: Option<String>,
    /// The CUDA runtime linked into them (statically).
    pub cuda_runtime: String,
    /// What to run.
    pub items: Vec<PackItem>,
}

/// `results.json`, written by `run.py`.
#[derive(Debug, Clone, Deserialize)]
pub struct Results {
    /// Always 1.
    pub version: u32,
    /// The manifest's `pack_id`.
    pub pack: String,
    /// Facts about the machine.
    pub env: RunEnv,
    /// One per item run or skipped.
    pub results: Vec<ItemResult>,
}

/// The machine the pack ran on.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct RunEnv {
    /// `nvidia-smi` facts, when a GPU was visible.
    pub gpu: Option<GpuFacts>,
    /// `platform.python_version()`.
    pub python_version: Option<String>,
    /// torch facts, when torch imported.
    pub torch: Option<TorchFacts>,
    /// YYYY-MM-DD (UTC).
    pub date: String,
    /// Snippets ran in a network namespace of their own (no network).
    #[serde(default)]
    pub network_isolated: bool,
    /// Why they did not, when they did not.
    #[serde(default)]
    pub network_note: Option<String>,
    /// The largest file (stdout and stderr included) a snippet could write.
    #[serde(default)]
    pub output_limit: Option<u64>,
}

/// From `nvidia-smi --query-gpu=name,compute_cap,driver_version`.
#[derive(Debug, Clone, Deserialize)]
pub struct GpuFacts {
    /// e.g. `NVIDIA H200`.
    pub gpu_name: String,
    /// e.g. `9.0`.
    pub compute_capability: String,
    /// e.g. `570.86.15`.
    pub driver_version: String,
}

/// From `import torch`.
#[derive(Debug, Clone, Deserialize)]
pub struct TorchFacts {
    /// `torch.__version__`.
    pub torch_version: String,
    /// `torch.version.cuda`.
    pub torch_cuda: Option<String>,
}

/// One item's result.
#[derive(Debug, Clone, Deserialize)]
pub struct ItemResult {
    /// The item id.
    pub id: String,
    /// `ran`, `skipped` or `error`.
    pub status: String,
    /// Why it was skipped (`no-gpu`, `no-torch`, `no-compute-sanitizer`) or failed.
    pub reason: Option<String>,
    /// Exit status.
    #[serde(default)]
    pub exit_code: Option<i32>,
    /// Terminating signal.
    #[serde(default)]
    pub signal: Option<i32>,
    /// Killed at its timeout.
    #[serde(default)]
    pub timed_out: bool,
    /// Wall-clock time.
    #[serde(default)]
    pub duration_ms: u64,
    /// Capped stdout.
    #[serde(default)]
    pub stdout: String,
    /// Capped stderr.
    #[serde(default)]
    pub stderr: String,
    /// A stream reached the runner's [`RunEnv::output_limit`]: the snippet was stopped
    /// (SIGXFSZ) when it wrote past it.
    #[serde(default)]
    pub output_limited: bool,
}

/// A program ready for the pack: its compiled binary, if it is CUDA.
pub struct Runnable<'a> {
    /// The program.
    pub program: &'a Program,
    /// Its binary (CUDA only).
    pub binary: Option<PathBuf>,
}

fn needs_torch(code: &str, harness: Option<&str>) -> bool {
    harness == Some("python-torch")
        || code.lines().any(|l| {
            l.trim_start().starts_with("import torch") || l.trim_start().starts_with("from torch")
        })
}

/// Writes a pack into `dir` (created; must be empty or absent).
pub fn write_pack(
    dir: &Path,
    runnables: &[Runnable<'_>],
    snippets: &[Snippet],
    nvcc_version: Option<&str>,
    sanitizer: Option<&Path>,
) -> Result<Manifest, String> {
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    std::fs::create_dir_all(dir.join("bin")).map_err(|e| io(dir, e))?;
    std::fs::create_dir_all(dir.join("py")).map_err(|e| io(dir, e))?;
    let mut items = Vec::new();
    for (n, r) in runnables.iter().enumerate() {
        let p = r.program;
        let head = &snippets[p.parts[0]];
        let id = format!("{n:04}");
        let (kind, path) = match (&head.lang, &r.binary) {
            (Lang::Cuda, Some(bin)) => {
                let rel = format!("bin/{id}");
                let dest = dir.join(&rel);
                std::fs::copy(bin, &dest).map_err(|e| io(&dest, e))?;
                ("exe", rel)
            }
            (Lang::Python, _) => {
                let code = match &p.annotations.harness {
                    Some(h) => harness::lookup(h, &head.lang)?.wrap(&p.code),
                    None => p.code.clone(),
                };
                let rel = format!("py/{id}.py");
                let dest = dir.join(&rel);
                std::fs::write(&dest, code).map_err(|e| io(&dest, e))?;
                ("python", rel)
            }
            _ => continue,
        };
        let expect = p.expect();
        items.push(PackItem {
            id,
            file: head.file.clone(),
            data_file: head.data_file.clone(),
            line: head.line,
            lang: head.lang.name().to_string(),
            expect: expect.to_string(),
            kind: kind.into(),
            path,
            timeout_s: p
                .annotations
                .timeout
                .map_or(DEFAULT_TIMEOUT_S, |d| d.as_secs().max(1)),
            sanitizer: match &expect {
                Expect::Sanitizer(t) => Some(t.as_str().into()),
                _ => None,
            },
            needs_gpu: p.annotations.requires.contains(&Requirement::Gpu)
                || p.annotations.requires.contains(&Requirement::MultiGpu),
            needs_torch: head.lang == Lang::Python
                && (p.annotations.requires.contains(&Requirement::Torch)
                    || needs_torch(&p.code, p.annotations.harness.as_deref())),
            sha256: p.sha256.clone(),
        });
    }
    let ids: Vec<String> = items
        .iter()
        .map(|i| format!("{}:{}", i.id, i.sha256))
        .collect();
    let manifest = Manifest {
        version: 1,
        pack_id: errata_load::sha256_hex(ids.join("\n").as_bytes()),
        nvcc_version: nvcc_version.map(str::to_string),
        cuda_runtime: format!("nvidia-cuda-runtime {CUDA_WHEEL_VERSION} (static)"),
        items,
    };
    if let Some(src) = sanitizer.filter(|_| manifest.items.iter().any(|i| i.sanitizer.is_some())) {
        copy_tree(src, &dir.join("tools/compute-sanitizer"))?;
    }
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())?;
    let mpath = dir.join("manifest.json");
    std::fs::write(&mpath, text + "\n").map_err(|e| io(&mpath, e))?;
    let rpath = dir.join("run.py");
    std::fs::write(&rpath, RUNNER_PY).map_err(|e| io(&rpath, e))?;
    let readme = dir.join("README.txt");
    std::fs::write(
        &readme,
        "errata runner pack. On the GPU machine:  python3 run.py\n\
         then bring results.json back and run:  cargo xtask snippets --ingest <this dir>\n",
    )
    .map_err(|e| io(&readme, e))?;
    Ok(manifest)
}

/// Copies compute-sanitizer's directory, without its `docs/` and `include/` (not needed
/// to run it, and a quarter of its size). `fs::copy` keeps the executable bits.
fn copy_tree(src: &Path, dest: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dest).map_err(|e| format!("{}: {e}", dest.display()))?;
    let entries = std::fs::read_dir(src).map_err(|e| format!("{}: {e}", src.display()))?;
    for e in entries.flatten() {
        let name = e.file_name();
        if name == "docs" || name == "include" {
            continue;
        }
        let (from, to) = (e.path(), dest.join(&name));
        if from.is_dir() {
            copy_tree(&from, &to)?;
        } else {
            std::fs::copy(&from, &to).map_err(|err| format!("{}: {err}", to.display()))?;
        }
    }
    Ok(())
}

/// Reads `manifest.json` from a pack.
pub fn read_manifest(dir: &Path) -> Result<Manifest, String> {
    let p = dir.join("manifest.json");
    let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", p.display()))
}

/// Reads a `results.json`.
pub fn read_results(path: &Path) -> Result<Results, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs a pack here with `python3 run.py` (the same runner a GPU machine uses), after
/// checking that `trust` allows every item of its manifest: a pack is run only when all
/// of it may run.
pub fn run_local(dir: &Path, allow_no_gpu: bool, trust: &Trust) -> Result<Results, String> {
    let manifest = read_manifest(dir)?;
    let untrusted: Vec<String> = manifest
        .items
        .iter()
        .filter(|i| !trust.allows(&i.data_file, &i.sha256))
        .map(|i| format!("{}:{}", i.file, i.line))
        .collect();
    if !untrusted.is_empty() {
        return Err(format!(
            "refusing to run the pack in {}: {} item(s) not trusted ({})",
            dir.display(),
            untrusted.len(),
            untrusted.join(", ")
        ));
    }
    let mut cmd = Command::new("python3");
    cmd.arg(dir.join("run.py"));
    if allow_no_gpu {
        cmd.arg("--allow-no-gpu");
    }
    let status = cmd
        .status()
        .map_err(|e| format!("cannot run python3 for the runner: {e}"))?;
    if !status.success() {
        return Err(format!("run.py failed ({status})"));
    }
    read_results(&dir.join("results.json"))
}

/// Turns results into verdicts and run records.
///
/// `current` lists every program now in the data (`file`, `line`, `sha256`): an item whose
/// snippet changed since it was packed is reported as `infra-error` and not recorded.
pub fn ingest(
    manifest: &Manifest,
    results: &Results,
    current: &[(String, usize, String)],
) -> Result<(Vec<Verdict>, Vec<RunRecord>), String> {
    if results.pack != manifest.pack_id {
        return Err(format!(
            "results are for pack {}, not this pack ({})",
            results.pack, manifest.pack_id
        ));
    }
    let mut verdicts = Vec::new();
    let mut records = Vec::new();
    for r in &results.results {
        let Some(item) = manifest.items.iter().find(|i| i.id == r.id) else {
            continue;
        };
        let expect = errata_model::snippet::parse_expect(&item.expect)
            .map_err(|e| format!("manifest item {}: {e}", item.id))?;
        let fresh = current
            .iter()
            .any(|(f, l, h)| *f == item.data_file && *l == item.line && *h == item.sha256);
        let (outcome, detail) = if !fresh {
            (
                Outcome::InfraError,
                "the snippet changed since it was packed: pack and run again".to_string(),
            )
        } else {
            match r.status.as_str() {
                "ran" => {
                    let (outcome, detail) = classify(
                        &expect,
                        &RunOutput {
                            exit_code: r.exit_code,
                            signal: r.signal,
                            timed_out: r.timed_out,
                            stdout: r.stdout.clone(),
                            stderr: r.stderr.clone(),
                        },
                    );
                    match (r.output_limited, results.env.output_limit) {
                        (true, Some(n)) => (
                            outcome,
                            format!("output reached the runner's {n}-byte limit; {detail}"),
                        ),
                        _ => (outcome, detail),
                    }
                }
                "skipped" if r.reason.as_deref() == Some("no-gpu") => (
                    Outcome::SkippedNoGpu,
                    "no GPU on the run machine (nvidia-smi found none)".into(),
                ),
                _ => (
                    Outcome::InfraError,
                    format!("not run: {}", r.reason.as_deref().unwrap_or("runner error")),
                ),
            }
        };
        verdicts.push(Verdict {
            file: item.file.clone(),
            line: item.line,
            lang: item.lang.clone(),
            tier: Tier::Run,
            expect: item.expect.clone(),
            outcome,
            detail,
        });
        if fresh && r.status == "ran" {
            let gpu = results.env.gpu.as_ref();
            let python = item.kind == "python";
            let torch = results.env.torch.as_ref().filter(|_| item.needs_torch);
            records.push(RunRecord {
                file: item.data_file.clone(),
                line: item.line,
                sha256: item.sha256.clone(),
                tier: Tier::Run,
                outcome,
                expect: item.expect.clone(),
                gpu_name: gpu.map(|g| g.gpu_name.clone()),
                compute_capability: gpu.map(|g| g.compute_capability.clone()),
                driver_version: gpu.map(|g| g.driver_version.clone()),
                cuda_version: if python {
                    torch.and_then(|t| t.torch_cuda.clone())
                } else {
                    Some(CUDA_WHEEL_VERSION.to_string())
                },
                nvcc_version: if python {
                    None
                } else {
                    manifest.nvcc_version.clone()
                },
                torch_version: torch.map(|t| t.torch_version.clone()),
                python_version: if python {
                    results.env.python_version.clone()
                } else {
                    None
                },
                duration_ms: r.duration_ms,
                stderr_excerpt: excerpt(&r.stderr),
                date: results.env.date.clone(),
            });
        }
    }
    Ok((verdicts, records))
}
