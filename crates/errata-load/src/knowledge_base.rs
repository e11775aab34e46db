use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use errata_model::{Anchor, Diagnostic};
use rayon::prelude::*;

use crate::article::{ArticleDoc, parse_article};
use crate::entry::{EntryDoc, parse_entry};
use crate::json_spans::JsonSpans;
use crate::outcome::OutcomeDoc;
use crate::source::{SourceFile, read_source, source_from_bytes};

/// Everything loaded from one data directory.
#[derive(Debug, Default)]
pub struct KnowledgeBase {
    /// The data directory (as given, or relative to the current directory).
    pub root: PathBuf,
    /// Every entry file that could be read and parsed as JSON, sorted by path.
    pub entries: Vec<EntryDoc>,
    /// Every article and translation that could be read, sorted by path.
    pub articles: Vec<ArticleDoc>,
    /// Every outcome record file (`outcomes/<domain>/<slug>.jsonl`), sorted by path.
    pub outcomes: Vec<OutcomeDoc>,
    /// Problems found while loading.
    pub diagnostics: Vec<Diagnostic>,
    sources: Vec<SourceFile>,
    by_path: HashMap<PathBuf, usize>,
}

/// A failure of the tool's own I/O (not a problem in the data): exit code 2.
#[derive(Debug)]
pub struct LoadError {
    /// The path involved.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.message)
    }
}

impl std::error::Error for LoadError {}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Entry,
    Article,
    Outcomes,
}

impl KnowledgeBase {
    /// Loads the data directory `root` (containing `signatures/` and/or `articles/`).
    pub fn load(root: &Path) -> Result<KnowledgeBase, LoadError> {
        let meta = std::fs::metadata(root).map_err(|e| LoadError {
            path: root.to_path_buf(),
            message: e.to_string(),
        })?;
        if !meta.is_dir() {
            return Err(LoadError {
                path: root.to_path_buf(),
                message: "not a directory".into(),
            });
        }
        let canonical_root = root.canonicalize().ok();
        let root = display_path(root);
        let mut diagnostics = Vec::new();
        let mut files = Vec::new();
        for (sub, ext, kind) in [
            ("signatures", "json", Kind::Entry),
            ("articles", "md", Kind::Article),
            ("outcomes", "jsonl", Kind::Outcomes),
        ] {
            let dir = sub_dir(&root, sub);
            if !dir.exists() {
                continue;
            }
            // Symbolic links are followed only while they stay inside the data
            // directory: a pull request could otherwise link `x.json` to a secret on
            // the machine that checks it, and the diagnostics would quote it.
            let outside = std::cell::RefCell::new(Vec::new());
            let walker = walkdir::WalkDir::new(&dir)
                .follow_links(true)
                .sort_by_file_name()
                .into_iter()
                .filter_entry(|e| {
                    let leads_out = e.path_is_symlink()
                        && !canonical_root.as_ref().is_some_and(|r| {
                            e.path().canonicalize().is_ok_and(|p| p.starts_with(r))
                        });
                    if leads_out {
                        outside.borrow_mut().push(e.path().to_path_buf());
                    }
                    !leads_out
                });
            for item in walker {
                match item {
                    Ok(e) if e.file_type().is_dir() => {}
                    Ok(e) if e.path().extension().is_some_and(|x| x == ext) => {
                        files.push((e.into_path(), kind));
                    }
                    Ok(_) => {}
                    Err(err) => {
                        let path = err.path().map_or_else(|| dir.clone(), Path::to_path_buf);
                        let why = match err.loop_ancestor() {
                            Some(a) => format!("symbolic link loop back to {}", a.display()),
                            None => err
                                .io_error()
                                .map_or_else(|| err.to_string(), ToString::to_string),
                        };
                        diagnostics.push(
                            Diagnostic::error(
                                "unreadable",
                                path,
                                Anchor::File,
                                format!("cannot read: {why}"),
                            )
                            .with_help(
                                "fix the link or permissions, or remove it from the data directory",
                            ),
                        );
                    }
                }
            }
            for path in outside.into_inner() {
                diagnostics.push(
                    Diagnostic::error(
                        "unreadable",
                        path,
                        Anchor::File,
                        "not read: a symbolic link that leads outside the data directory",
                    )
                    .with_help("copy the file into the data directory instead of linking to it"),
                );
            }
        }

        let loaded: Vec<Loaded> = files
            .par_iter()
            .map(|(path, kind)| match read_source(path, path) {
                Ok(src) => parse_file(&root, src, *kind),
                Err(d) => Loaded::Failed(d),
            })
            .collect();
        Ok(KnowledgeBase::assemble(root, diagnostics, loaded))
    }

