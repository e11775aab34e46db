//! NVIDIA's pip wheels as the source of headers: a pinned wheel (name, version, file,
//! sha256) is downloaded with `python3 -m pip download`, verified, and one header read
//! out of it with Python's `zipfile` (no zip or HTTP crate needed).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, ensure};

/// A wheel on PyPI pinned to one file.
#[derive(Debug, Clone, Copy)]
pub struct PinnedWheel {
    /// The distribution, e.g. `nvidia-cuda-runtime`.
    pub package: &'static str,
    /// Its pinned version.
    pub version: &'static str,
    /// The platform tag `pip download --platform` asks for. Headers are the same on every
    /// platform; one is pinned so that the file, and its hash, are one.
    pub platform: &'static str,
    /// The wheel's file name as published on PyPI.
    pub file: &'static str,
    /// sha256 of [`PinnedWheel::file`].
    pub sha256: &'static str,
}

impl PinnedWheel {
    /// What a generated table records as its source.
    pub fn label(&self, member: &str) -> String {
        format!("{} {} ({member})", self.package, self.version)
    }
}

/// `$ERRATA_CACHE_DIR/<leaf>`, or `<repo>/.errata-cache/<leaf>`.
pub fn cache_dir(root: &Path, leaf: &str) -> PathBuf {
    match std::env::var_os("ERRATA_CACHE_DIR") {
        Some(dir) if !dir.is_empty() => PathBuf::from(dir).join(leaf),
        _ => root.join(".errata-cache").join(leaf),
    }
}

/// Wheels up to this size stay in the cache after a header was read from them.
const KEEP_WHEELS_UP_TO: u64 = 64 << 20;

/// The text of `member` (a header) inside `wheel`.
///
/// Headers read once are kept in `<cache>/headers/<sha256 of the wheel>/`, and a large
/// wheel is deleted after it was read: the cuBLAS, cuDNN and NCCL wheels are hundreds of
/// megabytes of libraries around a few kilobytes of header, and CI disks are small.
pub fn header(root: &Path, wheel: &PinnedWheel, member: &str) -> Result<String> {
    let kept = cache_dir(root, "headers")
        .join(wheel.sha256)
        .join(member.replace('/', "__"));
    if let Ok(text) = std::fs::read_to_string(&kept) {
        return Ok(text);
    }
    let wheels = cache_dir(root, "wheels");
    let path = fetch(&wheels, wheel)?;
    let text = read_from_zip(&path, member)?;
    if let Some(dir) = kept.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    // Written under a temporary name and renamed: a reader never sees half a header.
    let partial = kept.with_extension("partial");
    std::fs::write(&partial, &text)
        .with_context(|| format!("cannot write {}", partial.display()))?;
    std::fs::rename(&partial, &kept).with_context(|| format!("cannot write {}", kept.display()))?;
    // Best effort: a wheel left behind is only disk space. Small wheels (the runtime's,
    // with two headers read from it) are kept.
    if std::fs::metadata(&path).is_ok_and(|m| m.len() > KEEP_WHEELS_UP_TO) {
        let _ = std::fs::remove_file(&path);
    }
    Ok(text)
}

/// Returns the path of the pinned wheel in `cache`, downloading it when it is missing,
/// and verifies its sha256 either way.
pub fn fetch(cache: &Path, wheel: &PinnedWheel) -> Result<PathBuf> {
    let PinnedWheel {
        package,
        version,
        platform,
        file,
        sha256,
    } = *wheel;
    let path = cache.join(file);
    if !path.is_file() {
        std::fs::create_dir_all(cache)
            .with_context(|| format!("cannot create cache directory {}", cache.display()))?;
        eprintln!("downloading {package}=={version} into {}", cache.display());
        let status = Command::new("python3")
            .args(["-m", "pip", "download", "--no-deps", "--only-binary=:all:"])
            .args(["--platform", platform, "--disable-pip-version-check"])
            .arg(format!("{package}=={version}"))
            .arg("-d")
            .arg(cache)
            .status()
            .context("cannot run `python3 -m pip` (is Python 3 with pip installed?)")?;
        ensure!(
            status.success(),
            "`python3 -m pip download {package}=={version}` failed ({status}); \
             to work offline pass --header PATH"
        );
        ensure!(
            path.is_file(),
            "pip did not leave {file} in {}",
            cache.display()
        );
    }
    let digest = sha256_file(&path)?;
    ensure!(
        digest == sha256,
        "{} has sha256 {digest}, expected {sha256}; delete it to download it again",
        path.display()
    );
    Ok(path)
}

/// Runs a short Python program and returns its standard output.
pub fn python(program: &str, args: &[&std::ffi::OsStr]) -> Result<Vec<u8>> {
    let output = Command::new("python3")
        .arg("-c")
        .arg(program)
        .args(args)
        .output()
        .context("cannot run `python3`")?;
    ensure!(
        output.status.success(),
        "python3 failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr).trim()
    );
    Ok(output.stdout)
}

pub fn sha256_file(path: &Path) -> Result<String> {
    const PROGRAM: &str = "import hashlib, sys\n\
        print(hashlib.sha256(open(sys.argv[1], 'rb').read()).hexdigest())";
    let out = python(PROGRAM, &[path.as_os_str()])
        .with_context(|| format!("hashing {}", path.display()))?;
    Ok(String::from_utf8_lossy(&out).trim().to_owned())
}

/// Reads one member of a zip archive (a wheel) as UTF-8 text.
pub fn read_from_zip(archive: &Path, member: &str) -> Result<String> {
    const PROGRAM: &str = "import sys, zipfile\n\
        sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read(sys.argv[2]))";
    let bytes = python(PROGRAM, &[archive.as_os_str(), member.as_ref()])
        .with_context(|| format!("reading {member} from {}", archive.display()))?;
    String::from_utf8(bytes).with_context(|| format!("{member} is not UTF-8"))
}
