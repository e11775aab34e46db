//! `errata match` end to end, as a real process on the bundled `data/` and on the bundle
//! `errata bundle` writes from it: exit codes, line numbers across chunk boundaries, the
//! same output whatever the number of threads, standard input, and Chinese advice.

use std::path::Path;

mod common;
use common::{errata, errata_with_stdin, repo, s};

/// Every entry of `data/`: (id, signature).
fn signatures() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for domain in std::fs::read_dir(repo().join("data/signatures")).unwrap() {
        for file in std::fs::read_dir(domain.unwrap().path()).unwrap() {
            let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
            let entry: serde_json::Value = serde_json::from_str(&text).unwrap();
            out.push((
                entry["id"].as_str().unwrap().to_string(),
                entry["signature"].as_str().unwrap().to_string(),
            ));
        }
    }
    out.sort();
    out
}

/// About 3 MiB of ordinary training output (several scan chunks) with every signature
/// at a known line; returns the log and the (line, id, signature) of each.
fn log_with_every_signature() -> (String, Vec<(u64, String, String)>) {
    let sigs = signatures();
    let mut log = String::new();
    let mut planted: Vec<(u64, String, String)> = Vec::new();
    let mut line = 0u64;
    while log.len() < 3 << 20 {
        line += 1;
        if line.is_multiple_of(20_011) {
            let (id, sig) = &sigs[(line / 20_011) as usize % sigs.len()];
            log.push_str(&format!("[rank0]: {sig}\n"));
            planted.push((line, id.clone(), sig.clone()));
        } else {
            log.push_str(&format!(
                "2026-01-01 12:00:00 INFO step {line} loss 0.{line:04} tokens/s 31337\n"
            ));
        }
    }
    (log, planted)
}

fn json_lines(stdout: &str) -> Vec<serde_json::Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect()
}

