//! Build-time syntax highlighting (syntect, CSS classes, no JavaScript in the browser).
//!
//! Highlighting emits `<span class="hl-…">` classes that `site/static/style.css` colours,
//! so light and dark schemes need no second pass and no inline styles (which the
//! Content-Security-Policy forbids).

use std::sync::OnceLock;

use syntect::html::{ClassStyle, ClassedHTMLGenerator};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

fn syntaxes() -> &'static SyntaxSet {
    static SET: OnceLock<SyntaxSet> = OnceLock::new();
    SET.get_or_init(SyntaxSet::load_defaults_newlines)
}

/// The syntect token for a fence language. CUDA is C++ with extensions, and the
/// default grammars have no CUDA, so it is highlighted as C++.
fn token(lang: &str) -> Option<&'static str> {
    Some(match lang.to_ascii_lowercase().as_str() {
        "cuda" | "cu" | "cuh" | "cpp" | "c++" | "cxx" | "hpp" => "cpp",
        "c" | "h" => "c",
        "python" | "py" | "python3" | "pycon" => "py",
        "bash" | "sh" | "shell" | "console" | "zsh" => "sh",
        "json" | "jsonl" => "json",
        "yaml" | "yml" => "yaml",
        "rust" | "rs" => "rs",
        "makefile" | "make" => "makefile",
        "diff" | "patch" => "diff",
        "xml" | "html" => "html",
        "javascript" | "js" => "js",
        _ => return None,
    })
}

/// HTML for the inside of a `<code>` element: highlighted when the language is known,
/// else escaped plain text. Never fails: a grammar error falls back to plain text.
///
/// Results are memoised for the life of the process: the same snippet appears on the
/// English page and on the Chinese page that shows the English text, and highlighting
/// (a regex-driven grammar) is the costliest step of rendering an article.
pub fn highlight(code: &str, lang: &str) -> String {
    type Memo = std::sync::Mutex<std::collections::HashMap<(String, String), String>>;
    static MEMO: OnceLock<Memo> = OnceLock::new();
    let memo = MEMO.get_or_init(Default::default);
    let key = (lang.to_string(), code.to_string());
    if let Some(hit) = memo.lock().ok().and_then(|m| m.get(&key).cloned()) {
        return hit;
    }
    let html = highlight_uncached(code, lang);
    if let Ok(mut m) = memo.lock() {
        // Bounded: a long-running `errata serve` must not grow without limit.
        if m.len() > 50_000 {
            m.clear();
        }
        m.insert(key, html.clone());
    }
    html
}

fn highlight_uncached(code: &str, lang: &str) -> String {
    let set = syntaxes();
    let Some(syntax) = token(lang).and_then(|t| set.find_syntax_by_extension(t)) else {
        return escape(code);
    };
    let mut generator = ClassedHTMLGenerator::new_with_class_style(
        syntax,
        set,
        ClassStyle::SpacedPrefixed { prefix: "hl-" },
    );
    for line in LinesWithEndings::from(code) {
        if generator
            .parse_html_for_line_which_includes_newline(line)
            .is_err()
        {
            return escape(code);
        }
    }
    generator.finalize()
}

/// HTML-escapes text for element content and double-quoted attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_languages_get_classes_and_unknown_are_escaped() {
        let html = highlight("int main() { return 0; } // <x>\n", "cuda");
        assert!(
            html.contains("hl-storage") || html.contains("hl-keyword"),
            "{html}"
        );
        assert!(html.contains("&lt;x&gt;"));
        assert!(!html.contains("<x>"));
        assert_eq!(highlight("<script>\n", "text"), "&lt;script&gt;\n");
        let py = highlight("import torch\n", "python");
        assert!(py.contains("hl-keyword"), "{py}");
    }
}
