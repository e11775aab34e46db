//! Reports: a human table per file and tier, or the JSON of docs/data.md, and a progress
//! line for terminals.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};

use crate::outcome::{Outcome, Verdict};

/// `{"version":1,"snippets":[{"file","line","lang","tier","expect","outcome","detail"}]}`.
pub fn json(verdicts: &[Verdict]) -> String {
    let doc = serde_json::json!({ "version": 1, "snippets": verdicts });
    serde_json::to_string_pretty(&doc).unwrap_or_else(|_| "{}".into())
}

/// The human report: one table per file, then counts per tier and outcome.
pub fn human(verdicts: &[Verdict]) -> String {
    let mut out = String::new();
    let mut by_file: BTreeMap<&str, Vec<&Verdict>> = BTreeMap::new();
    for v in verdicts {
        by_file.entry(v.file.as_str()).or_default().push(v);
    }
    for (file, rows) in &by_file {
        out.push_str(&format!("{file}\n"));
        for v in rows {
            let mark = if v.outcome.is_failure() {
                "✗"
            } else if matches!(v.outcome, Outcome::Pass | Outcome::ExpectedErrorObserved) {
                "✓"
            } else {
                "-"
            };
            out.push_str(&format!(
                "  {mark} {:>5}  {:<7} {:<8} {:<32} {:<24} {}\n",
                v.line,
                v.lang,
                v.tier.as_str(),
                truncate(&v.expect, 32),
                v.outcome.as_str(),
                truncate(&v.detail.replace('\n', " "), 160)
            ));
        }
    }
    let mut counts: BTreeMap<(&str, Outcome), usize> = BTreeMap::new();
    for v in verdicts {
        *counts.entry((v.tier.as_str(), v.outcome)).or_default() += 1;
    }
    out.push_str("\nsummary:\n");
    for ((tier, outcome), n) in &counts {
        out.push_str(&format!("  {tier:<8} {:<24} {n}\n", outcome.as_str()));
    }
    let failures = verdicts.iter().filter(|v| v.outcome.is_failure()).count();
    let skipped = verdicts
        .iter()
        .filter(|v| v.outcome == Outcome::SkippedNoGpu)
        .count();
    out.push_str(&format!(
        "{} snippets, {failures} contradict their expectation or could not be verified, {skipped} skipped (not passed)\n",
        verdicts.len()
    ));
    out
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// A one-line progress indicator on stderr, drawn only when stderr is a terminal.
#[derive(Debug)]
pub struct Progress {
    total: usize,
    done: usize,
    enabled: bool,
}

impl Progress {
    /// A bar for `total` steps; `enabled` is and-ed with "stderr is a terminal".
    pub fn new(total: usize, enabled: bool) -> Progress {
        Progress {
            total,
            done: 0,
            enabled: enabled && std::io::stderr().is_terminal(),
        }
    }

    /// Advances by one and shows `what`.
    pub fn step(&mut self, what: &str) {
        self.done += 1;
        if !self.enabled {
            return;
        }
        let width = 24;
        let filled = (self.done * width).checked_div(self.total).unwrap_or(width);
        let bar: String = "#".repeat(filled) + &"-".repeat(width - filled.min(width));
        let mut err = std::io::stderr();
        let _ = write!(
            err,
            "\r\x1b[2K[{bar}] {}/{} {}",
            self.done,
            self.total,
            truncate(what, 60)
        );
        let _ = err.flush();
    }

    /// Clears the line.
    pub fn finish(&self) {
        if self.enabled {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}