    /// Loads files held in memory as if they were at these paths in the data directory
    /// `root` (which need not exist): a `.json` file under `root/signatures` is an entry,
    /// a `.md` file under `root/articles` an article, anything else is ignored. Bytes are
    /// read exactly as [`KnowledgeBase::load`] reads a file (size limit, invalid UTF-8)
    /// and parsed by the same code; entries come before articles, each sorted by path.
    ///
    /// For the knowledge base packed into the `errata` binary (read out of it in memory),
    /// and for tests and fuzzing, where a directory per input would cost more than the parse.
    pub fn from_files(root: &Path, files: Vec<(PathBuf, Vec<u8>)>) -> KnowledgeBase {
        let root = display_path(root);
        let kind = |path: &Path| {
            let under = |sub, ext| {
                path.starts_with(sub_dir(&root, sub)) && path.extension().is_some_and(|x| x == ext)
            };
            if under("signatures", "json") {
                Some(Kind::Entry)
            } else if under("articles", "md") {
                Some(Kind::Article)
            } else if under("outcomes", "jsonl") {
                Some(Kind::Outcomes)
            } else {
                None
            }
        };
        let mut files: Vec<(Kind, PathBuf, Vec<u8>)> = files
            .into_iter()
            .filter_map(|(path, bytes)| kind(&path).map(|k| (k, path, bytes)))
            .collect();
        files.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
        let loaded = files
            .into_iter()
            .map(
                |(kind, path, bytes)| match source_from_bytes(&path, bytes) {
                    Ok(src) => parse_file(&root, src, kind),
                    Err(d) => Loaded::Failed(d),
                },
            )
            .collect();
        KnowledgeBase::assemble(root, Vec::new(), loaded)
    }

    /// The knowledge base of parsed files, in the order given.
    fn assemble(root: PathBuf, diagnostics: Vec<Diagnostic>, loaded: Vec<Loaded>) -> KnowledgeBase {
        let mut kb = KnowledgeBase {
            root,
            diagnostics,
            ..KnowledgeBase::default()
        };
        // Sized once: grown by doubling, the 10,000 entries of a large knowledge base
        // were copied and their fresh pages zeroed several times over (a twentieth of
        // a check).
        let count = |f: fn(&Loaded) -> bool| loaded.iter().filter(|l| f(l)).count();
        kb.entries
            .reserve_exact(count(|l| matches!(l, Loaded::Entry(_, Some(_), _))));
        kb.articles
            .reserve_exact(count(|l| matches!(l, Loaded::Article(..))));
        kb.outcomes
            .reserve_exact(count(|l| matches!(l, Loaded::Outcomes(..))));
        let sources = loaded.len() - count(|l| matches!(l, Loaded::Failed(_)));
        kb.sources.reserve_exact(sources);
        kb.by_path.reserve(sources);
        for item in loaded {
            let src = match item {
                Loaded::Failed(d) => {
                    kb.diagnostics.push(*d);
                    continue;
                }
                Loaded::Entry(src, doc, diags) => {
                    kb.entries.extend(doc.map(|d| *d));
                    kb.diagnostics.extend(diags);
                    src
                }
                Loaded::Article(src, doc, diags) => {
                    kb.articles.push(*doc);
                    kb.diagnostics.extend(diags);
                    src
                }
                Loaded::Outcomes(src, doc) => {
                    kb.outcomes.push(*doc);
                    src
                }
            };
            kb.by_path.insert(src.path.clone(), kb.sources.len());
            kb.sources.push(src);
        }
        kb
    }

    /// The source of a loaded file.
    pub fn source(&self, path: &Path) -> Option<&SourceFile> {
        self.by_path.get(path).map(|&i| &self.sources[i])
    }

    /// Every file read, in path order.
    pub fn sources(&self) -> &[SourceFile] {
        &self.sources
    }

