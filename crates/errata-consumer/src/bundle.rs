//! Opening a bundle: read, verify, parse, compile.

use std::io::Read;
use std::path::Path;

use crate::archive::Archive;
use crate::{Entry, Error, Found, Index, Manifest, ScanStats};

/// The member holding every entry as one JSON array, sorted by id.
pub const ENTRIES: &str = "entries.json";

/// The member holding the SQLite database (tables and full-text search).
pub const DATABASE: &str = "errata.sqlite";

/// A verified bundle, ready to match logs.
#[derive(Debug)]
pub struct Bundle {
    manifest: Manifest,
    index: Index,
    /// Members asked for by [`Bundle::from_reader_keeping`], verified like the rest.
    kept: std::collections::BTreeMap<String, Vec<u8>>,
}

impl Bundle {
    /// Opens and verifies the bundle file at `path` (`errata-<version>.tar.gz`).
    pub fn open(path: impl AsRef<Path>) -> Result<Bundle, Error> {
        let file = std::fs::File::open(path.as_ref())?;
        Bundle::from_reader(std::io::BufReader::new(file))
    }

    /// Opens and verifies a bundle held in memory.
    pub fn from_bytes(bytes: &[u8]) -> Result<Bundle, Error> {
        Bundle::from_reader(bytes)
    }

    /// Opens and verifies a bundle read from `reader`, in one pass: every member is
    /// hashed and compared with the manifest, and only the entries are kept in memory.
    /// The first problem found is the error (an unknown `format_version` first of all).
    pub fn from_reader(reader: impl Read) -> Result<Bundle, Error> {
        Bundle::from_reader_keeping(reader, &[])
    }

    /// Opens and verifies the bundle file at `path`, keeping the members named in
    /// `keep` (e.g. [`DATABASE`]) in memory as well: see [`Bundle::member`].
    pub fn open_keeping(path: impl AsRef<Path>, keep: &[&str]) -> Result<Bundle, Error> {
        let file = std::fs::File::open(path.as_ref())?;
        Bundle::from_reader_keeping(std::io::BufReader::new(file), keep)
    }

    /// [`Bundle::from_reader`], keeping the members named in `keep` in memory. A kept
    /// member that the bundle lacks is an error.
    pub fn from_reader_keeping(reader: impl Read, keep: &[&str]) -> Result<Bundle, Error> {
        let archive = Archive::read(reader, &|path| path == ENTRIES || keep.contains(&path))?;
        let manifest = archive.manifest()?;
        if let Some(problem) = archive.problems(&manifest).into_iter().next() {
            return Err(problem);
        }
        let bytes = archive.data(ENTRIES).ok_or_else(|| Error::Member {
            member: ENTRIES.into(),
            problem: "missing".into(),
        })?;
        let entries = parse_entries(bytes)?;
        if entries.len() as u64 != manifest.counts.entries {
            return Err(Error::Entries(format!(
                "{} entries, but the manifest counts {}",
                entries.len(),
                manifest.counts.entries
            )));
        }
        let mut kept = std::collections::BTreeMap::new();
        for &name in keep {
            let bytes = archive.data(name).ok_or_else(|| Error::Member {
                member: name.into(),
                problem: "missing".into(),
            })?;
            kept.insert(name.to_string(), bytes.to_vec());
        }
        Ok(Bundle {
            manifest,
            index: Index::new(entries)?,
            kept,
        })
    }

    /// A member kept by [`Bundle::open_keeping`] / [`Bundle::from_reader_keeping`]
    /// (verified against the manifest like every member).
    pub fn member(&self, path: &str) -> Option<&[u8]> {
        self.kept.get(path).map(Vec::as_slice)
    }

    /// The manifest (version, counts, hashes).
    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// The entries and the matcher.
    pub fn index(&self) -> &Index {
        &self.index
    }

    /// Every entry, sorted by id.
    pub fn entries(&self) -> &[Entry] {
        self.index.entries()
    }

    /// The entry with this id.
    pub fn entry(&self, id: &str) -> Option<&Entry> {
        self.index.entry(id)
    }

    /// Every known error in `text`, by line, most specific first within a line.
    pub fn match_text(&self, text: &str) -> Vec<Found<'_>> {
        self.index.match_text(text)
    }

    /// Scans a stream of any size in bounded memory (see [`Index::scan`]).
    pub fn scan(
        &self,
        reader: impl Read,
        on_match: impl FnMut(Found<'_>),
    ) -> std::io::Result<ScanStats> {
        self.index.scan(reader, on_match)
    }
}

/// Parses `entries.json` (an array of entry objects).
pub fn parse_entries(bytes: &[u8]) -> Result<Vec<Entry>, Error> {
    let values: Vec<Box<serde_json::value::RawValue>> = serde_json::from_slice(bytes)
        .map_err(|e| Error::Entries(format!("not a JSON array of entries: {e}")))?;
    values
        .into_iter()
        .enumerate()
        .map(|(i, v)| Entry::from_raw(v).map_err(|e| Error::Entries(format!("entry #{i}: {e}"))))
        .collect()
}
