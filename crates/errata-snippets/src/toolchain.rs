//! The CUDA toolchain of the compile tier: nvcc and friends from NVIDIA's pip wheels,
//! pinned, installed with `pip install --target` into a cache directory on first use.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The CUDA release every wheel is pinned to: the versions NVIDIA's `cuda-toolkit`
/// metapackage on PyPI requires for this release (`Requires-Dist` of
/// `cuda-toolkit==13.5.0`), so nvcc, its front end, NVVM, the runtime and CCCL match.
pub const CUDA_RELEASE: &str = "13.5.0";

/// nvcc's, NVVM's, crt's and the runtime's version in [`CUDA_RELEASE`]. The compile tier
/// and `cargo xtask gen-cuda-errors` (the `cudaError_t` table of `errata-model`) both
/// use it, so the error names errata checks and the library that prints them agree.
pub const CUDA_WHEEL_VERSION: &str = "13.5.37";

/// CCCL's wheel in [`CUDA_RELEASE`]: since CUDA 13.3 it is versioned on its own
/// (`13.<CCCL version>`, here CCCL 3.5.0), so it cannot share [`CUDA_WHEEL_VERSION`].
pub const CCCL_WHEEL_VERSION: &str = "13.3.5.0.6";

/// The wheels and their versions, all of [`CUDA_RELEASE`].
pub const CUDA_WHEELS: &[(&str, &str)] = &[
    ("nvidia-cuda-nvcc", CUDA_WHEEL_VERSION),
    ("nvidia-nvvm", CUDA_WHEEL_VERSION),
    ("nvidia-cuda-crt", CUDA_WHEEL_VERSION),
    ("nvidia-cuda-cccl", CCCL_WHEEL_VERSION),
    ("nvidia-cuda-runtime", CUDA_WHEEL_VERSION),
];

/// compute-sanitizer's wheel in [`CUDA_RELEASE`] (versioned on its own).
pub const SANITIZER_WHEEL: &str = "nvidia-cuda-sanitizer-api==13.5.25";

/// The GPU architecture snippets are compiled for (H100/H200).
pub const ARCH: &str = "sm_90";

/// An installed toolchain.
#[derive(Debug, Clone)]
pub struct Toolchain {
    /// `<cache>/cuda-<version>/nvidia/cu13`: `bin/`, `include/`, `lib/`.
    pub root: PathBuf,
    /// `nvcc --version`'s release line, e.g. `Cuda compilation tools, release 13.5, V13.5.37`.
    pub nvcc_version: String,
    /// `<cache>/cuda-<version>/link`: `libcudart.so`, the link-time name of the runtime.
    pub link_dir: PathBuf,
}

