//! Writing `errata-<version>.tar.gz`, `SHA256SUMS` and `CHANGELOG.md`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use errata_consumer::{Counts, FORMAT_VERSION, FileRecord, MANIFEST, Manifest};
use errata_load::KnowledgeBase;
use errata_model::Entry;
use serde_json::Value;

use rayon::prelude::*;

use crate::diff::{Diff, Snapshot};
use crate::gz;
use crate::sqlite::{self, ArticleRow, EntryRow};
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

/// An article, ready for its members and its database row.
struct Article {
    /// `articles/<id>[.<lang>]`: the members are `<stem>.md` and `<stem>.txt`.
    stem: String,
    id: String,
    lang: String,
    translation: bool,
    title: String,
    markdown: String,
    text: String,
}

/// The database member: the archive holds members in path order, so the ones before it
/// can be compressed while it is being built.
const DATABASE: &str = "errata.sqlite";

/// [`write_bundle`], returning the manifest and the diff too.
///
/// The work: the entries are parsed and serialised in parallel; then the SQLite database
/// is built on one thread while the members that precede it in the archive are hashed
/// and compressed on the others (gzip in fixed pieces, in parallel); then the database
/// and the members after it; the manifest, first in the archive but known last, is
/// compressed at the end and the pieces are assembled in archive order.
pub fn write_bundle_report(kb: &KnowledgeBase, opts: &BundleOptions) -> Result<Written, Error> {
    let epoch = opts.epoch()?;
    // Asking git takes a few milliseconds of waiting on other processes: do it meanwhile.
    let source_commit = std::thread::scope(|scope| {
        let commit = scope.spawn(|| opts.source_commit(&kb.root));
        let content = collect(kb, opts, epoch);
        commit
            .join()
            .map_err(|_| Error::Invalid("asking git for the source commit panicked".into()))
            .map(|c| (c, content))
    });
    let (source_commit, content) = source_commit?;
    let Content {
        schema_version,
        entries,
        json,
        mut members,
        articles,
        counts,
        version,
        diff,
        changelog,
        license,
    } = content?;

    let meta = [
        ("format_version", FORMAT_VERSION.to_string()),
        ("version", version.to_string()),
        ("schema_version", schema_version.clone()),
    ];
    let entry_rows: Vec<EntryRow<'_>> = entries
        .par_iter()
        .zip(&json)
        .map(|(entry, json)| EntryRow::new(entry, json))
        .collect();
    let paths: Vec<String> = articles.iter().map(|a| format!("{}.md", a.stem)).collect();
    let article_rows: Vec<ArticleRow<'_>> = articles
        .iter()
        .zip(&paths)
        .map(|(a, path)| ArticleRow {
            path,
            id: &a.id,
            lang: &a.lang,
            title: &a.title,
            markdown: &a.markdown,
            text: &a.text,
        })
        .collect();

    // Members before the database: hash and compress them while it is built.
    let after = members.split_off(DATABASE);
    let before = members;
    let (db, before_done) = rayon::join(
        || sqlite::build(&meta, &entry_rows, &article_rows),
        || tar_part(&before, false, epoch),
    );
    let (before_records, before_gz) = before_done?;
    let mut rest = after;
    rest.insert(DATABASE.into(), db?);
    let (after_records, after_gz) = tar_part(&rest, true, epoch)?;

    let mut files = before_records;
    files.extend(after_records);
    let manifest = Manifest {
        format_version: FORMAT_VERSION,
        name: "errata".into(),
        version: version.to_string(),
        schema_version,
        source_commit,
        build_date: format!("{}T{}Z", civil_date(epoch), civil_time(epoch)),
        counts,
        license,
        files,
    };
    let mut manifest_json =
        serde_json::to_vec_pretty(&manifest).map_err(|e| Error::Invalid(e.to_string()))?;
    manifest_json.push(b'\n');
    let manifest_header = header(MANIFEST, manifest_json.len(), epoch)?;
    let padding = &ZEROS[..(512 - manifest_json.len() % 512) % 512];
    let manifest_gz = gz::deflate(&[&manifest_header, &manifest_json, padding], false)
        .map_err(|e| Error::Invalid(format!("compressing {MANIFEST}: {e}")))?;
    let bundle = gz::assemble(&[&manifest_gz, &before_gz, &after_gz]);

    // Into place: the bundle, SHA256SUMS and CHANGELOG.md go into a copy of the bundle
    // directory (earlier versions kept as links), swapped in whole. A reader never finds
    // a bundle beside the SHA256SUMS of another run, even if this process dies between
    // two files.
    let outdir = |e: errata_outdir::Error| {
        let path = e.path().to_path_buf();
        Error::io(&path, e.into_io())
    };
    let staging = errata_outdir::Staging::begin_keeping(&opts.out_dir).map_err(outdir)?;
    let name = bundle_file_name(version);
    let final_path = opts.out_dir.join(&name);
    staging.write_durable(&name, &bundle).map_err(outdir)?;
    // SHA256SUMS lists exactly the bundle files this run wrote: it is the same bytes for
    // the same input whatever else the directory holds, and never vouches for a file
    // this run did not produce.
    let sums = format!(
        "{}  {name}\n",
        errata_consumer::archive::sha256_hex(&bundle)
    );
    staging
        .write_durable(SHA256SUMS, sums.as_bytes())
        .map_err(outdir)?;
    staging
        .write_durable(CHANGELOG, changelog.as_bytes())
        .map_err(outdir)?;
    staging.commit().map_err(outdir)?.remove();
    Ok(Written {
        path: final_path,
        manifest,
        diff,
    })
}

