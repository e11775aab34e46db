//! The integrations of issue 14, exercised on scratch repositories with the real binary:
//!
//! - `action.yml`: the `run:` script of its check step, inputs substituted, runs as bash
//!   with this build of `errata` on PATH (in place of the cached `cargo install`);
//! - `.pre-commit-hooks.yaml`: the real `pre-commit try-repo` on a scratch git repository;
//! - `.github/workflows/*.yml` and `action.yml`: `actionlint` finds nothing.
//!
//! Needs `pre-commit` and `actionlint` (`python3 -m pip install --user -r
//! .ci/requirements-tools.txt -r .ci/requirements-actionlint.txt`, as `.ci/run` does), or
//! their paths in `ERRATA_PRE_COMMIT` / `ERRATA_ACTIONLINT` (without GitHub access,
//! `ERRATA_ACTIONLINT=.ci/actionlint-wasm`, see there). Without them the tests FAIL, so CI
//! cannot pass by accident; `ERRATA_SKIP_TOOLS=1` skips them on a machine without them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;
use common::{copy_dir, data_copy, errata, git, repo};

// ---------------------------------------------------------------------------------------
// Scratch knowledge bases

/// A copy of `data/` with no errors: entries with errors (work in progress in the
/// working tree) are removed until the check is clean, and one entry is made stale so
/// that at least one warning remains (for `deny-warnings`).
fn clean_kb() -> tempfile::TempDir {
    let dir = data_copy();
    for _ in 0..20 {
        let doc = check_json(dir.path());
        if doc["summary"]["errors"] == 0 {
            break;
        }
        for d in doc["diagnostics"].as_array().unwrap() {
            if d["severity"] == "error" {
                let _ = std::fs::remove_file(dir.path().join(d["file"].as_str().unwrap()));
            }
        }
    }
    let doc = check_json(dir.path());
    assert_eq!(doc["summary"]["errors"], 0, "no clean copy of data/: {doc}");
    if doc["summary"]["warnings"] == 0 {
        let entry = first_entry(dir.path());
        let text = std::fs::read_to_string(&entry).unwrap();
        let mut value: serde_json::Value = serde_json::from_str(&text).unwrap();
        for key in ["first_seen", "last_confirmed", "last_updated"] {
            value[key] = "2020-01-01".into();
        }
        std::fs::write(&entry, serde_json::to_string_pretty(&value).unwrap() + "\n").unwrap();
        let doc = check_json(dir.path());
        assert_eq!(doc["summary"]["errors"], 0, "{doc}");
        assert_ne!(doc["summary"]["warnings"], 0, "no warning to deny: {doc}");
    }
    dir
}

fn check_json(dir: &Path) -> serde_json::Value {
    let run = errata(dir, &["check", "data", "--format", "json"]);
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.all()))
}

/// The first entry file (sorted) of the knowledge base in `dir/data`.
fn first_entry(dir: &Path) -> PathBuf {
    let cuda = dir.join("data/signatures/cuda");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&cuda)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files.into_iter().next().expect("an entry")
}

/// Breaks `file` so that `errata check` reports an error (`json-syntax`).
fn break_entry(file: &Path) {
    std::fs::write(file, "{ \"id\": \"cuda/broken\", \n").unwrap();
}

fn path_with_errata() -> std::ffi::OsString {
    let bin = Path::new(env!("CARGO_BIN_EXE_errata")).parent().unwrap();
    let mut paths = vec![bin.to_path_buf()];
    paths.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(paths).unwrap()
}

// ---------------------------------------------------------------------------------------
// action.yml

/// A step of a composite action: its id, `env:` and `run:` script.
#[derive(Debug, Default)]
struct Step {
    id: String,
    env: Vec<(String, String)>,
    run: String,
}

fn indent(line: &str) -> usize {
    line.len() - line.trim_start().len()
}

fn unquote(value: &str) -> String {
    let v = value.trim();
    if v.len() >= 2
        && ((v.starts_with('"') && v.ends_with('"')) || (v.starts_with('\'') && v.ends_with('\'')))
    {
        v[1..v.len() - 1].to_string()
    } else {
        v.to_string()
    }
}

