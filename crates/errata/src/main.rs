//! `errata`: check, verify and publish a knowledge base of GPU/CUDA errors.
//!
//! This binary is thin: argument parsing and one file per subcommand under `cmd/`, each
//! calling one library entry point. Exit codes: 0 success, 1 problems found in the data,
//! 2 usage, configuration or I/O failure of the tool itself.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

// Loading, checking and rendering allocate many small short-lived values from several
// threads; glibc's allocator spent a fifth of `errata check`'s time on a 10,000-entry
// corpus (see ARCHITECTURE.md, "Performance").
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `errata --version`: the tool's version and the knowledge base built into it.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (knowledge base: ",
    env!("ERRATA_KB_ENTRIES"),
    " entries, data ",
    env!("ERRATA_KB_DIGEST"),
    ")"
);

#[derive(Parser)]
#[command(
    name = "errata",
    version = VERSION,
    about = "Check, verify and publish a knowledge base of GPU/CUDA errors",
    after_help = "Exit codes: 0 nothing wrong found; 1 problems found in the data (for `match`: known errors found in the log; for `decode`: no family has the value); 2 the tool failed (usage, configuration, I/O).\nColour only on a terminal, never when NO_COLOR is set."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check entries and articles against the schema and every rule.
    Check(cmd::check::Args),
    /// Show the documentation of a rule.
    Explain(cmd::explain::Args),
    /// Format entries canonically (key order, 2-space indent, trailing newline).
    Fmt(cmd::fmt::Args),
    /// Bring entries written before the Evidence schema up to it (rates without a basis become estimates).
    Migrate(cmd::migrate::Args),
    /// Record what happened when you tried a dead end or a workaround (for a pull request).
    Outcome(cmd::outcome::Args),
    /// Write a new entry scaffold at `<domain>/<slug>`.
    New(cmd::new::Args),
    /// Check, then build the site and the data bundle into `dist/`.
    Build(cmd::build::Args),
    /// Write, verify or diff data bundles.
    Bundle(cmd::bundle::Args),
    /// Scan a log for known errors.
    Match(cmd::matching::Args),
    /// What a bare error number or name means in every family (cudaError_t, CUresult, cuBLAS, …, Xid).
    Decode(cmd::decode::Args),
    /// Group the known errors of several logs (ranks, kernel, NCCL) into incidents and name each first cause.
    Incidents(cmd::incidents::Args),
    /// Known-bad environments before anything crashes: audit collect_env / nvidia-smi / nvcc / pip reports, or --probe this machine.
    Audit(cmd::audit::Args),
    /// Check every external URL.
    Links(cmd::links::Args),
    /// Preview the site locally, rebuilding on change.
    Serve(cmd::serve::Args),
    /// Answer assistants over the Model Context Protocol (stdio): match_error, get_entry, search, decode, incidents, audit, report_outcome.
    Mcp(cmd::mcp::Args),
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    let result = match cli.command {
        Command::Check(args) => cmd::check::run(args),
        Command::Explain(args) => cmd::explain::run(args),
        Command::Fmt(args) => cmd::fmt::run(args),
        Command::Migrate(args) => cmd::migrate::run(args),
        Command::New(args) => cmd::new::run(args),
        Command::Outcome(args) => cmd::outcome::run(args),
        Command::Build(args) => cmd::build::run(args),
        Command::Bundle(args) => cmd::bundle::run(args),
        Command::Match(args) => cmd::matching::run(args),
        Command::Decode(args) => cmd::decode::run(args),
        Command::Incidents(args) => cmd::incidents::run(args),
        Command::Audit(args) => cmd::audit::run(args),
        Command::Links(args) => cmd::links::run(args),
        Command::Serve(args) => cmd::serve::run(args),
        Command::Mcp(args) => cmd::mcp::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(2)
        }
    }
}
