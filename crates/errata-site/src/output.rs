//! The rendered site on its way to disk.
//!
//! A site is written whole or not at all: files go into a staging directory beside the
//! target as they are rendered ([`Staging`]), and only when every output has rendered
//! is it swapped in with renames; a failure at any point leaves the previous site in
//! place. [`SiteFiles`] is the same site held in memory, for tests and callers that want
//! to look at the files before (or instead of) writing them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{Error, ErrorKind};

/// Every file of a rendered site: `/`-separated relative path → bytes, in path order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SiteFiles {
    files: BTreeMap<String, Vec<u8>>,
}

impl SiteFiles {
    #[cfg(test)]
    pub(crate) fn insert(&mut self, path: impl Into<String>, bytes: impl Into<Vec<u8>>) {
        self.files.insert(path.into(), bytes.into());
    }

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

/// A site being written: files go into a staging directory beside the target as they
/// come, and [`Staging::commit`] swaps the whole directory in. Dropped without a
/// commit (an error anywhere), the staging directory is removed and the previous site is
/// untouched.
///
/// Writing each file as soon as it is rendered, instead of holding the whole site in
/// memory first, keeps a build's memory flat (the 10,000-entry site is 243 MiB) and
/// overlaps rendering with the file system's work.
pub(crate) struct Staging {
    out: PathBuf,
    staging: PathBuf,
    old: PathBuf,
    /// The site being replaced, if there is one: files whose bytes did not change become
    /// hard links to its files.
    previous: Option<PathBuf>,
    committed: bool,
}

impl Staging {
    /// Prepares `<parent>/.<name>.tmp-<pid>` for a site that will replace `out`. Fails
    /// at once when `out` exists and is not a directory.
    pub(crate) fn begin(out: &Path) -> Result<Staging, Error> {
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
        let previous = match std::fs::symlink_metadata(out) {
            Ok(meta) if meta.is_dir() => Some(out.to_path_buf()),
            Ok(_) => return Err(not_a_directory(out)),
            Err(_) => None,
        };
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "site".to_string());
        remove_abandoned(&parent, &name);
        let pid = std::process::id();
        let staging = parent.join(format!(".{name}.tmp-{pid}"));
        let old = parent.join(format!(".{name}.old-{pid}"));
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir_all(&staging).map_err(|e| Error::io(&staging, e))?;
        Ok(Staging {
            out: out.to_path_buf(),
            staging,
            old,
            previous,
            committed: false,
        })
    }

    /// Writes one file (from any thread). Its directory is created when the first file
    /// in it fails for want of it; a file that already exists is an error.
    pub(crate) fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), Error> {
        let path = self.staging.join(rel);
        let twice_or_io = |e: std::io::Error| match e.kind() {
            std::io::ErrorKind::AlreadyExists => written_twice(rel),
            _ => Error::io(&path, e),
        };
        // A link makes no new inode, and allocating tens of thousands of inodes is most
        // of what writing a site costs the kernel.
        if let Some(old) = self.previous.as_ref().map(|p| p.join(rel))
            && same_bytes(&old, bytes)
        {
            match in_new_dir(&path, || std::fs::hard_link(&old, &path)) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(twice_or_io(e));
                }
                // Another file system, no links there: write a copy.
                Err(_) => {}
            }
        }
        in_new_dir(&path, || create_new(&path, bytes)).map_err(twice_or_io)
    }

    /// Swaps the staged site in: the previous `out` is renamed aside (and returned, to
    /// be removed), the staging directory renamed into place.
    pub(crate) fn commit(mut self) -> Result<Replaced, Error> {
        let out = self.out.clone();
        let had_old = match std::fs::symlink_metadata(&out) {
            Ok(meta) if meta.is_dir() => {
                let _ = std::fs::remove_dir_all(&self.old);
                std::fs::rename(&out, &self.old).map_err(|e| Error::io(&out, e))?;
                true
            }
            Ok(_) => return Err(not_a_directory(&out)),
            Err(_) => false,
        };
        if let Err(e) = std::fs::rename(&self.staging, &out) {
            // Put the previous site back before reporting.
            if had_old {
                let _ = std::fs::rename(&self.old, &out);
            }
            return Err(Error::io(&out, e));
        }
        self.committed = true;
        Ok(Replaced {
            old: had_old.then(|| self.old.clone()),
        })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

impl Sink for Staging {
    fn put(&self, path: String, bytes: Vec<u8>) -> Result<(), Error> {
        self.write(&path, &bytes)
    }
}

/// Runs `op`, which creates `path`; if it fails because the directory of `path` does not
/// exist yet, creates the directory and runs `op` once more.
fn in_new_dir(path: &Path, op: impl Fn() -> std::io::Result<()>) -> std::io::Result<()> {
    match op() {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)?;
            }
            op()
        }
        other => other,
    }
}

