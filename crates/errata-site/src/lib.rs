//! The errata static site: a loaded knowledge base in, a directory of HTML out.
//!
//! [`render_into`] renders an [`errata_load::KnowledgeBase`] straight into a directory,
//! atomically: each file goes into a staging directory beside the target as soon as it
//! is rendered, and the staging directory is swapped in once every output has rendered,
//! so a failed build never leaves a half-written site and the whole site is never held
//! in memory. [`render`] renders the same files into [`SiteFiles`] in memory instead
//! (for tests and tools that look at the files; [`SiteFiles::write_atomically`] writes
//! them the same way). The pipeline is load → (check, by the caller) → render → write, as
//! in Zola and mdBook.
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

use std::path::{Path, PathBuf};

use errata_load::KnowledgeBase;
use rayon::prelude::*;

pub use error::{Error, ErrorKind};
use output::Sink;
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

/// What a full render reports: the page count, the files and bytes handed to the sink,
/// and the search indexes (kept by [`SiteState`] for incremental updates).
pub(crate) struct FullRender {
    pub pages: usize,
    pub files: usize,
    pub bytes: usize,
    pub search: Vec<search::SearchIndex>,
}

/// Renders every output of the site (in parallel), the search indexes with them, handing
/// each file to `sink` as soon as it is rendered.
pub(crate) fn render_all(ctx: &pages::Ctx<'_>, sink: &dyn Sink) -> Result<FullRender, Error> {
    use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
    let outs = outputs::Out::all(ctx.catalog);
    let pages = outs.iter().filter(|o| o.is_page()).count();
    let (files, bytes) = (AtomicUsize::new(0), AtomicUsize::new(0));
    let put = |(path, content): File| {
        files.fetch_add(1, Relaxed);
        bytes.fetch_add(content.len(), Relaxed);
        sink.put(path, content)
    };
    let (rendered, search) = rayon::join(
        || {
            outs.par_iter()
                .try_for_each(|out| ctx.render_out(out)?.into_iter().try_for_each(put))
        },
        || {
            Lang::ALL
                .par_iter()
                .map(|&lang| search::SearchIndex::build(ctx, lang))
                .collect::<Vec<_>>()
        },
    );
    rendered?;
    search
        .par_iter()
        .try_for_each(|s| s.files().into_iter().try_for_each(put))?;
    Ok(FullRender {
        pages,
        files: files.into_inner(),
        bytes: bytes.into_inner(),
        search,
    })
}

/// Renders the whole site in memory. Nothing is written.
pub fn render(kb: &KnowledgeBase, opts: &SiteOptions) -> Result<Rendered, Error> {
    let files = std::sync::Mutex::new(SiteFiles::default());
    let (full, skipped) = render_with(kb, opts, &files)?;
    Ok(Rendered {
        files: files.into_inner().map_err(|_| Error::renderer_panicked())?,
        skipped,
        pages: full.pages,
    })
}

/// A site written by [`render_into`].
#[derive(Debug)]
#[non_exhaustive]
pub struct Written {
    /// Number of HTML pages.
    pub pages: usize,
    /// Number of files.
    pub files: usize,
    /// Their total size in bytes.
    pub bytes: usize,
    /// Ids not published because they are not safe paths (see [`Rendered::skipped`]).
    pub skipped: Vec<String>,
    /// The site this one replaced, swapped out and not yet removed.
    pub replaced: Replaced,
}

/// Renders the whole site straight into `out`, atomically: each file is written to a
/// staging directory beside `out` as soon as it is rendered, and the staging directory
/// replaces `out` once everything has rendered. On error `out` is as it was and the
/// staging directory is gone. The previous site is returned in [`Written::replaced`]
/// to be removed when convenient (deleting tens of thousands of files takes a while, and
/// the new site is in place already).
///
/// The same files as [`render`] followed by [`SiteFiles::write_atomically_deferred`],
/// without holding the whole site in memory.
pub fn render_into(kb: &KnowledgeBase, opts: &SiteOptions, out: &Path) -> Result<Written, Error> {
    let staging = output::Staging::begin(out)?;
    let (full, skipped) = render_with(kb, opts, &staging)?;
    Ok(Written {
        pages: full.pages,
        files: full.files,
        bytes: full.bytes,
        skipped,
        replaced: staging.commit()?,
    })
}

/// Loads the theme and run records, catalogs `kb`, and renders every output into `sink`.
fn render_with(
    kb: &KnowledgeBase,
    opts: &SiteOptions,
    sink: &dyn Sink,
) -> Result<(FullRender, Vec<String>), Error> {
    let theme = theme::Theme::load(opts.theme_dir.as_deref())?;
    let runs = runs::Runs::load(&kb.root)?;
    let outcomes = errata_load::outcome_index(&kb.outcomes);
    let catalog = catalog::Catalog::new(kb);
    let ctx = pages::Ctx {
        theme: &theme,
        opts,
        catalog: &catalog,
        runs: &runs,
        outcomes: &outcomes,
        data_root: &kb.root,
        texts: kb,
    };
    let full = render_all(&ctx, sink)?;
    Ok((full, catalog.skipped.clone()))
}
