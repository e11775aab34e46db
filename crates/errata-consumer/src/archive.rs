//! Reading a bundle archive member by member, hashing everything, keeping only what is
//! asked for, and checking it all against the manifest.

use std::collections::BTreeMap;
use std::io::Read;

use sha2::{Digest, Sha256};

use crate::Error;
use crate::manifest::{FORMAT_VERSION, MANIFEST, Manifest, OLDEST_FORMAT_VERSION};

/// Bounds on what reading one archive may cost, whatever the archive claims: a bundle is
/// untrusted input (downloaded, passed to `errata mcp`, opened by a Python job), and a
/// few kilobytes of gzip can decompress to a hundred gigabytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Largest member, by its header's size (refused before reading it).
    pub member_bytes: u64,
    /// Everything the gzip stream decompresses to, headers and trailing bytes included
    /// (refused as soon as it is passed, so time and memory stay bounded).
    pub total_bytes: u64,
    /// Number of members.
    pub members: usize,
}

/// No member of a real bundle comes near this (the largest, the SQLite database, is
/// about 60 MB at 10,000 entries); a larger one is a corrupt or hostile archive.
pub const MAX_MEMBER_BYTES: u64 = 512 << 20;

impl Limits {
    /// The limits [`Archive::read`] applies: about 15 times what a 10,000-entry bundle
    /// holds (135 MB of tar in about 11,000 members).
    pub const DEFAULT: Limits = Limits {
        member_bytes: MAX_MEMBER_BYTES,
        total_bytes: 2 << 30,
        members: 200_000,
    };
}

impl Default for Limits {
    fn default() -> Limits {
        Limits::DEFAULT
    }
}

/// One member as read from the archive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    /// Size in bytes.
    pub size: u64,
    /// Lower-case hex sha256 of the content.
    pub sha256: String,
    /// The content, when it was asked for.
    pub data: Option<Vec<u8>>,
}

/// A bundle archive read in one pass: every member's hash, the manifest, and the
/// contents of the members that were asked for. Nothing is trusted yet: see
/// [`Archive::problems`].
#[derive(Debug, Clone)]
pub struct Archive {
    /// Every member except the manifest, by path.
    pub members: BTreeMap<String, Member>,
    /// The raw manifest bytes.
    pub manifest_bytes: Vec<u8>,
    /// Members in archive order (the manifest included), for checking the layout.
    pub order: Vec<String>,
    /// Whether the archive was read to its end (a read with `stop_after` stops early).
    pub complete: bool,
}

impl Archive {
    /// Reads a `.tar.gz` from `reader`, keeping the content of the members for which
    /// `keep(path)` is true (and of the manifest). Fails on anything that is not a
    /// well-formed archive of regular files with safe relative paths: corruption,
    /// truncation, links, `..`, duplicates.
    pub fn read(reader: impl Read, keep: &dyn Fn(&str) -> bool) -> Result<Archive, Error> {
        Archive::read_with_limits(reader, keep, &Limits::DEFAULT)
    }

    /// [`Archive::read`] within `limits`.
    pub fn read_with_limits(
        reader: impl Read,
        keep: &dyn Fn(&str) -> bool,
        limits: &Limits,
    ) -> Result<Archive, Error> {
        Archive::read_inner(reader, keep, limits, None, None)
    }

    /// [`Archive::read_with_limits`], and the content of each kept member in `names` is
    /// sent to `to` (with its path) as soon as it has been read, instead of being kept in
    /// the archive: a
    /// caller can start working on it while the members after it are read. Nothing
    /// vouches for those bytes until this returns `Ok` and [`Archive::problems`] is
    /// empty. `to` is dropped when reading ends, so a receiver never waits forever. With
    /// `stop_after`, reading stops once every member it names has been read: the members
    /// after the last of them are neither read nor hashed, `complete` is false, and
    /// [`Archive::problems`] checks only what was read.
    pub(crate) fn read_handing_over(
        reader: impl Read,
        keep: &dyn Fn(&str) -> bool,
        limits: &Limits,
        names: &[&str],
        to: std::sync::mpsc::SyncSender<(String, Vec<u8>)>,
        stop_after: Option<&[&str]>,
    ) -> Result<Archive, Error> {
        Archive::read_inner(reader, keep, limits, Some((names, to)), stop_after)
    }