/// The inputs' defaults and the steps of `action.yml`. A small reader for the block
/// style this file is written in (mappings, `- ` step items, `key: |` literal blocks);
/// anything else in a step is ignored.
fn parse_action(text: &str) -> (BTreeMap<String, String>, Vec<Step>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut defaults = BTreeMap::new();
    let mut steps = Vec::new();
    let mut i = 0;
    let mut section = "";
    while i < lines.len() {
        let line = lines[i];
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            i += 1;
            continue;
        }
        if indent(line) == 0 {
            section = if trimmed == "inputs:" {
                "inputs"
            } else if trimmed == "runs:" {
                "runs"
            } else {
                ""
            };
            i += 1;
            continue;
        }
        if section == "inputs" && indent(line) == 2 && trimmed.ends_with(':') {
            let name = trimmed.trim_end_matches(':').to_string();
            i += 1;
            while i < lines.len() && (lines[i].trim().is_empty() || indent(lines[i]) > 2) {
                if let Some(v) = lines[i].trim().strip_prefix("default:") {
                    defaults.insert(name.clone(), unquote(v));
                }
                i += 1;
            }
            continue;
        }
        if section == "runs" && trimmed.starts_with("- ") {
            // One step: every line up to the next item at this indentation.
            let item = indent(line);
            let key_indent = item + 2;
            let mut body = vec![format!("{}{}", " ".repeat(key_indent), &trimmed[2..])];
            i += 1;
            while i < lines.len() && (lines[i].trim().is_empty() || indent(lines[i]) > item) {
                body.push(lines[i].to_string());
                i += 1;
            }
            steps.push(parse_step(&body, key_indent));
            continue;
        }
        i += 1;
    }
    (defaults, steps)
}

fn parse_step(body: &[String], key_indent: usize) -> Step {
    let mut step = Step::default();
    let mut j = 0;
    while j < body.len() {
        let line = &body[j];
        if line.trim().is_empty() || indent(line) != key_indent {
            j += 1;
            continue;
        }
        let (key, value) = line.trim().split_once(':').unwrap_or((line.trim(), ""));
        let value = value.trim();
        j += 1;
        match key {
            "id" => step.id = unquote(value),
            "env" => {
                while j < body.len() && (body[j].trim().is_empty() || indent(&body[j]) > key_indent)
                {
                    if let Some((k, v)) = body[j].trim().split_once(':') {
                        step.env.push((k.trim().to_string(), unquote(v)));
                    }
                    j += 1;
                }
            }
            "run" if value == "|" => {
                let mut block = Vec::new();
                while j < body.len() && (body[j].trim().is_empty() || indent(&body[j]) > key_indent)
                {
                    block.push(body[j].as_str());
                    j += 1;
                }
                let strip = block
                    .iter()
                    .filter(|l| !l.trim().is_empty())
                    .map(|l| indent(l))
                    .min()
                    .unwrap_or(0);
                step.run = block
                    .iter()
                    .map(|l| l.get(strip..).unwrap_or("").to_string() + "\n")
                    .collect();
            }
            "run" => step.run = unquote(value) + "\n",
            _ => {}
        }
    }
    step
}

/// Replaces `${{ inputs.NAME }}` with the input's value.
fn substitute(value: &str, inputs: &BTreeMap<String, String>) -> String {
    let mut out = value.to_string();
    for (name, v) in inputs {
        for form in [
            format!("${{{{ inputs.{name} }}}}"),
            format!("${{{{inputs.{name}}}}}"),
        ] {
            out = out.replace(&form, v);
        }
    }
    assert!(
        !out.contains("${{ inputs."),
        "an input without a value in {value:?}"
    );
    out
}

fn action_steps() -> (BTreeMap<String, String>, Vec<Step>) {
    let text = std::fs::read_to_string(repo().join("action.yml")).expect("action.yml");
    parse_action(&text)
}

/// The step `id` of `action.yml` as a bash script: strict mode, its `env:` exported with
/// `inputs` substituted, then `extra` exported (the runner's own variables), then its
/// `run`.
fn step_script(
    steps: &[Step],
    id: &str,
    inputs: &BTreeMap<String, String>,
    extra: &[(&str, &str)],
) -> String {
    let step = steps
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("a step with id: {id} in action.yml"));
    let mut script = String::from("set -euo pipefail\n");
    for (k, v) in &step.env {
        let v = substitute(v, inputs);
        script += &format!("export {k}='{}'\n", v.replace('\'', r"'\''"));
    }
    for (k, v) in extra {
        script += &format!("export {k}='{v}'\n");
    }
    script + &step.run
}

