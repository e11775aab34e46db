//! Streaming a log through the matcher: the input is cut into chunks of whole lines, the
//! chunks are searched on several threads, and matches are reported in input order.
//!
//! Memory stays bounded whatever the input's size: at most `2 × threads` chunks (about
//! [`CHUNK_BYTES`] each, or [`MAX_LINE_BYTES`] for a piece of an overlong line) are in
//! flight, and their buffers are reused. The output is the same, match for match and in
//! the same order, whatever the number of threads.

use std::collections::BTreeMap;
use std::io::Read;
use std::sync::Mutex;
use std::sync::mpsc;

use errata_matcher::{Match, Matcher};

use crate::index::{CHUNK_BYTES, MAX_LINE_BYTES};

/// Where the chunks come from: a stream read into reused buffers ([`Chunker`]) or a
/// byte slice already in memory, cut in place ([`SliceChunker`]: a mapped file, which
/// no thread then copies).
pub(crate) trait ChunkSource {
    /// A chunk: an owned buffer, or a piece of the slice.
    type Chunk: AsRef<[u8]> + Default + Send;
    /// Replaces `out` with the next chunk; `Ok(false)` once the input ended.
    fn next_into(&mut self, out: &mut Self::Chunk) -> std::io::Result<bool>;
    /// Whether the last chunk was handed out early because the input had nothing more
    /// ready: what was read so far should be reported before waiting for more.
    fn caught_up(&self) -> bool;
}

/// Hands out the input as chunks that end at a line end: whole lines of about
/// [`CHUNK_BYTES`], a piece of a line longer than [`MAX_LINE_BYTES`] (a match cannot span
/// two pieces), or the unterminated last line. A small read (less than [`LIVE_READ_BYTES`]:
/// a pipe with nothing more ready, as in `tail -f log | errata match`) hands out the
/// complete lines so far at once and marks the input [`Chunker::caught_up`], so a live log
/// is reported as it is written. A pipe fed faster than it is read returns full pipe
/// buffers (64 KiB), which still gather into large chunks.
pub(crate) struct Chunker<R> {
    reader: R,
    /// `pending[..filled]` is read but not yet handed out: always less than one line
    /// beyond the last chunk. The rest of `pending` is room for the next read, zeroed
    /// once: a buffer comes back with the length of the chunk it carried, so a read
    /// into it does not zero a megabyte first.
    pending: Vec<u8>,
    filled: usize,
    eof: bool,
    caught_up: bool,
}

/// A read returning less than this found the input's writer idle (see [`Chunker`]).
pub(crate) const LIVE_READ_BYTES: usize = 64 << 10;

impl<R: Read> Chunker<R> {
    pub fn new(reader: R) -> Self {
        Chunker {
            reader,
            pending: Vec::with_capacity(CHUNK_BYTES * 2),
            filled: 0,
            eof: false,
            caught_up: false,
        }
    }

    /// Appends what one `read` returns (up to [`CHUNK_BYTES`]); returns how much.
    fn read_some(&mut self) -> std::io::Result<usize> {
        let start = self.filled;
        if self.pending.len() < start + CHUNK_BYTES {
            self.pending.resize(start + CHUNK_BYTES, 0);
        }
        let n = match self
            .reader
            .read(&mut self.pending[start..start + CHUNK_BYTES])
        {
            Ok(0) => {
                self.eof = true;
                0
            }
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => 0,
            Err(e) => return Err(e),
        };
        self.filled = start + n;
        Ok(n)
    }
}

impl<R: Read> ChunkSource for Chunker<R> {
    type Chunk = Vec<u8>;

    fn caught_up(&self) -> bool {
        self.caught_up
    }

    fn next_into(&mut self, out: &mut Vec<u8>) -> std::io::Result<bool> {
        self.caught_up = false;
        loop {
            while !self.eof && self.filled < CHUNK_BYTES {
                let before = self.filled;
                let n = self.read_some()?;
                if n > 0
                    && n < LIVE_READ_BYTES
                    && memchr::memchr(b'\n', &self.pending[before..self.filled]).is_some()
                {
                    self.caught_up = true;
                    break;
                }
            }
            if self.filled == 0 {
                return Ok(false);
            }
            let cut = match memchr::memrchr(b'\n', &self.pending[..self.filled]) {
                Some(i) => i + 1,
                None if self.eof || self.filled >= MAX_LINE_BYTES => self.filled,
                None => {
                    self.read_some()?;
                    continue;
                }
            };
            // The chunk keeps `pending`'s buffer; only the partial line after it moves,
            // to the front of `out`'s buffer, which becomes `pending`.
            let rest = self.filled - cut;
            if out.len() < rest {
                out.resize(rest, 0);
            }
            out[..rest].copy_from_slice(&self.pending[cut..self.filled]);
            std::mem::swap(out, &mut self.pending);
            out.truncate(cut);
            self.filled = rest;
            return Ok(true);
        }
    }
}

/// Hands out a byte slice already in memory as chunks of the kinds [`Chunker`] makes of a
/// stream: whole lines of up to [`CHUNK_BYTES`] (one longer line whole), a line longer
/// than [`MAX_LINE_BYTES`] in pieces of that size, the unterminated last line. Where the
/// cuts fall does not change what is found (a match lies within a line). Nothing is
/// copied.
pub(crate) struct SliceChunker<'a> {
    rest: &'a [u8],
}

