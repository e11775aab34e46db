//! `errata serve`: build the site into a scratch directory, serve it on 127.0.0.1, and
//! rebuild and reload open pages whenever the data, the theme or `errata.toml` changes.
//!
//! Changes are found by polling modification times (no platform watcher dependency;
//! a few thousand `stat` calls every few hundred milliseconds are cheap). The process
//! keeps the loaded knowledge base, the rendered site's digests and the search index in
//! memory ([`errata_site::SiteState`]), so a changed entry or article is an incremental
//! rebuild: only the changed files are reloaded, only the pages that depend on them are
//! re-rendered and rewritten, and open pages reload.
//!
//! Checking, in a preview: the changed files are checked on their own before their pages
//! are written (every per-file rule; the rules that need the whole knowledge base —
//! references, duplicate ids, regex overlap, links between files — are left to the next
//! step), then the full check (`errata check`'s) runs in the background after the pages
//! are written and prints what it finds. Unlike `build`, a preview is rendered even
//! when the check finds errors, so a contributor sees the page they are fixing. A change
//! to the theme (`site/`) or to `errata.toml` is a full rebuild.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use errata_load::KnowledgeBase;
use errata_model::Diagnostic;
use errata_site::{Reload, SiteState};

use super::build::{Plan, print_diagnostics};

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The data directory (default: `data_dir` from `errata.toml`, else `data`).
    pub path: Option<PathBuf>,
    /// Port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Build once, print the URL, and exit after this many seconds (for scripts/tests).
    #[arg(long, hide = true)]
    pub exit_after: Option<u64>,
    /// How often to look for changes, in milliseconds.
    #[arg(long, default_value_t = 300, hide = true)]
    pub poll_ms: u64,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut plan = Plan::new(args.path.clone(), Some("/".into()))?;
    remove_stale_scratch_dirs();
    let scratch = std::env::temp_dir().join(format!("errata-serve-{}", std::process::id()));
    let site_dir = scratch.join("site");
    // Taken before the build, so a file saved while it runs is picked up after it.
    let mut last = fingerprint(&watched_paths(&plan));
    let mut state = full_build(&plan, &site_dir)?;
    let server = errata_site::serve::Server::start(
        &format!("127.0.0.1:{}", args.port),
        site_dir.clone(),
        true,
    )
    .map_err(|e| anyhow::anyhow!("cannot listen on 127.0.0.1:{}: {e}", args.port))?;
    eprintln!(
        "serving {} at {} (rebuilds on change; Ctrl-C to stop)",
        plan.data_dir.display(),
        server.url()
    );
    let checker = FullChecker::start();
    // Changes a failed rebuild did not take in: retried with the next change.
    let mut pending: Vec<PathBuf> = Vec::new();
    let started = Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(args.poll_ms.max(20)));
        if args
            .exit_after
            .is_some_and(|s| started.elapsed() >= Duration::from_secs(s))
        {
            break;
        }
        let now = fingerprint(&watched_paths(&plan));
        if now == last {
            continue;
        }
        let mut changed = changed_paths(&last, &now);
        changed.append(&mut pending);
        changed.sort();
        changed.dedup();
        last = now;
        let theme_or_config = changed
            .iter()
            .any(|p| p.starts_with("site") || p == Path::new("errata.toml"));
        let result = if theme_or_config {
            Plan::new(args.path.clone(), Some("/".into()))
                .and_then(|p| {
                    let s = full_build(&p, &site_dir)?;
                    plan = p;
                    Ok(s)
                })
                .map(|s| state = s)
        } else {
            incremental(&plan, &mut state, &changed).map(|()| checker.request(&plan))
        };
        match result {
            Ok(()) => server.bump(),
            Err(e) => {
                eprintln!("error: {e:#} (still serving the previous build)");
                pending = changed;
            }
        }
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(ExitCode::SUCCESS)
}

/// Loads, checks (printing what it finds) and builds the whole site.
fn full_build(plan: &Plan, site_dir: &Path) -> anyhow::Result<SiteState> {
    let start = Instant::now();
    let (kb, diagnostics) = plan.load_checked(false)?;
    print_diagnostics(&diagnostics);
    let (state, report) = SiteState::full_build(kb, plan.site.clone(), site_dir)?;
    eprintln!(
        "built {} pages in {:.0} ms",
        report.pages,
        start.elapsed().as_secs_f64() * 1000.0
    );
    Ok(state)
}

