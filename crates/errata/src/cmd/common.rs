//! Helpers shared by subcommands: configuration, loading, printing diagnostics.

use std::io::{IsTerminal, Read as _};
use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result};
use errata_load::{Config, KnowledgeBase};
use errata_model::Diagnostic;
use errata_report::{Context, Format};

/// `errata.toml` from the current directory (all defaults when absent).
pub fn config() -> Result<Config> {
    Config::discover(Path::new(".")).map_err(anyhow::Error::msg)
}

/// Fails on a rule id in `errata.toml`'s `[rules]` that is no rule: a misspelt override
/// would otherwise be silently ignored.
pub fn check_rule_ids(config: &Config) -> Result<()> {
    let unknown = errata_check::unknown_rule_ids(config.rules.keys());
    if !unknown.is_empty() {
        anyhow::bail!(
            "errata.toml: unknown rule id(s) in [rules]: {}",
            unknown.join(", ")
        );
    }
    Ok(())
}

/// The data directory that `paths` (or the configuration) designate, and the files to
/// report on (`None`: all of them).
pub fn resolve_paths(
    paths: &[PathBuf],
    config: &Config,
) -> Result<(PathBuf, Option<Vec<PathBuf>>)> {
    if paths.is_empty() {
        return Ok((config.data_dir.clone(), None));
    }
    let mut root: Option<PathBuf> = None;
    let mut selected = Vec::new();
    for path in paths {
        std::fs::metadata(path).with_context(|| format!("cannot read {}", path.display()))?;
        let found = KnowledgeBase::find_root(path).unwrap_or_else(|| {
            if path.is_dir() {
                path.clone()
            } else {
                path.parent()
                    .map_or_else(|| PathBuf::from("."), Path::to_path_buf)
            }
        });
        match &root {
            Some(r) if r != &found => {
                anyhow::bail!(
                    "{} and {} belong to different data directories",
                    r.display(),
                    found.display()
                )
            }
            _ => root = Some(found.clone()),
        }
        if path != &found {
            selected.push(path.clone());
        }
    }
    let root = root.unwrap_or_else(|| config.data_dir.clone());
    Ok((root, (!selected.is_empty()).then_some(selected)))
}

/// Whether `path` is one of the selected paths (a file, or inside a directory).
pub fn in_selection(path: &Path, selected: &[PathBuf]) -> bool {
    selected.iter().any(|p| path == p || path.starts_with(p))
}

/// The entries that `selected` names (all when `None`), with their source text: what
/// `errata fmt` and `errata migrate` rewrite.
pub fn selected_entries<'kb>(
    kb: &'kb KnowledgeBase,
    selected: Option<&'kb [PathBuf]>,
) -> impl Iterator<Item = (&'kb errata_load::EntryDoc, &'kb errata_load::SourceFile)> {
    kb.entries
        .iter()
        .filter(move |doc| selected.is_none_or(|sel| in_selection(&doc.path, sel)))
        .filter_map(|doc| kb.source(&doc.path).map(|src| (doc, src)))
}

/// Whether a diagnostic's file is one of the selected paths (a file, or inside a directory).
pub fn is_selected(d: &Diagnostic, selected: &[PathBuf]) -> bool {
    selected
        .iter()
        .any(|s| d.file == *s || d.file.starts_with(s) || same_file(&d.file, s))
}

fn same_file(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(x), Ok(y)) if x == y || x.starts_with(&y))
}

