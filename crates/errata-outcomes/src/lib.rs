//! Outcome records: what happened when someone tried a dead end or a workaround.
//!
//! A record names its entry and item (`dead_end:<i>` or `workaround:<i>`), the outcome
//! (`failed` or `worked`), the date, optionally the environment and a public source,
//! and who reported it. Records live in `data/outcomes/<domain>/<slug>.jsonl`, one per
//! line, and are submitted in pull requests; `errata check` validates them
//! (`outcome-invalid`) and the build folds them into the counted basis of their item
//! ([`fold`]), so a page and the bundle show "worked in 5 of 7 reports and recorded
//! outcomes" without the entry being rewritten.
#![deny(missing_docs)]

use std::io::Write as _;
use std::path::Path;

use errata_model::Basis;
use errata_model::date::Date;
use serde::{Deserialize, Serialize};

/// One outcome record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutcomeRecord {
    /// The entry id, `<domain>/<slug>`.
    pub entry: String,
    /// `dead_end:<i>` or `workaround:<i>` (0-based, in the entry's order).
    pub item: String,
    /// `failed` or `worked`.
    pub outcome: String,
    /// YYYY-MM-DD.
    pub date: String,
    /// Where it happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<Env>,
    /// A public page that shows it (https).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Who reports it (`github:<login>`, a name, an e-mail).
    pub reporter: String,
}

/// The machine an outcome was seen on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Env {
    /// e.g. `NVIDIA H200`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// e.g. `580.159.04`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// e.g. `13.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cuda: Option<String>,
    /// e.g. `2.11.0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub torch: Option<String>,
}

impl Env {
    fn is_empty(&self) -> bool {
        self.gpu.is_none() && self.driver.is_none() && self.cuda.is_none() && self.torch.is_none()
    }
}

/// Which item of an entry a record is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Item {
    /// `dead_end:<i>`.
    DeadEnd(usize),
    /// `workaround:<i>`.
    Workaround(usize),
}

impl Item {
    /// Parses `dead_end:<i>` / `workaround:<i>`.
    pub fn parse(text: &str) -> Option<Item> {
        let (kind, index) = text.split_once(':')?;
        let index: usize = index.parse().ok()?;
        match kind {
            "dead_end" => Some(Item::DeadEnd(index)),
            "workaround" => Some(Item::Workaround(index)),
            _ => None,
        }
    }
}

impl std::fmt::Display for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Item::DeadEnd(i) => write!(f, "dead_end:{i}"),
            Item::Workaround(i) => write!(f, "workaround:{i}"),
        }
    }
}

impl OutcomeRecord {
    /// Parses one line of an outcome file.
    pub fn parse_line(line: &str) -> Result<OutcomeRecord, String> {
        serde_json::from_str(line).map_err(|e| e.to_string())
    }

    /// The line this record is written as (compact JSON, keys in a fixed order).
    pub fn to_line(&self) -> String {
        // Serializing plain strings and options cannot fail.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The item, when `item` is well formed.
    pub fn item(&self) -> Option<Item> {
        Item::parse(&self.item)
    }
}

/// What an entry offers, for [`validate`].
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Number of dead ends.
    pub dead_ends: usize,
    /// Number of workarounds.
    pub workarounds: usize,
}

