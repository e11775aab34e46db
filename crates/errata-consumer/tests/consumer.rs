//! The consumer on bundles built by hand here (so these tests pin the format, not the
//! writer), on the real `data/`, and on a generated corpus.

use std::io::Write;

use errata_consumer::{Bundle, Entry, Error, Index, Lang};
use serde_json::{Value, json};

fn sha256_hex(bytes: &[u8]) -> String {
    errata_consumer::archive::sha256_hex(bytes)
}

fn entry(id: &str, signature: &str, regex: &str, aliases: &[&str]) -> Value {
    json!({
        "id": id, "signature": signature, "signature_zh": format!("错误：{signature}"), "regex": regex,
        "root_cause": format!("cause of {id}"), "root_cause_zh": format!("{id} 的原因"),
        "dead_ends": [{"action": "reboot", "why_fails": "it is not the machine", "fail_rate": 0.9, "condition": "", "sources": []}],
        "workarounds": [
            {"action": "low", "success_rate": 0.2, "how": "h1", "condition": "", "sources": []},
            {"action": "high", "success_rate": 0.9, "how": "h2", "condition": "", "sources": []}
        ],
        "workarounds_zh": ["低", ""],
        "aliases": aliases,
    })
}

/// A bundle with these entries and a manifest edited by `edit`.
fn bundle_bytes(entries: &[Value], edit: impl FnOnce(&mut Value)) -> Vec<u8> {
    let entries_json = serde_json::to_vec(entries).unwrap();
    let mut manifest = json!({
        "format_version": 1, "name": "errata", "version": "1.2.3", "schema_version": "1.0.0",
        "source_commit": null, "build_date": "1970-01-01T00:00:00Z",
        "counts": {"entries": entries.len(), "articles": 0, "translations": 0, "runs": 0},
        "files": [{"path": "entries.json", "size": entries_json.len(), "sha256": sha256_hex(&entries_json)}]
    });
    edit(&mut manifest);
    let manifest = serde_json::to_vec_pretty(&manifest).unwrap();
    let mut tar = tar::Builder::new(Vec::new());
    for (name, data) in [
        ("manifest.json", &manifest),
        ("entries.json", &entries_json),
    ] {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        tar.append_data(&mut h, name, data.as_slice()).unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar.into_inner().unwrap()).unwrap();
    gz.finish().unwrap()
}

/// An index of [`sample`]'s entries.
fn sample_index() -> Index {
    Index::new(
        sample()
            .into_iter()
            .map(|v| Entry::from_value(v).unwrap())
            .collect(),
    )
    .unwrap()
}

fn sample() -> Vec<Value> {
    vec![
        entry(
            "cuda/generic",
            "CUDA error: something",
            "CUDA error: .+",
            &[],
        ),
        entry(
            "cuda/illegal",
            "CUDA error: an illegal memory access was encountered",
            "an illegal memory access was encountered",
            &["cudaErrorIllegalAddress"],
        ),
        entry(
            "nccl/timeout",
            "NCCL watchdog timeout",
            "(?i)watchdog.*timeout",
            &[],
        ),
    ]
}

#[test]
fn opens_and_matches_with_advice() {
    let bundle = Bundle::from_bytes(&bundle_bytes(&sample(), |_| {})).unwrap();
    assert_eq!(bundle.manifest().version, "1.2.3");
    let log = "start\nRuntimeError: CUDA error: an illegal memory access was encountered\nok\n[rank0] Watchdog caught collective timeout\n";
    let found = bundle.match_text(log);
    let got: Vec<(u64, &str)> = found
        .iter()
        .map(|f| (f.line, f.entry.id.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (2, "cuda/illegal"),
            (2, "cuda/generic"),
            (4, "nccl/timeout")
        ]
    );
    assert_eq!(
        &log[found[0].span.start as usize..found[0].span.end as usize],
        "an illegal memory access was encountered"
    );
    assert_eq!(found[0].column, 27);

    let advice = found[0].entry.advice(Lang::Zh);
    assert_eq!(advice.root_cause, "cuda/illegal 的原因");
    // Best first; the empty Chinese text falls back to English.
    let actions: Vec<&str> = advice.workarounds.iter().map(|s| s.action).collect();
    assert_eq!(actions, ["high", "低"]);
    assert_eq!(advice.dead_ends[0].detail, "it is not the machine");
    let json = found[0].to_json(Lang::En);
    assert_eq!(json["id"], "cuda/illegal");
    assert_eq!(json["workarounds"][0]["action"], "high");
    // No basis (a bundle from before schema 2): an estimate, shown as words, with no
    // number a reader could take for a measurement.
    assert_eq!(json["workarounds"][0]["success_rate"], Value::Null);
    assert_eq!(json["workarounds"][0]["basis"]["kind"], "estimate");
    assert_eq!(
        json["workarounds"][0]["evidence"],
        "almost always works (editor's estimate)"
    );
    assert_eq!(advice.dead_ends[0].evidence, "几乎总是无效（编者估计）");
}