    /// Fills in `location` for every diagnostic and sorts them (file, line, column, rule).
    pub fn resolve(&self, diagnostics: &mut [Diagnostic]) {
        let mut order: Vec<usize> = (0..diagnostics.len()).collect();
        order.sort_by(|&a, &b| diagnostics[a].file.cmp(&diagnostics[b].file));
        let mut spans: Option<(PathBuf, JsonSpans<'_>)> = None;
        for i in order {
            let d = &mut diagnostics[i];
            let Some(src) = self.source(&d.file) else {
                d.location = Some(errata_model::Location {
                    line: 1,
                    column: 1,
                    start: 0,
                    end: 0,
                });
                continue;
            };
            let range = match &d.anchor {
                Anchor::File => 0..0,
                Anchor::Bytes(r) => r.clone(),
                Anchor::Value(p) | Anchor::Key(p) => {
                    let key = matches!(d.anchor, Anchor::Key(_));
                    if let Some(article) = self.article(&d.file) {
                        crate::frontmatter_spans::locate(
                            &src.text,
                            article.front_range.clone(),
                            p,
                            key,
                        )
                    } else {
                        if spans.as_ref().is_none_or(|(path, _)| path != &d.file) {
                            spans = Some((d.file.clone(), JsonSpans::parse(&src.text)));
                        }
                        spans
                            .as_ref()
                            .and_then(|(_, s)| s.locate(p, key))
                            .unwrap_or(0..0)
                    }
                }
            };
            d.location = Some(src.location(range));
        }
        diagnostics.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    }

    fn article(&self, path: &Path) -> Option<&ArticleDoc> {
        self.articles
            .binary_search_by(|a| a.path.as_path().cmp(path))
            .ok()
            .map(|i| &self.articles[i])
    }

    /// The entry with this id (first one, if duplicated).
    pub fn entry(&self, id: &str) -> Option<&EntryDoc> {
        self.entries
            .iter()
            .find(|e| e.entry.as_ref().is_some_and(|x| x.id == id))
    }

    /// Finds the data directory a path belongs to: the path itself or its nearest ancestor
    /// that contains `signatures/` or `articles/`.
    pub fn find_root(path: &Path) -> Option<PathBuf> {
        let start = if path.is_dir() {
            Some(path)
        } else {
            path.parent()
        };
        start?
            .ancestors()
            .find(|dir| dir.join("signatures").is_dir() || dir.join("articles").is_dir())
            .map(|d| {
                if d.as_os_str().is_empty() {
                    PathBuf::from(".")
                } else {
                    d.to_path_buf()
                }
            })
    }
}

/// One file read and parsed as far as it goes.
enum Loaded {
    Entry(SourceFile, Option<Box<EntryDoc>>, Vec<Diagnostic>),
    Article(SourceFile, Box<ArticleDoc>, Vec<Diagnostic>),
    Outcomes(SourceFile, Box<OutcomeDoc>),
    Failed(Box<Diagnostic>),
}

/// Parses a file read from `root/signatures` (an entry), `root/articles` or
/// `root/outcomes`.
fn parse_file(root: &Path, src: SourceFile, kind: Kind) -> Loaded {
    let path = src.path.clone();
    if kind == Kind::Outcomes {
        let id = path_id(&sub_dir(root, "outcomes"), &path, ".jsonl");
        let doc = crate::outcome::parse_outcomes(&src, id);
        return Loaded::Outcomes(src, Box::new(doc));
    }
    if kind == Kind::Entry {
        let id = path_id(&sub_dir(root, "signatures"), &path, ".json");
        match parse_entry(&src, id) {
            Ok(doc) => Loaded::Entry(src, Some(Box::new(doc)), Vec::new()),
            Err(d) => Loaded::Entry(src, None, vec![*d]),
        }
    } else {
        let dir = sub_dir(root, "articles");
        let (id, lang) = match path_id(&dir, &path, ".zh.md") {
            Some(id) => (Some(id), Some("zh".to_string())),
            None => (path_id(&dir, &path, ".md"), None),
        };
        let (doc, diags) = parse_article(&src, id, lang);
        Loaded::Article(src, Box::new(doc), diags)
    }
}

/// `root/sub`, without a leading `./` when the root is the current directory.
pub(crate) fn sub_dir(root: &Path, sub: &str) -> PathBuf {
    if root == Path::new(".") {
        PathBuf::from(sub)
    } else {
        root.join(sub)
    }
}

/// `<dir>/<domain>/<slug><suffix>` → `<domain>/<slug>`.
pub(crate) fn path_id(dir: &Path, path: &Path, suffix: &str) -> Option<String> {
    let rel = path.strip_prefix(dir).ok()?;
    let parts: Vec<&str> = rel.iter().map(|p| p.to_str()).collect::<Option<_>>()?;
    match parts.as_slice() {
        [domain, file] => file
            .strip_suffix(suffix)
            .map(|slug| format!("{domain}/{slug}")),
        _ => None,
    }
}

/// Paths are shown relative to the current directory when they are inside it.
fn display_path(path: &Path) -> PathBuf {
    if path.is_absolute()
        && let Ok(cwd) = std::env::current_dir()
        && let Ok(rel) = path.strip_prefix(&cwd)
    {
        return if rel.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            rel.to_path_buf()
        };
    }
    path.to_path_buf()
}
