//! Writing `errata-<version>.tar.gz`, `SHA256SUMS` and `CHANGELOG.md`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use errata_consumer::{Counts, FORMAT_VERSION, FileRecord, MANIFEST, Manifest};
use errata_load::KnowledgeBase;
use serde_json::Value;

use crate::diff::{Diff, Snapshot};
use crate::sqlite::{self, ArticleRow};
use crate::version::{INITIAL, Version};
use crate::{BundleOptions, CHANGELOG, Error, SHA256SUMS};

/// The file name of the bundle of `version`.
pub fn bundle_file_name(version: Version) -> String {
    format!("errata-{version}.tar.gz")
}

/// What [`write_bundle`] wrote.
#[derive(Debug, Clone)]
pub struct Written {
    /// The bundle file.
    pub path: PathBuf,
    /// Its manifest.
    pub manifest: Manifest,
    /// The diff against `--previous`, when one was given.
    pub diff: Option<Diff>,
}

/// Writes the bundle of `kb` into `opts.out_dir` and returns its path.
///
/// Only entries that parse as entries are included (run `errata check` first: `errata
/// build` refuses to publish data with errors). Everything is built in memory and in
/// temporary files, then renamed into place: a failure never leaves a half-written
/// bundle.
pub fn write_bundle(kb: &KnowledgeBase, opts: &BundleOptions) -> Result<PathBuf, Error> {
    write_bundle_report(kb, opts).map(|w| w.path)
}

