//! The static tier: no GPU, no compiler. Python snippets are parsed by `python3`'s own
//! `ast` (never imported or run) and their `torch.…` chains resolved against the torch
//! name list; shell snippets are linted by `shellcheck` and searched for retired tools.

use std::process::Command;

use errata_model::snippet::{Expect, Lang};
use regex::Regex;
use serde::Deserialize;

use crate::exec::{self, Limits};
use crate::extract::{Program, Snippet};
use crate::outcome::Outcome;
use crate::torch_api::{Resolution, TorchApi};

/// The static helper script, embedded.
const PYCHECK: &str = include_str!("../tools/pycheck.py");

/// A static-tier judgement: `None` outcome means "nothing wrong found".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StaticFinding {
    /// What is wrong.
    pub outcome: Outcome,
    /// Why.
    pub detail: String,
}

/// A tool that was renamed or no longer works on current GPUs.
#[derive(Debug, Clone, Copy)]
pub struct RetiredTool {
    /// The command as written in a snippet.
    pub name: &'static str,
    /// What to say instead.
    pub advice: &'static str,
}

/// Retired tools, each with its primary source.
pub const RETIRED_TOOLS: &[RetiredTool] = &[
    // Nsight Compute 2020.1 release notes: the CLI and UI commands were renamed
    // (nv-nsight-cu-cli -> ncu, nv-nsight-cu -> ncu-ui); old names kept only for
    // backward compatibility and absent from current toolkits.
    RetiredTool {
        name: "nv-nsight-cu-cli",
        advice: "renamed `ncu` (Nsight Compute 2020.1)",
    },
    RetiredTool {
        name: "nv-nsight-cu",
        advice: "renamed `ncu-ui` (Nsight Compute 2020.1)",
    },
    // nvprof's own warning: "nvprof is not supported on devices with compute capability
    // 8.0 and higher. Use NVIDIA Nsight Systems for GPU tracing and CPU sampling and
    // NVIDIA Nsight Compute for GPU profiling."
    RetiredTool {
        name: "nvprof",
        advice: "not supported on compute capability 8.0 and higher: use `nsys` (tracing) or `ncu` (kernel profiling)",
    },
];

/// Python: parse and API-check every program at once (one `python3` process).
///
/// Returns one result per program, in order: `Ok(None)` clean, `Ok(Some(finding))`, or
/// `Err` when the checker itself could not run (infra-error) or passed `limits`.
pub fn check_python(
    programs: &[&Program],
    snippets: &[Snippet],
    api: &TorchApi,
    limits: Limits,
) -> Vec<Result<Option<StaticFinding>, String>> {
    if programs.is_empty() {
        return Vec::new();
    }
    let items: Vec<serde_json::Value> = programs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            serde_json::json!({
                "id": i.to_string(),
                "code": p.code,
                "torch_implicit": true,
            })
        })
        .collect();
    let results = match run_pycheck(&serde_json::Value::Array(items), limits) {
        Ok(r) => r,
        Err(e) => return programs.iter().map(|_| Err(e.clone())).collect(),
    };
    programs
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let r = results
                .iter()
                .find(|r| r.id == i.to_string())
                .ok_or_else(|| "python static checker returned no result".to_string())?;
            let head = &snippets[p.parts[0]];
            Ok(judge_python(p, head, r, api))
        })
        .collect()
}

#[derive(Debug, Deserialize)]
struct PyResult {
    id: String,
    syntax_error: Option<PySyntaxError>,
    chains: Vec<PyChain>,
}

#[derive(Debug, Deserialize)]
struct PySyntaxError {
    line: usize,
    col: usize,
    msg: String,
}

#[derive(Debug, Deserialize)]
struct PyChain {
    chain: String,
    line: usize,
}