/// Whether to colour standard output: a terminal, and no `NO_COLOR` (https://no-color.org:
/// set and not empty turns colour off).
pub fn colour_on_stdout() -> bool {
    std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// Prints diagnostics in `format` to stdout (human output goes to stdout too, like rustc's
/// `--error-format` when redirected, so it can be piped).
pub fn print(format: Format, diagnostics: &[Diagnostic], kb: &KnowledgeBase, files: usize) {
    let source = |p: &Path| kb.source(p).map(|s| s.text.as_str());
    let summary = |id: &str| errata_check::rule_info(id).map(|r| r.summary);
    let cx = Context {
        files,
        source: &source,
        rule_summary: &summary,
        color: colour_on_stdout(),
    };
    print!("{}", errata_report::render(format, diagnostics, &cx));
}

/// Takes the lock that keeps two errata processes from writing the outputs under `dir`
/// at once (`errata build` twice, or a build and an `errata bundle`); says so when it
/// has to wait. Held until the returned lock is dropped or the process ends.
pub fn lock_output_dir(dir: &Path) -> Result<errata_outdir::DirLock> {
    errata_outdir::DirLock::acquire(dir, || {
        eprintln!(
            "waiting for another errata process writing {} to finish…",
            dir.display()
        );
    })
    .with_context(|| format!("cannot lock {}", dir.display()))
}

/// Refuses an output directory that is the data directory or holds it: the output is
/// replaced whole, and `errata build site --out .` would otherwise swap the knowledge
/// base out for the rendered site and delete it.
pub fn refuse_output_over_data(out: &Path, data: &Path) -> Result<()> {
    let absolute = |p: &Path| -> Result<PathBuf> {
        let abs = std::path::absolute(p).with_context(|| p.display().to_string())?;
        // Resolve what exists (symbolic links included); keep the rest lexically.
        let mut existing = abs.as_path();
        let mut rest = Vec::new();
        while !existing.exists() {
            match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    rest.push(name.to_os_string());
                    existing = parent;
                }
                _ => break,
            }
        }
        let mut resolved = existing
            .canonicalize()
            .unwrap_or_else(|_| existing.to_path_buf());
        for name in rest.iter().rev() {
            resolved.push(name);
        }
        Ok(resolved)
    };
    let (out_abs, data_abs) = (absolute(out)?, absolute(data)?);
    if data_abs.starts_with(&out_abs) {
        anyhow::bail!(
            "refusing to write {}: it is or holds the data directory {}, and an output is replaced whole",
            out.display(),
            data.display()
        );
    }
    Ok(())
}

/// The repository's `data/`, packed into this binary at build time (`build.rs`).
const EMBEDDED_DATA: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/kb-data.tar.gz"));

/// A data directory to answer from, and the scratch directory that holds it when it is
/// the one packed into the binary.
pub struct DataDir {
    /// The directory.
    pub path: PathBuf,
    _scratch: Option<tempfile::TempDir>,
}

/// Where the knowledge a command answers from lives.
pub enum DataSource {
    /// A data directory: the one `--data` names, else the configured one.
    Dir(PathBuf),
    /// The knowledge base packed into this binary (there is no data directory here).
    BuiltIn,
}

/// The data directory `data` names; else the configured one (`data_dir` in
/// `errata.toml`, else `data`) when it exists; else the knowledge base packed into this
/// binary: `errata match`, `decode` and `mcp` work in any directory. A `--data` that does
/// not exist is an error, never silently replaced.
pub fn data_source(data: Option<PathBuf>) -> Result<DataSource> {
    if let Some(path) = data {
        return Ok(DataSource::Dir(path));
    }
    let configured = config()?.data_dir;
    if configured.is_dir() {
        return Ok(DataSource::Dir(configured));
    }
    Ok(DataSource::BuiltIn)
}

/// [`data_source`] as a directory: the built-in knowledge base is unpacked into a scratch
/// directory, for a command that needs all of it on disk (`errata mcp` bundles it, run
/// records included).
pub fn data_or_embedded(data: Option<PathBuf>) -> Result<DataDir> {
    if let DataSource::Dir(path) = data_source(data)? {
        return Ok(DataDir {
            path,
            _scratch: None,
        });
    }
    let scratch = tempfile::tempdir().context("cannot create a temporary directory")?;
    let path = scratch.path().join("data");
    let gz = flate2::read::GzDecoder::new(EMBEDDED_DATA);
    tar::Archive::new(gz)
        .unpack(&path)
        .context("unpacking the knowledge base built into errata")?;
    if !path.join("signatures").is_dir() {
        anyhow::bail!(no_built_in_knowledge()?);
    }
    Ok(DataDir {
        path,
        _scratch: Some(scratch),
    })
}