/// The check step of `action.yml` as a bash script, `overrides` on top of the inputs'
/// defaults, run in `dir` with this build of errata on PATH.
fn run_action(dir: &Path, overrides: &[(&str, &str)]) -> Output {
    let (mut inputs, steps) = action_steps();
    for (k, v) in overrides {
        assert!(inputs.contains_key(*k), "action.yml has no input {k}");
        inputs.insert(k.to_string(), v.to_string());
    }
    let script = step_script(&steps, "check", &inputs, &[]);
    let home = tempfile::tempdir().unwrap();
    Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(dir)
        .env("PATH", path_with_errata())
        .env("HOME", home.path())
        .env("GITHUB_OUTPUT", home.path().join("output"))
        .output()
        .expect("bash")
}

fn out(o: &Output) -> String {
    format!(
        "status {:?}\n--- stdout\n{}--- stderr\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn action_yml_declares_its_inputs_and_steps() {
    let (defaults, steps) = action_steps();
    assert_eq!(defaults.get("data-dir").map(String::as_str), Some("data"));
    assert_eq!(defaults.get("format").map(String::as_str), Some("github"));
    assert_eq!(
        defaults.get("deny-warnings").map(String::as_str),
        Some("false")
    );
    assert_eq!(defaults.get("version").map(String::as_str), Some(""));
    let ids: Vec<&str> = steps.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["source", "download", "cache", "install", "check"]);
    let install = &steps[3].run;
    assert!(install.contains("cargo install --locked"), "{install}");
    assert!(install.contains("crates/errata"), "{install}");
}

/// The download step of `action.yml` as a bash script, with the runner's variables
/// given here (`github.*` values replaced by `env`), in `home`. Returns its output,
/// what it wrote to GITHUB_OUTPUT and to GITHUB_PATH.
fn run_download(home: &Path, env: &[(&str, &str)]) -> (Output, String, String) {
    let (inputs, steps) = action_steps();
    let script = step_script(&steps, "download", &inputs, env);
    let (output, path) = (home.join("output"), home.join("path"));
    let _ = std::fs::remove_file(&output);
    let _ = std::fs::remove_file(&path);
    let o = Command::new("bash")
        .arg("-c")
        .arg(&script)
        .current_dir(home)
        .env("HOME", home)
        .env("RUNNER_TEMP", home.join("runner"))
        .env("GITHUB_OUTPUT", &output)
        .env("GITHUB_PATH", &path)
        .output()
        .expect("bash");
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    (o, read(&output), read(&path))
}

