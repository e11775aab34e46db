//! SARIF 2.1.0, the format GitHub code scanning ingests.

use std::collections::BTreeSet;

use errata_model::{Diagnostic, Severity};
use serde_json::json;

use crate::{Context, slash_path};

pub(crate) fn render(diagnostics: &[Diagnostic], cx: &Context<'_>) -> String {
    let rule_ids: BTreeSet<&str> = diagnostics.iter().map(|d| d.rule).collect();
    let rules: Vec<_> = rule_ids
        .iter()
        .map(|id| {
            json!({
                "id": id,
                "name": id,
                "shortDescription": {"text": (cx.rule_summary)(id).unwrap_or(id)},
                "help": {"text": format!("Run `errata explain {id}` for details.")},
                // The rule's documentation in the repository (docs/rules.md lists every
                // rule; `errata explain` prints the whole text).
                "helpUri": format!("https://github.com/errata-kb/errata/blob/main/docs/rules.md#{id}"),
            })
        })
        .collect();
    let results: Vec<_> = diagnostics
        .iter()
        .map(|d| {
            let loc = d.location.unwrap_or_default();
            let mut text = d.message.clone();
            if let Some(help) = &d.help {
                text.push_str(&format!(" (help: {help})"));
            }
            json!({
                "ruleId": d.rule,
                "ruleIndex": rule_ids.iter().position(|r| *r == d.rule),
                "level": match d.severity { Severity::Error => "error", Severity::Warning => "warning" },
                "message": {"text": text},
                "locations": [{
                    "physicalLocation": {
                        "artifactLocation": {"uri": slash_path(&d.file)},
                        "region": {"startLine": loc.line.max(1), "startColumn": loc.column.max(1)},
                    }
                }],
            })
        })
        .collect();
    let doc = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "errata",
                "informationUri": "https://github.com/errata-kb/errata",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    let mut out = serde_json::to_string_pretty(&doc).unwrap_or_default();
    out.push('\n');
    out
}
