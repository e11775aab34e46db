//! Articles as plain text, for consumers that index or display text without Markdown.

use pulldown_cmark::{Event, Parser, Tag, TagEnd};

/// The text of a Markdown document: markup removed, one blank line between blocks, code
/// kept as is, link destinations dropped.
pub fn markdown_to_text(markdown: &str) -> String {
    let mut out = String::with_capacity(markdown.len());
    for event in Parser::new_ext(markdown, errata_load::markdown::options()) {
        match event {
            Event::Text(t) | Event::Code(t) | Event::InlineMath(t) | Event::DisplayMath(t) => {
                out.push_str(&t)
            }
            Event::SoftBreak => out.push(' '),
            Event::HardBreak => out.push('\n'),
            Event::Start(Tag::Item) => out.push_str("- "),
            Event::Start(Tag::TableCell) => out.push('\t'),
            Event::End(
                TagEnd::Paragraph
                | TagEnd::Heading(_)
                | TagEnd::CodeBlock
                | TagEnd::BlockQuote(_)
                | TagEnd::TableHead,
            ) => out.push_str("\n\n"),
            Event::End(TagEnd::Item | TagEnd::TableRow) => out.push('\n'),
            Event::End(TagEnd::List(_)) => out.push_str("\n\n"),
            Event::Rule => out.push_str("\n\n"),
            _ => {}
        }
    }
    // Collapse runs of blank lines the block rules above can produce.
    let mut text = String::with_capacity(out.len());
    let mut blank = 0;
    for line in out.lines() {
        let line = line.trim_end();
        if line.is_empty() {
            blank += 1;
            if blank > 1 {
                continue;
            }
        } else {
            blank = 0;
        }
        text.push_str(line);
        text.push('\n');
    }
    let trimmed = text.trim_matches('\n');
    if trimmed.is_empty() {
        String::new()
    } else {
        format!("{trimmed}\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_goes_text_stays() {
        let md = "# Title\n\nSome *emphasis* and [a link](https://x.org) and `code`.\n\n- one\n- two\n\n```cuda\nint x;\n```\n";
        assert_eq!(
            markdown_to_text(md),
            "Title\n\nSome emphasis and a link and code.\n\n- one\n- two\n\nint x;\n"
        );
    }
}