/// The cache directory: `$ERRATA_CACHE_DIR`, else `<repo>/.errata-cache`.
pub fn default_cache_dir(repo_root: &Path) -> PathBuf {
    std::env::var_os("ERRATA_CACHE_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root.join(".errata-cache"))
}

impl Toolchain {
    /// The toolchain in `cache_dir`, installing the wheels first if needed (network).
    pub fn ensure(cache_dir: &Path) -> Result<Toolchain, String> {
        let dir = cache_dir.join(format!("cuda-{CUDA_WHEEL_VERSION}"));
        if !dir.join("nvidia/cu13/bin/nvcc").exists() {
            let specs: Vec<String> = CUDA_WHEELS
                .iter()
                .map(|(wheel, version)| format!("{wheel}=={version}"))
                .collect();
            install(cache_dir, &dir, &specs, "nvidia/cu13/bin/nvcc")?;
        }
        Toolchain::at(&dir)
    }

    /// An already installed toolchain (no network).
    pub fn at(dir: &Path) -> Result<Toolchain, String> {
        let root = dir.join("nvidia/cu13");
        let nvcc = root.join("bin/nvcc");
        let out = Command::new(&nvcc)
            .arg("--version")
            .output()
            .map_err(|e| format!("cannot run {}: {e}", nvcc.display()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        let nvcc_version = text
            .lines()
            .find(|l| l.contains("release"))
            .unwrap_or("unknown")
            .trim()
            .to_string();
        let link_dir = dir.join("link");
        let link = link_dir.join("libcudart.so");
        if std::fs::symlink_metadata(&link).is_err() {
            std::fs::create_dir_all(&link_dir)
                .map_err(|e| format!("cannot create {}: {e}", link_dir.display()))?;
            let target = Path::new("../nvidia/cu13/lib").join(crate::pack::RUNTIME_LIB);
            // A parallel caller may have made it first: only a missing link is an error.
            if let Err(e) = std::os::unix::fs::symlink(&target, &link)
                && std::fs::symlink_metadata(&link).is_err()
            {
                return Err(format!("cannot create {}: {e}", link.display()));
            }
        }
        Ok(Toolchain {
            root,
            nvcc_version,
            link_dir,
        })
    }

    /// `bin/nvcc`.
    pub fn nvcc(&self) -> PathBuf {
        self.root.join("bin/nvcc")
    }

    /// `nvcc` with the flags every snippet is compiled with.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(self.nvcc());
        // `-arch=sm_90` puts sm_90 machine code (SASS) in the binary, beside compute_90
        // PTX: on an H100/H200 nothing is JIT-compiled, so a driver older than this
        // nvcc still runs it (minor-version compatibility covers SASS, not newer PTX).
        cmd.arg(format!("-arch={ARCH}"))
            .arg("-std=c++17")
            // The wheels put libraries in `lib` (nvcc looks in `lib64`).
            .arg(format!("-L{}", self.root.join("lib").display()))
            // `-cudart=shared` links `-lcudart`, which needs a `libcudart.so`; the wheel
            // has only `libcudart.so.13`, so [`Toolchain::at`] makes the link name.
            .arg(format!("-L{}", self.link_dir.display()))
            .arg("-cudart=shared");
        cmd
    }

    /// What a linked program adds after its sources: a RUNPATH under which the pack's
    /// `lib/` holds the shared CUDA runtime for every binary (68 static copies, one
    /// per binary, were 74 MiB).
    pub fn link_args(&self) -> Vec<std::ffi::OsString> {
        vec!["-Xlinker".into(), "-rpath=$ORIGIN/../lib".into()]
    }
}

/// compute-sanitizer's directory (`…/nvidia/cu13/compute-sanitizer`: the tool and the
/// libraries it loads), installing its wheel into `cache_dir` first if needed (network).
/// It runs only on a GPU machine; the runner pack carries the directory there.
pub fn ensure_sanitizer(cache_dir: &Path) -> Result<PathBuf, String> {
    let version = SANITIZER_WHEEL.rsplit("==").next().unwrap_or("unknown");
    let dir = cache_dir.join(format!("compute-sanitizer-{version}"));
    // The 13.5 wheel's `bin/compute-sanitizer` is a shell script that runs
    // `../compute-sanitizer/compute-sanitizer`, the real tool, next to its libraries.
    let tool = "nvidia/cu13/compute-sanitizer/compute-sanitizer";
    if !dir.join(tool).exists() {
        install(cache_dir, &dir, &[SANITIZER_WHEEL.to_string()], tool)?;
    }
    Ok(dir.join("nvidia/cu13/compute-sanitizer"))
}

fn install(cache_dir: &Path, dir: &Path, specs: &[String], marker: &str) -> Result<(), String> {
    std::fs::create_dir_all(cache_dir)
        .map_err(|e| format!("cannot create {}: {e}", cache_dir.display()))?;
    // Install into a private directory and rename it into place, so concurrent
    // installers (parallel tests) never see a half-installed toolchain.
    let tmp = tempfile::Builder::new()
        .prefix(".cuda-install-")
        .tempdir_in(cache_dir)
        .map_err(|e| format!("cannot create a temp dir in {}: {e}", cache_dir.display()))?;
    let out = Command::new("python3")
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-deps",
            "--only-binary=:all:",
        ])
        .arg("--target")
        .arg(tmp.path())
        .args(specs)
        .output()
        .map_err(|e| format!("cannot run `python3 -m pip`: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "pip install {} failed: {}",
            specs.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let staged = tmp.keep();
    if std::fs::rename(&staged, dir).is_err() {
        // Another installer won the race; use theirs.
        let _ = std::fs::remove_dir_all(&staged);
        if !dir.join(marker).exists() {
            return Err(format!(
                "could not install {} into {}",
                specs.join(" "),
                dir.display()
            ));
        }
    }
    Ok(())
}
