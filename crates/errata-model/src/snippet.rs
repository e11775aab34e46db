//! The code-fence annotation grammar (see docs/data.md, "Snippet fence annotations").
//!
//! A fence's info string is a language followed by annotations:
//!
//! ```text
//! cuda expect=cuda:cudaErrorIllegalAddress requires=gpu timeout=30s harness=cuda-main
//! python expect="py:RuntimeError:Expected all tensors to be on the same device"
//! cpp cont
//! bash ignore(needs a multi-GPU node)
//! ```
//!
//! Values containing spaces are double-quoted. Unknown keys and malformed values are
//! errors (rule `snippet-annotation`), so a typo never silently turns a check off.

use std::fmt;
use std::ops::Range;
use std::time::Duration;

/// The language family a fence's language maps to.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Lang {
    /// `cuda`, `cu`, `cpp`, `c++`, `cxx`, `c`: compiled with nvcc.
    Cuda,
    /// `python`, `py`, `python3`.
    Python,
    /// `bash`, `sh`, `shell`, `console`.
    Shell,
    /// Any other language (`text`, `json`, …): not executed.
    Other(String),
}

impl Lang {
    /// Normalises a fence language.
    ///
    /// ```
    /// use errata_model::snippet::Lang;
    /// assert_eq!(Lang::from_fence("c++"), Lang::Cuda);
    /// assert_eq!(Lang::from_fence("py"), Lang::Python);
    /// ```
    pub fn from_fence(lang: &str) -> Lang {
        match lang.to_ascii_lowercase().as_str() {
            "cuda" | "cu" | "cpp" | "c++" | "cxx" | "c" => Lang::Cuda,
            "python" | "py" | "python3" => Lang::Python,
            "bash" | "sh" | "shell" | "console" | "zsh" => Lang::Shell,
            other => Lang::Other(other.to_string()),
        }
    }

    /// The canonical name used in reports (`cuda`, `python`, `shell`, or the original).
    pub fn name(&self) -> &str {
        match self {
            Lang::Cuda => "cuda",
            Lang::Python => "python",
            Lang::Shell => "shell",
            Lang::Other(s) => s,
        }
    }
}

/// What a snippet is expected to do when it is compiled or run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// Compiles and runs without error.
    Ok,
    /// Fails to compile; the optional regex must match the compiler output.
    CompileError(Option<String>),
    /// Fails at run time with this `cudaError_t` name.
    Cuda(String),
    /// Raises this Python exception type; the optional regex must match its message.
    Py {
        /// Exception type name, e.g. `RuntimeError` or `torch.OutOfMemoryError`.
        exception: String,
        /// Regex over the exception message.
        message: Option<String>,
    },
    /// `compute-sanitizer` with this tool reports a finding.
    Sanitizer(SanitizerTool),
    /// Exits with this status.
    Exit(i32),
}

impl fmt::Display for Expect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expect::Ok => f.write_str("ok"),
            Expect::CompileError(None) => f.write_str("compile-error"),
            Expect::CompileError(Some(re)) => write!(f, "compile-error:{re}"),
            Expect::Cuda(name) => write!(f, "cuda:{name}"),
            Expect::Py {
                exception,
                message: None,
            } => write!(f, "py:{exception}"),
            Expect::Py {
                exception,
                message: Some(m),
            } => write!(f, "py:{exception}:{m}"),
            Expect::Sanitizer(tool) => write!(f, "sanitizer:{}", tool.as_str()),
            Expect::Exit(n) => write!(f, "exit:{n}"),
        }
    }
}

/// A `compute-sanitizer` tool.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SanitizerTool {
    /// `--tool memcheck`.
    Memcheck,
    /// `--tool racecheck`.
    Racecheck,
    /// `--tool initcheck`: reads of device memory nothing wrote.
    Initcheck,
    /// `--tool memcheck --leak-check full`: device allocations never freed. compute-sanitizer
    /// has no tool of this name; leaks are a memcheck option, named here as what it checks.
    Leakcheck,
}

impl SanitizerTool {
    /// The tool's command-line name.
    pub fn as_str(self) -> &'static str {
        match self {
            SanitizerTool::Memcheck => "memcheck",
            SanitizerTool::Racecheck => "racecheck",
            SanitizerTool::Initcheck => "initcheck",
            SanitizerTool::Leakcheck => "leakcheck",
        }
    }
}

/// What a snippet needs to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Requirement {
    /// A CUDA GPU.
    Gpu,
    /// PyTorch with CUDA.
    Torch,
    /// More than one GPU.
    MultiGpu,
    /// The GPU to itself: the program exhausts device memory (or otherwise disturbs every
    /// other process on the GPU), so the run tier runs it alone, after the others.
    WholeGpu,
}