#[test]
fn counted_rates_are_shown_as_counts_and_chinese_dead_ends_are_used() {
    let mut entries = sample();
    let illegal = entries
        .iter_mut()
        .find(|e| e["id"] == "cuda/illegal")
        .expect("cuda/illegal in the sample");
    illegal["dead_ends"][0]["basis"] =
        serde_json::json!({"kind": "reports", "n": 4, "k": 3, "items": []});
    illegal["dead_ends"][0]["fail_rate"] = 0.75.into();
    illegal["dead_ends_zh"] = serde_json::json!(["重启机器：问题不在机器上。"]);
    let bundle = Bundle::from_bytes(&bundle_bytes(&entries, |_| {})).unwrap();
    let found = bundle.match_text("an illegal memory access was encountered");
    let en = found[0].entry.advice(Lang::En);
    assert_eq!(
        en.dead_ends[0].evidence,
        "failed in 3 of 4 reports (95% interval 30–95%)"
    );
    assert_eq!(en.dead_ends[0].counted(), Some((3, 4)));
    let zh = found[0].entry.advice(Lang::Zh);
    assert_eq!(
        (zh.dead_ends[0].action, zh.dead_ends[0].detail),
        ("重启机器：问题不在机器上。", "")
    );
    assert_eq!(
        zh.dead_ends[0].evidence,
        "4 份报告中 3 份无效（95% 区间 30–95%）"
    );
    let json = found[0].to_json(Lang::En);
    assert_eq!(json["dead_ends"][0]["fail_rate"], 0.75);
    assert_eq!(
        json["dead_ends"][0]["basis"],
        serde_json::json!({"kind": "reports", "k": 3, "n": 4})
    );
}

#[test]
fn unknown_format_version_is_refused_clearly() {
    for unknown in [0, 3] {
        let bytes = bundle_bytes(&sample(), |m| m["format_version"] = json!(unknown));
        let err = Bundle::from_bytes(&bytes).unwrap_err();
        assert!(matches!(err, Error::UnsupportedFormat { .. }), "{err}");
        assert!(
            err.to_string().contains(&format!(
                "format_version {unknown} is not supported: this errata-consumer ({}) reads format_version 1 to 2",
                env!("CARGO_PKG_VERSION")
            )),
            "{err}"
        );
    }
}

/// Format 2 added the manifest's `license`; format 1 bundles (no `license`) still load.
#[test]
fn both_formats_load_and_format_2_names_the_licence() {
    let old = Bundle::from_bytes(&bundle_bytes(&sample(), |_| {})).unwrap();
    assert_eq!(old.manifest().format_version, 1);
    assert_eq!(old.manifest().license, None);
    let new = Bundle::from_bytes(&bundle_bytes(&sample(), |m| {
        m["format_version"] = json!(2);
        m["license"] = json!("CC-BY-4.0");
    }))
    .unwrap();
    assert_eq!(new.manifest().license.as_deref(), Some("CC-BY-4.0"));
}

/// A bundle of `manifest.json`, `entries.json` and `extra.txt`, in that order, whose
/// manifest lists `extra.txt` with the hash `extra_sha256` claims.
fn bundle_with_extra(entries_json: &[u8], count: usize, extra_sha256: &str) -> Vec<u8> {
    bundle_with_extra_at(entries_json, count, extra_sha256, false)
}

