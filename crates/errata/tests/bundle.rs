//! `errata bundle` and the bundle of `errata build` end to end, as a real process: the
//! bundle does not depend on the working directory (the JSON Schemas are built into the
//! binary), `--schema DIR` still overrides them, and `verify` accepts what was written.

use std::path::{Path, PathBuf};

mod common;
use common::{repo, s};

/// Runs errata in `cwd`; returns the exit code and stdout + stderr.
fn errata(cwd: &Path, args: &[&str]) -> (i32, String) {
    let run = common::errata(cwd, args);
    (run.code, run.all())
}

/// `errata bundle --data DATA --out OUT EXTRA…` in `cwd`.
fn write_bundle(cwd: &Path, data: &Path, out: &Path, extra: &[&str]) -> (i32, String) {
    let mut args = vec!["bundle", "--data", s(data), "--out", s(out)];
    args.extend_from_slice(extra);
    errata(cwd, &args)
}

/// `errata bundle` of `data` into `out`, run from `cwd`, which must succeed: the bundle.
fn bundled(cwd: &Path, data: &Path, out: &Path) -> PathBuf {
    let (code, log) = write_bundle(cwd, data, out, &[]);
    assert_eq!(code, 0, "{log}");
    out.join("errata-1.0.0.tar.gz")
}

/// A copy of `data/` in `dir/data`, and an empty working directory `dir/elsewhere`
/// (no `schema/`, no `errata.toml`).
fn scratch() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = common::data_copy();
    let data = dir.path().join("data");
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    (dir, data, elsewhere)
}

#[test]
fn bundle_a_data_directory_from_another_working_directory() {
    let (dir, data, elsewhere) = scratch();
    let bundle = bundled(&elsewhere, &data, &dir.path().join("out"));
    let (code, log) = errata(&elsewhere, &["bundle", "verify", s(&bundle)]);
    assert_eq!(code, 0, "{log}");

    // The same bundle from inside the data directory, with relative paths.
    let (code, log) = errata(&data, &["bundle", "--data", ".", "--out", "../out2"]);
    assert_eq!(code, 0, "{log}");
    assert_eq!(
        std::fs::read(&bundle).unwrap(),
        std::fs::read(dir.path().join("out2/errata-1.0.0.tar.gz")).unwrap()
    );

    // `--schema DIR` bundles those files instead: the committed ones give the same bytes.
    let out3 = dir.path().join("out3");
    let schema = repo().join("schema");
    let (code, log) = write_bundle(&elsewhere, &data, &out3, &["--schema", s(&schema)]);
    assert_eq!(code, 0, "{log}");
    assert_eq!(
        std::fs::read(&bundle).unwrap(),
        std::fs::read(out3.join("errata-1.0.0.tar.gz")).unwrap()
    );
    // A schema directory that does not exist is a tool failure, naming it.
    let out4 = dir.path().join("out4");
    let (code, log) = write_bundle(&elsewhere, &data, &out4, &["--schema", "no-such-dir"]);
    assert_eq!(code, 2, "{log}");
    assert!(log.contains("no-such-dir"), "{log}");
}

