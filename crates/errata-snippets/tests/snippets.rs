//! Integration tests of errata-snippets on real inputs: the raw seed articles, the
//! knowledge base in `data/`, a real nvcc from the pinned CUDA wheels (installed into
//! the cache on first use: needs network once), real `python3`/`shellcheck`, a real
//! runner pack run on this machine, and CUDA/PyTorch/compute-sanitizer outputs recorded on
//! real GPUs and published (`tests/fixtures/recorded/`, each file's `source` gives the URL
//! and what was trimmed; `tests/fixtures/assembled/` holds the few still assembled from
//! library strings, labelled so).

use std::path::{Path, PathBuf};

use errata_model::snippet::{Expect, parse_expect};
use errata_snippets::classify::{RunOutput, classify};
use errata_snippets::{Options, Outcome, Snippet, Tier, Trust, Verdict, extract, verify};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn cache() -> PathBuf {
    errata_snippets::toolchain::default_cache_dir(&repo())
}

fn load(dir: &Path) -> Vec<Snippet> {
    let kb = errata_load::KnowledgeBase::load(dir).expect("load knowledge base");
    extract(&kb)
}

fn seeds() -> PathBuf {
    repo().join("tests/fixtures/seeds")
}

fn at<'a>(verdicts: &'a [Verdict], file_end: &str, line: usize) -> &'a Verdict {
    verdicts
        .iter()
        .find(|v| v.file.ends_with(file_end) && v.line == line)
        .unwrap_or_else(|| panic!("no verdict for {file_end}:{line} in {verdicts:#?}"))
}

/// Whether a process still runs a second after it was killed (a zombie awaiting its
/// parent does not): SIGKILL is delivered asynchronously, so a loaded machine can show
/// the process for a moment after the kill returned.
fn alive(pid: &str) -> bool {
    let running = || {
        std::fs::read_to_string(format!("/proc/{}/stat", pid.trim()))
            .is_ok_and(|s| !s.contains(") Z "))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(1);
    while running() {
        if std::time::Instant::now() > deadline {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    false
}

/// A throw-away data directory with one article holding `body`.
fn article(body: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let art = dir.path().join("articles/cuda");
    std::fs::create_dir_all(&art).expect("mkdir");
    std::fs::write(
        art.join("t.md"),
        format!("---\ntitle: T\nid: cuda/t\ndate: \"2025-01-01\"\n---\n{body}"),
    )
    .expect("write");
    dir
}

const MEM: &str = "articles/cuda/runtime-errors-memory-failures.md";
const RESET: &str = "articles/cuda/why-does-cudadevicereset-cause-cuda-access-violations-after.md";
const CAT: &str = "articles/cuda/why-am-i-getting-a-cuda-illegal-memory.md";

mod seeds {
    use super::*;

    #[test]
    fn torch_cuda_get_last_error_is_api_missing() {
        let v = verify(&load(&seeds()), &Options::new(Tier::Static, cache())).verdicts;
        let got = at(&v, MEM, 561);
        assert_eq!(got.outcome, Outcome::ApiMissing, "{got:?}");
        assert!(
            got.detail
                .contains("`torch.cuda.get_last_error` does not exist in torch 2.10.0"),
            "{}",
            got.detail
        );
    }

    #[test]
    fn renamed_nsight_compute_commands_are_flagged() {
        let v = verify(&load(&seeds()), &Options::new(Tier::Static, cache())).verdicts;
        for line in [440, 456, 614] {
            let got = at(&v, MEM, line);
            assert_eq!(got.outcome, Outcome::ApiMissing, "{got:?}");
            assert!(
                got.detail.contains("`nv-nsight-cu-cli` renamed `ncu`"),
                "{}",
                got.detail
            );
        }
        // The other shell blocks of the seed pass shellcheck's real lint or fail it.
        assert_eq!(at(&v, MEM, 196).outcome, Outcome::Pass);
        assert_eq!(at(&v, MEM, 204).outcome, Outcome::CompileError);
        assert!(at(&v, MEM, 204).detail.contains("SC2274"));
    }

    #[test]
    fn error_message_in_a_python_fence_is_flagged() {
        let v = verify(&load(&seeds()), &Options::new(Tier::Static, cache())).verdicts;
        let got = at(&v, MEM, 29);
        assert_eq!(got.outcome, Outcome::CompileError);
        assert!(
            got.detail.contains("error output, not Python"),
            "{}",
            got.detail
        );
    }

    #[test]
    fn cuda_free_async_with_one_argument_does_not_compile() {
        let v = verify(&load(&seeds()), &Options::new(Tier::Compile, cache())).verdicts;
        for line in [20, 71] {
            let got = at(&v, RESET, line);
            assert_eq!(
                (got.tier, got.outcome),
                (Tier::Compile, Outcome::CompileError),
                "{got:?}"
            );
            assert!(
                got.detail.contains("too few arguments in function call"),
                "{}",
                got.detail
            );
            // `#line` maps nvcc's error back into the Markdown: line 30 is `cudaFreeAsync(d_data);`.
            assert!(
                got.detail
                    .contains(&format!("{RESET}({})", if line == 20 { 30 } else { 81 })),
                "{}",
                got.detail
            );
        }
        // Example 2 passes the stream: it compiles.
        assert_eq!(at(&v, RESET, 43).outcome, Outcome::Pass);
    }

    /// The seed claims that `torch.cat` of a CPU and a CUDA tensor is an illegal memory
    /// access. Judged against what PyTorch prints for it, that claim is a wrong error,
    /// and the corrected expectation in data/ is observed.
    #[test]
    fn torch_cat_illegal_memory_access_claim_is_a_wrong_error() {
        let snippets = load(&seeds());
        let claim = snippets
            .iter()
            .find(|s| s.file.ends_with(CAT) && s.line == 16)
            .expect("seed block");
        assert!(claim.code.contains("torch.cat((cpu_tensor, gpu_tensor)"));
        assert!(claim.code.contains("CUDA illegal memory access error"));
        let out = fixture("assembled/torch-cat-device-mismatch.json");
        let (outcome, detail) = classify(&Expect::Cuda("cudaErrorIllegalAddress".into()), &out);
        assert_eq!(outcome, Outcome::WrongError, "{detail}");
        assert!(detail.contains("RuntimeError: Expected all tensors to be on the same device"));

        // The corrected article in data/ expects the real error.
        let data = load(&repo().join("data"));
        let fixed = data
            .iter()
            .find(|s| {
                s.file.ends_with(CAT) && s.code.contains("torch.cat((cpu_tensor, gpu_tensor)")
            })
            .expect("corrected block in data/");
        let expect = fixed.annotations.expect.clone().expect("annotated");
        assert_eq!(
            classify(&expect, &out).0,
            Outcome::ExpectedErrorObserved,
            "{expect}"
        );
    }
}

/// A run output from `tests/fixtures/` (`{"source", "exit_code", "signal"?, "stdout",
/// "stderr"}`).
fn fixture(rel: &str) -> RunOutput {
    let path = fixtures_dir().join(rel);
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()));
    let v: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()));
    let int = |k: &str| v[k].as_i64().and_then(|n| i32::try_from(n).ok());
    RunOutput {
        exit_code: int("exit_code"),
        signal: int("signal"),
        timed_out: false,
        stdout: v["stdout"].as_str().unwrap_or("").to_string(),
        stderr: v["stderr"].as_str().unwrap_or("").to_string(),
    }
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

mod classification {
    use super::*;
    use errata_snippets::classify::observe;

    fn judge(expect: &str, rel: &str) -> (Outcome, String) {
        classify(&parse_expect(expect).expect("expect"), &fixture(rel))
    }

    use Outcome::{
        ExpectedErrorObserved as Observed, SanitizerFinding, UnexpectedError, WrongError,
    };