/// [`bundle_with_extra`], with `extra.txt` before `entries.json` when `extra_first`.
fn bundle_with_extra_at(
    entries_json: &[u8],
    count: usize,
    extra_sha256: &str,
    extra_first: bool,
) -> Vec<u8> {
    let extra = b"a member after the entries";
    let manifest = serde_json::to_vec_pretty(&json!({
        "format_version": 2, "name": "errata", "version": "1.2.3", "schema_version": "1.0.0",
        "source_commit": null, "build_date": "1970-01-01T00:00:00Z", "license": null,
        "counts": {"entries": count, "articles": 0, "translations": 0, "runs": 0},
        "files": [
            {"path": "entries.json", "size": entries_json.len(), "sha256": sha256_hex(entries_json)},
            {"path": "extra.txt", "size": extra.len(), "sha256": extra_sha256}
        ]
    }))
    .unwrap();
    let mut tar = tar::Builder::new(Vec::new());
    let mut members = vec![
        ("manifest.json", manifest.as_slice()),
        ("entries.json", entries_json),
        ("extra.txt", extra.as_slice()),
    ];
    if extra_first {
        members.swap(1, 2);
    }
    for (name, data) in members {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        tar.append_data(&mut h, name, data).unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&tar.into_inner().unwrap()).unwrap();
    gz.finish().unwrap()
}

/// The entries are typed while the members after them are still read: that head start
/// must not let a bundle open before every member has verified, nor change which
/// problem is reported.
#[test]
fn entries_read_early_are_used_only_once_everything_verified() {
    let entries = serde_json::to_vec(&sample()).unwrap();
    let good = sha256_hex(b"a member after the entries");
    let bundle = Bundle::from_bytes(&bundle_with_extra(&entries, sample().len(), &good)).unwrap();
    assert_eq!(bundle.entries().len(), sample().len());
    // A member after the entries that differs from the manifest fails the whole bundle.
    let err = Bundle::from_bytes(&bundle_with_extra(
        &entries,
        sample().len(),
        &"0".repeat(64),
    ))
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("member `extra.txt`") && err.contains("sha256"),
        "{err}"
    );
    // Entries that do not parse are reported after the archive's own problems...
    let err = Bundle::from_bytes(&bundle_with_extra(b"[1, 2", 2, &"0".repeat(64)))
        .unwrap_err()
        .to_string();
    assert!(err.contains("member `extra.txt`"), "{err}");
    // ...and on their own when the archive is sound.
    let err = Bundle::from_bytes(&bundle_with_extra(b"[1, 2", 2, &good)).unwrap_err();
    assert!(matches!(err, Error::Entries(_)), "{err}");
    // Keeping entries.json itself still gives its bytes.
    let kept = Bundle::from_reader_keeping(
        bundle_with_extra(&entries, sample().len(), &good).as_slice(),
        &[errata_consumer::ENTRIES],
    )
    .unwrap();
    assert_eq!(
        kept.member(errata_consumer::ENTRIES),
        Some(entries.as_slice())
    );
}

/// Opening for matching verifies the manifest and every member up to `entries.json`, as
/// opening does, and reads nothing after it: a bad member there is not its business.
#[test]
fn opening_for_matching_verifies_what_it_reads_and_stops_after_the_entries() {
    let entries = serde_json::to_vec(&sample()).unwrap();
    let good = sha256_hex(b"a member after the entries");
    let bad = "0".repeat(64);
    let for_matching = |bytes: Vec<u8>| Bundle::from_reader_for_matching(bytes.as_slice());
    // A bad member after the entries: unread, so the bundle opens for matching (and
    // answers as the full open does), while a full open refuses it.
    let after = bundle_with_extra(&entries, sample().len(), &bad);
    let opened = for_matching(after.clone()).unwrap();
    assert_eq!(
        opened.entries(),
        Bundle::from_bytes(&bundle_with_extra(&entries, sample().len(), &good))
            .unwrap()
            .entries()
    );
    assert!(Bundle::from_bytes(&after).is_err());
    // Cut the archive right after the entries: still opens for matching, never in full.
    let truncated = {
        let mut raw = Vec::new();
        std::io::Read::read_to_end(
            &mut flate2::read::GzDecoder::new(after.as_slice()),
            &mut raw,
        )
        .unwrap();
        // The member's tar header (the manifest names it too, without the NUL).
        let cut = raw.windows(10).position(|w| w == b"extra.txt\0").unwrap();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&raw[..cut]).unwrap();
        gz.finish().unwrap()
    };
    assert_eq!(
        for_matching(truncated.clone()).unwrap().entries().len(),
        sample().len()
    );
    assert!(Bundle::from_bytes(&truncated).is_err());
    // A bad member before the entries, bad entries, or entries the manifest miscounts:
    // refused, naming what is wrong, exactly as a full open does.
    let before = bundle_with_extra_at(&entries, sample().len(), &bad, true);
    let err = for_matching(before).unwrap_err().to_string();
    assert!(
        err.contains("member `extra.txt`") && err.contains("sha256"),
        "{err}"
    );
    let wrong_entries = bundle_bytes(&sample(), |m| m["files"][0]["sha256"] = json!(bad.clone()));
    let err = for_matching(wrong_entries).unwrap_err().to_string();
    assert!(
        err.contains("member `entries.json`") && err.contains("sha256"),
        "{err}"
    );
    let miscounted = bundle_bytes(&sample(), |m| m["counts"]["entries"] = json!(7));
    assert!(matches!(for_matching(miscounted), Err(Error::Entries(_))));
    // entries.json that the manifest does not list: refused.
    let none = bundle_bytes(&sample(), |m| m["files"] = json!([]));
    assert!(for_matching(none).is_err());
}

