//! Run-tier classification: what a finished process printed and returned, judged
//! against the snippet's expectation.
//!
//! Errors are recognised by the texts CUDA and PyTorch really print (see the recorded
//! outputs in `tests/fixtures/recorded/`, each with the URL it was published at):
//! - `cudaGetErrorName` names (`cudaErrorIllegalAddress`), which every errata CUDA
//!   harness prints through `CUDA_CHECK`, and which thrust, alpaka or PyTorch 2.8+
//!   (`Search for `cudaErrorIllegalAddress' in …`) print too;
//! - `cudaGetErrorString` strings on a line that says it reports a CUDA error, however
//!   the program words it: PyTorch's `CUDA error: an illegal memory access was
//!   encountered`, old PyTorch's `cuda runtime error (2) : out of memory at …`, a
//!   program's own `CUDA error (transport particle table): too many resources requested
//!   for launch` or CUB's `CUDA error 716 [file, 351]: misaligned address`; strings are
//!   mapped back to names by the table generated from libcudart
//!   (errata-model's `data/cuda-error-strings.tsv`), the longest string on the line winning;
//! - PyTorch's allocator message (`CUDA out of memory. Tried to allocate …`);
//! - the last Python traceback's exception line (`torch.AcceleratorError: …`);
//! - `compute-sanitizer`'s `========= ERROR SUMMARY: N errors` and `========= RACECHECK
//!   SUMMARY: N hazards displayed (E errors, W warnings)`.

use std::sync::OnceLock;

use errata_model::snippet::Expect;
use regex::Regex;

use crate::outcome::Outcome;

/// `cudaGetErrorName`/`cudaGetErrorString` of every code, from libcudart (kept beside
/// the `cudaError_t` table in errata-model).
pub const CUDA_ERROR_STRINGS: &str = errata_model::cuda_errors::RUNTIME_STRINGS_TSV;

/// What a finished run left behind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunOutput {
    /// Exit status, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended it, when one did.
    pub signal: Option<i32>,
    /// Killed after its timeout.
    pub timed_out: bool,
    /// Captured (and capped) stdout.
    pub stdout: String,
    /// Captured (and capped) stderr.
    pub stderr: String,
}

/// A Python exception from a traceback.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyException {
    /// The type as printed, e.g. `torch.AcceleratorError` or `RuntimeError`.
    pub ty: String,
    /// The message (may span lines).
    pub message: String,
}

/// The errors found in a run's output.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Observed {
    /// A `cudaError_t` name.
    pub cuda: Option<String>,
    /// The exception of the last Python traceback.
    pub py: Option<PyException>,
    /// compute-sanitizer's findings, when it ran: memcheck's (and initcheck's,
    /// synccheck's) error count, racecheck's count of hazards displayed (errors and
    /// warnings), the leak check's count of leaked allocations, the largest of its summaries.
    pub sanitizer_errors: Option<u64>,
    /// That summary line as compute-sanitizer printed it, without its `========= `.
    pub sanitizer_summary: Option<String>,
}

fn re(cell: &'static OnceLock<Option<Regex>>, pattern: &str) -> Option<&'static Regex> {
    cell.get_or_init(|| Regex::new(pattern).ok()).as_ref()
}

/// `(name, string)` of every code but `cudaSuccess` ("no error").
fn error_strings() -> &'static [(&'static str, &'static str)] {
    errata_model::cuda_errors::runtime_strings()
}

/// Maps a `cudaGetErrorString` text to its name.
pub fn cuda_name_for_string(text: &str) -> Option<&'static str> {
    error_strings()
        .iter()
        .find(|(_, s)| *s == text)
        .map(|(name, _)| *name)
}

/// Whether `needle` (lowercase ASCII) occurs in `hay` (lowercased) as whole words.
fn contains_words(hay: &str, needle: &str) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    hay.match_indices(needle).any(|(i, m)| {
        !word(hay[..i].chars().next_back()) && !word(hay[i + m.len()..].chars().next())
    })
}

