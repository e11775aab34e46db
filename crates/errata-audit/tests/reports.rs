//! The audit of environment reports people posted in public issues
//! (`tests/fixtures/env/`, copied verbatim; `SOURCES.tsv` names each thread), against
//! the real knowledge base in `data/`.

use std::path::{Path, PathBuf};

use errata_consumer::Entry;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn entries() -> errata_consumer::Index {
    let kb = errata_load::KnowledgeBase::load(&repo().join("data")).expect("data/");
    let mut entries: Vec<Entry> = kb
        .entries
        .iter()
        .filter_map(|d| Entry::from_value(d.value()).ok())
        .collect();
    entries.sort_by(|a, b| a.id.cmp(&b.id));
    errata_consumer::Index::new(entries).expect("index")
}

fn audit(file: &str) -> errata_audit::Report {
    let text = std::fs::read_to_string(repo().join("tests/fixtures/env").join(file))
        .unwrap_or_else(|e| panic!("{file}: {e}"));
    errata_audit::audit(&text, &entries(), false)
}

/// The finding for entry `id`, if the audit made one.
fn finding<'r>(r: &'r errata_audit::Report, id: &str) -> Option<&'r errata_audit::Finding> {
    r.findings.iter().find(|f| f.id == id)
}

fn ids(r: &errata_audit::Report) -> Vec<&str> {
    r.findings.iter().map(|f| f.id.as_str()).collect()
}

#[test]
fn a_driver_too_old_for_torchs_cuda_is_found() {
    for file in [
        "collect_env_driver_too_old_torch150cu102_p100.txt",
        "collect_env_driver_too_old_torch160cu102_v100.txt",
    ] {
        let r = audit(file);
        assert_eq!(
            ids(&r),
            ["cuda/insufficient-driver", "pytorch/driver-too-old"],
            "{file}: {r:#?}"
        );
        assert_eq!(r.facts["torch_cuda"], "10.2", "{file}");
        // CUDA 10.2.89's driver, from NVIDIA's table.
        assert_eq!(r.facts["driver_minimum_for_torch_cuda"], "440.33", "{file}");
        assert_eq!(
            r.findings[0]
                .because
                .get("driver_too_old_for_torch_cuda")
                .map(String::as_str),
            Some("true")
        );
        assert!(!r.findings[0].fix.is_empty());
    }
}

#[test]
fn a_gpu_the_torch_build_has_no_kernels_for_is_found() {
    // An RTX 5090 D (sm_120) under torch 2.6.0+cu126, and an H100 (sm_90) under torch
    // 2.0.1+cu117: both reports carry PyTorch's own list of what it was built for.
    for file in [
        "collect_env_sm120_rtx5090d_torch260cu126.txt",
        "collect_env_sm90_h100_torch201cu117.txt",
    ] {
        let r = audit(file);
        assert_eq!(
            ids(&r),
            [
                "cuda/no-kernel-image-for-device",
                "pytorch/capability-not-supported"
            ],
            "{file}: {r:#?}"
        );
    }
    let r = audit("collect_env_sm120_rtx5090d_torch260cu126.txt");
    assert_eq!(r.facts["compute_capability"], serde_json::json!(["12.0"]));
}

#[test]
fn a_cpu_only_torch_on_a_gpu_machine_is_found() {
    for file in [
        "collect_env_cpu_only_torch131_rtx2080ti.txt",
        "collect_env_cpu_only_torch222_rtx4080laptop.txt",
    ] {
        let r = audit(file);
        assert_eq!(
            ids(&r),
            ["pytorch/not-compiled-with-cuda"],
            "{file}: {r:#?}"
        );
    }
}

