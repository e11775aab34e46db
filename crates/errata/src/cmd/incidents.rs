//! `errata incidents FILE…`: several logs of one failure (rank logs, kernel logs, NCCL
//! logs) matched together and grouped into incidents, each with its first cause and the
//! operator's action (`errata_incidents`). Exit: 0 no incident, 1 incidents found, 2
//! failure.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use errata_incidents::{Incident, Log, Options, Ordering, facts};

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The logs: per-rank application logs, `dmesg -T` / journal / syslog kernel logs,
    /// NCCL debug logs (any mix; each is read whole).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output: `human`, or `json` (one incident per line: `{"incident", "first_cause":
    /// {"id", "file", "line"}, "operator_action", "ordered_by", "members": [{"file",
    /// "line", "id", "time", "host", "rank", "pci"}]}`).
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    /// The longest gap between two errors of one incident, in minutes, when both lines
    /// carry wall-clock times.
    #[arg(long, default_value_t = 30.0, value_name = "MINUTES")]
    pub window: f64,
    #[command(flatten)]
    pub knowledge: super::common::KnowledgeArgs,
}

/// Output formats.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// For people: one short story per incident.
    Human,
    /// JSON Lines, one incident per line.
    Json,
}

/// A log larger than this is refused rather than read into memory.
const MAX_LOG_BYTES: u64 = 1 << 30;

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if !(args.window.is_finite() && args.window >= 0.0) {
        anyhow::bail!(
            "--window: minutes must be a number ≥ 0, not {}",
            args.window
        );
    }
    let mut texts = Vec::new();
    for path in &args.files {
        let len = std::fs::metadata(path)
            .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
            .len();
        if len > MAX_LOG_BYTES {
            anyhow::bail!(
                "{}: {len} bytes; logs over 1 GiB are not read whole (cut the hours around the failure)",
                path.display()
            );
        }
        let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        texts.push((
            path.display().to_string(),
            String::from_utf8_lossy(&bytes).into_owned(),
        ));
    }
    let knowledge = args.knowledge.load()?;
    let logs: Vec<Log<'_>> = texts
        .iter()
        .map(|(name, text)| Log { name, text })
        .collect();
    let options = Options {
        window_secs: args.window * 60.0,
    };
    let incidents = errata_incidents::find(knowledge.index(), &logs, &options);
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for incident in &incidents {
        match args.format {
            Format::Json => writeln!(out, "{}", incident.to_json())?,
            Format::Human => write_story(&mut out, incident)?,
        }
    }
    out.flush()?;
    if matches!(args.format, Format::Human) {
        eprintln!("{} log(s), {} incident(s)", logs.len(), incidents.len());
    }
    Ok(if incidents.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// Where a member happened: host, rank, GPU, as far as its line says.
fn place(m: &errata_incidents::Member) -> String {
    let mut parts = Vec::new();
    if let Some(h) = &m.host {
        parts.push(format!("host {h}"));
    }
    if let Some(r) = m.rank {
        parts.push(format!("rank {r}"));
    }
    if let Some(p) = &m.pci {
        parts.push(format!("GPU {p}"));
    }
    parts.join(", ")
}

/// One incident as a short story: the first cause, then each other error once (with how
/// many lines and where), then the operator's action.
fn write_story(out: &mut impl Write, incident: &Incident) -> std::io::Result<()> {
    let cause = incident.cause();
    let when = cause.time.map(facts::show).unwrap_or_default();
    writeln!(
        out,
        "incident {}: {}  ({}:{}{}{})",
        incident.number,
        cause.id,
        cause.file,
        cause.line,
        if place(cause).is_empty() {
            String::new()
        } else {
            format!(", {}", place(cause))
        },
        if when.is_empty() {
            String::new()
        } else {
            format!(", {when}")
        },
    )?;
    writeln!(out, "  first: {}", cause.text)?;
    // The other errors, each once, in order of first appearance.
    let mut seen: Vec<&str> = vec![cause.id.as_str()];
    for m in &incident.members {
        if seen.contains(&m.id.as_str()) {
            continue;
        }
        seen.push(&m.id);
        let same: Vec<&errata_incidents::Member> =
            incident.members.iter().filter(|o| o.id == m.id).collect();
        let ranks: Vec<String> = {
            let mut r: Vec<u32> = same.iter().filter_map(|o| o.rank).collect();
            r.sort_unstable();
            r.dedup();
            r.iter().map(u32::to_string).collect()
        };
        let after = match (cause.time, m.time) {
            (Some(errata_incidents::Time::Wall(a)), Some(errata_incidents::Time::Wall(b))) => {
                format!(", {} later", span(b - a))
            }
            _ => String::new(),
        };
        writeln!(
            out,
            "  then:  {}  ({}:{}{}{}{})",
            m.id,
            m.file,
            m.line,
            if same.len() > 1 {
                format!(", {} lines", same.len())
            } else {
                String::new()
            },
            if ranks.is_empty() {
                String::new()
            } else {
                format!(", rank {}", ranks.join(", "))
            },
            after,
        )?;
    }
    if incident.ordered_by == Ordering::Graph {
        writeln!(
            out,
            "  order: some times are missing or relative to boot (plain dmesg); the first cause is the error the others are known to follow"
        )?;
    }
    writeln!(
        out,
        "  operator: {}",
        incident
            .operator_action
            .as_deref()
            .unwrap_or("(the entry names none)")
    )?;
    writeln!(out)
}

/// Seconds as `45 s`, `10 min`, `2 h 5 min`.
fn span(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    match s {
        0..=119 => format!("{s} s"),
        120..=7199 => format!("{} min", s / 60),
        _ => format!("{} h {} min", s / 3600, s % 3600 / 60),
    }
}
