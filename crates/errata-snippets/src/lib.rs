//! Extract, annotate and verify the code snippets of an errata knowledge base.
//!
//! The pipeline (docs/data.md, "Snippet fence annotations"):
//!
//! - [`extract()`] lists every fenced block of every article and every entry's `verify`
//!   snippet as a [`Snippet`] (file, line, language, info string, annotations, sha256);
//!   [`programs`] joins `cont` blocks to the block before them into a [`Program`].
//! - [`verify`] judges every program at the requested [`Tier`], cumulatively:
//!   the **static** tier ([`static_tier`]: Python parsed by `python3`'s `ast`, `torch.…`
//!   names resolved against the committed [`torch_api`] list, shell linted by
//!   `shellcheck` and searched for retired tools), the **compile** tier ([`compile`]:
//!   nvcc from the pinned CUDA 13 pip wheels, [`toolchain`]), and the **run** tier
//!   ([`pack`]: a self-contained runner pack run by `python3 run.py`, here or on a GPU
//!   machine without Rust, then [`classify`]d). Only snippets the [`trust`] gate lets
//!   through are packed or run, each isolated by the runner; the tools of the lower
//!   tiers run within [`exec`]'s limits.
//! - Each block gets a [`Verdict`] with an [`Outcome`]; run results become
//!   [`record::RunRecord`]s under `data/runs/`; [`report`] prints them.
//!
//! ```
//! use errata_snippets::{Options, Tier, extract, verify};
//! let dir = tempfile::tempdir()?;
//! std::fs::create_dir_all(dir.path().join("articles/cuda"))?;
//! std::fs::write(
//!     dir.path().join("articles/cuda/a.md"),
//!     "---\ntitle: A\nid: cuda/a\ndate: \"2025-01-01\"\n---\n\
//!      ```python\nimport torch\ntorch.cuda.get_last_error()\n```\n",
//! )?;
//! let kb = errata_load::KnowledgeBase::load(dir.path())?;
//! let snippets = extract(&kb);
//! let run = verify(&snippets, &Options::new(Tier::Static, dir.path().join("cache")));
//! assert_eq!(run.verdicts[0].outcome.as_str(), "api-missing");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(missing_docs)]

pub mod classify;
pub mod compile;
pub mod exec;
mod extract;
pub mod harness;
mod outcome;
pub mod pack;
pub mod record;
pub mod report;
pub mod static_tier;
pub mod toolchain;
pub mod torch_api;
pub mod trust;

use std::collections::HashMap;
use std::path::PathBuf;

use errata_model::snippet::{Expect, Lang};
use rayon::prelude::*;

pub use extract::{Origin, Program, Snippet, extract, programs};
pub use outcome::{Outcome, Tier, Verdict};
pub use trust::{AllowList, Trust};

/// How [`verify`] runs.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Options {
    /// The highest tier to reach.
    pub tier: Tier,
    /// Where the CUDA wheels are installed (see [`toolchain::default_cache_dir`]).
    pub cache_dir: PathBuf,
    /// Draw a progress bar when stderr is a terminal.
    pub progress: bool,
    /// Run tier: also run snippets that do not say `requires=gpu` when no GPU is found
    /// (a CUDA program then reports the driver's real error; used by tests).
    pub allow_no_gpu: bool,
    /// Write the runner pack here (the run tier uses a temp dir otherwise).
    pub pack_dir: Option<PathBuf>,
    /// Which snippets the run tier (and a pack) may take; nobody's by default, so a
    /// refused snippet gets `infra-error` instead of being run.
    pub trust: Trust,
    /// Time and output limits of python3, shellcheck and nvcc.
    pub tool_limits: exec::Limits,
    /// Carry compute-sanitizer in the pack (a fallback for a GPU machine without one).
    pub pack_sanitizer: bool,
    /// The pack's size limit ([`pack::PACK_BUDGET`] when `None`).
    pub pack_budget: Option<u64>,
}

