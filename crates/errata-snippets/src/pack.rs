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
use crate::toolchain::{ARCH, CUDA_WHEEL_VERSION};
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
    /// `memcheck`/`racecheck`/`initcheck`/`leakcheck` for `expect=sanitizer:…` (the runner
    /// turns `leakcheck` into memcheck with `--leak-check full`).
    pub sanitizer: Option<String>,
    /// `requires=gpu` (or `multi-gpu`, `whole-gpu`).
    pub needs_gpu: bool,
    /// `requires=whole-gpu`: `run.py` runs it alone, after every other item.
    #[serde(default)]
    pub whole_gpu: bool,
    /// Imports torch.
    pub needs_torch: bool,
    /// sha256 of the program's code when packed.
    pub sha256: String,
}

/// The manifest's format: 2 since the programs travel in [`PAYLOAD`].
pub const MANIFEST_VERSION: u32 = 2;

/// `manifest.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifest {
    /// [`MANIFEST_VERSION`].
    pub version: u32,
    /// sha256 over the items: ties results to their pack.
    pub pack_id: String,
    /// nvcc that compiled the binaries.
    pub nvcc_version: Option<String>,
    /// The CUDA runtime the binaries load.
    pub cuda_runtime: String,
    /// `major.minor` of that runtime: the driver must support it (or the same major,
    /// under minor-version compatibility) for the binaries to run.
    #[serde(default)]
    pub cuda_version: Option<String>,
    /// The GPU architecture the binaries hold machine code (SASS) for.
    #[serde(default)]
    pub arch: Option<String>,
    /// The archive holding `bin/`, `py/`, `lib/` (absent: an older pack, loose files).
    #[serde(default)]
    pub payload: Option<String>,
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
    /// The newest CUDA the driver supports (`cuDriverGetVersion`), e.g. `13.0`.
    #[serde(default)]
    pub driver_cuda: Option<String>,
    /// `run.py`'s comparison of the pack's CUDA with the driver's: `ok`,
    /// `minor-version-compatibility` (same major, older minor: SASS runs, a few calls
    /// may be refused), `driver-too-old` (older major: no binary can run) or `unknown`.
    #[serde(default)]
    pub cuda_compat: Option<String>,
    /// The sentence `run.py` printed about it.
    #[serde(default)]
    pub cuda_compat_note: Option<String>,
}

/// The runtime's answers when the driver is older than the pack's CUDA: under
/// minor-version compatibility such an error is the machine's, not the snippet's.
const DRIVER_REFUSALS: &[&str] = &[
    "cudaErrorCallRequiresNewerDriver",
    "cudaErrorUnsupportedPtxVersion",
    "cudaErrorInsufficientDriver",
    "CUDA driver version is insufficient for CUDA runtime version",
    "API call is not supported in the installed CUDA driver",
    "the provided PTX was compiled with an unsupported toolchain",
];

