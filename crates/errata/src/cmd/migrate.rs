//! `errata migrate [PATH…] [--check]`: brings entries written before the Evidence
//! schema (2.x) up to it: every rate without a `basis` becomes an `estimate`, and an
//! entry without `dead_ends_zh` gets an empty string per dead end for `zh-missing` to
//! point at; a `confidence` above its tier's ceiling is lowered to it. It invents
//! nothing; it then says what is left to do.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use errata_check::migrate::{Migration, migrate_entry};
use errata_load::KnowledgeBase;

use super::common;
use super::fmt::write_atomically;

/// Arguments of `errata migrate`.
#[derive(clap::Args)]
pub struct Args {
    /// Data directory or entry files (default: the configured data directory).
    pub paths: Vec<PathBuf>,
    /// Do not write; list the entries that need migrating and exit 1 if any do.
    #[arg(long)]
    pub check: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let config = common::config()?;
    let (root, selected) = common::resolve_paths(&args.paths, &config)?;
    let kb =
        KnowledgeBase::load(&root).with_context(|| format!("cannot load {}", root.display()))?;
    let mut total = Migration::default();
    let (mut files, mut failed, mut lowered, mut no_action) = (0, 0, 0usize, 0usize);
    for (doc, src) in common::selected_entries(&kb, selected.as_deref()) {
        let (text, m) = match migrate_entry(&src.text) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("error: {}: {e}", doc.path.display());
                failed += 1;
                continue;
            }
        };
        no_action += usize::from(m.action_missing);
        if !m.changed() {
            continue;
        }
        files += 1;
        total.estimates += m.estimates;
        total.untranslated += m.untranslated;
        lowered += usize::from(m.confidence_lowered);
        if args.check {
            println!("{}", doc.path.display());
        } else {
            write_atomically(&doc.path, text.as_bytes())
                .with_context(|| format!("cannot write {}", doc.path.display()))?;
            println!(
                "migrated {}: {} estimate(s), {} dead end(s) to translate{}",
                doc.path.display(),
                m.estimates,
                m.untranslated,
                if m.confidence_lowered {
                    ", confidence lowered to its tier's ceiling"
                } else {
                    ""
                }
            );
        }
    }
    let verb = if args.check { "need" } else { "were" };
    eprintln!(
        "{files} entr{} {verb} migrated: {} rate(s) marked `estimate`, {} empty `dead_ends_zh` item(s), {lowered} confidence(s) lowered to their tier's ceiling",
        if files == 1 { "y" } else { "ies" },
        total.estimates,
        total.untranslated
    );
    if (total.estimates > 0 || total.untranslated > 0) && !args.check {
        eprintln!(
            "left to do:\n  - translate each empty `dead_ends_zh` item (`errata check` reports them as zh-missing)\n  \
             - count the public reports behind each estimate, or leave it an estimate (`errata explain rate-basis-mismatch`)"
        );
    }
    if no_action > 0 {
        eprintln!(
            "{no_action} entr{} without `operator_action`: choose one for each (fix-code, fix-config, \
             fix-environment, restart-process, reset-gpu, reboot-node, drain-and-inspect, \
             replace-hardware, none; see docs/data.md); `errata check` reports them",
            if no_action == 1 { "y" } else { "ies" }
        );
    }
    Ok(if failed > 0 || (args.check && files > 0) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
