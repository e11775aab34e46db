//! `cargo xtask snippets [PATH…] [--tier static|compile|run] [--format human|json]
//! [--pack DIR] [--ingest DIR] [--allow-no-gpu] [--trusted | --allow FILE]
//! [--print-allow] [--pack-sanitizer]`: verify the snippets of the knowledge base (docs/data.md, "Snippet fence annotations" and "Run records").
//! The work is done by the `errata-snippets` library.
//!
//! - The default tier is the highest this machine can do, but never `run` unless
//!   snippets are trusted (below): running a snippet runs its author's code.
//! - `--tier run` and `--pack DIR` need `--trusted` (every snippet under PATH, after a
//!   maintainer reviewed them) or `--allow FILE` (those the allow-list names by sha256 or
//!   data-relative path glob; for a pull request, the list of the base branch). A snippet
//!   the list does not name is not run: its verdict is `infra-error` ("not run: not in
//!   the allow-list"), so an unreviewed snippet never passes.
//! - `--print-allow` prints an allow-list of the runnable snippets under PATH (their
//!   sha256), for a maintainer to commit after review; nothing is verified.
//! - `--pack DIR` also writes a runner pack for a GPU machine without Rust (at most
//!   24 MiB: `run.py`, `manifest.json` and one `payload.tar.gz`; the machine's own
//!   compute-sanitizer and PyTorch are used, `--pack-sanitizer` carries one):
//!   copy DIR there, run `python3 run.py`, bring `results.json` back, and
//!   `cargo xtask snippets --ingest DIR` classifies the results and writes run records.
//! - Exit 1 when any snippet contradicts its expectation (or could not be verified).

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use errata_snippets::{
    AllowList, Options, Snippet, Tier, Trust, Verdict, extract, pack, record, report,
};

struct Args {
    paths: Vec<PathBuf>,
    tier: Option<Tier>,
    json: bool,
    pack: Option<PathBuf>,
    ingest: Option<PathBuf>,
    allow_no_gpu: bool,
    trust: Trust,
    print_allow: bool,
    pack_sanitizer: bool,
}

fn parse(args: &[String]) -> Result<Args> {
    let mut a = Args {
        paths: Vec::new(),
        tier: None,
        json: false,
        pack: None,
        ingest: None,
        allow_no_gpu: false,
        trust: Trust::Nobody,
        print_allow: false,
        pack_sanitizer: false,
    };
    let mut trusted = false;
    let mut allow: Option<PathBuf> = None;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = |name: &str| {
            it.next()
                .cloned()
                .with_context(|| format!("{name} needs a value"))
        };
        match arg.as_str() {
            "--tier" => {
                let v = value("--tier")?;
                a.tier = Some(
                    Tier::parse(&v)
                        .with_context(|| format!("unknown tier `{v}` (static, compile, run)"))?,
                );
            }
            "--format" => match value("--format")?.as_str() {
                "json" => a.json = true,
                "human" => a.json = false,
                other => bail!("unknown format `{other}` (human, json)"),
            },
            "--pack" => a.pack = Some(PathBuf::from(value("--pack")?)),
            "--ingest" => a.ingest = Some(PathBuf::from(value("--ingest")?)),
            "--allow-no-gpu" => a.allow_no_gpu = true,
            "--trusted" => trusted = true,
            "--allow" => {
                if allow.is_some() {
                    bail!("--allow is given once (one list; merge lists into one file)");
                }
                allow = Some(PathBuf::from(value("--allow")?));
            }
            "--print-allow" => a.print_allow = true,
            "--pack-sanitizer" => a.pack_sanitizer = true,
            s if s.starts_with('-') => bail!("unknown option `{s}`"),
            s => a.paths.push(PathBuf::from(s)),
        }
    }
    a.trust = match (trusted, allow) {
        (true, Some(_)) => bail!("--trusted and --allow exclude each other"),
        (true, None) => Trust::All,
        (false, Some(f)) => Trust::Listed(AllowList::load(&f).map_err(anyhow::Error::msg)?),
        (false, None) => Trust::Nobody,
    };
    Ok(a)
}

/// `--print-allow`: the allow-list of every program under the paths the run tier could
/// take. A reader that stops early (`| head`) is not an error.
fn print_allow(groups: &[Group]) -> Result<()> {
    use std::io::Write;
    let mut out = String::new();
    for group in groups {
        for line in errata_snippets::trust::allow_lines(&group.snippets) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    match std::io::stdout().lock().write_all(out.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e).context("stdout"),
        _ => Ok(()),
    }
}

/// The data directory holding `path`: the nearest ancestor (or itself) with
/// `articles/` or `signatures/`.
fn data_root(path: &Path) -> Option<PathBuf> {
    let start = if path.is_dir() {
        Some(path)
    } else {
        path.parent()
    };
    let mut cur = start.map(Path::to_path_buf);
    while let Some(dir) = cur {
        let d = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir.clone()
        };
        if d.join("articles").is_dir() || d.join("signatures").is_dir() {
            return Some(dir);
        }
        cur = dir.parent().map(Path::to_path_buf);
    }
    None
}

/// The snippets of one data directory that the given paths select.
struct Group {
    root: PathBuf,
    /// The selected snippets: what this run verifies, packs or ingests.
    snippets: Vec<Snippet>,
    /// Every snippet of the data directory: whether a run record is stale is judged
    /// against these, so that a record of a file the paths left out is not called stale.
    every: Vec<Snippet>,
}