/// The first line that reports a CUDA error (`CUDA error: …`, `CUDA Error …`,
/// `cuda runtime error (2) : …`) and holds a `cudaGetErrorString` text: that text's name.
fn name_from_error_line(all: &str) -> Option<&'static str> {
    all.lines().find_map(|line| {
        let lower = line.to_ascii_lowercase();
        if !(lower.contains("cuda error") || lower.contains("cuda runtime error")) {
            return None;
        }
        error_strings()
            .iter()
            .filter(|(_, s)| contains_words(&lower, &s.to_ascii_lowercase()))
            .max_by_key(|(_, s)| s.len())
            .map(|(name, _)| *name)
    })
}

/// Finds the errors in a run's output.
pub fn observe(out: &RunOutput) -> Observed {
    static NAME: OnceLock<Option<Regex>> = OnceLock::new();
    static SUMMARY: OnceLock<Option<Regex>> = OnceLock::new();
    let all = format!("{}\n{}", out.stderr, out.stdout);
    let py = last_exception(&out.stderr);
    let mut cuda = re(&NAME, r"\bcuda(?:Error[A-Za-z0-9]+)\b")
        .and_then(|r| r.find(&all))
        .map(|m| m.as_str().to_string());
    if cuda.is_none() {
        cuda = name_from_error_line(&all).map(str::to_string);
    }
    if cuda.is_none() && all.contains("CUDA out of memory. Tried to allocate") {
        // c10/cuda/CUDACachingAllocator raises torch.OutOfMemoryError with this text
        // after cudaMalloc returned cudaErrorMemoryAllocation.
        cuda = Some("cudaErrorMemoryAllocation".into());
    }
    // memcheck ends with `ERROR SUMMARY: N errors` (with `--leak-check full` after a
    // `LEAK SUMMARY: B bytes leaked in N allocations`, counted too so that a leak is a
    // finding whether or not the error summary includes it); racecheck may also (or instead)
    // print `RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)`: both format
    // strings are in compute-sanitizer's binary (wheels 13.2.87 and 13.5.25). Real logs indent the `=========`
    // (CI) or hold one summary per process: the largest count wins.
    let (sanitizer_errors, sanitizer_summary) = re(
        &SUMMARY,
        r"=========[ \t]+((?:ERROR SUMMARY: (\d+) errors?|RACECHECK SUMMARY: (\d+) hazards? displayed|LEAK SUMMARY: [\d,]+ bytes leaked in ([\d,]+) allocations?)[^\r\n]*)",
    )
    .into_iter()
    .flat_map(|r| r.captures_iter(&all))
    .filter_map(|c| {
        let count = c.get(2).or_else(|| c.get(3)).or_else(|| c.get(4))?;
        let n: u64 = count.as_str().replace(',', "").parse().ok()?;
        Some((n, c.get(1)?.as_str().trim_end().to_string()))
    })
    .max_by_key(|(n, _)| *n)
    .map_or((None, None), |(n, line)| (Some(n), Some(line)));
    Observed {
        cuda,
        py,
        sanitizer_errors,
        sanitizer_summary,
    }
}

/// The exception line after the last `Traceback (most recent call last):`.
fn last_exception(stderr: &str) -> Option<PyException> {
    static LINE: OnceLock<Option<Regex>> = OnceLock::new();
    let line_re = re(&LINE, r"^([A-Za-z_][\w.]*)(?::\s?(.*))?$")?;
    let start = stderr.rfind("Traceback (most recent call last):")?;
    let mut lines = stderr[start..].lines().skip(1);
    let first = lines.find(|l| !l.starts_with(' ') && !l.starts_with('\t') && !l.is_empty())?;
    let caps = line_re.captures(first)?;
    let ty = caps.get(1)?.as_str().to_string();
    let mut message = caps.get(2).map_or("", |m| m.as_str()).to_string();
    for l in lines {
        message.push('\n');
        message.push_str(l);
    }
    Some(PyException {
        ty,
        message: message.trim_end().to_string(),
    })
}

/// Python's and PyTorch's exception hierarchy, as far as snippets need it (torch's from
/// `torch/_C/__init__.pyi`: `class AcceleratorError(RuntimeError)`,
/// `class OutOfMemoryError(RuntimeError)`).
fn parent(ty: &str) -> Option<&'static str> {
    Some(match ty {
        "AcceleratorError" | "OutOfMemoryError" | "NotImplementedError" | "RecursionError" => {
            "RuntimeError"
        }
        "ModuleNotFoundError" => "ImportError",
        "IndexError" | "KeyError" => "LookupError",
        "ZeroDivisionError" | "OverflowError" | "FloatingPointError" => "ArithmeticError",
        "FileNotFoundError" | "PermissionError" | "TimeoutError" => "OSError",
        "UnicodeDecodeError" | "UnicodeEncodeError" => "ValueError",
        "SystemExit" | "KeyboardInterrupt" | "GeneratorExit" => "BaseException",
        "Exception" => "BaseException",
        "BaseException" => return None,
        _ => "Exception",
    })
}

