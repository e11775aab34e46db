//! `errata match`: scan a log for known errors and say what (not) to try.
//!
//! The log is streamed (bounded memory, any size). Each match prints with its line
//! number, the entry, the root cause, what not to try and what to try; an entry already
//! explained earlier in the log is then only named. Exit: 0 no known error found, 1
//! known errors found (like `errata check` finding problems), 2 tool failure.

use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use errata_consumer::{Bundle, Entry, Found, Index, Lang};
use errata_load::KnowledgeBase;

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The log to scan; `-` or nothing reads standard input.
    pub file: Option<PathBuf>,
    /// A bundle to match against (verified first); default: the data directory.
    #[arg(long, value_name = "PATH")]
    pub bundle: Option<PathBuf>,
    /// The data directory when there is no `--bundle` (default: `data_dir` from
    /// `errata.toml`, else `data`).
    #[arg(long, value_name = "DIR")]
    pub data: Option<PathBuf>,
    /// Output: `human`, or `json` (one JSON object per match and line: JSON Lines).
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    /// Language of root causes and workarounds (`en` or `zh`).
    #[arg(long, default_value = "en", value_parser = ["en", "zh"])]
    pub lang: String,
    /// Threads that search the log (default: one per core, up to 8). The output does not
    /// depend on it.
    #[arg(long, short = 'j', value_name = "N")]
    pub threads: Option<usize>,
}