    /// Every output recorded on a real GPU, judged against expectations a snippet could
    /// carry. Each fixture appears here (checked below), so a new one must be classified.
    const RECORDED: &[(&str, &str, Outcome)] = &[
        // PyTorch: a kernel's device-side assert, old RuntimeError form, with the
        // kernel's `Assertion ... failed.` lines.
        (
            "torch-device-assert-nll-loss.json",
            "cuda:cudaErrorAssert",
            Observed,
        ),
        (
            "torch-device-assert-nll-loss.json",
            "py:RuntimeError:device-side assert triggered",
            Observed,
        ),
        // torch.AcceleratorError subclasses RuntimeError, not the other way round.
        (
            "torch-device-assert-nll-loss.json",
            "py:torch.AcceleratorError",
            WrongError,
        ),
        (
            "torch-device-assert-nll-loss.json",
            "cuda:cudaErrorIllegalAddress",
            WrongError,
        ),
        ("torch-device-assert-nll-loss.json", "exit:1", Observed),
        ("torch-device-assert-nll-loss.json", "ok", UnexpectedError),
        (
            "torch-device-assert-hint-lines.json",
            "cuda:cudaErrorAssert",
            Observed,
        ),
        (
            "torch-device-assert-hint-lines.json",
            "py:RuntimeError:^CUDA error: device-side assert triggered",
            Observed,
        ),
        (
            "torch-device-assert-hint-lines.json",
            "cuda:cudaErrorLaunchFailure",
            WrongError,
        ),
        // PyTorch out of memory, from before torch.OutOfMemoryError existed.
        (
            "torch-oom-runtimeerror.json",
            "cuda:cudaErrorMemoryAllocation",
            Observed,
        ),
        (
            "torch-oom-runtimeerror.json",
            "py:RuntimeError:CUDA out of memory. Tried to allocate",
            Observed,
        ),
        (
            "torch-oom-runtimeerror.json",
            "py:torch.OutOfMemoryError",
            WrongError,
        ),
        (
            "torch-oom-runtimeerror.json",
            "cuda:cudaErrorIllegalAddress",
            WrongError,
        ),
        (
            "torch-cuda-runtime-error-2-oom.json",
            "cuda:cudaErrorMemoryAllocation",
            Observed,
        ),
        (
            "torch-cuda-runtime-error-2-oom.json",
            "py:RuntimeError:out of memory",
            Observed,
        ),
        ("torch-cuda-runtime-error-2-oom.json", "ok", UnexpectedError),
        // torch.AcceleratorError (PyTorch 2.8+).
        (
            "torch-accelerator-error-invalid-device.json",
            "cuda:cudaErrorInvalidDevice",
            Observed,
        ),
        (
            "torch-accelerator-error-invalid-device.json",
            "py:torch.AcceleratorError:invalid device ordinal",
            Observed,
        ),
        (
            "torch-accelerator-error-invalid-device.json",
            "py:RuntimeError",
            Observed,
        ),
        (
            "torch-accelerator-error-invalid-device.json",
            "py:torch.OutOfMemoryError",
            WrongError,
        ),
        (
            "torch-accelerator-error-invalid-device.json",
            "cuda:cudaErrorIllegalAddress",
            WrongError,
        ),
        (
            "torch-accelerator-error-illegal-address-windows.json",
            "cuda:cudaErrorIllegalAddress",
            Observed,
        ),
        (
            "torch-accelerator-error-illegal-address-windows.json",
            "py:torch.AcceleratorError:an illegal memory access was encountered",
            Observed,
        ),
        (
            "torch-accelerator-error-illegal-address-windows.json",
            "ok",
            UnexpectedError,
        ),
        // How it ended is unknown: not an exit status that can be claimed.
        (
            "torch-accelerator-error-illegal-address-windows.json",
            "exit:1",
            WrongError,
        ),
        // Plain CUDA C++ programs.
        (
            "cuda-thrust-misaligned-abort.json",
            "cuda:cudaErrorMisalignedAddress",
            Observed,
        ),
        (
            "cuda-thrust-misaligned-abort.json",
            "cuda:cudaErrorIllegalAddress",
            WrongError,
        ),
        // SIGABRT is a signal, not the shell's `exit 134`.
        ("cuda-thrust-misaligned-abort.json", "exit:134", WrongError),
        ("cuda-thrust-misaligned-abort.json", "ok", UnexpectedError),
        (
            "cuda-launch-out-of-resources.json",
            "cuda:cudaErrorLaunchOutOfResources",
            Observed,
        ),
        ("cuda-launch-out-of-resources.json", "exit:255", Observed),
        (
            "cuda-launch-out-of-resources.json",
            "cuda:cudaErrorLaunchFailure",
            WrongError,
        ),
        (
            "cuda-launch-out-of-resources.json",
            "py:RuntimeError",
            WrongError,
        ),
        ("cuda-launch-out-of-resources.json", "ok", UnexpectedError),
        // compute-sanitizer: the program exits 0, the tool found something.
        (
            "compute-sanitizer-memcheck-invalid-write.json",
            "sanitizer:memcheck",
            Observed,
        ),
        (
            "compute-sanitizer-memcheck-invalid-write.json",
            "ok",
            SanitizerFinding,
        ),
        (
            "compute-sanitizer-memcheck-invalid-write.json",
            "cuda:cudaErrorIllegalAddress",
            SanitizerFinding,
        ),
        (
            "compute-sanitizer-racecheck-warning.json",
            "sanitizer:racecheck",
            Observed,
        ),
        (
            "compute-sanitizer-racecheck-warning.json",
            "ok",
            SanitizerFinding,
        ),
    ];

    #[test]
    fn every_recorded_output_is_classified() {
        let dir = fixtures_dir().join("recorded");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .expect("recorded/")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert!(files.len() >= 8, "{files:?}");
        for f in &files {
            assert!(
                RECORDED.iter().any(|(g, ..)| g == f),
                "recorded/{f} is not classified in RECORDED"
            );
            let text = std::fs::read_to_string(dir.join(f)).expect("read");
            let v: serde_json::Value = serde_json::from_str(&text).expect("json");
            let source = v["source"].as_str().unwrap_or("");
            assert!(
                source.contains("https://"),
                "recorded/{f}: no URL in source"
            );
        }
        let mut failures = Vec::new();
        for (f, expect, want) in RECORDED {
            let (got, detail) = judge(expect, &format!("recorded/{f}"));
            if got != *want {
                failures.push(format!(
                    "{f} expect={expect}: {got:?}, not {want:?} ({detail})"
                ));
            }
        }
        assert!(failures.is_empty(), "{}", failures.join("\n"));
    }

    #[test]
    fn what_is_observed_in_recorded_outputs() {
        let seen = |f: &str| observe(&fixture(&format!("recorded/{f}")));
        // Python: the exception line after the last traceback header, whatever precedes it
        // (training logs, kernel assertion lines) or fills it (`^^^^`, `~~~^^`, Windows
        // paths); its message runs on over PyTorch's hint lines.
        let o = seen("torch-device-assert-nll-loss.json");
        let py = o.py.expect("exception");
        assert_eq!(py.ty, "RuntimeError");
        assert_eq!(py.message, "CUDA error: device-side assert triggered");
        let o = seen("torch-accelerator-error-illegal-address-windows.json");
        let py = o.py.expect("exception");
        assert_eq!(py.ty, "torch.AcceleratorError");
        assert!(py.message.starts_with("CUDA error: an illegal memory access was encountered\nSearch for `cudaErrorIllegalAddress'"), "{}", py.message);
        let o = seen("torch-accelerator-error-invalid-device.json");
        assert_eq!(o.py.expect("exception").ty, "torch.AcceleratorError");
        assert_eq!(o.cuda.as_deref(), Some("cudaErrorInvalidDevice"));
        // CUDA error strings however the program words the line around them.
        assert_eq!(
            seen("torch-cuda-runtime-error-2-oom.json").cuda.as_deref(),
            Some("cudaErrorMemoryAllocation")
        );
        assert_eq!(
            seen("cuda-launch-out-of-resources.json").cuda.as_deref(),
            Some("cudaErrorLaunchOutOfResources")
        );
        assert_eq!(
            seen("cuda-thrust-misaligned-abort.json").cuda.as_deref(),
            Some("cudaErrorMisalignedAddress")
        );
        // The `cudaGetErrorName` name alone is enough: thrust's `what():` line without
        // CUB's `CUDA error 716 [...]` lines.
        let mut out = fixture("recorded/cuda-thrust-misaligned-abort.json");
        out.stderr = out
            .stderr
            .lines()
            .filter(|l| !l.starts_with("CUDA error"))
            .collect::<Vec<_>>()
            .join("\n");
        assert!(out.stderr.contains("what():  after reduction step 1"));
        assert_eq!(
            observe(&out).cuda.as_deref(),
            Some("cudaErrorMisalignedAddress")
        );
        // No Python in a C++ program's output.
        assert_eq!(seen("cuda-launch-out-of-resources.json").py, None);
        // compute-sanitizer: the count and the summary line, warnings included.
        let o = seen("compute-sanitizer-memcheck-invalid-write.json");
        assert_eq!(o.sanitizer_errors, Some(4));
        assert_eq!(
            o.sanitizer_summary.as_deref(),
            Some("ERROR SUMMARY: 4 errors")
        );
        let o = seen("compute-sanitizer-racecheck-warning.json");
        assert_eq!(o.sanitizer_errors, Some(1));
        assert_eq!(
            o.sanitizer_summary.as_deref(),
            Some("RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)")
        );
        assert_eq!(o.cuda, None);
    }

    #[test]
    fn details_name_what_was_seen() {
        let (_, d) = judge("ok", "recorded/cuda-thrust-misaligned-abort.json");
        assert!(
            d.contains("cudaErrorMisalignedAddress") && d.contains("killed by signal 6"),
            "{d}"
        );
        let (_, d) = judge(
            "py:torch.OutOfMemoryError",
            "recorded/torch-oom-runtimeerror.json",
        );
        assert!(
            d.contains("RuntimeError: CUDA out of memory. Tried to allocate 20.67 GiB"),
            "{d}"
        );
        let (_, d) = judge("ok", "recorded/compute-sanitizer-racecheck-warning.json");
        assert!(
            d.contains("RACECHECK SUMMARY: 1 hazard displayed (0 errors, 1 warning)"),
            "{d}"
        );
        let (_, d) = judge(
            "exit:1",
            "recorded/torch-accelerator-error-illegal-address-windows.json",
        );
        assert!(
            d.starts_with("expected exit 1, saw torch.AcceleratorError"),
            "{d}"
        );
    }

