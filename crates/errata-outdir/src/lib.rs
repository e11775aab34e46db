//! An output directory replaced whole, or not at all.
//!
//! `errata build` writes two directories (the site and the bundle) that readers take
//! as a whole: a web server serves the site, a downstream tool checks the bundle against
//! the `SHA256SUMS` beside it. A build that is killed, runs out of disk or fails half-way
//! must leave the previous output as it was, and a reader must never see half of one
//! build and half of another. So:
//!
//! - [`Staging`] collects the new directory beside the target (`.<name>.tmp-<pid>-<n>`,
//!   same file system) and [`Staging::commit`] swaps it in. On Linux the swap is one
//!   `renameat2(RENAME_EXCHANGE)`: the staged and the published directory trade places
//!   in one system call, so there is no instant at which the output is missing, whatever
//!   moment the process dies at. Elsewhere (or on a file system without the exchange)
//!   it is two renames, and a later [`Staging::begin`] puts the previous directory back
//!   if a process died between them.
//! - Directories a dead process left behind are removed (or restored) by the next
//!   [`Staging::begin`] for the same target.
//! - [`DirLock`] keeps two writers of the same output apart (`errata build` twice at
//!   once): an advisory `flock` on the parent directory, released when the process
//!   exits however it exits, and leaving no lock file behind.
//!
//! ```
//! let dir = tempfile::tempdir()?;
//! let out = dir.path().join("site");
//! let _lock = errata_outdir::DirLock::acquire(dir.path(), || {})?;
//! let staging = errata_outdir::Staging::begin(&out)?;
//! staging.write("index.html", b"<p>new</p>")?;
//! staging.commit()?.remove();
//! assert_eq!(std::fs::read(out.join("index.html"))?, b"<p>new</p>");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::fs::File;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// An I/O failure on one path.
#[derive(Debug)]
pub struct Error {
    path: PathBuf,
    source: std::io::Error,
}

impl Error {
    fn new(path: impl Into<PathBuf>, source: std::io::Error) -> Error {
        Error {
            path: path.into(),
            source,
        }
    }

    /// The path the failing operation was on.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The kind of the underlying I/O error (`AlreadyExists` for a file written twice).
    pub fn kind(&self) -> std::io::ErrorKind {
        self.source.kind()
    }

    /// The underlying I/O error.
    pub fn into_io(self) -> std::io::Error {
        self.source
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.source)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        Some(&self.source)
    }
}

/// Distinguishes stagings of one process (two targets, or a test's threads).
static NEXT: AtomicU64 = AtomicU64::new(0);

/// A directory being written that will replace `out` whole (see the crate docs).
/// Dropped without a commit, it is removed and `out` is untouched.
#[derive(Debug)]
pub struct Staging {
    out: PathBuf,
    staging: PathBuf,
    /// The directory being replaced, if there is one: files whose bytes did not change
    /// become hard links to its files (no new inode, and inodes are most of what writing
    /// tens of thousands of files costs).
    previous: Option<PathBuf>,
    /// [`Staging::begin_keeping`]: the staging starts as a copy of the previous directory
    /// and a write replaces a file of that copy instead of being an error.
    keeping: bool,
    committed: bool,
}

