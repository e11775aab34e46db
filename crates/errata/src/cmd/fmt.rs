//! `errata fmt [--check]`: canonical entry formatting.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context as _, Result};
use errata_load::KnowledgeBase;

use super::common;

/// Arguments of `errata fmt`.
#[derive(clap::Args)]
pub struct Args {
    /// Data directory or entry files (default: the configured data directory).
    pub paths: Vec<PathBuf>,
    /// Do not write; exit 1 if any file is not canonically formatted.
    #[arg(long)]
    pub check: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let config = common::config()?;
    let (root, selected) = common::resolve_paths(&args.paths, &config)?;
    let kb =
        KnowledgeBase::load(&root).with_context(|| format!("cannot load {}", root.display()))?;
    let mut unformatted = 0;
    let mut failed = 0;
    for doc in &kb.entries {
        if let Some(sel) = &selected
            && !sel
                .iter()
                .any(|p| doc.path == *p || doc.path.starts_with(p))
        {
            continue;
        }
        let Some(src) = kb.source(&doc.path) else {
            continue;
        };
        let formatted = match errata_check::canonical_entry(&src.text) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("error: {}: {e}", doc.path.display());
                failed += 1;
                continue;
            }
        };
        if *formatted == *src.text {
            continue;
        }
        unformatted += 1;
        if args.check {
            println!("{}", doc.path.display());
        } else {
            write_atomically(&doc.path, formatted.as_bytes())
                .with_context(|| format!("cannot write {}", doc.path.display()))?;
            println!("formatted {}", doc.path.display());
        }
    }
    // Files that are not JSON were never loaded as entries: `errata check` reports them.
    failed += kb
        .diagnostics
        .iter()
        .filter(|d| d.rule == "json-syntax")
        .count();
    if args.check && unformatted > 0 {
        eprintln!("{unformatted} file(s) are not canonically formatted; run `errata fmt`");
    }
    Ok(if failed > 0 || (args.check && unformatted > 0) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Writes through a temporary file in the same directory, so an interrupted write never
/// leaves a half-written entry.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}
