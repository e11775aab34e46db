//! The facts of an environment, read from the reports people paste: `python -m
//! torch.utils.collect_env`, `nvidia-smi` (both header wordings), `nvidia-smi -q` /
//! `-a`, `nvcc --version`, `pip list` / `pip freeze`, and the error lines and NCCL debug
//! output pasted beside them. Any mix in one text; each report is recognised by its own
//! line shapes, so no format has to be named. Where two reports disagree the first line
//! read wins, except where a line says what a process actually loaded (`nccl`).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

/// What is known about one environment. Every field is optional: a report says what it
/// says.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct Facts {
    /// The kernel driver's version (`570.124.04`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// The newest CUDA the driver supports, as `nvidia-smi` prints it (`12.8`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver_cuda: Option<String>,
    /// PyTorch's version (`2.6.0+cu126`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch: Option<String>,
    /// The CUDA PyTorch was built with (`12.6`), or `none` for a CPU-only build.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch_cuda: Option<String>,
    /// The compute capabilities the installed PyTorch was built for (`8.0`, `9.0`, with
    /// `+PTX` where it carries PTX), from the report's own warning or from the cited table
    /// of release wheels.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub torch_arch_list: Vec<String>,
    /// Where `torch_arch_list` comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub torch_arch_list_source: Option<String>,
    /// The CUDA toolkit on the machine (`nvcc --version`, collect_env's runtime line).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cuda_toolkit: Option<String>,
    /// The GPUs' names, as reported.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpu: Vec<String>,
    /// Their compute capabilities (`12.0`), read from the report or from NVIDIA's
    /// table by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compute_capability: Vec<String>,
    /// cuDNN's version: the `nvidia-cudnn-*` wheel when the report lists one (a PyTorch
    /// wheel loads the cuDNN wheel it depends on, whatever else is installed), else the
    /// version collect_env gives or the `libcudnn.so.X.Y.Z` it lists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cudnn: Option<String>,
    /// The cuDNN library collect_env found on the system (`libcudnn.so.X.Y.Z`), when a
    /// cuDNN wheel is listed too and the versions differ: a second cuDNN, which is what
    /// loads if the system path comes first (`LD_LIBRARY_PATH`, a preloaded library).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cudnn_system: Option<String>,
    /// NCCL's version: the one a process loaded, where a line says so (PyTorch's
    /// `NCCL error in: …, NCCL version 2.18.1`, NCCL's own `NCCL version 2.18.5+cuda11.8`
    /// banner), else the `nvidia-nccl-*` wheel. The loaded one wins: a system or bundled
    /// libnccl can be what runs whatever pip lists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nccl: Option<String>,
    /// Python's version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub python: Option<String>,
    /// The operating system, as reported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub os: Option<String>,
    /// The NVIDIA libraries installed as two or more pip wheels built for different CUDA
    /// majors (`nccl` for `nvidia-nccl-cu11` beside `nvidia-nccl-cu12`; CUDA 13's wheels
    /// drop the suffix, `nvidia-cublas`): only one of them can be the library the process
    /// loads, and the other is usually what an upgrade left behind.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wheels_twice: Vec<String>,
    /// Each of those wheels, `name==version`, by library and then name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub wheels_twice_installed: Vec<String>,
    /// Every NVIDIA library wheel the report lists, by package name (PEP 503 normalised,
    /// `nvidia-nccl-cu12`) to version; what the audit compares with the pins of torch's
    /// release. Not printed: `nccl`, `cudnn` and the derived facts say what matters.
    #[serde(skip)]
    pub nvidia_wheels: BTreeMap<String, String>,
}

/// Whether a library file's version and a wheel's name the same release: `9.19.0` and
/// `9.19.0.56` do (the wheel adds a build number), `9.14.0` and `9.19.0.56` do not.
fn same_release(library: &str, wheel: &str) -> bool {
    wheel == library
        || wheel
            .strip_prefix(library)
            .is_some_and(|rest| rest.starts_with('.'))
}