    /// Assembled fixtures (`tests/fixtures/assembled/`): formats no published recording
    /// shows in full.
    #[test]
    fn assembled_outputs() {
        let f = "assembled/torch-out-of-memory.json";
        assert_eq!(
            judge("py:torch.OutOfMemoryError:CUDA out of memory", f).0,
            Observed
        );
        assert_eq!(judge("py:torch.cuda.OutOfMemoryError", f).0, Observed);
        assert_eq!(judge("cuda:cudaErrorMemoryAllocation", f).0, Observed);
        assert_eq!(judge("py:ValueError", f).0, WrongError);
        let f = "assembled/cuda-check-illegal-address.json";
        assert_eq!(judge("cuda:cudaErrorIllegalAddress", f).0, Observed);
        assert_eq!(judge("exit:1", f).0, Observed);
        assert_eq!(judge("exit:2", f).0, WrongError);
        assert_eq!(judge("py:RuntimeError", f).0, WrongError);
        let f = "assembled/torch-cat-device-mismatch.json";
        assert_eq!(judge("cuda:cudaErrorIllegalAddress", f).0, WrongError);
        assert_eq!(
            judge(
                "py:RuntimeError:Expected all tensors to be on the same device",
                f
            )
            .0,
            Observed
        );
        for f in [
            "torch-out-of-memory.json",
            "cuda-check-illegal-address.json",
            "torch-cat-device-mismatch.json",
        ] {
            let text =
                std::fs::read_to_string(fixtures_dir().join("assembled").join(f)).expect("read");
            assert!(
                text.contains("\"source\": \"ASSEMBLED, NOT RECORDED"),
                "{f}"
            );
        }
    }

    #[test]
    fn clean_sanitizer_run_is_an_unexpected_success() {
        let clean = RunOutput {
            exit_code: Some(0),
            stdout: "========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n".into(),
            ..RunOutput::default()
        };
        let tool = parse_expect("sanitizer:memcheck").expect("expect");
        assert_eq!(classify(&tool, &clean).0, Outcome::UnexpectedSuccess);
    }

    #[test]
    fn success_timeout_and_signals() {
        let ok = RunOutput {
            exit_code: Some(0),
            ..RunOutput::default()
        };
        assert_eq!(classify(&Expect::Ok, &ok).0, Outcome::Pass);
        assert_eq!(
            classify(&Expect::Cuda("cudaErrorAssert".into()), &ok).0,
            Outcome::UnexpectedSuccess
        );
        let slow = RunOutput {
            timed_out: true,
            signal: Some(9),
            ..RunOutput::default()
        };
        assert_eq!(classify(&Expect::Ok, &slow).0, Outcome::Timeout);
        let segv = RunOutput {
            signal: Some(11),
            ..RunOutput::default()
        };
        let (o, d) = classify(&Expect::Ok, &segv);
        assert_eq!(o, Outcome::UnexpectedError);
        assert!(d.contains("signal 11"));
    }
}

mod compile_tier {
    use super::*;

    fn one(body: &str) -> Verdict {
        let dir = article(body);
        let v = verify(&load(dir.path()), &Options::new(Tier::Compile, cache())).verdicts;
        assert_eq!(v.len(), 1, "{v:#?}");
        v.into_iter().next().expect("one verdict")
    }

    #[test]
    fn compile_error_expectations_are_checked_both_ways() {
        let bad = "int main() { float *p; cudaFreeAsync(p); return 0; }\n";
        let good = "int main() { float *p = nullptr; cudaFreeAsync(p, 0); return 0; }\n";
        let v = one(&format!(
            "```cuda expect=\"compile-error:too few arguments\"\n#include <cuda_runtime.h>\n{bad}```\n"
        ));
        assert_eq!(v.outcome, Outcome::ExpectedErrorObserved, "{v:?}");
        let v = one(&format!(
            "```cuda expect=\"compile-error:no such message\"\n#include <cuda_runtime.h>\n{bad}```\n"
        ));
        assert_eq!(v.outcome, Outcome::WrongError, "{v:?}");
        let v = one(&format!(
            "```cuda expect=compile-error\n#include <cuda_runtime.h>\n{good}```\n"
        ));
        assert_eq!(v.outcome, Outcome::UnexpectedSuccess, "{v:?}");
        let v = one(&format!("```cuda\n#include <cuda_runtime.h>\n{good}```\n"));
        assert_eq!((v.tier, v.outcome), (Tier::Compile, Outcome::Pass), "{v:?}");
    }

    #[test]
    fn harnesses_and_cont() {
        // cuda-main: statements with CUDA_CHECK; cuda-kernel: `-c`, no main.
        let v = one(
            "```cuda harness=cuda-main\nfloat *d;\nCUDA_CHECK(cudaMalloc(&d, 16));\nCUDA_CHECK(cudaFree(d));\n```\n",
        );
        assert_eq!(v.outcome, Outcome::Pass, "{v:?}");
        let v = one(
            "```cuda harness=cuda-kernel\n__global__ void k(float *x) { x[threadIdx.x] = 1.0f; }\n```\n",
        );
        assert_eq!(v.outcome, Outcome::Pass, "{v:?}");
        assert!(v.detail.contains("-c"));
        // cuda-cdp: a kernel that launches a kernel links (relocatable device code and
        // cudadevrt); cuda-prelude cannot build the same program.
        let cdp = "__global__ void child() {}\n__global__ void parent() { child<<<1, 1>>>(); }\nint main() { parent<<<1, 1>>>(); CUDA_CHECK(cudaDeviceSynchronize()); return 0; }\n";
        let v = one(&format!("```cuda harness=cuda-cdp\n{cdp}```\n"));
        assert_eq!(v.outcome, Outcome::Pass, "{v:?}");
        let v = one(&format!("```cuda harness=cuda-prelude\n{cdp}```\n"));
        assert_eq!(v.outcome, Outcome::CompileError, "{v:?}");
        // A kernel block and its `cont` launcher compile as one program.
        let dir = article(
            "```cuda harness=cuda-prelude\n__global__ void k(float *x) { x[0] = 1.0f; }\n```\n\ntext\n\n```cuda cont\nint main() { k<<<1, 1>>>(nullptr); CUDA_CHECK(cudaDeviceSynchronize()); return 0; }\n```\n",
        );
        let v = verify(&load(dir.path()), &Options::new(Tier::Compile, cache())).verdicts;
        assert_eq!(v.len(), 2);
        assert!(v.iter().all(|v| v.outcome == Outcome::Pass), "{v:#?}");
        assert!(
            v[1].detail.contains("joined to the block at line 6"),
            "{}",
            v[1].detail
        );
        // Without `cont` the second block has no kernel `k`.
        let dir = article(
            "```cuda harness=cuda-prelude\n__global__ void k(float *x) { x[0] = 1.0f; }\n```\n\n```cuda harness=cuda-prelude\nint main() { k<<<1, 1>>>(nullptr); return 0; }\n```\n",
        );
        let v = verify(&load(dir.path()), &Options::new(Tier::Compile, cache())).verdicts;
        assert_eq!(v[1].outcome, Outcome::CompileError, "{v:#?}");
    }

    /// A translation repeats its original's programs: without a pack, each distinct
    /// program is compiled once and a passing one's copies say so; a failing one's copies
    /// are compiled again so that their errors name their own file; a pack compiles every
    /// copy, since its binaries report their own file and line.
    #[test]
    fn a_program_repeated_in_a_translation_is_compiled_once() {
        let good = "```cuda harness=cuda-prelude\nint main() { CUDA_CHECK(cudaFree(0)); return 0; }\n```\n";
        let bad =
            "```cuda harness=cuda-prelude\nint main() { cudaFreeAsync(nullptr); return 0; }\n```\n";
        let dir = article(&format!("{good}\n{bad}"));
        std::fs::write(
            dir.path().join("articles/cuda/t.zh.md"),
            format!("---\ntitle: T\nid: cuda/t\ndate: \"2025-01-01\"\ntranslation_of: cuda/t\n---\n{good}\n{bad}"),
        )
        .expect("write");
        let v = verify(&load(dir.path()), &Options::new(Tier::Compile, cache())).verdicts;
        assert_eq!(v.len(), 4, "{v:#?}");
        let (en_good, en_bad) = (at(&v, "t.md", 6), at(&v, "t.md", 10));
        let (zh_good, zh_bad) = (at(&v, "t.zh.md", 7), at(&v, "t.zh.md", 11));
        assert_eq!(en_good.outcome, Outcome::Pass, "{en_good:?}");
        assert!(
            !en_good.detail.contains("compiled once"),
            "{}",
            en_good.detail
        );
        assert_eq!(zh_good.outcome, Outcome::Pass, "{zh_good:?}");
        assert!(
            zh_good
                .detail
                .contains("articles/cuda/t.md:6, compiled once"),
            "{}",
            zh_good.detail
        );
        for (v, file) in [(en_bad, "t.md"), (zh_bad, "t.zh.md")] {
            assert_eq!(v.outcome, Outcome::CompileError, "{v:?}");
            assert!(
                v.detail.contains(file) && !v.detail.contains("compiled once"),
                "{}",
                v.detail
            );
        }
        // With a pack both copies are built: each binary names its own file.
        let out = tempfile::tempdir().expect("tmp");
        let opts = Options::new(Tier::Compile, cache())
            .with_pack_dir(Some(out.path().join("pack")))
            .with_trust(Trust::All);
        let run = verify(&load(dir.path()), &opts);
        let m = run.manifest.expect("pack");
        assert_eq!(m.items.len(), 2, "{m:#?}");
        assert!(
            run.verdicts
                .iter()
                .all(|v| !v.detail.contains("compiled once")),
            "{:#?}",
            run.verdicts
        );
    }