impl Staging {
    /// Prepares an empty staging directory for a new `out`. Fails at once (nothing
    /// written) when `out` exists and is not a directory.
    pub fn begin(out: &Path) -> Result<Staging, Error> {
        let parent = parent_of(out);
        std::fs::create_dir_all(&parent).map_err(|e| Error::new(&parent, e))?;
        let name = name_of(out);
        recover_abandoned(&parent, &name, out);
        let previous = match std::fs::symlink_metadata(out) {
            Ok(meta) if meta.is_dir() => Some(out.to_path_buf()),
            Ok(_) => return Err(not_a_directory(out)),
            Err(_) => None,
        };
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let staging = parent.join(format!(".{name}.tmp-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&staging);
        std::fs::create_dir(&staging).map_err(|e| Error::new(&staging, e))?;
        Ok(Staging {
            out: out.to_path_buf(),
            staging,
            previous,
            keeping: false,
            committed: false,
        })
    }

    /// Like [`Staging::begin`], but the staging starts with every file of the previous
    /// `out` (as hard links), and [`Staging::write`] replaces a file rather than
    /// refusing it: for a directory where a run rewrites some files and keeps the rest
    /// (the bundle directory keeps earlier versions beside the new one).
    pub fn begin_keeping(out: &Path) -> Result<Staging, Error> {
        let mut staging = Staging::begin(out)?;
        staging.keeping = true;
        if let Some(previous) = staging.previous.clone() {
            link_tree(&previous, &staging.staging)?;
        }
        Ok(staging)
    }

    /// The staging directory (files written here become part of the new `out`).
    pub fn dir(&self) -> &Path {
        &self.staging
    }

    /// The directory this staging will replace.
    pub fn target(&self) -> &Path {
        &self.out
    }

    /// Writes one file (from any thread), creating its directory on demand. Outside
    /// [`Staging::begin_keeping`], a file that already exists is an error of kind
    /// `AlreadyExists`: every output owns its path.
    pub fn write(&self, rel: &str, bytes: &[u8]) -> Result<(), Error> {
        let path = self.path_for_new(rel)?;
        if let Some(old) = self.previous.as_ref().map(|p| p.join(rel))
            && same_bytes(&old, bytes)
        {
            match in_new_dir(&path, || std::fs::hard_link(&old, &path)) {
                Ok(()) => return Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    return Err(Error::new(&path, e));
                }
                // Another file system, no links there: write a copy.
                Err(_) => {}
            }
        }
        in_new_dir(&path, || create_new(&path, bytes, false)).map_err(|e| Error::new(&path, e))
    }

    /// [`Staging::write`], and the file's bytes are on disk (fsync) before it returns:
    /// for the files a reader verifies by hash, so that even a power cut leaves either
    /// the old file or the whole new one.
    pub fn write_durable(&self, rel: &str, bytes: &[u8]) -> Result<(), Error> {
        let path = self.path_for_new(rel)?;
        in_new_dir(&path, || create_new(&path, bytes, true)).map_err(|e| Error::new(&path, e))
    }

    /// The staging path for a new file `rel` ([`Staging::checked_path`]); under
    /// [`Staging::begin_keeping`], the previous file there (a link) is removed first.
    fn path_for_new(&self, rel: &str) -> Result<PathBuf, Error> {
        let path = self.checked_path(rel)?;
        if self.keeping {
            match std::fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(Error::new(&path, e)),
            }
        }
        Ok(path)
    }

    /// A relative path inside the staging directory; anything else (absolute, `..`,
    /// empty) is refused, so no output name can write outside it.
    fn checked_path(&self, rel: &str) -> Result<PathBuf, Error> {
        let ok = !rel.is_empty()
            && Path::new(rel)
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
        if ok {
            Ok(self.staging.join(rel))
        } else {
            Err(Error::new(
                rel,
                std::io::Error::new(
                    std::io::ErrorKind::InvalidInput,
                    "not a relative path inside the output directory",
                ),
            ))
        }
    }

    /// Swaps the staged directory in. The previous `out` (if any) comes back as
    /// [`Replaced`], to be removed when convenient.
    pub fn commit(mut self) -> Result<Replaced, Error> {
        let parent = parent_of(&self.out);
        let old = match std::fs::symlink_metadata(&self.out) {
            Ok(meta) if meta.is_dir() => Some(swap_in(&self.staging, &self.out)?),
            Ok(_) => return Err(not_a_directory(&self.out)),
            Err(_) => {
                std::fs::rename(&self.staging, &self.out).map_err(|e| Error::new(&self.out, e))?;
                None
            }
        };
        self.committed = true;
        // The renames are in the parent directory's entries: flush them, so that after a
        // crash the directory names the new output or the old one, not neither.
        if let Ok(dir) = File::open(&parent) {
            let _ = dir.sync_all();
        }
        Ok(Replaced { old })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_dir_all(&self.staging);
        }
    }
}

/// Puts `staging` at `out` (an existing directory) and returns where the previous `out`
/// went.
fn swap_in(staging: &Path, out: &Path) -> Result<PathBuf, Error> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::{CWD, RenameFlags, renameat_with};
        match renameat_with(CWD, staging, CWD, out, RenameFlags::EXCHANGE) {
            // They traded places: the previous output is now at the staging path.
            Ok(()) => return Ok(staging.to_path_buf()),
            // A file system without the exchange (some network and FUSE ones): the two
            // renames below.
            Err(e) if e == rustix::io::Errno::INVAL || e == rustix::io::Errno::NOSYS => {}
            Err(e) => return Err(Error::new(out, e.into())),
        }
    }
    let old = staging.with_file_name(
        staging
            .file_name()
            .map(|n| n.to_string_lossy().replacen(".tmp-", ".old-", 1))
            .unwrap_or_default(),
    );
    let _ = std::fs::remove_dir_all(&old);
    std::fs::rename(out, &old).map_err(|e| Error::new(out, e))?;
    if let Err(e) = std::fs::rename(staging, out) {
        // Put the previous output back before reporting.
        let _ = std::fs::rename(&old, out);
        return Err(Error::new(out, e));
    }
    Ok(old)
}

/// The previous output, swapped out by [`Staging::commit`] and not removed yet
/// (deleting tens of thousands of files takes a while, and the new output is already
/// in place: call [`Replaced::remove`] on another thread if there is other work).
#[derive(Debug)]
#[must_use = "the previous output is removed when this is dropped"]
pub struct Replaced {
    old: Option<PathBuf>,
}