/// The action downloads a release's binary for the runner and checks its SHA-256,
/// tested against a local release directory laid out like GitHub's
/// (`<base>/<tag>/errata-<tag>-<target>.tar.gz` and `.sha256`): a match installs it, a
/// mismatch fails the step, and a tag or platform with no binary falls back to building.
#[test]
#[cfg(all(target_os = "linux", target_arch = "x86_64"))]
fn action_downloads_a_release_binary_and_checks_its_checksum() {
    let home = tempfile::tempdir().unwrap();
    let releases = home.path().join("releases");
    let name = "errata-v9.9.9-x86_64-unknown-linux-gnu";
    let pkg = home.path().join("pkg").join(name);
    std::fs::create_dir_all(&pkg).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_errata"), pkg.join("errata")).unwrap();
    std::fs::create_dir_all(releases.join("v9.9.9")).unwrap();
    let asset = releases.join("v9.9.9").join(format!("{name}.tar.gz"));
    let tar = Command::new("tar")
        .arg("-C")
        .arg(home.path().join("pkg"))
        .arg("-czf")
        .arg(&asset)
        .arg(name)
        .status()
        .unwrap();
    assert!(tar.success());
    let sum = Command::new("sha256sum").arg(&asset).output().unwrap();
    let sum_file = releases
        .join("v9.9.9")
        .join(format!("{name}.tar.gz.sha256"));
    std::fs::write(&sum_file, &sum.stdout).unwrap();
    let base = format!("file://{}", releases.display());
    let runner = [
        ("RUNNER_OS", "Linux"),
        ("RUNNER_ARCH", "X64"),
        ("ERRATA_RELEASES", base.as_str()),
    ];

    let mut env = runner.to_vec();
    env.push(("ACTION_REF", "v9.9.9"));
    let (o, output, path) = run_download(home.path(), &env);
    assert!(o.status.success(), "{}", out(&o));
    assert_eq!(output.trim(), "ok=true", "{}", out(&o));
    let installed = Path::new(path.trim()).join("errata");
    let version = Command::new(&installed).arg("--version").output().unwrap();
    assert!(
        String::from_utf8_lossy(&version.stdout).starts_with("errata "),
        "{installed:?}"
    );

    // The `version` input names the tag as well.
    let mut env = runner.to_vec();
    env.extend([("ACTION_REF", "main"), ("VERSION", "v9.9.9")]);
    let (o, output, _) = run_download(home.path(), &env);
    assert_eq!(output.trim(), "ok=true", "{}", out(&o));

    // A branch, a release without this platform, another platform: build instead.
    for (os, arch, tag) in [
        ("Linux", "X64", "main"),
        ("Linux", "X64", "v9.9.8"),
        ("Linux", "S390X", "v9.9.9"),
    ] {
        let env = [
            ("RUNNER_OS", os),
            ("RUNNER_ARCH", arch),
            ("ERRATA_RELEASES", base.as_str()),
            ("ACTION_REF", tag),
        ];
        let (o, output, path) = run_download(home.path(), &env);
        assert!(o.status.success(), "{tag} {arch}: {}", out(&o));
        assert_eq!(output.trim(), "ok=false", "{tag} {arch}: {}", out(&o));
        assert!(path.is_empty());
    }

    // A binary that is not what the release published fails the step.
    std::fs::write(&sum_file, format!("{}  {name}.tar.gz\n", "0".repeat(64))).unwrap();
    let mut env = runner.to_vec();
    env.push(("ACTION_REF", "v9.9.9"));
    let (o, output, path) = run_download(home.path(), &env);
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("::error::"),
        "{}",
        out(&o)
    );
    assert!(output.is_empty() && path.is_empty());
}

#[test]
fn action_passes_on_good_data() {
    let dir = clean_kb();
    let o = run_action(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    // Warnings are reported as GitHub annotations, and are not fatal by default.
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("::warning "), "{}", out(&o));
    assert!(!stdout.contains("::error "), "{}", out(&o));
}

#[test]
fn action_fails_on_a_broken_entry() {
    let dir = clean_kb();
    let entry = first_entry(dir.path());
    break_entry(&entry);
    let o = run_action(dir.path(), &[]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let name = entry.file_name().unwrap().to_str().unwrap();
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("::error ") && l.contains(name)),
        "{}",
        out(&o)
    );
}