    fn read_inner(
        reader: impl Read,
        keep: &dyn Fn(&str) -> bool,
        limits: &Limits,
        hand_over: Option<HandOver<'_>>,
        stop_after: Option<&[&str]>,
    ) -> Result<Archive, Error> {
        let tar = tar::Archive::new(Watch {
            inner: flate2::read::GzDecoder::new(reader),
            failed: None,
            left: limits.total_bytes,
        });
        // Hashing takes about as long as inflating: a second thread hashes each chunk
        // while this one inflates the next, so opening a bundle costs about the larger
        // of the two rather than their sum.
        std::thread::scope(|scope| {
            let (to_hasher, chunks) = std::sync::mpsc::sync_channel::<Chunk>(8);
            let (spare, spares) = std::sync::mpsc::sync_channel::<Vec<u8>>(8);
            let hasher = scope.spawn(move || hash_members(chunks, spare));
            let read = Archive::read_members(
                tar, keep, limits, &to_hasher, &spares, hand_over, stop_after,
            );
            drop(to_hasher);
            let digests = hasher
                .join()
                .map_err(|_| Error::Archive("the hashing thread failed".into()))?;
            let mut archive = read?;
            // Every member but the manifest was hashed, in archive order.
            let Archive { members, order, .. } = &mut archive;
            let hashed = order.iter().filter(|p| p.as_str() != MANIFEST);
            if digests.len() != hashed.clone().count() {
                return Err(Error::Archive("the hashing thread lost a member".into()));
            }
            for (path, digest) in hashed.zip(digests) {
                if let Some(m) = members.get_mut(path) {
                    m.sha256 = digest;
                }
            }
            Ok(archive)
        })
    }

