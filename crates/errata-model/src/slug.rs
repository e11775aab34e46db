//! Heading anchors, the way GitHub and the errata site compute them.
//!
//! Both `broken-link` (in the checker) and the site's table of contents use these
//! functions, so an anchor that passes the check is an anchor that exists on the page.

use std::collections::HashMap;

/// The slug of one heading text: lower-cased, spaces to `-`, everything that is not a
/// letter, digit, `-` or `_` removed (non-ASCII letters such as Chinese are kept).
///
/// ```
/// assert_eq!(errata_model::slug::heading_slug("Section 1: Out of Memory (OOM)"), "section-1-out-of-memory-oom");
/// ```
pub fn heading_slug(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.trim().chars() {
        if c.is_alphanumeric() || c == '_' || c == '-' {
            out.extend(c.to_lowercase());
        } else if c == ' ' {
            out.push('-');
        }
    }
    out
}

/// Assigns unique slugs to a sequence of headings: the second "Example" becomes
/// `example-1`, the third `example-2`, as on GitHub.
#[derive(Debug, Default)]
pub struct SlugSet {
    seen: HashMap<String, usize>,
}

impl SlugSet {
    /// An empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The unique slug for the next heading with this text.
    pub fn slug(&mut self, text: &str) -> String {
        let base = heading_slug(text);
        let mut candidate = base.clone();
        loop {
            match self.seen.get_mut(&candidate) {
                None => {
                    self.seen.insert(candidate.clone(), 0);
                    if candidate != base {
                        // Reserve the base's counter too so later duplicates keep counting.
                        self.seen.entry(base).or_insert(0);
                    }
                    return candidate;
                }
                Some(_) => {
                    let n = self.seen.get_mut(&base).map(|n| {
                        *n += 1;
                        *n
                    });
                    candidate = format!("{base}-{}", n.unwrap_or(1));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn github_style_slugs() {
        assert_eq!(
            heading_slug("Understanding PyTorch OOM"),
            "understanding-pytorch-oom"
        );
        assert_eq!(
            heading_slug("Example 1: `torch.cat` on CPU & GPU"),
            "example-1-torchcat-on-cpu--gpu"
        );
        assert_eq!(heading_slug("错误 处理"), "错误-处理");
    }

    #[test]
    fn duplicates_are_numbered() {
        let mut set = SlugSet::new();
        assert_eq!(set.slug("Example"), "example");
        assert_eq!(set.slug("Example"), "example-1");
        assert_eq!(set.slug("Example"), "example-2");
        assert_eq!(set.slug("Example 1"), "example-1-1");
    }
}
