//! `cargo xtask <command>`: developer commands that are not part of the `errata` binary.
//!
//! One module per command, each with a `run(args)` entry point. The repository root is
//! found from `CARGO_MANIFEST_DIR`, so commands work from any directory.

mod bench;
mod bench_match;
mod bench_py;
mod bench_site;
mod c_header;
mod fuzz;
mod gen_corpus;
mod gen_cuda_errors;
mod gen_status_codes;
mod gen_torch_api;
mod generated;
mod nvcc;
mod py_wheel;
mod snippets;
mod wheel;

use std::path::PathBuf;

use anyhow::{Result, bail};

/// A command: its name, a one-line summary for `cargo xtask help`, and its entry point.
struct Command {
    name: &'static str,
    summary: &'static str,
    run: fn(&[String]) -> Result<()>,
}

const COMMANDS: &[Command] = &[
    Command {
        name: "gen-corpus",
        summary: "write a large valid corpus: --entries N --articles M --out DIR [--seed S]",
        run: gen_corpus::run,
    },
    Command {
        name: "bench-site",
        summary: "site build benchmark with phase timings: CORPUS_DIR [--bin PATH]",
        run: bench_site::run,
    },
    Command {
        name: "bench",
        summary: "check, match, bundle and build benchmarks on a generated corpus [--entries N] [--articles M] [--quick] [--only check|match|site|py]",
        run: bench::run,
    },
    Command {
        name: "gen-cuda-errors",
        summary: "regenerate the cudaError_t table from CUDA's driver_types.h [--check]",
        run: gen_cuda_errors::run,
    },
    Command {
        name: "gen-cublas-status",
        summary: "regenerate the cublasStatus_t table from the nvidia-cublas wheel's cublas_api.h [--check]",
        run: gen_status_codes::run_cublas,
    },
    Command {
        name: "gen-cudnn-status",
        summary: "regenerate the cudnnStatus_t table from the nvidia-cudnn wheel's cudnn_graph.h [--check]",
        run: gen_status_codes::run_cudnn,
    },
    Command {
        name: "gen-nccl-results",
        summary: "regenerate the ncclResult_t table from the nvidia-nccl wheel's nccl.h [--check]",
        run: gen_status_codes::run_nccl,
    },
    Command {
        name: "gen-cu-results",
        summary: "regenerate the driver API's CUresult table from the runtime wheel's cuda.h [--check]",
        run: gen_status_codes::run_cu_result,
    },
    Command {
        name: "gen-cufft-results",
        summary: "regenerate the cufftResult table from the nvidia-cufft wheel's cufft.h [--check]",
        run: gen_status_codes::run_cufft,
    },
    Command {
        name: "gen-cusolver-status",
        summary: "regenerate the cusolverStatus_t table from the nvidia-cusolver wheel's cusolver_common.h [--check]",
        run: gen_status_codes::run_cusolver,
    },
    Command {
        name: "gen-cusparse-status",
        summary: "regenerate the cusparseStatus_t table from the nvidia-cusparse wheel's cusparse.h [--check]",
        run: gen_status_codes::run_cusparse,
    },
    Command {
        name: "gen-curand-status",
        summary: "regenerate the curandStatus_t table from the nvidia-curand wheel's curand.h [--check]",
        run: gen_status_codes::run_curand,
    },
    Command {
        name: "gen-nvml-returns",
        summary: "regenerate the nvmlReturn_t table from the nvidia-nvml-dev wheel's nvml.h [--check]",
        run: gen_status_codes::run_nvml,
    },
    Command {
        name: "py-wheel",
        summary: "build the Python package errata (crates/errata-py) with the bundle of data/ inside [--out DIR]",
        run: py_wheel::run,
    },
    Command {
        name: "snippets",
        summary: "verify snippets [PATH…] [--tier static|compile|run] [--format human|json] [--pack DIR] [--ingest DIR] [--allow-no-gpu] [--trusted | --allow FILE] [--print-allow] (run/pack need --trusted or --allow)",
        run: snippets::run,
    },
    Command {
        name: "fuzz",
        summary: "build the fuzz targets (fuzz/) instrumented and run them under libFuzzer [TARGET…] [--time SECONDS] [--smoke] [--merge]",
        run: fuzz::run,
    },
    Command {
        name: "gen-torch-api",
        summary: "regenerate the torch API name list from a pinned torch wheel [--check] [--wheel PATH]",
        run: gen_torch_api::run,
    },
    Command {
        name: "nvcc",
        summary: "install the pinned CUDA 13 wheels into the cache [--print-root] [--error-strings [--check]]",
        run: nvcc::run,
    },
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Err(err) = dispatch(&args) {
        eprintln!("xtask: error: {err:#}");
        std::process::exit(1);
    }
}

fn dispatch(args: &[String]) -> Result<()> {
    let Some(name) = args.first() else {
        print_help();
        return Ok(());
    };
    if name == "help" || name == "--help" || name == "-h" {
        print_help();
        return Ok(());
    }
    match COMMANDS.iter().find(|c| c.name == name) {
        Some(cmd) => (cmd.run)(&args[1..]),
        None => {
            print_help();
            bail!("unknown command `{name}`")
        }
    }
}

fn print_help() {
    println!("usage: cargo xtask <command> [args]\n\ncommands:");
    for cmd in COMMANDS {
        println!("  {:<16} {}", cmd.name, cmd.summary);
    }
}

/// The repository root (the parent of `xtask/`).
pub fn repo_root() -> PathBuf {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map(PathBuf::from).unwrap_or(manifest)
}

/// `cargo`, run by this `cargo xtask` process, without the variables `cargo run` set for
/// xtask itself (see [`without_cargo_run_env`]).
pub fn cargo() -> std::process::Command {
    let mut cmd =
        std::process::Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    without_cargo_run_env(&mut cmd);
    cmd
}

/// Removes from `cmd`'s environment what `cargo run` set for xtask (`CARGO_MANIFEST_DIR`,
/// `CARGO_PKG_*`, …). A build started from here would otherwise not be the build the
/// shell starts: build scripts that watch one of these variables (ring's watches
/// `CARGO_MANIFEST_DIR`) see another value, run again, and every crate above them is
/// rebuilt, then rebuilt once more by the next build from the shell. In CI that was the
/// release build of ring, rustls, reqwest, errata-links and errata twice (110 s).
pub fn without_cargo_run_env(cmd: &mut std::process::Command) {
    const EXACT: &[&str] = &[
        "CARGO_CRATE_NAME",
        "CARGO_BIN_NAME",
        "CARGO_PRIMARY_PACKAGE",
    ];
    const PREFIXES: &[&str] = &["CARGO_MANIFEST_", "CARGO_PKG_"];
    for (key, _) in std::env::vars_os() {
        let Some(name) = key.to_str() else { continue };
        if EXACT.contains(&name) || PREFIXES.iter().any(|p| name.starts_with(p)) {
            cmd.env_remove(&key);
        }
    }
}
