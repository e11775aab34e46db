//! Bundles, as a downstream tool opens them with `errata-consumer`.

use std::io::Write;

use errata_consumer::{
    Bundle, Counts, ENTRIES, FORMAT_VERSION, FileRecord, Lang, MANIFEST, Manifest,
};

/// Opens the input as a bundle, in one of three ways chosen by its first byte (modulo 3),
/// so that the fuzzer reaches past the gzip checksum and the manifest's hashes:
///
/// - 0: the rest is the `.tar.gz` file itself;
/// - 1: the rest is a tar archive, gzipped here;
/// - 2: the rest is `entries.json`, put in a valid archive ([`valid_archive`]).
///
/// Invariants: no panic; in mode 2, entries that parse and whose patterns compile make a
/// bundle that opens; an open bundle holds as many entries as its manifest counts, finds
/// each by its id, and matching its signatures and aliases gives the same matches in one
/// piece and streamed, each pointing at the text it matched.
pub fn bundle(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let bytes = match mode % 3 {
        0 => rest.to_vec(),
        1 => gzip(rest),
        _ => gzip(&valid_archive(rest)),
    };
    let opened = Bundle::from_bytes(&bytes);
    if mode % 3 == 2 {
        let entries_ok = errata_consumer::parse_entries(rest)
            .and_then(errata_consumer::Index::new)
            .is_ok();
        assert_eq!(
            opened.is_ok(),
            entries_ok,
            "a valid archive opens exactly when its entries are valid: {:?}",
            opened.as_ref().err()
        );
    }
    if let Ok(bundle) = opened {
        bundle_invariants(&bundle);
    }
}

fn bundle_invariants(bundle: &Bundle) {
    let entries = bundle.entries();
    assert_eq!(entries.len() as u64, bundle.manifest().counts.entries);
    let mut text = String::new();
    for e in entries {
        let found = bundle.entry(&e.id).expect("every entry is found by its id");
        assert_eq!(found.id, e.id);
        for lang in [Lang::En, Lang::Zh] {
            let _ = e.advice(lang);
            text.push_str(e.signature(lang));
            text.push('\n');
        }
        for alias in &e.aliases {
            text.push_str(alias);
            text.push('\n');
        }
    }
    let whole = bundle.match_text(&text);
    // `scan` hands out matches that live as long as the callback: compared as JSON.
    let mut streamed = Vec::new();
    bundle
        .index()
        .scan_with_threads(text.as_bytes(), 2, |f| streamed.push(f.to_json(Lang::En)))
        .expect("reading from memory does not fail");
    let whole_json: Vec<_> = whole.iter().map(|f| f.to_json(Lang::En)).collect();
    assert_eq!(whole_json, streamed, "match_text and a streamed scan agree");
    for f in &whole {
        let span = f.span.start as usize..f.span.end as usize;
        assert_eq!(
            text.as_bytes()
                .get(span.clone())
                .map(String::from_utf8_lossy)
                .as_deref(),
            Some(f.text.as_str()),
            "a match's text is the text at its span"
        );
        let line = 1 + text[..span.start].matches('\n').count() as u64;
        assert_eq!(f.line, line);
    }
}

/// A tar archive that a reader accepts as a bundle if `entries_json` holds valid
/// entries: a manifest (first, with the right size, hash and entry count) and
/// `entries.json`. The entry count is the length of the JSON array, or 0.
pub fn valid_archive(entries_json: &[u8]) -> Vec<u8> {
    let count = serde_json::from_slice::<serde_json::Value>(entries_json)
        .ok()
        .and_then(|v| v.as_array().map(Vec::len))
        .unwrap_or(0);
    let manifest = Manifest {
        format_version: FORMAT_VERSION,
        name: "errata".into(),
        version: "1.0.0".into(),
        schema_version: "1".into(),
        source_commit: None,
        build_date: "1970-01-01T00:00:00Z".into(),
        counts: Counts {
            entries: count as u64,
            articles: 0,
            translations: 0,
            runs: 0,
        },
        license: None,
        files: vec![FileRecord {
            path: ENTRIES.into(),
            size: entries_json.len() as u64,
            sha256: errata_consumer::archive::sha256_hex(entries_json),
        }],
    };
    let manifest = serde_json::to_vec(&manifest).expect("a manifest serializes");
    let mut tar = tar::Builder::new(Vec::new());
    for (path, data) in [(MANIFEST, manifest.as_slice()), (ENTRIES, entries_json)] {
        let mut header = tar::Header::new_gnu();
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(0);
        header.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut header, path, data)
            .expect("writing to memory does not fail");
    }
    tar.into_inner().expect("writing to memory does not fail")
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(bytes)
        .expect("writing to memory does not fail");
    gz.finish().expect("writing to memory does not fail")
}
