//! The rendered site as an in-memory file set, and how it reaches the disk.
//!
//! Rendering never touches the output directory. Only when every page has rendered is
//! the set written into a fresh temporary directory next to the target, which is then
//! swapped in with renames; a failure at any point leaves the previous site in place.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::Error;

/// Every file of a rendered site: `/`-separated relative path → bytes, in path order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct SiteFiles {
    files: BTreeMap<String, Vec<u8>>,
}

impl SiteFiles {
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
        let parent = match out.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(|e| Error::io(&parent, e))?;
        let name = out
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "site".to_string());
        remove_abandoned(&parent, &name);
        let pid = std::process::id();
        let staging = parent.join(format!(".{name}.tmp-{pid}"));
        let old = parent.join(format!(".{name}.old-{pid}"));
        let _ = std::fs::remove_dir_all(&staging);
        // Files whose bytes did not change are hard links to the previous site's: a
        // link makes no new inode, and allocating tens of thousands of inodes (right
        // after as many were freed) is most of what writing a site costs the kernel.
        let previous = std::fs::symlink_metadata(out)
            .is_ok_and(|m| m.is_dir())
            .then_some(out);
        if let Err(e) = self.write_into(&staging, previous) {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(e);
        }
        let had_old = match std::fs::symlink_metadata(out) {
            Ok(meta) if meta.is_dir() => {
                let _ = std::fs::remove_dir_all(&old);
                std::fs::rename(out, &old).map_err(|e| Error::io(out, e))?;
                true
            }
            Ok(_) => {
                let _ = std::fs::remove_dir_all(&staging);
                return Err(Error::io(
                    out,
                    std::io::Error::other("exists and is not a directory; refusing to replace it"),
                ));
            }
            Err(_) => false,
        };
        if let Err(e) = std::fs::rename(&staging, out) {
            // Put the previous site back before reporting.
            if had_old {
                let _ = std::fs::rename(&old, out);
            }
            let _ = std::fs::remove_dir_all(&staging);
            return Err(Error::io(out, e));
        }
        Ok(Replaced {
            old: had_old.then_some(old),
        })
    }

    fn write_into(&self, dir: &Path, previous: Option<&Path>) -> Result<(), Error> {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        // Directories first (few, in order), then the files in parallel: tens of
        // thousands of small writes are bound by file-system latency, not bandwidth.
        let parents: std::collections::BTreeSet<PathBuf> = self
            .files
            .keys()
            .filter_map(|rel| dir.join(rel).parent().map(Path::to_path_buf))
            .collect();
        for parent in &parents {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        // More writers than cores: a writer spends most of its time waiting for the
        // file system (creating an inode, a directory entry, the journal), not on a CPU.
        // But each takes whole directories: creating files in one directory is serialised
        // by that directory's lock, and writers contending for it only spin.
        let mut by_dir: BTreeMap<&str, Vec<(&String, &Vec<u8>)>> = BTreeMap::new();
        for (rel, bytes) in &self.files {
            let dir = rel.rsplit_once('/').map_or("", |(d, _)| d);
            by_dir.entry(dir).or_default().push((rel, bytes));
        }
        let mut groups: Vec<Vec<(&String, &Vec<u8>)>> = by_dir.into_values().collect();
        // Largest first, so that no big directory starts last.
        groups.sort_by_key(|g| std::cmp::Reverse(g.len()));
        let next = std::sync::atomic::AtomicUsize::new(0);
        let failed: std::sync::Mutex<Option<Error>> = std::sync::Mutex::new(None);
        let writers = std::env::var("ERRATA_SITE_WRITERS")
            .ok()
            .and_then(|w| w.parse::<usize>().ok())
            .unwrap_or_else(|| {
                std::thread::available_parallelism()
                    .map_or(2, usize::from)
                    .saturating_mul(4)
                    .clamp(4, 32)
            })
            .clamp(1, 64)
            .min(groups.len().max(1));
        std::thread::scope(|scope| {
            for _ in 0..writers {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(group) = groups.get(i) else {
                            break;
                        };
                        for (rel, bytes) in group {
                            let path = dir.join(rel);
                            if let Some(old) = previous.map(|p| p.join(rel))
                                && same_bytes(&old, bytes)
                                && std::fs::hard_link(&old, &path).is_ok()
                            {
                                continue;
                            }
                            if let Err(e) = std::fs::write(&path, bytes) {
                                if let Ok(mut slot) = failed.lock() {
                                    slot.get_or_insert(Error::io(&path, e));
                                }
                                // Stop handing out work.
                                next.store(groups.len(), std::sync::atomic::Ordering::Relaxed);
                                return;
                            }
                        }
                    }
                });
            }
        });
        match failed.into_inner() {
            Ok(Some(e)) => Err(e),
            _ => Ok(()),
        }
    }
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
