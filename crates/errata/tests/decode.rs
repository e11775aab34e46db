//! `errata decode`: the real binary on the real knowledge base and on none.

mod common;

use common::{errata, repo};

#[test]
fn a_number_decodes_in_every_family_and_links_the_real_entries() {
    let run = errata(&repo(), &["decode", "13", "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.all());
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    assert_eq!(v["value"], "13");
    let meanings = v["meanings"].as_array().expect("meanings");
    let families: Vec<&str> = meanings
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
        ]
    );
    for m in meanings {
        let keys: Vec<&str> = m
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(keys, ["family", "name", "number", "description", "entry"]);
        assert_eq!(m["number"], 13);
    }
    // The entries are the knowledge base's own, found by error_code and by Xid id.
    assert_eq!(meanings[1]["entry"], "cublas/execution-failed");
    assert_eq!(meanings[5]["entry"], "xid/13-graphics-engine-exception");
    for m in meanings {
        if let Some(id) = m["entry"].as_str() {
            assert!(
                repo().join(format!("data/signatures/{id}.json")).is_file(),
                "{id}"
            );
        }
    }

    let human = errata(&repo(), &["decode", "0x2bc", "--family", "cuda"]);
    assert_eq!(human.code, 0, "{}", human.all());
    assert!(
        human.stdout.contains("cudaErrorIllegalAddress (700)"),
        "{}",
        human.stdout
    );
    assert!(
        human
            .stdout
            .contains("an illegal memory access was encountered")
    );
    assert!(human.stdout.contains("cuda/illegal-memory-access"));
    assert!(!human.stdout.contains("CUresult"), "--family narrows");
}

#[test]
fn decode_works_with_no_data_directory_and_says_what_is_wrong() {
    let dir = tempfile::tempdir().expect("tempdir");
    let run = errata(dir.path(), &["decode", "NVML_ERROR_GPU_IS_LOST"]);
    assert_eq!(run.code, 0, "{}", run.all());
    assert!(run.stdout.contains("nvmlReturn_t"), "{}", run.stdout);
    assert!(run.stdout.contains("(15)"));
    // No data directory here: the knowledge base built into errata links the entries.
    let run = errata(dir.path(), &["decode", "13", "--family", "cublas"]);
    assert!(
        run.stdout
            .contains("→ errata entry cublas/execution-failed"),
        "{}",
        run.stdout
    );

    let none = errata(dir.path(), &["decode", "123456"]);
    assert_eq!(none.code, 1, "{}", none.all());
    assert!(none.stdout.contains("no family has this value"));

    for bad in [
        &["decode", "7 00"][..],
        &["decode", "1", "--family", "cuda13"],
    ] {
        let run = errata(dir.path(), bad);
        assert_eq!(run.code, 2, "{bad:?}: {}", run.all());
        assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
        assert!(run.stdout.is_empty());
    }
    // A data directory asked for and missing is an error, not a silent "no links".
    let run = errata(dir.path(), &["decode", "700", "--data", "nowhere"]);
    assert_eq!(run.code, 2, "{}", run.all());
}