#[test]
fn healthy_reports_and_bare_tool_outputs_find_nothing() {
    for file in [
        "collect_env_healthy_torch291cu126_h100.txt",
        "collect_env_healthy_torch170cu101_t4_colab.txt",
        "collect_env_healthy_torch240cu121_wsl2_rtx4070laptop.txt",
        "collect_env_healthy_torch2110cu130_h200_two_cudnn.txt",
        "nvidia_smi_580_159_04_cuda13_0_h200.txt",
        "nvidia_smi_570_133_20_cuda12_8_l4.txt",
        "nvidia_smi_610_43_03_kmd_umd_header_rtx3080.txt",
        "nvidia_smi_470_256_02_cuda11_4_a10g.txt",
        "nvidia_smi_q_510_68_02_gtx1650.txt",
        "nvcc_version_11_0_221.txt",
    ] {
        let r = audit(file);
        assert!(r.findings.is_empty(), "{file}: {r:#?}");
    }
    // The facts were read all the same, whatever the header says.
    let r = audit("nvidia_smi_610_43_03_kmd_umd_header_rtx3080.txt");
    assert_eq!(r.facts["driver"], "610.43.03");
    assert_eq!(r.facts["driver_cuda"], "13.3");
    let r = audit("collect_env_healthy_torch291cu126_h100.txt");
    assert_eq!(r.facts["gpu_not_in_torch_build"], "false");
    assert_eq!(r.facts["driver_too_old_for_torch_cuda"], "false");
    // A machine with two cuDNNs, read where it ran: collect_env lists the system's 9.14.0,
    // torch.backends.cudnn.version() said 91900, the wheel's 9.19.0.56. And the cited arch
    // list of torch 2.11 cu130 is what that wheel's torch.cuda.get_arch_list() returned
    // there (sm_75 sm_80 sm_86 sm_90 sm_100 sm_120).
    let r = audit("collect_env_healthy_torch2110cu130_h200_two_cudnn.txt");
    assert_eq!(r.facts["cudnn"], "9.19.0.56");
    assert_eq!(r.facts["cudnn_system"], "9.14.0");
    assert_eq!(
        r.facts["torch_arch_list"],
        serde_json::json!(["7.5", "8.0", "8.6", "9.0", "10.0", "12.0"])
    );
    assert_eq!(r.facts["gpu_not_in_torch_build"], "false");
    assert_eq!(r.facts["driver_too_old_for_torch_cuda"], "false");
}

#[test]
fn two_reports_of_one_machine_combine() {
    // The same V100 machine posted its collect_env and its nvidia-smi header.
    let dir = repo().join("tests/fixtures/env");
    let text = [
        "collect_env_driver_too_old_torch160cu102_v100.txt",
        "nvidia_smi_418_67_header_partial.txt",
    ]
    .iter()
    .map(|f| std::fs::read_to_string(dir.join(f)).expect("fixture"))
    .collect::<Vec<_>>()
    .join("\n");
    let r = errata_audit::audit(&text, &entries(), true);
    assert_eq!(r.facts["driver_cuda"], "10.1");
    assert_eq!(r.findings.len(), 2);
    // Chinese notes and fixes when asked.
    assert!(r.findings.iter().all(|f| {
        f.note
            .chars()
            .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
    }));
}

#[test]
fn a_component_inside_a_known_bad_range_is_a_warning() {
    // `pip freeze` lines as pip prints them; NCCL 2.18 reported network errors as
    // internal errors (nccl#1092), 2.18.1 to 2.18.5 had the cudaMemcpyAsync bug fixed
    // in 2.18.6 (nccl#1024).
    let r = errata_audit::audit(
        "torch==2.1.0+cu121\nnvidia-nccl-cu12==2.18.1\n",
        &entries(),
        false,
    );
    let ids: Vec<(&str, &str)> = r
        .findings
        .iter()
        .map(|f| (f.id.as_str(), f.severity.as_str()))
        .collect();
    assert!(ids.contains(&("nccl/internal-error", "warning")), "{ids:?}");
    assert!(
        ids.contains(&("nccl/unhandled-cuda-error", "warning")),
        "{ids:?}"
    );
    let r = errata_audit::audit(
        "torch==2.1.0+cu121\nnvidia-nccl-cu12==2.18.6\n",
        &entries(),
        false,
    );
    let ids: Vec<&str> = r.findings.iter().map(|f| f.id.as_str()).collect();
    assert!(ids.contains(&"nccl/internal-error"), "{ids:?}");
    assert!(!ids.contains(&"nccl/unhandled-cuda-error"), "{ids:?}");
    let r = errata_audit::audit("nvidia-nccl-cu12==2.21.5\n", &entries(), false);
    assert!(r.findings.is_empty(), "{r:#?}");
}

