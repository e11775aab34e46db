//! The errata static site: a loaded knowledge base in, a directory of HTML out.
//!
//! [`render`] turns an [`errata_load::KnowledgeBase`] into [`SiteFiles`] (every file of
//! the site, in memory); [`SiteFiles::write_atomically`] puts them on disk by building a
//! sibling directory and swapping it in, so a failed build never leaves a half-written
//! site. The pipeline is load → (check, by the caller) → render → write, as in Zola and
//! mdBook.
//!
//! - [`catalog`]: entries and articles sorted and cross-referenced once;
//! - pages: one function per page type (entry, article, home, domain, tag,
//!   translation status, search, 404) filling a Tera template from `site/templates`;
//! - [`markdown`]: article bodies to safe HTML with build-time highlighting;
//! - [`runs`]: snippet run records → verification badges;
//! - [`search`]: the offline English/Chinese search index;
//! - machine-readable files: `sitemap.xml`, Atom feeds, `robots.txt`, `api/v1/`;
//! - [`serve`]: the local preview server behind `errata serve`.
//!
//! Every page exists in English (at the root) and Chinese (under `zh/`). Links are
//! relative, so the site works from a sub-path and from `file://`. Output is a pure
//! function of the input: no clock, no randomness, sorted iteration everywhere.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let data = tempfile::tempdir()?;
//! std::fs::create_dir_all(data.path().join("signatures/cuda"))?;
//! std::fs::write(
//!     data.path().join("signatures/cuda/oom.json"),
//!     r#"{"id": "cuda/oom", "signature": "CUDA error: out of memory", "last_updated": "2026-01-01"}"#,
//! )?;
//! let kb = errata_load::KnowledgeBase::load(data.path())?;
//! let site = errata_site::render(&kb, &errata_site::SiteOptions::default())?;
//! let page = String::from_utf8_lossy(site.files.get("entries/cuda/oom.html").unwrap());
//! assert!(page.contains("CUDA error: out of memory"));
//! assert!(site.files.get("zh/entries/cuda/oom.html").is_some());
//!
//! let out = tempfile::tempdir()?;
//! site.files.write_atomically(&out.path().join("site"))?;
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod catalog;
mod error;
mod highlight;
mod indexes;
mod machine;
pub mod markdown;
mod output;
mod pages;
pub mod runs;
pub mod search;
pub mod serve;
mod theme;
pub mod urls;

use std::path::PathBuf;

use errata_load::KnowledgeBase;
use rayon::prelude::*;

pub use error::{Error, ErrorKind};
pub use output::SiteFiles;
pub use urls::Lang;

/// How to build the site.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SiteOptions {
    /// Where the site will be served: `/`, `/errata/` or `https://example.org/errata/`.
    /// Only absolute URLs (canonical, hreflang, sitemap, feeds, 404 links) use it; page
    /// links are relative.
    pub base_url: String,
    /// `https://github.com/<org>/<repo>/edit/<branch>/<data dir>/`: prepended to an
    /// entry's data-relative path for its "edit this entry" link. `None`: no link.
    pub edit_url_prefix: Option<String>,
    /// A directory laid out like the repository's `site/` whose files replace the
    /// embedded templates, assets and UI strings.
    pub theme_dir: Option<PathBuf>,
}

impl Default for SiteOptions {
    fn default() -> Self {
        SiteOptions {
            base_url: "/".into(),
            edit_url_prefix: None,
            theme_dir: None,
        }
    }
}

impl SiteOptions {
    /// Options with this base URL.
    pub fn with_base_url(mut self, base_url: impl Into<String>) -> Self {
        self.base_url = base_url.into();
        self
    }

    /// Options with this "edit" link prefix (ignored unless it is an `https://` URL).
    pub fn with_edit_url_prefix(mut self, prefix: Option<String>) -> Self {
        self.edit_url_prefix = prefix.filter(|p| urls::is_https(p));
        self
    }

    /// Options with a theme override directory.
    pub fn with_theme_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.theme_dir = dir;
        self
    }
}

/// A rendered site and what the renderer had to leave out.
#[derive(Debug)]
#[non_exhaustive]
pub struct Rendered {
    /// Every file of the site.
    pub files: SiteFiles,
    /// Ids not published because they are not safe paths (the checker reports them as
    /// errors, so a checked knowledge base has none).
    pub skipped: Vec<String>,
    /// Number of HTML pages.
    pub pages: usize,
}

/// A site-wide file: path and bytes.
type File = (String, Vec<u8>);

