//! What changed between two versions of the data, and the semver bump it implies.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;

use errata_consumer::archive::Archive;
use serde::Serialize;
use serde_json::Value;

use crate::version::{Bump, Version};
use crate::{CHANGELOG, Error};

/// The comparable content of a bundle: entries by id, article hashes by path, versions.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    /// The bundle's data version (`None` for content not yet versioned).
    pub version: Option<Version>,
    /// The bundle layout version.
    pub format_version: u64,
    /// The entry schema's version.
    pub schema_version: String,
    /// Every entry as JSON, by id.
    pub entries: BTreeMap<String, Value>,
    /// Every article member (`articles/…/*.md`), by path, with its sha256.
    pub articles: BTreeMap<String, String>,
    /// The bundle's `CHANGELOG.md`, when it has one.
    pub changelog: Option<String>,
}

impl Snapshot {
    /// Reads and verifies the bundle at `path`.
    pub fn open(path: &Path) -> Result<Snapshot, Error> {
        let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
        let keep = |p: &str| p == errata_consumer::ENTRIES || p == CHANGELOG;
        let archive = Archive::read(std::io::BufReader::new(file), &keep)
            .map_err(|e| Error::bundle(path, e))?;
        let manifest = archive.manifest().map_err(|e| Error::bundle(path, e))?;
        if let Some(problem) = archive.problems(&manifest).into_iter().next() {
            return Err(Error::bundle(path, problem));
        }
        let entries_bytes = archive.data(errata_consumer::ENTRIES).unwrap_or(b"[]");
        let values: Vec<Value> = serde_json::from_slice(entries_bytes)
            .map_err(|e| Error::bundle(path, errata_consumer::Error::Entries(e.to_string())))?;
        let entries = values
            .into_iter()
            .map(|v| {
                (
                    v.get("id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    v,
                )
            })
            .collect();
        let articles = archive
            .members
            .iter()
            .filter(|(p, _)| p.starts_with("articles/") && p.ends_with(".md"))
            .map(|(p, m)| (p.clone(), m.sha256.clone()))
            .collect();
        let version = manifest.version.parse().ok();
        let changelog = archive
            .data(CHANGELOG)
            .map(|b| String::from_utf8_lossy(b).into_owned());
        Ok(Snapshot {
            version,
            format_version: manifest.format_version,
            schema_version: manifest.schema_version,
            entries,
            articles,
            changelog,
        })
    }
}

/// One changed entry and the top-level fields that differ.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Changed {
    /// The entry id (or article path).
    pub id: String,
    /// Fields added, removed or modified, sorted.
    pub fields: Vec<String>,
}

/// The difference between two snapshots.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diff {
    /// The old data version.
    pub old_version: Option<String>,
    /// The new data version, if the new side has one.
    pub new_version: Option<String>,
    /// Entry ids only in the new data.
    pub added: Vec<String>,
    /// Entry ids only in the old data.
    pub removed: Vec<String>,
    /// Entries in both whose content differs.
    pub changed: Vec<Changed>,
    /// Article paths only in the new data.
    pub articles_added: Vec<String>,
    /// Article paths only in the old data.
    pub articles_removed: Vec<String>,
    /// Articles whose text changed.
    pub articles_changed: Vec<String>,
    /// `(old, new)` entry schema versions, when they differ.
    pub schema_change: Option<(String, String)>,
    /// `(old, new)` bundle format versions, when they differ.
    pub format_change: Option<(u64, u64)>,
    /// The bump these changes imply.
    pub bump: Bump,
    /// Why that bump (the strongest reason).
    pub reason: String,
}

