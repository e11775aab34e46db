//! Scanning a log file: a regular file is mapped into memory and searched where it lies
//! in the page cache, its searched pages handed back as the scan passes them; anything
//! else (a pipe, a device, a file that cannot be mapped) is read as a stream.
//!
//! Reading a file copies every byte out of the page cache on the thread that reads, a
//! core's third of the time the searching threads had on two cores. A mapped file is not
//! copied; and since the pages a scan has passed leave the process every
//! [`KEEP_MAPPED`] bytes, its resident memory stays that of a few chunks, as a read
//! scan's does, instead of growing with the log.
//!
//! The price of mapping: if another process truncates the file while it is searched,
//! reading a page past the new end raises SIGBUS, which ends the process (as it does
//! ripgrep, which maps files the same way). A log that may be truncated under the scan
//! should be given as a stream (a pipe, or [`crate::Index::scan`] of a reader).

use std::fs::File;

use crate::index::{Found, Index, ScanStats};

/// Searched bytes of a mapped log that stay mapped: past this, they are handed back.
const KEEP_MAPPED: usize = 16 << 20;

impl Index {
    /// Scans the log `file` on `threads` threads, as [`Index::scan_with_threads`] would
    /// scan it read as a stream (the same matches in the same order), calling
    /// `on_progress` with the bytes searched so far after each chunk. A regular,
    /// non-empty file is mapped rather than read (see the module's documentation for
    /// what that means when it is truncated meanwhile).
    pub fn scan_file(
        &self,
        file: &File,
        threads: usize,
        mut on_progress: impl FnMut(u64),
        on_match: impl FnMut(Found<'_>),
    ) -> std::io::Result<ScanStats> {
        let regular = file.metadata().is_ok_and(|m| m.is_file() && m.len() > 0);
        // SAFETY: the map is only read, and dropped before this returns. Truncation by
        // another process while it is searched raises SIGBUS (see the module's
        // documentation); nothing in this process writes the file.
        let mapped = regular
            .then(|| unsafe { memmap2::Mmap::map(file) }.ok())
            .flatten();
        let Some(map) = mapped else {
            return self.scan_source_reporting(file, threads, on_progress, on_match);
        };
        let mut released = 0;
        let stats = self.scan_bytes_with_progress(
            &map,
            threads,
            |searched| {
                on_progress(searched);
                released = release_searched(&map, released, searched as usize);
            },
            on_match,
        );
        Ok(stats)
    }
}

/// Unmaps the pages of `map` from `released` up to the last [`KEEP_MAPPED`] boundary
/// before `searched`, and returns where that left off. The pages stay in the page cache;
/// they only leave this process.
fn release_searched(map: &memmap2::Mmap, released: usize, searched: usize) -> usize {
    let upto = searched / KEEP_MAPPED * KEEP_MAPPED;
    if upto <= released {
        return released;
    }
    #[cfg(unix)]
    // SAFETY: the bytes below `searched` were searched and reported, in order; nothing
    // borrows them any more (the chunks the threads still hold lie beyond). The map is
    // a shared, read-only map of a file, so a page read again would be faulted back in
    // from the page cache with the same bytes: dropping it loses nothing.
    if unsafe {
        map.unchecked_advise_range(
            memmap2::UncheckedAdvice::DontNeed,
            released,
            upto - released,
        )
    }
    .is_err()
    {
        return released;
    }
    upto
}