/// The NCCL a process loaded, as PyTorch's error and NCCL's banner print it in real
/// reports, puts the report inside the known-bad ranges: 2.18.x mislabels network
/// failures as internal errors (nccl#1092), 2.18.1 to 2.18.5 carry the cudaMemcpyAsync
/// bug fixed in 2.18.6.
#[test]
fn the_nccl_a_log_shows_loaded_is_checked_against_known_bad_ranges() {
    let severity = |r: &errata_audit::Report, id: &str| {
        finding(r, id).map(|f| (f.severity.clone(), f.because.get("nccl").cloned()))
    };
    let warned = |v: &str| Some(("warning".to_string(), Some(v.to_string())));
    // The issue's title: the range note, with the version, replaces the bare "the report
    // shows this error" finding.
    let r = audit("error_nccl_internal_2_18_1_nccl1092_title.txt");
    assert_eq!(r.facts["nccl"], "2.18.1");
    assert_eq!(severity(&r, "nccl/internal-error"), warned("2.18.1"));
    assert_eq!(severity(&r, "nccl/unhandled-cuda-error"), warned("2.18.1"));
    // NCCL's banner in NCCL_DEBUG=INFO output.
    let r = audit("nccl_debug_banner_2_18_5_pytorch113245.txt");
    assert_eq!(r.facts["nccl"], "2.18.5");
    assert_eq!(severity(&r, "nccl/internal-error"), warned("2.18.5"));
    assert_eq!(severity(&r, "nccl/unhandled-cuda-error"), warned("2.18.5"));
    // 2.18.6 is still a 2.18 but has the copy fixed.
    let r = audit("error_nccl_internal_2_18_6_vllm_ray_nccl1247.txt");
    assert_eq!(r.facts["nccl"], "2.18.6");
    assert_eq!(severity(&r, "nccl/internal-error"), warned("2.18.6"));
    assert_eq!(severity(&r, "nccl/unhandled-cuda-error"), None);
    // A healthy machine's NCCL is outside both ranges.
    let r = audit("collect_env_healthy_torch2110cu130_h200_two_cudnn.txt");
    assert!(r.findings.is_empty(), "{r:#?}");
}

/// PyTorch refuses a cuDNN of 9.11 or later on a GPU below compute capability 7.5
/// (torch/backends/cudnn/__init__.py): a V100 beside torch 2.11's pinned cuDNN wheel is
/// found; the same GPU with the cuDNN 2.10 pins, or a T4 (7.5) with 2.11's, is not.
#[test]
fn a_cudnn_too_new_for_the_gpu_is_found() {
    let report = |cudnn: &str, gpu: &str| {
        format!(
            "PyTorch version: 2.11.0+cu130\n\
             GPU models and configuration: GPU 0: {gpu}\n\
             Versions of relevant libraries:\n\
             [pip3] {cudnn}\n"
        )
    };
    let found = |text: &str| {
        errata_audit::audit(text, &entries(), false)
            .findings
            .into_iter()
            .find(|f| f.id == "pytorch/cudnn-unsupported-compute-capability")
    };
    let f = found(&report(
        "nvidia-cudnn-cu13==9.19.0.56",
        "Tesla V100-SXM2-16GB",
    ))
    .expect("a V100 with cuDNN 9.19 is found");
    assert_eq!(f.because["compute_capability"], "7.0");
    assert_eq!(f.because["cudnn"], "9.19.0.56");
    assert!(
        found(&report(
            "nvidia-cudnn-cu12==9.10.2.21",
            "Tesla V100-SXM2-16GB"
        ))
        .is_none()
    );
    let t4 = report("nvidia-cudnn-cu13==9.19.0.56", "Tesla T4");
    assert!(found(&t4).is_none());
    let facts = errata_audit::audit(&t4, &entries(), false).facts;
    assert_eq!(
        facts["compute_capability"],
        serde_json::json!(["7.5"]),
        "{facts:?}"
    );
}

/// Two NVIDIA NCCL wheels for different CUDA majors install the same libnccl.so.2: the
/// reports where `import torch` then failed on an undefined nccl symbol are found, with
/// the library named; one NCCL wheel is not.
#[test]
fn one_library_installed_as_two_wheels_is_found() {
    for file in [
        "pip_two_nccl_wheels_cu11_cu12_returnn1802.txt",
        "pip_two_nccl_wheels_cu12_cu13_pytorch186591.txt",
        "collect_env_libraries_torch2121cu132_cu12_and_cu13_wheels.txt",
    ] {
        let r = audit(file);
        let found = finding(&r, "pytorch/nccl-undefined-symbol")
            .unwrap_or_else(|| panic!("{file}: {r:#?}"));
        assert_eq!(found.because["wheels_twice"], "nccl", "{file}");
        assert_eq!(found.severity, "warning");
    }
    // The mixed environment names every doubled library, and its wheels.
    let r = audit("collect_env_libraries_torch2121cu132_cu12_and_cu13_wheels.txt");
    let twice: Vec<&str> = r.facts["wheels_twice"]
        .as_array()
        .expect("a list")
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(
        ["cublas", "cudnn", "cusparselt", "nccl"]
            .iter()
            .all(|l| twice.contains(l)),
        "{twice:?}"
    );
    assert!(
        r.facts["wheels_twice_installed"]
            .to_string()
            .contains("nvidia-nccl-cu13==2.29.7")
    );
    // Both known outcomes of two NCCL libraries (a missing symbol at import, an old
    // library refusing the newer headers' config), and nothing else by the tables.
    assert_eq!(
        ids(&r),
        ["nccl/invalid-argument", "pytorch/nccl-undefined-symbol"]
    );
}