#[test]
fn build_a_data_directory_from_another_working_directory() {
    let (dir, data, elsewhere) = scratch();
    let dist = dir.path().join("dist");
    let (code, log) = errata(&elsewhere, &["build", s(&data), "--out", s(&dist)]);
    assert_eq!(code, 0, "{log}");
    let bundle = dist.join("bundle/errata-1.0.0.tar.gz");
    assert!(bundle.is_file(), "{log}");
    let (code, log) = errata(&elsewhere, &["bundle", "verify", s(&bundle)]);
    assert_eq!(code, 0, "{log}");
    let sums = std::fs::read_to_string(dist.join("bundle/SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), 1, "{sums}");
}

#[test]
fn verify_a_bundle_away_from_its_checksum_file() {
    let (dir, data, elsewhere) = scratch();
    let out = dir.path().join("out");
    let bundle = bundled(&elsewhere, &data, &out);
    // Downloaded on its own: no SHA256SUMS beside it. Verification fails and says how
    // to name the checksum file; with --sums it passes.
    let alone = elsewhere.join("errata-1.0.0.tar.gz");
    std::fs::copy(&bundle, &alone).unwrap();
    let (code, log) = errata(&elsewhere, &["bundle", "verify", s(&alone)]);
    assert_eq!(code, 1, "{log}");
    assert!(
        log.contains("SHA256SUMS") && log.contains("--sums"),
        "{log}"
    );
    let sums = out.join("SHA256SUMS");
    let (code, log) = errata(
        &elsewhere,
        &["bundle", "verify", s(&alone), "--sums", s(&sums)],
    );
    assert_eq!(code, 0, "{log}");
    // A checksum file for other bundles does not vouch for this one.
    let other = elsewhere.join("OTHER_SUMS");
    std::fs::write(&other, format!("{}  errata-9.9.9.tar.gz\n", "0".repeat(64))).unwrap();
    let (code, log) = errata(
        &elsewhere,
        &["bundle", "verify", s(&alone), "--sums", s(&other)],
    );
    assert_eq!(code, 1, "{log}");
    assert!(log.contains("has no line for errata-1.0.0.tar.gz"), "{log}");
}

/// The text of member `name` of a gzipped bundle.
fn member_text(bundle: &Path, name: &str) -> Option<String> {
    let file = std::fs::File::open(bundle).unwrap();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    for member in archive.entries().unwrap() {
        let mut member = member.unwrap();
        if member.path().unwrap().to_str() == Some(name) {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut member, &mut text).unwrap();
            return Some(text);
        }
    }
    None
}

/// A bundle's `manifest.json`.
fn manifest_of(bundle: &Path) -> serde_json::Value {
    serde_json::from_str(&member_text(bundle, "manifest.json").expect("a manifest")).expect("JSON")
}

/// The knowledge base's licence travels in the bundle (downstream tools consume the
/// data, not the repository), byte for byte, the manifest names it by its SPDX id, and
/// the site says under which licence.
#[test]
fn the_data_licence_is_in_the_bundle_and_on_the_site() {
    let (dir, data, elsewhere) = scratch();
    let bundle = bundled(&elsewhere, &data, &dir.path().join("out"));
    let expected = std::fs::read_to_string(repo().join("data/LICENSE")).unwrap();
    assert!(expected.contains("CC BY 4.0"));
    assert_eq!(
        member_text(&bundle, "LICENSE").as_deref(),
        Some(expected.as_str())
    );
    let manifest = manifest_of(&bundle);
    assert_eq!(manifest["format_version"], 2);
    assert_eq!(manifest["license"], "CC-BY-4.0", "{manifest}");
    let (code, log) = errata(&elsewhere, &["bundle", "verify", s(&bundle)]);
    assert_eq!(code, 0, "{log}");

    // A licence text without an SPDX line travels as text, and the manifest says null;
    // no LICENSE at all, neither.
    std::fs::write(data.join("LICENSE"), "All rights reserved.\n").unwrap();
    let bundle = bundled(&elsewhere, &data, &dir.path().join("other"));
    let manifest = manifest_of(&bundle);
    assert_eq!(manifest["license"], serde_json::Value::Null, "{manifest}");
    assert_eq!(
        member_text(&bundle, "LICENSE").as_deref(),
        Some("All rights reserved.\n")
    );
    std::fs::remove_file(data.join("LICENSE")).unwrap();
    let bundle = bundled(&elsewhere, &data, &dir.path().join("none"));
    assert_eq!(member_text(&bundle, "LICENSE"), None);
    std::fs::write(data.join("LICENSE"), &expected).unwrap();

    for licence in ["LICENSE-MIT", "LICENSE-APACHE"] {
        assert!(repo().join(licence).is_file(), "{licence}");
    }
    let (code, log) = errata(
        &repo(),
        &["build", s(&data), "--out", s(&dir.path().join("site"))],
    );
    assert_eq!(code, 0, "{log}");
    let home = std::fs::read_to_string(dir.path().join("site/site/index.html")).unwrap();
    assert!(
        home.contains(r#"<a href="https://creativecommons.org/licenses/by/4.0/" rel="license"#),
        "the site names the data licence"
    );
}

/// The bundle at `from`, with one byte of member `name` changed, written to `to` (the
/// archive rebuilt around it, so only that member's hash disagrees with the manifest).
fn with_member_flipped(from: &Path, name: &str, to: &Path) {
    let file = std::fs::File::open(from).unwrap();
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut out = tar::Builder::new(Vec::new());
    for member in archive.entries().unwrap() {
        let mut member = member.unwrap();
        let path = member.path().unwrap().to_str().unwrap().to_string();
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut member, &mut bytes).unwrap();
        if path == name {
            let mid = bytes.len() / 2;
            bytes[mid] ^= 0x01;
        }
        let mut header = member.header().clone();
        out.append_data(&mut header, &path, bytes.as_slice())
            .unwrap();
    }
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &out.into_inner().unwrap()).unwrap();
    std::fs::write(to, gz.finish().unwrap()).unwrap();
}

/// `errata match --bundle` verifies the members its answers come from (the manifest and
/// everything up to `entries.json`) and reads no further; `errata bundle verify` checks
/// them all.
#[test]
fn match_verifies_what_it_reads_and_bundle_verify_checks_the_rest() {
    let (dir, data, elsewhere) = scratch();
    let bundle = bundled(&elsewhere, &data, &dir.path().join("out"));
    let log = dir.path().join("train.log");
    std::fs::write(&log, "RuntimeError: CUDA error: out of memory\n").unwrap();
    let damaged = dir.path().join("damaged.tar.gz");
    let match_damaged = || {
        errata(
            &elsewhere,
            &[
                "match",
                "--format",
                "json",
                "--bundle",
                s(&damaged),
                s(&log),
            ],
        )
    };

    with_member_flipped(&bundle, "errata.sqlite", &damaged);
    let (code, out) = match_damaged();
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("\"id\":\"cuda/out-of-memory\""), "{out}");
    let (code, out) = errata(&elsewhere, &["bundle", "verify", s(&damaged)]);
    assert_ne!(code, 0, "{out}");
    assert!(out.contains("errata.sqlite"), "{out}");

    with_member_flipped(&bundle, "entries.json", &damaged);
    let (code, out) = match_damaged();
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("entries.json") && out.contains("sha256"),
        "{out}"
    );
    assert!(!out.contains("\"id\":"), "{out}");
}