impl Diff {
    /// Compares `old` with `new`.
    ///
    /// The bump: a removed entry or article, a new major entry-schema version, or a new
    /// bundle format is **major** (a consumer may break); an added entry or article or a
    /// new minor schema version is **minor**; any other change of content is **patch**;
    /// nothing at all is **none**.
    pub fn between(old: &Snapshot, new: &Snapshot) -> Diff {
        let old_ids: BTreeSet<&String> = old.entries.keys().collect();
        let new_ids: BTreeSet<&String> = new.entries.keys().collect();
        let added: Vec<String> = new_ids
            .difference(&old_ids)
            .map(|s| s.to_string())
            .collect();
        let removed: Vec<String> = old_ids
            .difference(&new_ids)
            .map(|s| s.to_string())
            .collect();
        let changed: Vec<Changed> = old_ids
            .intersection(&new_ids)
            .filter_map(|id| {
                let fields = changed_fields(&old.entries[*id], &new.entries[*id]);
                (!fields.is_empty()).then(|| Changed {
                    id: id.to_string(),
                    fields,
                })
            })
            .collect();
        let old_arts: BTreeSet<&String> = old.articles.keys().collect();
        let new_arts: BTreeSet<&String> = new.articles.keys().collect();
        let articles_added: Vec<String> = new_arts
            .difference(&old_arts)
            .map(|s| s.to_string())
            .collect();
        let articles_removed: Vec<String> = old_arts
            .difference(&new_arts)
            .map(|s| s.to_string())
            .collect();
        let articles_changed: Vec<String> = old_arts
            .intersection(&new_arts)
            .filter(|p| old.articles[**p] != new.articles[**p])
            .map(|s| s.to_string())
            .collect();
        let schema_change = (old.schema_version != new.schema_version)
            .then(|| (old.schema_version.clone(), new.schema_version.clone()));
        let format_change = (old.format_version != new.format_version)
            .then_some((old.format_version, new.format_version));

        let schema_bump = schema_change.as_ref().map(|(o, n)| {
            match (o.parse::<Version>(), n.parse::<Version>()) {
                (Ok(o), Ok(n)) if o.major == n.major && o.minor == n.minor => Bump::Patch,
                (Ok(o), Ok(n)) if o.major == n.major && n.minor > o.minor => Bump::Minor,
                _ => Bump::Major,
            }
        });
        let (bump, reason) = if format_change.is_some() {
            (Bump::Major, "the bundle format changed".to_string())
        } else if !removed.is_empty() {
            (
                Bump::Major,
                format!("{} entr{} removed", removed.len(), plural(removed.len())),
            )
        } else if schema_bump == Some(Bump::Major) {
            (
                Bump::Major,
                "the entry schema changed incompatibly".to_string(),
            )
        } else if !articles_removed.is_empty() {
            (
                Bump::Major,
                format!("{} article(s) removed", articles_removed.len()),
            )
        } else if !added.is_empty() {
            (
                Bump::Minor,
                format!("{} entr{} added", added.len(), plural(added.len())),
            )
        } else if !articles_added.is_empty() {
            (
                Bump::Minor,
                format!("{} article(s) added", articles_added.len()),
            )
        } else if schema_bump == Some(Bump::Minor) {
            (
                Bump::Minor,
                "the entry schema gained a compatible addition".to_string(),
            )
        } else if !changed.is_empty() {
            (
                Bump::Patch,
                format!("{} entr{} changed", changed.len(), plural(changed.len())),
            )
        } else if !articles_changed.is_empty() || schema_bump.is_some() {
            (Bump::Patch, "content changed".to_string())
        } else {
            (Bump::None, "nothing changed".to_string())
        };
        Diff {
            old_version: old.version.map(|v| v.to_string()),
            new_version: new.version.map(|v| v.to_string()),
            added,
            removed,
            changed,
            articles_added,
            articles_removed,
            articles_changed,
            schema_change,
            format_change,
            bump,
            reason,
        }
    }

    /// The version after `old`'s, by this diff's bump ([`crate::version::INITIAL`] when
    /// `old` has none).
    pub fn next_version(&self) -> Version {
        match self
            .old_version
            .as_deref()
            .and_then(|v| v.parse::<Version>().ok())
        {
            Some(v) => v.bump(self.bump),
            None => crate::version::INITIAL,
        }
    }

    /// The diff as one JSON object (`errata bundle diff --format json`).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// A human summary, as `errata bundle diff` prints it.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} -> {}: {} ({})",
            self.old_version.as_deref().unwrap_or("?"),
            self.new_version.as_deref().unwrap_or("?"),
            self.bump,
            self.reason
        );
        for id in &self.added {
            let _ = writeln!(out, "  + {id}");
        }
        for id in &self.removed {
            let _ = writeln!(out, "  - {id}");
        }
        for c in &self.changed {
            let _ = writeln!(out, "  ~ {} ({})", c.id, c.fields.join(", "));
        }
        for p in &self.articles_added {
            let _ = writeln!(out, "  + {p}");
        }
        for p in &self.articles_removed {
            let _ = writeln!(out, "  - {p}");
        }
        for p in &self.articles_changed {
            let _ = writeln!(out, "  ~ {p}");
        }
        if let Some((o, n)) = &self.schema_change {
            let _ = writeln!(out, "  schema {o} -> {n}");
        }
        if let Some((o, n)) = &self.format_change {
            let _ = writeln!(out, "  format_version {o} -> {n}");
        }
        out
    }

    /// The changelog section for `version` (Markdown, starting with `## `).
    pub fn changelog_section(&self, version: Version, date: &str) -> String {
        let mut out = format!("## {version} ({date})\n\n{}: {}.\n", self.bump, self.reason);
        let mut list = |title: &str, items: Vec<String>| {
            if !items.is_empty() {
                let _ = write!(out, "\n### {title}\n\n");
                for item in items {
                    let _ = writeln!(out, "- {item}");
                }
            }
        };
        list(
            "Added",
            self.added
                .iter()
                .chain(&self.articles_added)
                .map(|i| format!("`{i}`"))
                .collect(),
        );
        list(
            "Removed",
            self.removed
                .iter()
                .chain(&self.articles_removed)
                .map(|i| format!("`{i}`"))
                .collect(),
        );
        list(
            "Changed",
            self.changed
                .iter()
                .map(|c| format!("`{}`: {}", c.id, c.fields.join(", ")))
                .chain(self.articles_changed.iter().map(|p| format!("`{p}`")))
                .collect(),
        );
        if let Some((o, n)) = &self.schema_change {
            list("Schema", vec![format!("entry schema {o} -> {n}")]);
        }
        out
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "y" } else { "ies" }
}

/// Top-level keys whose values differ (present on one side only counts).
fn changed_fields(old: &Value, new: &Value) -> Vec<String> {
    match (old.as_object(), new.as_object()) {
        (Some(o), Some(n)) => {
            let keys: BTreeSet<&String> = o.keys().chain(n.keys()).collect();
            keys.into_iter()
                .filter(|k| o.get(*k) != n.get(*k))
                .map(|k| k.to_string())
                .collect()
        }
        _ if old != new => vec!["(whole entry)".to_string()],
        _ => Vec::new(),
    }
}
