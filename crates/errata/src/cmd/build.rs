//! `errata build`: check, then render the site (and the bundle) into `dist/`.
//!
//! The check runs first and a knowledge base with errors is never published (exit 1).
//! The site is rendered into a staging directory beside `dist/site` and swapped into
//! place atomically, so a failed build leaves the previous `dist/site` as it was. Output
//! depends only on the input files: the site takes every date it shows from the data.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context as _;
use errata_load::{Config, KnowledgeBase};
use errata_model::Diagnostic;

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The data directory (default: `data_dir` from `errata.toml`, else `data`).
    pub path: Option<PathBuf>,
    /// The data directory, as an option (same as PATH; for scripts such as `xtask bench`).
    #[arg(
        long = "data",
        value_name = "DIR",
        hide = true,
        conflicts_with = "path"
    )]
    pub data: Option<PathBuf>,
    /// Output directory: the site goes to `<OUT>/site`, the bundle to `<OUT>/bundle`.
    #[arg(long, value_name = "DIR", default_value = "dist")]
    pub out: PathBuf,
    /// URL the site is served under (`/`, `/errata/`, `https://example.org/errata/`);
    /// default: `base_url` from `errata.toml`. Page links are relative either way.
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// Print timings of each phase to stderr.
    #[arg(long)]
    pub timings: bool,
}

/// What one build needs besides the data directory: the site options from
/// `errata.toml` and the command line.
pub(crate) struct Plan {
    pub data_dir: PathBuf,
    pub site: errata_site::SiteOptions,
    pub check: errata_check::CheckOptions,
}

impl Plan {
    pub(crate) fn new(path: Option<PathBuf>, base_url: Option<String>) -> anyhow::Result<Plan> {
        let config = Config::discover(Path::new(".")).map_err(anyhow::Error::msg)?;
        let data_dir = path.unwrap_or_else(|| config.data_dir.clone());
        let data_rel = data_dir
            .to_string_lossy()
            .trim_start_matches("./")
            .trim_end_matches('/')
            .to_string();
        let edit = config.repo_url.as_deref().map(|repo| {
            format!(
                "{}/edit/{}/{data_rel}/",
                repo.trim_end_matches('/'),
                config.repo_branch
            )
        });
        let theme_dir = Path::new("site").is_dir().then(|| PathBuf::from("site"));
        let site = errata_site::SiteOptions::default()
            .with_base_url(base_url.unwrap_or(config.base_url.clone()))
            .with_edit_url_prefix(edit)
            .with_theme_dir(theme_dir);
        super::common::check_rule_ids(&config)?;
        let check = errata_check::CheckOptions {
            overrides: config.rules.clone(),
            ..Default::default()
        };
        Ok(Plan {
            data_dir,
            site,
            check,
        })
    }

    /// Loads and checks. `Ok(None)` when the data has errors (already printed).
    pub(crate) fn load_checked(
        &self,
        timings: bool,
    ) -> anyhow::Result<(KnowledgeBase, Vec<Diagnostic>)> {
        let start = Instant::now();
        let kb = KnowledgeBase::load(&self.data_dir)?;
        phase(timings, "load", start);
        let start = Instant::now();
        let diagnostics = errata_check::check(&kb, &self.check);
        phase(timings, "check", start);
        Ok((kb, diagnostics))
    }
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let plan = Plan::new(args.path.or(args.data), args.base_url)?;
    let (kb, diagnostics) = plan.load_checked(args.timings)?;
    print_diagnostics(&diagnostics);
    if errata_check::has_errors(&diagnostics) {
        let errors = errata_report::counts(&diagnostics).errors;
        eprintln!(
            "error: refusing to build: {errors} error(s) in {}; run `errata check` for details",
            plan.data_dir.display()
        );
        return Ok(ExitCode::from(1));
    }
    // The site and the bundle come from the same checked load, so both always agree.
    // They are independent from here on and built at the same time: writing tens of
    // thousands of files mostly waits on the file system, which the bundle's
    // compression can use.
    let site_dir = args.out.join("site");
    for dir in [site_dir.clone(), args.out.join("bundle")] {
        super::common::refuse_output_over_data(&dir, &plan.data_dir)?;
    }
    let _lock = super::common::lock_output_dir(&args.out)?;
    let bundle_options = errata_bundle::BundleOptions {
        out_dir: args.out.join("bundle"),
        ..Default::default()
    };
    let (site, bundle) = std::thread::scope(|scope| {
        let bundle = scope.spawn(|| {
            let start = Instant::now();
            let result =
                errata_bundle::write_bundle(&kb, &bundle_options).map_err(anyhow::Error::from);
            (result, start.elapsed())
        });
        let site = build_site(&kb, &plan, &site_dir, args.timings);
        let bundle = bundle.join().unwrap_or_else(|_| {
            (
                Err(anyhow::anyhow!("the bundle writer panicked")),
                Default::default(),
            )
        });
        (site, bundle)
    });
    site?;
    let (bundle, bundle_time) = bundle;
    if args.timings {
        eprintln!(
            "timing: bundle  {:>8.1} ms (alongside the site)",
            bundle_time.as_secs_f64() * 1000.0
        );
    }
    let bundle = bundle.context("writing the bundle")?;
    eprintln!("wrote {}", bundle.display());
    Ok(ExitCode::SUCCESS)
}

/// Renders the site into `site_dir` (swapped in whole), reports it, and removes the
/// previous site (while the bundle may still be compressing).
fn build_site(
    kb: &KnowledgeBase,
    plan: &Plan,
    site_dir: &Path,
    timings: bool,
) -> anyhow::Result<()> {
    let start = Instant::now();
    let site = errata_site::render_into(kb, &plan.site, site_dir)
        .with_context(|| format!("building the site into {}", site_dir.display()))?;
    phase(timings, "site", start);
    for id in &site.skipped {
        eprintln!("warning: `{id}` is not a safe page path; it was left out of the site");
    }
    eprintln!(
        "built {} pages ({} files, {:.1} MiB) into {}",
        site.pages,
        site.files,
        site.bytes as f64 / (1024.0 * 1024.0),
        site_dir.display()
    );
    let start = Instant::now();
    site.replaced.remove();
    phase(timings, "cleanup", start);
    Ok(())
}

fn phase(on: bool, name: &str, start: Instant) {
    if on {
        eprintln!(
            "timing: {name:<7} {:>8.1} ms",
            start.elapsed().as_secs_f64() * 1000.0
        );
    }
}

/// Prints diagnostics in the one-line `file:line:col: severity[rule]: message` form, on
/// stderr. Build and serve logs stay short this way (and clickable in editors); the
/// refusal message points to `errata check` for the full rustc-style report.
pub(crate) fn print_diagnostics(diagnostics: &[Diagnostic]) {
    for d in diagnostics {
        let loc = d.location.unwrap_or_default();
        eprintln!(
            "{}:{}:{}: {}[{}]: {}",
            d.file.display(),
            loc.line.max(1),
            loc.column.max(1),
            d.severity.as_str(),
            d.rule,
            d.message
        );
        if let Some(help) = &d.help {
            eprintln!("  = help: {help}");
        }
    }
}
