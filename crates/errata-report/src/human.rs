//! rustc-style output: header, the source line with a caret under the value, help.

use annotate_snippets::{AnnotationKind, Level, Renderer, Snippet};
use errata_model::{Diagnostic, Severity};

use crate::{Context, counts, slash_path};

/// Lines of context shown at most for one diagnostic.
const MAX_EXCERPT_LINES: usize = 4;

pub(crate) fn render(diagnostics: &[Diagnostic], cx: &Context<'_>) -> String {
    let renderer = if cx.color {
        Renderer::styled()
    } else {
        Renderer::plain()
    };
    let mut out = String::new();
    for d in diagnostics {
        out.push_str(&render_one(d, cx, &renderer));
        out.push_str("\n\n");
    }
    let c = counts(diagnostics);
    out.push_str(&format!(
        "{} file(s) checked: {} error(s), {} warning(s)\n",
        cx.files, c.errors, c.warnings
    ));
    out
}

fn render_one(d: &Diagnostic, cx: &Context<'_>, renderer: &Renderer) -> String {
    let level = match d.severity {
        Severity::Error => Level::ERROR,
        Severity::Warning => Level::WARNING,
    };
    let loc = d.location.unwrap_or_default();
    let path = slash_path(&d.file);
    let title = level.primary_title(d.message.as_str()).id(d.rule);
    let mut group = match (cx.source)(&d.file).and_then(|text| excerpt(text, loc.start, loc.end)) {
        Some((excerpt, line_start, span)) => title.element(
            Snippet::source(excerpt)
                .line_start(line_start)
                .path(path.clone())
                .annotation(AnnotationKind::Primary.span(span)),
        ),
        None => title.element(Level::NOTE.message(format!(
            "in {path}:{}:{}",
            loc.line.max(1),
            loc.column.max(1)
        ))),
    };
    if let Some(help) = &d.help {
        group = group.element(Level::HELP.message(help.as_str()));
    }
    renderer.render(&[group])
}

/// The lines around a byte range: (excerpt, 1-based first line, range within excerpt).
/// The underline covers the first line of the value only, so a whole-object anchor does
/// not print the entire file.
fn excerpt(text: &str, start: usize, end: usize) -> Option<(&str, usize, std::ops::Range<usize>)> {
    if start > text.len() {
        return None;
    }
    let line_begin = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_no = text[..line_begin].bytes().filter(|&b| b == b'\n').count() + 1;
    let mut line_end = line_begin;
    for _ in 0..MAX_EXCERPT_LINES {
        match text[line_end..].find('\n') {
            Some(i) => line_end += i + 1,
            None => {
                line_end = text.len();
                break;
            }
        }
        if line_end > end {
            break;
        }
    }
    let first_line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let span_end = end.clamp(start, first_line_end).max(start);
    let excerpt = text[line_begin..line_end].trim_end_matches('\n');
    let span = (start - line_begin)..(span_end - line_begin).min(excerpt.len());
    Some((excerpt, line_no, span))
}

#[cfg(test)]
mod tests {
    use super::*;
    use errata_model::{Anchor, Location};

    #[test]
    fn caret_under_the_value() {
        let text = "{\n  \"first_seen\": \"2025-01-20\",\n  \"x\": 1\n}\n";
        let start = text.find("\"2025").unwrap();
        let mut d = Diagnostic::error(
            "date-order",
            "data/x.json",
            Anchor::Value("/first_seen".into()),
            "dates out of order",
        )
        .with_help("fix it");
        d.location = Some(Location {
            line: 2,
            column: 17,
            start,
            end: start + 12,
        });
        let cx = Context {
            files: 1,
            source: &|_| Some(text),
            rule_summary: &|_| None,
            color: false,
        };
        let out = render(&[d], &cx);
        assert!(
            out.contains("error[date-order]: dates out of order"),
            "{out}"
        );
        assert!(out.contains("--> data/x.json:2:17"), "{out}");
        assert!(out.contains("^^^^^^^^^^^^"), "{out}");
        assert!(out.contains("help: fix it"), "{out}");
        assert!(
            out.contains("1 file(s) checked: 1 error(s), 0 warning(s)"),
            "{out}"
        );
    }
}
