//! Where every page lives, and relative links between pages.
//!
//! English pages are at the site root and Chinese pages under `zh/`, with the same
//! paths below that. Pages are `.html` files (not `dir/index.html`) and every link is
//! relative, so the site works from any sub-path and straight from `file://`.

/// A site language.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lang {
    /// English, at the root.
    En,
    /// Simplified Chinese, under `zh/`.
    Zh,
}

impl Lang {
    /// Both languages, English first.
    pub const ALL: [Lang; 2] = [Lang::En, Lang::Zh];

    /// The BCP 47 code (`en`, `zh`), used for `lang` and `hreflang`.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Zh => "zh",
        }
    }

    /// The directory prefix of this language's pages (`""` or `"zh/"`).
    pub fn prefix(self) -> &'static str {
        match self {
            Lang::En => "",
            Lang::Zh => "zh/",
        }
    }

    /// `<prefix><page>`: the file path of a language-neutral page path.
    pub fn file(self, page: &str) -> String {
        format!("{}{page}", self.prefix())
    }
}

/// `../` repeated once per directory level of `file` (a `/`-separated site path).
pub fn root_of(file: &str) -> String {
    "../".repeat(file.matches('/').count())
}

/// The page path of an entry (`entries/<domain>/<slug>.html`).
pub fn entry_page(id: &str) -> String {
    format!("entries/{id}.html")
}

/// The page path of an article.
pub fn article_page(id: &str) -> String {
    format!("articles/{id}.html")
}

/// The page path of a domain index.
pub fn domain_page(domain: &str) -> String {
    format!("domains/{domain}.html")
}

/// The page path of a tag index. Spellings with the same slug ("CUDA Graphs",
/// "cuda-graphs") share one page.
pub fn tag_page(tag: &str) -> String {
    tag_slug_page(&tag_slug(tag))
}

/// The page path of the tag index with this slug.
pub fn tag_slug_page(slug: &str) -> String {
    format!("tags/{slug}.html")
}

/// A file-name-safe slug for a tag: lower-case ASCII letters, digits and `-`; anything
/// else becomes `-`, and a tag with nothing usable left gets a short hash instead.
pub fn tag_slug(tag: &str) -> String {
    let mut slug = String::new();
    for c in tag.trim().chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let slug = slug.trim_matches('-').to_string();
    if slug.is_empty() || !tag.is_ascii() {
        let hash = errata_load::sha256_hex(tag.as_bytes());
        if slug.is_empty() {
            format!("t-{}", &hash[..12])
        } else {
            format!("{slug}-{}", &hash[..8])
        }
    } else {
        slug
    }
}

/// An id is safe to use as a path: `<domain>/<slug>`, lower-case ASCII kebab on both
/// sides (the checker enforces this; the site re-checks so it can never write outside
/// its output directory whatever the input).
pub fn is_safe_id(id: &str) -> bool {
    let ok = |part: &str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
            && !part.starts_with('-')
    };
    matches!(id.split_once('/'), Some((d, s)) if ok(d) && ok(s))
}

/// `true` for an absolute `https://` URL with a host: the only URLs that become links.
pub fn is_https(url: &str) -> bool {
    let url = url.trim();
    // `get`, not `[..8]`: the eighth byte may fall inside a character (found by the
    // hostile-strings browser test, with an RTL override there).
    url.len() > 8
        && url
            .get(..8)
            .is_some_and(|s| s.eq_ignore_ascii_case("https://"))
        && !url[8..].starts_with('/')
        && !url.chars().any(|c| c.is_control() || c.is_whitespace())
}

/// Joins a base URL (`/`, `/errata/`, `https://x.org/errata`) and a site path.
pub fn absolute(base: &str, path: &str) -> String {
    let base = base.trim_end_matches('/');
    format!("{base}/{path}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_with_a_character_across_byte_8_is_not_https_and_no_panic() {
        assert!(!is_https("normal \u{202e}txt"));
        assert!(!is_https("https:/\u{e9}x.org"));
        assert!(is_https("https://\u{e9}x.org/"));
    }

    #[test]
    fn roots_are_relative() {
        assert_eq!(root_of("index.html"), "");
        assert_eq!(root_of("zh/entries/cuda/x.html"), "../../../");
    }

    #[test]
    fn only_https_with_a_host_is_a_link() {
        assert!(is_https("https://docs.nvidia.com/cuda/"));
        assert!(is_https("HTTPS://x.org"));
        for bad in [
            "http://x.org",
            "javascript:alert(1)",
            "https:///x",
            "data:text/html,x",
            "https://x.org/\u{0}a",
            "//x.org",
        ] {
            assert!(!is_https(bad), "{bad}");
        }
    }

    #[test]
    fn ids_that_could_escape_the_output_are_refused() {
        assert!(is_safe_id("cuda/out-of-memory"));
        for bad in [
            "cuda/../x",
            "../x",
            "cuda/x/y",
            "Cuda/x",
            "cuda/",
            "/x",
            "cuda/x.json",
        ] {
            assert!(!is_safe_id(bad), "{bad}");
        }
    }

    #[test]
    fn tag_slugs() {
        assert_eq!(tag_slug("PyTorch 2.x"), "pytorch-2-x");
        assert!(tag_slug("显存").starts_with("t-"));
        assert_ne!(tag_slug("显存"), tag_slug("内存"));
    }
}