#[test]
fn action_honours_deny_warnings_format_and_data_dir() {
    let dir = clean_kb();
    let o = run_action(dir.path(), &[("deny-warnings", "true")]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let o = run_action(dir.path(), &[("deny-warnings", "false")]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let o = run_action(dir.path(), &[("deny-warnings", "maybe")]);
    assert_eq!(o.status.code(), Some(2), "{}", out(&o));

    // Another data directory, and another format.
    std::fs::rename(dir.path().join("data"), dir.path().join("kb")).unwrap();
    let o = run_action(dir.path(), &[("data-dir", "kb"), ("format", "json")]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    assert_eq!(doc["summary"]["errors"], 0);
    let o = run_action(dir.path(), &[]);
    assert_eq!(
        o.status.code(),
        Some(2),
        "no data/ is a usage error: {}",
        out(&o)
    );
}

// ---------------------------------------------------------------------------------------
// Tools: pre-commit and actionlint

fn skip_tools() -> bool {
    std::env::var("ERRATA_SKIP_TOOLS").is_ok_and(|v| v == "1")
}

/// The command that runs `name`: `$ENV_VAR`, `name` on PATH, `~/.local/bin/name`, or
/// `python3 -m module`.
fn find_tool(env_var: &str, name: &str, module: Option<&str>) -> Option<Vec<String>> {
    if let Ok(p) = std::env::var(env_var) {
        return Some(vec![p]);
    }
    let works = |cmd: &[String]| {
        Command::new(&cmd[0])
            .args(&cmd[1..])
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let mut candidates = vec![vec![name.to_string()]];
    if let Some(home) = std::env::var_os("HOME") {
        let local = Path::new(&home).join(".local/bin").join(name);
        candidates.push(vec![local.to_string_lossy().into_owned()]);
    }
    if let Some(m) = module {
        candidates.push(vec!["python3".into(), "-m".into(), m.into()]);
    }
    candidates.into_iter().find(|c| works(c))
}

fn require_tool(env_var: &str, name: &str, module: Option<&str>) -> Option<Vec<String>> {
    match find_tool(env_var, name, module) {
        Some(cmd) => Some(cmd),
        None if skip_tools() => {
            eprintln!("ERRATA_SKIP_TOOLS=1: {name} not found, test skipped");
            None
        }
        None => panic!(
            "{name} is required for this test: python3 -m pip install --user \
             -r .ci/requirements-tools.txt -r .ci/requirements-actionlint.txt (as .ci/run \
             does), or set {env_var} to its path (actionlint without GitHub access: \
             .ci/actionlint-wasm); set ERRATA_SKIP_TOOLS=1 to skip"
        ),
    }
}

/// A git repository holding only this repository's `.pre-commit-hooks.yaml`: the
/// `-system` hooks tested here need no source to install (the self-installing ones are
/// tested on the wheel, in crates/errata-py/tests).
fn hooks_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join(".pre-commit-hooks.yaml"),
        dir.path().join(".pre-commit-hooks.yaml"),
    )
    .expect(".pre-commit-hooks.yaml");
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "hooks"]);
    dir
}

struct PreCommit {
    cmd: Vec<String>,
    hooks: tempfile::TempDir,
    home: tempfile::TempDir,
}

impl PreCommit {
    /// `pre-commit try-repo <hooks> <hook> --files <files>` in `dir`.
    fn try_repo(&self, dir: &Path, hook: &str, files: &[&str]) -> Output {
        Command::new(&self.cmd[0])
            .args(&self.cmd[1..])
            .arg("try-repo")
            .arg(self.hooks.path())
            .arg(hook)
            .arg("--files")
            .args(files)
            .current_dir(dir)
            .env("PATH", path_with_errata())
            .env("PRE_COMMIT_HOME", self.home.path())
            .env("PRE_COMMIT_COLOR", "never")
            .output()
            .expect("pre-commit")
    }
}

fn pre_commit() -> Option<PreCommit> {
    let cmd = require_tool("ERRATA_PRE_COMMIT", "pre-commit", Some("pre_commit"))?;
    Some(PreCommit {
        cmd,
        hooks: hooks_repo(),
        home: tempfile::tempdir().unwrap(),
    })
}

