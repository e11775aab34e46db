//! Incremental rebuilds for a long-lived process (`errata serve`): see [`SiteState`].

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use errata_load::{ArticleDoc, EntryDoc, KnowledgeBase};
use errata_model::Entry;
use rayon::prelude::*;

use crate::catalog::{ArticlePair, Catalog, Translation, unique};
use crate::error::{Error, ErrorKind};
use crate::output::{Sink, SiteFiles, Staging};
use crate::outputs::Out;
use crate::pages::{Ctx, Texts};
use crate::runs::Runs;
use crate::search::{DocRef, SearchIndex};
use crate::theme::Theme;
use crate::urls::{self, Lang};
use crate::{SiteOptions, render_all};

/// The loaded data a site is rendered from, owned, keyed by data-relative path.
struct Store {
    root: PathBuf,
    entries: BTreeMap<PathBuf, EntryDoc>,
    articles: BTreeMap<PathBuf, ArticleDoc>,
    /// File path (as in the documents) → text.
    texts: HashMap<PathBuf, Arc<String>>,
}

impl Texts for Store {
    fn text(&self, path: &Path) -> Option<&str> {
        self.texts.get(path).map(|t| t.as_str())
    }
}

impl Store {
    fn catalog(&self) -> Catalog<'_> {
        Catalog::from_docs(self.entries.values(), self.articles.values())
    }
}

/// What a build or rebuild did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rebuild {
    /// Data files reloaded (changed, added or removed).
    pub reloaded: usize,
    /// Outputs (pages and other files) rendered.
    pub rendered: usize,
    /// Files written because their bytes changed.
    pub written: usize,
    /// Files deleted.
    pub removed: usize,
    /// HTML pages the site has now.
    pub pages: usize,
    /// Everything was rendered (a full build, a change under `runs/`, or the first
    /// rebuild after one that failed half-way).
    pub full: bool,
}

/// A site built once and kept up to date file by file, for a long-lived process
/// (`errata serve`).
///
/// A `SiteState` keeps what a full build computed: the loaded entries and articles,
/// the search indexes, and a digest of every file it wrote. When files of the data
/// directory change, [`SiteState::rebuild`] reloads only those files, works out which
/// outputs depend on them, re-renders those, rewrites the files whose bytes changed and
/// deletes the ones that no longer exist. The result is byte for byte the site a full
/// build of the changed data would write (the tests check this on a generated corpus).
///
/// What depends on what (the dependency map is computed from the catalog, not recorded
/// while rendering, so it cannot go stale):
///
/// | a change to an entry's…                          | re-renders |
/// |--------------------------------------------------|------------|
/// | file (anything)                                  | its page (en, zh), `api/v1/<id>.json`, its search documents |
/// | existence, `signature`, `signature_zh`           | pages of entries whose transition graph names it, of articles whose `signatures` name it |
/// | existence, titles, `last_updated`, `tags`        | its domain and tag pages (old and new tags), home |
/// | existence, titles, `last_updated`, root causes   | feeds |
/// | existence, `last_updated`                        | `sitemap.xml` |
/// | existence, titles, `error_code`, `last_updated`  | `api/v1/index.json` |
/// | existence, whether it is translated              | translation status pages |
/// | existence                                        | search pages (document count) |
///
/// Articles (either language's file) likewise: their pages and search documents; the
/// pages of the entries they name (old and new `signatures`) when their title,
/// translation state or `signatures` change; domain, tag and home pages when their
/// listing (titles, date, tags) changes; feeds when titles, date or summary change;
/// translation status, sitemap and API index when what those show changes. A domain or
/// tag that appears or disappears changes the sitemap. A change under `runs/`
/// re-renders everything in memory and writes only the files whose bytes changed (as
/// does the rebuild after one that failed half-way). The theme and `errata.toml` are
/// not watched here: the caller starts a new state (a full build) for those.
///
/// The site does no checking: the caller checks the changed files
/// ([`Reload::knowledge_base`] holds them) before or after calling
/// [`SiteState::apply`].
pub struct SiteState {
    opts: SiteOptions,
    theme: Theme,
    runs: Runs,
    /// Outcome records, reloaded with the run records (both re-render everything).
    outcomes: errata_outcomes::Index,
    store: Store,
    search: Vec<SearchIndex>,
    out: PathBuf,
    /// Site path → digest of the bytes on disk.
    written: BTreeMap<String, u64>,
    pages: usize,
    /// The domains and tags with a page, as of the last build.
    sections: (Vec<String>, Vec<String>),
    /// A rebuild failed after taking in new documents: the next one renders everything.
    stale: bool,
}

