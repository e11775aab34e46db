//! `errata check`: every rule over the knowledge base (or the given files).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result};
use errata_check::CheckOptions;
use errata_load::KnowledgeBase;
use errata_model::Severity;
use errata_model::date::Date;
use errata_report::Format;

use super::common;

/// Arguments of `errata check`.
#[derive(clap::Args)]
pub struct Args {
    /// Data directory, sub-directory or files (default: `data_dir` from errata.toml, else `data`).
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    /// The date to check against (YYYY-MM-DD; default: today, UTC).
    #[arg(long)]
    pub today: Option<String>,
    /// Treat warnings as errors (exit 1 when any is found).
    #[arg(long)]
    pub deny_warnings: bool,
    /// Print how long loading, checking and reporting took, and the ten costliest rules
    /// (time summed over files and threads), on standard error.
    #[arg(long)]
    pub timings: bool,
    /// Check only the files of the data directory that differ from REV (git), with
    /// references still resolved against the whole knowledge base. REV defaults to the
    /// merge base with the default branch, as a pull request's diff.
    #[arg(long, value_name = "REV", num_args = 0..=1, default_missing_value = "", conflicts_with = "paths")]
    pub changed: Option<String>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let config = common::config()?;
    super::common::check_rule_ids(&config)?;
    let today = match &args.today {
        Some(t) => Date::parse(t).with_context(|| format!("--today {t}: expected YYYY-MM-DD"))?,
        None => Date::today(),
    };
    let (root, mut selected) = common::resolve_paths(&args.paths, &config)?;
    // `--changed`: the files that differ, and the names of deleted ones (references to
    // them in unchanged files are reported too: deleting an entry can break those).
    let mut deleted_names = Vec::new();
    if let Some(rev) = &args.changed {
        let rev = (!rev.is_empty()).then_some(rev.as_str());
        let changed = super::changed::changed(&root, rev)?;
        eprintln!(
            "checking {} changed file(s) under {} (against {})",
            changed.files.len(),
            root.display(),
            &changed.base[..changed.base.len().min(12)]
        );
        deleted_names = super::changed::deleted_names(&root, &changed.deleted);
        selected = Some(changed.files);
    }
    let started = Instant::now();
    let kb = KnowledgeBase::load(&root)
        .with_context(|| format!("cannot load the knowledge base at {}", root.display()))?;
    let options = CheckOptions {
        today,
        overrides: config.rules.clone(),
    };
    let loaded = started.elapsed();
    let (mut diagnostics, rule_times) = if args.timings {
        errata_check::check_timed(&kb, &options)
    } else {
        (errata_check::check(&kb, &options), Vec::new())
    };
    let checked = started.elapsed();
    let mut files = kb.sources().len()
        + kb.diagnostics
            .iter()
            .filter(|d| kb.source(&d.file).is_none())
            .count();
    if let Some(selected) = &selected {
        diagnostics.retain(|d| {
            common::is_selected(d, selected)
                || deleted_names
                    .iter()
                    .any(|name| d.message.contains(name.as_str()))
        });
        files = kb
            .sources()
            .iter()
            .filter(|s| common::in_selection(&s.path, selected))
            .count()
            .max(selected.iter().filter(|p| p.exists()).count());
    }
    common::print(args.format, &diagnostics, &kb, files);
    if args.timings {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        eprintln!(
            "timing: load {:.1} ms ({} files), check {:.1} ms, report {:.1} ms",
            ms(loaded),
            kb.sources().len(),
            ms(checked - loaded),
            ms(started.elapsed() - checked)
        );
        for (rule, ns) in rule_times.iter().take(10) {
            eprintln!("timing:   {rule:<36} {:>9.1} ms", *ns as f64 / 1e6);
        }
    }
    let failing = diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error || args.deny_warnings);
    // The process ends here: freeing the knowledge base one allocation at a time (11,000
    // files' texts, typed entries and line tables) would only delay the exit the
    // operating system does at once.
    std::mem::forget(kb);
    Ok(if failing {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
