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
//! - [`search`]: the offline English/Chinese search index, in shards loaded on demand;
//! - machine-readable files: `sitemap.xml`, Atom feeds, `robots.txt`, `api/v1/`;
//! - [`SiteState`]: a built site kept in memory and rebuilt incrementally, file by file,
//!   when data files change (`errata serve`);
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
mod outputs;
mod pages;
pub mod runs;
pub mod search;
pub mod serve;
mod state;
mod theme;
pub mod urls;

use std::path::PathBuf;

use errata_load::KnowledgeBase;
use rayon::prelude::*;

pub use error::{Error, ErrorKind};
pub use output::{Replaced, SiteFiles};
pub use state::{Rebuild, Reload, SiteState};
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

/// Everything a full render produces: the files, the page count, and the search
/// indexes (kept by [`SiteState`] for incremental updates).
pub(crate) struct FullRender {
    pub files: SiteFiles,
    pub pages: usize,
    pub search: Vec<search::SearchIndex>,
}

/// Renders every output of the site (in parallel), the search indexes with them.
pub(crate) fn render_all(ctx: &pages::Ctx<'_>) -> Result<FullRender, Error> {
    let outs = outputs::Out::all(ctx.catalog);
    let pages = outs.iter().filter(|o| o.is_page()).count();
    let (rendered, search) = rayon::join(
        || {
            outs.par_iter()
                .map(|out| ctx.render_out(out))
                .collect::<Result<Vec<Vec<File>>, Error>>()
        },
        || {
            Lang::ALL
                .par_iter()
                .map(|&lang| search::SearchIndex::build(ctx, lang))
                .collect::<Vec<_>>()
        },
    );
    let mut files = SiteFiles::default();
    for (path, bytes) in rendered?.into_iter().flatten() {
        files.insert(path, bytes);
    }
    let search_files: Vec<Vec<File>> = search.par_iter().map(|s| s.files()).collect();
    for (path, bytes) in search_files.into_iter().flatten() {
        files.insert(path, bytes);
    }
    Ok(FullRender {
        files,
        pages,
        search,
    })
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
        texts: kb,
    };
    let full = render_all(&ctx)?;
    Ok(Rendered {
        files: full.files,
        skipped: catalog.skipped.clone(),
        pages: full.pages,
    })
}
