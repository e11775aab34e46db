//! `errata outcome <ID> <ITEM> --worked|--failed [...]`: records what happened when you
//! tried a dead end or a workaround, as one line of `outcomes/<domain>/<slug>.jsonl` in
//! the data directory, for a pull request. The record is validated against the entry
//! first (the checks of `outcome-invalid`); nothing is written when it is not valid.

use std::process::ExitCode;

use anyhow::{Context as _, Result};
use errata_load::KnowledgeBase;
use errata_model::date::Date;
use errata_outcomes::{Env, OutcomeRecord, Shape};

use super::common;

/// Arguments of `errata outcome`.
#[derive(clap::Args)]
pub struct Args {
    /// The entry id, `<domain>/<slug>`.
    pub id: String,
    /// `dead_end:<i>` or `workaround:<i>` (0-based, as listed on the entry's page).
    pub item: String,
    /// It fixed the error.
    #[arg(long, conflicts_with = "failed", required_unless_present = "failed")]
    pub worked: bool,
    /// It did not fix the error.
    #[arg(long)]
    pub failed: bool,
    /// Who reports it (default: `git config user.email`).
    #[arg(long)]
    pub reporter: Option<String>,
    /// A public page that shows it (https).
    #[arg(long)]
    pub source: Option<String>,
    /// The GPU, e.g. "NVIDIA H200".
    #[arg(long)]
    pub gpu: Option<String>,
    /// The driver version.
    #[arg(long)]
    pub driver: Option<String>,
    /// The CUDA version.
    #[arg(long)]
    pub cuda: Option<String>,
    /// The PyTorch version.
    #[arg(long)]
    pub torch: Option<String>,
    /// The day it happened (default: today), YYYY-MM-DD.
    #[arg(long)]
    pub date: Option<String>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let config = common::config()?;
    let root = config.data_dir.clone();
    let kb =
        KnowledgeBase::load(&root).with_context(|| format!("cannot load {}", root.display()))?;
    let reporter = match args.reporter {
        Some(r) => r,
        None => git_email()
            .context("say who reports it: --reporter NAME (no `git config user.email`)")?,
    };
    let env = Env {
        gpu: args.gpu,
        driver: args.driver,
        cuda: args.cuda,
        torch: args.torch,
    };
    let record = OutcomeRecord {
        entry: args.id.clone(),
        item: args.item.clone(),
        outcome: if args.worked { "worked" } else { "failed" }.into(),
        date: args.date.unwrap_or_else(|| Date::today().to_string()),
        env: (env != Env::default()).then_some(env),
        source: args.source,
        reporter,
    };
    let shape = kb
        .entries
        .iter()
        .filter_map(|d| d.entry.as_ref())
        .find(|e| e.id == args.id)
        .map(|e| Shape {
            dead_ends: e.dead_ends.len(),
            workarounds: e.workarounds.len(),
        });
    let path = errata_outcomes::record(&root.join("outcomes"), &record, shape, Date::today())
        .map_err(|problems| {
            for p in problems.split("; ") {
                eprintln!("error: {p}");
            }
            anyhow::anyhow!("nothing recorded")
        })?;
    println!(
        "recorded in {}: {} {} {}",
        path.display(),
        record.entry,
        record.item,
        record.outcome
    );
    eprintln!(
        "`errata check` validates it; commit the file in a pull request, and the build adds it to the item's count"
    );
    Ok(ExitCode::SUCCESS)
}

fn git_email() -> Option<String> {
    let out = std::process::Command::new("git")
        .args(["config", "user.email"])
        .output()
        .ok()?;
    let email = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !email.is_empty()).then_some(email)
}