#[test]
fn manifest_disagreements_name_the_member() {
    let bytes = bundle_bytes(&sample(), |m| {
        m["files"][0]["sha256"] = json!("0".repeat(64))
    });
    let err = Bundle::from_bytes(&bytes).unwrap_err().to_string();
    assert!(
        err.contains("member `entries.json`") && err.contains("sha256"),
        "{err}"
    );
    let bytes = bundle_bytes(&sample(), |m| m["files"] = json!([]));
    let err = Bundle::from_bytes(&bytes).unwrap_err().to_string();
    assert!(err.contains("`entries.json`: not listed"), "{err}");
    let bytes = bundle_bytes(&sample(), |m| m["counts"]["entries"] = json!(7));
    assert!(Bundle::from_bytes(&bytes).is_err());
    assert!(matches!(
        Bundle::from_bytes(b"not a bundle"),
        Err(Error::Archive(_))
    ));
    let dir = tempfile::tempdir().unwrap();
    assert!(matches!(
        Bundle::open(dir.path().join("missing.tar.gz")),
        Err(Error::Io(_))
    ));
}

#[test]
fn bad_regexes_are_reported_by_entry_id() {
    let mut entries = sample();
    entries.push(entry("cuda/bad", "x", "(unclosed", &[]));
    let err = Bundle::from_bytes(&bundle_bytes(&entries, |_| {})).unwrap_err();
    match err {
        Error::Patterns(list) => assert_eq!(list[0].0, "cuda/bad"),
        other => panic!("{other}"),
    }
}

/// A reader that hands out at most `n` bytes per read, to cross every chunk boundary.
struct Trickle<'a>(&'a [u8], usize);

impl std::io::Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.len().min(self.1).min(buf.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        Ok(n)
    }
}

#[test]
fn streaming_scan_agrees_with_match_text_across_chunks() {
    let index = sample_index();
    // About 3 MiB: several chunks, with matches near the boundaries and a last line
    // without a newline.
    let mut log = String::new();
    let mut i = 0;
    while log.len() < 3 * errata_consumer::CHUNK_BYTES {
        i += 1;
        match i % 997 {
            0 => log.push_str("CUDA error: an illegal memory access was encountered\n"),
            500 => log.push_str("NCCL WATCHDOG timeout on rank 3\n"),
            _ => log.push_str(&format!("step {i}: loss 0.{i:04} lr 3e-4 tokens/s 12345\n")),
        }
    }
    log.push_str("cudaErrorIllegalAddress");
    let expected: Vec<(u64, String, u64)> = index
        .match_text(&log)
        .iter()
        .map(|f| (f.line, f.entry.id.clone(), f.span.start))
        .collect();
    assert!(expected.len() > 100);
    // Chunks are searched on several threads and reported in order: the result is the
    // same whatever the number of threads and however the reads are cut.
    for (step, threads) in [(1 << 20, 1), (4096 + 7, 1), (1 << 20, 2), (4096 + 7, 3)] {
        let mut got = Vec::new();
        let stats = index
            .scan_with_threads(Trickle(log.as_bytes(), step), threads, |f| {
                got.push((f.line, f.entry.id.clone(), f.span.start))
            })
            .unwrap();
        assert_eq!(got, expected, "{threads} threads, reads of {step}");
        assert_eq!(stats.lines, log.lines().count() as u64);
        assert_eq!(stats.bytes, log.len() as u64);
        assert_eq!(stats.matches, expected.len() as u64);
    }
    // The same bytes in memory (a mapped file), cut in place, and the progress reported
    // after each chunk: rising to the whole log.
    for threads in [1, 2, 3] {
        let (mut got, mut progress) = (Vec::new(), Vec::new());
        let stats = index.scan_bytes_with_progress(
            log.as_bytes(),
            threads,
            |n| progress.push(n),
            |f| got.push((f.line, f.entry.id.clone(), f.span.start)),
        );
        assert_eq!(got, expected, "{threads} threads, in memory");
        assert_eq!(stats.lines, log.lines().count() as u64);
        assert_eq!(stats.bytes, log.len() as u64);
        assert!(progress.len() >= 3, "{progress:?}");
        assert!(progress.windows(2).all(|w| w[0] < w[1]), "{progress:?}");
        assert_eq!(progress.last(), Some(&(log.len() as u64)));
    }
}

