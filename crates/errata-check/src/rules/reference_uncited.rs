//! `reference-uncited` (warning): prose names a GitHub thread that no `sources` cites.
//!
//! Entries often say what a public thread shows ("in NVIDIA/nccl#1092 a user downgraded
//! PyTorch and the error stayed"). A reader must be able to open that thread and read it
//! for themselves: every thread named as `owner/repo#N` (or `owner/repo #N`) in the root
//! cause, a dead end or a workaround, in English or Chinese, has its URL
//! (`https://github.com/owner/repo/issues/N`, `/pull/N` or `/discussions/N`) among the
//! `sources` of the entry's dead ends and workarounds. A bare `#N` is not checked: which
//! repository it means depends on the sentence around it.
//!
//! Fix: add the thread's URL to the `sources` of the dead end or workaround it supports
//! (and `evidence_count` with it), or stop naming a thread nobody cites.

use std::collections::BTreeSet;

use super::EntryInput;
use errata_model::{Anchor, Diagnostic};

use super::diag;
use crate::context::Ctx;
use crate::prose::prose_fields;

pub(super) fn entry(_cx: &Ctx<'_>, doc: &EntryInput<'_>, out: &mut Vec<Diagnostic>) {
    let Some(e) = &doc.entry else { return };
    // Compared without case: GitHub's owner and repository names are case-insensitive.
    let mut sources: Option<Vec<String>> = None;
    for (field, text) in prose_fields(e) {
        if !text.contains('#') {
            continue;
        }
        // Each thread once per text.
        let mut seen = BTreeSet::new();
        for reference in thread_references(text) {
            let sources = sources.get_or_insert_with(|| {
                e.dead_ends
                    .iter()
                    .flat_map(|d| &d.sources)
                    .chain(e.workarounds.iter().flat_map(|w| &w.sources))
                    .map(|s| s.to_ascii_lowercase())
                    .collect()
            });
            if cites(sources, &reference) || !seen.insert(reference) {
                continue;
            }
            let Reference {
                owner,
                repo,
                number,
            } = reference;
            out.push(
                diag(
                    "reference-uncited",
                    &doc.path,
                    Anchor::Value(field.pointer()),
                    format!("`{owner}/{repo}#{number}` is named here, but no `sources` of this entry cites it"),
                )
                .with_help(format!(
                    "add https://github.com/{owner}/{repo}/issues/{number} (or its /pull/ URL) to the `sources` of the dead end or workaround it supports, so that a reader can open it"
                )),
            );
        }
    }
}

/// A GitHub issue, pull request or discussion named in prose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Reference<'a> {
    owner: &'a str,
    repo: &'a str,
    number: &'a str,
}

/// The threads named as `owner/repo#N` or `owner/repo #N` in `text`. The owner must start
/// a word (a path such as `src/nccl#1` names no thread), and the number must end one
/// (`#12a` is not a thread either).
fn thread_references(text: &str) -> Vec<Reference<'_>> {
    let b = text.as_bytes();
    let repo_byte = |c: u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-');
    let owner_byte = |c: u8| c.is_ascii_alphanumeric() || c == b'-';
    let mut found = Vec::new();
    for (hash, _) in text.match_indices('#') {
        let digits = b[hash + 1..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let after = hash + 1 + digits;
        if digits == 0
            || b.get(after)
                .is_some_and(|&c| c.is_ascii_alphanumeric() || c == b'_')
        {
            continue;
        }
        let end = if hash > 0 && b[hash - 1] == b' ' {
            hash - 1
        } else {
            hash
        };
        let repo_start = b[..end]
            .iter()
            .rposition(|&c| !repo_byte(c))
            .map_or(0, |p| p + 1);
        if repo_start == end || repo_start == 0 || b[repo_start - 1] != b'/' {
            continue;
        }
        let slash = repo_start - 1;
        let owner_start = b[..slash]
            .iter()
            .rposition(|&c| !owner_byte(c))
            .map_or(0, |p| p + 1);
        if owner_start == slash
            || (owner_start > 0 && matches!(b[owner_start - 1], b'/' | b'.' | b'_'))
        {
            continue;
        }
        found.push(Reference {
            owner: &text[owner_start..slash],
            repo: &text[repo_start..end],
            number: &text[hash + 1..after],
        });
    }
    found
}