    /// The reading half of [`Archive::read_with_limits`]: every member's bytes go to the
    /// hashing thread as [`Chunk`]s; returns the archive, its hashes not yet filled in.
    fn read_members<R: Read>(
        mut tar: tar::Archive<Watch<R>>,
        keep: &dyn Fn(&str) -> bool,
        limits: &Limits,
        to_hasher: &std::sync::mpsc::SyncSender<Chunk>,
        spares: &std::sync::mpsc::Receiver<Vec<u8>>,
        hand_over: Option<HandOver<'_>>,
        stop_after: Option<&[&str]>,
    ) -> Result<Archive, Error> {
        let mut seen = std::collections::HashSet::new();
        let mut members = BTreeMap::new();
        let mut manifest_bytes = None;
        let mut order: Vec<String> = Vec::new();
        let entries = tar.entries().map_err(|e| Error::Archive(e.to_string()))?;
        for entry in entries {
            let after = || {
                order.last().map_or("at the start".to_string(), |m| {
                    format!("after member `{m}`")
                })
            };
            let mut entry = entry.map_err(|e| Error::Archive(format!("{e} ({})", after())))?;
            let path = entry
                .path()
                .map_err(|e| Error::Archive(format!("{e} ({})", after())))?;
            let path = path
                .to_str()
                .filter(|p| safe_path(p))
                .ok_or_else(|| {
                    Error::Archive(format!("unsafe member path {:?} ({})", path, after()))
                })?
                .to_string();
            if !entry.header().entry_type().is_file() {
                return Err(Error::Member {
                    member: path,
                    problem: "not a regular file".into(),
                });
            }
            let size = entry.header().size().map_err(|e| Error::Member {
                member: path.clone(),
                problem: e.to_string(),
            })?;
            if size > limits.member_bytes {
                return Err(Error::Member {
                    member: path,
                    problem: format!(
                        "{size} bytes is larger than any bundle member (the limit is {})",
                        limits.member_bytes
                    ),
                });
            }
            if order.len() >= limits.members {
                return Err(Error::Archive(format!(
                    "more than {} members, more than any bundle holds",
                    limits.members
                )));
            }
            let wanted = path == MANIFEST || keep(&path);
            // The manifest is read, never hashed (it holds the hashes).
            let hash = path != MANIFEST;
            let mut data = Vec::new();
            if wanted {
                // The header's size is bounded above; the content may still fall short.
                data.reserve_exact(usize::try_from(size).unwrap_or(0));
            }
            let mut read = 0u64;
            loop {
                let mut buf = spares
                    .try_recv()
                    .unwrap_or_else(|_| Vec::with_capacity(CHUNK_BYTES));
                // Spare buffers come back full-length: only a new one is zeroed.
                buf.resize(CHUNK_BYTES, 0);
                let n = fill(&mut entry, &mut buf).map_err(|e| Error::Member {
                    member: path.clone(),
                    problem: format!("truncated or corrupt archive: {e}"),
                })?;
                read += n as u64;
                if wanted {
                    data.extend_from_slice(&buf[..n]);
                }
                if hash && n > 0 {
                    to_hasher
                        .send(Chunk::Data(buf, n))
                        .map_err(|_| Error::Archive("the hashing thread stopped".into()))?;
                }
                if n < CHUNK_BYTES {
                    break;
                }
            }
            if read != size {
                return Err(Error::Member {
                    member: path,
                    problem: "truncated archive".into(),
                });
            }
            if !seen.insert(path.clone()) {
                return Err(Error::Member {
                    member: path,
                    problem: "appears twice in the archive".into(),
                });
            }
            order.push(path.clone());
            if path == MANIFEST {
                manifest_bytes = Some(data);
            } else {
                to_hasher
                    .send(Chunk::End)
                    .map_err(|_| Error::Archive("the hashing thread stopped".into()))?;
                let mut data = wanted.then_some(data);
                if let Some((names, to)) = hand_over.as_ref()
                    && names.contains(&path.as_str())
                    && let Some(bytes) = data.take()
                {
                    // A receiver that has gone away only loses the head start.
                    let _ = to.send((path.clone(), bytes));
                }
                members.insert(
                    path,
                    Member {
                        size,
                        sha256: String::new(),
                        data,
                    },
                );
            }
            if let Some(names) = stop_after
                && names.iter().all(|n| members.contains_key(*n))
                && let Some(manifest_bytes) = manifest_bytes.take()
            {
                return Ok(Archive {
                    members,
                    manifest_bytes,
                    order,
                    complete: false,
                });
            }
        }
        // The tar reader stops at the end-of-archive blocks, and may swallow a read error
        // there; reading on to the end checks the gzip trailer (CRC and length), and
        // `Watch` remembers any error, so a truncated or altered tail fails too.
        let mut rest = tar.into_inner();
        let drained = std::io::copy(&mut rest, &mut std::io::sink()).map_err(|e| e.to_string());
        if let Some(e) = rest.failed.take().or(drained.err()) {
            let last = order.last().map_or("", String::as_str);
            return Err(Error::Archive(format!(
                "truncated or corrupt after the last member `{last}`: {e}"
            )));
        }
        let manifest_bytes = manifest_bytes
            .ok_or_else(|| Error::Manifest(format!("the archive has no {MANIFEST}")))?;
        Ok(Archive {
            members,
            manifest_bytes,
            order,
            complete: true,
        })
    }

    /// Parses the manifest, refusing an unknown `format_version` before looking at
    /// anything else in it.
    pub fn manifest(&self) -> Result<Manifest, Error> {
        let value: serde_json::Value = serde_json::from_slice(&self.manifest_bytes)
            .map_err(|e| Error::Manifest(format!("not JSON: {e}")))?;
        match value.get("format_version") {
            Some(v)
                if v.as_u64()
                    .is_some_and(|v| (OLDEST_FORMAT_VERSION..=FORMAT_VERSION).contains(&v)) => {}
            Some(v) => {
                return Err(Error::UnsupportedFormat {
                    found: v.to_string(),
                });
            }
            None => return Err(Error::Manifest("no format_version".into())),
        }
        serde_json::from_value(value).map_err(|e| Error::Manifest(e.to_string()))
    }