/// A scratch git repository: a clean copy of `data/`, committed.
fn kb_repo() -> tempfile::TempDir {
    let dir = clean_kb();
    git(dir.path(), &["init", "-q"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-q", "-m", "the knowledge base"]);
    dir
}

fn relative(dir: &Path, file: &Path) -> String {
    file.strip_prefix(dir)
        .unwrap()
        .to_string_lossy()
        .replace('\\', "/")
}

#[test]
fn pre_commit_errata_check_passes_on_a_good_entry_and_fails_on_a_broken_one() {
    let Some(pc) = pre_commit() else { return };
    let dir = kb_repo();
    let entry = first_entry(dir.path());
    let file = relative(dir.path(), &entry);

    let o = pc.try_repo(dir.path(), "errata-check-system", &[&file]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("Passed"),
        "{}",
        out(&o)
    );

    // Files outside the knowledge base are not given to the hook.
    std::fs::write(dir.path().join("package.json"), "{}\n").unwrap();
    let o = pc.try_repo(dir.path(), "errata-check-system", &["package.json"]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));

    break_entry(&entry);
    let o = pc.try_repo(dir.path(), "errata-check-system", &[&file]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let text = out(&o);
    assert!(
        text.contains("Failed") && text.contains("json-syntax"),
        "{text}"
    );
}

#[test]
fn pre_commit_errata_check_resolves_references_against_the_whole_kb() {
    let Some(pc) = pre_commit() else { return };
    let dir = kb_repo();
    // An entry whose transition_graph names another entry: checked alone, the
    // reference still resolves (no unknown-reference) since the KB is loaded.
    let mut found = None;
    for e in std::fs::read_dir(dir.path().join("data/signatures/cuda")).unwrap() {
        let p = e.unwrap().path();
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        let edges = v["transition_graph"].to_string();
        if edges.contains("cuda/") {
            found = Some(p);
            break;
        }
    }
    let Some(entry) = found else {
        panic!("no entry with a transition_graph reference in data/")
    };
    let file = relative(dir.path(), &entry);
    let o = pc.try_repo(dir.path(), "errata-check-system", &[&file]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
    assert!(!out(&o).contains("unknown-reference"), "{}", out(&o));
}

#[test]
fn pre_commit_errata_fmt_formats_the_files_of_the_commit() {
    let Some(pc) = pre_commit() else { return };
    let dir = kb_repo();
    let entry = first_entry(dir.path());
    let file = relative(dir.path(), &entry);
    // The scratch copy may itself have been rewritten by clean_kb: start canonical.
    let o = errata(dir.path(), &["fmt", &file]);
    assert_eq!(o.code, 0, "{}", o.all());
    git(
        dir.path(),
        &["commit", "-q", "-a", "-m", "fmt", "--allow-empty"],
    );

    let o = pc.try_repo(dir.path(), "errata-fmt-system", &[&file]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));

    // A compact (non-canonical) entry: the hook rewrites it, and so fails, as pre-commit
    // does for every formatter; the second run passes.
    let value: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&entry).unwrap()).unwrap();
    std::fs::write(&entry, serde_json::to_string(&value).unwrap()).unwrap();
    let o = pc.try_repo(dir.path(), "errata-fmt-system", &[&file]);
    assert_eq!(o.status.code(), Some(1), "{}", out(&o));
    let o = pc.try_repo(dir.path(), "errata-fmt-system", &[&file]);
    assert_eq!(o.status.code(), Some(0), "{}", out(&o));
}

/// `action.yml` as a reusable workflow, so that every actionlint (the native one, which
/// reads a `uses: ./` action itself, and the WebAssembly fallback, which reads workflows
/// only) lints its steps, expressions and inputs: the composite steps become one job's,
/// its inputs `workflow_call` inputs (strings, with their defaults).
fn action_as_workflow(action: &str) -> String {
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(action).expect("action.yml is YAML");
    let mut inputs = serde_yaml_ng::Mapping::new();
    if let Some(map) = doc["inputs"].as_mapping() {
        for (name, input) in map {
            let mut spec = serde_yaml_ng::Mapping::new();
            spec.insert("type".into(), "string".into());
            spec.insert(
                "required".into(),
                input["required"].as_bool().unwrap_or(false).into(),
            );
            if let Some(default) = input["default"].as_str() {
                spec.insert("default".into(), default.into());
            }
            inputs.insert(name.clone(), spec.into());
        }
    }
    serde_yaml_ng::to_string(&serde_yaml_ng::Value::from({
        let mut w = serde_yaml_ng::Mapping::new();
        w.insert("name".into(), "action.yml, linted as a workflow".into());
        let mut on = serde_yaml_ng::Mapping::new();
        let mut call = serde_yaml_ng::Mapping::new();
        call.insert("inputs".into(), inputs.into());
        on.insert("workflow_call".into(), call.into());
        w.insert("on".into(), on.into());
        let mut job = serde_yaml_ng::Mapping::new();
        job.insert("runs-on".into(), "ubuntu-latest".into());
        job.insert("steps".into(), doc["runs"]["steps"].clone());
        let mut jobs = serde_yaml_ng::Mapping::new();
        jobs.insert("action".into(), job.into());
        w.insert("jobs".into(), jobs.into());
        w
    }))
    .expect("yaml")
}

