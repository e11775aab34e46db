//! The rendered site on its way to disk.
//!
//! A site is written whole or not at all: files go into a staging directory beside the
//! target as they are rendered ([`Staging`]), and only when every output has rendered
//! is it swapped in (one atomic exchange on Linux, see `errata-outdir`); a failure at any point leaves the previous site in
//! place. [`SiteFiles`] is the same site held in memory, for tests and callers that want
//! to look at the files before (or instead of) writing them.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, ErrorKind};

/// Every file of a rendered site: `/`-separated relative path → bytes, in path order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SiteFiles {
    files: BTreeMap<String, Vec<u8>>,
}

impl SiteFiles {
    /// The content of one file.
    pub fn get(&self, path: &str) -> Option<&[u8]> {
        self.files.get(path).map(Vec::as_slice)
    }

    /// Every path, in order.
    pub fn paths(&self) -> impl Iterator<Item = &str> {
        self.files.keys().map(String::as_str)
    }

    /// Every file with its bytes, in path order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.files.iter().map(|(p, b)| (p.as_str(), b.as_slice()))
    }

    pub(crate) fn into_vec(self) -> Vec<(String, Vec<u8>)> {
        self.files.into_iter().collect()
    }

    /// Number of files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// No files at all.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Total size in bytes.
    pub fn total_bytes(&self) -> usize {
        self.files.values().map(Vec::len).sum()
    }

    /// Writes the site to `out` atomically: into `<out>.tmp-<pid>` first, then the old
    /// `out` (if any) is renamed aside, the new one renamed into place, and the old one
    /// removed. The parent directory of `out` is created if needed.
    pub fn write_atomically(&self, out: &Path) -> Result<(), Error> {
        self.write_atomically_deferred(out)?.remove();
        Ok(())
    }

    /// [`SiteFiles::write_atomically`], except that the previous site, once swapped out,
    /// is not removed yet: the returned [`Replaced`] removes it (call
    /// [`Replaced::remove`], on another thread if you have other work; dropping it
    /// removes it too). Deleting tens of thousands of files takes a while, and nothing
    /// needs to wait for it: the new site is already in place.
    pub fn write_atomically_deferred(&self, out: &Path) -> Result<Replaced, Error> {
        use rayon::prelude::*;
        let staging = Staging::begin(out)?;
        self.files
            .par_iter()
            .try_for_each(|(rel, bytes)| staging.write(rel, bytes))?;
        staging.commit()
    }
}

/// Where rendered files go, one at a time and from many threads, as they are rendered:
/// into memory ([`SiteFiles`] behind a lock) or straight to disk ([`Staging`]).
pub(crate) trait Sink: Sync {
    /// Takes one file. Every output owns its path: a second file with the same path is
    /// an error, never a silent overwrite.
    fn put(&self, path: String, bytes: Vec<u8>) -> Result<(), Error>;
}

impl Sink for std::sync::Mutex<SiteFiles> {
    fn put(&self, path: String, bytes: Vec<u8>) -> Result<(), Error> {
        let mut files = self.lock().map_err(|_| Error::renderer_panicked())?;
        match files.files.entry(path) {
            std::collections::btree_map::Entry::Occupied(e) => Err(written_twice(e.key())),
            std::collections::btree_map::Entry::Vacant(e) => {
                e.insert(bytes);
                Ok(())
            }
        }
    }
}

fn written_twice(path: &str) -> Error {
    Error::new(
        ErrorKind::Io,
        "two outputs of the site have this path (a bug in errata-site)",
    )
    .with_path(path)
}

/// A site being written straight to disk: an [`errata_outdir::Staging`] beside the
/// target, swapped in whole by [`Staging::commit`]. Dropped without a commit (an error
/// anywhere), the staging directory is removed and the previous site is untouched.
///
/// Writing each file as soon as it is rendered, instead of holding the whole site in
/// memory first, keeps a build's memory flat (the 10,000-entry site is 243 MiB) and
/// overlaps rendering with the file system's work.
pub(crate) struct Staging(errata_outdir::Staging);

impl Staging {
    /// Prepares a staging directory for a site that will replace `out`. Fails at once
    /// when `out` exists and is not a directory.
    pub(crate) fn begin(out: &Path) -> Result<Staging, Error> {
        errata_outdir::Staging::begin(out)
            .map(Staging)
            .map_err(outdir_error)
    }

    /// Writes one file (from any thread); a file that already exists is an error.
    pub(crate) fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), Error> {
        self.0.write(rel, bytes).map_err(|e| match e.kind() {
            std::io::ErrorKind::AlreadyExists => written_twice(rel),
            _ => outdir_error(e),
        })
    }

    /// Swaps the staged site in; the previous one comes back, to be removed.
    pub(crate) fn commit(self) -> Result<Replaced, Error> {
        self.0.commit().map_err(outdir_error)
    }
}

fn outdir_error(e: errata_outdir::Error) -> Error {
    let path = e.path().to_path_buf();
    Error::io(path, e.into_io())
}

impl Sink for Staging {
    fn put(&self, path: String, bytes: Vec<u8>) -> Result<(), Error> {
        self.write(&path, &bytes)
    }
}

/// The previous site, swapped out by [`SiteFiles::write_atomically_deferred`] and not yet
/// removed (dropping it removes it).
pub use errata_outdir::Replaced;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_written_twice_is_an_error_in_memory_and_on_disk() {
        let files = std::sync::Mutex::new(SiteFiles::default());
        files.put("a/x.html".into(), b"one".to_vec()).unwrap();
        let err = files.put("a/x.html".into(), b"two".to_vec()).unwrap_err();
        assert!(err.to_string().contains("a/x.html"), "{err}");
        assert_eq!(files.lock().unwrap().get("a/x.html"), Some(&b"one"[..]));

        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        let staging = Staging::begin(&out).unwrap();
        staging.put("a/x.html".into(), b"one".to_vec()).unwrap();
        let err = staging.put("a/x.html".into(), b"two".to_vec()).unwrap_err();
        assert!(err.to_string().contains("a/x.html"), "{err}");
        staging.commit().unwrap().remove();
        assert_eq!(std::fs::read(out.join("a/x.html")).unwrap(), b"one");
    }
}
