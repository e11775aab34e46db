//! Turns the `//!` doc comment of every `src/rules/*.rs` module into the rule table that
//! `errata explain` prints, so a rule's documentation lives next to its code and cannot
//! drift into a separate file.
//!
//! The first doc line of a rule module has the form
//! `` `rule-id` (error|warning): one-line summary ``.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new("src/rules");
    println!("cargo:rerun-if-changed=src/rules");
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    files.sort();
    let mut rows = String::new();
    for path in files {
        if path.extension().is_none_or(|e| e != "rs")
            || path
                .file_name()
                .is_some_and(|n| n == "mod.rs" || n == "testing.rs")
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let doc: Vec<&str> = text
            .lines()
            .take_while(|l| l.starts_with("//!"))
            .map(|l| {
                l.trim_start_matches("//!")
                    .strip_prefix(' ')
                    .unwrap_or(l.trim_start_matches("//!"))
            })
            .collect();
        let Some(first) = doc.first() else {
            panic!(
                "{}: a rule module must start with a `//!` doc line",
                path.display()
            );
        };
        let parse = || -> Option<(&str, &str, &str)> {
            let rest = first.strip_prefix('`')?;
            let (id, rest) = rest.split_once('`')?;
            let rest = rest.trim_start().strip_prefix('(')?;
            let (sev, rest) = rest.split_once(')')?;
            let summary = rest.trim_start().strip_prefix(':')?.trim();
            Some((id, sev, summary))
        };
        let Some((id, sev, summary)) = parse() else {
            panic!(
                "{}: first doc line must be \"`rule-id` (error|warning): summary\"",
                path.display()
            );
        };
        let severity = match sev {
            "error" => "Severity::Error",
            "warning" => "Severity::Warning",
            other => panic!("{}: unknown severity {other}", path.display()),
        };
        let body = doc[1..].join("\n");
        let _ = writeln!(
            rows,
            "    RuleInfo {{ id: {id:?}, severity: {severity}, summary: {summary:?}, doc: {body:?} }},",
            body = body.trim()
        );
    }
    let out = std::env::var("OUT_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_default();
    let code = format!(
        "/// Every rule, sorted by module name.\npub static RULES: &[RuleInfo] = &[\n{rows}];\n"
    );
    if let Err(e) = std::fs::write(out.join("rules_table.rs"), code) {
        panic!("cannot write rules_table.rs: {e}");
    }
}