impl std::fmt::Debug for SiteState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SiteState")
            .field("out", &self.out)
            .field("files", &self.written.len())
            .field("pages", &self.pages)
            .finish_non_exhaustive()
    }
}

impl SiteState {
    /// Renders the whole site from `kb` and writes it to `out` atomically (as
    /// [`crate::SiteFiles::write_atomically`]), keeping what later rebuilds need.
    pub fn full_build(
        mut kb: KnowledgeBase,
        opts: SiteOptions,
        out: &Path,
    ) -> Result<(SiteState, Rebuild), Error> {
        let theme = Theme::load(opts.theme_dir.as_deref())?;
        let runs = Runs::load(&kb.root)?;
        let outcomes = errata_load::outcome_index(&kb.outcomes);
        let root = kb.root.clone();
        let texts = kb
            .sources()
            .iter()
            .map(|s| (s.path.clone(), Arc::clone(&s.text)))
            .collect();
        let relative = |p: &Path| p.strip_prefix(&root).unwrap_or(p).to_path_buf();
        let entries = std::mem::take(&mut kb.entries)
            .into_iter()
            .map(|d| (relative(&d.path), d))
            .collect();
        let articles = std::mem::take(&mut kb.articles)
            .into_iter()
            .map(|d| (relative(&d.path), d))
            .collect();
        let store = Store {
            root: root.clone(),
            entries,
            articles,
            texts,
        };
        let staging = Staging::begin(out)?;
        let sink = Digesting {
            inner: &staging,
            digests: Mutex::new(BTreeMap::new()),
        };
        let (full, sections) = {
            let catalog = store.catalog();
            let sections = sections(&catalog);
            let ctx = Ctx {
                theme: &theme,
                opts: &opts,
                catalog: &catalog,
                runs: &runs,
                outcomes: &outcomes,
                data_root: &root,
                texts: &store,
            };
            (render_all(&ctx, &sink)?, sections)
        };
        let written = sink
            .digests
            .into_inner()
            .map_err(|_| Error::renderer_panicked())?;
        staging.commit()?.remove();
        let report = Rebuild {
            reloaded: 0,
            rendered: full.files,
            written: full.files,
            removed: 0,
            pages: full.pages,
            full: true,
        };
        Ok((
            SiteState {
                opts,
                theme,
                runs,
                outcomes,
                store,
                search: full.search,
                out: out.to_path_buf(),
                written,
                pages: full.pages,
                sections,
                stale: false,
            },
            report,
        ))
    }

    /// The data directory the site is built from.
    pub fn data_dir(&self) -> &Path {
        &self.store.root
    }

    /// The output directory.
    pub fn out_dir(&self) -> &Path {
        &self.out
    }

    /// Reloads these files of the data directory (changed, added or removed; paths as
    /// the file system gives them) and brings the site on disk up to date.
    pub fn rebuild(&mut self, changed: &[PathBuf]) -> Result<Rebuild, Error> {
        let reload = Reload::load(&self.store.root, changed)?;
        self.apply(reload)
    }