#[test]
fn actionlint_finds_nothing_in_the_workflows_and_the_action() {
    let Some(cmd) = require_tool("ERRATA_ACTIONLINT", "actionlint", None) else {
        return;
    };
    // A copy keeps the check independent of target/ etc.; action.yml goes in both as
    // itself and as a workflow (see `action_as_workflow`).
    let dir = tempfile::tempdir().unwrap();
    copy_dir(
        &repo().join(".github/workflows"),
        &dir.path().join(".github/workflows"),
    );
    // actionlint's configuration (runner labels newer than some builds know).
    std::fs::copy(
        repo().join(".github/actionlint.yaml"),
        dir.path().join(".github/actionlint.yaml"),
    )
    .unwrap();
    let action = std::fs::read_to_string(repo().join("action.yml")).unwrap();
    std::fs::write(dir.path().join("action.yml"), &action).unwrap();
    let as_workflow = action_as_workflow(&action);
    assert!(as_workflow.contains("workflow_call") && as_workflow.contains("steps"));
    std::fs::write(
        dir.path().join(".github/workflows/zz-action-yml.yml"),
        &as_workflow,
    )
    .unwrap();
    git(dir.path(), &["init", "-q"]);
    let lint = |dir: &Path| {
        Command::new(&cmd[0])
            .args(&cmd[1..])
            .args(["-color=never"])
            .current_dir(dir)
            .output()
            .expect("actionlint")
    };
    let o = lint(dir.path());
    assert_eq!(
        o.status.code(),
        Some(0),
        "actionlint findings:\n{}",
        out(&o)
    );
    // The lint can fail: an expression error in the action's steps is found.
    let broken = as_workflow.replacen("${{", "${{ inputs.no-such-input ||", 1);
    std::fs::write(
        dir.path().join(".github/workflows/zz-action-yml.yml"),
        broken,
    )
    .unwrap();
    let o = lint(dir.path());
    assert_ne!(
        o.status.code(),
        Some(0),
        "a broken action step passed: {}",
        out(&o)
    );
}

// ---------------------------------------------------------------------------------------
// CONTRIBUTING.md

/// A newcomer follows CONTRIBUTING.md alone: every `cargo run -- <command>` it shows is a
/// command of this `errata`, and every file of `data/` it points at exists.
#[test]
fn contributing_names_real_commands_and_files() {
    let text = std::fs::read_to_string(repo().join("CONTRIBUTING.md")).unwrap();
    let mut commands = std::collections::BTreeSet::new();
    for rest in text.split("cargo run -- ").skip(1) {
        let word: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
            .collect();
        commands.insert(word);
    }
    assert!(commands.len() >= 6, "{commands:?}");
    for command in &commands {
        let run = errata(&repo(), &[command.as_str(), "--help"]);
        assert_eq!(
            run.code,
            0,
            "`errata {command}` from CONTRIBUTING.md: {}",
            run.all()
        );
    }
    let mut files = 0;
    for rest in text.split("data/signatures/").skip(1) {
        let path: String = rest
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '/' | '.'))
            .collect();
        let path = path.trim_end_matches('.');
        if !path.ends_with(".json") || path.contains("my-new-error") {
            continue;
        }
        files += 1;
        assert!(
            repo().join("data/signatures").join(path).is_file(),
            "CONTRIBUTING.md names data/signatures/{path}, which does not exist"
        );
    }
    assert!(files >= 1, "CONTRIBUTING.md names no example entry");
    // The worked example checks clean, as the guide promises of a finished entry.
    let run = errata(
        &repo(),
        &[
            "check",
            "data/signatures/cuda/unsupported-limit.json",
            "--format",
            "json",
        ],
    );
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(doc["summary"]["errors"], 0, "{doc}");
}

// ---------------------------------------------------------------------------------------
// SECURITY.md