    /// python3 and nvcc run within the verifier's limits: past its timeout a tool is
    /// killed and the block is `infra-error`, never a pass.
    #[test]
    fn tools_run_within_their_limits() {
        let tight = errata_snippets::exec::Limits {
            timeout: std::time::Duration::from_millis(1),
            ..Default::default()
        };
        let dir = article("```cuda\nint main() { return 0; }\n```\n\n```python\nx = 1\n```\n");
        let opts = Options::new(Tier::Compile, cache()).with_tool_limits(tight);
        let v = verify(&load(dir.path()), &opts).verdicts;
        assert_eq!(v.len(), 2, "{v:#?}");
        assert_eq!(v[0].outcome, Outcome::InfraError, "{v:#?}");
        assert!(
            v[0].detail.contains("nvcc ran past 0.001s"),
            "{}",
            v[0].detail
        );
        assert_eq!(v[1].outcome, Outcome::InfraError, "{v:#?}");
        assert!(
            v[1].detail.contains("python static checker ran past"),
            "{}",
            v[1].detail
        );
    }

    #[test]
    fn unknown_harness_and_annotation_errors_are_not_silently_passed() {
        let v = one("```cuda harness=cuda-nope\nint main() {}\n```\n");
        assert_eq!(v.outcome, Outcome::InfraError);
        assert!(v.detail.contains("unknown harness"));
        let v = one("```cuda expct=ok\nint main() {}\n```\n");
        assert_eq!(v.outcome, Outcome::InfraError);
        let v = one("```cuda ignore(needs two GPUs)\nint main() { syntax error }\n```\n");
        assert_eq!(
            (v.outcome, v.detail.as_str()),
            (Outcome::Ignored, "needs two GPUs")
        );
    }
}

mod data {
    use super::*;

    /// Done-when of issue 3: on CI (no GPU) every snippet in data/ gets a static or
    /// compile verdict, and none contradicts its expectation.
    #[test]
    fn every_snippet_in_data_gets_a_static_or_compile_verdict() {
        let snippets = load(&repo().join("data"));
        let verifiable: Vec<_> = snippets.iter().filter(|s| s.is_verifiable()).collect();
        assert!(verifiable.len() > 20, "only {} snippets", verifiable.len());
        // Trusted and packed as a GPU session packs it (issue 21), so the pack's size is
        // measured on the real data.
        let out = tempfile::tempdir().expect("tempdir");
        let packdir = out.path().join("pack");
        let run = verify(
            &snippets,
            &Options::new(Tier::Compile, cache())
                .with_pack_dir(Some(packdir.clone()))
                .with_trust(Trust::All),
        );
        let v = run.verdicts;
        assert_eq!(v.len(), verifiable.len());
        let manifest = run.manifest.expect("a pack of data/");
        super::travel::assert_travels(&packdir, &manifest);
        super::travel::dry_run_skips_everything(&packdir, &manifest, &snippets);
        for s in &verifiable {
            let got = v
                .iter()
                .find(|v| v.file == s.file && v.line == s.line)
                .unwrap_or_else(|| panic!("no verdict for {}:{}", s.file, s.line));
            assert!(matches!(got.tier, Tier::Static | Tier::Compile), "{got:?}");
            assert!(
                !matches!(got.outcome, Outcome::SkippedNoGpu | Outcome::InfraError),
                "{got:?}"
            );
            assert!(!got.outcome.is_failure(), "{got:?}");
        }
        // Every CUDA block that is not ignored reached nvcc.
        assert!(
            v.iter()
                .filter(|v| v.lang == "cuda")
                .all(|v| v.tier == Tier::Compile || v.outcome == Outcome::Ignored)
        );
    }
}

mod run_tier {
    use super::*;

    fn gpu() -> bool {
        std::process::Command::new("nvidia-smi")
            .arg("-L")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    /// A real pack, run by the real runner on this machine (no GPU needed): exit codes,
    /// Python tracebacks, timeouts that kill the whole process group, libcudart's own
    /// error, and run records that satisfy schema/run-record.schema.json.
    #[test]
    fn pack_run_ingest_and_records() {
        let pid_file = tempfile::NamedTempFile::new().expect("tmp");
        let body = format!(
            "```cuda harness=cuda-prelude expect=exit:3\nint main() {{ printf(\"hi\\n\"); return 3; }}\n```\n\n\
             ```cuda harness=cuda-main\nfloat *d;\nCUDA_CHECK(cudaMalloc(&d, 16));\n```\n\n\
             ```python expect=\"py:ValueError:bo+m\"\nraise ValueError('boom')\n```\n\n\
             ```python timeout=1s\nimport subprocess, time\np = subprocess.Popen(['sleep', '60'])\nopen('{}', 'w').write(str(p.pid))\nwhile True:\n    time.sleep(0.1)\n```\n\n\
             ```python requires=gpu\nprint('needs a GPU')\n```\n\n\
             ```python\nprint('x' * 300000)\n```\n",
            pid_file.path().display()
        );
        let dir = article(&body);
        let pack = dir.path().join("pack");
        let opts = Options::new(Tier::Run, cache())
            .with_allow_no_gpu(true)
            .with_pack_dir(Some(pack.clone()))
            .with_trust(Trust::All);
        let result = verify(&load(dir.path()), &opts);
        let v = &result.verdicts;
        assert!(pack.join("run.py").exists() && pack.join("manifest.json").exists());
        assert_eq!(
            at(v, "t.md", 6).outcome,
            Outcome::ExpectedErrorObserved,
            "{v:#?}"
        );
        let cuda = at(v, "t.md", 10);
        if gpu() {
            assert_eq!(cuda.outcome, Outcome::Pass, "{cuda:?}");
        } else {
            // libcudart's real answer on a machine without a GPU driver.
            assert_eq!(cuda.outcome, Outcome::UnexpectedError, "{cuda:?}");
            assert!(cuda.detail.contains("cudaError"), "{}", cuda.detail);
        }
        assert_eq!(
            at(v, "t.md", 15).outcome,
            Outcome::ExpectedErrorObserved,
            "{v:#?}"
        );
        let slow = at(v, "t.md", 19);
        assert_eq!(slow.outcome, Outcome::Timeout, "{slow:?}");
        // The background child was killed with its group.
        let pid = std::fs::read_to_string(pid_file.path()).expect("pid written");
        assert!(!alive(&pid), "sleep {pid} survived the timeout");
        let skipped = at(v, "t.md", 27);
        if !gpu() {
            assert_eq!(skipped.outcome, Outcome::SkippedNoGpu);
            assert!(!skipped.outcome.is_failure());
        }

        // Output is capped (head and tail kept) but the run still passes.
        assert_eq!(at(v, "t.md", 31).outcome, Outcome::Pass, "{v:#?}");
        let results: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(pack.join("results.json")).expect("results"),
        )
        .expect("json");
        let big = results["results"]
            .as_array()
            .and_then(|r| {
                r.iter()
                    .find(|r| r["stdout"].as_str().is_some_and(|s| s.starts_with("xxx")))
            })
            .expect("the big item");
        let stdout = big["stdout"].as_str().unwrap_or("");
        assert!(
            stdout.len() <= 64 * 1024 + 100,
            "{} bytes kept",
            stdout.len()
        );
        assert!(stdout.contains("output truncated by errata"));
        assert_eq!(big["truncated"], true);

        // Records: one per item run, valid against the schema, written and merged.
        assert_eq!(result.records.len(), if gpu() { 6 } else { 5 });
        let schema: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(repo().join("schema/run-record.schema.json")).expect("schema"),
        )
        .expect("schema json");
        let validator = jsonschema::validator_for(&schema).expect("valid schema");
        errata_snippets::record::merge_into(dir.path(), &result.records).expect("write records");
        let path = errata_snippets::record::records_path(dir.path(), "articles/cuda/t.md");
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).expect("records file"))
                .expect("json");
        let errors: Vec<String> = validator
            .iter_errors(&written)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}\n{written:#}");
        assert_eq!(written["records"][0]["line"], 6);
        assert_eq!(written["records"][0]["outcome"], "expected-error-observed");
        assert!(
            written["records"][0]["nvcc_version"]
                .as_str()
                .is_some_and(|s| s.contains(&format!(
                    "V{}",
                    errata_snippets::toolchain::CUDA_WHEEL_VERSION
                )))
        );
        assert!(written["records"][2]["python_version"].as_str().is_some());

        // Staleness: editing the snippet makes its record stale.
        let current: Vec<(String, usize, String)> = errata_snippets::programs(&load(dir.path()))
            .iter()
            .map(|p| ("articles/cuda/t.md".to_string(), 6, p.sha256.clone()))
            .collect();
        use errata_snippets::record::{Freshness, freshness};
        assert_eq!(freshness(&result.records[0], &current), Freshness::Current);
        let mut changed = result.records[0].clone();
        changed.sha256 = "0".repeat(64);
        assert_eq!(freshness(&changed, &current), Freshness::Stale);
        // Moved (text added above it) but the same code: still current.
        let mut moved = result.records[0].clone();
        moved.line += 7;
        assert_eq!(freshness(&moved, &current), Freshness::Current);
        let (all, errors) = errata_snippets::record::load_all(dir.path(), &load(dir.path()));
        assert!(errors.is_empty(), "{errors:?}");
        assert!(
            all.iter().all(|(_, f)| *f == Freshness::Current),
            "{all:#?}"
        );
        let art = dir.path().join("articles/cuda/t.md");
        let text = std::fs::read_to_string(&art).expect("article");
        std::fs::write(&art, text.replace("return 3;", "return 4;")).expect("edit");
        let (all, _) = errata_snippets::record::load_all(dir.path(), &load(dir.path()));
        let stale: Vec<usize> = all
            .iter()
            .filter(|(_, f)| *f == Freshness::Stale)
            .map(|(r, _)| r.line)
            .collect();
        assert_eq!(stale, [6]);

        // A record file over the data limit is an error naming it, not read whole.
        let runs = dir.path().join("runs/articles/cuda");
        std::fs::create_dir_all(&runs).expect("runs dir");
        let huge = runs.join("huge.json");
        std::fs::File::create(&huge)
            .expect("create")
            .set_len(errata_load::MAX_FILE_BYTES + 1)
            .expect("sparse file");
        let (_, errors) = errata_snippets::record::load_all(dir.path(), &load(dir.path()));
        assert!(
            errors
                .iter()
                .any(|e| e.contains("huge.json") && e.contains("over the limit")),
            "{errors:?}"
        );
        let results = dir.path().join("results.json");
        std::fs::File::create(&results)
            .expect("create")
            .set_len(errata_load::MAX_FILE_BYTES + 1)
            .expect("sparse file");
        let err = errata_snippets::pack::read_results(&results).expect_err("too big");
        assert!(err.contains("over the limit"), "{err}");
    }
}