/// Loads the snippets under the given paths, grouped by data directory.
fn load(paths: &[PathBuf]) -> Result<Vec<Group>> {
    let mut out: Vec<Group> = Vec::new();
    for path in paths {
        let root = data_root(path).with_context(|| {
            format!(
                "{}: not inside a data directory (one with articles/ or signatures/)",
                path.display()
            )
        })?;
        let want = path
            .canonicalize()
            .with_context(|| path.display().to_string())?;
        let group = match out.iter().position(|g| g.root == root) {
            Some(i) => &mut out[i],
            None => {
                let kb =
                    errata_load::KnowledgeBase::load(&root).map_err(|e| anyhow::anyhow!("{e}"))?;
                out.push(Group {
                    root,
                    snippets: Vec::new(),
                    every: extract(&kb),
                });
                out.last_mut().context("a group was just added")?
            }
        };
        let selected: Vec<Snippet> = group
            .every
            .iter()
            .filter(|s| {
                Path::new(&s.file)
                    .canonicalize()
                    .is_ok_and(|f| f.starts_with(&want))
            })
            .cloned()
            .collect();
        group.snippets.extend(selected);
    }
    Ok(out)
}

fn print(verdicts: &[Verdict], json: bool) {
    if json {
        println!("{}", report::json(verdicts));
    } else {
        print!("{}", report::human(verdicts));
    }
}

fn finish(verdicts: &[Verdict]) -> Result<()> {
    let n = verdicts.iter().filter(|v| v.outcome.is_failure()).count();
    if n > 0 {
        bail!("{n} snippet(s) contradict their expectation or could not be verified");
    }
    Ok(())
}

fn write_records(root: &Path, records: &[record::RunRecord]) -> Result<()> {
    if records.is_empty() {
        return Ok(());
    }
    let written = record::merge_into(root, records).map_err(anyhow::Error::msg)?;
    for w in written {
        eprintln!("run records: {}", w.display());
    }
    Ok(())
}

pub fn run(args: &[String]) -> Result<()> {
    let args = parse(args)?;
    let repo = crate::repo_root();
    let paths = if args.paths.is_empty() {
        // Relative to the current directory when it is the repository, so that reports
        // show `data/articles/…`.
        let rel = PathBuf::from("data");
        vec![if rel.is_dir() { rel } else { repo.join("data") }]
    } else {
        args.paths.clone()
    };
    let groups = load(&paths)?;

    if args.print_allow {
        return print_allow(&groups);
    }

    if let Some(dir) = &args.ingest {
        let manifest = pack::read_manifest(dir).map_err(anyhow::Error::msg)?;
        let results = pack::read_results(&dir.join("results.json")).map_err(anyhow::Error::msg)?;
        if !results.env.network_isolated {
            eprintln!(
                "warning: the snippets of this pack ran with network access: {}",
                results
                    .env
                    .network_note
                    .as_deref()
                    .unwrap_or("the runner predates network isolation")
            );
        }
        let mut all = Vec::new();
        for Group { root, snippets, .. } in &groups {
            let current = record::current(snippets);
            let (verdicts, records) =
                pack::ingest(&manifest, &results, &current).map_err(anyhow::Error::msg)?;
            write_records(root, &records)?;
            all.extend(verdicts);
        }
        // An item counts once even when several data dirs were given.
        all.sort_by(|a, b| (a.file.as_str(), a.line).cmp(&(b.file.as_str(), b.line)));
        all.dedup();
        print(&all, args.json);
        return finish(&all);
    }

    let cache = errata_snippets::toolchain::default_cache_dir(&repo);
    let untrusted = matches!(args.trust, Trust::Nobody);
    if untrusted && (args.tier == Some(Tier::Run) || args.pack.is_some()) {
        // Before anything runs or is packed: nothing would be, and saying so per
        // snippet would hide that the command itself was wrong.
        bail!(
            "{} is for running snippet code: pass --trusted (you reviewed every snippet under the given paths) \
             or --allow FILE (an allow-list of sha256/path entries, e.g. the base branch's, see \
             --print-allow)",
            if args.pack.is_some() {
                "--pack"
            } else {
                "--tier run"
            }
        );
    }
    let tier = match args.tier {
        Some(t) => t,
        None => match errata_snippets::detect_tier(&cache) {
            Tier::Run if untrusted => {
                eprintln!(
                    "note: a GPU is here, but snippets run only with --trusted or --allow FILE: \
                     verifying up to the compile tier"
                );
                Tier::Compile
            }
            t => t,
        },
    };
    let mut all = Vec::new();
    for Group {
        root,
        snippets,
        every,
    } in &groups
    {
        let opts = Options::new(tier, cache.clone())
            .with_progress(!args.json)
            .with_allow_no_gpu(args.allow_no_gpu)
            .with_pack_dir(args.pack.clone())
            .with_pack_sanitizer(args.pack_sanitizer)
            .with_trust(args.trust.clone());
        let v = errata_snippets::verify(snippets, &opts);
        let (existing, errors) = record::load_all(root, every);
        for e in errors {
            eprintln!("warning: unreadable run records: {e}");
        }
        let stale = existing
            .iter()
            .filter(|(_, f)| *f == record::Freshness::Stale)
            .count();
        if stale > 0 {
            eprintln!(
                "warning: {stale} run record(s) under {} are stale (their snippet changed): run the run tier again",
                root.join("runs").display()
            );
        }
        write_records(root, &v.records)?;
        if let (Some(dir), Some(m)) = (&args.pack, &v.manifest) {
            eprintln!(
                "runner pack: {} ({} items): copy it to the GPU machine, run `python3 run.py` there, then `cargo xtask snippets --ingest {}`",
                dir.display(),
                m.items.len(),
                dir.display()
            );
        }
        all.extend(v.verdicts);
    }
    print(&all, args.json);
    finish(&all)
}
