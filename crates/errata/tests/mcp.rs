//! `errata mcp` driven by the official MCP Python SDK (PyPI `mcp`, installed by `.ci/run`
//! from `.ci/requirements-tools.txt`) over stdio, as an assistant drives it: the
//! handshake, the three tools on real data, bad input, the entry resources.
//! `tests/mcp/client.py` makes the calls and prints what came back.
//!
//! Without Python's `mcp` the test FAILS (CI must not pass by accident);
//! `ERRATA_SKIP_TOOLS=1` skips it on a machine without it.

use std::process::Command;

mod common;
use common::repo;

fn client(args: &[&str]) -> Option<serde_json::Value> {
    let has_sdk = Command::new("python3")
        .args(["-c", "import mcp.client.stdio"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_sdk {
        if std::env::var("ERRATA_SKIP_TOOLS").is_ok_and(|v| v == "1") {
            eprintln!("ERRATA_SKIP_TOOLS=1: no Python `mcp` package, MCP test skipped");
            return None;
        }
        panic!(
            "the MCP test needs Python's `mcp` package (python3 -m pip install --user -r \
             .ci/requirements-tools.txt); set ERRATA_SKIP_TOOLS=1 to skip it"
        );
    }
    let script = repo().join("crates/errata/tests/mcp/client.py");
    let out = Command::new("python3")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_errata"))
        .args(args)
        .current_dir(repo())
        .output()
        .expect("python3 runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "the MCP client failed:\n{stderr}");
    Some(serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {stderr}")))
}

/// The JSON a tool returned as text.
fn tool_json(result: &serde_json::Value) -> serde_json::Value {
    assert_eq!(result["is_error"], false, "{result}");
    serde_json::from_str(result["text"].as_str().unwrap()).unwrap()
}

fn assert_answers(d: &serde_json::Value, outcomes: &std::path::Path) {
    assert_eq!(d["server"], "errata");
    assert_eq!(
        d["tools"],
        serde_json::json!([
            "audit",
            "decode",
            "get_entry",
            "incidents",
            "match_error",
            "report_outcome",
            "search"
        ])
    );
    // Typed arguments: the SDK sees the schema of each tool.
    assert_eq!(
        d["schemas"]["match_error"]["required"],
        serde_json::json!(["text"])
    );
    assert_eq!(
        d["schemas"]["get_entry"]["required"],
        serde_json::json!(["id"])
    );

    let found = tool_json(&d["match"]);
    let first = &found["results"][0];
    assert_eq!(first["id"], "cuda/misaligned-address", "{found}");
    assert_eq!(first["lines"], serde_json::json!([2]));
    assert!(first["workarounds"].as_array().unwrap().len() >= 2);
    assert!(found["left_out"].is_null());
    // Compact: no internal fields of the matcher.
    for internal in ["span", "via", "specificity", "column"] {
        assert!(first.get(internal).is_none(), "{internal} leaks: {first}");
    }
    // Evidence: a rate is a number only when counted; an estimate is words.
    for step in first["workarounds"].as_array().unwrap() {
        let evidence = step["evidence"].as_str().unwrap_or_default();
        if step["rate"].is_null() {
            assert!(
                evidence.ends_with("(editor's estimate)") && !evidence.contains('%'),
                "{step}"
            );
        } else {
            assert!(
                step["rate"].is_number() && evidence.contains(" of "),
                "{step}"
            );
        }
        assert!(step["how"].is_string(), "{step}");
    }
    // A 500-error log: one result per known error, every line counted, under 32 KiB.
    let big_text = d["match_big"]["text"].as_str().unwrap();
    assert!(big_text.len() < 32 * 1024, "{} bytes", big_text.len());
    let big = tool_json(&d["match_big"]);
    let ids: Vec<&str> = big["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["id"].as_str())
        .collect();
    assert_eq!(
        ids,
        [
            "cuda/out-of-memory",
            "cuda/illegal-memory-access",
            "cublas/execution-failed"
        ]
    );
    assert_eq!(big["results"][0]["matched_lines"], 500);
    assert_eq!(big["results"][0]["lines"].as_array().unwrap().len(), 20);
    assert_eq!(big["results"][0]["lines"][0], 2);
    // Every tool says what it does to the world.
    let ann = &d["annotations"];
    for read_only in [
        "match_error",
        "get_entry",
        "search",
        "decode",
        "incidents",
        "audit",
    ] {
        assert_eq!(ann[read_only]["readOnlyHint"], true, "{read_only}: {ann}");
    }
    assert_eq!(ann["report_outcome"]["readOnlyHint"], false, "{ann}");
    assert_eq!(ann["report_outcome"]["destructiveHint"], false, "{ann}");
    let zh = &tool_json(&d["match_zh"])["results"];
    assert_eq!(zh[0]["id"], "cuda/illegal-memory-access");
    assert!(
        zh[0]["root_cause"].as_str().unwrap().contains("内存"),
        "{zh}"
    );
    assert_eq!(
        tool_json(&d["match_none"])["results"],
        serde_json::json!([])
    );

    let entry = tool_json(&d["entry"]);
    assert_eq!(entry["id"], "cuda/misaligned-address");
    assert_eq!(entry["error_code"], "cudaErrorMisalignedAddress (716)");

    let hits = tool_json(&d["search"]);
    assert_eq!(hits[0]["id"], "cuda/misaligned-address", "{hits}");
    // A pasted message: the entry that recognises it first, scored 1.
    let pasted = tool_json(&d["search_pasted"]);
    assert_eq!(pasted[0]["id"], "cuda/illegal-memory-access", "{pasted}");
    assert_eq!(pasted[0]["score"], 1.0, "{pasted}");
    assert!(hits.as_array().unwrap().len() <= 5);
    let zh_hits = tool_json(&d["search_zh"]);
    assert!(
        zh_hits
            .as_array()
            .unwrap()
            .iter()
            .any(|h| h["id"] == "cuda/illegal-memory-access"),
        "{zh_hits}"
    );
    // FTS syntax in a query is text, not an error.
    tool_json(&d["search_syntax"]);

    // decode: every family's meaning, linked to the bundle's entries.
    let decoded = tool_json(&d["decode"]);
    let families: Vec<&str> = decoded["meanings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["family"].as_str())
        .collect();
    assert_eq!(
        families,
        [
            "cudaError_t",
            "cublasStatus_t",
            "cufftResult",
            "cusolverStatus_t",
            "nvmlReturn_t",
            "Xid"
        ],
        "{decoded}"
    );
    assert_eq!(decoded["meanings"][1]["entry"], "cublas/execution-failed");
    let narrowed = tool_json(&d["decode_family"]);
    assert_eq!(narrowed["meanings"].as_array().unwrap().len(), 1);
    assert_eq!(
        narrowed["meanings"][0]["entry"],
        "cuda/illegal-memory-access"
    );

    // incidents: the kernel's Xid 79 is the first cause of the ranks' failures.
    let incidents = tool_json(&d["incidents"]);
    assert_eq!(incidents["left_out"], 0, "{incidents}");
    let first = &incidents["incidents"][0];
    assert_eq!(
        first["first_cause"]["id"], "xid/79-fallen-off-the-bus",
        "{incidents}"
    );
    assert_eq!(first["first_cause"]["file"], "kern.log");
    assert_eq!(first["operator_action"], "reboot-node");
    // audit: a CPU-only torch on a laptop with an RTX 4080, in both languages.
    let audit = tool_json(&d["audit"]);
    assert_eq!(
        audit["findings"][0]["id"], "pytorch/not-compiled-with-cuda",
        "{audit}"
    );
    assert_eq!(audit["facts"]["torch_cuda"], "none");
    let audit_zh = tool_json(&d["audit_zh"]);
    assert!(
        audit_zh["findings"][0]["note"]
            .as_str()
            .is_some_and(|n| n.contains("PyTorch") && n.contains("仅支持 CPU")),
        "{audit_zh}"
    );

    // Every bad input is the same JSON-RPC error naming the problem: errata's own checks,
    // arguments that do not deserialise, an unknown tool; and the server lives on.
    for (key, says) in [
        ("bad_entry", "cuda/no-such-entry"),
        ("bad_lang", "fr"),
        ("bad_limit", "limit"),
        ("bad_family", "cuda13"),
        ("bad_window", "window_minutes"),
        ("bad_tool", "tool"),
        ("bad_args", "missing field `text`"),
        ("bad_type", "expected a string"),
        ("no_args", "missing field `id`"),
    ] {
        let e = &d[key]["rpc_error"];
        assert_eq!(e["code"], -32602, "{key}: {}", d[key]);
        assert!(e["message"].as_str().unwrap().contains(says), "{key}: {e}");
    }
    assert_eq!(d["bad_resource"]["code"], -32002, "{}", d["bad_resource"]);
    assert_eq!(tool_json(&d["after"])["id"], "cuda/out-of-memory");

    // report_outcome: validated against the entry, then one line in the outcome
    // directory (the layout of data/outcomes/); a bad record writes nothing.
    let written = tool_json(&d["outcome"]);
    let file = outcomes.join("cuda/misaligned-address.jsonl");
    assert_eq!(written["written"], file.display().to_string());
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&file)
        .expect("the outcome file")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["item"], "workaround:0");
    assert_eq!(lines[0]["env"]["gpu"], "NVIDIA H200");
    let bad = &d["bad_outcome"];
    assert_eq!(bad["rpc_error"]["code"], -32602, "{bad}");
    let why = bad["rpc_error"]["message"].as_str().unwrap();
    assert!(
        why.contains("no workaround:99") && why.contains("`maybe`"),
        "{why}"
    );

    // Every entry is a resource, readable as its JSON.
    let entries = std::fs::read_dir(repo().join("data/signatures"))
        .unwrap()
        .flat_map(|d| std::fs::read_dir(d.unwrap().path()).unwrap())
        .count();
    assert_eq!(d["resources"], entries);
    let uri = d["resource_uri"].as_str().unwrap();
    let entry: serde_json::Value =
        serde_json::from_str(d["resource_text"].as_str().unwrap()).unwrap();
    assert_eq!(
        format!("errata://entry/{}", entry["id"].as_str().unwrap()),
        uri
    );
}

#[test]
fn mcp_server_from_data_answers_the_python_sdk() {
    let outcomes = tempfile::tempdir().unwrap();
    if let Some(d) = client(&["--outcomes", common::s(outcomes.path())]) {
        assert_answers(&d, outcomes.path());
    }
}

#[test]
fn mcp_server_from_a_bundle_answers_the_same() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::errata(&repo(), &["bundle", "--out", common::s(dir.path())]);
    assert_eq!(out.code, 0, "{}", out.all());
    let bundle = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .expect("a bundle");
    let outcomes = tempfile::tempdir().unwrap();
    if let Some(d) = client(&[
        "--bundle",
        common::s(&bundle),
        "--outcomes",
        common::s(outcomes.path()),
    ]) {
        assert_answers(&d, outcomes.path());
    }
}

#[test]
fn mcp_refuses_a_corrupt_bundle_before_serving() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("errata-1.0.0.tar.gz");
    std::fs::write(&bad, b"not a bundle").unwrap();
    let out = common::errata(&repo(), &["mcp", "--bundle", common::s(&bad)]);
    assert_eq!(out.code, 2, "{}", out.all());
    assert!(out.stderr.contains("errata-1.0.0.tar.gz"), "{}", out.all());
}