/// [`write_bundle`], returning the manifest and the diff too.
pub fn write_bundle_report(kb: &KnowledgeBase, opts: &BundleOptions) -> Result<Written, Error> {
    let mut members: BTreeMap<String, Vec<u8>> = BTreeMap::new();

    // Entries, sorted by id; a duplicated id keeps its first file (the checker reports it).
    let mut entries: BTreeMap<&str, Value> = BTreeMap::new();
    for doc in &kb.entries {
        if let Some(entry) = &doc.entry
            && !entry.id.is_empty()
        {
            entries
                .entry(entry.id.as_str())
                .or_insert_with(|| doc.value());
        }
    }
    let values: Vec<&Value> = entries.values().collect();
    let mut json = serde_json::to_vec(&values).map_err(|e| Error::Invalid(e.to_string()))?;
    json.push(b'\n');
    members.insert(errata_consumer::ENTRIES.into(), json);
    let mut jsonl = Vec::new();
    for v in &values {
        serde_json::to_writer(&mut jsonl, v).map_err(|e| Error::Invalid(e.to_string()))?;
        jsonl.push(b'\n');
    }
    members.insert("entries.jsonl".into(), jsonl);

    // Articles: Markdown as written, and plain text.
    let mut counts = Counts {
        entries: values.len() as u64,
        articles: 0,
        translations: 0,
        runs: 0,
    };
    let mut article_rows = Vec::new();
    for a in &kb.articles {
        let (Some(id), Some(src)) = (&a.path_id, kb.source(&a.path)) else {
            continue;
        };
        let lang = a.lang.as_deref().unwrap_or("en");
        let stem = match &a.lang {
            Some(l) => format!("articles/{id}.{l}"),
            None => format!("articles/{id}"),
        };
        if a.lang.is_some() {
            counts.translations += 1;
        } else {
            counts.articles += 1;
        }
        let body = src.text.get(a.body_range.clone()).unwrap_or_default();
        let text = crate::plaintext::markdown_to_text(body);
        let title = a
            .front
            .as_ref()
            .map(|f| f.title.clone())
            .unwrap_or_default();
        members.insert(format!("{stem}.md"), src.text.as_bytes().to_vec());
        members.insert(format!("{stem}.txt"), text.clone().into_bytes());
        article_rows.push((
            format!("{stem}.md"),
            id.clone(),
            lang.to_string(),
            title,
            src.text.clone(),
            text,
        ));
    }

    // Run records, as they are in `<data>/runs/`.
    let runs_dir = kb.root.join("runs");
    if runs_dir.is_dir() {
        for item in walkdir::WalkDir::new(&runs_dir).sort_by_file_name() {
            let item = item.map_err(|e| Error::Invalid(format!("{}: {e}", runs_dir.display())))?;
            if !item.file_type().is_file() {
                continue;
            }
            let rel = member_path(item.path().strip_prefix(&runs_dir).unwrap_or(item.path()))?;
            let bytes = std::fs::read(item.path()).map_err(|e| Error::io(item.path(), e))?;
            if rel.ends_with(".json") {
                counts.runs += 1;
            }
            members.insert(format!("runs/{rel}"), bytes);
        }
    }

    // The JSON Schemas, and the entry schema's version.
    let mut schema_version = None;
    let schemas =
        std::fs::read_dir(&opts.schema_dir).map_err(|e| Error::io(&opts.schema_dir, e))?;
    for item in schemas {
        let item = item.map_err(|e| Error::io(&opts.schema_dir, e))?;
        let name = item.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".json") {
            continue;
        }
        let bytes = std::fs::read(item.path()).map_err(|e| Error::io(&item.path(), e))?;
        if name == "entry.schema.json" {
            let v: Value = serde_json::from_slice(&bytes)
                .map_err(|e| Error::Invalid(format!("{}: {e}", item.path().display())))?;
            schema_version = v
                .get("x-schema-version")
                .and_then(Value::as_str)
                .map(str::to_string);
        }
        members.insert(format!("schema/{name}"), bytes);
    }
    let schema_version = schema_version.ok_or_else(|| {
        Error::Invalid(format!(
            "{}: no entry.schema.json with an \"x-schema-version\"",
            opts.schema_dir.display()
        ))
    })?;
    schema_version
        .parse::<Version>()
        .map_err(|e| Error::Invalid(format!("entry schema x-schema-version: {e}")))?;

    // The version: given, or the previous one bumped by the diff, or the first one.
    let epoch = opts.epoch()?;
    let date = civil_date(epoch);
    let new_snapshot = Snapshot {
        version: None,
        format_version: FORMAT_VERSION,
        schema_version: schema_version.clone(),
        entries: entries
            .iter()
            .map(|(id, v)| (id.to_string(), (*v).clone()))
            .collect(),
        articles: members
            .iter()
            .filter(|(p, _)| p.starts_with("articles/") && p.ends_with(".md"))
            .map(|(p, b)| (p.clone(), errata_consumer::archive::sha256_hex(b)))
            .collect(),
        changelog: None,
    };
    let (version, diff, changelog) = match &opts.previous {
        Some(prev_path) => {
            let previous = Snapshot::open(prev_path)?;
            let diff = Diff::between(&previous, &new_snapshot);
            let version = opts.version.unwrap_or_else(|| diff.next_version());
            let mut log = format!("# Changelog\n\n{}", diff.changelog_section(version, &date));
            if let Some(old) = &previous.changelog {
                let older = old
                    .split_once("\n## ")
                    .map(|(_, rest)| format!("## {rest}"))
                    .unwrap_or_default();
                if !older.is_empty() {
                    log.push('\n');
                    log.push_str(&older);
                }
            }
            (version, Some(diff), log)
        }
        None => {
            let version = opts.version.unwrap_or(INITIAL);
            let log = format!(
                "# Changelog\n\n## {version} ({date})\n\nFirst release: {} entries, {} articles, {} translations.\n",
                counts.entries, counts.articles, counts.translations
            );
            (version, None, log)
        }
    };
    members.insert(CHANGELOG.into(), changelog.clone().into_bytes());

    std::fs::create_dir_all(&opts.out_dir).map_err(|e| Error::io(&opts.out_dir, e))?;
    let scratch = tempfile::Builder::new()
        .prefix(".errata-bundle-")
        .tempdir_in(&opts.out_dir)
        .map_err(|e| Error::io(&opts.out_dir, e))?;

    let meta = [
        ("format_version", FORMAT_VERSION.to_string()),
        ("version", version.to_string()),
        ("schema_version", schema_version.clone()),
    ];
    let rows: Vec<ArticleRow<'_>> = article_rows
        .iter()
        .map(|(path, id, lang, title, markdown, text)| ArticleRow {
            path,
            id,
            lang,
            title,
            markdown,
            text,
        })
        .collect();
    let db = sqlite::build(scratch.path(), &meta, &values, &rows)?;
    members.insert("errata.sqlite".into(), db);

    let manifest = Manifest {
        format_version: FORMAT_VERSION,
        name: "errata".into(),
        version: version.to_string(),
        schema_version,
        source_commit: opts.source_commit(&kb.root),
        build_date: format!("{date}T{}Z", civil_time(epoch)),
        counts,
        files: members
            .iter()
            .map(|(path, bytes)| FileRecord {
                path: path.clone(),
                size: bytes.len() as u64,
                sha256: errata_consumer::archive::sha256_hex(bytes),
            })
            .collect(),
    };
    let mut manifest_json =
        serde_json::to_vec_pretty(&manifest).map_err(|e| Error::Invalid(e.to_string()))?;
    manifest_json.push(b'\n');

    // The archive: the manifest first, then every member in path order, with fixed
    // metadata so that the same input gives the same bytes.
    let name = bundle_file_name(version);
    let tmp_bundle = scratch.path().join(&name);
    {
        let file = std::fs::File::create(&tmp_bundle).map_err(|e| Error::io(&tmp_bundle, e))?;
        let gz = flate2::GzBuilder::new().mtime(0).write(
            std::io::BufWriter::new(file),
            flate2::Compression::default(),
        );
        let mut tar = tar::Builder::new(gz);
        let io = |e| Error::io(&tmp_bundle, e);
        append(&mut tar, MANIFEST, &manifest_json, epoch).map_err(io)?;
        for (path, bytes) in &members {
            append(&mut tar, path, bytes, epoch).map_err(io)?;
        }
        let gz = tar.into_inner().map_err(io)?;
        let mut buf = gz.finish().map_err(io)?;
        buf.flush().map_err(io)?;
        buf.into_inner()
            .map_err(|e| io(e.into_error()))?
            .sync_all()
            .map_err(io)?;
    }
    let bundle_bytes_hash = {
        let bytes = std::fs::read(&tmp_bundle).map_err(|e| Error::io(&tmp_bundle, e))?;
        errata_consumer::archive::sha256_hex(&bytes)
    };
    let final_path = opts.out_dir.join(&name);
    std::fs::rename(&tmp_bundle, &final_path).map_err(|e| Error::io(&final_path, e))?;

    // SHA256SUMS lists every bundle in the directory that still exists.
    let sums_path = opts.out_dir.join(SHA256SUMS);
    let mut sums: BTreeMap<String, String> = match std::fs::read_to_string(&sums_path) {
        Ok(text) => parse_sums(&text)
            .into_iter()
            .filter(|(f, _)| opts.out_dir.join(f).is_file())
            .collect(),
        Err(_) => BTreeMap::new(),
    };
    sums.insert(name, bundle_bytes_hash);
    let text: String = sums.iter().map(|(f, h)| format!("{h}  {f}\n")).collect();
    write_atomic(scratch.path(), &sums_path, text.as_bytes())?;
    write_atomic(
        scratch.path(),
        &opts.out_dir.join(CHANGELOG),
        changelog.as_bytes(),
    )?;
    Ok(Written {
        path: final_path,
        manifest,
        diff,
    })
}

