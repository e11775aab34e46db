//! Extraction: every fenced block of every article and every entry's `verify` snippet,
//! and `cont` joining of blocks into programs.

use std::path::Path;

use errata_load::KnowledgeBase;
use errata_model::snippet::{AnnotationError, Annotations, Expect, FenceInfo, Lang};

/// Where a snippet lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A fenced block of an article.
    Article,
    /// The `verify` snippet of an entry.
    EntryVerify,
}

/// One code block as written.
#[derive(Debug, Clone)]
pub struct Snippet {
    /// The file as shown to the user (`/`-separated, as the loader names it).
    pub file: String,
    /// The file relative to the data directory (`articles/cuda/x.md`): run records key.
    pub data_file: String,
    /// 1-based line of the opening fence (or of the entry's `"verify"` key).
    pub line: usize,
    /// Normalised language.
    pub lang: Lang,
    /// The info string (for an entry: `<lang> <annotations>`).
    pub info: String,
    /// Parsed annotations.
    pub annotations: Annotations,
    /// Annotations that did not parse (reported by `errata check` as `snippet-annotation`).
    pub annotation_errors: Vec<AnnotationError>,
    /// The code.
    pub code: String,
    /// Lower-case hex sha256 of `code`.
    pub sha256: String,
    /// Article block or entry `verify`.
    pub origin: Origin,
}

impl Snippet {
    /// Cuda, Python or shell: the languages errata verifies.
    pub fn is_verifiable(&self) -> bool {
        !matches!(self.lang, Lang::Other(_))
    }
}

/// Every fenced block of every article (in file order) and every entry's `verify`.
///
/// Indented blocks are not snippets (they have no info string to annotate).
pub fn extract(kb: &KnowledgeBase) -> Vec<Snippet> {
    let mut out = Vec::new();
    for doc in &kb.articles {
        let file = slash(&doc.path);
        let data_file = relative(&doc.path, &kb.root);
        for block in doc.code_blocks.iter().filter(|b| b.fenced) {
            let info = FenceInfo::parse(&block.info);
            out.push(Snippet {
                file: file.clone(),
                data_file: data_file.clone(),
                line: block.line,
                lang: info.lang,
                info: block.info.clone(),
                annotations: info.annotations,
                annotation_errors: info.errors,
                sha256: errata_load::sha256_hex(block.code.as_bytes()),
                code: block.code.clone(),
                origin: Origin::Article,
            });
        }
    }
    for doc in &kb.entries {
        let Some(verify) = doc.entry.as_ref().and_then(|e| e.verify.as_ref()) else {
            continue;
        };
        let (annotations, errors) = Annotations::parse(&verify.annotations);
        // The loader keeps no text for entries; find the key's line for the report.
        let line = std::fs::read_to_string(&doc.path)
            .ok()
            .and_then(|t| t.lines().position(|l| l.contains("\"verify\"")))
            .map_or(1, |i| i + 1);
        out.push(Snippet {
            file: slash(&doc.path),
            data_file: relative(&doc.path, &kb.root),
            line,
            lang: Lang::from_fence(&verify.lang),
            info: format!("{} {}", verify.lang, verify.annotations)
                .trim()
                .to_string(),
            annotations,
            annotation_errors: errors,
            sha256: errata_load::sha256_hex(verify.code.as_bytes()),
            code: verify.code.clone(),
            origin: Origin::EntryVerify,
        });
    }
    out
}

/// A runnable unit: a block plus the `cont` blocks joined to it.
#[derive(Debug, Clone)]
pub struct Program {
    /// Indices into the snippet slice, the head first.
    pub parts: Vec<usize>,
    /// The joined code.
    pub code: String,
    /// sha256 of `code` (equal to the head's hash when nothing is joined).
    pub sha256: String,
    /// Effective annotations: the head's, overridden by any later part that sets a key.
    pub annotations: Annotations,
    /// Every part's annotation errors, prefixed with the part's line.
    pub annotation_errors: Vec<String>,
}

impl Program {
    /// The expectation (default `ok`).
    pub fn expect(&self) -> Expect {
        self.annotations.expect.clone().unwrap_or(Expect::Ok)
    }
}

/// Joins each `cont` block to the previous verifiable block of the same language in the
/// same file. A `cont` block with nothing before it stands alone and reports why.
pub fn programs(snippets: &[Snippet]) -> Vec<Program> {
    let mut out: Vec<Program> = Vec::new();
    for (i, s) in snippets.iter().enumerate() {
        if !s.is_verifiable() {
            continue;
        }
        let errors: Vec<String> = s
            .annotation_errors
            .iter()
            .map(|e| format!("line {}: {}", s.line, e.message))
            .collect();
        if s.annotations.cont {
            let prev = out.iter_mut().rev().find(|p| {
                let head = &snippets[p.parts[0]];
                head.file == s.file && head.lang == s.lang
            });
            if let Some(p) = prev {
                p.parts.push(i);
                if !p.code.ends_with('\n') {
                    p.code.push('\n');
                }
                p.code.push_str(&s.code);
                p.sha256 = errata_load::sha256_hex(p.code.as_bytes());
                merge(&mut p.annotations, &s.annotations);
                p.annotation_errors.extend(errors);
                continue;
            }
        }
        let mut annotation_errors = errors;
        if s.annotations.cont {
            annotation_errors.push(format!(
                "line {}: `cont` but no earlier {} block in this file to continue",
                s.line,
                s.lang.name()
            ));
        }
        out.push(Program {
            parts: vec![i],
            code: s.code.clone(),
            sha256: s.sha256.clone(),
            annotations: s.annotations.clone(),
            annotation_errors,
        });
    }
    out
}

fn merge(into: &mut Annotations, from: &Annotations) {
    if from.expect.is_some() {
        into.expect = from.expect.clone();
    }
    if !from.requires.is_empty() {
        into.requires.extend(from.requires.iter().copied());
        into.requires.sort();
        into.requires.dedup();
    }
    if from.timeout.is_some() {
        into.timeout = from.timeout;
    }
    if from.harness.is_some() {
        into.harness = from.harness.clone();
    }
    if from.ignore.is_some() {
        into.ignore = from.ignore.clone();
    }
}

fn slash(p: &Path) -> String {
    p.to_string_lossy().replace('\\', "/")
}

fn relative(p: &Path, root: &Path) -> String {
    errata_load::data_relative(p, root).unwrap_or_else(|| slash(p))
}
