use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use errata_model::{Anchor, Diagnostic, Location};

/// Files larger than this are reported (`file-too-large`) instead of parsed: no real entry
/// or article comes close, and a runaway file must not take the whole check down with it.
pub const MAX_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// A file's text plus what is needed to turn byte offsets into line:column.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path as shown in diagnostics.
    pub path: PathBuf,
    /// The text. Invalid UTF-8 is replaced (U+FFFD) after the first invalid byte, which
    /// is itself reported; the valid prefix keeps its offsets. Shared with the entry
    /// loaded from it. An `Arc<String>` rather than an `Arc<str>`: the buffer the file
    /// was read into is kept, where an `Arc<str>` copies every text once more.
    pub text: Arc<String>,
    /// Where the first invalid UTF-8 byte was, if any.
    pub invalid_utf8_at: Option<usize>,
    /// Line starts, for [`SourceFile::location`]: found on first use. A clean entry
    /// never needs them, and indexing every line of 10,000 files up front was a few
    /// percent of a check.
    lines: std::sync::OnceLock<LineIndex>,
}

impl SourceFile {
    /// A source from text already in memory.
    pub fn new(path: PathBuf, text: String) -> SourceFile {
        SourceFile {
            path,
            text: text.into(),
            invalid_utf8_at: None,
            lines: std::sync::OnceLock::new(),
        }
    }

    /// The text's line starts.
    pub fn lines(&self) -> &LineIndex {
        self.lines.get_or_init(|| LineIndex::new(&self.text))
    }

    /// The location of a byte range (clamped to the text and to char boundaries).
    pub fn location(&self, range: std::ops::Range<usize>) -> Location {
        let start = floor_char_boundary(&self.text, range.start.min(self.text.len()));
        let end = floor_char_boundary(&self.text, range.end.clamp(start, self.text.len()));
        let (line, column) = self.lines().line_col(&self.text, start);
        Location {
            line,
            column,
            start,
            end,
        }
    }
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The byte offset of each line start.
#[derive(Debug, Clone, Default)]
pub struct LineIndex {
    starts: Vec<usize>,
}

impl LineIndex {
    /// Indexes `text`.
    pub fn new(text: &str) -> LineIndex {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        LineIndex { starts }
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, text: &str, offset: usize) -> (usize, usize) {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts[line - 1];
        let column = text.get(start..offset).map_or(1, |s| s.chars().count() + 1);
        (line, column)
    }

    /// Byte offset of the start of a 1-based line (the end of the text if out of range).
    pub fn line_start(&self, line: usize, text_len: usize) -> usize {
        self.starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(text_len)
    }
}

/// Reads a data file. Problems with the file itself become diagnostics; the returned
/// source (if any) is what could be read.
pub(crate) fn read_source(fs_path: &Path, display: &Path) -> Result<SourceFile, Box<Diagnostic>> {
    let unreadable = |why: String| {
        Box::new(
            Diagnostic::error(
                "unreadable",
                display,
                Anchor::File,
                format!("cannot read this file: {why}"),
            )
            .with_help(
                "make the file a readable regular file, or remove it from the data directory",
            ),
        )
    };
    let file = std::fs::File::open(fs_path).map_err(|e| unreadable(e.to_string()))?;
    let meta = file.metadata().map_err(|e| unreadable(e.to_string()))?;
    if !meta.is_file() {
        return Err(unreadable("not a regular file".into()));
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(Box::new(too_large(display, meta.len())));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| unreadable(e.to_string()))?;
    source_from_bytes(display, bytes)
}

/// A source from a file's bytes: refused over [`MAX_FILE_BYTES`]; invalid UTF-8 is
/// replaced after the first bad byte, which is remembered (and reported by the parsers).
pub(crate) fn source_from_bytes(
    display: &Path,
    bytes: Vec<u8>,
) -> Result<SourceFile, Box<Diagnostic>> {
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(Box::new(too_large(display, bytes.len() as u64)));
    }
    let (text, invalid_utf8_at) = match String::from_utf8(bytes) {
        Ok(s) => (s, None),
        Err(e) => {
            let at = e.utf8_error().valid_up_to();
            (String::from_utf8_lossy(e.as_bytes()).into_owned(), Some(at))
        }
    };
    Ok(SourceFile {
        path: display.to_path_buf(),
        text: text.into(),
        invalid_utf8_at,
        lines: std::sync::OnceLock::new(),
    })
}

