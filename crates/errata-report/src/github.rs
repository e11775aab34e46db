//! GitHub Actions workflow commands: one `::error …::message` line per diagnostic, which
//! GitHub shows as an annotation on the pull request's diff.

use errata_model::{Diagnostic, Severity};

use crate::slash_path;

pub(crate) fn render(diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    for d in diagnostics {
        let loc = d.location.unwrap_or_default();
        let level = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut message = d.message.clone();
        if let Some(help) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        out.push_str(&format!(
            "::{level} file={},line={},col={},title={}::{}\n",
            escape_property(&slash_path(&d.file)),
            loc.line,
            loc.column,
            escape_property(d.rule),
            escape_data(&message)
        ));
    }
    out
}

/// Escaping of a workflow command's message (`%`, CR, LF).
fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escaping of a workflow command's property values (also `:` and `,`).
fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[cfg(test)]
mod tests {
    use super::*;
    use errata_model::{Anchor, Location};

    #[test]
    fn escapes_properties_and_data() {
        let mut d = Diagnostic::error(
            "date-order",
            "data/a,b:c.json",
            Anchor::File,
            "50% done\nnext",
        );
        d.location = Some(Location {
            line: 3,
            column: 7,
            start: 0,
            end: 0,
        });
        assert_eq!(
            render(&[d]),
            "::error file=data/a%2Cb%3Ac.json,line=3,col=7,title=date-order::50%25 done%0Anext\n"
        );
    }
}
