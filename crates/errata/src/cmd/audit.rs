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

/// What `--probe` runs, each for at most [`PROBE_TIMEOUT`], and whether what it prints on
/// standard error is read too.
const PROBES: &[(&[&str], bool)] = &[
    (&["nvidia-smi"], false),
    (&["nvcc", "--version"], false),
    (&["python3", "-m", "torch.utils.collect_env"], false),
    (&["python3", "-m", "pip", "list"], false),
    // collect_env only lists the libraries it finds; importing torch and asking for the
    // cuDNN it loaded is what fails when the wrong libcudnn or libnccl wins the search
    // (`cuDNN version incompatibility`, `undefined symbol: ncclCommRegister`), and
    // that message is on standard error.
    (
        &[
            "python3",
            "-c",
            "import torch; print('torch.backends.cudnn.version():', torch.backends.cudnn.version())",
        ],
        true,
    ),
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
        for &(probe, with_stderr) in PROBES {
            if let Some(out) = run_probe(probe, with_stderr) {
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
/// `nvidia-smi` on a machine without a GPU still says why), and its standard error after
/// it when `with_stderr`.
fn run_probe(argv: &[&str], with_stderr: bool) -> Option<String> {
    let mut child = Command::new(argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(if with_stderr {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .spawn()
        .ok()?;
    let read_all = |mut from: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut from).take(MAX_REPORT_BYTES).read_to_end(&mut buf);
            buf
        })
    };
    let reader = read_all(Box::new(child.stdout.take()?));
    let errors = child.stderr.take().map(|e| read_all(Box::new(e)));
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
    let mut bytes = reader.join().ok()?;
    if let Some(errors) = errors {
        bytes.push(b'\n');
        bytes.extend(errors.join().ok()?);
    }
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
