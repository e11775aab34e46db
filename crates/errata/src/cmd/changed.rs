//! `errata check --changed [REV]`: which files of the data directory differ from REV.
//!
//! A pull request touches a few entries of a large knowledge base; its check should
//! report on those files (with every reference still resolved against the whole corpus,
//! which `check` loads anyway). The files are what `git` says differs between REV and the
//! working tree (committed, staged or not), plus untracked files that are not ignored.
//! REV defaults to the merge base of `HEAD` with the default branch (`origin/HEAD`, else
//! the first of `origin/main`, `origin/master`, `main`, `master` that exists), which is
//! what a pull request's diff is computed against.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context as _, Result, bail};

/// The files of a data directory that differ from a revision.
#[derive(Debug)]
pub struct Changed {
    /// The commit compared against (as given or found).
    pub base: String,
    /// Added, modified or untracked files, as paths under the data directory as given.
    pub files: Vec<PathBuf>,
    /// Deleted files, the same way.
    pub deleted: Vec<PathBuf>,
}

/// Runs `git args…` in `dir` and returns its standard output.
fn git(dir: &Path, args: &[&str]) -> Result<Vec<u8>> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .context("cannot run `git` (is it installed and on PATH?)")?;
    if !out.status.success() {
        let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
        match why.is_empty() {
            true => bail!("`git {}` failed", args.join(" ")),
            false => bail!("`git {}` failed: {why}", args.join(" ")),
        }
    }
    Ok(out.stdout)
}

fn git_line(dir: &Path, args: &[&str]) -> Result<String> {
    Ok(String::from_utf8_lossy(&git(dir, args)?).trim().to_string())
}

/// The default branch to compare a pull request against.
fn default_branch(top: &Path) -> Result<String> {
    if let Ok(head) = git_line(
        top,
        &["symbolic-ref", "-q", "--short", "refs/remotes/origin/HEAD"],
    ) && !head.is_empty()
    {
        return Ok(head);
    }
    for candidate in ["origin/main", "origin/master", "main", "master"] {
        let spec = format!("{candidate}^{{commit}}");
        if git(top, &["rev-parse", "--verify", "-q", &spec]).is_ok() {
            return Ok(candidate.to_string());
        }
    }
    bail!(
        "no default branch found (origin/HEAD, origin/main, origin/master, main, master): name the revision, `errata check --changed REV`"
    )
}

/// The files of `data_dir` that differ from `rev` (or the merge base with the default
/// branch).
pub fn changed(data_dir: &Path, rev: Option<&str>) -> Result<Changed> {
    let data_abs = data_dir
        .canonicalize()
        .with_context(|| format!("cannot read {}", data_dir.display()))?;
    let top = PathBuf::from(
        git_line(&data_abs, &["rev-parse", "--show-toplevel"])
            .with_context(|| format!("{} is not in a git repository", data_dir.display()))?,
    );
    let top = top.canonicalize().unwrap_or(top);
    let base = match rev {
        Some(rev) => {
            let spec = format!("{rev}^{{commit}}");
            git_line(&top, &["rev-parse", "--verify", "-q", &spec])
                .with_context(|| format!("`{rev}` is not a commit of this repository"))?
        }
        None => {
            let branch = default_branch(&top)?;
            git_line(&top, &["merge-base", "HEAD", &branch])
                .with_context(|| format!("no merge base of HEAD and {branch}"))?
        }
    };
    let mut files = Vec::new();
    let mut deleted = Vec::new();
    // `--name-status -z`: status NUL path NUL …; renames are split into delete + add.
    let diff = git(
        &top,
        &["diff", "--name-status", "-z", "--no-renames", &base, "--"],
    )?;
    let mut fields = diff.split(|b| *b == 0).filter(|f| !f.is_empty());
    while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
        let path = String::from_utf8_lossy(path);
        if status.first() == Some(&b'D') {
            deleted.push(path.into_owned());
        } else {
            files.push(path.into_owned());
        }
    }
    let untracked = git(&top, &["ls-files", "-z", "--others", "--exclude-standard"])?;
    files.extend(
        untracked
            .split(|b| *b == 0)
            .filter(|f| !f.is_empty())
            .map(|f| String::from_utf8_lossy(f).into_owned()),
    );
    // Repository-relative paths → paths under the data directory as the user named it,
    // so diagnostics print as in a plain `errata check`.
    let under_data = |rel: &str| -> Option<PathBuf> {
        let inside = top.join(rel).strip_prefix(&data_abs).ok()?.to_path_buf();
        Some(data_dir.join(inside))
    };
    let mut files: Vec<PathBuf> = files.iter().filter_map(|f| under_data(f)).collect();
    let mut deleted: Vec<PathBuf> = deleted.iter().filter_map(|f| under_data(f)).collect();
    files.sort();
    files.dedup();
    deleted.sort();
    Ok(Changed {
        base,
        files,
        deleted,
    })
}

/// What a deleted file was known by: its id (`cuda/x` for `signatures/cuda/x.json`)
/// and its file name (as links name it), to find the references to it
/// that other, unchanged files now hold.
pub fn deleted_names(data_dir: &Path, deleted: &[PathBuf]) -> Vec<String> {
    let mut out = Vec::new();
    for path in deleted {
        let Ok(rel) = path.strip_prefix(data_dir) else {
            continue;
        };
        let parts: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        match parts.as_slice() {
            [kind, domain, file] if kind == "signatures" => {
                if let Some(slug) = file.strip_suffix(".json") {
                    out.push(format!("`{domain}/{slug}`"));
                }
                out.push(file.clone());
            }
            [kind, domain, file] if kind == "articles" => {
                if let Some(slug) = file.strip_suffix(".md") {
                    out.push(format!("`{domain}/{slug}`"));
                }
                out.push(file.clone());
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deleted_files_are_known_by_their_id_and_name() {
        let data = Path::new("data");
        let names = deleted_names(
            data,
            &[
                data.join("signatures/cuda/misaligned-address.json"),
                data.join("articles/cuda/sticky-errors.md"),
                data.join("runs/abc.json"),
            ],
        );
        assert_eq!(
            names,
            [
                "`cuda/misaligned-address`",
                "misaligned-address.json",
                "`cuda/sticky-errors`",
                "sticky-errors.md"
            ]
        );
    }
}