/// The library an NVIDIA pip wheel ships (`nvidia-nccl-cu12` → `nccl`, `nvidia-cublas` →
/// `cublas`), or `None` for other packages and NVIDIA's meta packages.
fn nvidia_library(package: &str) -> Option<&str> {
    let rest = package.strip_prefix("nvidia-")?;
    let library = match rest.rsplit_once("-cu") {
        Some((library, cuda)) if !cuda.is_empty() && cuda.bytes().all(|b| b.is_ascii_digit()) => {
            library
        }
        _ => rest,
    };
    // nvidia-ml-py, nvidia-pyindex, nvidia-modelopt…: not CUDA libraries by CUDA major.
    const LIBRARIES: &[&str] = &[
        "cublas",
        "cuda-cupti",
        "cuda-nvrtc",
        "cuda-runtime",
        "cudnn",
        "cufft",
        "cufile",
        "curand",
        "cusolver",
        "cusparse",
        "cusparselt",
        "nccl",
        "nvjitlink",
        "nvshmem",
        "nvtx",
    ];
    LIBRARIES.contains(&library).then_some(library)
}

impl Facts {
    /// Each fact by its name, as `affects` conditions name them (lists joined by `, `).
    pub fn by_name(&self) -> BTreeMap<&'static str, Vec<String>> {
        let mut out = BTreeMap::new();
        let mut one = |name: &'static str, v: &Option<String>| {
            if let Some(v) = v {
                out.insert(name, vec![v.clone()]);
            }
        };
        one("driver", &self.driver);
        one("driver_cuda", &self.driver_cuda);
        one("torch", &self.torch);
        one("torch_cuda", &self.torch_cuda);
        one("cuda_toolkit", &self.cuda_toolkit);
        one("cudnn", &self.cudnn);
        one("nccl", &self.nccl);
        one("python", &self.python);
        one("os", &self.os);
        if !self.gpu.is_empty() {
            out.insert("gpu", self.gpu.clone());
        }
        if !self.compute_capability.is_empty() {
            out.insert("compute_capability", self.compute_capability.clone());
        }
        if !self.wheels_twice.is_empty() {
            out.insert("wheels_twice", self.wheels_twice.clone());
        }
        out
    }
}

fn re(pattern: &str) -> Regex {
    // Constants of this file; a typo fails every test at once.
    Regex::new(pattern).unwrap_or_else(|e| panic!("facts pattern {pattern}: {e}"))
}

/// `Key: value` lines of collect_env and `nvidia-smi -q` (collect_env's colon may be
/// full-width as some locales print it, or missing after `PyTorch version`).
static KEY_VALUE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\s*([A-Za-z][A-Za-z ./_-]*?)\s*(?:[:：]\s*(.*?)|\s+(\d.*?))\s*$"));
/// nvidia-smi's header, old and new wording.
static SMI_HEADER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"NVIDIA-SMI\s+([\d.]+)\s+(?:Driver|KMD) Version:\s*([\d.]+)\s+CUDA (?:UMD )?Version:\s*([\d.]+|N/A)",
    )
});
/// nvidia-smi's GPU rows: `|   0  NVIDIA GeForce RTX 4090    Off |`.
static SMI_GPU: LazyLock<Regex> = LazyLock::new(|| re(r"^\|\s+\d+\s+(.+?)\s+(?:On|Off)\s+\|"));
static NVCC: LazyLock<Regex> =
    LazyLock::new(|| re(r"Cuda compilation tools, release [\d.]+, V([\d.]+)"));
/// `torch==2.1.0+cu121`, `[pip3] torch==…`, `[conda] pytorch 2.1.0 py3.10_cuda12.1…`,
/// `torch   2.1.0+cu121` (pip list).
static PACKAGE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\s*(?:\[(?:pip3?|conda)\]\s+)?([A-Za-z0-9][A-Za-z0-9_.-]*)(?:==|\s+)(\d[\w.+!-]*)\s*(?:\s.*)?$",
    )
});
/// torch's own warning, which names both sides: `… with CUDA capability sm_120 is not
/// compatible …` and `The current PyTorch install supports CUDA capabilities sm_50 …`.
static CAPABILITY_OF_GPU: LazyLock<Regex> =
    LazyLock::new(|| re(r"with CUDA capability sm_(\d+)(\d)\b"));
static SUPPORTED_ARCHES: LazyLock<Regex> =
    LazyLock::new(|| re(r"supports CUDA capabilities((?:\s+(?:sm|compute)_\d+)+)"));
/// The NCCL a process loaded: PyTorch appends `NCCL version X.Y.Z` to every NCCL error
/// (`c10d/NCCLUtils.hpp`), NCCL prints `NCCL version X.Y.Z+cudaA.B` when it starts.
static NCCL_LOADED: LazyLock<Regex> = LazyLock::new(|| re(r"\bNCCL version (\d+\.\d+\.\d+)\b"));
static CUDNN_SO: LazyLock<Regex> = LazyLock::new(|| re(r"libcudnn\.so\.(\d+(?:\.\d+){1,2})"));