impl Options {
    /// Options for `tier` with the toolchain cache in `cache_dir`.
    pub fn new(tier: Tier, cache_dir: PathBuf) -> Options {
        Options {
            tier,
            cache_dir,
            progress: false,
            allow_no_gpu: false,
            pack_dir: None,
            trust: Trust::Nobody,
            tool_limits: exec::Limits::default(),
            pack_sanitizer: false,
            pack_budget: None,
        }
    }

    /// Sets [`Options::pack_sanitizer`].
    pub fn with_pack_sanitizer(mut self, on: bool) -> Options {
        self.pack_sanitizer = on;
        self
    }

    /// Sets [`Options::pack_budget`].
    pub fn with_pack_budget(mut self, bytes: Option<u64>) -> Options {
        self.pack_budget = bytes;
        self
    }

    /// Sets [`Options::progress`].
    pub fn with_progress(mut self, on: bool) -> Options {
        self.progress = on;
        self
    }

    /// Sets [`Options::allow_no_gpu`].
    pub fn with_allow_no_gpu(mut self, on: bool) -> Options {
        self.allow_no_gpu = on;
        self
    }

    /// Sets [`Options::pack_dir`].
    pub fn with_pack_dir(mut self, dir: Option<PathBuf>) -> Options {
        self.pack_dir = dir;
        self
    }

    /// Sets [`Options::trust`].
    pub fn with_trust(mut self, trust: Trust) -> Options {
        self.trust = trust;
        self
    }

    /// Sets [`Options::tool_limits`].
    pub fn with_tool_limits(mut self, limits: exec::Limits) -> Options {
        self.tool_limits = limits;
        self
    }
}

/// What [`verify`] found.
#[derive(Debug, Default)]
pub struct Verification {
    /// One verdict per verifiable block, in input order.
    pub verdicts: Vec<Verdict>,
    /// Run records (run tier only).
    pub records: Vec<record::RunRecord>,
    /// The pack written, if any.
    pub manifest: Option<pack::Manifest>,
}

impl Verification {
    /// True when some verdict contradicts its expectation (exit 1).
    pub fn failed(&self) -> bool {
        self.verdicts.iter().any(|v| v.outcome.is_failure())
    }
}

/// The highest tier this machine can do: `run` when `nvidia-smi` works, else `compile`
/// when the CUDA wheels are installed or installable, else `static`.
pub fn detect_tier(cache_dir: &std::path::Path) -> Tier {
    let gpu = std::process::Command::new("nvidia-smi")
        .arg("-L")
        .output()
        .is_ok_and(|o| o.status.success() && !o.stdout.is_empty());
    if gpu {
        Tier::Run
    } else if toolchain::Toolchain::ensure(cache_dir).is_ok() {
        Tier::Compile
    } else {
        Tier::Static
    }
}

struct State {
    tier: Tier,
    outcome: Outcome,
    detail: String,
    binary: Option<PathBuf>,
}

/// What decides whether a CUDA program compiles: its code, harness and expectation (the
/// `#line` directives errata adds only say where errors point).
fn compile_key(p: &Program) -> String {
    format!(
        "{}\0{}\0{}",
        p.sha256,
        p.annotations.harness.as_deref().unwrap_or(""),
        p.expect()
    )
}

/// The compile tier for program `i`, in a directory of its own under `work`.
fn compile_one(
    p: &Program,
    i: usize,
    snippets: &[Snippet],
    tc: &Result<toolchain::Toolchain, String>,
    work: &std::io::Result<tempfile::TempDir>,
    opts: &Options,
) -> State {
    let sub = work.as_ref().map_err(|e| e.to_string()).and_then(|w| {
        let d = w.path().join(i.to_string());
        std::fs::create_dir_all(&d)
            .map(|_| d)
            .map_err(|e| e.to_string())
    });
    let ready = match tc {
        Ok(tc) => sub.map(|dir| (tc, dir)),
        Err(e) => Err(e.clone()),
    };
    match ready {
        Err(e) => State {
            tier: Tier::Compile,
            outcome: Outcome::InfraError,
            detail: format!("no CUDA toolchain: {e}"),
            binary: None,
        },
        Ok((tc, dir)) => {
            let c = compile::compile(p, snippets, tc, &dir, opts.tool_limits);
            State {
                tier: Tier::Compile,
                outcome: c.outcome,
                detail: c.detail,
                binary: c.binary,
            }
        }
    }
}

