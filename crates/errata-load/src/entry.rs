use std::path::PathBuf;
use std::sync::Arc;

use errata_model::{Anchor, Diagnostic, Entry};

use crate::source::{SourceFile, invalid_utf8};

/// A loaded signature entry.
#[derive(Debug, Clone)]
pub struct EntryDoc {
    /// The file, as shown in diagnostics.
    pub path: PathBuf,
    /// The id the path implies (`<domain>/<slug>` from `signatures/<domain>/<slug>.json`).
    pub path_id: Option<String>,
    /// The file's text (shared with its [`SourceFile`](crate::SourceFile)).
    text: Arc<String>,
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
    // The syntax pass builds nothing. It does not bound nesting either, so depth is
    // checked first: every later parse (the typed entry here, the JSON tree the checker
    // and the bundle parse again) then stays within serde_json's recursion limit.
    if let Some(at) = too_deep(src.text.as_bytes()) {
        return Err(Box::new(
            Diagnostic::error(
                "json-syntax",
                &src.path,
                Anchor::Bytes(at..at + 1),
                format!("invalid JSON: recursion limit exceeded (more than {MAX_DEPTH} nested arrays or objects)"),
            )
            .with_help("entries are shallow objects; this nesting is far deeper than any entry needs"),
        ));
    }
    // Lenient: an entry of the wrong shape (its schema errors say why) has no typed form;
    // the rest of such a file is then read for syntax alone. A repeated key is refused
    // like a syntax error: JSON readers disagree on which value wins.
    let syntax_only = || {
        serde_json::from_str::<serde::de::IgnoredAny>(&src.text)
            .map(|_| None)
            .map_err(|e| Box::new(syntax_error(src, &e)))
    };
    let entry = if src.text.trim_start().starts_with('{') {
        match serde_json::from_str::<Entry>(&src.text) {
            Ok(entry) => Some(entry),
            Err(e) if e.is_data() && !e.to_string().starts_with("duplicate field") => {
                syntax_only()?
            }
            Err(e) => return Err(Box::new(syntax_error(src, &e))),
        }
    } else {
        syntax_only()?
    };
    // serde_json skips the values it ignores without converting their numbers, so an
    // entry holding `1e999` (in a field the typed entry ignores) loaded, but the JSON tree
    // parsed later for the schema and the bundle could not hold it: `value()` gave null,
    // reported as "null is not of type object" at 1:1 (found by fuzzing). It is a syntax
    // error here, where its position is known. Only a text that may hold such a number
    // is parsed again.
    if may_overflow_f64(src.text.as_bytes())
        && let Err(e) = serde_json::from_str::<serde_json::Value>(&src.text)
    {
        return Err(Box::new(syntax_error(src, &e)));
    }
    Ok(EntryDoc {
        path: src.path.clone(),
        path_id,
        text: Arc::clone(&src.text),
        entry,
    })
}

impl EntryDoc {
    /// The JSON as written (what the schema validates, and what the bundle ships).
    ///
    /// Parsed on each call rather than kept: a parsed tree costs about five times the
    /// text, which for 10,000 entries would dominate the checker's memory. The text
    /// parsed when it was loaded, so this cannot fail; `Null` stands in if it ever did.
    pub fn value(&self) -> serde_json::Value {
        serde_json::from_str(&self.text).unwrap_or(serde_json::Value::Null)
    }

    /// The file's text.
    pub fn text(&self) -> &str {
        &self.text
    }
}

/// Whether the text may hold a number beyond `f64`: a digit, `e` or `E`, an optional
/// sign and three digits (`1e999`), or 300 digits in a row. Strings are not skipped: a
/// false alarm costs one more parse of a file that is almost never there.
fn may_overflow_f64(bytes: &[u8]) -> bool {
    // Both shapes start with a digit, and most 16-byte stretches of an entry hold none:
    // such a stretch is passed over whole (a test the compiler turns into a few vector
    // instructions) unless a run of digits from the stretch before goes on into it.
    const STRETCH: usize = 16;
    let mut digits = 0;
    let mut at = 0;
    while at < bytes.len() {
        let end = (at + STRETCH).min(bytes.len());
        let stretch = &bytes[at..end];
        if digits == 0
            && stretch.len() == STRETCH
            && !stretch
                .iter()
                .fold(false, |any, b| any | b.is_ascii_digit())
        {
            at = end;
            continue;
        }
        if (at..end).any(|i| overflow_at(bytes, i, &mut digits)) {
            return true;
        }
        at = end;
    }
    false
}

