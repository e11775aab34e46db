//! `cargo xtask py-wheel [--out DIR]`: the Python package `errata` (`crates/errata-py`)
//! as a wheel with the knowledge base inside.
//!
//! 1. `errata bundle` writes the bundle of `data/` (checked first: data with errors is
//!    never shipped) into a scratch directory, and the `.tar.gz` alone is copied into
//!    `crates/errata-py/python/errata/data/` (ignored by git), replacing what was there.
//! 2. The release `errata` binary that wrote it, stripped, is copied into
//!    `crates/errata-py/python/errata/bin/` (ignored by git): the wheel's `errata`
//!    command runs it, so `pipx install errata` gives the CLI too.
//!    The code's licence files and the data licence go into `python/errata/licences/`.
//! 3. `python3 -m maturin build --release` builds the wheel into `DIR` (default
//!    `target/wheels`). The extension module is outside the workspace (it links against
//!    no libpython), but it is built in the workspace's target directory, right after
//!    the binary: with the same versions, features and profile (crates/errata-py's
//!    Cargo.toml), the crates both use are compiled once.
//!
//! maturin comes from PyPI (`python3 -m pip install maturin`); `.ci/run` installs it.
//! `PYTHON` names another interpreter (`.github/workflows/release.yml` on Windows).

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail, ensure};

const USAGE: &str = "usage: cargo xtask py-wheel [--out DIR]

Writes the bundle of data/ into crates/errata-py/python/errata/data/ and builds the
Python wheel with maturin into DIR (default target/wheels).";

pub fn run(args: &[String]) -> Result<()> {
    let root = crate::repo_root();
    let mut out = root.join("target/wheels");
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--out" => out = PathBuf::from(it.next().context("--out needs a DIR")?),
            "-h" | "--help" => {
                println!("{USAGE}");
                return Ok(());
            }
            other => bail!("unknown argument `{other}`\n\n{USAGE}"),
        }
    }
    let package = root.join("crates/errata-py");
    let data = package.join("python/errata/data");
    write_bundle(&root, &data)?;
    copy_binary(&root, &package.join("python/errata/bin"))?;
    copy_licences(&root, &package.join("python/errata/licences"))?;

    // `PYTHON` names the interpreter where it is not `python3` (Windows: `python`).
    let python = std::env::var_os("PYTHON").unwrap_or_else(|| "python3".into());
    let mut maturin = Command::new(&python);
    crate::without_cargo_run_env(&mut maturin);
    let status = maturin
        .args(["-m", "maturin", "build", "--release", "--out"])
        .arg(&out)
        .arg("--manifest-path")
        .arg(package.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", target_dir(&root))
        .status()
        .context("cannot run `python3 -m maturin` (python3 -m pip install maturin)")?;
    ensure!(status.success(), "maturin build failed ({status})");
    println!("wheel in {}", out.display());
    Ok(())
}

/// The release binary `write_bundle` ran, stripped of its line tables where `strip`
/// exists (158 MB → 27 MB), alone in `dest` (emptied first), executable.
fn copy_binary(root: &Path, dest: &Path) -> Result<()> {
    let name = if cfg!(windows) {
        "errata.exe"
    } else {
        "errata"
    };
    let built = target_dir(root).join("release").join(name);
    ensure!(built.is_file(), "{} is missing", built.display());
    if dest.exists() {
        std::fs::remove_dir_all(dest)
            .with_context(|| format!("cannot empty {}", dest.display()))?;
    }
    std::fs::create_dir_all(dest).with_context(|| format!("cannot create {}", dest.display()))?;
    let target = dest.join(name);
    let stripped = Command::new("strip")
        .arg("-o")
        .arg(&target)
        .arg(&built)
        .status()
        .is_ok_and(|s| s.success());
    if !stripped {
        std::fs::copy(&built, &target)
            .with_context(|| format!("cannot copy {} into {}", built.display(), dest.display()))?;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// Where cargo builds the workspace: `CARGO_TARGET_DIR` when set, else `target/`.
fn target_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root.join("target"), PathBuf::from)
}

/// The code's licences and the knowledge base's (`data/LICENSE`, CC BY 4.0) into `dest`
/// (replaced), so the wheel carries what it is licensed under.
fn copy_licences(root: &Path, dest: &Path) -> Result<()> {
    if dest.exists() {
        std::fs::remove_dir_all(dest)
            .with_context(|| format!("cannot empty {}", dest.display()))?;
    }
    std::fs::create_dir_all(dest).with_context(|| format!("cannot create {}", dest.display()))?;
    for (from, to) in [
        ("LICENSE-MIT", "LICENSE-MIT"),
        ("LICENSE-APACHE", "LICENSE-APACHE"),
        ("data/LICENSE", "LICENSE-DATA"),
    ] {
        std::fs::copy(root.join(from), dest.join(to))
            .with_context(|| format!("cannot copy {from} into {}", dest.display()))?;
    }
    Ok(())
}

/// The bundle of `data/`, alone, in `dest` (emptied first).
fn write_bundle(root: &Path, dest: &Path) -> Result<()> {
    let scratch = tempfile::tempdir().context("cannot create a temporary directory")?;
    let status = crate::cargo()
        .args([
            "run",
            "--quiet",
            "--release",
            "-p",
            "errata",
            "--",
            "bundle",
            "--out",
        ])
        .arg(scratch.path())
        .current_dir(root)
        .status()
        .context("cannot run `cargo run -p errata -- bundle`")?;
    ensure!(
        status.success(),
        "`errata bundle` failed ({status}): fix data/ first"
    );
    let bundle = std::fs::read_dir(scratch.path())?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.to_string_lossy().ends_with(".tar.gz"))
        .context("`errata bundle` wrote no .tar.gz")?;
    if dest.exists() {
        std::fs::remove_dir_all(dest)
            .with_context(|| format!("cannot empty {}", dest.display()))?;
    }
    std::fs::create_dir_all(dest).with_context(|| format!("cannot create {}", dest.display()))?;
    let name = bundle.file_name().context("bundle without a name")?;
    std::fs::copy(&bundle, dest.join(name))
        .with_context(|| format!("cannot copy the bundle into {}", dest.display()))?;
    Ok(())
}
