//! Which snippets may run: the trust gate of the run tier.
//!
//! Running a snippet runs code that anyone who opened a pull request may have written, so
//! the run tier (and a runner pack, which exists to be run) takes only snippets that are
//! trusted: all of them with [`Trust::All`] (`--trusted`, after a maintainer reviewed
//! them), or those an [`AllowList`] names (`--allow FILE`, e.g. the list of the base
//! branch, not of the pull request). The static and compile tiers never execute snippet
//! code and need no trust.
//!
//! An allow-list file has one entry per line; `#` starts a comment (at the start of a
//! line or after a space); blank lines are skipped. An entry is either
//!
//! - `sha256:<64 hex digits>` (or the 64 digits alone): the program with that hash, the
//!   one run records hold; editing the snippet changes its hash, so the edited snippet
//!   is no longer allowed, or
//! - a glob over data-relative paths (`articles/cuda/*.md`, `signatures/**`; `*` stays
//!   within one `/` component, `**` crosses them): every snippet of the matching files,
//!   *whatever they contain*, so use paths only for files whose changes are reviewed
//!   before the list is used, and hashes for pull requests.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use errata_model::snippet::Lang;
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::extract::{Snippet, programs};

/// Whose snippets may run.
#[derive(Debug, Clone, Default)]
pub enum Trust {
    /// None: the run tier refuses every snippet (the default).
    #[default]
    Nobody,
    /// Every snippet (`--trusted`).
    All,
    /// Those the list names (`--allow FILE`).
    Listed(AllowList),
}

impl Trust {
    /// Whether the program of `data_file` (data-relative, `/`-separated) with code hash
    /// `sha256` may run.
    pub fn allows(&self, data_file: &str, sha256: &str) -> bool {
        match self {
            Trust::Nobody => false,
            Trust::All => true,
            Trust::Listed(list) => list.allows(data_file, sha256),
        }
    }

    /// Why a program is refused, for its verdict.
    pub fn refusal(&self, sha256: &str) -> String {
        match self {
            Trust::All => String::new(),
            Trust::Nobody => {
                "not run: snippet code runs only when trusted (--trusted after review, or --allow FILE)"
                    .into()
            }
            Trust::Listed(list) => format!(
                "not run: not in the allow-list {} (sha256:{sha256}); review it, then add the hash or pass --trusted",
                list.source.display()
            ),
        }
    }
}

/// A parsed allow-list file.
#[derive(Debug, Clone)]
pub struct AllowList {
    source: PathBuf,
    hashes: BTreeSet<String>,
    paths: GlobSet,
    path_count: usize,
}

impl AllowList {
    /// Reads an allow-list file.
    pub fn load(path: &Path) -> Result<AllowList, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        AllowList::parse(&text, path)
    }

    /// Parses allow-list text; `source` names it in messages.
    pub fn parse(text: &str, source: &Path) -> Result<AllowList, String> {
        let mut hashes = BTreeSet::new();
        let mut globs = GlobSetBuilder::new();
        let mut path_count = 0;
        for (n, raw) in text.lines().enumerate() {
            let line = strip_comment(raw).trim();
            if line.is_empty() {
                continue;
            }
            let at = |what: String| format!("{}:{}: {what}", source.display(), n + 1);
            let hex = line.strip_prefix("sha256:").unwrap_or(line);
            if is_sha256(hex) {
                hashes.insert(hex.to_ascii_lowercase());
            } else if line.starts_with("sha256:") {
                return Err(at(format!("`{line}` is not sha256: and 64 hex digits")));
            } else if line.starts_with('/') || line.split('/').any(|c| c == "..") {
                return Err(at(format!(
                    "`{line}`: paths are relative to the data directory, without `..`"
                )));
            } else {
                let glob = GlobBuilder::new(line)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| at(format!("`{line}`: {e}")))?;
                globs.add(glob);
                path_count += 1;
            }
        }
        Ok(AllowList {
            source: source.to_path_buf(),
            hashes,
            paths: globs
                .build()
                .map_err(|e| format!("{}: {e}", source.display()))?,
            path_count,
        })
    }

    /// Whether the list names the program's hash or its file.
    pub fn allows(&self, data_file: &str, sha256: &str) -> bool {
        self.hashes.contains(&sha256.to_ascii_lowercase()) || self.paths.is_match(data_file)
    }

    /// How many hashes and path globs it holds.
    pub fn len(&self) -> (usize, usize) {
        (self.hashes.len(), self.path_count)
    }
}

/// Allow-list lines naming every program of `snippets` that the run tier could take
/// (CUDA and Python, not ignored) by hash, `sha256:<hash>  # <file>:<line>`, in file
/// and line order.
pub fn allow_lines(snippets: &[Snippet]) -> Vec<String> {
    let mut rows: Vec<(&str, usize, &str)> = Vec::new();
    let progs = programs(snippets);
    for p in progs.iter().filter(|p| p.annotations.ignore.is_none()) {
        let head = &snippets[p.parts[0]];
        if matches!(head.lang, Lang::Cuda | Lang::Python) {
            rows.push((&head.file, head.line, &p.sha256));
        }
    }
    rows.sort();
    rows.iter()
        .map(|(file, line, sha)| format!("sha256:{sha}  # {file}:{line}"))
        .collect()
}

fn strip_comment(line: &str) -> &str {
    if line.trim_start().starts_with('#') {
        return "";
    }
    match line.find(" #").or_else(|| line.find("\t#")) {
        Some(i) => &line[..i],
        None => line,
    }
}

fn is_sha256(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: &str = "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4";

    fn list(text: &str) -> AllowList {
        AllowList::parse(text, Path::new("allow.txt")).expect("parses")
    }

    #[test]
    fn hashes_and_globs() {
        let l = list(&format!(
            "# reviewed\nsha256:{H}  # articles/cuda/a.md:12\n\narticles/cuda/*.md\nsignatures/**\n"
        ));
        assert_eq!(l.len(), (1, 2));
        assert!(l.allows("articles/other/x.md", H));
        assert!(l.allows("articles/other/x.md", &H.to_ascii_uppercase()));
        assert!(l.allows("articles/cuda/a.md", &"0".repeat(64)));
        // `*` stays in its directory; `**` does not.
        assert!(!l.allows("articles/cuda/deep/a.md", &"0".repeat(64)));
        assert!(l.allows("signatures/cuda/deep/e.json", &"0".repeat(64)));
        assert!(!l.allows("articles/torch/a.md", &"0".repeat(64)));
        assert!(list(H).allows("x", H));
    }

    #[test]
    fn nobody_all_and_bad_lines() {
        assert!(!Trust::Nobody.allows("a", H));
        assert!(Trust::All.allows("a", H));
        let bad = |t: &str| AllowList::parse(t, Path::new("allow.txt")).err();
        let e = bad("\nsha256:abc\n").expect("short hash");
        assert!(e.starts_with("allow.txt:2: "), "{e}");
        assert!(bad("/etc/passwd").is_some());
        assert!(bad("../data/**").is_some());
        assert!(bad("articles/[").is_some());
    }
}