/// Reloads the changed data files, checks them alone, and rewrites the pages that depend
/// on them.
fn incremental(plan: &Plan, state: &mut SiteState, changed: &[PathBuf]) -> anyhow::Result<()> {
    let start = Instant::now();
    let reload = Reload::load(state.data_dir(), changed)?;
    if reload.is_empty() {
        return Ok(());
    }
    let loaded = start.elapsed();
    let diagnostics = check_alone(plan, &reload);
    print_diagnostics(&diagnostics);
    let checked = start.elapsed();
    let report = state.apply(reload)?;
    let total = start.elapsed();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    eprintln!(
        "rebuilt in {:.1} ms: {} file(s) reloaded, {} output(s) rendered, {} written, {} removed \
         (load {:.1} ms, check {:.1} ms, render+write {:.1} ms; full check follows)",
        ms(total),
        report.reloaded,
        report.rendered,
        report.written,
        report.removed,
        ms(loaded),
        ms(checked - loaded),
        ms(total - checked),
    );
    Ok(())
}

/// The per-file rules on the changed files alone, named by their data-directory paths.
fn check_alone(plan: &Plan, reload: &Reload) -> Vec<Diagnostic> {
    let kb = reload.knowledge_base();
    if kb.sources().is_empty() && kb.diagnostics.is_empty() {
        return Vec::new();
    }
    let mut diagnostics = errata_check::check(kb, &plan.check);
    diagnostics.retain(|d| !errata_check::CROSS_FILE_RULES.contains(&d.rule));
    for d in &mut diagnostics {
        d.file = reload.data_path(&d.file);
    }
    diagnostics
}

/// Runs the full check in a background thread, one at a time (requests made while one
/// runs are coalesced into the next run), printing new diagnostics and a summary.
struct FullChecker {
    tx: mpsc::Sender<(PathBuf, errata_check::CheckOptions)>,
}

impl FullChecker {
    fn start() -> FullChecker {
        let (tx, rx) = mpsc::channel::<(PathBuf, errata_check::CheckOptions)>();
        std::thread::spawn(move || {
            let mut previous: Option<Vec<Diagnostic>> = None;
            while let Ok(mut job) = rx.recv() {
                while let Ok(newer) = rx.try_recv() {
                    job = newer;
                }
                let (data_dir, options) = job;
                let start = Instant::now();
                let kb = match KnowledgeBase::load(&data_dir) {
                    Ok(kb) => kb,
                    Err(e) => {
                        eprintln!("full check: {e}");
                        continue;
                    }
                };
                let diagnostics = errata_check::check(&kb, &options);
                let new: Vec<Diagnostic> = diagnostics
                    .iter()
                    .filter(|d| previous.as_ref().is_none_or(|p| !p.contains(d)))
                    .cloned()
                    .collect();
                print_diagnostics(&new);
                let counts = errata_report::counts(&diagnostics);
                eprintln!(
                    "full check: {} error(s), {} warning(s) in {:.0} ms",
                    counts.errors,
                    counts.warnings,
                    start.elapsed().as_secs_f64() * 1000.0
                );
                previous = Some(diagnostics);
            }
        });
        FullChecker { tx }
    }

    fn request(&self, plan: &Plan) {
        let _ = self.tx.send((plan.data_dir.clone(), plan.check.clone()));
    }
}

fn watched_paths(plan: &Plan) -> Vec<PathBuf> {
    vec![
        plan.data_dir.clone(),
        PathBuf::from("site"),
        PathBuf::from("errata.toml"),
    ]
}

type Fingerprint = BTreeMap<PathBuf, (Option<SystemTime>, u64)>;

/// (mtime, length) of every file under the watched paths.
fn fingerprint(paths: &[PathBuf]) -> Fingerprint {
    let mut out = BTreeMap::new();
    for root in paths {
        for item in walk(root) {
            if let Ok(meta) = std::fs::metadata(&item) {
                out.insert(item, (meta.modified().ok(), meta.len()));
            }
        }
    }
    out
}

/// Paths added, removed or modified between two fingerprints.
fn changed_paths(before: &Fingerprint, after: &Fingerprint) -> Vec<PathBuf> {
    let mut changed: Vec<PathBuf> = after
        .iter()
        .filter(|(p, v)| before.get(*p) != Some(v))
        .map(|(p, _)| p.clone())
        .collect();
    changed.extend(before.keys().filter(|p| !after.contains_key(*p)).cloned());
    changed.sort();
    changed
}

fn walk(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(path) = stack.pop() {
        match std::fs::read_dir(&path) {
            Ok(dir) => stack.extend(dir.flatten().map(|e| e.path())),
            Err(_) if path.is_file() => out.push(path),
            Err(_) => {}
        }
    }
    out
}

/// A server stopped with Ctrl-C (or killed) cannot remove its scratch directory; the next
/// one removes those whose process is gone (Linux: no `/proc/<pid>`).
fn remove_stale_scratch_dirs() {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(dir) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for item in dir.flatten() {
        let name = item.file_name().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("errata-serve-")
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir_all(item.path());
        }
    }
}
