//! `errata bundle`: write the data bundle, or `verify` / `diff` bundle files.
//!
//! Writing checks the knowledge base first and refuses to publish data with errors
//! (exit 1), like `errata build`. `verify` exits 1 when anything is wrong and names the
//! member at fault; `diff` prints what changed and the semver bump it implies.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use errata_bundle::{BundleOptions, Diff, Snapshot, Version};
use errata_load::KnowledgeBase;

/// Arguments.
#[derive(clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct Args {
    #[command(subcommand)]
    action: Option<Action>,
    #[command(flatten)]
    write: WriteArgs,
}

#[derive(clap::Subcommand)]
enum Action {
    /// Check a bundle: SHA256SUMS, the manifest schema, every member's hash.
    Verify {
        /// The bundle file (`errata-<version>.tar.gz`).
        file: PathBuf,
        /// The checksum file published with the bundle [default: `SHA256SUMS` beside it].
        #[arg(long, value_name = "PATH")]
        sums: Option<PathBuf>,
    },
    /// List added, removed and changed entries between two bundles, and the bump.
    Diff {
        /// The older bundle.
        old: PathBuf,
        /// The newer bundle.
        new: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value = "human")]
        format: Format,
    },
}

#[derive(clap::Args)]
struct WriteArgs {
    /// The data directory (default: `data_dir` from `errata.toml`, else `data`).
    #[arg(long, value_name = "DIR")]
    data: Option<PathBuf>,
    /// Output directory.
    #[arg(long, value_name = "DIR", default_value = "dist/bundle")]
    out: PathBuf,
    /// The previous bundle: the new version is its version bumped by the diff, and the
    /// changelog gains an entry.
    #[arg(long, value_name = "OLD")]
    previous: Option<PathBuf>,
    /// Write this version instead of the one the diff implies (default 1.0.0 without
    /// `--previous`).
    #[arg(long = "set-version", value_name = "X.Y.Z")]
    version: Option<String>,
    /// Bundle the JSON Schemas in DIR instead of the ones built into errata (the ones
    /// `errata check` validates against).
    #[arg(long, value_name = "DIR")]
    schema: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum Format {
    Human,
    Json,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.action {
        Some(Action::Verify { file, sums }) => verify(&file, sums.as_deref()),
        Some(Action::Diff { old, new, format }) => diff(&old, &new, format),
        None => write(args.write),
    }
}

fn write(args: WriteArgs) -> anyhow::Result<ExitCode> {
    let data = match args.data {
        Some(dir) => dir,
        None => super::common::config()?.data_dir,
    };
    let Some(kb) = load_checked(&data)? else {
        return Ok(ExitCode::from(1));
    };
    super::common::refuse_output_over_data(&args.out, &kb.root)?;
    let version = args
        .version
        .map(|v| v.parse::<Version>().map_err(anyhow::Error::msg))
        .transpose()
        .context("--set-version")?;
    let opts = BundleOptions {
        out_dir: args.out,
        schema_dir: args.schema.unwrap_or_default(),
        version,
        previous: args.previous,
        ..BundleOptions::default()
    };
    let parent = match opts.out_dir.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // The same lock as `errata build`'s on its --out (the bundle's parent directory).
    let _lock = super::common::lock_output_dir(&parent)?;
    let written = errata_bundle::write_bundle_report(&kb, &opts)?;
    let m = &written.manifest;
    println!(
        "wrote {} (version {}, {} entries, {} articles, {} translations, {} run records)",
        written.path.display(),
        m.version,
        m.counts.entries,
        m.counts.articles,
        m.counts.translations,
        m.counts.runs
    );
    if let Some(diff) = &written.diff {
        print!("{}", diff.render());
    }
    Ok(ExitCode::SUCCESS)
}

/// The knowledge base in `data` (default: the configured data directory), checked with
/// the configured rules; `None` (after saying why on standard error) when it has errors:
/// a bundle is never written from data with errors.
fn load_checked(data: &Path) -> anyhow::Result<Option<KnowledgeBase>> {
    let config = super::common::config()?;
    let kb = KnowledgeBase::load(data)?;
    super::common::check_rule_ids(&config)?;
    let options = errata_check::CheckOptions {
        overrides: config.rules.clone(),
        ..Default::default()
    };
    let diagnostics = errata_check::check(&kb, &options);
    if errata_check::has_errors(&diagnostics) {
        let errors = errata_report::counts(&diagnostics).errors;
        eprintln!(
            "error: {errors} error(s) in {}; run `errata check` — a bundle is never written from data with errors",
            data.display()
        );
        return Ok(None);
    }
    Ok(Some(kb))
}

/// Checks the data directory and writes its bundle into `out`, returning the bundle's
/// path; `None` when the data has errors (said on standard error). For commands that
/// answer from a bundle of the data directory (`errata mcp`), which is the knowledge base
/// built into errata when there is none here.
pub fn write_checked(data: Option<PathBuf>, out: &Path) -> anyhow::Result<Option<PathBuf>> {
    let dir = super::common::data_or_embedded(data)?;
    let Some(kb) = load_checked(&dir.path)? else {
        return Ok(None);
    };
    let opts = BundleOptions {
        out_dir: out.to_path_buf(),
        ..BundleOptions::default()
    };
    Ok(Some(errata_bundle::write_bundle(&kb, &opts)?))
}

fn verify(file: &Path, sums: Option<&Path>) -> anyhow::Result<ExitCode> {
    if !file.is_file() {
        anyhow::bail!("{}: no such bundle file", file.display());
    }
    let report = match sums {
        Some(sums) => errata_bundle::verify_with_sums(file, sums),
        None => errata_bundle::verify(file),
    };
    if report.is_ok() {
        let m = report.manifest.as_ref();
        println!(
            "ok: {} (version {}, {} entries, {} members verified)",
            file.display(),
            m.map_or("?", |m| m.version.as_str()),
            m.map_or(0, |m| m.counts.entries),
            m.map_or(0, |m| m.files.len() + 1)
        );
        return Ok(ExitCode::SUCCESS);
    }
    for problem in &report.problems {
        eprintln!("error: {problem}");
    }
    eprintln!(
        "{}: {} problem(s); do not use this bundle",
        file.display(),
        report.problems.len()
    );
    Ok(ExitCode::from(1))
}

fn diff(old: &Path, new: &Path, format: Format) -> anyhow::Result<ExitCode> {
    let diff = Diff::between(&Snapshot::open(old)?, &Snapshot::open(new)?);
    match format {
        Format::Human => print!("{}", diff.render()),
        Format::Json => println!("{}", diff.to_json()),
    }
    Ok(ExitCode::SUCCESS)
}
