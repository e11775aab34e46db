//! `errata serve`: build the site into a scratch directory, serve it on 127.0.0.1, and
//! rebuild and reload open pages whenever the data, the theme or `errata.toml` changes.
//!
//! Changes are found by polling modification times (no platform watcher dependency;
//! a few thousand `stat` calls every half second are cheap). Unlike `build`, a preview is
//! rendered even when the check finds errors (they are printed), so a contributor sees
//! the page they are fixing.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

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
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let plan = Plan::new(args.path, Some("/".into()))?;
    remove_stale_scratch_dirs();
    let scratch = std::env::temp_dir().join(format!("errata-serve-{}", std::process::id()));
    let site_dir = scratch.join("site");
    rebuild(&plan, &site_dir)?;
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
    let watched = watched_paths(&plan);
    let mut last = fingerprint(&watched);
    let started = std::time::Instant::now();
    loop {
        std::thread::sleep(Duration::from_millis(400));
        if args
            .exit_after
            .is_some_and(|s| started.elapsed() >= Duration::from_secs(s))
        {
            break;
        }
        let now = fingerprint(&watched);
        if now == last {
            continue;
        }
        last = now;
        match rebuild(&plan, &site_dir) {
            Ok(()) => server.bump(),
            Err(e) => eprintln!("error: {e:#} (still serving the previous build)"),
        }
    }
    drop(server);
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(ExitCode::SUCCESS)
}

fn rebuild(plan: &Plan, site_dir: &Path) -> anyhow::Result<()> {
    let start = std::time::Instant::now();
    let (kb, diagnostics) = plan.load_checked(false)?;
    print_diagnostics(&diagnostics);
    let rendered = errata_site::render(&kb, &plan.site)?;
    rendered.files.write_atomically(site_dir)?;
    eprintln!(
        "rebuilt {} pages in {:.0} ms",
        rendered.pages,
        start.elapsed().as_secs_f64() * 1000.0
    );
    Ok(())
}

fn watched_paths(plan: &Plan) -> Vec<PathBuf> {
    vec![
        plan.data_dir.clone(),
        PathBuf::from("site"),
        PathBuf::from("errata.toml"),
    ]
}

/// (path, mtime, length) of every file under the watched paths, sorted.
fn fingerprint(paths: &[PathBuf]) -> Vec<(PathBuf, Option<SystemTime>, u64)> {
    let mut out = Vec::new();
    for root in paths {
        for item in walk(root) {
            if let Ok(meta) = std::fs::metadata(&item) {
                out.push((item, meta.modified().ok(), meta.len()));
            }
        }
    }
    out.sort();
    out
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
