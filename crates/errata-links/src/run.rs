//! One `errata links` run: collect, consult the cache, check what is due, report.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

use errata_load::KnowledgeBase;
use errata_model::Diagnostic;

use crate::cache::Cache;
use crate::check::{CheckOptions, Checker};
use crate::collect::collect;
use crate::diagnose::diagnose;
use crate::outcome::Outcome;
use crate::progress::Progress;

/// Everything a run needs besides the knowledge base.
#[derive(Debug, Clone)]
pub struct Settings {
    /// How to check over HTTP.
    pub check: CheckOptions,
    /// The cache file (`.errata-cache/links.json` by default).
    pub cache: PathBuf,
    /// A cached result younger than this is used instead of a check.
    pub max_age: Duration,
    /// Report from the cache alone: no network at all.
    pub offline: bool,
    /// The time of the run (results are stamped with it).
    pub now: SystemTime,
    /// Show a progress bar (when stderr is a terminal).
    pub progress: bool,
}

impl Settings {
    /// The defaults: `.errata-cache/links.json`, a week's max age, online, now.
    pub fn new() -> Settings {
        Settings {
            check: CheckOptions::default(),
            cache: PathBuf::from(".errata-cache/links.json"),
            max_age: Duration::from_secs(7 * 86_400),
            offline: false,
            now: SystemTime::now(),
            progress: false,
        }
    }
}

impl Default for Settings {
    fn default() -> Self {
        Settings::new()
    }
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Report {
    /// `link-dead` and `link-redirect` diagnostics, resolved to line:column and sorted.
    pub diagnostics: Vec<Diagnostic>,
    /// Places an http(s) URL is written.
    pub sites: usize,
    /// Distinct URLs among them.
    pub urls: usize,
    /// Distinct URLs checked over the network in this run.
    pub checked: usize,
    /// Distinct URLs answered from the cache.
    pub cached: usize,
    /// Distinct URLs with no verdict, and why: never checked (offline) or still
    /// rate-limited after every retry. Not errors; sorted by URL.
    pub unknown: Vec<(String, String)>,
    /// Things the user should know that are not about the data (an unreadable cache that
    /// was replaced, say).
    pub notes: Vec<String>,
}

/// Checks every external URL of `kb`, using and updating the cache.
///
/// Online, each distinct URL without a fresh cached result is requested once; the cache
/// is then rewritten. Offline, every URL is answered from the cache whatever its age, a
/// URL never checked is listed in [`Report::unknown`], and the cache is left alone.
pub fn run(kb: &KnowledgeBase, settings: &Settings) -> Result<Report, crate::Error> {
    let sites = collect(kb);
    let keys: BTreeSet<&str> = sites.iter().map(|s| s.key.as_str()).collect();
    let mut report = Report {
        sites: sites.len(),
        urls: keys.len(),
        ..Report::default()
    };

    let mut cache = match Cache::load(&settings.cache) {
        Ok(cache) => cache,
        Err(err) if !settings.offline => {
            report.notes.push(format!("{err}; starting a new cache"));
            Cache::new()
        }
        Err(err) => return Err(err),
    };

    let mut outcomes: BTreeMap<String, Outcome> = BTreeMap::new();
    let mut due = Vec::new();
    for key in &keys {
        let cached = if settings.offline {
            cache.links.get(*key).map(|c| &c.outcome)
        } else {
            cache.fresh(key, settings.now, settings.max_age)
        };
        match cached {
            Some(outcome) => {
                outcomes.insert(key.to_string(), outcome.clone());
            }
            None if settings.offline => {
                let reason = "never checked (offline: not in the cache)".to_string();
                outcomes.insert(key.to_string(), Outcome::Unknown { reason });
            }
            None => due.push(key.to_string()),
        }
    }
    report.cached = outcomes.len() - usize::from(settings.offline) * unknown_count(&outcomes);
    report.checked = due.len();

    if !due.is_empty() {
        let checker = Checker::new(settings.check.clone())?;
        let progress = Progress::new(due.len(), settings.progress);
        let bar = progress.clone();
        let checked = checker.check_all(&due, move |url, _| bar.done(url));
        progress.finish();
        for (key, outcome) in checked? {
            cache.record(&key, &outcome, settings.now);
            outcomes.insert(key, outcome);
        }
    }
    if !settings.offline {
        cache.prune(|key| keys.contains(key), settings.now, settings.max_age);
        cache.save(&settings.cache)?;
    }

    report.unknown = outcomes
        .iter()
        .filter_map(|(url, o)| match o {
            Outcome::Unknown { reason } => Some((url.clone(), reason.clone())),
            _ => None,
        })
        .collect();
    report.diagnostics = diagnose(&sites, &outcomes);
    kb.resolve(&mut report.diagnostics);
    Ok(report)
}

fn unknown_count(outcomes: &BTreeMap<String, Outcome>) -> usize {
    outcomes
        .values()
        .filter(|o| matches!(o, Outcome::Unknown { .. }))
        .count()
}