    /// [`SiteState::rebuild`] with the changed files already loaded (so that the caller
    /// could check them first).
    pub fn apply(&mut self, reload: Reload) -> Result<Rebuild, Error> {
        let Reload {
            kb,
            entry_paths,
            article_paths,
            runs_changed,
            ..
        } = reload;
        let reloaded = entry_paths.len() + article_paths.len() + usize::from(runs_changed);
        let mut timer = Timer::new();
        // Run records first: a malformed one fails the rebuild before anything changed.
        let runs = if runs_changed {
            Some(Runs::load(&self.store.root)?)
        } else {
            None
        };

        // What the changed files were before: ids, and the facts pages show of them.
        // (Found by scanning the documents: cheaper than a second catalog.)
        let (entry_ids, article_ids, old_entries, old_articles) = {
            let mut entry_ids: BTreeSet<String> = BTreeSet::new();
            let mut article_ids: BTreeSet<String> = BTreeSet::new();
            for rel in &entry_paths {
                if let Some(id) = self.store.entries.get(rel).and_then(entry_id) {
                    entry_ids.insert(id.to_string());
                }
            }
            for rel in &article_paths {
                if let Some(id) = self.store.articles.get(rel).and_then(|d| d.path_id.clone()) {
                    article_ids.insert(id);
                }
            }
            entry_ids.extend(kb.entries.iter().filter_map(entry_id).map(str::to_string));
            article_ids.extend(kb.articles.iter().filter_map(|d| d.path_id.clone()));
            let old_entries: BTreeMap<String, Option<EntryFacts>> = entry_ids
                .iter()
                .map(|id| (id.clone(), EntryFacts::before(&self.store, id)))
                .collect();
            let old_articles: BTreeMap<String, Option<ArticleFacts>> = article_ids
                .iter()
                .map(|id| (id.clone(), ArticleFacts::before(&self.store, id)))
                .collect();
            (entry_ids, article_ids, old_entries, old_articles)
        };

        // Swap the documents.
        let root = self.store.root.clone();
        let kb_root = kb.root.clone();
        let texts: HashMap<PathBuf, Arc<String>> = kb
            .sources()
            .iter()
            .filter_map(|s| {
                let rel = s.path.strip_prefix(&kb_root).ok()?;
                Some((join_root(&root, rel), Arc::clone(&s.text)))
            })
            .collect();
        for rel in entry_paths.iter().chain(&article_paths) {
            let path = join_root(&root, rel);
            self.store.texts.remove(&path);
            self.store.entries.remove(rel);
            self.store.articles.remove(rel);
        }
        let mut kb = kb;
        for mut doc in std::mem::take(&mut kb.entries) {
            let Ok(rel) = doc.path.strip_prefix(&kb_root).map(Path::to_path_buf) else {
                continue;
            };
            doc.path = join_root(&root, &rel);
            self.store.entries.insert(rel, doc);
        }
        for mut doc in std::mem::take(&mut kb.articles) {
            let Ok(rel) = doc.path.strip_prefix(&kb_root).map(Path::to_path_buf) else {
                continue;
            };
            doc.path = join_root(&root, &rel);
            self.store.articles.insert(rel, doc);
        }
        self.store.texts.extend(texts);
        if let Some(runs) = runs {
            self.runs = runs;
            self.outcomes =
                errata_load::outcome_index(&errata_load::load_outcomes(&self.store.root));
        }
        // From here the documents are the new ones: should rendering or writing fail,
        // the next rebuild must not trust the outputs on disk.
        let full = runs_changed || self.stale;
        self.stale = true;

        timer.lap("reload");
        let catalog = self.store.catalog();
        let ctx = Ctx {
            theme: &self.theme,
            opts: &self.opts,
            catalog: &catalog,
            runs: &self.runs,
            outcomes: &self.outcomes,
            data_root: &root,
            texts: &self.store,
        };
        self.pages = Out::page_count(&catalog);
        timer.lap("catalog");

        if full {
            self.sections = sections(&catalog);
            // Verdicts can change on any page (or the last rebuild failed half-way):
            // render everything, write what differs.
            let files = Mutex::new(SiteFiles::default());
            let full = render_all(&ctx, &files)?;
            self.search = full.search;
            let files = files
                .into_inner()
                .map_err(|_| Error::renderer_panicked())?
                .into_vec();
            let keep: BTreeSet<String> = files.iter().map(|(p, _)| p.clone()).collect();
            let stale: Vec<String> = self
                .written
                .keys()
                .filter(|p| !keep.contains(*p))
                .cloned()
                .collect();
            let rendered = files.len();
            let (written, removed) = sync(&self.out, &mut self.written, files, stale)?;
            self.stale = false;
            return Ok(Rebuild {
                reloaded,
                rendered,
                written,
                removed,
                pages: self.pages,
                full: true,
            });
        }

        // The outputs that depend on what changed.
        let mut dirty: BTreeSet<Out> = BTreeSet::new();
        let mut docs: BTreeSet<DocRef> = BTreeSet::new();
        let mut existence_changed = false;
        let both = |dirty: &mut BTreeSet<Out>, make: &dyn Fn(Lang) -> Out| {
            for lang in Lang::ALL {
                dirty.insert(make(lang));
            }
        };
        for id in &entry_ids {
            let old = old_entries.get(id).and_then(Option::as_ref);
            let new = EntryFacts::of(&catalog, id);
            let new = new.as_ref();
            if old == new {
                continue;
            }
            let (o, n) = (old.map(|f| &f.entry), new.map(|f| &f.entry));
            both(&mut dirty, &|l| Out::Entry(id.clone(), l));
            dirty.insert(Out::ApiEntry(id.clone()));
            docs.insert(DocRef::Entry(id.clone()));
            existence_changed |= o.is_some() != n.is_some();
            if entry_title(o) != entry_title(n) {
                for (other, (e, _)) in &catalog.entries {
                    if e.edges().any(|(_, _, target)| target == id) {
                        both(&mut dirty, &|l| Out::Entry(other.to_string(), l));
                    }
                }
                for (aid, pair) in &catalog.articles {
                    let names = pair
                        .en
                        .front
                        .as_ref()
                        .is_some_and(|f| f.signatures.iter().any(|s| s.trim() == id));
                    if names {
                        both(&mut dirty, &|l| Out::Article(aid.to_string(), l));
                    }
                }
            }
            if entry_listing(o) != entry_listing(n) {
                let domain = id.split('/').next().unwrap_or_default().to_string();
                both(&mut dirty, &|l| Out::Domain(domain.clone(), l));
                let tags: BTreeSet<&str> = o
                    .into_iter()
                    .chain(n)
                    .flat_map(|e| unique(&e.tags))
                    .collect();
                for tag in tags {
                    both(&mut dirty, &|l| Out::Tag(urls::tag_slug(tag), l));
                }
                both(&mut dirty, &Out::Home);
            }
            if entry_codes(o) != entry_codes(n) {
                // The home page counts the cudaError_t codes the entries cover.
                both(&mut dirty, &Out::Home);
            }
            if entry_feed(o) != entry_feed(n) {
                both(&mut dirty, &Out::Feed);
            }
            if o.map(|e| &e.last_updated) != n.map(|e| &e.last_updated) {
                dirty.insert(Out::Sitemap);
            }
            if entry_api(o) != entry_api(n) {
                dirty.insert(Out::ApiIndex);
            }
            if entry_translated(o) != entry_translated(n) {
                both(&mut dirty, &Out::Translations);
            }
        }
        for id in &article_ids {
            let old = old_articles.get(id).and_then(Option::as_ref);
            let new = catalog
                .articles
                .get(id.as_str())
                .map(|pair| ArticleFacts::of(pair, &self.store));
            let new = new.as_ref();
            if old == new {
                continue;
            }
            both(&mut dirty, &|l| Out::Article(id.clone(), l));
            docs.insert(DocRef::Article(id.clone()));
            existence_changed |= old.is_some() != new.is_some();
            if old.map(ArticleFacts::title) != new.map(ArticleFacts::title)
                || old.map(ArticleFacts::signatures) != new.map(ArticleFacts::signatures)
            {
                let named: BTreeSet<&String> = old
                    .into_iter()
                    .chain(new)
                    .flat_map(|f| &f.signatures)
                    .collect();
                for entry in named {
                    if catalog.entries.contains_key(entry.as_str()) {
                        both(&mut dirty, &|l| Out::Entry(entry.clone(), l));
                    }
                }
            }
            if old.map(ArticleFacts::listing) != new.map(ArticleFacts::listing) {
                let domain = id.split('/').next().unwrap_or_default().to_string();
                both(&mut dirty, &|l| Out::Domain(domain.clone(), l));
                let tags: BTreeSet<&String> =
                    old.into_iter().chain(new).flat_map(|f| &f.tags).collect();
                for tag in tags {
                    both(&mut dirty, &|l| Out::Tag(urls::tag_slug(tag), l));
                }
                both(&mut dirty, &Out::Home);
            }
            if old.map(ArticleFacts::feed) != new.map(ArticleFacts::feed) {
                both(&mut dirty, &Out::Feed);
            }
            if old.map(ArticleFacts::status) != new.map(ArticleFacts::status) {
                both(&mut dirty, &Out::Translations);
                dirty.insert(Out::ApiIndex);
            }
            if old.map(|f| &f.date) != new.map(|f| &f.date) {
                dirty.insert(Out::Sitemap);
            }
        }
        let new_sections = sections(&catalog);
        if new_sections != self.sections {
            // The sitemap lists every domain and tag page.
            dirty.insert(Out::Sitemap);
            self.sections = new_sections;
        }
        if existence_changed {
            // Page sets, counts and the search page's document count.
            dirty.insert(Out::Sitemap);
            dirty.insert(Out::ApiIndex);
            both(&mut dirty, &Out::Search);
            both(&mut dirty, &Out::Translations);
        }

        timer.lap("dependents");
        // Render, in parallel with the search index update.
        let dirty: Vec<Out> = dirty.into_iter().collect();
        let search = &mut self.search;
        let (rendered, search_files) = rayon::join(
            || {
                dirty
                    .par_iter()
                    .map(|out| {
                        let start = std::time::Instant::now();
                        let files = ctx.render_out(out)?;
                        timer.output(out, start);
                        Ok((out, files))
                    })
                    .collect::<Result<Vec<_>, Error>>()
            },
            || {
                search
                    .par_iter_mut()
                    .map(|index| index.update(&ctx, &docs))
                    .collect::<Vec<_>>()
            },
        );
        let rendered = rendered?;
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        let mut stale: Vec<String> = Vec::new();
        for (out, produced) in rendered {
            if produced.is_empty() {
                stale.extend(out.path());
            }
            files.extend(produced);
        }
        for (lang, (produced, complete)) in Lang::ALL.iter().zip(search_files) {
            if complete {
                let keep: BTreeSet<&str> = produced.iter().map(|(p, _)| p.as_str()).collect();
                let dir = format!("search/{}/", lang.code());
                stale.extend(
                    self.written
                        .keys()
                        .filter(|p| p.starts_with(&dir) && !keep.contains(p.as_str()))
                        .cloned(),
                );
            }
            files.extend(produced);
        }
        let rendered = dirty.len();
        timer.lap("render");
        let (written, removed) = sync(&self.out, &mut self.written, files, stale)?;
        self.stale = false;
        timer.lap("write");
        Ok(Rebuild {
            reloaded,
            rendered,
            written,
            removed,
            pages: self.pages,
            full: false,
        })
    }
}