/// `sm_120` → `12.0`, `sm_86` → `8.6`.
fn capability(digits: &str) -> Option<String> {
    let n: u32 = digits.parse().ok()?;
    Some(format!("{}.{}", n / 10, n % 10))
}

fn set(slot: &mut Option<String>, value: &str) {
    let value = value.trim();
    if slot.is_none() && !value.is_empty() {
        *slot = Some(value.to_string());
    }
}

/// Whether collect_env could not say: `Could not collect`, `N/A`, `None`.
fn unknown(v: &str) -> bool {
    matches!(
        v.trim(),
        "" | "Could not collect" | "N/A" | "None" | "No CUDA"
    )
}

/// The facts of `text` (one report or several, in any order).
pub fn read(text: &str) -> Facts {
    let mut f = Facts::default();
    // NVIDIA library wheels, by library and then package name (collect_env lists one in
    // both `[pip3]` and `[conda]`: one package, named twice).
    let mut wheels: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut cpu_build = false;
    // cuDNN from the library lines and from the wheel, kept apart until the end: the wheel
    // wins wherever it appears in the paste.
    let mut cudnn_listed: Option<String> = None;
    let mut cudnn_wheel: Option<String> = None;
    let mut nccl_loaded: Option<String> = None;
    let mut in_gpu_list = false;
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(c) = SMI_HEADER.captures(line) {
            set(&mut f.driver, &c[2]);
            if &c[3] != "N/A" {
                set(&mut f.driver_cuda, &c[3]);
            }
            continue;
        }
        if let Some(c) = SMI_GPU.captures(line) {
            let name = c[1].trim_end_matches("...").trim();
            if !name.is_empty() && !f.gpu.iter().any(|g| g == name) {
                f.gpu.push(name.to_string());
            }
            continue;
        }
        if let Some(c) = NVCC.captures(line) {
            set(&mut f.cuda_toolkit, &c[1]);
            continue;
        }
        if let Some(c) = NCCL_LOADED.captures(line) {
            set(&mut nccl_loaded, &c[1]);
        }
        if let Some(c) = CAPABILITY_OF_GPU.captures(line)
            && let Some(cc) = capability(&format!("{}{}", &c[1], &c[2]))
            && !f.compute_capability.contains(&cc)
        {
            f.compute_capability.push(cc);
        }
        if let Some(c) = SUPPORTED_ARCHES.captures(line)
            && f.torch_arch_list.is_empty()
        {
            f.torch_arch_list = c[1]
                .split_whitespace()
                .filter_map(|a| {
                    let (kind, digits) = a.split_once('_')?;
                    let cc = capability(digits)?;
                    Some(if kind == "compute" {
                        format!("{cc}+PTX")
                    } else {
                        cc
                    })
                })
                .collect();
            f.torch_arch_list_source = Some("the report (PyTorch's own warning)".into());
        }
        // collect_env lists GPUs on the lines after "GPU models and configuration:".
        if in_gpu_list {
            if let Some(name) = line
                .strip_prefix("GPU ")
                .and_then(|r| r.split_once([':', '：']))
                .map(|(_, n)| n.trim())
            {
                if !name.is_empty() && !f.gpu.iter().any(|g| g == name) {
                    f.gpu.push(name.to_string());
                }
                continue;
            }
            in_gpu_list = false;
        }
        if let Some(c) = KEY_VALUE.captures(line) {
            let key = c[1].to_ascii_lowercase();
            let value = c
                .get(2)
                .or_else(|| c.get(3))
                .map_or("", |m| m.as_str().trim());
            match key.as_str() {
                "pytorch version" => set(&mut f.torch, value),
                "cuda used to build pytorch" => {
                    if unknown(value) {
                        cpu_build = true;
                    } else {
                        set(&mut f.torch_cuda, value);
                    }
                }
                "cuda runtime version" if !unknown(value) => set(&mut f.cuda_toolkit, value),
                "nvidia driver version" | "driver version" if !unknown(value) => {
                    set(&mut f.driver, value);
                }
                "cuda version" if !unknown(value) => set(&mut f.driver_cuda, value),
                "product name" if !f.gpu.iter().any(|g| g == value) => {
                    f.gpu.push(value.to_string());
                }
                "gpu models and configuration" => {
                    in_gpu_list = true;
                    if let Some(name) = value
                        .strip_prefix("GPU ")
                        .and_then(|r| r.split_once([':', '：']))
                        .map(|(_, n)| n.trim())
                        && !name.is_empty()
                        && !f.gpu.iter().any(|g| g == name)
                    {
                        f.gpu.push(name.to_string());
                    }
                }
                "cudnn version" => {
                    if let Some(c) = CUDNN_SO.captures(value) {
                        set(&mut cudnn_listed, &c[1]);
                    } else if !unknown(value) && value.starts_with(|c: char| c.is_ascii_digit()) {
                        set(&mut cudnn_listed, value);
                    }
                }
                "python version" => {
                    set(&mut f.python, value.split_whitespace().next().unwrap_or(""));
                }
                "os" => set(&mut f.os, value),
                _ => {}
            }
        }
        // cuDNN's candidates are listed on the lines after "Probably one of the following:".
        if cudnn_listed.is_none()
            && let Some(c) = CUDNN_SO.captures(line)
        {
            set(&mut cudnn_listed, &c[1]);
        }
        if let Some(c) = PACKAGE.captures(line) {
            let (name, version) = (c[1].to_ascii_lowercase(), &c[2]);
            match name.as_str() {
                "torch" => set(&mut f.torch, version),
                n if n.starts_with("nvidia-nccl-cu") => set(&mut f.nccl, version),
                n if n.starts_with("nvidia-cudnn-cu") => set(&mut cudnn_wheel, version),
                _ => {}
            }
            // Wheel names compare after PEP 503 normalisation (`nvidia_nccl_cu12`).
            let name = name.replace(['_', '.'], "-");
            if let Some(library) = nvidia_library(&name) {
                wheels
                    .entry(library.to_string())
                    .or_default()
                    .entry(name)
                    .or_insert_with(|| version.to_string());
            }
        }
    }
    // Measured on an H200 machine (2026-11-26): collect_env listed the system's
    // libcudnn.so.9.14.0 while torch.backends.cudnn.version() said 91900, the
    // nvidia-cudnn-cu13 9.19.0.56 wheel also in the report.
    match (cudnn_wheel, cudnn_listed) {
        (Some(wheel), listed) => {
            f.cudnn_system = listed.filter(|l| !same_release(l, &wheel));
            f.cudnn = Some(wheel);
        }
        (None, listed) => f.cudnn = listed,
    }
    if nccl_loaded.is_some() {
        f.nccl = nccl_loaded;
    }
    // The build in the version (`+cu126`, `+cpu`) is the wheel's own word.
    if let Some(torch) = &f.torch
        && let Some((_, local)) = torch.split_once('+')
    {
        if local == "cpu" {
            cpu_build = true;
        } else if let Some(digits) = local.strip_prefix("cu")
            && f.torch_cuda.is_none()
            && digits.len() >= 3
        {
            let (major, minor) = digits.split_at(digits.len() - 1);
            f.torch_cuda = Some(format!("{major}.{minor}"));
        }
    }
    if cpu_build && f.torch.is_some() && f.torch_cuda.is_none() {
        f.torch_cuda = Some("none".into());
    }
    for installed in wheels.values() {
        for (name, version) in installed {
            f.nvidia_wheels.insert(name.clone(), version.clone());
        }
    }
    for (library, installed) in wheels {
        if installed.len() > 1 {
            f.wheels_twice.push(library);
            f.wheels_twice_installed.extend(
                installed
                    .iter()
                    .map(|(name, version)| format!("{name}=={version}")),
            );
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_library_as_two_wheels() {
        // rwth-i6/returnn#1802's collect_env (undefined symbol: ncclMemFree), with the
        // same wheel listed again under [conda] and CUDA 13's unsuffixed names.
        let text = "[pip3] nvidia-nccl-cu11==2.14.3\n[pip3] nvidia-nccl-cu12==2.27.3\n\
            [conda] nvidia-nccl-cu12          2.27.3                   pypi_0    pypi\n\
            [pip3] nvidia-cublas==13.4.0.1\n[pip3] nvidia_cublas_cu12==12.9.1.4\n\
            [pip3] nvidia-cudnn-cu12==9.10.2.21\n[pip3] nvidia-ml-py==12.570.86\n\
            [pip3] nvidia-nvml-dev-cu12==12.4.127\n";
        let f = read(text);
        assert_eq!(f.wheels_twice, ["cublas", "nccl"]);
        assert_eq!(
            f.wheels_twice_installed,
            [
                "nvidia-cublas==13.4.0.1",
                "nvidia-cublas-cu12==12.9.1.4",
                "nvidia-nccl-cu11==2.14.3",
                "nvidia-nccl-cu12==2.27.3"
            ]
        );
        assert_eq!(
            nvidia_library("nvidia-cuda-runtime-cu12"),
            Some("cuda-runtime")
        );
        assert_eq!(nvidia_library("nvidia-ml-py"), None);
        assert!(
            read("[pip3] nvidia-nccl-cu12==2.21.5\n")
                .wheels_twice
                .is_empty()
        );
    }

    #[test]
    fn collect_env_nvidia_smi_and_pip_in_one_paste() {
        let text = "PyTorch version: 2.6.0+cu126\nCUDA used to build PyTorch: 12.6\n\
            OS: Ubuntu 24.10 (x86_64)\nPython version: 3.12.9 | packaged by Anaconda\n\
            GPU models and configuration: GPU 0: NVIDIA GeForce RTX 5090 D\n\
            Nvidia driver version: 570.124.04\n\
            cuDNN version: Probably one of the following:\n/usr/lib/x86_64-linux-gnu/libcudnn.so.9.8.0\n\
            [pip3] nvidia-nccl-cu12==2.21.5\n\
            | NVIDIA-SMI 570.133.20   Driver Version: 570.133.20   CUDA Version: 12.8     |\n\
            |   0  NVIDIA L4                      On  |   00000000:00:03.0 Off |                    0 |\n";
        let f = read(text);
        assert_eq!(f.torch.as_deref(), Some("2.6.0+cu126"));
        assert_eq!(f.torch_cuda.as_deref(), Some("12.6"));
        assert_eq!(f.driver.as_deref(), Some("570.124.04"));
        assert_eq!(f.driver_cuda.as_deref(), Some("12.8"));
        assert_eq!(f.gpu, ["NVIDIA GeForce RTX 5090 D", "NVIDIA L4"]);
        assert_eq!(f.cudnn.as_deref(), Some("9.8.0"));
        assert_eq!(f.nccl.as_deref(), Some("2.21.5"));
        assert_eq!(f.python.as_deref(), Some("3.12.9"));
    }

    #[test]
    fn the_cudnn_wheel_is_what_torch_loads_and_a_different_system_cudnn_is_kept_apart() {
        // The library lines come first in collect_env, the wheel in its [pip3] block.
        let text = "cuDNN version: Probably one of the following:\n\
            /usr/lib/x86_64-linux-gnu/libcudnn.so.9.14.0\n\
            /usr/lib/x86_64-linux-gnu/libcudnn_adv.so.9.14.0\n\
            [pip3] nvidia-cudnn-cu13==9.19.0.56\n";
        let f = read(text);
        assert_eq!(f.cudnn.as_deref(), Some("9.19.0.56"));
        assert_eq!(f.cudnn_system.as_deref(), Some("9.14.0"));
        // The same release on both sides is one cuDNN.
        let f = read("cuDNN version: /usr/lib/libcudnn.so.9.19.0\nnvidia-cudnn-cu12==9.19.0.56\n");
        assert_eq!(f.cudnn.as_deref(), Some("9.19.0.56"));
        assert_eq!(f.cudnn_system, None);
        assert!(!same_release("9.1", "9.19.0.56"));
        assert!(same_release("9.19", "9.19.0.56"));
    }

    #[test]
    fn the_nccl_a_process_loaded_wins_over_the_wheel() {
        // PyTorch's error suffix and NCCL's banner; the wheel listed before either.
        let text = "[pip3] nvidia-nccl-cu12==2.19.3\n\
            RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:1333, unhandled system error, NCCL version 2.18.1\n\
            NCCL version 2.18.5+cuda11.8\n";
        assert_eq!(read(text).nccl.as_deref(), Some("2.18.1"));
        let banner = "node:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n";
        assert_eq!(read(banner).nccl.as_deref(), Some("2.21.5"));
        // NCCL_VERSION, a two-part number and the wheel alone are not a loaded version.
        let f = read("NCCL_VERSION=2.18.1\nNCCL version 2.18\nnvidia-nccl-cu12==2.19.3\n");
        assert_eq!(f.nccl.as_deref(), Some("2.19.3"));
    }

    #[test]
    fn a_cpu_build_is_torch_cuda_none() {
        let f = read("PyTorch version: 2.2.2\nCUDA used to build PyTorch: Could not collect\n");
        assert_eq!(f.torch_cuda.as_deref(), Some("none"));
        let f = read("torch==2.3.0+cpu\n");
        assert_eq!(f.torch_cuda.as_deref(), Some("none"));
        let f = read("torch                    2.1.0+cu121\n");
        assert_eq!(f.torch_cuda.as_deref(), Some("12.1"));
        assert_eq!(read("nothing here\n"), Facts::default());
    }
}
