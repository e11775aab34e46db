//! `errata incidents`: the real binary on logs assembled from real public lines
//! (`tests/fixtures/incidents/`), with the real knowledge base, and from a directory with
//! no data (the built-in one).

mod common;

use common::{errata, repo};

fn case(name: &str) -> Vec<String> {
    let dir = repo().join("tests/fixtures/incidents").join(name);
    let mut logs: Vec<String> = std::fs::read_dir(&dir)
        .expect("fixture")
        .flatten()
        .map(|f| f.path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| p.display().to_string())
        .collect();
    logs.sort();
    logs
}

#[test]
fn the_kernel_the_ranks_and_nccl_are_one_incident_with_its_first_cause_and_action() {
    let logs = case("xid79-launch-failure-watchdog");
    let mut args = vec!["incidents", "--format", "json"];
    args.extend(logs.iter().map(String::as_str));
    let run = errata(&repo(), &args);
    assert_eq!(run.code, 1, "{}", run.all());
    let lines: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object a line"))
        .collect();
    assert_eq!(lines.len(), 1, "{}", run.stdout);
    let incident = &lines[0];
    let keys: Vec<&str> = incident
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "incident",
            "first_cause",
            "operator_action",
            "ordered_by",
            "members"
        ]
    );
    assert_eq!(incident["first_cause"]["id"], "xid/79-fallen-off-the-bus");
    assert!(
        incident["first_cause"]["file"]
            .as_str()
            .is_some_and(|f| f.ends_with("kern.log"))
    );
    // NVIDIA's catalog puts Xid 79 in the bucket that reboots the node.
    assert_eq!(incident["operator_action"], "reboot-node");
    let member_keys: Vec<&str> = incident["members"][0]
        .as_object()
        .expect("member")
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        member_keys,
        ["file", "line", "id", "time", "host", "rank", "pci"]
    );
    assert_eq!(incident["members"][0]["pci"], "0000:3b:00");
    assert_eq!(incident["members"][0]["time"], "2024-03-07 10:11:12");

    // The human story, from a directory with no data: the same first cause.
    let empty = tempfile::tempdir().expect("tempdir");
    let mut args = vec!["incidents"];
    args.extend(logs.iter().map(String::as_str));
    let run = errata(empty.path(), &args);
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(
        run.stdout
            .starts_with("incident 1: xid/79-fallen-off-the-bus"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("then:  cuda/launch-failure"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("nccl/watchdog-collective-timeout")
            && run.stdout.contains("rank 0, 1, 2"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("operator: reboot-node"),
        "{}",
        run.stdout
    );
}

#[test]
fn errors_hours_apart_stay_apart_and_relative_times_say_how_they_were_ordered() {
    let mut args = vec!["incidents", "--format", "json"];
    let logs = case("unrelated-oom");
    args.extend(logs.iter().map(String::as_str));
    let run = errata(&repo(), &args);
    assert_eq!(run.code, 1, "{}", run.all());
    assert_eq!(run.stdout.lines().count(), 2, "{}", run.stdout);

    // With a window of 13 hours the two are still two: the graph does not relate an
    // out-of-memory error to a launch failure.
    let mut wide = args.clone();
    wide.extend(["--window", "780"]);
    let run = errata(&repo(), &wide);
    assert_eq!(run.stdout.lines().count(), 2, "{}", run.stdout);

    let logs = case("plain-dmesg-relative");
    let mut args = vec!["incidents"];
    args.extend(logs.iter().map(String::as_str));
    let run = errata(&repo(), &args);
    assert_eq!(run.code, 1, "{}", run.all());
    assert!(
        run.stdout
            .starts_with("incident 1: xid/13-graphics-engine-exception"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("relative to boot"), "{}", run.stdout);
}

#[test]
fn a_quiet_log_is_no_incident_and_bad_input_is_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let quiet = dir.path().join("quiet.log");
    std::fs::write(
        &quiet,
        "[Thu Mar  7 10:11:12 2024] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.183.01\n",
    )
    .expect("write");
    let q = quiet.display().to_string();
    let run = errata(&repo(), &["incidents", &q]);
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(run.stdout.is_empty(), "{}", run.stdout);

    let run = errata(&repo(), &["incidents", "no-such.log"]);
    assert_eq!(run.code, 2, "{}", run.all());
    assert!(run.stderr.contains("no-such.log"), "{}", run.stderr);
    let run = errata(&repo(), &["incidents", &q, "--window", "-1"]);
    assert_eq!(run.code, 2, "{}", run.all());
    let run = errata(&repo(), &["incidents"]);
    assert_eq!(run.code, 2, "{}", run.all());
}
