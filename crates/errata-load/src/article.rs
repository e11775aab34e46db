use std::ops::Range;
use std::path::PathBuf;

use errata_model::slug::SlugSet;
use errata_model::{Anchor, Diagnostic, FrontMatter};
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Parser, Tag, TagEnd};

use crate::source::{SourceFile, invalid_utf8};

/// A loaded article (or translation).
#[derive(Debug, Clone)]
pub struct ArticleDoc {
    /// The file, as shown in diagnostics.
    pub path: PathBuf,
    /// The id the path implies (`<domain>/<slug>`, without any `.zh`).
    pub path_id: Option<String>,
    /// `Some("zh")` for `<slug>.zh.md`; `None` for the English original.
    pub lang: Option<String>,
    /// The front matter as written (what the schema validates); `None` when absent or
    /// not YAML.
    pub front_value: Option<serde_json::Value>,
    /// The typed front matter, when it has the right shape.
    pub front: Option<FrontMatter>,
    /// Byte range of the YAML between the `---` lines.
    pub front_range: Range<usize>,
    /// Byte range of the Markdown body.
    pub body_range: Range<usize>,
    /// Headings in order, with their unique anchors.
    pub headings: Vec<Heading>,
    /// Links and images, in order.
    pub links: Vec<Link>,
    /// Code blocks, in order.
    pub code_blocks: Vec<CodeBlock>,
    /// sha256 of the file's bytes (what a translation's `source_hash` refers to).
    pub sha256: String,
}

/// A heading.
#[derive(Debug, Clone, PartialEq)]
pub struct Heading {
    /// 1 to 6.
    pub level: u8,
    /// The heading's text (inline code included, markup removed).
    pub text: String,
    /// Its unique anchor (`{#custom-id}` if given, else the GitHub-style slug).
    pub anchor: String,
    /// Byte range in the file.
    pub range: Range<usize>,
}

/// A link or image.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// The destination as written.
    pub dest: String,
    /// Byte range of the whole link in the file.
    pub range: Range<usize>,
    /// An image (`![alt](src)`) rather than a link.
    pub image: bool,
    /// An autolink (`<https://…>`).
    pub autolink: bool,
}

/// A code block.
#[derive(Debug, Clone, PartialEq)]
pub struct CodeBlock {
    /// The info string after the fence (empty for indented blocks).
    pub info: String,
    /// Byte offset of the info string in the file.
    pub info_offset: usize,
    /// The code.
    pub code: String,
    /// Byte range of the whole block (fences included).
    pub range: Range<usize>,
    /// 1-based line of the opening fence.
    pub line: usize,
    /// Fenced (as opposed to indented).
    pub fenced: bool,
}

pub(crate) fn parse_article(
    src: &SourceFile,
    path_id: Option<String>,
    lang: Option<String>,
) -> (ArticleDoc, Vec<Diagnostic>) {
    let mut diags = Vec::new();
    if let Some(at) = src.invalid_utf8_at {
        diags.push(invalid_utf8("unreadable", src, at));
    }
    let text: &str = &src.text;
    let (front_range, body_range) = split_front_matter(text);
    let (front_value, front) = match &front_range {
        None => {
            diags.push(
                Diagnostic::error("frontmatter", &src.path, Anchor::File, "article has no front matter")
                    .with_help("start the file with `---`, then `title:`, `id: <domain>/<slug>` and `date: YYYY-MM-DD`, then `---`"),
            );
            (None, None)
        }
        Some(range) => match serde_yaml_ng::from_str::<serde_json::Value>(&text[range.clone()]) {
            Ok(value) => {
                let front = value
                    .is_object()
                    .then(|| serde_json::from_value(value.clone()).ok())
                    .flatten();
                (Some(value), front)
            }
            Err(e) => {
                let at = e
                    .location()
                    .map_or(range.start, |l| range.start + l.index());
                let message = e.to_string();
                diags.push(
                    Diagnostic::error(
                        "frontmatter",
                        &src.path,
                        Anchor::Bytes(at..at + 1),
                        format!("front matter is not valid YAML: {message}"),
                    )
                    .with_help("front matter is a YAML mapping between two `---` lines"),
                );
                (None, None)
            }
        },
    };
    let mut doc = ArticleDoc {
        path: src.path.clone(),
        path_id,
        lang,
        front_value,
        front,
        front_range: front_range.unwrap_or(0..0),
        body_range: body_range.clone(),
        headings: Vec::new(),
        links: Vec::new(),
        code_blocks: Vec::new(),
        sha256: crate::sha256_hex(src.text.as_bytes()),
    };
    scan_body(src, body_range, &mut doc);
    (doc, diags)
}

/// Splits `---\n yaml \n---\n body` into the YAML range and the body range.
fn split_front_matter(text: &str) -> (Option<Range<usize>>, Range<usize>) {
    let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
    let rest = &text[bom..];
    let first_len = match rest.find('\n') {
        Some(i) if rest[..i].trim_end() == "---" => i + 1,
        _ => return (None, bom..text.len()),
    };
    let yaml_start = bom + first_len;
    let mut offset = yaml_start;
    for line in text[yaml_start..].split_inclusive('\n') {
        let trimmed = line.trim_end();
        if trimmed == "---" || trimmed == "..." {
            return (Some(yaml_start..offset), offset + line.len()..text.len());
        }
        offset += line.len();
    }
    // Unterminated: treat as no front matter (reported), keep the whole text as body.
    (None, bom..text.len())
}