/// A reader that fails after `ok` bytes.
struct FailsAfter<'a>(&'a [u8], usize);

impl std::io::Read for FailsAfter<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.1 == 0 {
            return Err(std::io::Error::other("disk on fire"));
        }
        let n = self.0.len().min(self.1).min(buf.len());
        buf[..n].copy_from_slice(&self.0[..n]);
        self.0 = &self.0[n..];
        self.1 -= n;
        Ok(n)
    }
}

#[test]
fn a_read_error_stops_the_scan_and_is_returned() {
    let index = sample_index();
    let line = "CUDA error: an illegal memory access was encountered\n";
    let log = line.repeat(200_000);
    for threads in [1, 2] {
        let mut lines = Vec::new();
        let err = index
            .scan_with_threads(FailsAfter(log.as_bytes(), 5 << 20), threads, |f| {
                lines.push(f.line)
            })
            .unwrap_err();
        assert_eq!(err.to_string(), "disk on fire");
        // What was reported came before the failure, in order, and nothing after it.
        assert!(lines.windows(2).all(|w| w[0] <= w[1]), "{threads} threads");
        let last = lines.last().copied().unwrap_or(0);
        assert!(
            last > 0,
            "{threads} threads: matches before the failure are reported"
        );
        assert!(
            last <= (5 << 20) / line.len() as u64,
            "{threads} threads: a match on line {last}, after the failure"
        );
    }
}

#[test]
fn a_line_longer_than_the_limit_is_searched_in_pieces() {
    let index = sample_index();
    let mut log = vec![b'x'; errata_consumer::MAX_LINE_BYTES + 10];
    log.extend_from_slice(b" cudaErrorIllegalAddress\nnext line cudaErrorIllegalAddress\n");
    let mut got = Vec::new();
    let stats = index.scan(log.as_slice(), |f| got.push(f.line)).unwrap();
    assert_eq!(got, [1, 2]);
    assert_eq!(stats.lines, 2);
    // In memory the same: the long line in pieces, each line's match found once.
    for threads in [1, 2] {
        let mut got = Vec::new();
        let stats = index.scan_bytes(&log, threads, |f| got.push(f.line));
        assert_eq!(got, [1, 2], "{threads} threads");
        assert_eq!(stats.lines, 2);
        assert_eq!(stats.bytes, log.len() as u64);
    }
    // A line longer than a chunk but within the limit stays whole, with the short lines
    // around it.
    let mut log = b"cudaErrorIllegalAddress\n".to_vec();
    log.extend(std::iter::repeat_n(b'y', 2 * errata_consumer::CHUNK_BYTES));
    log.extend_from_slice(b" cudaErrorIllegalAddress\nlast cudaErrorIllegalAddress");
    for threads in [1, 2] {
        let mut got = Vec::new();
        let stats = index.scan_bytes(&log, threads, |f| got.push((f.line, f.column)));
        let long = 2 * errata_consumer::CHUNK_BYTES + 2;
        assert_eq!(got, [(1, 1), (2, long), (3, 6)], "{threads} threads");
        assert_eq!(stats.lines, 3);
    }
}

/// Every entry of the real knowledge base, and of a generated corpus, is found first by
/// its own signature and by each of its aliases.
#[test]
fn every_signature_and_alias_finds_its_own_entry_first() {
    check_own_first(real_entries());
    check_own_first(generated_corpus(600));
}

