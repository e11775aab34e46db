//! Outcome record files (`outcomes/<domain>/<slug>.jsonl`): each line parsed on its own,
//! so a bad line is reported at its place and the others still count.

use std::ops::Range;
use std::path::PathBuf;

use errata_outcomes::OutcomeRecord;

use crate::SourceFile;
use crate::knowledge_base::{path_id, sub_dir};

/// One outcome file.
#[derive(Debug, Clone)]
pub struct OutcomeDoc {
    /// The file.
    pub path: PathBuf,
    /// `<domain>/<slug>` from the path, when it has that shape.
    pub path_id: Option<String>,
    /// Its non-blank lines, in order.
    pub lines: Vec<OutcomeLine>,
}

/// One line of an outcome file.
#[derive(Debug, Clone)]
pub struct OutcomeLine {
    /// Its bytes in the file (without the newline).
    pub range: Range<usize>,
    /// The record, or why the line is not one.
    pub record: Result<OutcomeRecord, String>,
}

impl OutcomeDoc {
    /// The records that parsed (their validity against the entry is `errata check`'s).
    pub fn records(&self) -> impl Iterator<Item = &OutcomeRecord> {
        self.lines.iter().filter_map(|l| l.record.as_ref().ok())
    }
}

/// The records of these files, indexed for folding into the rates they count (the site
/// and the bundle): each with the entry id of the file that holds it.
pub fn outcome_index(docs: &[OutcomeDoc]) -> errata_outcomes::Index {
    errata_outcomes::Index::new(
        docs.iter()
            .flat_map(|d| d.records().map(move |r| (d.path_id.as_deref(), r))),
    )
}

pub(crate) fn parse_outcomes(src: &SourceFile, path_id: Option<String>) -> OutcomeDoc {
    let mut lines = Vec::new();
    let mut start = 0;
    for line in src.text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if !body.trim().is_empty() {
            lines.push(OutcomeLine {
                range: start..start + body.len(),
                record: OutcomeRecord::parse_line(body),
            });
        }
        start += line.len();
    }
    OutcomeDoc {
        path: src.path.clone(),
        path_id,
        lines,
    }
}

/// Reads only `root/outcomes/**/*.jsonl` (sorted), for a consumer that needs the
/// records but not the whole knowledge base (the site's incremental rebuild). Files
/// that cannot be read, and symbolic links, are skipped: `errata check` reports them.
pub fn load_outcomes(root: &std::path::Path) -> Vec<OutcomeDoc> {
    let dir = sub_dir(root, "outcomes");
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(&dir)
        .sort_by_file_name()
        .into_iter()
        .flatten()
    {
        if !e.file_type().is_file() || e.path().extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        if let Ok(src) = crate::source::read_source(e.path(), e.path()) {
            let id = path_id(&dir, e.path(), ".jsonl");
            out.push(parse_outcomes(&src, id));
        }
    }
    out
}
