//! The outcome loop end to end, on the real binary: `errata outcome` records what
//! happened when someone tried a workaround or a dead end, `errata check` validates the
//! file, and `errata build` adds the record to the item's count on the entry page and in
//! the bundle (read back by `errata match --bundle`).

mod common;

use common::{errata, errata_with_stdin, standalone_entry, write_file};

fn count_lines(path: &std::path::Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |t| t.lines().count())
}

/// Appends a workaround whose rate is an editors' estimate (with its Chinese twin) and
/// returns its index.
fn add_estimated_workaround(entry: &mut serde_json::Value) -> usize {
    let workarounds = entry["workarounds"].as_array_mut().unwrap();
    workarounds.push(serde_json::json!({
        "action": "Run the step on a GPU with more free memory",
        "success_rate": 0.6,
        "basis": {"kind": "estimate"},
        "how": "Move the job to a card whose free memory, as nvidia-smi shows it before the start, exceeds the peak the failed step asked for.",
        "condition": "The model's working set is fixed and another GPU is available",
        "sources": []
    }));
    let w = workarounds.len() - 1;
    entry["workarounds_zh"]
        .as_array_mut()
        .unwrap()
        .push("把任务换到空闲显存更多的 GPU 上：开始前用 nvidia-smi 查看空闲显存，要大于失败那一步申请的峰值。".into());
    w
}

#[test]
fn record_check_build_and_the_count_moves() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let mut entry = standalone_entry("cuda/oom");
    // A workaround that is still an estimate (added here: the real entry's workarounds
    // may all be counted by now), and a dead end with counted reports.
    let w = add_estimated_workaround(&mut entry);
    let d = entry["dead_ends"]
        .as_array()
        .unwrap()
        .iter()
        .position(|d| d["basis"]["kind"] == "reports")
        .expect("a counted dead end");
    let (n, k) = (
        entry["dead_ends"][d]["basis"]["n"].as_u64().unwrap(),
        entry["dead_ends"][d]["basis"]["k"].as_u64().unwrap(),
    );
    write_file(
        root,
        "data/signatures/cuda/oom.json",
        &serde_json::to_string_pretty(&entry).unwrap(),
    );
    assert_eq!(errata(root, &["check"]).code, 0);

    // Recorded: one line each, validated first.
    let item = format!("workaround:{w}");
    let run = errata(
        root,
        &[
            "outcome",
            "cuda/oom",
            &item,
            "--worked",
            "--reporter",
            "github:alice",
            "--gpu",
            "NVIDIA H200",
            "--date",
            "2026-11-20",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.all());
    let dead = format!("dead_end:{d}");
    let run = errata(
        root,
        &[
            "outcome",
            "cuda/oom",
            &dead,
            "--failed",
            "--reporter",
            "github:bob",
            "--date",
            "2026-11-21",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.all());
    let file = root.join("data/outcomes/cuda/oom.jsonl");
    assert_eq!(count_lines(&file), 2);

    // Refused, nothing written: an item the entry does not have, an unknown entry.
    let run = errata(
        root,
        &[
            "outcome",
            "cuda/oom",
            "workaround:99",
            "--worked",
            "--reporter",
            "x",
        ],
    );
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("no workaround:99"), "{}", run.stderr);
    let run = errata(
        root,
        &[
            "outcome",
            "cuda/nope",
            "dead_end:0",
            "--failed",
            "--reporter",
            "x",
        ],
    );
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("no entry `cuda/nope`"),
        "{}",
        run.stderr
    );
    assert_eq!(count_lines(&file), 2);

    // check validates the file: clean as written, and a broken line is found at its line.
    assert_eq!(errata(root, &["check"]).code, 0);
    let good = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{good}{{\"entry\": \"cuda/oom\"}}\n")).unwrap();
    let run = errata(root, &["check"]);
    assert_eq!(run.code, 1);
    assert!(
        run.all().contains("outcome-invalid") && run.all().contains("oom.jsonl:3:1"),
        "{}",
        run.all()
    );
    std::fs::write(&file, &good).unwrap();

    // build: the page and the bundle show the new counts.
    let run = errata(root, &["build", "--out", "dist"]);
    assert_eq!(run.code, 0, "{}", run.all());
    let page = std::fs::read_to_string(root.join("dist/site/entries/cuda/oom.html")).unwrap();
    assert!(
        page.contains("worked in 1 of 1 recorded outcomes"),
        "the estimate became a count"
    );
    let folded = format!(
        "failed in {} of {} reports and recorded outcomes",
        k + 1,
        n + 1
    );
    assert!(page.contains(&folded), "the report count grew: {folded}");
    let bundle = std::fs::read_dir(root.join("dist/bundle"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .expect("a bundle");
    let log = entry["signature"].as_str().unwrap().to_string() + "\n";
    let run = errata_with_stdin(
        root,
        &[
            "match",
            "--bundle",
            bundle.to_str().unwrap(),
            "--format",
            "json",
        ],
        log.as_bytes(),
    );
    let found: serde_json::Value =
        serde_json::from_str(run.stdout.lines().next().unwrap()).unwrap();
    let steps: Vec<&serde_json::Value> = found["workarounds"].as_array().unwrap().iter().collect();
    assert!(
        steps.iter().any(|s| s["evidence"]
            == "worked in 1 of 1 recorded outcomes (95% interval 21–100%)"
            && s["success_rate"] == 1.0
            && s["basis"]["kind"] == "outcomes"),
        "{found:#}"
    );
}