/// The trust gate: the run tier runs (and packs) only trusted snippets.
mod trust_gate {
    use super::*;
    use errata_snippets::{AllowList, pack, programs};

    /// An article whose one Python snippet creates `marker` when it runs.
    fn marking(marker: &Path) -> tempfile::TempDir {
        article(&format!(
            "```python\nopen({:?}, 'w').write('ran')\n```\n",
            marker.display().to_string()
        ))
    }

    fn run(dir: &Path, trust: Trust) -> Verdict {
        let opts = Options::new(Tier::Run, cache())
            .with_allow_no_gpu(true)
            .with_trust(trust);
        let v = verify(&load(dir), &opts).verdicts;
        assert_eq!(v.len(), 1, "{v:#?}");
        v.into_iter().next().expect("one verdict")
    }

    fn listed(text: &str) -> Trust {
        Trust::Listed(AllowList::parse(text, Path::new("allow.txt")).expect("allow-list"))
    }

    #[test]
    fn untrusted_snippets_are_not_run_and_never_pass() {
        let out = tempfile::tempdir().expect("tmp");
        let marker = out.path().join("ran");
        let dir = marking(&marker);
        let v = run(dir.path(), Trust::Nobody);
        assert_eq!(
            (v.tier, v.outcome),
            (Tier::Run, Outcome::InfraError),
            "{v:?}"
        );
        assert!(v.outcome.is_failure());
        assert!(v.detail.contains("--trusted"), "{}", v.detail);
        assert!(!marker.exists(), "an untrusted snippet ran");
        // Nor is it packed for a GPU machine.
        let packdir = out.path().join("pack");
        let opts = Options::new(Tier::Compile, cache()).with_pack_dir(Some(packdir.clone()));
        let m = verify(&load(dir.path()), &opts).manifest.expect("pack");
        assert!(m.items.is_empty(), "{m:#?}");

        let v = run(dir.path(), Trust::All);
        assert_eq!(v.outcome, Outcome::Pass, "{v:?}");
        assert!(marker.exists(), "a trusted snippet did not run");
    }

    #[test]
    fn allow_list_by_path() {
        let out = tempfile::tempdir().expect("tmp");
        let marker = out.path().join("ran");
        let dir = marking(&marker);
        let v = run(dir.path(), listed("articles/torch/*.md\n"));
        assert_eq!(v.outcome, Outcome::InfraError, "{v:?}");
        assert!(
            v.detail.contains("not in the allow-list allow.txt"),
            "{}",
            v.detail
        );
        assert!(!marker.exists());
        let v = run(dir.path(), listed("# reviewed\narticles/cuda/*.md\n"));
        assert_eq!(v.outcome, Outcome::Pass, "{v:?}");
        assert!(marker.exists());
    }

    #[test]
    fn allow_list_by_hash_and_an_edited_snippet() {
        let out = tempfile::tempdir().expect("tmp");
        let marker = out.path().join("ran");
        let dir = marking(&marker);
        let snippets = load(dir.path());
        let sha = programs(&snippets)[0].sha256.clone();
        // The line --print-allow writes for it.
        let lines = errata_snippets::trust::allow_lines(&snippets);
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].starts_with(&format!("sha256:{sha}  # ")),
            "{lines:?}"
        );
        let list = lines.join("\n");
        let v = run(dir.path(), listed(&list));
        assert_eq!(v.outcome, Outcome::Pass, "{v:?}");
        assert!(marker.exists());

        // An edited snippet has another hash: the same list no longer allows it.
        std::fs::remove_file(&marker).expect("rm");
        let art = dir.path().join("articles/cuda/t.md");
        let text = std::fs::read_to_string(&art).expect("article");
        std::fs::write(&art, text.replace("'ran'", "'ran again'")).expect("edit");
        let v = run(dir.path(), listed(&list));
        assert_eq!(v.outcome, Outcome::InfraError, "{v:?}");
        let now = programs(&load(dir.path()))[0].sha256.clone();
        assert_ne!(now, sha);
        assert!(v.detail.contains(&format!("sha256:{now}")), "{}", v.detail);
        assert!(!marker.exists(), "the edited snippet ran");
    }

    #[test]
    fn a_pack_runs_here_only_when_all_of_it_is_trusted() {
        let out = tempfile::tempdir().expect("tmp");
        let marker = out.path().join("ran");
        let dir = marking(&marker);
        let packdir = out.path().join("pack");
        let opts = Options::new(Tier::Compile, cache())
            .with_pack_dir(Some(packdir.clone()))
            .with_trust(Trust::All);
        let m = verify(&load(dir.path()), &opts).manifest.expect("pack");
        assert_eq!(m.items.len(), 1);
        let e = pack::run_local(&packdir, true, &listed("signatures/**\n")).expect_err("refused");
        assert!(e.contains("1 item(s) not trusted"), "{e}");
        assert!(!marker.exists() && !packdir.join("results.json").exists());
        let r = pack::run_local(&packdir, true, &Trust::All).expect("runs");
        assert_eq!(r.results[0].status, "ran");
        assert!(marker.exists());
    }
}

/// The runner pack as it travels to a lent GPU (issue 21): small, self-contained, and
/// honest about the machine it lands on. Checked with the real runner (python3) and, for
/// the machine, a fake `nvidia-smi` first on the PATH.
mod travel {
    use super::*;
    use errata_snippets::pack::{self, Manifest, PACK_BUDGET, PAYLOAD, RUNTIME_LIB};