impl Replaced {
    /// Removes the previous output (nothing when there was none).
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

/// An exclusive advisory lock on a directory, held until dropped (or until the process
/// ends, however it ends: the kernel releases a `flock` with the last descriptor).
/// Nothing is written, so no stale lock file can outlive a killed process.
#[derive(Debug)]
pub struct DirLock {
    _file: Option<File>,
}

impl DirLock {
    /// Locks `dir` (created if missing), calling `on_wait` once first if another process
    /// holds it. Where directories cannot be opened as files (Windows), nothing is
    /// locked.
    pub fn acquire(dir: &Path, on_wait: impl FnOnce()) -> Result<DirLock, Error> {
        std::fs::create_dir_all(dir).map_err(|e| Error::new(dir, e))?;
        let file = match File::open(dir) {
            Ok(f) => f,
            Err(_) if cfg!(not(unix)) => return Ok(DirLock { _file: None }),
            Err(e) => return Err(Error::new(dir, e)),
        };
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                on_wait();
                file.lock().map_err(|e| Error::new(dir, e))?;
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::new(dir, e)),
        }
        Ok(DirLock { _file: Some(file) })
    }
}

/// Whether the process that named a temporary file `pid` is known to be gone, so the
/// file is abandoned: never our own pid, and `false` where liveness cannot be told
/// (no `/proc`), so that nothing another process may still be writing is removed.
pub fn process_is_gone(pid: u32) -> bool {
    Path::new("/proc/self").exists()
        && pid != std::process::id()
        && !Path::new(&format!("/proc/{pid}")).exists()
}

fn parent_of(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

fn name_of(out: &Path) -> String {
    out.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".to_string())
}

/// Cleans up after processes that died while writing `out`: their staging directories
/// go, and if one died between the two renames of the fallback swap (so `out` is
/// missing), its previous output is put back. Linux only (liveness from `/proc`);
/// another live process's directories are never touched.
fn recover_abandoned(parent: &Path, name: &str, out: &Path) {
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(dir) = std::fs::read_dir(parent) else {
        return;
    };
    let mut abandoned = Vec::new();
    for item in dir.flatten() {
        let file = item.file_name().to_string_lossy().into_owned();
        let Some(rest) = file.strip_prefix(&format!(".{name}.")) else {
            continue;
        };
        let (old, rest) = match (rest.strip_prefix("tmp-"), rest.strip_prefix("old-")) {
            (Some(r), _) => (false, r),
            (_, Some(r)) => (true, r),
            _ => continue,
        };
        let pid = rest.split('-').next().and_then(|p| p.parse::<u32>().ok());
        if pid.is_some_and(process_is_gone) {
            abandoned.push((old, item.path()));
        }
    }
    abandoned.sort();
    for (old, path) in abandoned {
        if old && std::fs::symlink_metadata(out).is_err() && std::fs::rename(&path, out).is_ok() {
            continue;
        }
        let _ = std::fs::remove_dir_all(path);
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

/// Creates `path`, which must not exist yet, holding `bytes` (flushed to disk: `sync`).
fn create_new(path: &Path, bytes: &[u8], sync: bool) -> std::io::Result<()> {
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)?;
    file.write_all(bytes)?;
    if sync {
        file.sync_all()?;
    }
    Ok(())
}

/// Hard-links every file under `from` into `to` (copies where links fail).
fn link_tree(from: &Path, to: &Path) -> Result<(), Error> {
    let entries = std::fs::read_dir(from).map_err(|e| Error::new(from, e))?;
    for item in entries {
        let item = item.map_err(|e| Error::new(from, e))?;
        let src = item.path();
        let dest = to.join(item.file_name());
        let kind = item.file_type().map_err(|e| Error::new(&src, e))?;
        if kind.is_dir() {
            std::fs::create_dir(&dest).map_err(|e| Error::new(&dest, e))?;
            link_tree(&src, &dest)?;
        } else if kind.is_file() && std::fs::hard_link(&src, &dest).is_err() {
            std::fs::copy(&src, &dest).map_err(|e| Error::new(&dest, e))?;
        }
        // Symbolic links are not carried over: errata never writes one.
    }
    Ok(())
}

fn not_a_directory(out: &Path) -> Error {
    Error::new(
        out,
        std::io::Error::other("exists and is not a directory; refusing to replace it"),
    )
}

/// Whether the file at `path` holds exactly `bytes` (a missing file does not).
fn same_bytes(path: &Path, bytes: &[u8]) -> bool {
    use std::io::Read;
    let Ok(mut file) = File::open(path) else {
        return false;
    };
    if file.metadata().map(|m| m.len()).ok() != Some(bytes.len() as u64) {
        return false;
    }
    let mut buf = Vec::with_capacity(bytes.len());
    file.read_to_end(&mut buf).is_ok() && buf == bytes
}

#[cfg(test)]
mod tests;