/// Every problem of `record` as (field, message), for an entry of this `shape`
/// (`None`: no such entry), as of `today`.
pub fn validate(
    record: &OutcomeRecord,
    shape: Option<Shape>,
    today: Date,
) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    match shape {
        None => out.push(("entry", format!("no entry `{}`", record.entry))),
        Some(s) => match record.item() {
            None => out.push((
                "item",
                format!(
                    "`{}` is not `dead_end:<i>` or `workaround:<i>`",
                    record.item
                ),
            )),
            Some(Item::DeadEnd(i)) if i >= s.dead_ends => out.push((
                "item",
                format!(
                    "`{}` has {} dead end(s): no dead_end:{i}",
                    record.entry, s.dead_ends
                ),
            )),
            Some(Item::Workaround(i)) if i >= s.workarounds => out.push((
                "item",
                format!(
                    "`{}` has {} workaround(s): no workaround:{i}",
                    record.entry, s.workarounds
                ),
            )),
            Some(_) => {}
        },
    }
    if !matches!(record.outcome.as_str(), "failed" | "worked") {
        out.push((
            "outcome",
            format!("`{}` is not `failed` or `worked`", record.outcome),
        ));
    }
    match Date::parse(&record.date) {
        None => out.push((
            "date",
            format!("`{}` is not a YYYY-MM-DD date", record.date),
        )),
        Some(d) if d > today => out.push(("date", format!("{} is in the future", record.date))),
        Some(_) => {}
    }
    if let Some(src) = &record.source
        && !src.starts_with("https://")
    {
        out.push(("source", "a source is an https URL".into()));
    }
    if record.env.as_ref().is_some_and(Env::is_empty) {
        out.push((
            "env",
            "`env` is empty: give gpu, driver, cuda or torch, or leave it out".into(),
        ));
    }
    if record.reporter.trim().is_empty() {
        out.push(("reporter", "say who reports it".into()));
    }
    out
}

/// Appends `record` to `path` (created with its directories) as one line, written with
/// one `write` so a concurrent appender cannot interleave inside it.
pub fn append(path: &Path, record: &OutcomeRecord) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let mut line = record.to_line();
    line.push('\n');
    file.write_all(line.as_bytes())?;
    file.sync_all()
}

/// Validates `record` against its entry's `shape` and appends it to
/// `<dir>/<domain>/<slug>.jsonl` (the layout of `data/outcomes/`); returns the file.
/// Nothing is written when the record has a problem: the error lists them all. The one
/// write path of `errata outcome`, the MCP tool `report_outcome` and Python's
/// `errata.report_outcome()`.
pub fn record(
    dir: &Path,
    record: &OutcomeRecord,
    shape: Option<Shape>,
    today: Date,
) -> Result<std::path::PathBuf, String> {
    let problems = validate(record, shape, today);
    if !problems.is_empty() {
        let list: Vec<String> = problems
            .iter()
            .map(|(field, message)| format!("`{field}`: {message}"))
            .collect();
        return Err(list.join("; "));
    }
    // The id came from a known entry, but it still chooses a path: only `a/b` of safe
    // characters is written.
    let safe = |s: &str| {
        !s.is_empty()
            && s.chars().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_' || c == '.'
            })
            && !s.starts_with('.')
    };
    let path = match record.entry.split_once('/') {
        Some((domain, slug)) if safe(domain) && safe(slug) => {
            dir.join(domain).join(format!("{slug}.jsonl"))
        }
        _ => {
            return Err(format!(
                "`entry`: `{}` is not `<domain>/<slug>`",
                record.entry
            ));
        }
    };
    append(&path, record).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// The basis and rate an item shows once `outcomes` (its valid records) are added:
/// - none: the stored basis and rate, unchanged;
/// - on an estimate (or no basis): `outcomes`, K of N of the records;
/// - on a counted basis: the records added to its N and K, the kind `outcomes` (the
///   counted reports stay listed in `items`).
///
/// K counts `failed` for a dead end and `worked` for a workaround; the rate is K/N.
pub fn fold(
    basis: Option<&Basis>,
    rate: f64,
    outcomes: &[&OutcomeRecord],
    dead_end: bool,
) -> (Option<Basis>, f64) {
    if outcomes.is_empty() {
        return (basis.cloned(), rate);
    }
    let side = if dead_end { "failed" } else { "worked" };
    let m = outcomes.len() as u64;
    let x = outcomes.iter().filter(|r| r.outcome == side).count() as u64;
    let (n0, k0, items) = match basis.and_then(|b| b.counted().map(|c| (c, b))) {
        Some(((k, n), b)) => (n, k, b.items.clone()),
        None => (0, 0, Vec::new()),
    };
    let (n, k) = (n0 + m, k0 + x);
    let folded = Basis {
        kind: "outcomes".into(),
        n: Some(n),
        k: Some(k),
        items,
    };
    let rate = (k as f64 / n as f64 * 100.0).round() / 100.0;
    (Some(folded), rate)
}

