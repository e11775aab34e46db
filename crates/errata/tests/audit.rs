//! `errata audit`: the real binary on environment reports people posted
//! (`tests/fixtures/env/`), on standard input, and probing this machine.

mod common;

use common::{errata, errata_with_stdin, repo};

fn fixture(name: &str) -> String {
    repo()
        .join("tests/fixtures/env")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn a_broken_report_is_exit_1_with_the_contracts_json() {
    let file = fixture("collect_env_sm120_rtx5090d_torch260cu126.txt");
    let run = errata(&repo(), &["audit", &file, "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.all());
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("one JSON object");
    let keys: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["facts", "findings"]);
    assert_eq!(v["facts"]["torch"], "2.6.0+cu126");
    assert_eq!(v["facts"]["gpu_not_in_torch_build"], "true");
    let finding = &v["findings"][0];
    let keys: Vec<&str> = finding
        .as_object()
        .expect("finding")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["id", "because", "severity", "note", "fix"]);
    assert_eq!(finding["because"]["gpu_not_in_torch_build"], "true");
    assert_eq!(finding["severity"], "error");

    // The human form, from a directory with no data (the built-in knowledge base).
    let empty = tempfile::tempdir().expect("tempdir");
    let run = errata(empty.path(), &["audit", &file]);
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(
        run.stdout
            .contains("error: pytorch/capability-not-supported  (gpu_not_in_torch_build=true)"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("fix: "), "{}", run.stdout);
}

#[test]
fn a_healthy_report_on_stdin_is_exit_0() {
    let text =
        std::fs::read(fixture("collect_env_healthy_torch291cu126_h100.txt")).expect("fixture");
    let run = errata_with_stdin(&repo(), &["audit", "-"], &text);
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(
        run.stdout.contains("no known-bad environment found"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("torch=2.9.1+cu126"), "{}", run.stdout);
}

#[test]
fn probing_this_machine_and_bad_input() {
    // The probes run what exists here; on a machine without an NVIDIA driver (CI) no
    // finding can be made up from them.
    let run = errata(&repo(), &["audit", "--probe", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    let has_driver = std::process::Command::new("nvidia-smi").output().is_ok();
    if !has_driver {
        assert_eq!(run.code, 0, "{}", run.all());
        assert_eq!(v["findings"], serde_json::json!([]));
    }

    let run = errata(&repo(), &["audit"]);
    assert_eq!(run.code, 2, "{}", run.all());
    let run = errata(&repo(), &["audit", "no-such-report.txt"]);
    assert_eq!(run.code, 2, "{}", run.all());
    assert!(run.stderr.contains("no-such-report.txt"), "{}", run.stderr);
}

/// `--probe` imports torch and asks for the cuDNN it loaded: when the wrong libcudnn
/// wins the search, PyTorch's refusal (on standard error) is the finding. A stand-in
/// `python3` on PATH plays a machine whose system cuDNN 9.14 shadows torch's 9.19, the
/// refusal the GPU run of `pytorch/cudnn-version-incompatibility` recorded.
#[test]
fn probing_imports_torch_and_reports_its_refusal_of_the_loaded_cudnn() {
    use std::os::unix::fs::PermissionsExt;
    let bin = tempfile::tempdir().unwrap();
    let python = bin.path().join("python3");
    std::fs::write(
        &python,
        "#!/bin/sh\n\
         case \"$2\" in\n\
         import*) echo 'Traceback (most recent call last):' >&2\n\
           echo \"RuntimeError: cuDNN version incompatibility: PyTorch was compiled  against (9, 19, 0) but found runtime version (9, 14, 0). PyTorch already comes bundled with cuDNN. One option to resolving this error is to ensure PyTorch can find the bundled cuDNN. one possibility is that there is a conflicting cuDNN in LD_LIBRARY_PATH.\" >&2\n\
           exit 1 ;;\n\
         esac\n",
    )
    .unwrap();
    std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = format!(
        "{}:{}",
        bin.path().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = common::command(&repo(), &["audit", "--probe", "--format", "json"])
        .env("PATH", path)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    let found = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["id"] == "pytorch/cudnn-version-incompatibility")
        .unwrap_or_else(|| panic!("{v:#}"));
    assert!(
        found["because"]["report_line"]
            .as_str()
            .unwrap()
            .contains("compiled  against (9, 19, 0) but found runtime version"),
        "{found:#}"
    );
    assert_eq!(out.status.code(), Some(1));
}