#[test]
fn finds_every_planted_signature_on_its_line_with_any_number_of_threads() {
    let dir = tempfile::tempdir().unwrap();
    let (log, planted) = log_with_every_signature();
    let log_path = dir.path().join("train.log");
    std::fs::write(&log_path, &log).unwrap();
    let out = dir.path().join("bundle");
    let made = errata(&repo(), &["bundle", "--data", "data", "--out", s(&out)]);
    assert_eq!(made.code, 0, "{}", made.all());
    let bundle = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .expect("a bundle");

    let mut outputs = Vec::new();
    for threads in ["1", "2", "3"] {
        let run = errata(
            &repo(),
            &[
                "match",
                s(&log_path),
                "--bundle",
                s(&bundle),
                "--format",
                "json",
                "--threads",
                threads,
            ],
        );
        // Known errors found: exit 1, like `errata check` finding problems.
        assert_eq!(run.code, 1, "{}", run.stderr);
        outputs.push(run.stdout);
    }
    assert!(
        outputs.windows(2).all(|w| w[0] == w[1]),
        "output depends on --threads"
    );

    let found = json_lines(&outputs[0]);
    for (line, id, sig) in &planted {
        // The most specific match of the line comes first, and it is the planted entry.
        let first = found
            .iter()
            .find(|f| f["line"] == *line)
            .unwrap_or_else(|| panic!("nothing found on line {line} ({id})"));
        assert_eq!(first["id"], id.as_str(), "line {line}");
        // The column is that of the matched text, 1-based, after the "[rank0]: " prefix.
        let text = first["text"].as_str().unwrap();
        let at = sig.find(text).expect("the match lies in the signature");
        assert_eq!(first["column"], "[rank0]: ".len() + at + 1, "line {line}");
        assert!(!first["root_cause"].as_str().unwrap().is_empty());
        assert!(
            first["workarounds"]
                .as_array()
                .is_some_and(|w| !w.is_empty())
        );
    }
    // Nothing is found where nothing was planted.
    let lines: std::collections::BTreeSet<u64> = planted.iter().map(|p| p.0).collect();
    assert!(
        found
            .iter()
            .all(|f| lines.contains(&f["line"].as_u64().unwrap()))
    );

    // Without --bundle, the data directory gives the same answers.
    let local = errata(&repo(), &["match", s(&log_path), "--format", "json"]);
    assert_eq!(local.code, 1, "{}", local.stderr);
    let ids = |v: &[serde_json::Value]| -> Vec<(u64, String)> {
        v.iter()
            .map(|f| {
                (
                    f["line"].as_u64().unwrap(),
                    f["id"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    assert_eq!(ids(&json_lines(&local.stdout)), ids(&found));
}

#[test]
fn reads_standard_input_and_speaks_chinese() {
    let (id, sig) = signatures().swap_remove(0);
    let log = format!("step 1\n{sig}\nstep 2\n");
    for args in [
        &["match", "--lang", "zh"][..],
        &["match", "-", "--lang", "zh"],
    ] {
        let run = errata_with_stdin(&repo(), args, log.as_bytes());
        assert_eq!(run.code, 1, "{}", run.stderr);
        assert!(run.stdout.contains(&id), "{}", run.stdout);
        assert!(run.stdout.contains(":2"), "names line 2: {}", run.stdout);
        let han = run
            .stdout
            .chars()
            .filter(|c| ('\u{4e00}'..='\u{9fff}').contains(c))
            .count();
        assert!(han > 10, "advice in Chinese: {}", run.stdout);
        // Rates in Chinese words or counts, never a bare percentage for an estimate.
        assert!(
            run.stdout.contains("（编者估计）") || run.stdout.contains("份报告中"),
            "{}",
            run.stdout
        );
    }
}

/// Evidence: each rate `errata match` prints says what it rests on; an estimate is words
/// ("usually fails (editor's estimate)"), never "85% fail".
#[test]
fn rates_are_shown_with_their_basis() {
    let (_id, sig) = signatures().swap_remove(0);
    let run = errata_with_stdin(&repo(), &["match"], format!("{sig}\n").as_bytes());
    assert_eq!(run.code, 1, "{}", run.stderr);
    let advice: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.trim_start().starts_with("don't:") || l.trim_start().starts_with("try:"))
        .collect();
    assert!(!advice.is_empty(), "{}", run.stdout);
    for line in advice {
        assert!(
            line.contains("(editor's estimate)") || line.contains(" reports"),
            "{line}"
        );
        assert!(
            !line.contains("% fail") && !line.contains("% success"),
            "{line}"
        );
    }
}

#[test]
fn a_clean_log_exits_0_and_a_missing_log_exits_2() {
    let run = errata_with_stdin(&repo(), &["match"], b"step 1 loss 0.5\nstep 2 loss 0.4\n");
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(
        run.stderr.contains("2 line(s) scanned, 0 match(es)"),
        "{}",
        run.stderr
    );

    let missing = Path::new("no/such/train.log");
    let run = errata(&repo(), &["match", s(missing)]);
    assert_eq!(run.code, 2, "{}", run.all());
    assert!(run.stderr.contains("no/such/train.log"), "{}", run.stderr);
}

/// The first line `stdout` gives within `wait`, read on a thread of its own so that the
/// writer can keep its end open; `None` when none came in time.
fn first_line_within(
    stdout: std::process::ChildStdout,
    wait: std::time::Duration,
) -> Option<String> {
    use std::io::{BufRead, BufReader};
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = tx.send(line);
    });
    rx.recv_timeout(wait).ok()
}

/// Writes a noise line and then `sig` into `writer`, which stays open as `tail -f`
/// keeps a log open, and asserts that errata (`child`, JSON on its piped stdout)
/// reports `id` on line 2 within 30 s, before the input ends; then closes the writer.
fn assert_reported_while_open(
    mut child: std::process::Child,
    mut writer: impl std::io::Write,
    id: &str,
    sig: &str,
) {
    let stdout = child.stdout.take().expect("stdout");
    writeln!(writer, "step 1 loss 0.5\n[rank0]: {sig}").unwrap();
    writer.flush().unwrap();
    let first = first_line_within(stdout, std::time::Duration::from_secs(30));
    drop(writer);
    let _ = child.wait();
    let first = first.expect("no match reported while the input was still open");
    let found: serde_json::Value = serde_json::from_str(&first).expect("a JSON line");
    assert_eq!(found["id"], id);
    assert_eq!(found["line"], 2);
}

#[test]
fn a_live_log_is_reported_as_it_is_written() {
    use std::process::Stdio;
    let (id, sig) = signatures().swap_remove(0);
    let mut child = common::command(&repo(), &["match", "-", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run errata");
    let stdin = child.stdin.take().expect("stdin");
    assert_reported_while_open(child, stdin, &id, &sig);
}

/// A named pipe given as the file is live too: its matches are written as they are
/// found, not when the input ends (only a regular file's output waits for the buffer).
#[test]
fn a_live_log_through_a_named_pipe_is_reported_as_it_is_written() {
    use std::process::Stdio;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("train.log");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(made.success());
    let (id, sig) = signatures().swap_remove(0);
    let child = common::command(&repo(), &["match", s(&fifo), "--format", "json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run errata");
    // Opening the pipe for writing waits for errata to open it for reading.
    let writer = std::fs::OpenOptions::new()
        .write(true)
        .open(&fifo)
        .expect("open the pipe");
    assert_reported_while_open(child, writer, &id, &sig);
}

/// A large log scanned into a file from a terminal shows a progress bar on stderr; the
/// report itself is unchanged. Run under `script(1)` (util-linux), which gives errata a
/// terminal for stderr while stdout goes to a file.
#[test]
fn a_large_log_shows_progress_on_a_terminal_only() {
    let dir = tempfile::tempdir().unwrap();
    let (_, sig) = signatures().swap_remove(0);
    let log_path = dir.path().join("big.log");
    let mut log = String::with_capacity(70 << 20);
    let filler = "2026-01-01 12:00:00 INFO step 1 loss 0.5000 tokens/s 31337\n";
    while log.len() < 70 << 20 {
        log.push_str(filler);
    }
    log.push_str(&format!("{sig}\n"));
    std::fs::write(&log_path, &log).unwrap();
    drop(log);

    let report = dir.path().join("report.txt");
    let typescript = dir.path().join("typescript");
    let command = format!(
        "'{}' match '{}' > '{}'",
        env!("CARGO_BIN_EXE_errata"),
        s(&log_path),
        s(&report)
    );
    let status = std::process::Command::new("script")
        .args(["-q", "-e", "-c", &command, s(&typescript)])
        .current_dir(repo())
        .stdin(std::process::Stdio::null())
        .status()
        .expect("script(1) from util-linux");
    assert_eq!(status.code(), Some(1), "known errors found");
    let terminal = String::from_utf8_lossy(&std::fs::read(&typescript).unwrap()).into_owned();
    assert!(terminal.contains("scanning ["), "{terminal}");
    let with_bar = std::fs::read_to_string(&report).unwrap();

    // Without a terminal: no bar, the same report.
    let plain = errata(&repo(), &["match", s(&log_path)]);
    assert_eq!(plain.code, 1);
    assert!(!plain.stderr.contains("scanning"), "{}", plain.stderr);
    assert_eq!(plain.stdout, with_bar);

    // The file is mapped and its searched pages handed back as the scan goes; the same
    // log read as a stream gives the same answers, byte for byte.
    let mapped = errata(&repo(), &["match", s(&log_path), "--format", "json"]);
    let bytes = std::fs::read(&log_path).unwrap();
    let streamed = errata_with_stdin(&repo(), &["match", "--format", "json"], &bytes);
    assert_eq!(mapped.code, 1, "{}", mapped.stderr);
    assert_eq!(streamed.code, 1, "{}", streamed.stderr);
    assert!(mapped.stdout.contains(&format!(
        "\"line\":{}",
        bytes.iter().filter(|&&b| b == b'\n').count()
    )));
    assert_eq!(mapped.stdout, streamed.stdout);
}

/// The human block a person acts on: the cause's first lines, the best workaround with
/// its how, the two dead ends most tried, the entry's page; `--verbose` for everything;
/// colour only when asked for or on a terminal.
#[test]
fn the_human_block_is_short_and_verbose_has_everything() {
    let log = b"RuntimeError: CUDA error: an illegal memory access was encountered\n";
    let short = errata_with_stdin(&repo(), &["match"], log);
    assert_eq!(short.code, 1, "{}", short.all());
    let tries = short
        .stdout
        .lines()
        .filter(|l| l.starts_with("  try: "))
        .count();
    let donts = short
        .stdout
        .lines()
        .filter(|l| l.starts_with("  don't: "))
        .count();
    assert_eq!((tries, donts), (1, 2), "{}", short.stdout);
    assert!(
        short.stdout.contains("    how: "),
        "the best workaround's how"
    );
    assert!(
        short.stdout.contains(
            "  more: https://errata-kb.github.io/errata/entries/cuda/illegal-memory-access.html"
        ),
        "{}",
        short.stdout
    );
    assert!(!short.stdout.contains('\u{1b}'), "no colour into a pipe");

    let verbose = errata_with_stdin(&repo(), &["match", "--verbose"], log);
    let entry: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(repo().join("data/signatures/cuda/illegal-memory-access.json"))
            .unwrap(),
    )
    .unwrap();
    let count = |key: &str| entry[key].as_array().unwrap().len();
    let tries = verbose
        .stdout
        .lines()
        .filter(|l| l.starts_with("  try: "))
        .count();
    let donts = verbose
        .stdout
        .lines()
        .filter(|l| l.starts_with("  don't: "))
        .count();
    assert_eq!((tries, donts), (count("workarounds"), count("dead_ends")));
    assert!(
        verbose
            .stdout
            .contains(entry["root_cause"].as_str().unwrap())
    );

    let coloured = errata_with_stdin(&repo(), &["match", "--color", "always"], log);
    assert!(
        coloured.stdout.contains("\u{1b}[32mtry\u{1b}[0m"),
        "{}",
        coloured.stdout
    );
}

/// An Xid no entry knows is answered from NVIDIA's catalog (name, description,
/// resolution, NVIDIA's page), not left silent; an Xid with an entry keeps its entry.
/// The Xid 69 line is a user's kernel log as quoted in a public incident report (a
/// llama.cpp server on a Tesla M40); no entry covers Xid 69.
#[test]
fn an_xid_without_an_entry_is_read_from_nvidias_catalog() {
    let log = "NVRM: Xid (PCI:0000:2d:00): 69, pid=119806, name=llama-server\n\
               May 15 08:57:36 red kernel: NVRM: Xid (PCI:0000:01:00): 31, pid=80798, name=llama-server, Ch 00000008, intr 00000000. MMU Fault: ENGINE GRAPHICS GPC1 GPCCLIENT_T1_3 faulted @ 0x7e9f_4f200000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ\n";
    let run = errata_with_stdin(&repo(), &["match", "--format", "json"], log.as_bytes());
    assert_eq!(run.code, 1, "{}", run.all());
    let found: Vec<serde_json::Value> = run
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("json"))
        .collect();
    assert_eq!(found.len(), 2, "{}", run.stdout);
    assert_eq!(found[0]["id"], "xid/69");
    assert!(
        found[0]["signature"]
            .as_str()
            .is_some_and(|s| s.starts_with("Xid 69")),
        "{}",
        found[0]
    );
    // NVIDIA's resolution bucket for 69 (Graphics Engine class error) is RESTART_APP.
    assert!(
        found[0]["root_cause"]
            .as_str()
            .is_some_and(|s| s.contains("RESTART_APP")),
        "{}",
        found[0]
    );
    assert_eq!(found[0]["operator_action"], "restart-process");
    assert_eq!(found[1]["id"], "xid/31-mmu-fault");

    let run = errata_with_stdin(&repo(), &["match", "--color", "never"], log.as_bytes());
    assert!(
        run.stdout
            .contains("more: https://docs.nvidia.com/deploy/xid-errors/"),
        "{}",
        run.stdout
    );
}
