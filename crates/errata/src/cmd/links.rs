//! `errata links`: check every external URL of the knowledge base.
//!
//! All the work is in `errata-links`; this file maps flags to its `Settings` and prints
//! the report like `errata check` does.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context as _;
use errata_links::{CheckOptions, Settings, parse_duration};
use errata_load::{Config, KnowledgeBase};
use errata_report::{Context, Format};

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The data directory (default: `data_dir` from `errata.toml`, else `data`).
    path: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    /// The cache file.
    #[arg(long, value_name = "PATH", default_value = ".errata-cache/links.json")]
    cache: PathBuf,
    /// Re-check a URL once its cached result is this old (`30m`, `12h`, `7d`, `0`).
    /// Dead links are re-checked on every run.
    #[arg(long, value_name = "AGE", default_value = "7d", value_parser = parse_duration)]
    max_age: Duration,
    /// Report from the cache alone, without touching the network. URLs never checked
    /// are listed on stderr and are not errors.
    #[arg(long)]
    offline: bool,
    /// Time allowed to connect.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_duration)]
    connect_timeout: Duration,
    /// Time allowed for one request, until the response headers.
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = parse_duration)]
    timeout: Duration,
    /// URLs checked at once.
    #[arg(long, value_name = "N", default_value_t = 16, value_parser = clap::value_parser!(u16).range(1..))]
    concurrency: u16,
    /// Requests in flight to one host at once.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u16).range(1..))]
    per_host: u16,
    /// Retries after a connection error, a timeout, a 5xx or a 429.
    #[arg(long, value_name = "N", default_value_t = 2)]
    retries: u32,
    /// A host (`HOST` or `HOST:PORT`) that may be requested although it is loopback,
    /// private, link-local or internal (a local mirror); every other such host, written or
    /// redirected to, is refused without a request. Repeatable.
    #[arg(long, value_name = "HOST[:PORT]")]
    allow_host: Vec<String>,
    /// Exit 1 on warnings (permanent redirects) too.
    #[arg(long)]
    deny_warnings: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = match args.path {
        Some(path) => path,
        None => {
            Config::discover(std::path::Path::new("."))
                .map_err(anyhow::Error::msg)?
                .data_dir
        }
    };
    let kb = KnowledgeBase::load(&root)?;
    let settings = Settings {
        check: CheckOptions {
            connect_timeout: args.connect_timeout,
            timeout: args.timeout,
            concurrency: usize::from(args.concurrency),
            per_host: usize::from(args.per_host),
            retries: args.retries,
            allow_hosts: args.allow_host,
            ..CheckOptions::default()
        },
        cache: args.cache,
        max_age: args.max_age,
        offline: args.offline,
        progress: true,
        ..Settings::new()
    };
    let report = errata_links::run(&kb, &settings)?;

    let mut err = std::io::stderr().lock();
    let unparsed = kb.diagnostics.len();
    if unparsed > 0 {
        writeln!(
            err,
            "note: {unparsed} problem(s) while loading; URLs in unparsed files were not checked (run `errata check`)"
        )?;
    }
    for note in &report.notes {
        writeln!(err, "note: {note}")?;
    }
    report_unknown(&mut err, &report.unknown)?;
    writeln!(
        err,
        "{} URL(s) in {} place(s): {} checked, {} from the cache",
        report.urls, report.sites, report.checked, report.cached
    )?;
    drop(err);

    let source = |path: &std::path::Path| kb.source(path).map(|s| s.text.as_str());
    let color = args.format == Format::Human && super::common::colour_on_stdout();
    let cx = Context {
        files: kb.sources().len(),
        source: &source,
        rule_summary: &errata_links::rule_summary,
        color,
    };
    let out = errata_report::render(args.format, &report.diagnostics, &cx);
    std::io::stdout()
        .lock()
        .write_all(out.as_bytes())
        .context("cannot write the report")?;

    let counts = errata_report::counts(&report.diagnostics);
    let failed = counts.errors > 0 || (args.deny_warnings && counts.warnings > 0);
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// URLs with no verdict: each one when there are few, a count when there are many (an
/// `--offline` run with an empty cache).
fn report_unknown(err: &mut impl Write, unknown: &[(String, String)]) -> std::io::Result<()> {
    const LIST: usize = 10;
    if unknown.len() > LIST {
        writeln!(
            err,
            "note: {} URL(s) have no result yet, e.g. {}: {}",
            unknown.len(),
            unknown[0].0,
            unknown[0].1
        )?;
    } else {
        for (url, why) in unknown {
            writeln!(err, "note: no result for {url}: {why}")?;
        }
    }
    Ok(())
}