    /// The payload's member names (`tar tzf`, read with the same crates a user would).
    fn members(packdir: &Path) -> Vec<String> {
        let f = std::fs::File::open(packdir.join(PAYLOAD)).expect("payload");
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(f));
        tar.entries()
            .expect("entries")
            .map(|e| {
                e.expect("entry")
                    .path()
                    .expect("path")
                    .to_string_lossy()
                    .into_owned()
            })
            .collect()
    }

    fn size(packdir: &Path) -> u64 {
        std::fs::read_dir(packdir)
            .expect("pack dir")
            .flatten()
            .filter(|e| e.path().is_file())
            .map(|e| e.metadata().map(|m| m.len()).unwrap_or(0))
            .sum()
    }

    /// Under budget, one archive, the runtime once, no compute-sanitizer, every item's
    /// file inside, the CUDA version and architecture named.
    pub fn assert_travels(packdir: &Path, m: &Manifest) {
        let bytes = size(packdir);
        assert!(bytes < PACK_BUDGET, "pack of data/ is {bytes} bytes");
        let names = members(packdir);
        assert!(
            names.iter().all(|n| !n.contains("compute-sanitizer")),
            "{names:?}"
        );
        assert_eq!(
            names.iter().filter(|n| n.ends_with(RUNTIME_LIB)).count(),
            1,
            "{names:?}"
        );
        for item in &m.items {
            assert!(
                names.contains(&item.path),
                "{} not in the payload",
                item.path
            );
        }
        assert_eq!(
            m.cuda_version.as_deref(),
            Some(pack::cuda_major_minor().as_str())
        );
        assert_eq!(m.arch.as_deref(), Some(errata_snippets::toolchain::ARCH));
        // Nothing but the three files and the payload travels.
        let mut files: Vec<String> = std::fs::read_dir(packdir)
            .expect("dir")
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        files.sort();
        assert_eq!(files, ["README.txt", "manifest.json", PAYLOAD, "run.py"]);
    }

    /// Writes an executable shell script `path` that runs `script`.
    fn write_script(path: &Path, script: &str) {
        std::fs::write(path, format!("#!/bin/sh\n{script}\n")).expect("write");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }

    /// A directory whose `nvidia-smi` says what `script` says.
    fn fake_nvidia_smi(script: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("tempdir");
        write_script(&dir.path().join("nvidia-smi"), script);
        dir
    }

    /// A GPU whose driver supports CUDA `cuda` (as nvidia-smi's header says it).
    fn fake_gpu(cuda: &str) -> tempfile::TempDir {
        fake_nvidia_smi(&format!(
            "case \"$1\" in\n\
             --query-gpu=*) echo 'NVIDIA H200, 9.0, 580.159.04' ;;\n\
             -L) echo 'GPU 0: NVIDIA H200 (UUID: GPU-0)' ;;\n\
             *) echo '| NVIDIA-SMI 580.159.04   Driver Version: 580.159.04   CUDA Version: {cuda}     |' ;;\n\
             esac"
        ))
    }

    fn with_path(dir: &Path) -> String {
        format!(
            "{}:{}",
            dir.display(),
            std::env::var("PATH").unwrap_or_default()
        )
    }

    fn run_py(packdir: &Path, path: &str, args: &[&str]) -> std::process::Output {
        let out = std::process::Command::new("python3")
            .arg(packdir.join("run.py"))
            .args(args)
            .env("PATH", path)
            .output()
            .expect("python3 run.py");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    }

    fn results(packdir: &Path) -> pack::Results {
        pack::read_results(&packdir.join("results.json")).expect("results.json")
    }

    fn current(snippets: &[Snippet]) -> Vec<(String, usize, String)> {
        errata_snippets::record::current(snippets)
    }

    /// The CPU dry run of the command a GPU session runs: on a machine without a GPU
    /// every item is skipped, and ingesting that writes no run record.
    pub fn dry_run_skips_everything(packdir: &Path, m: &Manifest, snippets: &[Snippet]) {
        let no_gpu = fake_nvidia_smi("exit 9");
        run_py(packdir, &with_path(no_gpu.path()), &["--jobs", "2"]);
        let r = results(packdir);
        assert_eq!(r.results.len(), m.items.len());
        assert!(
            r.results
                .iter()
                .all(|i| i.status == "skipped" && i.reason.as_deref() == Some("no-gpu")),
            "{:?}",
            r.results.iter().find(|i| i.status != "skipped")
        );
        let (verdicts, records) = pack::ingest(m, &r, &current(snippets)).expect("ingest");
        assert_eq!(verdicts.len(), m.items.len());
        assert!(verdicts.iter().all(|v| v.outcome == Outcome::SkippedNoGpu));
        assert!(records.is_empty(), "{records:?}");
    }

    const TWO: &str = "```cuda harness=cuda-main\nint *d = nullptr;\nCUDA_CHECK(cudaMalloc(&d, 16));\n```\n\n\
                       ```python\nprint('runs on any machine')\n```\n";

    /// Packs the article `body`, every item trusted: the data directory, the pack's
    /// directory (inside it) and the manifest.
    fn packed(body: &str) -> (tempfile::TempDir, PathBuf, Manifest) {
        let dir = article(body);
        let packdir = dir.path().join("pack");
        let opts = Options::new(Tier::Compile, cache())
            .with_pack_dir(Some(packdir.clone()))
            .with_trust(Trust::All);
        let m = verify(&load(dir.path()), &opts).manifest.expect("pack");
        (dir, packdir, m)
    }

    /// Packs [`TWO`] and sets the CUDA version the manifest says its binaries need.
    fn two_items(cuda: &str) -> (tempfile::TempDir, PathBuf, Manifest) {
        let (dir, packdir, mut m) = packed(TWO);
        assert_eq!(m.items.len(), 2);
        m.cuda_version = Some(cuda.to_string());
        let text = serde_json::to_string_pretty(&m).expect("json");
        std::fs::write(packdir.join("manifest.json"), text).expect("manifest");
        (dir, packdir, m)
    }

    /// A pack whose CUDA is a major version past the driver's: said plainly before
    /// anything runs (`--check` and the run), its binaries skipped, and on ingest an
    /// infra-error that names the driver, never the snippet's error. The Python item,
    /// which needs no CUDA runtime of the pack, still runs.
    #[test]
    fn a_driver_older_than_the_packs_cuda_is_reported_as_such() {
        let (dir, packdir, m) = two_items("99.0");
        let gpu = fake_gpu("13.0");
        let path = with_path(gpu.path());
        let check = run_py(&packdir, &path, &["--check"]);
        let env: serde_json::Value = serde_json::from_slice(&check.stdout).expect("--check json");
        assert_eq!(env["cuda_compat"], "driver-too-old", "{env:#}");
        assert!(
            !packdir.join("results.json").exists(),
            "--check ran something"
        );

        let out = run_py(&packdir, &path, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("the pack's CUDA 99.0 is newer than the driver's CUDA"),
            "{stderr}"
        );
        let r = results(&packdir);
        assert_eq!(r.env.cuda_compat.as_deref(), Some("driver-too-old"));
        let exe = r.results.iter().find(|i| i.id == "0000").expect("exe item");
        assert_eq!(exe.status, "skipped");
        assert!(
            exe.reason
                .as_deref()
                .is_some_and(|s| s.starts_with("driver-too-old")),
            "{exe:?}"
        );
        let py = r
            .results
            .iter()
            .find(|i| i.id == "0001")
            .expect("python item");
        assert_eq!(py.status, "ran");
        let (verdicts, records) =
            pack::ingest(&m, &r, &current(&load(dir.path()))).expect("ingest");
        let v = at(&verdicts, "t.md", 6);
        assert_eq!(v.outcome, Outcome::InfraError, "{v:?}");
        assert!(v.detail.contains("driver-too-old"), "{}", v.detail);
        assert_eq!(records.len(), 1, "only the Python item ran: {records:?}");
    }

    /// A `requires=whole-gpu` program (one that exhausts device memory) starts only after
    /// every other program has ended, even with workers to spare: each program prints the
    /// clock when it starts and ends, and the runner's results carry their stdout.
    #[test]
    fn a_whole_gpu_program_runs_alone_after_the_others() {
        let timed = |annotations: &str| {
            format!(
                "```python {annotations}\nimport time\nprint('start', time.time())\n\
                 time.sleep(0.5)\nprint('end', time.time())\n```\n\n"
            )
        };
        let body = format!(
            "{}{}{}{}",
            timed("requires=gpu,whole-gpu"),
            timed("requires=gpu"),
            timed("requires=gpu"),
            timed("requires=gpu")
        );
        let (_dir, packdir, m) = packed(&body);
        let flags: Vec<bool> = m.items.iter().map(|i| i.whole_gpu).collect();
        assert_eq!(flags, [true, false, false, false]);
        assert!(m.items.iter().all(|i| i.needs_gpu), "{:?}", m.items);
        let gpu = fake_gpu("13.0");
        let out = run_py(&packdir, &with_path(gpu.path()), &["--jobs", "4"]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let clock = |stdout: &str, what: &str| -> f64 {
            stdout
                .lines()
                .find_map(|l| l.strip_prefix(what)?.trim().parse().ok())
                .unwrap_or_else(|| panic!("no `{what}` in {stdout:?}"))
        };
        let r = results(&packdir);
        assert_eq!(r.results.len(), 4);
        let alone = r
            .results
            .iter()
            .find(|i| i.id == m.items[0].id)
            .expect("item");
        let others: Vec<_> = r.results.iter().filter(|i| i.id != alone.id).collect();
        let last_end = others
            .iter()
            .map(|i| clock(&i.stdout, "end"))
            .fold(f64::MIN, f64::max);
        assert!(
            clock(&alone.stdout, "start") >= last_end,
            "the whole-gpu program started before the others ended: {:?}",
            r.results
        );
        // The others did share the pool: the last of them started before the first ended.
        let first_end = others
            .iter()
            .map(|i| clock(&i.stdout, "end"))
            .fold(f64::MAX, f64::min);
        let last_start = others
            .iter()
            .map(|i| clock(&i.stdout, "start"))
            .fold(f64::MIN, f64::max);
        assert!(last_start < first_end, "{:?}", r.results);
    }

    /// The same major version, an older minor: the binaries run (minor-version
    /// compatibility), and a failure whose output is the driver's refusal is an
    /// infra-error on ingest, not the entry's error. Without a GPU here, libcudart's
    /// real answer (`cudaErrorInsufficientDriver`, no driver at all) stands in for it.
    #[test]
    fn a_driver_refusal_under_minor_version_compatibility_is_not_the_snippets_error() {
        let (dir, packdir, m) = two_items("13.99");
        let gpu = fake_gpu("13.0");
        let out = run_py(&packdir, &with_path(gpu.path()), &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("minor-version compatibility"), "{stderr}");
        let r = results(&packdir);
        assert_eq!(
            r.env.cuda_compat.as_deref(),
            Some("minor-version-compatibility")
        );
        let exe = r.results.iter().find(|i| i.id == "0000").expect("exe item");
        assert_eq!(exe.status, "ran", "{exe:?}");
        let (verdicts, _) = pack::ingest(&m, &r, &current(&load(dir.path()))).expect("ingest");
        let v = at(&verdicts, "t.md", 6);
        if exe.stderr.contains("cudaErrorInsufficientDriver") {
            assert_eq!(v.outcome, Outcome::InfraError, "{v:?}");
            assert!(v.detail.contains("the driver's answer"), "{}", v.detail);
        } else {
            // A machine with a working driver: the program simply passes.
            assert_eq!(v.outcome, Outcome::Pass, "{v:?}");
        }
    }

    /// `expect=sanitizer:leakcheck` runs compute-sanitizer's memcheck with `--leak-check
    /// full` (leaks are a memcheck option, not a tool of their own), and the leak summary
    /// it prints is the finding the expectation asks for. The sanitizer here is a stand-in
    /// that records its arguments and prints what memcheck prints for one leak.
    #[test]
    fn a_leak_expectation_runs_memcheck_with_its_leak_check() {
        let (dir, packdir, m) = packed(
            "```cuda harness=cuda-main expect=sanitizer:leakcheck requires=gpu\n\
             int *d = nullptr;\nCUDA_CHECK(cudaMalloc(&d, 1024));\n```\n",
        );
        assert_eq!(m.items.len(), 1);
        assert_eq!(m.items[0].sanitizer.as_deref(), Some("leakcheck"));
        let gpu = fake_gpu("99.9");
        let args = gpu.path().join("args");
        let sanitizer = gpu.path().join("compute-sanitizer");
        write_script(
            &sanitizer,
            &format!(
                "echo \"$@\" > '{}'\n\
                 echo '========= COMPUTE-SANITIZER'\n\
                 echo '========= Leaked 1,024 bytes at 0x7f0000000000'\n\
                 echo '========= LEAK SUMMARY: 1,024 bytes leaked in 1 allocations'\n\
                 echo '========= ERROR SUMMARY: 1 error'",
                args.display()
            ),
        );
        let out = std::process::Command::new("python3")
            .arg(packdir.join("run.py"))
            .env("PATH", with_path(gpu.path()))
            .env("ERRATA_COMPUTE_SANITIZER", &sanitizer)
            .output()
            .expect("python3 run.py");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let given = std::fs::read_to_string(&args).expect("the sanitizer ran");
        assert!(
            given.starts_with("--tool memcheck --leak-check full "),
            "{given}"
        );
        let r = results(&packdir);
        let (verdicts, records) =
            pack::ingest(&m, &r, &current(&load(dir.path()))).expect("ingest");
        let v = at(&verdicts, "t.md", 6);
        assert_eq!(v.outcome, Outcome::ExpectedErrorObserved, "{v:?}");
        assert_eq!(records.len(), 1);
    }

    /// A pack over its budget is refused by the pack command itself, naming what is big,
    /// and leaves no payload a runner could mistake for a whole one.
    #[test]
    fn a_pack_over_its_budget_is_refused_with_its_biggest_files() {
        let dir = article(TWO);
        let packdir = dir.path().join("pack");
        let opts = Options::new(Tier::Compile, cache())
            .with_pack_dir(Some(packdir.clone()))
            .with_trust(Trust::All)
            .with_pack_budget(Some(1000));
        let run = verify(&load(dir.path()), &opts);
        assert!(run.manifest.is_none());
        let v = at(&run.verdicts, "t.md", 6);
        assert_eq!(v.outcome, Outcome::InfraError);
        assert!(
            v.detail.contains("over its 0.0 MiB budget") && v.detail.contains(RUNTIME_LIB),
            "{}",
            v.detail
        );
        assert!(!packdir.join(PAYLOAD).exists());
        assert!(!packdir.join(format!("{PAYLOAD}.partial")).exists());
    }

    /// A payload member that would land outside `payload/` (a `..` path, a symbolic
    /// link) stops `run.py` before anything is unpacked or run.
    #[test]
    fn a_payload_that_reaches_out_is_not_unpacked() {
        for hostile in ["../escaped", "link"] {
            let (dir, packdir, _m) = two_items(&pack::cuda_major_minor());
            let payload = packdir.join(PAYLOAD);
            let gz = flate2::write::GzEncoder::new(
                std::fs::File::create(&payload).expect("payload"),
                flate2::Compression::default(),
            );
            let mut tar = tar::Builder::new(gz);
            let mut h = tar::Header::new_gnu();
            if hostile == "link" {
                h.set_entry_type(tar::EntryType::Symlink);
                h.set_size(0);
                tar.append_link(&mut h, "py/0001.py", "/etc/passwd")
                    .expect("link member");
            } else {
                h.set_size(1);
                h.set_mode(0o644);
                // `append_data` refuses `..`; the raw name is what a hostile pack holds.
                h.as_gnu_mut().expect("gnu").name[..hostile.len()]
                    .copy_from_slice(hostile.as_bytes());
                h.set_cksum();
                tar.append(&h, &b"x"[..]).expect("member");
            }
            tar.into_inner().expect("tar").finish().expect("gz");
            let out = std::process::Command::new("python3")
                .arg(packdir.join("run.py"))
                .arg("--allow-no-gpu")
                .output()
                .expect("python3 run.py");
            assert!(!out.status.success(), "{hostile}: run.py went on");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("refusing payload member"), "{stderr}");
            assert!(!packdir.join("escaped").exists() && !dir.path().join("escaped").exists());
            assert!(!packdir.join("payload/py/0001.py").exists());
            assert!(!packdir.join("results.json").exists());
        }
    }

    /// `--deadline`: no item starts after it; the rest are recorded, not lost.
    #[test]
    fn items_past_the_deadline_are_recorded_as_skipped() {
        let (_dir, packdir, m) = two_items(&pack::cuda_major_minor());
        run_py(
            &packdir,
            &std::env::var("PATH").unwrap_or_default(),
            &["--allow-no-gpu", "--deadline", "0"],
        );
        let r = results(&packdir);
        assert_eq!(r.results.len(), m.items.len());
        for i in &r.results {
            assert!(
                i.status == "skipped" && matches!(i.reason.as_deref(), Some("deadline" | "no-gpu")),
                "{i:?}"
            );
        }
    }
}