/// Output formats.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// For people.
    Human,
    /// JSON Lines, one object per match.
    Json,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let lang = Lang::parse(&args.lang).unwrap_or_default();
    let bundle;
    let local;
    let index: &Index = match &args.bundle {
        Some(path) => {
            bundle = Bundle::open(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            bundle.index()
        }
        None => {
            local = index_from_data(args.data)?;
            &local
        }
    };

    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let mut printer = Printer {
        lang,
        format: args.format,
        seen: HashSet::new(),
        line: Vec::new(),
        failed: None,
        name: String::new(),
        threads: args.threads,
    };
    let stats = match args.file.as_deref() {
        None => printer.scan(index, std::io::stdin().lock(), "<stdin>", &mut out),
        Some(p) if p == Path::new("-") => {
            printer.scan(index, std::io::stdin().lock(), "<stdin>", &mut out)
        }
        Some(p) => {
            let file =
                std::fs::File::open(p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
            let progress = progress_bar(&file);
            let stats = printer.scan(
                index,
                progress.wrap_read(file),
                &p.display().to_string(),
                &mut out,
            );
            progress.finish_and_clear();
            stats
        }
    }?;
    out.flush().ok();
    if let Some(e) = printer.failed {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            return Ok(ExitCode::SUCCESS);
        }
        anyhow::bail!("writing the output: {e}");
    }
    if matches!(args.format, Format::Human) {
        eprintln!(
            "{} line(s) scanned, {} match(es), {} distinct known error(s)",
            stats.lines,
            stats.matches,
            printer.seen.len()
        );
    }
    Ok(if stats.matches > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// A progress bar (bytes of the log read) on stderr, for a log large enough to wait for,
/// when stderr is a terminal and stdout is not (`errata match big.log > report.txt`), so
/// the bar never interleaves with results on screen. Otherwise hidden.
fn progress_bar(file: &std::fs::File) -> indicatif::ProgressBar {
    let len = file.metadata().map_or(0, |m| m.len());
    let show =
        len >= 64 << 20 && std::io::stderr().is_terminal() && !std::io::stdout().is_terminal();
    if !show {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(len);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "scanning [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {eta}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Entries straight from the data directory, for matching without a bundle. Entries
/// whose regex does not compile are left out with a warning (`errata check` reports them).
pub(crate) fn index_from_data(data: Option<PathBuf>) -> anyhow::Result<Index> {
    let dir = super::common::data_or_embedded(data)?;
    let kb = KnowledgeBase::load(&dir.path)?;
    let mut entries: Vec<Entry> = kb
        .entries
        .iter()
        .filter(|d| d.entry.as_ref().is_some_and(|e| !e.id.is_empty()))
        .filter_map(|d| Entry::from_value(d.value()).ok())
        .collect();
    entries.sort_by(|a, b| a.id.cmp(&b.id));
    entries.dedup_by(|a, b| a.id == b.id);
    match Index::new(entries.clone()) {
        Ok(index) => Ok(index),
        Err(errata_consumer::Error::Patterns(bad)) => {
            for (id, why) in &bad {
                eprintln!(
                    "warning: {id}: regex left out: {}",
                    why.lines().last().unwrap_or(why)
                );
            }
            entries.retain(|e| !bad.iter().any(|(id, _)| *id == e.id));
            Ok(Index::new(entries)?)
        }
        Err(e) => Err(e.into()),
    }
}

struct Printer {
    lang: Lang,
    format: Format,
    /// Entries already explained in full.
    seen: HashSet<String>,
    /// The matches of the current line (printed together: best first, then the others).
    line: Vec<(u64, usize, String, String)>,
    failed: Option<std::io::Error>,
    name: String,
    threads: Option<usize>,
}

impl Printer {
    fn scan(
        &mut self,
        index: &Index,
        reader: impl std::io::Read,
        name: &str,
        out: &mut impl Write,
    ) -> anyhow::Result<errata_consumer::ScanStats> {
        self.name = name.to_string();
        let threads = self.threads;
        let on_match = |found: Found<'_>| {
            // Flushed at each match (matches are rare lines in a log), so a live log
            // piped in (`tail -f train.log | errata match`) is reported as it happens.
            if self.failed.is_none()
                && let Err(e) = self.emit(&found, out).and_then(|()| out.flush())
            {
                self.failed = Some(e);
            }
        };
        let stats = match threads {
            Some(n) => index.scan_with_threads(reader, n, on_match),
            None => index.scan(reader, on_match),
        }
        .map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        if self.failed.is_none()
            && let Err(e) = self.flush_line(out)
        {
            self.failed = Some(e);
        }
        Ok(stats)
    }

    fn emit(&mut self, found: &Found<'_>, out: &mut impl Write) -> std::io::Result<()> {
        match self.format {
            Format::Json => {
                self.seen.insert(found.entry.id.clone());
                writeln!(out, "{}", found.to_json(self.lang))
            }
            Format::Human => {
                if self
                    .line
                    .first()
                    .is_some_and(|(line, ..)| *line != found.line)
                {
                    self.flush_line(out)?;
                }
                if self.line.is_empty() {
                    let first = self.seen.insert(found.entry.id.clone());
                    self.print_found(found, first, out)?;
                }
                self.line.push((
                    found.line,
                    found.column,
                    found.entry.id.clone(),
                    found.text.clone(),
                ));
                Ok(())
            }
        }
    }

    fn print_found(
        &self,
        found: &Found<'_>,
        explain: bool,
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        writeln!(
            out,
            "{}:{}:{}: {}  {}",
            self.name,
            found.line,
            found.column,
            found.entry.id,
            found.text.trim()
        )?;
        // A bare number was read in the family the line named: say so, so that a
        // reader can check it.
        if let Some((family, number)) = found.number {
            let name = found.entry.error_code.as_deref().unwrap_or_default();
            match self.lang {
                Lang::Zh => writeln!(out, "  （按 {family} 解读数字 {number}：{name}）")?,
                Lang::En => writeln!(out, "  (the number {number}, read as {family}: {name})")?,
            }
        }
        if !explain {
            return writeln!(out, "  (explained above)");
        }
        let advice = found.entry.advice(self.lang);
        let (cause, dont, try_) = match self.lang {
            Lang::Zh => ("原因", "不要尝试", "尝试"),
            Lang::En => ("cause", "don't", "try"),
        };
        writeln!(out, "  {cause}: {}", advice.root_cause)?;
        for s in &advice.dead_ends {
            let action = if s.action.is_empty() {
                s.detail
            } else {
                s.action
            };
            if s.detail.is_empty() {
                writeln!(out, "  {dont}: {action}  ({})", s.evidence)?;
            } else {
                writeln!(out, "  {dont}: {action}  ({}: {})", s.evidence, s.detail)?;
            }
        }
        for s in &advice.workarounds {
            writeln!(out, "  {try_}: {}  ({})", s.action, s.evidence)?;
        }
        Ok(())
    }

    /// Finishes the current line: names the other entries that matched it too.
    fn flush_line(&mut self, out: &mut impl Write) -> std::io::Result<()> {
        if self.line.len() > 1 {
            let others: Vec<&str> = self.line[1..]
                .iter()
                .map(|(_, _, id, _)| id.as_str())
                .collect();
            writeln!(out, "  also matches: {}", others.join(", "))?;
        }
        if !self.line.is_empty() {
            writeln!(out)?;
        }
        self.line.clear();
        Ok(())
    }
}