/// A second cuDNN found before the one PyTorch was built with, as people paste PyTorch's
/// refusal (both wordings it has used): the mismatch is a finding from the report's line.
#[test]
fn a_cudnn_version_mismatch_a_report_shows_is_found() {
    for file in [
        "error_cudnn_incompatibility_ld_library_path_functorch926.txt",
        "error_cudnn_incompatibility_cogat2.txt",
    ] {
        let r = audit(file);
        let f = finding(&r, "pytorch/cudnn-version-incompatibility")
            .unwrap_or_else(|| panic!("{file}: {r:#?}"));
        assert!(
            f.because
                .get("report_line")
                .is_some_and(|l| l.contains("cuDNN version incompatibility")),
            "{file}: {f:#?}"
        );
        assert_eq!(ids(&r), ["pytorch/cudnn-version-incompatibility"], "{file}");
    }
}

#[test]
fn an_error_the_report_itself_shows_is_a_finding() {
    // The user pasted PyTorch's error with their nvidia-smi header: the error is named
    // from the report's own line even though no torch version is given.
    let r = audit("error_driver_too_old_11040_nvidia_smi_470_86.txt");
    let f = finding(&r, "pytorch/driver-too-old").unwrap_or_else(|| panic!("{r:#?}"));
    assert!(
        f.because
            .get("report_line")
            .is_some_and(|l| l.contains("too old")),
        "{f:#?}"
    );
    // nvidia-smi itself failing, as users paste it (tinygrad/open-gpu-kernel-modules#47):
    // the driver and its user-space library disagree.
    let r = errata_audit::audit(
        "$ nvidia-smi\nFailed to initialize NVML: Driver/library version mismatch\nNVML library version: 570.124\n",
        &entries(),
        false,
    );
    let ids: Vec<&str> = r.findings.iter().map(|f| f.id.as_str()).collect();
    assert_eq!(ids, ["driver/nvml-version-mismatch"], "{r:#?}");
}

/// The NCCL wheel a PyTorch release pins on PyPI (its METADATA) installed at an older
/// version: torch 2.2 calls ncclCommRegister, which NCCL 2.18 lacks, the case a vLLM
/// maintainer names for `undefined symbol: ncclCommRegister` (vllm#4195). The pinned
/// version, a newer one, a CPU build and a build for another CUDA major are not found.
#[test]
fn an_nccl_wheel_older_than_torchs_pin_is_found() {
    let r = errata_audit::audit(
        "torch==2.2.0\nnvidia-nccl-cu12==2.18.1\n",
        &entries(),
        false,
    );
    let found = finding(&r, "pytorch/nccl-undefined-symbol").unwrap_or_else(|| panic!("{r:#?}"));
    assert_eq!(found.because["nccl_older_than_torch_pin"], "true");
    assert_eq!(found.severity, "warning");
    assert_eq!(r.facts["nccl_pinned_by_torch"], "nvidia-nccl-cu12==2.19.3");
    for fine in [
        "torch==2.2.0\nnvidia-nccl-cu12==2.19.3\n",
        "torch==2.2.0\nnvidia-nccl-cu12==2.21.5\n",
        "torch==2.1.2\nnvidia-nccl-cu12==2.18.1\n",
        "torch==2.2.0+cpu\nnvidia-nccl-cu12==2.18.1\n",
        "torch==2.2.0+cu118\nnvidia-nccl-cu12==2.18.1\n",
    ] {
        let r = errata_audit::audit(fine, &entries(), false);
        assert!(
            !r.findings
                .iter()
                .any(|f| f.because.contains_key("nccl_older_than_torch_pin")),
            "{fine}: {r:#?}"
        );
    }
    // The real reports: the lent H200 machine's torch 2.11.0 beside its pinned NCCL, and
    // torch 2.12.1 beside a cu12 and its pinned cu13 NCCL wheel.
    let r = audit("collect_env_healthy_torch2110cu130_h200_two_cudnn.txt");
    assert_eq!(r.facts["nccl_older_than_torch_pin"], "false");
    assert_eq!(r.facts["nccl_pinned_by_torch"], "nvidia-nccl-cu13==2.28.9");
    let r = audit("collect_env_libraries_torch2121cu132_cu12_and_cu13_wheels.txt");
    assert_eq!(r.facts["nccl_older_than_torch_pin"], "false");
}