/// `JsonLines` writes each match exactly as `Found::to_json` says it, in both languages,
/// when an entry matches again (its advice then comes from the writer's cache) and for
/// entries with counted and estimated rates, on every real entry's signature.
#[test]
fn json_lines_are_to_json_with_the_advice_serialized_once() {
    let index = Index::new(real_entries()).unwrap();
    for lang in [Lang::En, Lang::Zh] {
        let mut writer = errata_consumer::JsonLines::new(lang);
        let (mut written, mut expected) = (Vec::new(), String::new());
        for _ in 0..2 {
            for e in index.entries() {
                for found in index.match_text(&e.signature) {
                    writer.write(&found, &mut written).unwrap();
                    expected.push_str(&format!("{}\n", found.to_json(lang)));
                }
            }
        }
        assert!(expected.lines().count() > 2 * index.entries().len());
        assert_eq!(String::from_utf8(written).unwrap(), expected, "{lang:?}");
    }
}

/// Every entry of this repository's `data/`.
fn real_entries() -> Vec<Entry> {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/signatures");
    walk(&data)
        .iter()
        .map(|item| {
            let value: Value = serde_json::from_slice(&std::fs::read(item).unwrap()).unwrap();
            Entry::from_value(value).unwrap()
        })
        .collect()
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(items) = std::fs::read_dir(dir) else {
        return out;
    };
    for item in items.flatten() {
        let p = item.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
    out.sort();
    out
}

fn check_own_first(entries: Vec<Entry>) {
    let index = Index::new(entries).unwrap();
    for e in index.entries() {
        for text in std::iter::once(&e.signature).chain(&e.aliases) {
            let found = index.match_text(text);
            assert_eq!(
                found.first().map(|f| f.entry.id.as_str()),
                Some(e.id.as_str()),
                "{text:?} → {:?}",
                found.iter().map(|f| &f.entry.id).collect::<Vec<_>>()
            );
        }
    }
}

/// Entries in the styles real ones use: a literal message, a message with numbers and
/// names as wildcards, case-insensitive, anchored, alternations, Chinese, and generic
/// catch-alls that the specific ones must outrank.
fn generated_corpus(n: usize) -> Vec<Entry> {
    let words = [
        "memory", "launch", "device", "stream", "kernel", "context", "handle", "graph", "event",
        "driver", "module", "symbol",
    ];
    let verbs = [
        "failed",
        "timed out",
        "was lost",
        "is invalid",
        "is busy",
        "overflowed",
        "mismatched",
        "not found",
    ];
    let mut out = vec![
        Entry::from_value(entry(
            "gen/any-cuda-error",
            "CUDA error: unknown",
            "CUDA error: .*",
            &[],
        ))
        .unwrap(),
        Entry::from_value(entry(
            "gen/any-runtime-error",
            "RuntimeError: unknown",
            r"RuntimeError: \w+",
            &[],
        ))
        .unwrap(),
    ];
    for i in 0..n {
        let w = words[i % words.len()];
        let v = verbs[(i / words.len()) % verbs.len()];
        let id = format!("gen/e{i:04}");
        let (signature, regex, aliases): (String, String, Vec<String>) = match i % 6 {
            0 => (
                format!("RuntimeError: CUDA error: {w} {v} (code {i})"),
                format!(r"CUDA error: {w} {v} \(code {i}\)"),
                vec![],
            ),
            1 => (
                format!("CUDA error: {w} {v} at op{i}.cu:{}", i * 7),
                format!(r"{w} {v} at op{i}\.cu:\d+"),
                vec![format!("{w}-{v}-{i}")],
            ),
            2 => (
                format!("NCCL WARN {} {v} on channel {i}", w.to_uppercase()),
                format!(r"(?i)nccl warn {w} {v} on channel {i}\b"),
                vec![],
            ),
            3 => (
                format!("cuda{w}{i} {v}"),
                format!(r"^cuda{w}{i} {v}$"),
                vec![],
            ),
            4 => (
                format!("error {i}: {w} {v}"),
                format!(r"error {i}: (?:{w}|{w}s) (?:{v})"),
                vec![],
            ),
            _ => (
                format!("CUDA 错误 {i}：{w} 失败"),
                format!(r"CUDA 错误 {i}：{w} 失败"),
                vec![],
            ),
        };
        let aliases: Vec<&str> = aliases.iter().map(String::as_str).collect();
        out.push(Entry::from_value(entry(&id, &signature, &regex, &aliases)).unwrap());
    }
    out
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(48))]

    /// However the input is cut by reads (small reads make many chunks) and however many
    /// threads search it, a scan reports exactly what `match_text` finds on the whole
    /// text, in the same order, with the same line count.
    #[test]
    fn scanning_in_pieces_on_threads_equals_matching_the_whole(
        lines in proptest::collection::vec(0usize..6, 0..400),
        step in 1usize..5000,
        threads in 1usize..5,
        last_newline in proptest::bool::ANY,
    ) {
        const LINES: [&str; 6] = [
            "step 12 loss 0.5",
            "RuntimeError: CUDA error: an illegal memory access was encountered",
            "[rank3] Watchdog caught collective operation timeout",
            "cudaErrorIllegalAddress and CUDA error: again",
            "",
            "CUDA error: out of memory; CUDA error: twice on one line",
        ];
        let mut log = lines.iter().map(|&i| LINES[i]).collect::<Vec<_>>().join("\n");
        if last_newline && !log.is_empty() {
            log.push('\n');
        }
        let index = sample_index();
        let whole: Vec<(u64, String, u64, usize)> = index
            .match_text(&log)
            .iter()
            .map(|f| (f.line, f.entry.id.clone(), f.span.start, f.column))
            .collect();
        let mut pieces = Vec::new();
        let stats = index
            .scan_with_threads(Trickle(log.as_bytes(), step), threads, |f| {
                pieces.push((f.line, f.entry.id.clone(), f.span.start, f.column))
            })
            .unwrap();
        proptest::prop_assert_eq!(&pieces, &whole);
        proptest::prop_assert_eq!(stats.lines, log.lines().count() as u64);
        proptest::prop_assert_eq!(stats.bytes, log.len() as u64);
        let mut in_memory = Vec::new();
        let stats = index.scan_bytes(log.as_bytes(), threads, |f| {
            in_memory.push((f.line, f.entry.id.clone(), f.span.start, f.column))
        });
        proptest::prop_assert_eq!(&in_memory, &whole);
        proptest::prop_assert_eq!(stats.lines, log.lines().count() as u64);
        proptest::prop_assert_eq!(stats.bytes, log.len() as u64);
    }
}

