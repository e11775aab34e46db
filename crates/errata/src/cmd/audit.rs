//! `errata audit [FILE…|-] [--probe]`: known-bad environments before anything crashes.
//! Reads environment reports (collect_env, nvidia-smi, nvcc, pip; any mix) or probes
//! this machine, and names every entry whose `affects` conditions hold
//! (`errata_audit`). Exit: 0 clean, 1 findings, 2 failure.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    /// Environment reports: the output of `python -m torch.utils.collect_env`,
    /// `nvidia-smi`, `nvidia-smi -q`, `nvcc --version`, `pip list` / `pip freeze`, in
    /// any mix; `-` reads standard input.
    pub files: Vec<PathBuf>,
    /// Run those commands that exist on this machine and audit their output.
    #[arg(long)]
    pub probe: bool,
    /// Output: `human`, or `json` (`{"facts": {…}, "findings": [{"id", "because",
    /// "severity", "note", "fix"}]}`).
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
    /// Language of notes and fixes (`en` or `zh`).
    #[arg(long, default_value = "en", value_parser = ["en", "zh"])]
    pub lang: String,
    #[command(flatten)]
    pub knowledge: super::common::KnowledgeArgs,
}

/// Output formats.
#[derive(Clone, Copy, clap::ValueEnum)]
pub enum Format {
    /// For people.
    Human,
    /// One JSON object.
    Json,
}

/// A report larger than this is not an environment report.
const MAX_REPORT_BYTES: u64 = 16 << 20;

/// What `--probe` runs, each for at most [`PROBE_TIMEOUT`].
const PROBES: &[&[&str]] = &[
    &["nvidia-smi"],
    &["nvcc", "--version"],
    &["python3", "-m", "torch.utils.collect_env"],
    &["python3", "-m", "pip", "list"],
];
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.files.is_empty() && !args.probe {
        anyhow::bail!("give environment reports (files, or - for standard input), or --probe");
    }
    let mut text = String::new();
    for path in &args.files {
        if path.as_os_str() == "-" {
            std::io::stdin()
                .take(MAX_REPORT_BYTES)
                .read_to_string(&mut text)
                .map_err(|e| anyhow::anyhow!("<stdin>: {e}"))?;
        } else {
            let len = std::fs::metadata(path)
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?
                .len();
            if len > MAX_REPORT_BYTES {
                anyhow::bail!(
                    "{}: {len} bytes is not an environment report",
                    path.display()
                );
            }
            let bytes =
                std::fs::read(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            text.push_str(&String::from_utf8_lossy(&bytes));
        }
        text.push('\n');
    }
    if args.probe {
        for probe in PROBES {
            if let Some(out) = run_probe(probe) {
                eprintln!("probed: {}", probe.join(" "));
                text.push_str(&out);
                text.push('\n');
            }
        }
    }
    let knowledge = args.knowledge.load()?;
    let zh = args.lang == "zh";
    let report = errata_audit::audit(&text, knowledge.index(), zh);
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string(&report)?)?,
        Format::Human => write_human(&mut out, &report, zh)?,
    }
    out.flush()?;
    Ok(if report.findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// The output of `argv` when it exists and finishes in time (its exit status aside:
/// `nvidia-smi` on a machine without a GPU still says why).
fn run_probe(argv: &[&str]) -> Option<String> {
    let mut child = Command::new(argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .ok()?;
    let mut stdout = child.stdout.take()?;
    let reader = std::thread::spawn(move || {
        let mut buf = Vec::new();
        let _ = (&mut stdout).take(MAX_REPORT_BYTES).read_to_end(&mut buf);
        buf
    });
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if start.elapsed() < PROBE_TIMEOUT => {
                std::thread::sleep(Duration::from_millis(50));
            }
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                eprintln!("probe timed out: {}", argv.join(" "));
                return None;
            }
        }
    }
    let bytes = reader.join().ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

fn write_human(
    out: &mut impl Write,
    report: &errata_audit::Report,
    zh: bool,
) -> std::io::Result<()> {
    let (facts_label, none, fix) = if zh {
        ("环境", "没有发现已知的问题环境。", "修复")
    } else {
        ("facts", "no known-bad environment found", "fix")
    };
    let shown: Vec<String> = report
        .facts
        .iter()
        .map(|(k, v)| match v {
            serde_json::Value::String(s) => format!("{k}={s}"),
            other => format!("{k}={other}"),
        })
        .collect();
    writeln!(out, "{facts_label}: {}", shown.join("  "))?;
    if report.findings.is_empty() {
        return writeln!(out, "{none}");
    }
    for f in &report.findings {
        let because: Vec<String> = f.because.iter().map(|(k, v)| format!("{k}={v}")).collect();
        writeln!(out, "\n{}: {}  ({})", f.severity, f.id, because.join(", "))?;
        writeln!(out, "  {}", f.note)?;
        if !f.fix.is_empty() {
            writeln!(out, "  {fix}: {}", f.fix)?;
        }
    }
    Ok(())
}