/// What `run.py` does to contain a snippet, checked on real packs run by the real runner
/// (python3, no GPU needed).
mod runner_isolation {
    use super::*;
    use errata_snippets::pack;

    /// Packs the article `body` (trusted), runs `python3 run.py` with `env` added to this
    /// process's environment, and returns the pack's directory and `results.json`.
    fn run_pack(body: &str, env: &[(&str, &str)]) -> (tempfile::TempDir, serde_json::Value) {
        let dir = article(body);
        let packdir = dir.path().join("pack");
        let opts = Options::new(Tier::Compile, cache())
            .with_pack_dir(Some(packdir.clone()))
            .with_trust(Trust::All);
        let m = verify(&load(dir.path()), &opts).manifest.expect("pack");
        assert!(!m.items.is_empty());
        let status = std::process::Command::new("python3")
            .arg(packdir.join("run.py"))
            .arg("--allow-no-gpu")
            .envs(env.iter().copied())
            .status()
            .expect("python3 run.py");
        assert!(status.success());
        let text = std::fs::read_to_string(packdir.join("results.json")).expect("results");
        (dir, serde_json::from_str(&text).expect("json"))
    }

    fn item(results: &serde_json::Value, n: usize) -> &serde_json::Value {
        &results["results"][n]
    }

    fn stdout(results: &serde_json::Value, n: usize) -> String {
        item(results, n)["stdout"]
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    #[test]
    fn secrets_of_the_runner_are_not_in_the_snippet_environment() {
        let (_dir, r) = run_pack(
            "```python\nimport os\nfor k in sorted(os.environ):\n    print(k + '=' + os.environ[k])\n```\n",
            &[
                ("GITHUB_TOKEN", "ghs_s3cret"),
                ("AWS_SECRET_ACCESS_KEY", "aws_s3cret"),
                ("NVIDIA_API_KEY", "nvapi_s3cret"),
                ("CUDA_VISIBLE_DEVICES", "0"),
            ],
        );
        let out = stdout(&r, 0);
        assert_eq!(item(&r, 0)["exit_code"], 0, "{r:#}");
        assert!(!out.contains("s3cret"), "{out}");
        assert!(!out.contains("GITHUB_TOKEN"), "{out}");
        // What a snippet needs is kept or set.
        assert!(out.contains("CUDA_VISIBLE_DEVICES=0\n"), "{out}");
        assert!(out.contains("\nPATH="), "{out}");
    }

    #[test]
    fn nothing_is_left_behind() {
        // Files in the working directory, $TMPDIR and $HOME, on a normal exit and on a
        // timeout.
        let write = "import os, tempfile\nprint(os.getcwd()); print(tempfile.gettempdir()); print(os.path.expanduser('~'))\n\
                     for d in (os.getcwd(), tempfile.gettempdir(), os.path.expanduser('~')):\n    open(os.path.join(d, 'left'), 'w').write('x')\n";
        let (_dir, r) = run_pack(
            &format!(
                "```python\n{write}```\n\n```python timeout=1s\n{write}import time\ntime.sleep(60)\n```\n"
            ),
            &[],
        );
        assert_eq!(item(&r, 1)["timed_out"], true, "{r:#}");
        for n in 0..2 {
            let out = stdout(&r, n);
            let dirs: Vec<&str> = out.lines().collect();
            assert_eq!(dirs.len(), 3, "{out}");
            assert!(dirs[0].contains("errata-run-"), "{out}");
            // TMPDIR and HOME are inside the work directory.
            assert!(
                dirs[1].starts_with(dirs[0]) && dirs[2].starts_with(dirs[0]),
                "{out}"
            );
            for d in &dirs {
                assert!(!Path::new(d).exists(), "{d} left behind");
            }
        }
    }

    #[test]
    fn processes_that_left_the_group_are_killed_too() {
        // `setsid` moves a child out of the snippet's process group and session: the
        // group kill misses it, the run token in its environment does not.
        let spawn = |pid_file: &Path| {
            format!(
                "import subprocess\np = subprocess.Popen(['setsid', 'sleep', '60'])\nopen({:?}, 'w').write(str(p.pid))\n",
                pid_file.display().to_string()
            )
        };
        let tmp = tempfile::tempdir().expect("tmp");
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        let (_dir, r) = run_pack(
            &format!(
                "```python\n{}```\n\n```python timeout=1s\n{}import time\ntime.sleep(60)\n```\n",
                spawn(&a),
                spawn(&b)
            ),
            &[],
        );
        assert_eq!(item(&r, 0)["exit_code"], 0, "{r:#}");
        assert_eq!(item(&r, 1)["timed_out"], true, "{r:#}");
        for f in [&a, &b] {
            let pid = std::fs::read_to_string(f).expect("pid written");
            assert!(!alive(&pid), "setsid sleep {pid} survived the snippet");
        }
    }

    #[test]
    fn output_is_limited_on_disk_while_the_snippet_runs() {
        // 64 MiB to stdout: stopped at the runner's 16 MiB limit, before it could
        // finish, instead of filling the disk. (Python ignores SIGXFSZ, so its write
        // fails with EFBIG; a C program is killed by the signal.)
        let (dir, r) = run_pack(
            "```python\nimport sys\nfor _ in range(64):\n    sys.stdout.write('x' * (1 << 20))\nsys.stderr.write('finished')\n```\n",
            &[],
        );
        let it = item(&r, 0);
        let stderr = it["stderr"].as_str().unwrap_or("");
        assert_eq!(it["output_limited"], true, "{stderr}");
        assert_eq!(it["exit_code"], 1, "{stderr}");
        assert!(stderr.contains("File too large"), "{stderr}");
        assert!(!stderr.contains("finished"), "{stderr}");
        assert_eq!(r["env"]["output_limit"], 16 << 20);
        // Ingested, the verdict says why.
        let packdir = dir.path().join("pack");
        let m = pack::read_manifest(&packdir).expect("manifest");
        let results = pack::read_results(&packdir.join("results.json")).expect("results");
        let current = vec![(
            m.items[0].data_file.clone(),
            m.items[0].line,
            m.items[0].sha256.clone(),
        )];
        let (v, _) = pack::ingest(&m, &results, &current).expect("ingest");
        assert_eq!(v[0].outcome, Outcome::UnexpectedError, "{v:#?}");
        assert!(
            v[0].detail
                .contains("reached the runner's 16777216-byte limit"),
            "{}",
            v[0].detail
        );
    }

    #[test]
    fn no_network() {
        // A listener in this test's network namespace: the snippet must not reach it,
        // but its own loopback works (one-process torch.distributed needs it).
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("listen");
        let port = listener.local_addr().expect("addr").port();
        let (_dir, r) = run_pack(
            &format!(
                "```python\nimport socket\nown = socket.socket(); own.bind(('127.0.0.1', 0)); own.listen()\n\
                 socket.create_connection(own.getsockname(), timeout=5); print('own loopback ok')\n\
                 try:\n    socket.create_connection(('127.0.0.1', {port}), timeout=5)\n    print('reached the host')\n\
                 except OSError as e:\n    print('host unreachable:', e)\n```\n"
            ),
            &[],
        );
        let out = stdout(&r, 0);
        if r["env"]["network_isolated"] != true {
            // SECURITY.md cites this test as the proof that snippets cannot reach the
            // network: in CI a runner that cannot isolate fails it, never skips it.
            let in_ci = std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false");
            assert!(
                !in_ci,
                "CI: the runner could not isolate the network ({}), so nothing here proves the isolation SECURITY.md claims",
                r["env"]["network_note"]
            );
            eprintln!(
                "SKIPPED the network assertion: the runner could not isolate the network here ({})",
                r["env"]["network_note"]
            );
            assert!(
                r["env"]["network_note"]
                    .as_str()
                    .is_some_and(|s| !s.is_empty())
            );
            return;
        }
        assert!(out.contains("own loopback ok"), "{out}");
        assert!(out.contains("host unreachable"), "{out}");
        assert!(!out.contains("reached the host"), "{out}");
    }
}

mod report {
    use super::*;