/// `scan_file` maps a regular file (handing searched pages back every 16 MiB) and reads
/// anything else: either way the answers are those of the same bytes streamed, and the
/// progress rises to the file's size.
#[test]
fn a_file_is_scanned_as_its_bytes_streamed() {
    let index = sample_index();
    let dir = tempfile::tempdir().unwrap();
    let mut log = String::with_capacity(40 << 20);
    let mut i = 0u64;
    while log.len() < 40 << 20 {
        i += 1;
        if i.is_multiple_of(50_021) {
            log.push_str("CUDA error: an illegal memory access was encountered\n");
        } else {
            log.push_str(&format!(
                "step {i}: loss 0.{:04} lr 3e-4 tokens/s 12345\n",
                i % 10_000
            ));
        }
    }
    log.push_str("cudaErrorIllegalAddress");
    let path = dir.path().join("train.log");
    std::fs::write(&path, &log).unwrap();
    let key = |f: errata_consumer::Found<'_>| (f.line, f.entry.id.clone(), f.span.start, f.column);
    let mut streamed = Vec::new();
    let expected = index
        .scan_with_threads(log.as_bytes(), 2, |f| streamed.push(key(f)))
        .unwrap();
    assert!(streamed.len() > 10, "{}", streamed.len());
    for threads in [1, 2] {
        let file = std::fs::File::open(&path).unwrap();
        let (mut got, mut progress) = (Vec::new(), Vec::new());
        let stats = index
            .scan_file(&file, threads, |n| progress.push(n), |f| got.push(key(f)))
            .unwrap();
        assert_eq!(got, streamed, "{threads} threads");
        assert_eq!(stats, expected);
        assert_eq!(progress.last(), Some(&(log.len() as u64)));
    }
    // Not a regular file, and an empty one: read, not mapped.
    let nothing = std::fs::File::open("/dev/null").unwrap();
    let stats = index.scan_file(&nothing, 2, |_| {}, |_| {}).unwrap();
    assert_eq!(stats, errata_consumer::ScanStats::default());
    let empty = dir.path().join("empty.log");
    std::fs::write(&empty, "").unwrap();
    let stats = index
        .scan_file(&std::fs::File::open(&empty).unwrap(), 2, |_| {}, |_| {})
        .unwrap();
    assert_eq!(stats, errata_consumer::ScanStats::default());
}
