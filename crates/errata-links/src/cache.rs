//! The link cache: what was found for each URL, and when.
//!
//! The file (`.errata-cache/links.json` by default) is JSON with sorted keys, so it is
//! byte-identical for the same results, and it is replaced atomically (written to a
//! temporary file beside it, then renamed): an interrupted run never leaves half a file.
//!
//! ```json
//! {
//!   "version": 1,
//!   "links": {
//!     "https://docs.nvidia.com/cuda/": { "checked": 1735689600, "result": "alive", "status": 200 }
//!   }
//! }
//! ```

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::outcome::Outcome;

/// The cache format version; a file with another version is ignored (and replaced).
const VERSION: u32 = 1;

/// Every cached result, by URL key.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cache {
    version: u32,
    /// URL key → result.
    pub links: BTreeMap<String, Cached>,
}

/// One cached result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cached {
    /// When it was checked, in seconds since the Unix epoch.
    pub checked: u64,
    /// What was found.
    #[serde(flatten)]
    pub outcome: Outcome,
}

impl Cache {
    /// An empty cache.
    pub fn new() -> Cache {
        Cache {
            version: VERSION,
            links: BTreeMap::new(),
        }
    }

    /// Reads the cache at `path`. A missing file is an empty cache; so is a file written
    /// by another version of the format. A file that cannot be read or parsed is an error
    /// (the caller decides whether to start afresh).
    pub fn load(path: &Path) -> Result<Cache, crate::Error> {
        let error = |message: String| crate::Error::Cache {
            path: path.to_path_buf(),
            message,
        };
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Cache::new()),
            Err(e) => return Err(error(e.to_string())),
        };
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| error(format!("not valid JSON: {e}")))?;
        if value.get("version").and_then(serde_json::Value::as_u64) != Some(u64::from(VERSION)) {
            return Ok(Cache::new());
        }
        serde_json::from_value(value).map_err(|e| error(format!("not a link cache: {e}")))
    }

    /// Writes the cache to `path` atomically, creating its directory.
    pub fn save(&self, path: &Path) -> Result<(), crate::Error> {
        let error = |message: String| crate::Error::Cache {
            path: path.to_path_buf(),
            message,
        };
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        std::fs::create_dir_all(dir)
            .map_err(|e| error(format!("cannot create {}: {e}", dir.display())))?;
        let mut text = serde_json::to_string_pretty(self).map_err(|e| error(e.to_string()))?;
        text.push('\n');
        let mut builder = tempfile::Builder::new();
        builder.prefix(".links-").suffix(".tmp");
        // The temporary file becomes the cache: give it ordinary permissions, not 0600.
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o644));
        let mut file = builder.tempfile_in(dir).map_err(|e| error(e.to_string()))?;
        file.write_all(text.as_bytes())
            .map_err(|e| error(e.to_string()))?;
        file.as_file()
            .sync_all()
            .map_err(|e| error(e.to_string()))?;
        file.persist(path).map_err(|e| error(e.error.to_string()))?;
        Ok(())
    }

    /// The cached result for `key` if it can stand in for a check at `now`: younger than
    /// `max_age`, and not dead. Dead links are always checked again, so a fixed link or
    /// a flaky host clears on the next run instead of staying red for `max_age`.
    pub fn fresh(&self, key: &str, now: SystemTime, max_age: Duration) -> Option<&Outcome> {
        let cached = self.links.get(key)?;
        let fresh = age(cached.checked, now) < max_age;
        (fresh && !matches!(cached.outcome, Outcome::Dead { .. })).then_some(&cached.outcome)
    }

    /// Records a result checked at `now`. Only verdicts are kept (see
    /// [`Outcome::is_verdict`]).
    pub fn record(&mut self, key: &str, outcome: &Outcome, now: SystemTime) {
        if outcome.is_verdict() {
            self.links.insert(
                key.to_string(),
                Cached {
                    checked: unix(now),
                    outcome: outcome.clone(),
                },
            );
        }
    }

    /// Drops results that are neither `in_use` nor younger than `max_age`, so the file
    /// does not grow forever as links come and go.
    pub fn prune(&mut self, in_use: impl Fn(&str) -> bool, now: SystemTime, max_age: Duration) {
        self.links
            .retain(|key, cached| in_use(key) || age(cached.checked, now) < max_age);
    }
}

/// Seconds since the Unix epoch (0 for a clock set before it).
pub(crate) fn unix(time: SystemTime) -> u64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// How long ago `checked` was; a time in the future (clock skew) counts as just now.
fn age(checked: u64, now: SystemTime) -> Duration {
    Duration::from_secs(unix(now).saturating_sub(checked))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> SystemTime {
        SystemTime::UNIX_EPOCH + Duration::from_secs(secs)
    }

    #[test]
    fn round_trip_is_sorted_and_byte_identical() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/links.json");
        let mut cache = Cache::new();
        cache.record(
            "https://b.example/",
            &Outcome::Alive { status: 200 },
            at(100),
        );
        cache.record(
            "https://a.example/",
            &Outcome::Dead {
                status: Some(404),
                reason: "HTTP 404 Not Found".into(),
            },
            at(100),
        );
        cache.record(
            "https://c.example/",
            &Outcome::Unknown {
                reason: "429".into(),
            },
            at(100),
        );
        cache.save(&path).unwrap();
        let first = std::fs::read_to_string(&path).unwrap();
        assert!(
            first.find("a.example").unwrap() < first.find("b.example").unwrap(),
            "{first}"
        );
        assert!(
            !first.contains("c.example"),
            "an unknown result is not cached: {first}"
        );
        let loaded = Cache::load(&path).unwrap();
        assert_eq!(loaded, cache);
        loaded.save(&path).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), first);
        // Only the cache file is left: the temporary file was renamed over it.
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["links.json"]);
    }

    #[test]
    fn freshness_and_dead_links() {
        let mut cache = Cache::new();
        cache.record("https://ok/", &Outcome::Alive { status: 200 }, at(1_000));
        cache.record(
            "https://dead/",
            &Outcome::Dead {
                status: Some(410),
                reason: "gone".into(),
            },
            at(1_000),
        );
        let day = Duration::from_secs(86_400);
        assert!(cache.fresh("https://ok/", at(1_000 + 3_600), day).is_some());
        assert!(
            cache
                .fresh("https://ok/", at(1_000 + 86_400), day)
                .is_none(),
            "expired"
        );
        assert!(
            cache.fresh("https://dead/", at(1_001), day).is_none(),
            "dead is always re-checked"
        );
        assert!(cache.fresh("https://never/", at(1_001), day).is_none());
        cache.prune(|key| key == "https://dead/", at(1_000 + 2 * 86_400), day);
        assert_eq!(cache.links.keys().collect::<Vec<_>>(), ["https://dead/"]);
    }

    #[test]
    fn missing_other_version_and_garbage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("links.json");
        assert_eq!(Cache::load(&path).unwrap(), Cache::new());
        std::fs::write(&path, r#"{"version": 99, "whatever": []}"#).unwrap();
        assert_eq!(Cache::load(&path).unwrap(), Cache::new());
        std::fs::write(&path, "{not json").unwrap();
        let err = Cache::load(&path).unwrap_err().to_string();
        assert!(
            err.contains("links.json") && err.contains("not valid JSON"),
            "{err}"
        );
    }
}
