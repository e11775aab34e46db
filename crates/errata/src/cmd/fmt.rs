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
    let mut dirs: Vec<&std::path::Path> =
        kb.entries.iter().filter_map(|d| d.path.parent()).collect();
    dirs.sort();
    dirs.dedup();
    for dir in dirs {
        remove_abandoned(dir);
    }
    for (doc, src) in common::selected_entries(&kb, selected.as_deref()) {
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

/// Writes through a temporary file beside `path` (`.<name>.<pid>.errata-tmp`), flushed
/// to disk, then renamed over it: a write interrupted at any point (a kill, a full disk,
/// a power cut) leaves the previous file whole. The temporary file's name holds the pid,
/// so two `errata fmt` at once never write the same one, and [`remove_abandoned`]
/// recognises what a killed run left behind.
pub fn write_atomically(path: &std::path::Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(std::path::Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}{TMP_SUFFIX}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

const TMP_SUFFIX: &str = ".errata-tmp";

/// Removes the temporary files of [`write_atomically`] that a killed `errata fmt` or
/// `errata new` left in `dir` (Linux: only those whose process is gone).
pub fn remove_abandoned(dir: &std::path::Path) {
    let Ok(items) = std::fs::read_dir(dir) else {
        return;
    };
    for item in items.flatten() {
        let name = item.file_name().to_string_lossy().into_owned();
        let pid = name
            .strip_suffix(TMP_SUFFIX)
            .filter(|_| name.starts_with('.'))
            .and_then(|rest| rest.rsplit('.').next())
            .and_then(|pid| pid.parse::<u32>().ok());
        if pid.is_some_and(errata_outdir::process_is_gone) {
            let _ = std::fs::remove_file(item.path());
        }
    }
}