/// Whether a source (lower-cased) is the thread's issue, pull request or discussion URL.
fn cites(sources: &[String], r: &Reference<'_>) -> bool {
    ["issues", "pull", "discussions"].iter().any(|kind| {
        let want =
            format!("github.com/{}/{}/{kind}/{}", r.owner, r.repo, r.number).to_ascii_lowercase();
        sources.iter().any(|s| {
            s.match_indices(&want)
                .any(|(i, _)| !s[i + want.len()..].starts_with(|c: char| c.is_ascii_digit()))
        })
    })
}

#[cfg(test)]
mod tests {
    use super::super::testing::*;
    use super::*;

    #[test]
    fn references_in_prose() {
        let refs = |t: &str| -> Vec<String> {
            thread_references(t)
                .iter()
                .map(|r| format!("{}/{}#{}", r.owner, r.repo, r.number))
                .collect()
        };
        assert_eq!(
            refs("in NVIDIA/nccl#1092 and pytorch/pytorch #113245, then ggml-org/llama.cpp#7218."),
            [
                "NVIDIA/nccl#1092",
                "pytorch/pytorch#113245",
                "ggml-org/llama.cpp#7218"
            ]
        );
        // Chinese around it, a bare number, a path, a fragment, a number that goes on.
        assert_eq!(
            refs("在 vllm-project/vllm#20226 中"),
            ["vllm-project/vllm#20226"]
        );
        for none in [
            "see #1092",
            "src/ggml/ggml-cuda#1",
            "https://github.com/NVIDIA/nccl/issues/1092#issuecomment-1",
            "NVIDIA/nccl#12a",
            "a/b#",
        ] {
            assert!(refs(none).is_empty(), "{none}");
        }
    }

    #[test]
    fn a_named_thread_needs_its_url_in_sources() {
        let mut e = valid_entry("cuda/a");
        e["root_cause"] = "In NVIDIA/nccl#1273 it failed only on the H100 nodes.".into();
        e["dead_ends"][0]["why_fails"] =
            "As pytorch/pytorch#99677 and pytorch/pytorch #99677 show, nothing changes.".into();
        e["workarounds_zh"][0] = "在 NVIDIA/nccl#1273 中只在 H100 节点上失败。".into();
        let found: std::collections::BTreeSet<String> = entry_diags(&e, "reference-uncited")
            .iter()
            .map(|d| match &d.anchor {
                Anchor::Value(p) => format!("{p} {}", d.message.split('`').nth(1).unwrap_or("")),
                other => format!("{other:?}"),
            })
            .collect();
        // Every problem at once, each at its field; a thread named twice in a field once.
        assert_eq!(
            found,
            [
                "/dead_ends/0/why_fails pytorch/pytorch#99677",
                "/root_cause NVIDIA/nccl#1273",
                "/workarounds_zh/0 NVIDIA/nccl#1273",
            ]
            .map(String::from)
            .into(),
        );

        // Cited (any case, as an issue or a pull request, with a fragment): nothing to say.
        e["dead_ends"][0]["sources"] = serde_json::json!([
            "https://github.com/nvidia/NCCL/issues/1273#issuecomment-5",
            "https://github.com/pytorch/pytorch/pull/99677"
        ]);
        assert!(entry_diags(&e, "reference-uncited").is_empty());

        // A longer number is another thread.
        e["dead_ends"][0]["sources"] = serde_json::json!([
            "https://github.com/NVIDIA/nccl/issues/12730",
            "https://github.com/pytorch/pytorch/pull/99677"
        ]);
        assert_eq!(entry_diags(&e, "reference-uncited").len(), 2);
    }
}