/// SECURITY.md stays true: every file and test it names exists, and the limits it
/// states are the ones in the code.
#[test]
fn security_names_real_files_tests_and_limits() {
    let text = std::fs::read_to_string(repo().join("SECURITY.md")).unwrap();
    let quoted: Vec<&str> = text.split('`').skip(1).step_by(2).collect();
    let mut paths = 0;
    for token in &quoted {
        if ["crates/", "fuzz/", "tests/", "schema/"]
            .iter()
            .any(|p| token.starts_with(p))
            && !token.contains(['*', '<', ' '])
        {
            paths += 1;
            assert!(repo().join(token).exists(), "SECURITY.md names {token}");
        }
    }
    assert!(paths >= 6, "{paths} paths");
    // Test and function names (snake_case with two underscores or more) are found in
    // the sources.
    let mut sources = String::new();
    for dir in ["crates", "xtask"] {
        let mut stack = vec![repo().join(dir)];
        while let Some(dir) = stack.pop() {
            for item in std::fs::read_dir(dir).unwrap().flatten() {
                let path = item.path();
                if path.is_dir() && !path.ends_with("target") {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "rs" || e == "py") {
                    sources += &std::fs::read_to_string(&path).unwrap_or_default();
                }
            }
        }
    }
    for token in &quoted {
        let name = token.trim_end_matches("::tests");
        if name.matches('_').count() >= 1
            && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
        {
            assert!(sources.contains(name), "SECURITY.md names `{name}`");
        }
    }
    // The limits it states.
    let mib = |bytes: u64| format!("{} MiB", bytes >> 20);
    assert!(
        text.contains(&mib(errata_load::MAX_FILE_BYTES)),
        "file limit"
    );
    assert!(
        text.contains(&format!(
            "{} MiB pieces",
            errata_consumer::MAX_LINE_BYTES >> 20
        )),
        "line pieces"
    );
    let limits = errata_consumer::archive::Limits::DEFAULT;
    assert!(text.contains(&format!("{} GiB decompressed", limits.total_bytes >> 30)));
    assert!(text.contains(&format!("{} per member", mib(limits.member_bytes))));
    assert!(text.contains(&format!(
        "{},{:03} members",
        limits.members / 1000,
        limits.members % 1000
    )));
    assert!(
        !text.contains("FUZZ_REPORT"),
        "the fuzzing report is filled in"
    );
}

/// The published site is built with its absolute address: a sitemap, feed, robots.txt
/// and canonical links of `/index.html` are useless to a search engine.
#[test]
fn the_published_site_is_built_with_its_base_url() {
    let workflow =
        std::fs::read_to_string(repo().join(".github/workflows/publish.yml")).expect("publish.yml");
    let builds: Vec<&str> = workflow
        .lines()
        .filter(|l| l.contains("-- build"))
        .collect();
    assert!(!builds.is_empty(), "publish.yml builds the site");
    for line in builds {
        assert!(
            line.contains("--base-url \"https://"),
            "the site is built without its absolute base URL: {line}"
        );
    }
    // That form of the command works and writes absolute URLs.
    let dir = tempfile::tempdir().expect("tempdir");
    let out = errata(
        &repo(),
        &[
            "build",
            "--out",
            dir.path().to_str().expect("utf-8"),
            "--base-url",
            "https://errata-kb.github.io/errata/",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.all());
    let sitemap = std::fs::read_to_string(dir.path().join("site/sitemap.xml")).expect("sitemap");
    assert!(
        sitemap.contains("<loc>https://errata-kb.github.io/errata/"),
        "{sitemap}"
    );
}

/// The release workflow builds the CLI for every platform the contract names and the
/// wheels, each with a checksum, on a tag, and publishes the wheels to PyPI (actionlint checks it above; a real release is
/// the only full test).
#[test]
fn the_release_workflow_builds_every_platform_with_checksums() {
    let wf = std::fs::read_to_string(repo().join(".github/workflows/release.yml")).unwrap();
    assert!(wf.contains("tags: [\"v*\"]"), "{wf}");
    for target in [
        "x86_64-unknown-linux-gnu",
        "aarch64-unknown-linux-gnu",
        "aarch64-apple-darwin",
        "x86_64-apple-darwin",
        "x86_64-pc-windows-msvc",
    ] {
        assert!(wf.contains(target), "no {target}");
    }
    assert!(wf.contains("cargo xtask py-wheel"), "no wheels");
    assert!(wf.matches(".sha256").count() >= 2, "no checksums");
    assert!(
        wf.contains("LICENSE-MIT") && wf.contains("data/LICENSE"),
        "no licences"
    );
    // The self-installing pre-commit hooks pip-install the release's wheel from PyPI.
    assert!(
        wf.contains("pypa/gh-action-pypi-publish@") && wf.contains("id-token: write"),
        "the wheels are not published to PyPI"
    );
}
