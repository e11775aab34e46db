use errata_model::Diagnostic;
use serde_json::json;

use crate::{Context, counts, slash_path};

pub(crate) fn render(diagnostics: &[Diagnostic], cx: &Context<'_>) -> String {
    let c = counts(diagnostics);
    let items: Vec<_> = diagnostics
        .iter()
        .map(|d| {
            let loc = d.location.unwrap_or_default();
            json!({
                "rule": d.rule,
                "severity": d.severity.as_str(),
                "file": slash_path(&d.file),
                "line": loc.line,
                "column": loc.column,
                "pointer": d.pointer(),
                "message": d.message,
                "help": d.help,
            })
        })
        .collect();
    let doc = json!({
        "version": 1,
        "summary": {"files": cx.files, "errors": c.errors, "warnings": c.warnings},
        "diagnostics": items,
    });
    let mut out = serde_json::to_string_pretty(&doc).unwrap_or_default();
    out.push('\n');
    out
}