/// Phase timings of a rebuild on stderr, with `ERRATA_SITE_TIMINGS=1` (for profiling);
/// `ERRATA_SITE_TIMINGS=2` adds one line per rendered output.
struct Timer(Option<std::time::Instant>, bool);

impl Timer {
    fn new() -> Timer {
        let level = std::env::var("ERRATA_SITE_TIMINGS").unwrap_or_default();
        let on = level == "1" || level == "2";
        Timer(on.then(std::time::Instant::now), level == "2")
    }

    fn output(&self, out: &Out, start: std::time::Instant) {
        if self.1 {
            eprintln!("    {out:?} {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
        }
    }

    fn lap(&mut self, phase: &str) {
        if let Some(start) = self.0 {
            eprintln!(
                "  rebuild {phase:<10} {:>7.1} ms",
                start.elapsed().as_secs_f64() * 1e3
            );
            self.0 = Some(std::time::Instant::now());
        }
    }
}

/// Passes files on to another sink, keeping the digest of each: what a [`SiteState`]
/// needs to know of a site it wrote, without keeping the site.
struct Digesting<'a> {
    inner: &'a dyn Sink,
    digests: Mutex<BTreeMap<String, u64>>,
}

impl Sink for Digesting<'_> {
    fn put(&self, path: String, bytes: Vec<u8>) -> Result<(), Error> {
        let d = digest(&bytes);
        self.digests
            .lock()
            .map_err(|_| Error::renderer_panicked())?
            .insert(path.clone(), d);
        self.inner.put(path, bytes)
    }
}