fn append<W: Write>(
    tar: &mut tar::Builder<W>,
    path: &str,
    bytes: &[u8],
    epoch: u64,
) -> std::io::Result<()> {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(bytes.len() as u64);
    header.set_mode(0o644);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(epoch);
    tar.append_data(&mut header, path, bytes)
}

fn write_atomic(scratch: &Path, dest: &Path, bytes: &[u8]) -> Result<(), Error> {
    let tmp = scratch.join(dest.file_name().unwrap_or_default());
    std::fs::write(&tmp, bytes).map_err(|e| Error::io(&tmp, e))?;
    std::fs::rename(&tmp, dest).map_err(|e| Error::io(dest, e))
}

/// `sha256sum` format: `<hex>  <file>` (or `<hex> *<file>`) per line.
pub(crate) fn parse_sums(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|line| {
            let (hash, file) = line.split_once(' ')?;
            let file = file.trim_start_matches([' ', '*']);
            (hash.len() == 64 && !file.is_empty())
                .then(|| (file.to_string(), hash.to_ascii_lowercase()))
        })
        .collect()
}

fn member_path(rel: &Path) -> Result<String, Error> {
    let parts: Option<Vec<&str>> = rel.iter().map(|p| p.to_str()).collect();
    parts
        .map(|p| p.join("/"))
        .ok_or_else(|| Error::Invalid(format!("{}: file name is not UTF-8", rel.display())))
}

/// `YYYY-MM-DD` of a Unix time (proleptic Gregorian, UTC).
pub(crate) fn civil_date(epoch: u64) -> String {
    let days = (epoch / 86_400) as i64;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

fn civil_time(epoch: u64) -> String {
    let s = epoch % 86_400;
    format!("{:02}:{:02}:{:02}", s / 3_600, s / 60 % 60, s % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(951_782_400), "2000-02-29");
        assert_eq!(civil_date(1_767_225_599), "2025-12-31");
        assert_eq!(civil_time(1_767_225_599), "23:59:59");
    }

    #[test]
    fn sums_format() {
        let h = "a".repeat(64);
        assert_eq!(
            parse_sums(&format!("{h}  errata-1.0.0.tar.gz\n{h} *b.tar.gz\njunk\n")).len(),
            2
        );
    }
}