/// The parsed annotations of one fence.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Annotations {
    /// `expect=…` (default: `ok` for runnable languages).
    pub expect: Option<Expect>,
    /// `requires=gpu,torch`.
    pub requires: Vec<Requirement>,
    /// `timeout=30s`.
    pub timeout: Option<Duration>,
    /// `harness=<name>`: wrap the fragment in this template.
    pub harness: Option<String>,
    /// `cont`: append this block to the previous one of the same language.
    pub cont: bool,
    /// `ignore(reason)`: do not verify; the reason is shown in reports.
    pub ignore: Option<String>,
}

/// A malformed or unknown annotation, with its byte range inside the info string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnnotationError {
    /// What is wrong.
    pub message: String,
    /// Where, relative to the start of the info string.
    pub span: Range<usize>,
}

/// A fence info string split into language and annotations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FenceInfo {
    /// The language exactly as written (may be empty).
    pub lang_raw: String,
    /// The normalised language.
    pub lang: Lang,
    /// The annotations that parsed.
    pub annotations: Annotations,
    /// The annotations that did not.
    pub errors: Vec<AnnotationError>,
}

/// The annotation keys this grammar knows, for error messages.
pub const KNOWN_KEYS: &[&str] = &["expect", "requires", "timeout", "harness", "cont", "ignore"];

