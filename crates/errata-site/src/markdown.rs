//! Article bodies: Markdown to safe HTML.
//!
//! The body is parsed with the loader's one pulldown-cmark configuration, and the event
//! stream is rewritten before it reaches the HTML writer:
//!
//! - headings get the anchors the loader computed (the shared `SlugSet` rule), so an
//!   `#anchor` that passes `errata check` exists on the page;
//! - fenced code is highlighted at build time and carries its run-record verdict;
//! - raw HTML is shown as text, never passed through;
//! - links: `https://` stays a link, in-page `#anchors` and relative links stay (with
//!   `.md` → `.html` and `signatures/…json` → `entries/…html`, since the site mirrors the
//!   data layout); any other scheme (`http:`, `javascript:`, `data:`, …) becomes plain
//!   text.

use pulldown_cmark::{CodeBlockKind, CowStr, Event, HeadingLevel, Parser, Tag, TagEnd};

use crate::highlight::{escape, highlight};
use crate::runs::Verdict;
use crate::urls::is_https;

/// What a rendered code block needs to know about its verdict.
pub struct SnippetBadge {
    /// Badge kind (CSS class suffix).
    pub kind: &'static str,
    /// Badge text in the page language.
    pub text: String,
}

/// Renders a Markdown body. `anchors` are the heading anchors in document order;
/// `verdict` is asked for each fenced block of a runnable language.
///
/// The page's title is its only `<h1>`: with `skip_first_heading` the body's first
/// heading (a level-1 heading repeating the title) is left out, and any other level-1
/// heading is rendered as `<h2>`.
pub fn render_body(
    markdown: &str,
    anchors: &[String],
    skip_first_heading: bool,
    mut verdict: impl FnMut(&str) -> Option<SnippetBadge>,
) -> String {
    let parser = Parser::new_ext(markdown, errata_load::markdown::options());
    let mut events: Vec<Event<'_>> = Vec::new();
    let mut heading_index = 0;
    let mut code: Option<(String, String)> = None; // (info, text)
    let mut links: Vec<bool> = Vec::new(); // per open link: was it kept?
    let mut images: Vec<bool> = Vec::new();
    let mut skipping = false;

    for event in parser {
        if skipping {
            skipping = !matches!(event, Event::End(TagEnd::Heading(_)));
            continue;
        }
        if let Some((_, text)) = code.as_mut() {
            match event {
                Event::Text(t) => text.push_str(&t),
                Event::End(TagEnd::CodeBlock) => {
                    if let Some((info, text)) = code.take() {
                        events.push(Event::Html(CowStr::from(code_block(
                            &info,
                            &text,
                            &mut verdict,
                        ))));
                    }
                }
                _ => {}
            }
            continue;
        }
        match event {
            Event::Start(Tag::Heading { level, .. }) => {
                let id = anchors.get(heading_index).cloned();
                heading_index += 1;
                if heading_index == 1 && skip_first_heading {
                    skipping = true;
                    continue;
                }
                let level = level.max(HeadingLevel::H2);
                events.push(Event::Start(Tag::Heading {
                    level,
                    id: id.map(CowStr::from),
                    classes: Vec::new(),
                    attrs: Vec::new(),
                }));
            }
            Event::Start(Tag::CodeBlock(kind)) => {
                let info = match kind {
                    CodeBlockKind::Fenced(info) => info.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                code = Some((info, String::new()));
            }
            Event::Html(html) | Event::InlineHtml(html) => events.push(Event::Text(html)),
            // Column alignment would be written as `style="text-align: …"`, which the
            // Content-Security-Policy (no inline styles) blocks; tables stay unaligned.
            Event::Start(Tag::Table(columns)) => events.push(Event::Start(Tag::Table(
                vec![pulldown_cmark::Alignment::None; columns.len()],
            ))),
            Event::Start(Tag::Link {
                dest_url, title, ..
            }) => match rewrite_link(&dest_url) {
                Some(href) => {
                    let external = is_https(&href);
                    let mut open = format!("<a href=\"{}\"", escape(&href));
                    if !title.is_empty() {
                        open.push_str(&format!(" title=\"{}\"", escape(&title)));
                    }
                    if external {
                        open.push_str(" rel=\"noopener noreferrer\"");
                    }
                    open.push('>');
                    events.push(Event::InlineHtml(CowStr::from(open)));
                    links.push(true);
                }
                None => links.push(false),
            },
            Event::End(TagEnd::Heading(level)) => {
                events.push(Event::End(TagEnd::Heading(level.max(HeadingLevel::H2))))
            }
            Event::End(TagEnd::Link) => {
                if links.pop() == Some(true) {
                    events.push(Event::InlineHtml(CowStr::from("</a>")));
                }
            }
            Event::Start(Tag::Image {
                link_type,
                dest_url,
                title,
                id,
            }) => {
                if is_https(&dest_url) {
                    events.push(Event::Start(Tag::Image {
                        link_type,
                        dest_url,
                        title,
                        id,
                    }));
                    images.push(true);
                } else {
                    images.push(false);
                }
            }
            Event::End(TagEnd::Image) => {
                if images.pop() == Some(true) {
                    events.push(Event::End(TagEnd::Image));
                }
            }
            other => events.push(other),
        }
    }
    let mut html = String::with_capacity(markdown.len() * 3 / 2);
    pulldown_cmark::html::push_html(&mut html, events.into_iter());
    html
}

/// A link destination as it appears on the site, or `None` when it must not be a link.
fn rewrite_link(dest: &str) -> Option<String> {
    let dest = dest.trim();
    if dest.is_empty() {
        return None;
    }
    if is_https(dest) {
        return Some(dest.to_string());
    }
    // A scheme is letters before the first ':' that comes before any '/', '?' or '#'.
    let head_end = dest.find(['/', '?', '#']).unwrap_or(dest.len());
    if dest[..head_end].contains(':') || dest.starts_with("//") || dest.starts_with('\\') {
        return None;
    }
    let (path, fragment) = match dest.find('#') {
        Some(i) => (&dest[..i], &dest[i..]),
        None => (dest, ""),
    };
    let path = if let Some(stem) = path
        .strip_suffix(".zh.md")
        .or_else(|| path.strip_suffix(".md"))
    {
        format!("{stem}.html")
    } else if let Some(stem) = path.strip_suffix(".json")
        && path.contains("signatures/")
    {
        format!("{}.html", stem.replacen("signatures/", "entries/", 1))
    } else {
        path.to_string()
    };
    Some(format!("{path}{fragment}"))
}

fn code_block(
    info: &str,
    code: &str,
    verdict: &mut impl FnMut(&str) -> Option<SnippetBadge>,
) -> String {
    let fence = errata_model::snippet::FenceInfo::parse(info);
    let lang = fence.lang_raw.as_str();
    let runnable = !matches!(fence.lang, errata_model::snippet::Lang::Other(_));
    let badge = if runnable { verdict(code) } else { None };
    let mut html = String::from("<figure class=\"snippet\">");
    if !lang.is_empty() || badge.is_some() {
        html.push_str("<figcaption>");
        if !lang.is_empty() {
            html.push_str(&format!("<span class=\"lang\">{}</span>", escape(lang)));
        }
        if let Some(b) = badge {
            html.push_str(&format!(
                "<span class=\"badge badge-{}\">{}</span>",
                b.kind,
                escape(&b.text)
            ));
        }
        html.push_str("</figcaption>");
    }
    let class = if lang.is_empty() {
        String::new()
    } else {
        format!(" class=\"language-{}\"", escape(lang))
    };
    html.push_str(&format!(
        // `tabindex`: a block wider than the page scrolls, and a scrollable region must
        // be reachable from the keyboard (axe-core: scrollable-region-focusable).
        "<pre tabindex=\"0\"><code{class}>{}</code></pre></figure>\n",
        highlight(code, lang)
    ));
    html
}

/// Turns a [`Verdict`] into a badge using a text lookup (the page's UI strings).
pub fn badge(verdict: &Verdict, text: impl Fn(&str, &[(&str, &str)]) -> String) -> SnippetBadge {
    let text = match verdict {
        Verdict::Unverified => text("badge_unverified", &[]),
        Verdict::Stale => text("badge_stale", &[]),
        Verdict::Verified { gpu, cuda, date } => text(
            "badge_verified",
            &[("gpu", gpu), ("cuda", cuda), ("date", date)],
        ),
        Verdict::Compiles { date } => text("badge_compiles", &[("date", date)]),
        Verdict::Static { date } => text("badge_static", &[("date", date)]),
        Verdict::Failing { outcome, date } => {
            text("badge_failing", &[("outcome", outcome), ("date", date)])
        }
        Verdict::Skipped { outcome, date } => {
            text("badge_skipped", &[("outcome", outcome), ("date", date)])
        }
    };
    SnippetBadge {
        kind: verdict.kind(),
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(md: &str) -> String {
        render_body(
            md,
            &["first".to_string(), "second".to_string()],
            false,
            |_| {
                Some(SnippetBadge {
                    kind: "unverified",
                    text: "unverified".into(),
                })
            },
        )
    }

    #[test]
    fn headings_get_shared_anchors_and_raw_html_is_text() {
        let html = render("# One\n\n<script>alert(1)</script>\n\n## Two <img src=x onerror=y>\n");
        assert!(
            html.contains("<h2 id=\"first\">One</h2>"),
            "the page title is the only h1: {html}"
        );
        assert!(html.contains("<h2 id=\"second\">"), "{html}");
        assert!(
            !html.contains("<script>") && !html.contains("<img"),
            "{html}"
        );
        assert!(html.contains("&lt;script&gt;"), "{html}");
    }

    #[test]
    fn tables_carry_no_inline_style() {
        let html = render("| a | b |\n|:--|--:|\n| 1 | 2 |\n");
        assert!(
            html.contains("<table>") && !html.contains("style="),
            "{html}"
        );
    }

    #[test]
    fn a_first_heading_repeating_the_title_is_left_out() {
        let html = render_body(
            "# Title\n\ntext\n\n## Next\n",
            &["title".into(), "next".into()],
            true,
            |_| None,
        );
        assert!(
            !html.contains("Title") && html.contains("<h2 id=\"next\">Next</h2>"),
            "{html}"
        );
    }

    #[test]
    fn only_safe_links_survive() {
        let html = render(
            "[a](https://docs.nvidia.com) [b](javascript:alert(1)) [c](http://x.org) [d](other.md#fix) [e](../../signatures/cuda/oom.json) [f](#top) ![i](data:image/png;base64,AA)",
        );
        assert!(
            html.contains("<a href=\"https://docs.nvidia.com\" rel=\"noopener noreferrer\">a</a>"),
            "{html}"
        );
        assert!(
            !html.contains("javascript:")
                && !html.contains("http://x.org")
                && !html.contains("data:"),
            "{html}"
        );
        assert!(html.contains("href=\"other.html#fix\""), "{html}");
        assert!(
            html.contains("href=\"../../entries/cuda/oom.html\""),
            "{html}"
        );
        assert!(html.contains("href=\"#top\""), "{html}");
    }

    #[test]
    fn code_blocks_are_highlighted_with_badges_only_when_runnable() {
        let html = render("```cuda expect=ok\nint x = 1;\n```\n\n```text\n<b>\n```\n");
        assert_eq!(html.matches("badge-unverified").count(), 1, "{html}");
        assert!(html.contains("class=\"language-cuda\""));
        assert!(html.contains("&lt;b&gt;"));
    }
}

/// Entry text fields are plain text with `code spans` in backticks (as contributors write
/// them): escaped, with each complete backtick pair turned into `<code>`.
pub fn inline_code(text: &str) -> String {
    let parts: Vec<&str> = text.split('`').collect();
    let mut out = String::with_capacity(text.len() + 16);
    for (i, part) in parts.iter().enumerate() {
        let closed = i % 2 == 1 && i + 1 < parts.len();
        if closed {
            out.push_str("<code>");
            out.push_str(&escape(part));
            out.push_str("</code>");
        } else {
            if i % 2 == 1 {
                out.push('`');
            }
            out.push_str(&escape(part));
        }
    }
    out
}

#[cfg(test)]
mod inline_tests {
    #[test]
    fn backtick_pairs_become_code_and_everything_is_escaped() {
        assert_eq!(
            super::inline_code("call `free(<p>)` now"),
            "call <code>free(&lt;p&gt;)</code> now"
        );
        assert_eq!(super::inline_code("odd ` tick <b>"), "odd ` tick &lt;b&gt;");
        assert_eq!(super::inline_code("`a` and `b"), "<code>a</code> and `b");
    }
}
