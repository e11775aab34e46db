//! The incidents of real logs (`tests/fixtures/incidents/`: lines copied from public
//! issue threads, assembled into one failure each, every edit listed in the fixture's
//! README), matched with the real knowledge base in `data/`.

use std::path::{Path, PathBuf};

use errata_consumer::{Entry, Index};
use errata_incidents::{Log, Options, Ordering, find};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn index() -> Index {
    let kb = errata_load::KnowledgeBase::load(&repo().join("data")).expect("data/");
    let mut entries: Vec<Entry> = kb
        .entries
        .iter()
        .filter_map(|d| Entry::from_value(d.value()).ok())
        .collect();
    entries.sort_by(|a, b| a.id.cmp(&b.id));
    Index::new(entries).expect("index")
}

/// The logs of one fixture, by file name.
fn logs(case: &str) -> Vec<(String, String)> {
    let dir = repo().join("tests/fixtures/incidents").join(case);
    let mut out: Vec<(String, String)> = std::fs::read_dir(&dir)
        .expect("fixture")
        .flatten()
        .map(|f| f.path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .map(|p| {
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            (name, std::fs::read_to_string(&p).expect("log"))
        })
        .collect();
    out.sort();
    out
}

fn incidents(index: &Index, case: &str) -> Vec<errata_incidents::Incident> {
    let texts = logs(case);
    let logs: Vec<Log<'_>> = texts
        .iter()
        .map(|(name, text)| Log { name, text })
        .collect();
    find(index, &logs, &Options::default())
}

#[test]
fn an_xid_79_then_a_launch_failure_then_watchdog_timeouts_is_one_incident_caused_by_the_xid() {
    let index = index();
    let found = incidents(&index, "xid79-launch-failure-watchdog");
    assert_eq!(found.len(), 1, "{found:#?}");
    let incident = &found[0];
    let cause = incident.cause();
    assert_eq!(cause.id, "xid/79-fallen-off-the-bus");
    assert_eq!(cause.file, "kern.log");
    assert_eq!(cause.pci.as_deref(), Some("0000:3b:00"));
    assert_eq!(incident.ordered_by, Ordering::Time);
    // NVIDIA's catalog: the link is down; the node needs a power cycle and inspection.
    assert_eq!(
        incident.operator_action.as_deref(),
        index
            .entry("xid/79-fallen-off-the-bus")
            .and_then(|e| e.operator_action.as_deref())
    );
    let ids: std::collections::BTreeSet<&str> =
        incident.members.iter().map(|m| m.id.as_str()).collect();
    assert!(ids.contains("cuda/launch-failure"), "{ids:?}");
    assert!(ids.contains("nccl/watchdog-collective-timeout"), "{ids:?}");
    let ranks: std::collections::BTreeSet<u32> = incident
        .members
        .iter()
        .filter(|m| m.id == "nccl/watchdog-collective-timeout")
        .filter_map(|m| m.rank)
        .collect();
    assert_eq!(ranks, [0, 1, 2].into());
    let json = incident.to_json();
    assert_eq!(json["first_cause"]["id"], "xid/79-fallen-off-the-bus");
    assert_eq!(json["first_cause"]["file"], "kern.log");
}

#[test]
fn errors_hours_apart_on_two_ranks_are_two_incidents() {
    let index = index();
    let found = incidents(&index, "unrelated-oom");
    assert!(found.len() >= 2, "{found:#?}");
    for incident in &found {
        let files: std::collections::BTreeSet<&str> =
            incident.members.iter().map(|m| m.file.as_str()).collect();
        assert_eq!(
            files.len(),
            1,
            "an incident spans both ranks: {incident:#?}"
        );
    }
    let oom = found
        .iter()
        .find(|i| i.cause().file == "rank0.log")
        .expect("rank 0's incident");
    assert!(oom.cause().id.contains("out-of-memory"), "{oom:#?}");
}

#[test]
fn relative_kernel_times_fall_back_to_the_graph_and_say_so() {
    let index = index();
    let found = incidents(&index, "plain-dmesg-relative");
    let with_kernel = found
        .iter()
        .find(|i| i.members.iter().any(|m| m.file == "dmesg.log"))
        .expect("the kernel's Xid is found");
    assert!(
        matches!(
            with_kernel.cause().time,
            Some(errata_incidents::Time::Boot(_))
        ),
        "{with_kernel:#?}"
    );
    if with_kernel.members.iter().any(|m| m.file == "rank2.log") {
        assert_eq!(with_kernel.ordered_by, Ordering::Graph);
        assert_eq!(with_kernel.cause().file, "dmesg.log");
    }
}

#[test]
fn one_log_alone_and_no_error_at_all() {
    let index = index();
    assert!(find(&index, &[], &Options::default()).is_empty());
    let quiet = Log {
        name: "quiet.log",
        text: "[Thu Mar  7 10:11:12 2024] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.183.01\n",
    };
    assert!(find(&index, &[quiet], &Options::default()).is_empty());
}