/// Writes the files whose bytes changed (each through a temporary file and a rename, so
/// a reader never sees half a file) and deletes the stale ones (only files this state
/// wrote). Returns (written, removed).
fn sync(
    out: &Path,
    written: &mut BTreeMap<String, u64>,
    files: Vec<(String, Vec<u8>)>,
    stale: Vec<String>,
) -> Result<(usize, usize), Error> {
    let new_paths: BTreeSet<String> = files.iter().map(|(p, _)| p.clone()).collect();
    let changed: Vec<(String, Vec<u8>, u64)> = files
        .into_iter()
        .filter_map(|(rel, bytes)| {
            let d = digest(&bytes);
            (written.get(&rel) != Some(&d)).then_some((rel, bytes, d))
        })
        .collect();
    // A few threads: each write waits on the file system more than on a CPU.
    let write = |(rel, bytes, _): &(String, Vec<u8>, u64)| -> Result<(), Error> {
        let path = out.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
        std::fs::write(&tmp, bytes).map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, &path).map_err(|e| Error::io(&path, e))
    };
    let chunk = changed.len().div_ceil(8).max(1);
    let results: Vec<Result<(), Error>> = std::thread::scope(|scope| {
        let handles: Vec<_> = changed
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().try_for_each(write)))
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(Error::new(ErrorKind::Io, "a writer panicked")))
            })
            .collect()
    });
    if let Some(Err(e)) = results.into_iter().find(Result::is_err) {
        // Some of these may be on disk: forget their digests so that the next rebuild
        // writes them again whatever it renders.
        for (rel, _, _) in &changed {
            written.remove(rel);
        }
        return Err(e);
    }
    let n_written = changed.len();
    for (rel, _, d) in changed {
        written.insert(rel, d);
    }
    let mut removed = 0;
    for rel in stale {
        if new_paths.contains(&rel) || written.remove(&rel).is_none() {
            continue;
        }
        let path = out.join(&rel);
        match std::fs::remove_file(&path) {
            Ok(()) => removed += 1,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(Error::io(&path, e)),
        }
        // Directories left empty go too (a full build would not have them).
        let mut dir = path.parent();
        while let Some(d) = dir {
            if d == out || std::fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
    }
    Ok((n_written, removed))
}