fn scan_body(src: &SourceFile, body: Range<usize>, doc: &mut ArticleDoc) {
    let text = &src.text[body.clone()];
    let base = body.start;
    let mut slugs = SlugSet::new();
    let mut heading: Option<(u8, Option<String>, usize, String)> = None;
    let mut code: Option<CodeBlock> = None;

    for (event, range) in Parser::new_ext(text, crate::markdown::options()).into_offset_iter() {
        let range = base + range.start..base + range.end;
        match event {
            Event::Start(Tag::Heading { level, id, .. }) => {
                heading = Some((
                    heading_level(level),
                    id.map(|s| s.to_string()),
                    range.start,
                    String::new(),
                ));
            }
            Event::End(TagEnd::Heading(_)) => {
                if let Some((level, id, start, text)) = heading.take() {
                    let anchor = match id {
                        Some(id) => slugs.slug(&id),
                        None => slugs.slug(&text),
                    };
                    doc.headings.push(Heading {
                        level,
                        text: text.trim().to_string(),
                        anchor,
                        range: start..range.end,
                    });
                }
            }
            Event::Text(t) | Event::Code(t) => {
                if let Some((_, _, _, h)) = heading.as_mut() {
                    h.push_str(&t);
                }
                if let Some(block) = code.as_mut() {
                    block.code.push_str(&t);
                }
            }
            Event::Start(Tag::Link {
                link_type,
                dest_url,
                ..
            }) => doc.links.push(Link {
                dest: dest_url.to_string(),
                range,
                image: false,
                autolink: matches!(link_type, pulldown_cmark::LinkType::Autolink),
            }),
            Event::Start(Tag::Image { dest_url, .. }) => doc.links.push(Link {
                dest: dest_url.to_string(),
                range,
                image: true,
                autolink: false,
            }),
            Event::Start(Tag::CodeBlock(kind)) => {
                let (info, info_offset, fenced) = match kind {
                    CodeBlockKind::Fenced(info) => {
                        let fence_line = src.text[range.clone()].lines().next().unwrap_or("");
                        let after_fence = fence_line.trim_start().trim_start_matches(['`', '~']);
                        let lead = fence_line.len() - after_fence.len();
                        let ws = after_fence.len() - after_fence.trim_start().len();
                        (info.to_string(), range.start + lead + ws, true)
                    }
                    CodeBlockKind::Indented => (String::new(), range.start, false),
                };
                let (line, _) = src.lines().line_col(&src.text, range.start);
                code = Some(CodeBlock {
                    info,
                    info_offset,
                    code: String::new(),
                    range,
                    line,
                    fenced,
                });
            }
            Event::End(TagEnd::CodeBlock) => {
                if let Some(mut block) = code.take() {
                    block.range.end = range.end;
                    doc.code_blocks.push(block);
                }
            }
            _ => {}
        }
    }
}

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> (ArticleDoc, Vec<Diagnostic>) {
        let src = SourceFile::new("a.md".into(), text.to_string());
        parse_article(&src, Some("cuda/a".into()), None)
    }

    #[test]
    fn front_matter_headings_links_and_blocks() {
        let text = "---\ntitle: T\nid: cuda/a\ndate: \"2025-01-01\"\n---\n# Top\n\n## Sub `x`\n\nSee [b](b.md#top) and <https://x.org>.\n\n```cuda expect=ok\nint main() {}\n```\n";
        let (doc, diags) = parse(text);
        assert!(diags.is_empty(), "{diags:?}");
        let front = doc.front.unwrap();
        assert_eq!(
            (front.title.as_str(), front.date.as_str()),
            ("T", "2025-01-01")
        );
        let anchors: Vec<_> = doc
            .headings
            .iter()
            .map(|h| (h.level, h.anchor.as_str()))
            .collect();
        assert_eq!(anchors, [(1, "top"), (2, "sub-x")]);
        assert_eq!(doc.links.len(), 2);
        assert_eq!(doc.links[0].dest, "b.md#top");
        assert!(doc.links[1].autolink);
        let block = &doc.code_blocks[0];
        assert_eq!(block.info, "cuda expect=ok");
        assert_eq!(&text[block.info_offset..block.info_offset + 4], "cuda");
        assert_eq!(block.code, "int main() {}\n");
        assert_eq!(block.line, 12);
    }

    #[test]
    fn missing_front_matter_is_reported() {
        let (doc, diags) = parse("# Just a heading\n");
        assert!(doc.front.is_none());
        assert_eq!(diags[0].rule, "frontmatter");
        assert_eq!(doc.headings.len(), 1);
    }

    #[test]
    fn invalid_yaml_is_reported_with_position() {
        let (_, diags) = parse("---\ntitle: [unclosed\n---\nbody\n");
        assert_eq!(diags[0].rule, "frontmatter");
        assert!(matches!(diags[0].anchor, Anchor::Bytes(_)));
    }
}