    /// Every disagreement between the members and the manifest, each naming its member;
    /// empty when the bundle is intact. The manifest must come first in the archive. Of
    /// an archive not read to its end, only the members read are checked.
    pub fn problems(&self, manifest: &Manifest) -> Vec<Error> {
        let mut problems = Vec::new();
        if self.order.first().map(String::as_str) != Some(MANIFEST) {
            problems.push(Error::Member {
                member: MANIFEST.into(),
                problem: "is not the first member".into(),
            });
        }
        let mut listed = BTreeMap::new();
        for record in &manifest.files {
            if listed.insert(record.path.as_str(), record).is_some() {
                problems.push(Error::Manifest(format!(
                    "`{}` is listed twice",
                    record.path
                )));
            }
        }
        for (path, record) in &listed {
            match self.members.get(*path) {
                None if !self.complete => {}
                None => problems.push(Error::Member {
                    member: path.to_string(),
                    problem: "listed in the manifest but missing".into(),
                }),
                Some(m) if m.size != record.size => problems.push(Error::Member {
                    member: path.to_string(),
                    problem: format!(
                        "size {} differs from the {} that `{MANIFEST}` lists",
                        m.size, record.size
                    ),
                }),
                Some(m) if m.sha256 != record.sha256 => problems.push(Error::Member {
                    member: path.to_string(),
                    problem: format!(
                        "sha256 {} differs from the {} that `{MANIFEST}` lists",
                        m.sha256, record.sha256
                    ),
                }),
                Some(_) => {}
            }
        }
        for path in self.members.keys() {
            if !listed.contains_key(path.as_str()) {
                problems.push(Error::Member {
                    member: path.clone(),
                    problem: "not listed in the manifest".into(),
                });
            }
        }
        problems
    }

    /// The content of a kept member.
    pub fn data(&self, path: &str) -> Option<&[u8]> {
        self.members.get(path).and_then(|m| m.data.as_deref())
    }
}

/// A reader that remembers the first error it returned, so that no layer above it can
/// lose one, and that fails once more than its budget of bytes has come through.
struct Watch<R> {
    inner: R,
    failed: Option<String>,
    /// Bytes still allowed ([`Limits::total_bytes`] to start with).
    left: u64,
}

impl<R: Read> Read for Watch<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let result = self
            .inner
            .read(buf)
            .and_then(|n| match self.left.checked_sub(n as u64) {
                Some(left) => {
                    self.left = left;
                    Ok(n)
                }
                None => Err(std::io::Error::other(
                    "it decompresses to more than any bundle holds (a compression bomb?)",
                )),
            });
        result.inspect_err(|e| {
            if self.failed.is_none() && e.kind() != std::io::ErrorKind::Interrupted {
                self.failed = Some(e.to_string());
            }
        })
    }
}

/// A relative `/`-separated path with no empty, `.` or `..` components.
fn safe_path(path: &str) -> bool {
    !path.is_empty()
        && !path.starts_with('/')
        && !path.contains('\\')
        && path
            .split('/')
            .all(|c| !c.is_empty() && c != "." && c != "..")
}

/// The members whose content goes to a receiver as soon as it is read, and the
/// channel it goes on (with the member's path).
type HandOver<'a> = (
    &'a [&'a str],
    std::sync::mpsc::SyncSender<(String, Vec<u8>)>,
);

/// What the reading thread sends the hashing thread: a member's next bytes, or its end.
enum Chunk {
    /// A buffer and how many of its bytes are the member's.
    Data(Vec<u8>, usize),
    End,
}

/// Bytes read and hashed at a time.
const CHUNK_BYTES: usize = 256 * 1024;

/// The hashing thread: the lower-case hex sha256 of each member, in order, from its
/// chunks; each chunk's buffer goes back to the reader for reuse.
fn hash_members(
    chunks: std::sync::mpsc::Receiver<Chunk>,
    spare: std::sync::mpsc::SyncSender<Vec<u8>>,
) -> Vec<String> {
    let mut digests = Vec::new();
    let mut hasher = Sha256::new();
    for chunk in chunks {
        match chunk {
            Chunk::Data(buf, n) => {
                hasher.update(&buf[..n]);
                // The reader allocates another when none is spare.
                let _ = spare.try_send(buf);
            }
            Chunk::End => digests.push(hex(&std::mem::take(&mut hasher).finalize())),
        }
    }
    digests
}

/// Reads into `buf` until it is full or the member ends; the number of bytes read.
fn fill(reader: &mut impl Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match reader.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Lower-case hex of some bytes.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 15)] as char);
    }
    s
}

/// Hex sha256 of some bytes.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}