/// An item whose failure the driver explains: the pack's CUDA is newer than the driver's,
/// the output names one of [`DRIVER_REFUSALS`], and the snippet did not expect it.
fn driver_explains(
    env: &RunEnv,
    item: &PackItem,
    outcome: Outcome,
    r: &ItemResult,
) -> Option<String> {
    let compat = env.cuda_compat.as_deref()?;
    if !matches!(compat, "minor-version-compatibility" | "driver-too-old")
        || item.kind != "exe"
        || !outcome.is_failure()
    {
        return None;
    }
    let refusal = DRIVER_REFUSALS.iter().find(|s| {
        (r.stdout.contains(**s) || r.stderr.contains(**s)) && !item.expect.contains(**s)
    })?;
    Some(format!(
        "`{refusal}` is the driver's answer, not this snippet's error: {}",
        env.cuda_compat_note
            .as_deref()
            .unwrap_or("the pack's CUDA is newer than the driver's")
    ))
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

/// The largest pack [`write_pack`] writes: a GPU session carries the pack and the
/// working tree together within 64 MiB, so the pack keeps well under half of that.
pub const PACK_BUDGET: u64 = 24 * 1024 * 1024;

/// The pack's one archive: binaries, scripts and the CUDA runtime, unpacked by `run.py`
/// with Python's standard library (`tarfile`, `gzip`) on the GPU machine.
pub const PAYLOAD: &str = "payload.tar.gz";

/// The shared CUDA runtime the binaries load (their `RUNPATH` is `$ORIGIN/../lib`).
pub const RUNTIME_LIB: &str = "libcudart.so.13";

/// What goes into a pack besides the programs.
#[derive(Debug, Clone, Default)]
pub struct PackOptions {
    /// `nvcc --version`'s release line.
    pub nvcc_version: Option<String>,
    /// The directory holding [`RUNTIME_LIB`] (the toolchain's `lib/`); needed when the
    /// pack has a binary.
    pub runtime_dir: Option<PathBuf>,
    /// compute-sanitizer's directory, carried only when asked for: the GPU machine's
    /// own is used otherwise (it is 43 MiB, more than the whole budget).
    pub sanitizer: Option<PathBuf>,
    /// The size above which the pack is refused ([`PACK_BUDGET`] by default).
    pub budget: Option<u64>,
}

fn needs_torch(code: &str, harness: Option<&str>) -> bool {
    harness == Some("python-torch")
        || code.lines().any(|l| {
            l.trim_start().starts_with("import torch") || l.trim_start().starts_with("from torch")
        })
}

/// One file of the payload.
struct Member {
    path: String,
    source: Source,
    executable: bool,
}

enum Source {
    File(PathBuf),
    Bytes(Vec<u8>),
}

impl Member {
    fn len(&self) -> Result<u64, String> {
        match &self.source {
            Source::Bytes(b) => Ok(b.len() as u64),
            Source::File(p) => std::fs::metadata(p)
                .map(|m| m.len())
                .map_err(|e| format!("{}: {e}", p.display())),
        }
    }
}

/// Writes a pack into `dir` (created): `run.py`, `manifest.json`, `README.txt` and
/// [`PAYLOAD`]. Refuses (writing no payload) a pack over its budget, naming what is big.
pub fn write_pack(
    dir: &Path,
    runnables: &[Runnable<'_>],
    snippets: &[Snippet],
    opts: &PackOptions,
) -> Result<Manifest, String> {
    let io = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    std::fs::create_dir_all(dir).map_err(|e| io(dir, e))?;
    let mut members = Vec::new();
    let mut items = Vec::new();
    for (n, r) in runnables.iter().enumerate() {
        let p = r.program;
        let head = &snippets[p.parts[0]];
        let id = format!("{n:04}");
        let (kind, path) = match (&head.lang, &r.binary) {
            (Lang::Cuda, Some(bin)) => {
                let rel = format!("bin/{id}");
                members.push(Member {
                    path: rel.clone(),
                    source: Source::File(bin.clone()),
                    executable: true,
                });
                ("exe", rel)
            }
            (Lang::Python, _) => {
                let code = match &p.annotations.harness {
                    Some(h) => harness::lookup(h, &head.lang)?.wrap(&p.code),
                    None => p.code.clone(),
                };
                let rel = format!("py/{id}.py");
                members.push(Member {
                    path: rel.clone(),
                    source: Source::Bytes(code.into_bytes()),
                    executable: false,
                });
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
            needs_gpu: p.annotations.requires.iter().any(|r| {
                matches!(
                    r,
                    Requirement::Gpu | Requirement::MultiGpu | Requirement::WholeGpu
                )
            }),
            whole_gpu: p.annotations.requires.contains(&Requirement::WholeGpu),
            needs_torch: head.lang == Lang::Python
                && (p.annotations.requires.contains(&Requirement::Torch)
                    || needs_torch(&p.code, p.annotations.harness.as_deref())),
            sha256: p.sha256.clone(),
        });
    }
    if items.iter().any(|i| i.kind == "exe") {
        let lib = opts
            .runtime_dir
            .as_ref()
            .map(|d| d.join(RUNTIME_LIB))
            .filter(|p| p.is_file())
            .ok_or_else(|| {
                format!("the pack has CUDA binaries but no {RUNTIME_LIB} to carry for them")
            })?;
        members.push(Member {
            path: format!("lib/{RUNTIME_LIB}"),
            source: Source::File(lib),
            executable: false,
        });
    }
    if let Some(src) = opts
        .sanitizer
        .as_ref()
        .filter(|_| items.iter().any(|i| i.sanitizer.is_some()))
    {
        sanitizer_members(src, "tools/compute-sanitizer", &mut members)?;
    }
    members.sort_by(|a, b| a.path.cmp(&b.path));

    let ids: Vec<String> = items
        .iter()
        .map(|i| format!("{}:{}", i.id, i.sha256))
        .collect();
    let manifest = Manifest {
        version: MANIFEST_VERSION,
        pack_id: errata_load::sha256_hex(ids.join("\n").as_bytes()),
        nvcc_version: opts.nvcc_version.clone(),
        cuda_runtime: format!("nvidia-cuda-runtime {CUDA_WHEEL_VERSION} (lib/{RUNTIME_LIB})"),
        cuda_version: Some(cuda_major_minor()),
        arch: Some(ARCH.to_string()),
        payload: Some(PAYLOAD.to_string()),
        items,
    };
    let text = serde_json::to_string_pretty(&manifest).map_err(|e| e.to_string())? + "\n";
    let files: [(&str, &[u8]); 3] = [
        ("manifest.json", text.as_bytes()),
        ("run.py", RUNNER_PY.as_bytes()),
        (
            "README.txt",
            b"errata runner pack. On the GPU machine:  python3 run.py\n\
              (it unpacks payload.tar.gz itself; python3 run.py --check only reports the machine)\n\
              then bring results.json back and run:  cargo xtask snippets --ingest <this dir>\n",
        ),
    ];
    // The payload first, under a temporary name: a refused or failed pack leaves no
    // archive a runner could take for a whole one.
    let payload = dir.join(PAYLOAD);
    let partial = dir.join(format!("{PAYLOAD}.partial"));
    write_payload(&partial, &members)?;
    let size = std::fs::metadata(&partial)
        .map_err(|e| io(&partial, e))?
        .len()
        + files.iter().map(|(_, b)| b.len() as u64).sum::<u64>();
    let budget = opts.budget.unwrap_or(PACK_BUDGET);
    if size > budget {
        let _ = std::fs::remove_file(&partial);
        return Err(over_budget(size, budget, &members));
    }
    std::fs::rename(&partial, &payload).map_err(|e| io(&payload, e))?;
    for (name, bytes) in files {
        let p = dir.join(name);
        std::fs::write(&p, bytes).map_err(|e| io(&p, e))?;
    }
    Ok(manifest)
}

/// `13.5` of [`CUDA_WHEEL_VERSION`]: the CUDA version the binaries' runtime needs from
/// the driver.
pub fn cuda_major_minor() -> String {
    CUDA_WHEEL_VERSION
        .split('.')
        .take(2)
        .collect::<Vec<_>>()
        .join(".")
}

/// A deterministic `tar.gz`: sorted members, no owners, mtime 0, modes 0644/0755.
fn write_payload(path: &Path, members: &[Member]) -> Result<(), String> {
    let file = std::fs::File::create(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let gz =
        flate2::write::GzEncoder::new(std::io::BufWriter::new(file), flate2::Compression::best());
    let mut tar = tar::Builder::new(gz);
    for m in members {
        let mut header = tar::Header::new_gnu();
        header.set_size(m.len()?);
        header.set_mode(if m.executable { 0o755 } else { 0o644 });
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        let err = |e: std::io::Error| format!("{}: {}: {e}", path.display(), m.path);
        match &m.source {
            Source::Bytes(b) => tar
                .append_data(&mut header, &m.path, b.as_slice())
                .map_err(err)?,
            Source::File(p) => {
                let f = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
                tar.append_data(&mut header, &m.path, f).map_err(err)?
            }
        }
    }
    let gz = tar
        .into_inner()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let mut w = gz
        .finish()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    std::io::Write::flush(&mut w).map_err(|e| format!("{}: {e}", path.display()))
}

/// The refusal: the sizes, and the biggest members (uncompressed) so the reader knows
/// what to drop.
fn over_budget(size: u64, budget: u64, members: &[Member]) -> String {
    let mib = |n: u64| n as f64 / (1024.0 * 1024.0);
    let mut sized: Vec<(u64, &str)> = members
        .iter()
        .map(|m| (m.len().unwrap_or(0), m.path.as_str()))
        .collect();
    sized.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    let top: Vec<String> = sized
        .iter()
        .take(5)
        .map(|(n, p)| format!("{p} ({:.1} MiB)", mib(*n)))
        .collect();
    format!(
        "the pack would be {:.1} MiB compressed, over its {:.1} MiB budget; the biggest files \
         (uncompressed): {}",
        mib(size),
        mib(budget),
        top.join(", ")
    )
}

/// compute-sanitizer's directory as payload members, without its `docs/` and
/// `include/` (not needed to run it).
fn sanitizer_members(src: &Path, prefix: &str, out: &mut Vec<Member>) -> Result<(), String> {
    let mut entries: Vec<_> = std::fs::read_dir(src)
        .map_err(|e| format!("{}: {e}", src.display()))?
        .flatten()
        .collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name();
        if name == "docs" || name == "include" {
            continue;
        }
        let from = e.path();
        let rel = format!("{prefix}/{}", name.to_string_lossy());
        if from.is_dir() {
            sanitizer_members(&from, &rel, out)?;
        } else {
            let executable = {
                use std::os::unix::fs::PermissionsExt;
                std::fs::metadata(&from).is_ok_and(|m| m.permissions().mode() & 0o111 != 0)
            };
            out.push(Member {
                path: rel,
                source: Source::File(from),
                executable,
            });
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

/// Reads a `results.json` (bounded: it comes back from another machine).
pub fn read_results(path: &Path) -> Result<Results, String> {
    let text = errata_load::read_bounded(path).map_err(|e| format!("{}: {e}", path.display()))?;
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
                    if let Some(why) = driver_explains(&results.env, item, outcome, r) {
                        (Outcome::InfraError, why)
                    } else {
                        match (r.output_limited, results.env.output_limit) {
                            (true, Some(n)) => (
                                outcome,
                                format!("output reached the runner's {n}-byte limit; {detail}"),
                            ),
                            _ => (outcome, detail),
                        }
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