impl FenceInfo {
    /// Parses an info string such as `cuda expect=ok timeout=10s`.
    pub fn parse(info: &str) -> FenceInfo {
        let tokens = tokenize(info);
        let mut tokens = tokens.into_iter();
        let (lang_raw, mut errors) = match tokens.next() {
            Some(Ok((tok, _)))
                if !tok.contains('=') && !tok.starts_with("ignore(") && tok != "cont" =>
            {
                (tok, Vec::new())
            }
            Some(first) => {
                // No language: re-examine the first token as an annotation.
                let rest: Vec<_> = std::iter::once(first).chain(tokens.by_ref()).collect();
                tokens = rest.into_iter().collect::<Vec<_>>().into_iter();
                (String::new(), Vec::new())
            }
            None => (String::new(), Vec::new()),
        };
        let mut annotations = Annotations::default();
        for token in tokens {
            match token {
                Ok((tok, span)) => {
                    if let Err(message) = apply(&mut annotations, &tok) {
                        errors.push(AnnotationError { message, span });
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        FenceInfo {
            lang: Lang::from_fence(&lang_raw),
            lang_raw,
            annotations,
            errors,
        }
    }
}

impl Annotations {
    /// Parses annotations without a leading language (an entry's `verify.annotations`).
    pub fn parse(text: &str) -> (Annotations, Vec<AnnotationError>) {
        let mut annotations = Annotations::default();
        let mut errors = Vec::new();
        for token in tokenize(text) {
            match token {
                Ok((tok, span)) => {
                    if let Err(message) = apply(&mut annotations, &tok) {
                        errors.push(AnnotationError { message, span });
                    }
                }
                Err(e) => errors.push(e),
            }
        }
        (annotations, errors)
    }
}

type Token = Result<(String, Range<usize>), AnnotationError>;

/// Splits on whitespace, keeping `"quoted values"` and `ignore(…)` together.
fn tokenize(info: &str) -> Vec<Token> {
    let mut out = Vec::new();
    let bytes = info.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        // The same test as the one that ends a token below. With the ASCII one here, a
        // character that only `char::is_whitespace` knows (a vertical tab, U+3000 in a
        // Chinese article) ended an empty token without moving on: an endless loop
        // filling memory with empty tokens (found by fuzzing).
        if let Some(c) = info[i..].chars().next().filter(|c| c.is_whitespace()) {
            i += c.len_utf8();
            continue;
        }
        let start = i;
        let mut text = String::new();
        let mut depth = 0usize;
        let mut quoted = false;
        let mut chars = info[i..].char_indices();
        let mut end = info.len();
        for (off, c) in chars.by_ref() {
            match c {
                '"' if depth == 0 => quoted = !quoted,
                '(' if !quoted => {
                    depth += 1;
                    text.push(c);
                }
                ')' if !quoted && depth > 0 => {
                    depth -= 1;
                    text.push(c);
                }
                c if c.is_whitespace() && !quoted && depth == 0 => {
                    end = i + off;
                    break;
                }
                c => text.push(c),
            }
        }
        i = end;
        if quoted {
            out.push(Err(AnnotationError {
                message: "unterminated `\"`".into(),
                span: start..end,
            }));
        } else if depth > 0 {
            out.push(Err(AnnotationError {
                message: "unclosed `(`".into(),
                span: start..end,
            }));
        } else {
            out.push(Ok((text, start..end)));
        }
    }
    out
}

fn apply(a: &mut Annotations, tok: &str) -> Result<(), String> {
    if tok == "cont" {
        a.cont = true;
        return Ok(());
    }
    if let Some(rest) = tok.strip_prefix("ignore") {
        let reason = rest
            .strip_prefix('(')
            .and_then(|r| r.strip_suffix(')'))
            .map(str::trim)
            .ok_or_else(|| {
                "`ignore` needs a reason: `ignore(why this block is not verified)`".to_string()
            })?;
        if reason.is_empty() {
            return Err("`ignore()` needs a non-empty reason".into());
        }
        a.ignore = Some(reason.to_string());
        return Ok(());
    }
    let Some((key, value)) = tok.split_once('=') else {
        return Err(format!(
            "unknown annotation `{tok}` (known: {})",
            KNOWN_KEYS.join(", ")
        ));
    };
    if value.is_empty() {
        return Err(format!("`{key}=` needs a value"));
    }
    match key {
        "expect" => a.expect = Some(parse_expect(value)?),
        "requires" => {
            for part in value.split(',') {
                a.requires.push(match part {
                    "gpu" => Requirement::Gpu,
                    "torch" => Requirement::Torch,
                    "multi-gpu" => Requirement::MultiGpu,
                    "whole-gpu" => Requirement::WholeGpu,
                    other => {
                        return Err(format!(
                            "unknown requirement `{other}` (known: gpu, torch, multi-gpu, whole-gpu)"
                        ));
                    }
                });
            }
        }
        "timeout" => a.timeout = Some(parse_duration(value)?),
        "harness" => {
            if !value
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
            {
                return Err(format!("harness name `{value}` must be lower-case kebab"));
            }
            a.harness = Some(value.to_string());
        }
        other => {
            return Err(format!(
                "unknown annotation key `{other}` (known: {})",
                KNOWN_KEYS.join(", ")
            ));
        }
    }
    Ok(())
}

/// Parses an `expect=` value.
///
/// ```
/// use errata_model::snippet::{parse_expect, Expect};
/// assert_eq!(parse_expect("cuda:cudaErrorIllegalAddress"), Ok(Expect::Cuda("cudaErrorIllegalAddress".into())));
/// assert!(parse_expect("segfault").is_err());
/// ```
pub fn parse_expect(value: &str) -> Result<Expect, String> {
    let (kind, arg) = match value.split_once(':') {
        Some((k, a)) => (k, Some(a)),
        None => (value, None),
    };
    let nonempty = |a: Option<&str>| a.filter(|s| !s.is_empty()).map(str::to_string);
    match (kind, arg) {
        ("ok", None) => Ok(Expect::Ok),
        ("compile-error", arg) => {
            let re = nonempty(arg);
            if let Some(re) = &re {
                regex_check(re)?;
            }
            Ok(Expect::CompileError(re))
        }
        ("cuda", Some(name))
            if name.starts_with("cuda")
                && name[4..].chars().all(|c| c.is_ascii_alphanumeric())
                && name.len() > 4 =>
        {
            Ok(Expect::Cuda(name.to_string()))
        }
        ("cuda", _) => Err(
            "`expect=cuda:` needs a cudaError_t name, e.g. `cuda:cudaErrorIllegalAddress`".into(),
        ),
        ("py", Some(rest)) => {
            let (exception, message) = match rest.split_once(':') {
                Some((e, m)) => (e, nonempty(Some(m))),
                None => (rest, None),
            };
            if exception.is_empty()
                || !exception
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            {
                return Err(format!("`{exception}` is not a Python exception type name"));
            }
            if let Some(m) = &message {
                regex_check(m)?;
            }
            Ok(Expect::Py {
                exception: exception.to_string(),
                message,
            })
        }
        ("sanitizer", Some("memcheck")) => Ok(Expect::Sanitizer(SanitizerTool::Memcheck)),
        ("sanitizer", Some("racecheck")) => Ok(Expect::Sanitizer(SanitizerTool::Racecheck)),
        ("sanitizer", Some("initcheck")) => Ok(Expect::Sanitizer(SanitizerTool::Initcheck)),
        ("sanitizer", Some("leakcheck")) => Ok(Expect::Sanitizer(SanitizerTool::Leakcheck)),
        ("sanitizer", _) => Err(
            "`expect=sanitizer:` takes `memcheck`, `racecheck`, `initcheck` or `leakcheck`".into(),
        ),
        ("exit", Some(n)) => n
            .parse()
            .map(Expect::Exit)
            .map_err(|_| format!("`exit:{n}`: not an integer")),
        _ => Err(format!(
            "unknown expectation `{value}` (known: ok, compile-error[:regex], cuda:<name>, py:<Exception>[:regex], sanitizer:<memcheck|racecheck|initcheck|leakcheck>, exit:<n>)"
        )),
    }
}

/// Only checks the regex is balanced enough to be worth compiling later; the regex crate
/// is not a dependency of the model, so full validation happens in the snippet runner.
fn regex_check(re: &str) -> Result<(), String> {
    let mut depth = 0i64;
    let mut escaped = false;
    for c in re.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return Err(format!("unbalanced `)` in regex `{re}`"));
        }
    }
    if depth != 0 {
        return Err(format!("unbalanced `(` in regex `{re}`"));
    }
    Ok(())
}

fn parse_duration(value: &str) -> Result<Duration, String> {
    let split = value
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(value.len());
    let (num, unit) = value.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`timeout={value}`: expected e.g. `30s`, `500ms`, `2m`"))?;
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" | "" => Duration::from_secs(n),
        // Checked: `timeout=999999999999999999m` overflowed (a panic in debug builds, a
        // wrapped, wrong timeout in release; found by fuzzing).
        "m" => Duration::from_secs(
            n.checked_mul(60)
                .ok_or_else(|| format!("`timeout={value}` is too long"))?,
        ),
        _ => return Err(format!("`timeout={value}`: unit must be ms, s or m")),
    };
    if d.is_zero() {
        return Err("`timeout` must be positive".into());
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_too_long_to_count_is_an_error() {
        let info = FenceInfo::parse("cuda timeout=6953871881542012471m");
        assert_eq!(info.annotations.timeout, None);
        assert_eq!(info.errors.len(), 1, "{:?}", info.errors);
        assert!(info.errors[0].message.contains("too long"));
        assert_eq!(
            parse_duration("307445734561825860m"),
            Ok(Duration::from_secs(307445734561825860 * 60))
        );
    }

    #[test]
    fn whitespace_beyond_ascii_separates_tokens() {
        // A vertical tab and an ideographic space: whitespace to `char::is_whitespace`
        // but not to `u8::is_ascii_whitespace`. This never returned (fuzz regression).
        let info = FenceInfo::parse("cuda\u{b}expect=ok\u{3000}timeout=5s");
        assert_eq!(info.lang_raw, "cuda");
        assert_eq!(info.annotations.expect, Some(Expect::Ok));
        assert_eq!(info.annotations.timeout, Some(Duration::from_secs(5)));
        assert!(info.errors.is_empty(), "{:?}", info.errors);
        assert_eq!(FenceInfo::parse("\u{b}"), FenceInfo::parse(""));
    }

    #[test]
    fn every_sanitizer_tool_round_trips_and_others_are_refused() {
        for tool in ["memcheck", "racecheck", "initcheck", "leakcheck"] {
            let value = format!("sanitizer:{tool}");
            let expect = parse_expect(&value).expect("a known tool");
            assert_eq!(expect.to_string(), value);
        }
        let err = parse_expect("sanitizer:synccheck").expect_err("not offered");
        assert!(err.contains("leakcheck"), "{err}");
    }

    #[test]
    fn full_info_string() {
        let info =
            FenceInfo::parse("cuda expect=cuda:cudaErrorIllegalAddress requires=gpu timeout=30s");
        assert_eq!(info.lang, Lang::Cuda);
        assert!(info.errors.is_empty(), "{:?}", info.errors);
        assert_eq!(
            info.annotations.expect,
            Some(Expect::Cuda("cudaErrorIllegalAddress".into()))
        );
        assert_eq!(info.annotations.requires, vec![Requirement::Gpu]);
        assert_eq!(info.annotations.timeout, Some(Duration::from_secs(30)));
    }

    #[test]
    fn quoted_values_and_ignore_reasons_keep_spaces() {
        let info = FenceInfo::parse(
            r#"python expect="py:RuntimeError:same device" ignore(needs two GPUs)"#,
        );
        assert!(info.errors.is_empty(), "{:?}", info.errors);
        assert_eq!(
            info.annotations.expect,
            Some(Expect::Py {
                exception: "RuntimeError".into(),
                message: Some("same device".into())
            })
        );
        assert_eq!(info.annotations.ignore.as_deref(), Some("needs two GPUs"));
    }

    #[test]
    fn unknown_and_malformed_keys_are_errors_with_spans() {
        let info = FenceInfo::parse("cuda expct=ok ignore timeout=fast harness=Main");
        let msgs: Vec<_> = info
            .errors
            .iter()
            .map(|e| (e.message.as_str(), e.span.clone()))
            .collect();
        assert_eq!(msgs.len(), 4, "{msgs:?}");
        assert!(msgs[0].0.contains("unknown annotation key `expct`"));
        assert_eq!(msgs[0].1, 5..13);
        assert!(msgs[1].0.contains("needs a reason"));
    }

    #[test]
    fn no_language() {
        let info = FenceInfo::parse("");
        assert_eq!(info.lang_raw, "");
        let info = FenceInfo::parse("expect=ok");
        assert_eq!(info.lang_raw, "");
        assert_eq!(info.annotations.expect, Some(Expect::Ok));
    }
}