/// Judges every program made of `snippets` up to `opts.tier`.
pub fn verify(snippets: &[Snippet], opts: &Options) -> Verification {
    let progs = programs(snippets);
    let mut state: Vec<Option<State>> = progs.iter().map(|_| None).collect();
    let done = |tier, outcome, detail: String| {
        Some(State {
            tier,
            outcome,
            detail,
            binary: None,
        })
    };

    // Annotations, ignore, harness names.
    for (i, p) in progs.iter().enumerate() {
        let lang = &snippets[p.parts[0]].lang;
        if !p.annotation_errors.is_empty() {
            state[i] = done(
                Tier::Static,
                Outcome::InfraError,
                format!("annotation error: {}", p.annotation_errors.join("; ")),
            );
        } else if let Some(reason) = &p.annotations.ignore {
            // `ignore` opts out of running, not out of naming a tool that no longer
            // exists: a reader would still copy it.
            let retired = (*lang == Lang::Shell)
                .then(|| static_tier::retired_tools(p, &snippets[p.parts[0]]))
                .flatten();
            state[i] = match retired {
                Some(f) => done(Tier::Static, f.outcome, f.detail),
                None => done(Tier::Static, Outcome::Ignored, reason.clone()),
            };
        } else if let Some(Err(e)) = p
            .annotations
            .harness
            .as_ref()
            .map(|h| harness::lookup(h, lang))
        {
            state[i] = done(Tier::Static, Outcome::InfraError, e);
        }
    }

    // Static tier.
    let api = torch_api::TorchApi::embedded();
    let python: Vec<usize> = (0..progs.len())
        .filter(|&i| state[i].is_none() && snippets[progs[i].parts[0]].lang == Lang::Python)
        .collect();
    let refs: Vec<&Program> = python.iter().map(|&i| &progs[i]).collect();
    for (&i, r) in python.iter().zip(static_tier::check_python(
        &refs,
        snippets,
        api,
        opts.tool_limits,
    )) {
        state[i] = static_state(&progs[i], r);
    }
    for (i, p) in progs.iter().enumerate() {
        let head = &snippets[p.parts[0]];
        if state[i].is_none() && head.lang == Lang::Shell {
            state[i] = static_state(p, static_tier::check_shell(p, head, opts.tool_limits));
        }
    }

    // Compile tier.
    let cuda: Vec<usize> = (0..progs.len())
        .filter(|&i| state[i].is_none() && snippets[progs[i].parts[0]].lang == Lang::Cuda)
        .collect();
    let work = tempfile::Builder::new()
        .prefix("errata-snippets-")
        .tempdir();
    let mut nvcc_version = None;
    let mut runtime_dir = None;
    if opts.tier == Tier::Static {
        for &i in &cuda {
            state[i] = done(
                Tier::Static,
                Outcome::SkippedNoGpu,
                "CUDA is verified from the compile tier on (needs nvcc)".into(),
            );
        }
    } else if !cuda.is_empty() {
        let tc = toolchain::Toolchain::ensure(&opts.cache_dir);
        if let Ok(tc) = &tc {
            nvcc_version = Some(tc.nvcc_version.clone());
            runtime_dir = Some(tc.root.join("lib"));
        }
        // A translated article repeats its original's programs: where no binary is kept
        // (no run tier, no pack), a program is compiled once and its copies take the
        // verdict of the first, when that passed. Only the `#line` directives differ, and
        // they name where errors point, not whether the program compiles; a copy of a
        // program that did not pass is compiled on its own so its errors name its file.
        let keeps_binaries = opts.tier == Tier::Run || opts.pack_dir.is_some();
        let mut first_of: HashMap<String, usize> = HashMap::new();
        let mut copies: Vec<(usize, usize)> = Vec::new();
        let mut distinct: Vec<usize> = Vec::new();
        for &i in &cuda {
            let key = compile_key(&progs[i]);
            match first_of.get(&key) {
                Some(&first) if !keeps_binaries => copies.push((i, first)),
                _ => {
                    first_of.entry(key).or_insert(i);
                    distinct.push(i);
                }
            }
        }
        // One nvcc per core at a time: each is a chain of single-threaded tools (cicc,
        // ptxas, the host compiler), so on two cores the tier takes half as long. Results
        // keep the programs' order; the bar counts programs as they start.
        let bar = std::sync::Mutex::new(report::Progress::new(cuda.len(), opts.progress));
        let compile_all = |which: &[usize]| -> Vec<State> {
            which
                .par_iter()
                .map(|&i| {
                    let head = &snippets[progs[i].parts[0]];
                    if let Ok(mut bar) = bar.lock() {
                        bar.step(&format!("nvcc {}:{}", head.file, head.line));
                    }
                    compile_one(&progs[i], i, snippets, &tc, &work, opts)
                })
                .collect()
        };
        for (&i, c) in distinct.iter().zip(compile_all(&distinct)) {
            state[i] = Some(c);
        }
        let mut again = Vec::new();
        for &(i, first) in &copies {
            match state[first].as_ref() {
                Some(f) if f.outcome == Outcome::Pass => {
                    let head = &snippets[progs[first].parts[0]];
                    if let Ok(mut bar) = bar.lock() {
                        bar.step(&format!("same as {}:{}", head.file, head.line));
                    }
                    state[i] = done(
                        f.tier,
                        f.outcome,
                        format!(
                            "{} (the same program as {}:{}, compiled once)",
                            f.detail, head.file, head.line
                        ),
                    );
                }
                _ => again.push(i),
            }
        }
        for (&i, c) in again.iter().zip(compile_all(&again)) {
            state[i] = Some(c);
        }
        if let Ok(bar) = bar.lock() {
            bar.finish();
        }
    }
    // Python and shell that passed static checks end here below the run tier.
    for (i, p) in progs.iter().enumerate() {
        if state[i].is_none() {
            let what = match snippets[p.parts[0]].lang {
                Lang::Shell => "shellcheck clean, no retired tools (shell snippets are never run)",
                _ => "parses; every torch name it uses exists",
            };
            state[i] = done(Tier::Static, Outcome::Pass, what.into());
        }
    }

    // Run tier (or just a pack).
    let mut records = Vec::new();
    let mut manifest = None;
    if opts.tier == Tier::Run || opts.pack_dir.is_some() {
        let runnable: Vec<usize> = (0..progs.len())
            .filter(|&i| {
                let s = state[i].as_ref();
                let lang = &snippets[progs[i].parts[0]].lang;
                let passed = s.is_some_and(|s| s.outcome == Outcome::Pass);
                let kind_ok = match lang {
                    Lang::Cuda => s.is_some_and(|s| s.binary.is_some()),
                    Lang::Python => true,
                    _ => false,
                };
                passed && kind_ok && !matches!(progs[i].expect(), Expect::CompileError(_))
            })
            .collect();
        // The trust gate: a snippet that is not trusted is neither packed nor run.
        let (runnable, refused): (Vec<usize>, Vec<usize>) = runnable.into_iter().partition(|&i| {
            let p = &progs[i];
            opts.trust
                .allows(&snippets[p.parts[0]].data_file, &p.sha256)
        });
        for &i in &refused {
            state[i] = done(
                Tier::Run,
                Outcome::InfraError,
                opts.trust.refusal(&progs[i].sha256),
            );
        }
        let runnables: Vec<pack::Runnable<'_>> = runnable
            .iter()
            .map(|&i| pack::Runnable {
                program: &progs[i],
                binary: state[i].as_ref().and_then(|s| s.binary.clone()),
            })
            .collect();
        let pack_dir = match &opts.pack_dir {
            Some(d) => Ok(d.clone()),
            None => work
                .as_ref()
                .map(|w| w.path().join("pack"))
                .map_err(|e| e.to_string()),
        };
        let result = pack_dir.and_then(|dir| {
            // The GPU machine's own compute-sanitizer is used unless one is asked to
            // travel (it would take the pack over its budget).
            let sanitizer = opts
                .pack_sanitizer
                .then(|| toolchain::ensure_sanitizer(&opts.cache_dir).ok())
                .flatten();
            let m = pack::write_pack(
                &dir,
                &runnables,
                snippets,
                &pack::PackOptions {
                    nvcc_version: nvcc_version.clone(),
                    runtime_dir: runtime_dir.clone(),
                    sanitizer,
                    budget: opts.pack_budget,
                },
            )?;
            Ok((dir, m))
        });
        match result {
            Err(e) => {
                for &i in &runnable {
                    state[i] = done(Tier::Run, Outcome::InfraError, format!("cannot pack: {e}"));
                }
            }
            Ok((dir, m)) => {
                if opts.tier == Tier::Run {
                    let current = record::current_of(&progs, snippets);
                    let ran = pack::run_local(&dir, opts.allow_no_gpu, &opts.trust)
                        .and_then(|r| pack::ingest(&m, &r, &current));
                    match ran {
                        Err(e) => {
                            for &i in &runnable {
                                state[i] = done(
                                    Tier::Run,
                                    Outcome::InfraError,
                                    format!("run failed: {e}"),
                                );
                            }
                        }
                        Ok((verdicts, recs)) => {
                            let by_key: HashMap<(String, usize), Verdict> = verdicts
                                .into_iter()
                                .map(|v| ((v.file.clone(), v.line), v))
                                .collect();
                            for &i in &runnable {
                                let h = &snippets[progs[i].parts[0]];
                                if let Some(v) = by_key.get(&(h.file.clone(), h.line)) {
                                    state[i] = done(Tier::Run, v.outcome, v.detail.clone());
                                }
                            }
                            records = recs;
                        }
                    }
                }
                manifest = Some(m);
            }
        }
    }

    // One row per block; `cont` blocks carry their program's verdict.
    let mut verdicts = Vec::new();
    for (p, s) in progs.iter().zip(state) {
        let Some(s) = s else { continue };
        let head = &snippets[p.parts[0]];
        for (k, &part) in p.parts.iter().enumerate() {
            let b = &snippets[part];
            verdicts.push(Verdict {
                file: b.file.clone(),
                line: b.line,
                lang: b.lang.name().to_string(),
                tier: s.tier,
                expect: p.expect().to_string(),
                outcome: s.outcome,
                detail: if k == 0 {
                    s.detail.clone()
                } else {
                    format!("(joined to the block at line {}) {}", head.line, s.detail)
                },
            });
        }
    }
    verdicts.sort_by(|a, b| (a.file.as_str(), a.line).cmp(&(b.file.as_str(), b.line)));
    Verification {
        verdicts,
        records,
        manifest,
    }
}

fn static_state(
    p: &Program,
    r: Result<Option<static_tier::StaticFinding>, String>,
) -> Option<State> {
    let (outcome, detail) = match r {
        Err(e) => (Outcome::InfraError, e),
        Ok(None) => return None,
        Ok(Some(f)) => match (&p.expect(), f.outcome) {
            // A block that shows a syntax error on purpose.
            (Expect::CompileError(_), Outcome::CompileError) => {
                (Outcome::ExpectedErrorObserved, f.detail)
            }
            _ => (f.outcome, f.detail),
        },
    };
    Some(State {
        tier: Tier::Static,
        outcome,
        detail,
        binary: None,
    })
}
