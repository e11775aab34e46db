//! The one configuration of the Markdown parser, shared by the checker, the snippet
//! extractor and the site so that all three see the same document.

use pulldown_cmark::Options;

/// The CommonMark extensions errata articles may use.
pub fn options() -> Options {
    Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_HEADING_ATTRIBUTES
        | Options::ENABLE_TASKLISTS
}
