//! Hostile archives: what reading one may cost is bounded whatever it claims or holds,
//! and each refusal says why.

use std::io::Write;

use errata_consumer::archive::{Archive, Limits};
use errata_consumer::{Bundle, Error};

/// A tar header block for a regular file `path` of `size` bytes.
fn header(path: &str, size: u64) -> Vec<u8> {
    let mut header = tar::Header::new_gnu();
    header.set_path(path).unwrap();
    header.set_size(size);
    header.set_mode(0o644);
    header.set_entry_type(tar::EntryType::Regular);
    header.set_cksum();
    header.as_bytes().to_vec()
}

/// Gzip of the pieces written one after another; `zeros` more zero bytes at the end,
/// written a megabyte at a time (they compress about a thousand to one).
fn gzip(pieces: &[&[u8]], zeros: u64) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    for piece in pieces {
        gz.write_all(piece).unwrap();
    }
    let block = vec![0u8; 1 << 20];
    let mut left = zeros;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        gz.write_all(&block[..n]).unwrap();
        left -= n as u64;
    }
    gz.finish().unwrap()
}

fn manifest() -> Vec<u8> {
    let text = br#"{"format_version":1}"#;
    let mut bytes = header("manifest.json", text.len() as u64);
    bytes.extend_from_slice(text);
    bytes.resize(bytes.len().div_ceil(512) * 512, 0);
    bytes
}

fn small() -> Limits {
    Limits {
        member_bytes: 4 << 20,
        total_bytes: 8 << 20,
        members: 100,
    }
}

fn message(result: Result<Archive, Error>) -> String {
    match result {
        Ok(_) => panic!("a hostile archive was accepted"),
        Err(e) => e.to_string(),
    }
}

/// Why `bytes` is refused under [`small`] limits (keeping no member's content).
fn refused_with_small_limits(bytes: &[u8]) -> String {
    message(Archive::read_with_limits(bytes, &|_| false, &small()))
}

#[test]
fn a_member_claiming_100_gb_is_refused_before_it_is_read() {
    // A few hundred bytes of archive whose one member says it holds 100 GB: refused on
    // its header, with the default limits, without reading (or decompressing) anything.
    let mut tar = manifest();
    tar.extend(header("db.sqlite", 100 << 30));
    let bytes = gzip(&[&tar], 0);
    assert!(bytes.len() < 1024);
    let err = message(Archive::read(bytes.as_slice(), &|_| true));
    assert!(err.contains("db.sqlite"), "{err}");
    assert!(err.contains("larger than any bundle member"), "{err}");
    // And through the public entry point a downstream tool uses.
    let err = Bundle::from_reader(bytes.as_slice())
        .unwrap_err()
        .to_string();
    assert!(err.contains("larger than any bundle member"), "{err}");
}

#[test]
fn an_archive_that_decompresses_past_the_total_is_refused_mid_stream() {
    // Members under the per-member limit that together pass the total: the reader stops
    // once the total is passed, however much more the stream would give.
    let mut tar = manifest();
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    for i in 0..3 {
        tar.extend(header(&format!("part-{i}"), 3 << 20));
        pieces.push(std::mem::take(&mut tar));
        pieces.push(vec![0u8; 3 << 20]);
    }
    let refs: Vec<&[u8]> = pieces.iter().map(Vec::as_slice).collect();
    let bytes = gzip(&refs, 0);
    // (The size depends on the deflate backend the workspace unifies to.)
    assert!(bytes.len() < 1 << 20, "{} bytes", bytes.len());
    let err = refused_with_small_limits(&bytes);
    assert!(err.contains("more than any bundle holds"), "{err}");
    // With room for it, the same archive reads (so the refusal above is the limit's).
    let roomy = Limits {
        total_bytes: 16 << 20,
        ..small()
    };
    let archive = Archive::read_with_limits(bytes.as_slice(), &|_| false, &roomy).unwrap();
    assert_eq!(archive.members.len(), 3);
}

#[test]
fn zeros_after_the_end_of_the_archive_count_too() {
    // The tar ends, then the gzip stream goes on: the reader drains it to check the
    // trailer, and the total limit applies to that drain as well.
    let mut tar = manifest();
    tar.extend_from_slice(&[0u8; 1024]); // end-of-archive blocks
    let bytes = gzip(&[&tar], 64 << 20);
    assert!(bytes.len() < 1 << 20, "{} bytes", bytes.len());
    let err = refused_with_small_limits(&bytes);
    assert!(err.contains("more than any bundle holds"), "{err}");
}

#[test]
fn too_many_members_are_refused() {
    let mut tar = manifest();
    for i in 0..200 {
        tar.extend(header(&format!("e/{i}.json"), 0));
    }
    let bytes = gzip(&[&tar], 0);
    let err = refused_with_small_limits(&bytes);
    assert!(err.contains("more than 100 members"), "{err}");
}

#[test]
fn the_default_limits_leave_room_for_a_large_real_bundle() {
    // 10,000 entries make about 135 MB of tar in about 11,000 members (see the bundle
    // benchmark); the defaults must not refuse a knowledge base ten times that.
    let limits = Limits::default();
    assert!(limits.total_bytes >= 10 * 135_000_000);
    assert!(limits.members >= 10 * 11_000);
    assert!(limits.member_bytes >= 4 * 60_000_000);
}