/// A fast 64-bit digest of a file's bytes (to skip rewriting unchanged files).
fn digest(bytes: &[u8]) -> u64 {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    let mut h: u64 = bytes.len() as u64;
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        h = (h.rotate_left(5) ^ u64::from_le_bytes(word)).wrapping_mul(K);
    }
    for &b in chunks.remainder() {
        h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
    }
    // Final avalanche (murmur3's fmix64).
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h
}

/// The domains and tags that have a page.
fn sections(catalog: &Catalog<'_>) -> (Vec<String>, Vec<String>) {
    (
        catalog.domains.keys().map(|d| d.to_string()).collect(),
        catalog.tags.keys().cloned().collect(),
    )
}

fn entry_id(doc: &EntryDoc) -> Option<&str> {
    doc.entry.as_ref().map(|e| e.id.as_str())
}

/// `root/rel`, or `rel` alone when the root is `.` (as the loader names files).
fn join_root(root: &Path, rel: &Path) -> PathBuf {
    if root == Path::new(".") {
        rel.to_path_buf()
    } else {
        root.join(rel)
    }
}

/// What the site shows of one entry, as the catalog has it (the first file with an id
/// wins, so this is the winner's).
#[derive(Debug, PartialEq)]
struct EntryFacts {
    path: PathBuf,
    text: String,
    entry: Entry,
}

impl EntryFacts {
    /// The facts of the entry the catalog of `store` would have under `id` (the first
    /// file in path order with that id).
    fn before(store: &Store, id: &str) -> Option<EntryFacts> {
        if !crate::urls::is_safe_id(id) {
            return None;
        }
        let doc = store.entries.values().find(|d| entry_id(d) == Some(id))?;
        Some(EntryFacts {
            path: doc.path.clone(),
            text: doc.text().to_string(),
            entry: doc.entry.clone()?,
        })
    }

    fn of(catalog: &Catalog<'_>, id: &str) -> Option<EntryFacts> {
        let (entry, doc) = catalog.entries.get(id)?;
        Some(EntryFacts {
            path: doc.path.clone(),
            text: doc.text().to_string(),
            entry: (*entry).clone(),
        })
    }
}

/// How other pages link to an entry: by its titles.
fn entry_title(e: Option<&Entry>) -> Option<(&str, &str)> {
    e.map(|e| (e.signature.as_str(), e.signature_zh.as_str()))
}

/// How domain and tag lists and the home page show an entry: titles, date, tags.
fn entry_listing(e: Option<&Entry>) -> Option<(&str, &str, &str, Vec<&str>)> {
    e.map(|e| {
        (
            e.signature.as_str(),
            e.signature_zh.as_str(),
            e.last_updated.as_str(),
            unique(&e.tags),
        )
    })
}

/// The `cudaError_t` codes an entry covers (its `error_code`, its enumerator aliases).
fn entry_codes(e: Option<&Entry>) -> BTreeSet<&'static str> {
    errata_model::cuda_errors::covered(e)
}

/// How the feeds show an entry: titles, date, and the root cause as summary.
fn entry_feed(e: Option<&Entry>) -> Option<[&str; 5]> {
    e.map(|e| {
        [
            &e.signature,
            &e.signature_zh,
            &e.last_updated,
            &e.root_cause,
            &e.root_cause_zh,
        ]
        .map(String::as_str)
    })
}

/// What `api/v1/index.json` says of an entry.
fn entry_api(e: Option<&Entry>) -> Option<(&str, &str, Option<&str>, &str)> {
    e.map(|e| {
        (
            e.signature.as_str(),
            e.signature_zh.as_str(),
            e.error_code.as_deref(),
            e.last_updated.as_str(),
        )
    })
}

/// Whether the translation status page counts the entry as translated.
fn entry_translated(e: Option<&Entry>) -> Option<bool> {
    e.map(|e| !e.signature_zh.trim().is_empty() && !e.root_cause_zh.trim().is_empty())
}

