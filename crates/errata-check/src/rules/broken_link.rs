//! `broken-link` (error): a relative link or `#anchor` in an article does not resolve.
//!
//! Checked: links to files relative to the article (`other.md`,
//! `../../signatures/cuda/out-of-memory.json`, images), `#anchors` in the same article,
//! and `other.md#anchor` into another article. Anchors use exactly the heading-slug rule
//! of the site (GitHub style: lower-case, punctuation removed, spaces to `-`, duplicates
//! numbered `-1`, `-2`; `{#custom-id}` wins). Site-absolute paths (`/x`) are reported
//! because they break when the site is served from a sub-path. External URLs are checked
//! by `errata links`.

use std::path::{Component, Path, PathBuf};

use errata_load::ArticleDoc;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;

const RULE: &str = "broken-link";

pub(super) fn article(cx: &Ctx<'_>, doc: &ArticleDoc, out: &mut Vec<Diagnostic>) {
    for link in &doc.links {
        let dest = link.dest.trim();
        if dest.is_empty() || has_scheme(dest) || dest.starts_with("//") {
            continue;
        }
        let at = || Anchor::Bytes(link.range.clone());
        if dest.starts_with('/') {
            out.push(
                diag(RULE, &doc.path, at(), format!("`{dest}` is a site-absolute path"))
                    .with_help("use a path relative to this file; absolute paths break when the site is served from a sub-path"),
            );
            continue;
        }
        let (path_part, anchor) = match dest.split_once('#') {
            Some((p, a)) => (p, Some(a)),
            None => (dest, None),
        };
        let target_doc = if path_part.is_empty() {
            Some(doc)
        } else {
            let decoded = path_part.replace("%20", " ");
            let target = normalize(&doc.path.parent().unwrap_or(Path::new("")).join(&decoded));
            // A link that leaves the data directory is never looked up: the site has no
            // page there, and a check run on a pull request must not tell its author
            // which files exist on the machine that runs it.
            // A file the loader read is inside and exists: its walk of the data
            // directory refused every link leading out. Only other targets cost the
            // file system calls (resolving links took a fortieth of a check).
            let loaded = cx.kb.source(&target).is_some();
            if !loaded && !inside(&cx.kb.root, cx.canonical_root.as_deref(), &target) {
                out.push(
                    diag(
                        RULE,
                        &doc.path,
                        at(),
                        format!("`{path_part}` points outside the data directory"),
                    )
                    .with_help("link to an article or entry of this knowledge base"),
                );
                continue;
            }
            if !loaded && std::fs::metadata(&target).is_err() {
                out.push(
                    diag(
                        RULE,
                        &doc.path,
                        at(),
                        format!(
                            "`{path_part}` does not exist (resolved to {})",
                            target.display()
                        ),
                    )
                    .with_help(
                        "link to an existing article or entry with a path relative to this file",
                    ),
                );
                continue;
            }
            cx.article_paths.get(&target).copied()
        };
        if let (Some(anchor), Some(target)) = (anchor, target_doc)
            && !anchor.is_empty()
            && !target.headings.iter().any(|h| h.anchor == anchor)
        {
            let known: Vec<&str> = target
                .headings
                .iter()
                .map(|h| h.anchor.as_str())
                .take(8)
                .collect();
            out.push(
                diag(
                    RULE,
                    &doc.path,
                    at(),
                    format!(
                        "no heading with anchor `#{anchor}` in {}",
                        target.path.display()
                    ),
                )
                .with_help(if known.is_empty() {
                    "the target has no headings".to_string()
                } else {
                    format!("anchors there include: {}", known.join(", "))
                }),
            );
        }
    }
}

fn has_scheme(dest: &str) -> bool {
    dest.split_once(':').is_some_and(|(s, _)| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

/// Whether `target` (normalised) is `root` or under it, lexically and once symbolic
/// links are resolved (`canonical_root`: `root` resolved, once per check).
fn inside(root: &Path, canonical_root: Option<&Path>, target: &Path) -> bool {
    let root_norm = normalize(root);
    let lexically = if root_norm.as_os_str().is_empty() {
        !matches!(target.components().next(), Some(Component::ParentDir)) && !target.is_absolute()
    } else {
        target.starts_with(&root_norm)
    };
    if !lexically {
        return false;
    }
    // A symbolic link inside the data directory may still lead out of it.
    match (canonical_root, target.canonicalize()) {
        (Some(root), Ok(target)) => target.starts_with(root),
        // Missing: reported as such by the caller.
        _ => true,
    }
}

/// Lexical normalisation (`a/b/../c` → `a/c`), without touching the file system.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;

    #[test]
    fn files_anchors_and_absolute_paths() {
        let a = valid_article(
            "cuda/a",
            "# Top\n\n## Section 1: OOM\n\n[ok](#section-1-oom) [bad](#nope) [file](b.md#intro) [nofile](01-missing.md) [badanchor](b.md#zzz) [entry](../../signatures/cuda/e.json) [abs](/cuda/b)\n",
        );
        let b = valid_article("cuda/b", "## Intro\n");
        let diags = only(
            check_files(&[
                ("articles/cuda/a.md", a),
                ("articles/cuda/b.md", b),
                (
                    "signatures/cuda/e.json",
                    serde_json::to_string(&valid_entry("cuda/e")).unwrap(),
                ),
            ]),
            "broken-link",
        );
        let msgs: Vec<_> = diags.iter().map(|d| d.message.as_str()).collect();
        assert_eq!(msgs.len(), 4, "{msgs:#?}");
        assert!(msgs[0].contains("#nope"));
        assert!(msgs[1].contains("01-missing.md"));
        assert!(msgs[2].contains("#zzz"));
        assert!(msgs[3].contains("site-absolute"));
    }
}