fn too_large(display: &Path, len: u64) -> Diagnostic {
    Diagnostic::error(
        "file-too-large",
        display,
        Anchor::File,
        format!("file is {len} bytes, over the limit of {MAX_FILE_BYTES} bytes; it was not parsed"),
    )
    .with_help("split the content or remove the file; no real entry or article is this large")
}

/// The diagnostic for a file that is not valid UTF-8, pointing at the first bad byte.
pub(crate) fn invalid_utf8(rule: &'static str, src: &SourceFile, at: usize) -> Diagnostic {
    Diagnostic::error(
        rule,
        &src.path,
        Anchor::Bytes(at..at + 1),
        "file is not valid UTF-8",
    )
    .with_help("save the file as UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_characters() {
        let text = "ab\n中文x\n";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_col(text, 0), (1, 1));
        assert_eq!(idx.line_col(text, 3), (2, 1));
        assert_eq!(idx.line_col(text, 9), (2, 3));
        assert_eq!(idx.line_col(text, text.len()), (3, 1));
    }
}

/// The text of a file that is not a source but is read beside the knowledge base (run
/// records, a licence): a regular file of at most [`MAX_FILE_BYTES`], read through a
/// bounded reader so that a file that grows while it is read, or a device posing as a
/// file, cannot exhaust memory.
pub fn read_bounded(path: &Path) -> std::io::Result<String> {
    use std::io::{Error, ErrorKind};
    let file = std::fs::File::open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, "not a regular file"));
    }
    let too_large = |len: u64| {
        Error::new(
            ErrorKind::InvalidData,
            format!("file is {len} bytes, over the limit of {MAX_FILE_BYTES} bytes"),
        )
    };
    if meta.len() > MAX_FILE_BYTES {
        return Err(too_large(meta.len()));
    }
    let mut text = String::new();
    file.take(MAX_FILE_BYTES + 1).read_to_string(&mut text)?;
    if text.len() as u64 > MAX_FILE_BYTES {
        return Err(too_large(text.len() as u64));
    }
    Ok(text)
}

#[cfg(test)]
mod bounded_tests {
    #[test]
    fn read_bounded_refuses_big_files_and_non_files() {
        let dir = tempfile::tempdir().expect("tempdir");
        let small = dir.path().join("small.json");
        std::fs::write(&small, "{}").expect("write");
        assert_eq!(super::read_bounded(&small).expect("read"), "{}");
        let big = dir.path().join("big.json");
        let f = std::fs::File::create(&big).expect("create");
        f.set_len(super::MAX_FILE_BYTES + 1).expect("sparse file");
        let err = super::read_bounded(&big).expect_err("too large");
        assert!(err.to_string().contains("over the limit"), "{err}");
        assert!(super::read_bounded(dir.path()).is_err(), "a directory");
    }
}

/// `path` relative to the data directory `root`, `/`-separated, as run records name
/// files. `./` components are ignored on both sides: with `--data .` the root is `.`
/// and the entry paths are `signatures/…`.
pub fn data_relative(path: &std::path::Path, root: &std::path::Path) -> Option<String> {
    let plain = |p: &std::path::Path| -> std::path::PathBuf {
        p.components()
            .filter(|c| !matches!(c, std::path::Component::CurDir))
            .collect()
    };
    let rel = plain(path).strip_prefix(plain(root)).ok()?.to_path_buf();
    let parts: Vec<_> = rel.iter().map(|p| p.to_string_lossy()).collect();
    Some(parts.join("/"))
}

#[cfg(test)]
mod relative_tests {
    #[test]
    fn paths_relative_to_a_dot_data_directory() {
        use std::path::Path;
        let rel = |p: &str, root: &str| super::data_relative(Path::new(p), Path::new(root));
        let want = Some("signatures/cuda/a.json".to_string());
        assert_eq!(rel("signatures/cuda/a.json", "."), want);
        assert_eq!(rel("./signatures/cuda/a.json", "."), want);
        assert_eq!(rel("data/signatures/cuda/a.json", "data"), want);
        assert_eq!(rel("/kb/data/signatures/cuda/a.json", "/kb/data/"), want);
        assert_eq!(rel("other/signatures/cuda/a.json", "data"), None);
    }
}