/// One facet of [`ArticleFacts`], for comparison.
type Facet<'a> = Vec<&'a str>;

/// What the site shows of one article.
#[derive(Debug, PartialEq)]
struct ArticleFacts {
    files: Vec<(PathBuf, String)>,
    title_en: String,
    title_zh: String,
    date: String,
    tags: Vec<String>,
    signatures: Vec<String>,
    translation: &'static str,
    summary: String,
}

impl ArticleFacts {
    /// The facts of the article the catalog of `store` would have under `id`.
    fn before(store: &Store, id: &str) -> Option<ArticleFacts> {
        if !crate::urls::is_safe_id(id) {
            return None;
        }
        let with = |zh: bool| {
            store.articles.values().find(|d| {
                d.path_id.as_deref() == Some(id) && (d.lang.as_deref() == Some("zh")) == zh
            })
        };
        let pair = ArticlePair {
            id,
            en: with(false)?,
            zh: with(true),
        };
        Some(ArticleFacts::of(&pair, store))
    }

    fn of(pair: &ArticlePair<'_>, texts: &dyn Texts) -> ArticleFacts {
        let text = |doc: &ArticleDoc| texts.text(&doc.path).unwrap_or("").to_string();
        let mut files = vec![(pair.en.path.clone(), text(pair.en))];
        if let Some(zh) = pair.zh {
            files.push((zh.path.clone(), text(zh)));
        }
        let front = pair.en.front.clone().unwrap_or_default();
        let title_zh = match pair.translation() {
            Translation::Current => pair
                .zh
                .and_then(|z| z.front.as_ref())
                .map(|f| f.title.trim())
                .filter(|t| !t.is_empty())
                .unwrap_or(pair.title())
                .to_string(),
            _ => pair.title().to_string(),
        };
        let body = files[0].1.get(pair.en.body_range.clone()).unwrap_or("");
        ArticleFacts {
            title_en: pair.title().to_string(),
            title_zh,
            date: pair.date().to_string(),
            tags: unique(&front.tags)
                .into_iter()
                .map(str::to_string)
                .collect(),
            signatures: unique(&front.signatures)
                .into_iter()
                .map(str::to_string)
                .collect(),
            translation: match pair.translation() {
                Translation::Current => "current",
                Translation::Outdated => "outdated",
                Translation::Missing => "missing",
            },
            summary: crate::pages::first_paragraph(body),
            files,
        }
    }

    /// How entry pages name the article.
    fn title(&self) -> Facet<'_> {
        vec![&self.title_en, &self.title_zh]
    }

    fn signatures(&self) -> Facet<'_> {
        self.signatures.iter().map(String::as_str).collect()
    }

    /// How domain and tag lists and the home page show it.
    fn listing(&self) -> Facet<'_> {
        let mut f = vec![self.title_en.as_str(), &self.title_zh, &self.date];
        f.extend(self.tags.iter().map(String::as_str));
        f
    }

    /// How the feeds show it.
    fn feed(&self) -> Facet<'_> {
        vec![&self.title_en, &self.title_zh, &self.date, &self.summary]
    }

    /// What the translation status page and the API index say.
    fn status(&self) -> Facet<'_> {
        vec![&self.title_en, &self.date, self.translation]
    }
}

/// Changed files of a data directory, loaded on their own (into a scratch copy laid out
/// like the data directory, so that they parse exactly as in a full load).
pub struct Reload {
    kb: KnowledgeBase,
    /// The scratch directory `kb` was loaded from (removed on drop).
    _scratch: Option<tempfile::TempDir>,
    root: PathBuf,
    entry_paths: Vec<PathBuf>,
    article_paths: Vec<PathBuf>,
    runs_changed: bool,
}

impl std::fmt::Debug for Reload {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reload")
            .field("entries", &self.entry_paths)
            .field("articles", &self.article_paths)
            .field("runs_changed", &self.runs_changed)
            .finish_non_exhaustive()
    }
}

