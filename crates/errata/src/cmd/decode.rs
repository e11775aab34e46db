//! `errata decode VALUE [--family F]`: every family's meaning of a bare number or a
//! name, like `errno` / `err.exe`, with the entry that explains it. Exit: 0 some family
//! has it, 1 none does, 2 bad input or tool failure.

use std::io::Write;
use std::process::ExitCode;

use errata_consumer::Entry;

/// Arguments.
#[derive(clap::Args)]
pub struct Args {
    /// A number (`700`, `0x2bc`, `-1`) or an enumerator name (`CUBLAS_STATUS_NOT_SUPPORTED`).
    #[arg(allow_hyphen_values = true)]
    pub value: String,
    /// Only this family: `cuda`, `cu`, `cublas`, `cudnn`, `nccl`, `cufft`, `cusolver`,
    /// `cusparse`, `curand`, `nvml`, `xid`, or a type name such as `cublasStatus_t`.
    #[arg(long, value_name = "F")]
    pub family: Option<String>,
    /// Output: `human`, or `json` (`{"value", "meanings": [{"family", "name", "number",
    /// "description", "entry"}]}`).
    #[arg(long, value_enum, default_value = "human")]
    pub format: Format,
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

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let entries = entries(&args)?;
    let decoded = match errata_decode::decode(&args.value, args.family.as_deref(), &entries) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => writeln!(out, "{}", serde_json::to_string(&decoded)?)?,
        Format::Human => write_human(&mut out, &decoded, super::common::colour_on_stdout())?,
    }
    out.flush()?;
    Ok(if decoded.meanings.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The entries meanings link to: the bundle's, the data directory's, or those of the
/// knowledge base built into errata when there is no data directory here.
fn entries(args: &Args) -> anyhow::Result<Vec<Entry>> {
    let knowledge = args.knowledge.load()?;
    Ok(knowledge.index().entries().to_vec())
}

fn write_human(
    out: &mut impl Write,
    decoded: &errata_decode::Decoded,
    colour: bool,
) -> std::io::Result<()> {
    if decoded.meanings.is_empty() {
        return writeln!(out, "{}: no family has this value", decoded.value);
    }
    let bold = |s: &str| {
        if colour {
            format!("\x1b[1m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    };
    let family_width = decoded
        .meanings
        .iter()
        .map(|m| m.family.len())
        .max()
        .unwrap_or(0);
    for m in &decoded.meanings {
        writeln!(
            out,
            "{:<family_width$}  {} ({})",
            m.family,
            bold(&m.name),
            m.number
        )?;
        let pad = " ".repeat(family_width + 2);
        if !m.description.is_empty() {
            writeln!(out, "{pad}{}", m.description)?;
        }
        if let Some(entry) = &m.entry {
            writeln!(out, "{pad}→ errata entry {entry}")?;
        }
    }
    Ok(())
}