fn run_pycheck(input: &serde_json::Value, limits: Limits) -> Result<Vec<PyResult>, String> {
    let body = input.to_string();
    let mut cmd = Command::new("python3");
    cmd.args(["-c", PYCHECK]);
    let out = exec::run(
        "python3 (static tier)",
        &mut cmd,
        Some(body.as_bytes()),
        None,
        limits,
    )?;
    if out.timed_out {
        return Err(format!(
            "python static checker ran past {}s",
            limits.timeout.as_secs_f32()
        ));
    }
    if out.truncated {
        return Err(format!(
            "python static checker wrote more than {} bytes",
            limits.output_cap
        ));
    }
    if !out.status.success() {
        return Err(format!(
            "python static checker failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    serde_json::from_slice(&out.stdout).map_err(|e| format!("python static checker output: {e}"))
}

/// The first line of a block that is a traceback or `SomeError: message` line.
fn looks_like_error_output(code: &str) -> bool {
    static RE: std::sync::OnceLock<Option<Regex>> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(
            r"^(Traceback \(most recent call last\):|(?:[A-Za-z_][\w]*\.)*[A-Z]\w*(?:Error|Exception|Warning)(?::\s|$))",
        )
        .ok()
    });
    let first = code.lines().map(str::trim).find(|l| !l.is_empty());
    matches!((re, first), (Some(re), Some(line)) if re.is_match(line))
}

fn judge_python(
    p: &Program,
    head: &Snippet,
    r: &PyResult,
    api: &TorchApi,
) -> Option<StaticFinding> {
    let error_text = looks_like_error_output(&p.code);
    if let Some(e) = &r.syntax_error {
        let line = head.line + e.line.max(1);
        let mut detail = format!("Python syntax error at line {line}:{}: {}", e.col, e.msg);
        if error_text {
            detail = format!(
                "this block is error output, not Python code (fence it as ```text): {detail}"
            );
        }
        return Some(StaticFinding {
            outcome: Outcome::CompileError,
            detail,
        });
    }
    if error_text {
        return Some(StaticFinding {
            outcome: Outcome::CompileError,
            detail: "this block is error output, not Python code: fence it as ```text".into(),
        });
    }
    let mut missing = Vec::new();
    for c in &r.chains {
        if let Resolution::Missing { owner, attr } = api.resolve(&c.chain) {
            missing.push(format!(
                "line {}: `{}` does not exist in torch {} (`{owner}` has no attribute `{attr}`)",
                head.line + c.line,
                c.chain,
                api.version()
            ));
        }
    }
    if missing.is_empty() {
        return None;
    }
    // Calling a missing API raises AttributeError: a snippet may show exactly that.
    if let Some(Expect::Py { exception, .. }) = &p.annotations.expect
        && exception == "AttributeError"
    {
        return None;
    }
    Some(StaticFinding {
        outcome: Outcome::ApiMissing,
        detail: missing.join("; "),
    })
}

/// Shell: retired tools, then `shellcheck` within `limits` (skipped for `console`
/// transcripts).
pub fn check_shell(
    p: &Program,
    head: &Snippet,
    limits: Limits,
) -> Result<Option<StaticFinding>, String> {
    if let Some(f) = retired_tools(p, head) {
        return Ok(Some(f));
    }
    if head.info.split_whitespace().next() == Some("console") {
        return Ok(None);
    }
    shellcheck(&p.code, head.line, limits)
}

/// Retired tools used as commands in a shell program (also checked on ignored blocks).
pub fn retired_tools(p: &Program, head: &Snippet) -> Option<StaticFinding> {
    let mut retired = Vec::new();
    for (n, line) in p.code.lines().enumerate() {
        for word in shell_words(line) {
            if let Some(t) = RETIRED_TOOLS.iter().find(|t| t.name == word) {
                retired.push(format!(
                    "line {}: `{}` {}",
                    head.line + 1 + n,
                    t.name,
                    t.advice
                ));
            }
        }
    }
    if retired.is_empty() {
        return None;
    }
    retired.dedup();
    Some(StaticFinding {
        outcome: Outcome::ApiMissing,
        detail: retired.join("; "),
    })
}

/// Command words of a line: the first word and any word after `|`, `;`, `&&`, `||`,
/// `sudo`, `env X=…`, `$(`, `` ` `` (good enough for documentation snippets).
fn shell_words(line: &str) -> Vec<&str> {
    let code = line.split('#').next().unwrap_or("");
    let mut out = Vec::new();
    let mut command_position = true;
    for tok in code.split(|c: char| c.is_whitespace() || c == '(' || c == '`') {
        if tok.is_empty() {
            continue;
        }
        if matches!(
            tok,
            "|" | ";" | "&&" | "||" | "$" | "sudo" | "exec" | "time" | "watch"
        ) {
            command_position = true;
            continue;
        }
        if command_position {
            if tok.contains('=') && !tok.starts_with('-') {
                continue; // VAR=value before the command
            }
            out.push(tok.trim_end_matches(';'));
            command_position = false;
        }
        if tok.ends_with(';') || tok.ends_with('|') {
            command_position = true;
        }
    }
    out
}

fn shellcheck(
    code: &str,
    fence_line: usize,
    limits: Limits,
) -> Result<Option<StaticFinding>, String> {
    let mut cmd = Command::new("shellcheck");
    cmd.args(["--shell=bash", "--severity=warning", "--format=json1", "-"]);
    let out = exec::run("shellcheck", &mut cmd, Some(code.as_bytes()), None, limits)
        .map_err(|e| format!("{e} (Debian package `shellcheck`)"))?;
    if out.timed_out || out.truncated {
        return Err(format!(
            "shellcheck ran past {}s or wrote more than {} bytes",
            limits.timeout.as_secs_f32(),
            limits.output_cap
        ));
    }
    // Exit 0: clean; 1: findings; anything else: shellcheck itself failed.
    match out.status.code() {
        Some(0) => return Ok(None),
        Some(1) => {}
        _ => {
            return Err(format!(
                "shellcheck failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
    }
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("shellcheck output: {e}"))?;
    let comments = v["comments"].as_array().cloned().unwrap_or_default();
    let msgs: Vec<String> = comments
        .iter()
        .map(|c| {
            format!(
                "line {}: SC{} ({}): {}",
                fence_line + c["line"].as_u64().unwrap_or(0) as usize,
                c["code"].as_u64().unwrap_or(0),
                c["level"].as_str().unwrap_or("?"),
                c["message"].as_str().unwrap_or("")
            )
        })
        .collect();
    if msgs.is_empty() {
        return Ok(None);
    }
    Ok(Some(StaticFinding {
        outcome: Outcome::CompileError,
        detail: format!("shellcheck: {}", msgs.join("; ")),
    }))
}

/// Whether a language has a static check of its own (CUDA needs the compile tier).
pub fn has_static_check(lang: &Lang) -> bool {
    matches!(lang, Lang::Python | Lang::Shell)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_output_is_recognised() {
        assert!(looks_like_error_output(
            "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB"
        ));
        assert!(looks_like_error_output(
            "\nTraceback (most recent call last):\n  File \"x.py\", line 1\n"
        ));
        assert!(looks_like_error_output(
            "torch.OutOfMemoryError: CUDA out of memory."
        ));
        assert!(!looks_like_error_output("import torch\nx = 1\n"));
        assert!(!looks_like_error_output("err = RuntimeError('x')\n"));
    }

    #[test]
    fn command_words() {
        assert_eq!(
            shell_words("nv-nsight-cu-cli --metrics x ./a"),
            ["nv-nsight-cu-cli"]
        );
        assert_eq!(
            shell_words("CUDA_LAUNCH_BLOCKING=1 python my.py | grep x"),
            ["python", "grep"]
        );
        assert_eq!(shell_words("sudo nvprof ./a # nv-nsight-cu"), ["nvprof"]);
        assert!(shell_words("echo nvprof").iter().all(|w| *w != "nvprof"));
    }
}
