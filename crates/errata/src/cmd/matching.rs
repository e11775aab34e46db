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

use errata_consumer::{Entry, Found, Index, Lang};

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The log to scan; `-` or nothing reads standard input.
    pub file: Option<PathBuf>,
    #[command(flatten)]
    pub knowledge: super::common::KnowledgeArgs,
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
    /// Human output: every dead end with why it fails, every workaround with how, the
    /// whole cause (default: the cause's first lines, the best workaround with how, the
    /// two dead ends most often tried, the entry's page).
    #[arg(long, short = 'v')]
    pub verbose: bool,
    /// Colour: `auto` (a terminal, and no `NO_COLOR`), `always` or `never`.
    #[arg(long, value_enum, default_value = "auto", value_name = "WHEN")]
    pub color: ColorWhen,
}

/// When to colour the human output.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ColorWhen {
    /// On a terminal, unless `NO_COLOR` is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// The published site, whose entry pages the human output links to when `errata.toml`
/// names no absolute `base_url` (the address `.github/workflows/publish.yml` deploys to).
const PUBLISHED_SITE: &str = "https://errata-kb.github.io/errata/";

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
    let knowledge = args.knowledge.load()?;
    let index: &Index = knowledge.index();

    let stdout = std::io::stdout();
    // A busy log's JSON runs to hundreds of megabytes: one write per MiB rather than per
    // 8 KiB (a live input is still flushed after each match, see `flush_each`).
    let mut out = std::io::BufWriter::with_capacity(1 << 20, stdout.lock());
    let is_terminal = std::io::stdout().is_terminal();
    let colour = match args.color {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => super::common::colour_on_stdout(),
    };
    // Wrapped to a terminal's width; into a file or a pipe, one line per item (grep).
    let width = if is_terminal {
        (console::Term::stdout().size().1 as usize).clamp(40, 160)
    } else {
        usize::MAX
    };
    let site = super::common::config()
        .ok()
        .map(|c| c.base_url)
        .filter(|u| u.starts_with("https://") || u.starts_with("http://"))
        .unwrap_or_else(|| PUBLISHED_SITE.to_string());
    let mut printer = Printer {
        lang,
        verbose: args.verbose,
        colour,
        width,
        site: if site.ends_with('/') {
            site
        } else {
            format!("{site}/")
        },
        format: args.format,
        json: errata_consumer::JsonLines::new(lang),
        seen: HashSet::new(),
        line: Vec::new(),
        failed: None,
        name: String::new(),
        threads: args.threads,
        flush_each: true,
    };
    let stats = match args.file.as_deref() {
        None => printer.scan(
            index,
            Input::Stream(std::io::stdin().lock()),
            "<stdin>",
            &mut out,
        ),
        Some(p) if p == Path::new("-") => printer.scan(
            index,
            Input::Stream(std::io::stdin().lock()),
            "<stdin>",
            &mut out,
        ),
        Some(p) => {
            let file =
                std::fs::File::open(p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
            // A regular file is read to its end without waiting: its output is flushed
            // when the buffer fills (it is mapped, see `Index::scan_file`).
            printer.flush_each = !file.metadata().is_ok_and(|m| m.is_file());
            let progress = progress_bar(&file);
            let stats = printer.scan(
                index,
                Input::<std::io::Empty>::File(&file, &progress),
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
    let kb = super::common::entries_of(data)?;
    let mut entries: Vec<Entry> = kb
        .entries
        .iter()
        .filter(|d| d.entry.as_ref().is_some_and(|e| !e.id.is_empty()))
        .filter_map(|d| {
            let raw = serde_json::value::RawValue::from_string(d.text().to_owned()).ok()?;
            Entry::from_raw(raw).ok()
        })
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

/// What `errata match` reads: a stream, or a file (mapped when it is a regular one),
/// with the progress bar its scan moves.
enum Input<'a, R> {
    Stream(R),
    File(&'a std::fs::File, &'a indicatif::ProgressBar),
}

struct Printer {
    lang: Lang,
    verbose: bool,
    colour: bool,
    /// Columns to wrap the human output to.
    width: usize,
    /// The site the entry links point into, ending in `/`.
    site: String,
    format: Format,
    /// `--format json`'s writer (each entry's advice serialized once).
    json: errata_consumer::JsonLines,
    /// Entries already explained in full (human output only).
    seen: HashSet<String>,
    /// The matches of the current line (printed together: best first, then the others).
    line: Vec<(u64, usize, String, String)>,
    failed: Option<std::io::Error>,
    name: String,
    threads: Option<usize>,
    /// Flush after every match: the input may be live (stdin, a pipe), where a match has
    /// to be seen before the scan waits for more. A regular file is read to its end
    /// without waiting, so its output is flushed when the buffer fills and at the end:
    /// one write per match was a system call per match (53,000 for a 512 MiB log).
    flush_each: bool,
}

impl Printer {
    fn scan(
        &mut self,
        index: &Index,
        input: Input<'_, impl std::io::Read>,
        name: &str,
        out: &mut impl Write,
    ) -> anyhow::Result<errata_consumer::ScanStats> {
        self.name = name.to_string();
        let threads = self.threads.unwrap_or_else(Index::default_threads);
        let on_match = |found: Found<'_>| {
            // Flushed at each match (matches are rare lines in a log), so a live log
            // piped in (`tail -f train.log | errata match`) is reported as it happens.
            let flush_each = self.flush_each;
            if self.failed.is_none()
                && let Err(e) = self
                    .emit(&found, out)
                    .and_then(|()| if flush_each { out.flush() } else { Ok(()) })
            {
                self.failed = Some(e);
            }
        };
        let stats = match input {
            Input::Stream(reader) => index
                .scan_with_threads(reader, threads, on_match)
                .map_err(|e| anyhow::anyhow!("{name}: {e}"))?,
            Input::File(file, progress) => index
                .scan_file(file, threads, |n| progress.set_position(n), on_match)
                .map_err(|e| anyhow::anyhow!("{name}: {e}"))?,
        };
        if self.failed.is_none()
            && let Err(e) = self.flush_line(out)
        {
            self.failed = Some(e);
        }
        Ok(stats)
    }

    fn emit(&mut self, found: &Found<'_>, out: &mut impl Write) -> std::io::Result<()> {
        match self.format {
            // `seen` counts distinct errors for the human summary only.
            Format::Json => self.json.write(found, out),
            Format::Human => {
                if self
                    .line
                    .first()
                    .is_some_and(|(line, ..)| *line != found.line)
                {
                    self.flush_line(out)?;
                }
                if self.line.is_empty() {
                    let first = !self.seen.contains(&found.entry.id);
                    if first {
                        self.seen.insert(found.entry.id.clone());
                    }
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
        let (cause, dont, try_, how, more) = match self.lang {
            Lang::Zh => ("原因", "不要尝试", "尝试", "做法", "详情"),
            Lang::En => ("cause", "don't", "try", "how", "more"),
        };
        let paint = |code: &str, text: &str| {
            if self.colour {
                format!("\x1b[{code}m{text}\x1b[0m")
            } else {
                text.to_string()
            }
        };
        let cause_text = if self.verbose {
            advice.root_cause.to_string()
        } else {
            first_sentences(advice.root_cause, 2, 400)
        };
        self.para(out, &format!("{}: ", paint("1", cause)), &cause_text)?;
        if let Some(action) = &found.entry.operator_action {
            let label = match self.lang {
                Lang::Zh => "处置",
                Lang::En => "operator",
            };
            self.para(out, &format!("{}: ", paint("1", label)), action)?;
        }
        let workarounds = if self.verbose {
            &advice.workarounds[..]
        } else {
            &advice.workarounds[..advice.workarounds.len().min(1)]
        };
        for s in workarounds {
            let label = format!("{}: ", paint("32", try_));
            self.para(out, &label, &format!("{}  ({})", s.action, s.evidence))?;
            if !s.detail.is_empty() && s.detail.trim() != s.action.trim() {
                let detail = if self.verbose {
                    s.detail.to_string()
                } else {
                    first_sentences(s.detail, 3, 500)
                };
                self.para(out, &format!("  {how}: "), &detail)?;
            }
        }
        let dead_ends = if self.verbose {
            &advice.dead_ends[..]
        } else {
            &advice.dead_ends[..advice.dead_ends.len().min(2)]
        };
        for s in dead_ends {
            let action = if s.action.is_empty() {
                s.detail
            } else {
                s.action
            };
            let label = format!("{}: ", paint("31", dont));
            if self.verbose && !s.detail.is_empty() && !s.action.is_empty() {
                self.para(
                    out,
                    &label,
                    &format!("{action}  ({}: {})", s.evidence, s.detail),
                )?;
            } else {
                self.para(out, &label, &format!("{action}  ({})", s.evidence))?;
            }
        }
        // An Xid no entry knows is answered from NVIDIA's catalog: its page is NVIDIA's.
        let page = found
            .entry
            .catalog_source()
            .unwrap_or_else(|| format!("{}entries/{}.html", self.site, found.entry.id));
        let rest = advice.workarounds.len().saturating_sub(workarounds.len())
            + advice.dead_ends.len().saturating_sub(dead_ends.len());
        let hint = match (self.lang, rest) {
            (_, 0) => String::new(),
            (Lang::Zh, n) => format!("（另有 {n} 条，`--verbose` 显示全部）"),
            (Lang::En, n) => format!(" ({n} more with --verbose)"),
        };
        writeln!(out, "  {more}: {page}{hint}")?;
        Ok(())
    }

    /// `label` then `text`, word-wrapped to the width, continued under the text.
    fn para(&self, out: &mut impl Write, label: &str, text: &str) -> std::io::Result<()> {
        let indent = 2;
        let label_width = console::measure_text_width(label);
        let lines = if self.width == usize::MAX {
            vec![text.to_string()]
        } else {
            wrap(
                text,
                self.width.saturating_sub(indent + label_width).max(20),
            )
        };
        for (i, line) in lines.iter().enumerate() {
            if i == 0 {
                writeln!(out, "{}{label}{line}", " ".repeat(indent))?;
            } else {
                writeln!(out, "{}{line}", " ".repeat(indent + label_width))?;
            }
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

/// The first `n` sentences of `text`, at most about `max` characters, `…` when cut.
fn first_sentences(text: &str, n: usize, max: usize) -> String {
    let text = text.trim();
    let mut end = text.len();
    let mut found = 0;
    for (i, c) in text.char_indices() {
        let next = text[i + c.len_utf8()..].chars().next();
        let ends = matches!(c, '。' | '！' | '？')
            || (matches!(c, '.' | '!' | '?') && next.is_none_or(char::is_whitespace));
        if ends {
            found += 1;
            if found == n {
                end = i + c.len_utf8();
                break;
            }
        }
    }
    let mut out = text[..end].to_string();
    if let Some((cut, _)) = out.char_indices().nth(max) {
        out.truncate(cut);
        out.push('…');
    } else if end < text.len() {
        out.push_str(" …");
    }
    out
}

/// Greedy word wrap to `width` columns (display width: a Chinese character counts two);
/// a word longer than the width stands on its own line.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut line_width = 0;
    // Chinese has no spaces: each character is a place to break.
    let mut pieces: Vec<String> = Vec::new();
    for word in text.split(' ') {
        let mut buf = String::new();
        for c in word.chars() {
            if c > '\u{2e80}' {
                if !buf.is_empty() {
                    pieces.push(std::mem::take(&mut buf));
                }
                pieces.push(c.to_string());
            } else {
                buf.push(c);
            }
        }
        if !buf.is_empty() {
            pieces.push(buf);
        }
        pieces.push(" ".to_string());
    }
    pieces.pop();
    for piece in pieces {
        let w = console::measure_text_width(&piece);
        if piece == " " {
            if line_width > 0 && line_width < width {
                line.push(' ');
                line_width += 1;
            }
            continue;
        }
        if line_width + w > width && line_width > 0 {
            lines.push(line.trim_end().to_string());
            line = String::new();
            line_width = 0;
        }
        line.push_str(&piece);
        line_width += w;
    }
    if !line.trim().is_empty() || lines.is_empty() {
        lines.push(line.trim_end().to_string());
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::{first_sentences, wrap};

    #[test]
    fn wrapping_and_sentences() {
        let lines = wrap("one two three four five six seven", 10);
        assert_eq!(lines, ["one two", "three four", "five six", "seven"]);
        assert!(
            wrap("显存不足，请减小批大小", 10)
                .iter()
                .all(|l| console::measure_text_width(l) <= 10)
        );
        assert_eq!(wrap("", 10), [""]);
        assert_eq!(
            first_sentences(
                "A kernel faulted. The context is sticky. Restart it.",
                2,
                400
            ),
            "A kernel faulted. The context is sticky. …"
        );
        assert_eq!(
            first_sentences("v1.2 is fine. Next.", 1, 400),
            "v1.2 is fine. …"
        );
        assert_eq!(first_sentences("短句。第二句。", 1, 400), "短句。 …");
    }
}