/// Everything but the database, the manifest and the archive.
struct Content<'a> {
    /// `x-schema-version` of the bundled entry schema.
    schema_version: String,
    /// The entries in id order (a duplicated id keeps its first file).
    entries: Vec<&'a Entry>,
    /// Each entry's JSON on one line, in the same order.
    json: Vec<String>,
    /// Every member except the manifest and the database, by path.
    members: BTreeMap<String, Vec<u8>>,
    articles: Vec<Article>,
    counts: Counts,
    version: Version,
    diff: Option<Diff>,
    changelog: String,
    /// The SPDX expression of `<data>/LICENSE`, when it states one.
    license: Option<String>,
}

fn collect<'a>(
    kb: &'a KnowledgeBase,
    opts: &BundleOptions,
    epoch: u64,
) -> Result<Content<'a>, Error> {
    let mut members: BTreeMap<String, Vec<u8>> = BTreeMap::new();

    // Entries, sorted by id; a duplicated id keeps its first file (the checker reports it).
    let mut docs: BTreeMap<&str, (&errata_load::EntryDoc, &Entry)> = BTreeMap::new();
    for doc in &kb.entries {
        if let Some(entry) = &doc.entry
            && !entry.id.is_empty()
        {
            docs.entry(entry.id.as_str()).or_insert((doc, entry));
        }
    }
    let (docs, entries): (Vec<&errata_load::EntryDoc>, Vec<&Entry>) = docs.into_values().unzip();
    // Outcome records are added to the counts of their items (the entry files are not
    // rewritten): only entries with records are parsed into a tree for that.
    let outcomes = errata_load::outcome_index(&kb.outcomes);
    // Compact JSON straight from each file's text: no tree per entry.
    let json: Vec<String> = docs
        .par_iter()
        .map(|doc| {
            let id = doc.entry.as_ref().map_or("", |e| e.id.as_str());
            if outcomes.has_entry(id) {
                let mut value = doc.value();
                outcomes.fold_json(&mut value);
                serde_json::to_string(&value)
                    .map_err(|e| Error::Invalid(format!("{}: {e}", doc.path.display())))
            } else {
                crate::json::compact(doc.text())
                    .map_err(|e| Error::Invalid(format!("{}: {e}", doc.path.display())))
            }
        })
        .collect::<Result<_, _>>()?;
    // `entries.json` is one array with one entry per line ("[", the entries, each but the
    // last followed by a comma, then "]", each on a line of its own): a reader finds the
    // entries by their newlines (compact JSON has none inside a value) and types them on
    // every core, rather than scanning the whole array once more to split it
    // (`errata_consumer::parse_entries`).
    let total: usize = json.iter().map(|j| j.len() + 2).sum();
    let mut array = Vec::with_capacity(total + 4);
    let mut lines = Vec::with_capacity(total);
    array.push(b'[');
    for (i, j) in json.iter().enumerate() {
        array.extend_from_slice(if i > 0 { b",\n" } else { b"\n" });
        array.extend_from_slice(j.as_bytes());
        lines.extend_from_slice(j.as_bytes());
        lines.push(b'\n');
    }
    array.extend_from_slice(if json.is_empty() { b"]\n" } else { b"\n]\n" });
    members.insert(errata_consumer::ENTRIES.into(), array);
    // The entries without their advice, so that a reader can start matching before it
    // has read them whole.
    members.insert(
        errata_consumer::entries_head::ENTRIES_HEAD.into(),
        errata_consumer::entries_head::build(json.iter().map(String::as_str))
            .map_err(|e| Error::Invalid(format!("an entry's head: {e}")))?,
    );
    members.insert("entries.jsonl".into(), lines);
    // What the matcher learns from each regex, so that readers need not parse them.
    members.insert(
        errata_consumer::matcher_index::ENTRIES_INDEX.into(),
        errata_consumer::matcher_index::build(entries.iter().map(|e| e.regex.as_str())),
    );

    // Articles: Markdown as written, and plain text (the first of two with one path).
    let articles: Vec<Article> = kb
        .articles
        .par_iter()
        .filter_map(|a| {
            let (Some(id), Some(src)) = (&a.path_id, kb.source(&a.path)) else {
                return None;
            };
            let stem = match &a.lang {
                Some(l) => format!("articles/{id}.{l}"),
                None => format!("articles/{id}"),
            };
            let body = src.text.get(a.body_range.clone()).unwrap_or_default();
            Some(Article {
                stem,
                id: id.clone(),
                lang: a.lang.clone().unwrap_or_else(|| "en".into()),
                translation: a.lang.is_some(),
                title: a
                    .front
                    .as_ref()
                    .map(|f| f.title.clone())
                    .unwrap_or_default(),
                markdown: src.text.to_string(),
                text: crate::plaintext::markdown_to_text(body),
            })
        })
        .collect();
    let mut seen = std::collections::BTreeSet::new();
    let articles: Vec<Article> = articles
        .into_iter()
        .filter(|a| seen.insert(a.stem.clone()))
        .collect();
    let mut counts = Counts {
        entries: json.len() as u64,
        articles: 0,
        translations: 0,
        runs: 0,
    };
    for a in &articles {
        if a.translation {
            counts.translations += 1;
        } else {
            counts.articles += 1;
        }
        members.insert(format!("{}.md", a.stem), a.markdown.as_bytes().to_vec());
        members.insert(format!("{}.txt", a.stem), a.text.as_bytes().to_vec());
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
            let bytes = errata_load::read_bounded(item.path())
                .map_err(|e| Error::io(item.path(), e))?
                .into_bytes();
            if rel.ends_with(".json") {
                counts.runs += 1;
            }
            members.insert(format!("runs/{rel}"), bytes);
        }
    }

    // The JSON Schemas, and the entry schema's version.
    let schemas = crate::schemas::load(&opts.schema_dir)?;
    let schema_version = crate::schemas::entry_schema_version(&schemas, &opts.schema_dir)?;
    for (name, bytes) in schemas {
        members.insert(format!("schema/{name}"), bytes);
    }

    // The version: given, or the previous one bumped by the diff, or the first one.
    let date = civil_date(epoch);
    let (version, diff, changelog) = match &opts.previous {
        Some(prev_path) => {
            let previous = Snapshot::open(prev_path)?;
            // Only a diff needs the entries as trees.
            let values: Vec<Value> = json
                .par_iter()
                .map(|j| serde_json::from_str(j).map_err(|e| Error::Invalid(e.to_string())))
                .collect::<Result<_, _>>()?;
            let snapshot = Snapshot {
                version: None,
                format_version: FORMAT_VERSION,
                schema_version: schema_version.clone(),
                entries: entries.iter().map(|e| e.id.clone()).zip(values).collect(),
                articles: members
                    .iter()
                    .filter(|(p, _)| p.starts_with("articles/") && p.ends_with(".md"))
                    .map(|(p, b)| (p.clone(), errata_consumer::archive::sha256_hex(b)))
                    .collect(),
                changelog: None,
            };
            let diff = Diff::between(&previous, &snapshot);
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
    // The knowledge base's licence travels with it: downstream tools consume the data,
    // not the repository.
    let mut license = None;
    if let Ok(licence) = errata_load::read_bounded(&kb.root.join(crate::LICENSE)) {
        license = spdx_identifier(&licence);
        members.insert(crate::LICENSE.into(), licence.into_bytes());
    }
    Ok(Content {
        schema_version,
        entries,
        json,
        members,
        articles,
        counts,
        version,
        diff,
        changelog,
        license,
    })
}

/// The expression on a licence text's `SPDX-License-Identifier:` line (the REUSE and
/// Linux kernel convention), when it has one made of SPDX's characters.
fn spdx_identifier(text: &str) -> Option<String> {
    let expr = text
        .lines()
        .find_map(|l| l.trim().strip_prefix("SPDX-License-Identifier:"))?
        .trim();
    let spdx_chars = |c: char| c.is_ascii_alphanumeric() || " .-+():".contains(c);
    (!expr.is_empty() && expr.len() <= 200 && expr.chars().all(spdx_chars))
        .then(|| expr.to_string())
}

/// Zeros: tar's padding and its end-of-archive blocks.
static ZEROS: [u8; 1024] = [0; 1024];

/// The tar stream of `members` (in path order; `last`: with the end-of-archive blocks)
/// deflated, and their manifest records.
fn tar_part(
    members: &BTreeMap<String, Vec<u8>>,
    last: bool,
    epoch: u64,
) -> Result<(Vec<FileRecord>, gz::Deflated), Error> {
    let headers: Vec<Vec<u8>> = members
        .iter()
        .map(|(path, bytes)| header(path, bytes.len(), epoch))
        .collect::<Result<_, _>>()?;
    let mut stream: Vec<&[u8]> = Vec::with_capacity(members.len() * 3 + 1);
    for (header, bytes) in headers.iter().zip(members.values()) {
        stream.push(header);
        stream.push(bytes);
        stream.push(&ZEROS[..(512 - bytes.len() % 512) % 512]);
    }
    if last {
        stream.push(&ZEROS);
    }
    let (records, deflated) = rayon::join(
        || {
            members
                .par_iter()
                .map(|(path, bytes)| FileRecord {
                    path: path.clone(),
                    size: bytes.len() as u64,
                    sha256: errata_consumer::archive::sha256_hex(bytes),
                })
                .collect::<Vec<_>>()
        },
        || gz::deflate(&stream, last),
    );
    let deflated = deflated.map_err(|e| Error::Invalid(format!("compressing the archive: {e}")))?;
    Ok((records, deflated))
}

/// The tar header block(s) of a member of `size` bytes at `path`, with fixed owner, mode
/// and time, as `tar::Builder` writes them (a GNU long-name block first for long paths).
fn header(path: &str, size: usize, epoch: u64) -> Result<Vec<u8>, Error> {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(tar::EntryType::Regular);
    header.set_size(size as u64);
    header.set_mode(0o644);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(epoch);
    // With no data to copy, the builder writes the header blocks alone; `into_inner`
    // then ends the archive with two zero blocks, which are not wanted here.
    let mut builder = tar::Builder::new(Vec::with_capacity(2048));
    let bad = |e: std::io::Error| Error::Invalid(format!("member `{path}`: {e}"));
    builder
        .append_data(&mut header, path, std::io::empty())
        .map_err(bad)?;
    let mut bytes = builder.into_inner().map_err(bad)?;
    bytes.truncate(bytes.len().saturating_sub(ZEROS.len()));
    Ok(bytes)
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
    fn spdx_lines() {
        let id = |t: &str| spdx_identifier(t);
        assert_eq!(
            id("SPDX-License-Identifier: CC-BY-4.0\n\ntext"),
            Some("CC-BY-4.0".into())
        );
        assert_eq!(
            id("text\n  SPDX-License-Identifier:  MIT OR Apache-2.0 \n"),
            Some("MIT OR Apache-2.0".into())
        );
        assert_eq!(id("All rights reserved."), None);
        assert_eq!(id("SPDX-License-Identifier:\n"), None);
        assert_eq!(id("SPDX-License-Identifier: <script>\n"), None);
    }

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