/// Creates `path`, which must not exist yet, holding `bytes`.
fn create_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?
        .write_all(bytes)
}

fn not_a_directory(out: &Path) -> Error {
    Error::io(
        out,
        std::io::Error::other("exists and is not a directory; refusing to replace it"),
    )
}

/// Whether the file at `path` holds exactly `bytes` (a missing file does not).
fn same_bytes(path: &Path, bytes: &[u8]) -> bool {
    use std::io::Read;
    let Ok(mut file) = std::fs::File::open(path) else {
        return false;
    };
    if file.metadata().map(|m| m.len()).ok() != Some(bytes.len() as u64) {
        return false;
    }
    let mut buf = Vec::with_capacity(bytes.len());
    file.read_to_end(&mut buf).is_ok() && buf == bytes
}

/// The previous site, swapped out by [`SiteFiles::write_atomically_deferred`] and not yet
/// removed.
#[derive(Debug)]
#[must_use = "the previous site is removed when this is dropped"]
pub struct Replaced {
    old: Option<PathBuf>,
}

impl Replaced {
    /// Removes the previous site (nothing when there was none).
    pub fn remove(mut self) {
        if let Some(old) = self.old.take() {
            let _ = std::fs::remove_dir_all(old);
        }
    }
}

impl Drop for Replaced {
    fn drop(&mut self) {
        if let Some(old) = self.old.take() {
            let _ = std::fs::remove_dir_all(old);
        }
    }
}

/// Removes `.<name>.tmp-<pid>` and `.<name>.old-<pid>` directories that a killed build
/// left behind (Linux: only those whose process is gone).
fn remove_abandoned(parent: &Path, name: &str) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(dir) = std::fs::read_dir(parent) else {
        return;
    };
    for item in dir.flatten() {
        let file = item.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&format!(".{name}.")) else {
            continue;
        };
        let pid = rest
            .strip_prefix("tmp-")
            .or_else(|| rest.strip_prefix("old-"))
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid
            && pid != std::process::id()
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_dir_all(item.path());
        }
    }
}

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

    #[test]
    fn a_staging_dropped_before_its_commit_leaves_the_previous_site_alone() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        let mut files = SiteFiles::default();
        files.insert("index.html", "previous");
        files.write_atomically(&out).unwrap();
        let staging = Staging::begin(&out).unwrap();
        staging.write("index.html", b"half").unwrap();
        staging.write("deep/er/page.html", b"half").unwrap();
        drop(staging);
        assert_eq!(std::fs::read(out.join("index.html")).unwrap(), b"previous");
        let siblings: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(siblings, ["site"], "the staging directory is gone");
    }

    #[test]
    fn a_target_that_is_a_file_is_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        std::fs::write(&out, "keep").unwrap();
        assert!(Staging::begin(&out).is_err());
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn rewriting_links_unchanged_files_and_replaces_changed_ones() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("site");
        let mut files = SiteFiles::default();
        files.insert("a/same.html", "same");
        files.insert("a/changed.html", "before");
        files.insert("gone.html", "gone");
        files.write_atomically(&out).unwrap();
        let mut next = SiteFiles::default();
        next.insert("a/same.html", "same");
        next.insert("a/changed.html", "after!");
        next.insert("b/new.html", "new");
        let replaced = next.write_atomically_deferred(&out).unwrap();
        // The previous site is still there until removed; the new one is in place.
        assert_eq!(
            std::fs::read_to_string(out.join("a/changed.html")).unwrap(),
            "after!"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let links = std::fs::metadata(out.join("a/same.html")).unwrap().nlink();
            assert_eq!(links, 2, "an unchanged file is a link to the previous one");
        }
        replaced.remove();
        let mut paths: Vec<String> = walkdir::WalkDir::new(&out)
            .into_iter()
            .flatten()
            .filter(|e| e.file_type().is_file())
            .map(|e| {
                e.path()
                    .strip_prefix(&out)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/")
            })
            .collect();
        paths.sort();
        assert_eq!(paths, ["a/changed.html", "a/same.html", "b/new.html"]);
        assert_eq!(
            std::fs::read_to_string(out.join("a/same.html")).unwrap(),
            "same"
        );
        // Nothing is left beside it.
        let siblings: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().collect();
        assert_eq!(siblings.len(), 1);
    }
}