/// The entries of [`data_source`]: the knowledge base loaded from its directory, or the
/// built-in one's `signatures/` read straight out of the binary. An answering command
/// needs only the entries, and writing the packed files into a scratch directory only to
/// read them back (and delete them) was most of its start-up with the built-in one.
pub fn entries_of(data: Option<PathBuf>) -> Result<KnowledgeBase> {
    let dir = match data_source(data)? {
        DataSource::Dir(dir) => return Ok(KnowledgeBase::load(&dir)?),
        DataSource::BuiltIn => Path::new(BUILT_IN),
    };
    let mut files = Vec::new();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(EMBEDDED_DATA));
    let unpacking = "unpacking the knowledge base built into errata";
    for member in archive.entries().context(unpacking)? {
        let mut member = member.context(unpacking)?;
        let path = member.path().context(unpacking)?.into_owned();
        if !path.starts_with("signatures") {
            continue;
        }
        let mut bytes = Vec::with_capacity(usize::try_from(member.size()).unwrap_or(0));
        member.read_to_end(&mut bytes).context(unpacking)?;
        files.push((dir.join(path), bytes));
    }
    if files.is_empty() {
        anyhow::bail!(no_built_in_knowledge()?);
    }
    Ok(KnowledgeBase::from_files(dir, files))
}

/// What the built-in knowledge base's files are shown under (it has no directory).
const BUILT_IN: &str = "(built-in knowledge base)";

fn no_built_in_knowledge() -> Result<String> {
    Ok(format!(
        "no data directory here ({}) and this errata was built without a knowledge base: pass --data DIR or --bundle FILE",
        config()?.data_dir.display()
    ))
}

/// Where an answering command (`match`, `decode`, `incidents`, `audit`, `mcp`) takes
/// its knowledge from: the same two options on each.
#[derive(clap::Args)]
pub struct KnowledgeArgs {
    /// A bundle to answer from (verified first); default: the data directory.
    #[arg(long, value_name = "PATH")]
    pub bundle: Option<PathBuf>,
    /// The data directory when there is no `--bundle` (default: `data_dir` from
    /// `errata.toml`, else `data`, else the knowledge base built into errata).
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
}

impl KnowledgeArgs {
    /// [`Knowledge::load`] from these options.
    pub fn load(&self) -> Result<Knowledge> {
        Knowledge::load(self.bundle.as_deref(), self.data.clone())
    }
}

/// The knowledge an answering command (`match`, `decode`, `incidents`, `audit`) works from: a
/// bundle (its manifest and members up to `entries.json` verified: the answers come from
/// those, see `Bundle::open_for_matching`), or the entries of a data directory (or of the
/// knowledge base built into errata when there is none here).
pub enum Knowledge {
    Bundle(Box<errata_consumer::Bundle>),
    Local(Box<errata_consumer::Index>),
}

impl Knowledge {
    /// `--bundle` when given, else `--data` / the data directory / the built-in one.
    pub fn load(bundle: Option<&Path>, data: Option<PathBuf>) -> Result<Knowledge> {
        match bundle {
            Some(path) => errata_consumer::Bundle::open_for_matching(path)
                .map(|b| Knowledge::Bundle(Box::new(b)))
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display())),
            None => super::matching::index_from_data(data).map(|i| Knowledge::Local(Box::new(i))),
        }
    }

    /// The entries and their matcher.
    pub fn index(&self) -> &errata_consumer::Index {
        match self {
            Knowledge::Bundle(b) => b.index(),
            Knowledge::Local(i) => i,
        }
    }
}