/// Every entry's outcome records, by entry id and item: what the site and the bundle
/// fold into the rates they show.
#[derive(Debug, Clone, Default)]
pub struct Index {
    by_item: std::collections::BTreeMap<(String, Item), Vec<OutcomeRecord>>,
}

impl Index {
    /// Indexes records given with the entry id of the file holding them; a record that
    /// names another entry, or no well-formed item, is left out (`errata check`
    /// refuses to build with one).
    pub fn new<'a>(
        records: impl IntoIterator<Item = (Option<&'a str>, &'a OutcomeRecord)>,
    ) -> Index {
        let mut by_item: std::collections::BTreeMap<(String, Item), Vec<OutcomeRecord>> =
            Default::default();
        for (file_id, r) in records {
            if file_id == Some(r.entry.as_str())
                && let Some(item) = r.item()
            {
                by_item
                    .entry((r.entry.clone(), item))
                    .or_default()
                    .push(r.clone());
            }
        }
        Index { by_item }
    }

    /// Whether entry `id` has any record.
    pub fn has_entry(&self, id: &str) -> bool {
        self.by_item.keys().any(|(e, _)| e == id)
    }

    /// The basis and rate `item` of entry `id` shows, its records added ([`fold`]).
    pub fn folded(
        &self,
        id: &str,
        item: Item,
        basis: Option<&Basis>,
        rate: f64,
    ) -> (Option<Basis>, f64) {
        let records: Vec<&OutcomeRecord> = self
            .by_item
            .get(&(id.to_string(), item))
            .map(|v| v.iter().collect())
            .unwrap_or_default();
        fold(basis, rate, &records, matches!(item, Item::DeadEnd(_)))
    }

    /// Folds the records into an entry's JSON as written (`basis` and the rate of each
    /// item that has records); other items and keys are untouched.
    pub fn fold_json(&self, entry: &mut serde_json::Value) {
        let Some(id) = entry.get("id").and_then(|v| v.as_str()).map(str::to_string) else {
            return;
        };
        for (list, key, make) in [
            ("dead_ends", "fail_rate", Item::DeadEnd as fn(usize) -> Item),
            (
                "workarounds",
                "success_rate",
                Item::Workaround as fn(usize) -> Item,
            ),
        ] {
            let Some(items) = entry.get_mut(list).and_then(|l| l.as_array_mut()) else {
                continue;
            };
            for (i, item) in items.iter_mut().enumerate() {
                let key_item = make(i);
                if !self.by_item.contains_key(&(id.clone(), key_item)) {
                    continue;
                }
                let basis: Option<Basis> = item
                    .get("basis")
                    .and_then(|b| serde_json::from_value(b.clone()).ok());
                let rate = item.get(key).and_then(|r| r.as_f64()).unwrap_or(0.0);
                let (folded, rate) = self.folded(&id, key_item, basis.as_ref(), rate);
                if let (Some(obj), Some(folded)) = (item.as_object_mut(), folded) {
                    obj.insert(key.into(), serde_json::json!(rate));
                    if let Ok(v) = serde_json::to_value(&folded) {
                        obj.insert("basis".into(), v);
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(item: &str, outcome: &str) -> OutcomeRecord {
        OutcomeRecord {
            entry: "cuda/a".into(),
            item: item.into(),
            outcome: outcome.into(),
            date: "2026-11-20".into(),
            env: None,
            source: None,
            reporter: "github:alice".into(),
        }
    }

    #[test]
    fn lines_round_trip_and_unknown_keys_are_refused() {
        let r = record("workaround:1", "worked");
        assert_eq!(OutcomeRecord::parse_line(&r.to_line()).unwrap(), r);
        assert!(OutcomeRecord::parse_line(r#"{"entry":"a","item":"x","outcome":"worked","date":"2026-01-01","reporter":"r","extra":1}"#).is_err());
        assert_eq!(Item::parse("dead_end:3"), Some(Item::DeadEnd(3)));
        assert_eq!(Item::parse("workaround:-1"), None);
        assert_eq!(Item::DeadEnd(2).to_string(), "dead_end:2");
    }

    #[test]
    fn every_problem_at_once() {
        let today = Date::parse("2026-11-26").unwrap();
        let shape = Some(Shape {
            dead_ends: 1,
            workarounds: 2,
        });
        assert!(validate(&record("workaround:1", "worked"), shape, today).is_empty());
        let mut bad = record("dead_end:1", "fixed");
        bad.date = "2027-01-01".into();
        bad.source = Some("http://x".into());
        bad.env = Some(Env::default());
        bad.reporter = " ".into();
        let fields: Vec<&str> = validate(&bad, shape, today)
            .into_iter()
            .map(|(f, _)| f)
            .collect();
        assert_eq!(
            fields,
            ["item", "outcome", "date", "source", "env", "reporter"]
        );
        assert_eq!(validate(&bad, None, today)[0].0, "entry");
    }

    #[test]
    fn folding_adds_records_to_the_count() {
        let est = Basis {
            kind: "estimate".into(),
            ..Basis::default()
        };
        let a = record("workaround:0", "worked");
        let b = record("workaround:0", "failed");
        let (basis, rate) = fold(Some(&est), 0.9, &[&a, &a, &b], false);
        let basis = basis.unwrap();
        assert_eq!(
            (basis.kind.as_str(), basis.k, basis.n, rate),
            ("outcomes", Some(2), Some(3), 0.67)
        );
        let counted = Basis {
            kind: "reports".into(),
            n: Some(4),
            k: Some(3),
            items: Vec::new(),
        };
        let (basis, rate) = fold(Some(&counted), 0.75, &[&b], true);
        let basis = basis.unwrap();
        assert_eq!((basis.k, basis.n, rate), (Some(4), Some(5), 0.8));
        assert_eq!(
            fold(Some(&counted), 0.75, &[], true),
            (Some(counted.clone()), 0.75)
        );
    }

    #[test]
    fn the_index_folds_an_entrys_json() {
        let a = record("workaround:0", "worked");
        let mut other = record("dead_end:0", "failed");
        other.entry = "cuda/b".into();
        let index = Index::new([(Some("cuda/a"), &a), (Some("cuda/a"), &other)]);
        assert!(index.has_entry("cuda/a") && !index.has_entry("cuda/b"));
        let mut entry = serde_json::json!({"id": "cuda/a",
            "dead_ends": [{"fail_rate": 0.8, "basis": {"kind": "estimate"}}],
            "workarounds": [{"success_rate": 0.9, "basis": {"kind": "estimate"}}]});
        index.fold_json(&mut entry);
        assert_eq!(entry["dead_ends"][0]["basis"]["kind"], "estimate");
        assert_eq!(
            entry["workarounds"][0]["basis"],
            serde_json::json!({"kind": "outcomes", "n": 1, "k": 1})
        );
        assert_eq!(entry["workarounds"][0]["success_rate"], 1.0);
    }

    #[test]
    fn record_validates_then_writes_under_the_directory() {
        let dir = tempfile::tempdir().unwrap();
        let today = Date::parse("2026-11-26").unwrap();
        let shape = Some(Shape {
            dead_ends: 1,
            workarounds: 1,
        });
        let path = super::record(
            dir.path(),
            &record_of("workaround:0", "worked"),
            shape,
            today,
        )
        .unwrap();
        assert_eq!(path, dir.path().join("cuda/a.jsonl"));
        let err = super::record(
            dir.path(),
            &record_of("workaround:3", "worked"),
            shape,
            today,
        )
        .unwrap_err();
        assert!(err.contains("no workaround:3"), "{err}");
        let mut escape = record_of("dead_end:0", "failed");
        escape.entry = "../x".into();
        assert!(super::record(dir.path(), &escape, shape, today).is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap().lines().count(), 1);
    }

    fn record_of(item: &str, outcome: &str) -> OutcomeRecord {
        record(item, outcome)
    }

    #[test]
    fn append_writes_whole_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("outcomes/cuda/a.jsonl");
        append(&path, &record("dead_end:0", "failed")).unwrap();
        append(&path, &record("workaround:0", "worked")).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<OutcomeRecord> = text
            .lines()
            .map(|l| OutcomeRecord::parse_line(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 2);
        assert!(text.ends_with('\n'));
    }
}