impl<'a> SliceChunker<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        SliceChunker { rest: bytes }
    }
}

impl<'a> ChunkSource for SliceChunker<'a> {
    type Chunk = &'a [u8];

    fn caught_up(&self) -> bool {
        false
    }

    fn next_into(&mut self, out: &mut &'a [u8]) -> std::io::Result<bool> {
        if self.rest.is_empty() {
            return Ok(false);
        }
        let cut = if self.rest.len() <= CHUNK_BYTES {
            self.rest.len()
        } else if let Some(i) = memchr::memrchr(b'\n', &self.rest[..CHUNK_BYTES]) {
            i + 1
        } else {
            // No line end in the first CHUNK_BYTES: the line ends further on, or is cut.
            let within = &self.rest[CHUNK_BYTES..self.rest.len().min(MAX_LINE_BYTES)];
            match memchr::memchr(b'\n', within) {
                Some(i) => CHUNK_BYTES + i + 1,
                None => self.rest.len().min(MAX_LINE_BYTES),
            }
        };
        let (chunk, rest) = self.rest.split_at(cut);
        *out = chunk;
        self.rest = rest;
        Ok(true)
    }
}

/// One chunk, searched.
pub(crate) struct Scanned<C> {
    pub chunk: C,
    /// In the order [`Matcher::scan`] reports them; spans and lines are chunk-relative.
    pub matches: Vec<Match>,
    /// `\n`s in the chunk.
    pub newlines: u64,
}

pub(crate) fn scan_chunk<C: AsRef<[u8]>>(matcher: &Matcher, chunk: C) -> Scanned<C> {
    let mut matches = Vec::new();
    let bytes = chunk.as_ref();
    let newlines = matcher.scan_counting_lines(bytes, |m| matches.push(m.clone()));
    Scanned {
        chunk,
        matches,
        newlines,
    }
}

/// Scans every chunk of `chunker` with `threads` threads (1: on this one) and calls
/// `report` with each [`Scanned`] in input order, on this thread.
pub(crate) fn scan_chunks<S: ChunkSource>(
    matcher: &Matcher,
    mut chunker: S,
    threads: usize,
    mut report: impl FnMut(&Scanned<S::Chunk>),
) -> std::io::Result<()> {
    if threads <= 1 {
        let mut buf = S::Chunk::default();
        while chunker.next_into(&mut buf)? {
            let scanned = scan_chunk(matcher, buf);
            report(&scanned);
            buf = scanned.chunk;
        }
        return Ok(());
    }
    let in_flight = 2 * threads as u64;
    let (work_tx, work_rx) = mpsc::sync_channel::<(u64, S::Chunk)>(threads);
    let work_rx = &Mutex::new(work_rx);
    let (done_tx, done_rx) = mpsc::channel::<(u64, Scanned<S::Chunk>)>();
    std::thread::scope(move |scope| {
        for _ in 0..threads {
            let done_tx = done_tx.clone();
            scope.spawn(move || {
                loop {
                    // The lock is held while waiting, so one idle thread waits at a time.
                    let next = match work_rx.lock() {
                        Ok(rx) => rx.recv().ok(),
                        Err(_) => None,
                    };
                    let Some((seq, chunk)) = next else { break };
                    if done_tx.send((seq, scan_chunk(matcher, chunk))).is_err() {
                        break;
                    }
                }
            });
        }
        drop(done_tx);

        // Results arrive in any order; `ready` holds them until their turn.
        let mut ready: BTreeMap<u64, Scanned<S::Chunk>> = BTreeMap::new();
        let (mut sent, mut reported) = (0u64, 0u64);
        let mut spare: Vec<S::Chunk> = Vec::new();
        let mut report_ready = |ready: &mut BTreeMap<u64, Scanned<S::Chunk>>,
                                reported: &mut u64,
                                spare: &mut Vec<S::Chunk>| {
            while let Some(scanned) = ready.remove(reported) {
                report(&scanned);
                spare.push(scanned.chunk);
                *reported += 1;
            }
        };
        let read = 'read: loop {
            // Wait while too many chunks are in flight, and, when the input is live, until
            // what it said so far is reported (before waiting for more of it).
            while sent - reported >= in_flight || (chunker.caught_up() && reported < sent) {
                let Ok((seq, scanned)) = done_rx.recv() else {
                    // Every thread stopped: only a panic does that, and the scope
                    // re-raises it when it ends.
                    break 'read Ok(());
                };
                ready.insert(seq, scanned);
                report_ready(&mut ready, &mut reported, &mut spare);
            }
            let mut buf = spare.pop().unwrap_or_default();
            match chunker.next_into(&mut buf) {
                Ok(true) => {
                    if work_tx.send((sent, buf)).is_err() {
                        break Ok(());
                    }
                    sent += 1;
                }
                Ok(false) => break Ok(()),
                Err(e) => break Err(e),
            }
        };
        drop(work_tx);
        for (seq, scanned) in done_rx {
            ready.insert(seq, scanned);
            // After a read error nothing more is reported: the caller gets the error.
            if read.is_ok() {
                report_ready(&mut ready, &mut reported, &mut spare);
            }
        }
        read
    })
}

/// Threads [`crate::Index::scan`] uses: one per core, up to 8 (the prefilter is
/// memory-bound; more threads only add chunks in flight).
pub(crate) fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(8))
}