/// `observed` is `expected` or a subclass of it (`torch.X` and `X` are the same class).
pub fn exception_matches(expected: &str, observed: &str) -> bool {
    let last = |s: &str| s.rsplit('.').next().unwrap_or(s).to_string();
    let want = last(expected);
    let mut cur = last(observed);
    for _ in 0..8 {
        if cur == want {
            return true;
        }
        match parent(&cur) {
            Some(p) => cur = p.to_string(),
            None => return false,
        }
    }
    false
}

fn describe(o: &Observed, out: &RunOutput) -> String {
    let mut parts = Vec::new();
    if let Some(py) = &o.py {
        let first = py.message.lines().next().unwrap_or("");
        parts.push(format!("{}: {first}", py.ty));
    }
    if let Some(c) = &o.cuda {
        parts.push(c.clone());
    }
    if let Some(summary) = &o.sanitizer_summary {
        parts.push(format!("compute-sanitizer: {summary}"));
    }
    match (out.exit_code, out.signal) {
        (_, Some(sig)) => parts.push(format!("killed by signal {sig}")),
        (Some(code), None) => parts.push(format!("exit {code}")),
        (None, None) => {}
    }
    if parts.is_empty() {
        "no status".into()
    } else {
        parts.join("; ")
    }
}

/// Judges a finished run against `expect`.
pub fn classify(expect: &Expect, out: &RunOutput) -> (Outcome, String) {
    let o = observe(out);
    let seen = describe(&o, out);
    if out.timed_out {
        return (
            Outcome::Timeout,
            format!("killed after its timeout ({seen})"),
        );
    }
    let success = out.exit_code == Some(0) && out.signal.is_none();
    if let Expect::Sanitizer(tool) = expect {
        return match o.sanitizer_errors {
            Some(n) if n > 0 => (Outcome::ExpectedErrorObserved, seen),
            Some(_) => (
                Outcome::UnexpectedSuccess,
                format!("compute-sanitizer {} found no error", tool.as_str()),
            ),
            None => (
                Outcome::InfraError,
                format!("no compute-sanitizer summary in the output ({seen})"),
            ),
        };
    }
    if o.sanitizer_errors.is_some_and(|n| n > 0) {
        return (Outcome::SanitizerFinding, seen);
    }
    match expect {
        Expect::Ok if success => (Outcome::Pass, "ran and exited 0".into()),
        Expect::Ok => (Outcome::UnexpectedError, seen),
        _ if success => (
            Outcome::UnexpectedSuccess,
            format!("expected {expect}, but it exited 0"),
        ),
        Expect::Cuda(name) => {
            if o.cuda.as_deref() == Some(name.as_str()) {
                (Outcome::ExpectedErrorObserved, seen)
            } else {
                (Outcome::WrongError, format!("expected {name}, saw {seen}"))
            }
        }
        Expect::Py { exception, message } => {
            let Some(py) = &o.py else {
                return (
                    Outcome::WrongError,
                    format!("expected {exception}, saw no Python exception ({seen})"),
                );
            };
            let type_ok = exception_matches(exception, &py.ty);
            let message_ok = match message {
                None => Ok(true),
                Some(m) => Regex::new(m)
                    .map(|r| r.is_match(&py.message))
                    .map_err(|e| e.to_string()),
            };
            match message_ok {
                Err(e) => (Outcome::InfraError, format!("invalid message regex: {e}")),
                Ok(true) if type_ok => (Outcome::ExpectedErrorObserved, seen),
                Ok(_) => (
                    Outcome::WrongError,
                    format!("expected {expect}, saw {seen}"),
                ),
            }
        }
        Expect::Exit(n) if out.exit_code == Some(*n) => (Outcome::ExpectedErrorObserved, seen),
        Expect::Exit(n) => (
            Outcome::WrongError,
            format!("expected exit {n}, saw {seen}"),
        ),
        Expect::CompileError(_) => (
            Outcome::InfraError,
            "a compile-error snippet reached the run tier".into(),
        ),
        Expect::Sanitizer(_) => (Outcome::InfraError, seen),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_maps_real_strings() {
        assert_eq!(
            cuda_name_for_string("an illegal memory access was encountered"),
            Some("cudaErrorIllegalAddress")
        );
        assert_eq!(
            cuda_name_for_string("out of memory"),
            Some("cudaErrorMemoryAllocation")
        );
        assert_eq!(cuda_name_for_string("no such text"), None);
    }

    /// The strings come from the same libcudart as errata-model's `cudaError_t` table
    /// (`toolchain::CUDA_WHEEL_VERSION`): every code has the same name in both.
    #[test]
    fn error_strings_agree_with_the_cuda_error_table() {
        let version = crate::toolchain::CUDA_WHEEL_VERSION;
        assert!(
            CUDA_ERROR_STRINGS.contains(&format!("nvidia-cuda-runtime {version}.")),
            "errata-model/data/cuda-error-strings.tsv is not from {version}: run `cargo xtask nvcc --error-strings`"
        );
        assert!(
            errata_model::cuda_errors::CUDA_HEADER_SOURCE
                .contains(&format!("nvidia-cuda-runtime {version} ")),
            "errata-model's table is not from {version}: run `cargo xtask gen-cuda-errors`"
        );
        let mut rows = 0;
        for line in CUDA_ERROR_STRINGS.lines().filter(|l| !l.starts_with('#')) {
            let mut cols = line.splitn(3, '\t');
            let code: i32 = cols.next().and_then(|c| c.parse().ok()).unwrap_or(-1);
            let name = cols.next().unwrap_or("");
            let known = errata_model::cuda_errors::by_code(code).map(|e| e.name);
            assert_eq!(known, Some(name), "code {code}");
            rows += 1;
        }
        let in_range = errata_model::cuda_errors::CUDA_ERRORS
            .iter()
            .filter(|e| (0..=1100).contains(&e.code))
            .count();
        assert_eq!(rows, in_range);
    }

    #[test]
    fn racecheck_summary_counts() {
        let out = RunOutput {
            exit_code: Some(0),
            stdout: "========= COMPUTE-SANITIZER\n========= RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)\n".into(),
            ..RunOutput::default()
        };
        assert_eq!(observe(&out).sanitizer_errors, Some(2));
        let clean = RunOutput {
            stdout: "========= RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)\n"
                .into(),
            ..RunOutput::default()
        };
        assert_eq!(observe(&clean).sanitizer_errors, Some(0));
    }

    #[test]
    fn leak_summary_counts_allocations() {
        let out = RunOutput {
            exit_code: Some(0),
            stdout: "========= Leaked 1,024 bytes at 0x7879c0800000\n=========\n========= LEAK SUMMARY: 1,024 bytes leaked in 1 allocations\n========= ERROR SUMMARY: 0 errors\n".into(),
            ..RunOutput::default()
        };
        let o = observe(&out);
        assert_eq!(o.sanitizer_errors, Some(1));
        assert_eq!(
            o.sanitizer_summary.as_deref(),
            Some("LEAK SUMMARY: 1,024 bytes leaked in 1 allocations")
        );
        let clean = RunOutput {
            stdout: "========= LEAK SUMMARY: 0 bytes leaked in 0 allocations\n========= ERROR SUMMARY: 0 errors\n".into(),
            ..RunOutput::default()
        };
        assert_eq!(observe(&clean).sanitizer_errors, Some(0));
    }

    #[test]
    fn hierarchy() {
        assert!(exception_matches("RuntimeError", "torch.AcceleratorError"));
        assert!(exception_matches(
            "torch.OutOfMemoryError",
            "torch.OutOfMemoryError"
        ));
        assert!(exception_matches(
            "torch.cuda.OutOfMemoryError",
            "torch.OutOfMemoryError"
        ));
        assert!(exception_matches("Exception", "ValueError"));
        assert!(!exception_matches("ValueError", "RuntimeError"));
        assert!(!exception_matches("torch.OutOfMemoryError", "RuntimeError"));
    }
}