    #[test]
    fn json_has_the_documented_shape() {
        let v = verify(&load(&seeds()), &Options::new(Tier::Static, cache())).verdicts;
        let doc: serde_json::Value =
            serde_json::from_str(&errata_snippets::report::json(&v)).expect("json");
        assert_eq!(doc["version"], 1);
        let first = &doc["snippets"][0];
        let keys: Vec<&str> = first
            .as_object()
            .expect("object")
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "file", "line", "lang", "tier", "expect", "outcome", "detail"
            ]
        );
        let human = errata_snippets::report::human(&v);
        assert!(human.contains("api-missing") && human.contains("skipped (not passed)"));
    }
}

mod entries {
    use super::*;

    #[test]
    fn entry_verify_snippets_are_extracted_and_checked() {
        let dir = tempfile::tempdir().expect("tempdir");
        let sig = dir.path().join("signatures/cuda");
        std::fs::create_dir_all(&sig).expect("mkdir");
        let src = repo().join("data/signatures/cuda/out-of-memory.json");
        let mut entry: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(src).expect("entry")).expect("json");
        entry["verify"] = serde_json::json!({
            "lang": "python",
            "annotations": "expect=ok requires=gpu,torch",
            "code": "import torch\ntorch.cuda.get_last_error()\n",
        });
        std::fs::write(
            sig.join("out-of-memory.json"),
            serde_json::to_string_pretty(&entry).expect("json"),
        )
        .expect("write");
        let snippets = load(dir.path());
        assert_eq!(snippets.len(), 1, "{snippets:#?}");
        assert_eq!(snippets[0].origin, errata_snippets::Origin::EntryVerify);
        assert_eq!(snippets[0].data_file, "signatures/cuda/out-of-memory.json");
        let v = verify(&snippets, &Options::new(Tier::Static, cache())).verdicts;
        assert_eq!(v[0].outcome, Outcome::ApiMissing, "{v:#?}");
        assert_eq!(v[0].expect, "ok");
    }
}
