use std::path::PathBuf;

use errata_model::{Anchor, Diagnostic, Entry};

use crate::source::{SourceFile, invalid_utf8};

/// A loaded signature entry.
#[derive(Debug, Clone)]
pub struct EntryDoc {
    /// The file, as shown in diagnostics.
    pub path: PathBuf,
    /// The id the path implies (`<domain>/<slug>` from `signatures/<domain>/<slug>.json`).
    pub path_id: Option<String>,
    /// The JSON as written (what the schema validates).
    pub value: serde_json::Value,
    /// The typed entry, when the JSON has the right shape for it. `None` means the
    /// semantic rules cannot run on this file (its schema errors say why).
    pub entry: Option<Entry>,
}

/// Parses an entry file. A file that is not JSON yields a `json-syntax` diagnostic and no
/// document.
pub(crate) fn parse_entry(
    src: &SourceFile,
    path_id: Option<String>,
) -> Result<EntryDoc, Box<Diagnostic>> {
    if let Some(at) = src.invalid_utf8_at {
        return Err(Box::new(invalid_utf8("json-syntax", src, at)));
    }
    if src.text.trim().is_empty() {
        return Err(Box::new(
            Diagnostic::error("json-syntax", &src.path, Anchor::File, "file is empty").with_help(
                "an entry is a JSON object; `errata new <domain>/<slug>` writes a scaffold",
            ),
        ));
    }
    // serde_json bounds nesting (recursion limit 128), so hostile nesting is an error, not
    // a stack overflow, here and in everything that walks the value afterwards.
    let value: serde_json::Value =
        serde_json::from_str(&src.text).map_err(|e| Box::new(syntax_error(src, &e)))?;
    let entry = Entry::deserialize_lenient(&value);
    Ok(EntryDoc {
        path: src.path.clone(),
        path_id,
        value,
        entry,
    })
}

trait Lenient: Sized {
    fn deserialize_lenient(value: &serde_json::Value) -> Option<Self>;
}

impl Lenient for Entry {
    fn deserialize_lenient(value: &serde_json::Value) -> Option<Self> {
        if !value.is_object() {
            return None;
        }
        serde::Deserialize::deserialize(value).ok()
    }
}

fn syntax_error(src: &SourceFile, e: &serde_json::Error) -> Diagnostic {
    // serde_json reports a 1-based line and a 1-based byte column (0 at a line start).
    let line_start = src.lines.line_start(e.line(), src.text.len());
    let offset = (line_start + e.column().saturating_sub(1)).min(src.text.len());
    let message = strip_position(&e.to_string());
    let help = if message.contains("recursion limit") {
        "entries are shallow objects; this nesting is far deeper than any entry needs"
    } else {
        "fix the JSON syntax; a JSON-aware editor shows where it breaks"
    };
    Diagnostic::error(
        "json-syntax",
        &src.path,
        Anchor::Bytes(offset..offset + 1),
        format!("invalid JSON: {message}"),
    )
    .with_help(help)
}

/// serde_json appends " at line L column C"; the diagnostic shows the position itself.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_string(),
        None => message.to_string(),
    }
}