impl Reload {
    /// Loads these paths of the data directory `root` (files that changed, appeared or
    /// disappeared). Paths outside `signatures/*.json`, `articles/*.md`, `runs/` and
    /// `outcomes/` are ignored.
    pub fn load(root: &Path, paths: &[PathBuf]) -> Result<Reload, Error> {
        let mut entry_paths = BTreeSet::new();
        let mut article_paths = BTreeSet::new();
        let mut runs_changed = false;
        for path in paths {
            let Some(rel) = data_relative(root, path) else {
                continue;
            };
            let first = rel.components().next().map(|c| c.as_os_str().to_owned());
            let ext = rel.extension().and_then(|e| e.to_str()).unwrap_or("");
            match (first.as_ref().and_then(|f| f.to_str()), ext) {
                (Some("signatures"), "json") => {
                    entry_paths.insert(rel);
                }
                (Some("articles"), "md") => {
                    article_paths.insert(rel);
                }
                // Run and outcome records: shown on many pages, so everything is
                // rendered again.
                (Some("runs" | "outcomes"), _) => runs_changed = true,
                _ => {}
            }
        }
        let mut scratch = None;
        let mut kb = KnowledgeBase::default();
        let present: Vec<&PathBuf> = entry_paths
            .iter()
            .chain(&article_paths)
            .filter(|rel| join_root(root, rel).is_file())
            .collect();
        if !present.is_empty() {
            let dir = tempfile::Builder::new()
                .prefix("errata-reload-")
                .tempdir()
                .map_err(|e| Error::io(std::env::temp_dir(), e))?;
            for rel in &present {
                let from = join_root(root, rel);
                let to = dir.path().join(rel);
                if let Some(parent) = to.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
                }
                match std::fs::copy(&from, &to) {
                    Ok(_) => {}
                    // Gone since it was listed: it is a removal.
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                    Err(e) => return Err(Error::io(&from, e)),
                }
            }
            kb = KnowledgeBase::load(dir.path())
                .map_err(|e| Error::new(ErrorKind::Io, e.to_string()).with_path(&e.path))?;
            scratch = Some(dir);
        }
        Ok(Reload {
            kb,
            _scratch: scratch,
            root: root.to_path_buf(),
            entry_paths: entry_paths.into_iter().collect(),
            article_paths: article_paths.into_iter().collect(),
            runs_changed,
        })
    }

    /// The changed files that still exist, loaded as a knowledge base of their own (in
    /// a scratch directory: use [`Reload::data_path`] to name its files), for checking
    /// them alone. Rules that need the whole knowledge base (references, duplicates,
    /// overlaps) cannot see the other files here.
    pub fn knowledge_base(&self) -> &KnowledgeBase {
        &self.kb
    }

    /// A path of [`Reload::knowledge_base`] as the file's path in the data directory.
    pub fn data_path(&self, path: &Path) -> PathBuf {
        match path.strip_prefix(&self.kb.root) {
            Ok(rel) => join_root(&self.root, rel),
            Err(_) => path.to_path_buf(),
        }
    }

    /// Nothing the site is built from changed.
    pub fn is_empty(&self) -> bool {
        self.entry_paths.is_empty() && self.article_paths.is_empty() && !self.runs_changed
    }
}

/// `path` relative to the data directory `root`, when it is inside it.
fn data_relative(root: &Path, path: &Path) -> Option<PathBuf> {
    if root == Path::new(".") && path.is_relative() {
        let rel: PathBuf = path
            .components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect();
        return Some(rel);
    }
    if let Ok(rel) = path.strip_prefix(root) {
        return Some(rel.to_path_buf());
    }
    let abs_root = std::path::absolute(root).ok()?;
    let abs = std::path::absolute(path).ok()?;
    if let Ok(rel) = abs.strip_prefix(&abs_root) {
        return Some(rel.to_path_buf());
    }
    // Through symbolic links: compare canonical forms (the file itself may be gone).
    let canon_root = abs_root.canonicalize().ok()?;
    let parent = abs.parent()?.canonicalize().ok()?;
    let rel = parent.join(abs.file_name()?);
    rel.strip_prefix(&canon_root).ok().map(Path::to_path_buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_relative_paths() {
        assert_eq!(
            data_relative(Path::new("."), Path::new("./signatures/a/b.json")),
            Some(PathBuf::from("signatures/a/b.json"))
        );
        assert_eq!(
            data_relative(Path::new("data"), Path::new("data/articles/a/b.md")),
            Some(PathBuf::from("articles/a/b.md"))
        );
        assert_eq!(
            data_relative(Path::new("data"), Path::new("/elsewhere/x")),
            None
        );
    }

    #[test]
    fn digests_differ_for_different_bytes() {
        assert_ne!(digest(b"abc"), digest(b"abd"));
        assert_ne!(digest(b""), digest(b"\0"));
        assert_eq!(digest(b"same bytes here"), digest(b"same bytes here"));
    }
}