/// One byte of [`may_overflow_f64`]'s scan: `digits` counts the digits in a row before
/// `bytes[i]` and is updated; true when a number beyond `f64` may be here.
fn overflow_at(bytes: &[u8], i: usize, digits: &mut usize) -> bool {
    let b = bytes[i];
    if b.is_ascii_digit() {
        *digits += 1;
        return *digits >= 300;
    }
    let found = matches!(b, b'e' | b'E') && *digits > 0 && {
        let rest = &bytes[i + 1..];
        let rest = rest
            .strip_prefix(b"+")
            .or_else(|| rest.strip_prefix(b"-"))
            .unwrap_or(rest);
        rest.len() >= 3 && rest[..3].iter().all(u8::is_ascii_digit)
    };
    *digits = 0;
    found
}

/// serde_json's own recursion limit.
const MAX_DEPTH: usize = 128;

/// The offset of the first `[` or `{` nested deeper than [`MAX_DEPTH`], outside strings.
fn too_deep(bytes: &[u8]) -> Option<usize> {
    // Nesting never exceeds the number of `[` and `{` (strings included), which in an
    // entry is a few dozen: then nothing is deeper, and the byte-by-byte walk is skipped.
    if memchr::memchr2_iter(b'[', b'{', bytes).count() <= MAX_DEPTH {
        return None;
    }
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Some(i);
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

fn syntax_error(src: &SourceFile, e: &serde_json::Error) -> Diagnostic {
    // serde_json reports a 1-based line and a 1-based byte column (0 at a line start).
    let line_start = src.lines().line_start(e.line(), src.text.len());
    let offset = (line_start + e.column().saturating_sub(1)).min(src.text.len());
    let message = strip_position(&e.to_string());
    let help = if message.contains("recursion limit") {
        "entries are shallow objects; this nesting is far deeper than any entry needs"
    } else if message.starts_with("duplicate field") {
        "keep one of the two; JSON readers disagree on which value wins"
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

#[cfg(test)]
mod scan_tests {
    use super::{MAX_DEPTH, may_overflow_f64, overflow_at, too_deep};

    /// The plain byte-by-byte form of [`may_overflow_f64`] (every byte through
    /// [`overflow_at`], no stretch passed over), which the fast one must agree with.
    fn may_overflow_plain(bytes: &[u8]) -> bool {
        let mut digits = 0;
        (0..bytes.len()).any(|i| overflow_at(bytes, i, &mut digits))
    }

    #[test]
    fn the_overflow_scan_agrees_with_the_plain_one_at_every_offset() {
        let texts: Vec<Vec<u8>> = vec![
            b"{\"fail_rate\": 1e999}".to_vec(),
            b"{\"a\": 12E+345, \"b\": \"text\"}".to_vec(),
            b"{\"a\": 1.5e-3, \"note\": \"see 2e10 and e999\"}".to_vec(),
            [&b"{\"n\": "[..], &b"7".repeat(299), &b"}"[..]].concat(),
            [&b"{\"n\": "[..], &b"7".repeat(300), &b"}"[..]].concat(),
            b"no digits at all in this rather long text, only words here".to_vec(),
        ];
        for text in texts {
            // Every shift moves the interesting bytes across the 16-byte stretches.
            for pad in 0..40 {
                let shifted = [" ".repeat(pad).into_bytes(), text.clone()].concat();
                assert_eq!(
                    may_overflow_f64(&shifted),
                    may_overflow_plain(&shifted),
                    "{}",
                    String::from_utf8_lossy(&shifted)
                );
            }
        }
    }

    #[test]
    fn nesting_is_found_only_past_the_limit() {
        let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
        assert_eq!(too_deep(nested(MAX_DEPTH).as_bytes()), None);
        assert_eq!(too_deep(nested(MAX_DEPTH + 1).as_bytes()), Some(MAX_DEPTH));
        // Many brackets side by side, or inside strings, are not depth.
        let flat = "[]".repeat(500);
        assert_eq!(too_deep(flat.as_bytes()), None);
        let quoted = format!("[\"{}\"]", "[".repeat(500));
        assert_eq!(too_deep(quoted.as_bytes()), None);
    }
}