enum Job<'a> {
    Entry(&'a str, Lang),
    Article(&'a str, Lang),
    Domain(&'a str, Lang),
    Tag(&'a str, Lang),
    Home(Lang),
    Translations(Lang),
    Search(Lang),
    NotFound(Lang),
}

/// Renders the whole site in memory. Nothing is written.
pub fn render(kb: &KnowledgeBase, opts: &SiteOptions) -> Result<Rendered, Error> {
    let theme = theme::Theme::load(opts.theme_dir.as_deref())?;
    let runs = runs::Runs::load(&kb.root)?;
    let catalog = catalog::Catalog::new(kb);
    let ctx = pages::Ctx {
        theme: &theme,
        opts,
        catalog: &catalog,
        runs: &runs,
        data_root: &kb.root,
        kb,
    };

    let mut jobs = Vec::new();
    for lang in Lang::ALL {
        jobs.extend([
            Job::Home(lang),
            Job::Translations(lang),
            Job::Search(lang),
            Job::NotFound(lang),
        ]);
        jobs.extend(catalog.entries.keys().map(|id| Job::Entry(id, lang)));
        jobs.extend(catalog.articles.keys().map(|id| Job::Article(id, lang)));
        jobs.extend(catalog.domains.keys().map(|d| Job::Domain(d, lang)));
        jobs.extend(catalog.tags.keys().map(|t| Job::Tag(t, lang)));
    }
    // Pages, and the site-wide files (search indexes, feeds, API) in parallel with them.
    let (rendered, extras) = rayon::join(
        || {
            jobs.par_iter()
                .map(|job| match *job {
                    Job::Entry(id, lang) => ctx.entry_page(id, lang),
                    Job::Article(id, lang) => ctx.article_page(id, lang),
                    Job::Domain(d, lang) => ctx.domain_page(d, lang),
                    Job::Tag(t, lang) => ctx.tag_page(t, lang),
                    Job::Home(lang) => ctx.home_page(lang),
                    Job::Translations(lang) => ctx.translations_page(lang),
                    Job::Search(lang) => ctx.search_page(lang),
                    Job::NotFound(lang) => ctx.not_found_page(lang),
                })
                .collect::<Result<Vec<(String, String)>, Error>>()
        },
        || -> Result<Vec<File>, Error> {
            let parts: Vec<Result<Vec<File>, Error>> = Lang::ALL
                .par_iter()
                .map(|&lang| {
                    Ok(vec![
                        (
                            format!("search/{}.js", lang.code()),
                            search::build(&ctx, lang).into_bytes(),
                        ),
                        (
                            lang.file("feed.xml"),
                            machine::feed(&ctx, lang)?.into_bytes(),
                        ),
                    ])
                })
                .chain(rayon::iter::once(Ok(machine::api(&ctx))))
                .collect();
            let mut all = Vec::new();
            for part in parts {
                all.extend(part?);
            }
            Ok(all)
        },
    );
    let rendered = rendered?;

    let mut files = SiteFiles::default();
    let pages = rendered.len();
    for (path, html) in rendered {
        files.insert(path, html);
    }
    for (path, bytes) in extras? {
        files.insert(path, bytes);
    }
    for (name, text) in &theme.statics {
        files.insert(format!("static/{name}"), text.as_bytes());
    }
    // Sitemap: every language-neutral page with its last-modified date from the data.
    let mut sitemap_pages: Vec<(String, String)> = vec![
        ("index.html".into(), String::new()),
        ("translations.html".into(), String::new()),
    ];
    sitemap_pages.extend(
        catalog
            .entries
            .iter()
            .map(|(id, (e, _))| (urls::entry_page(id), e.last_updated.clone())),
    );
    sitemap_pages.extend(
        catalog
            .articles
            .iter()
            .map(|(id, a)| (urls::article_page(id), a.date().to_string())),
    );
    sitemap_pages.extend(
        catalog
            .domains
            .keys()
            .map(|d| (urls::domain_page(d), String::new())),
    );
    sitemap_pages.extend(
        catalog
            .tags
            .keys()
            .map(|t| (urls::tag_page(t), String::new())),
    );
    files.insert("sitemap.xml", machine::sitemap(&ctx, &sitemap_pages)?);
    files.insert("robots.txt", machine::robots(&ctx));
    // An empty marker so `file://` users and static hosts see what this is.
    files.insert(".nojekyll", Vec::new());
    Ok(Rendered {
        files,
        skipped: catalog.skipped.clone(),
        pages,
    })
}
