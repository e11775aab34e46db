//! errata's transition graph as a relation between entries: which error is known to lead
//! to which (`leads_to`, and `preceded_by` read the other way round).

use std::collections::{BTreeMap, BTreeSet};

use errata_consumer::Entry;

/// How many steps apart two errors may be and still be one failure: Xid 79 → launch
/// failure → NCCL watchdog timeout is two, and a rank log may show only its end.
const MAX_STEPS: usize = 3;

/// The errors each error leads to, within [`MAX_STEPS`].
#[derive(Debug, Default)]
pub struct Graph {
    reach: BTreeMap<String, BTreeSet<String>>,
    /// The errors known to lead directly to each error.
    causes: BTreeMap<String, BTreeSet<String>>,
}

impl Graph {
    /// The graph of `entries`' `leads_to` and `preceded_by` edges.
    pub fn new<'a>(entries: impl IntoIterator<Item = &'a Entry>) -> Graph {
        let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
        for e in entries {
            for to in &e.leads_to {
                next.entry(e.id.as_str()).or_default().insert(to.as_str());
            }
            for from in &e.preceded_by {
                next.entry(from.as_str()).or_default().insert(e.id.as_str());
            }
        }
        let mut causes: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (from, tos) in &next {
            for to in tos {
                causes
                    .entry(to.to_string())
                    .or_default()
                    .insert(from.to_string());
            }
        }
        let mut reach = BTreeMap::new();
        for &start in next.keys() {
            let mut seen: BTreeSet<String> = BTreeSet::new();
            let mut frontier = vec![start];
            for _ in 0..MAX_STEPS {
                let mut further = Vec::new();
                for id in frontier {
                    for &to in next.get(id).into_iter().flatten() {
                        if to != start && seen.insert(to.to_string()) {
                            further.push(to);
                        }
                    }
                }
                frontier = further;
            }
            reach.insert(start.to_string(), seen);
        }
        Graph { reach, causes }
    }

    /// Whether `from` is known to lead to `to` (within a few steps).
    pub fn leads(&self, from: &str, to: &str) -> bool {
        self.reach.get(from).is_some_and(|r| r.contains(to))
    }

    /// Whether the two errors are one failure by the graph: the same error, or one leads
    /// to the other, or both follow directly from one error (a rank log may show a
    /// launch failure and another an NCCL error, both after an Xid the kernel log that
    /// would show it was not given).
    pub fn related(&self, a: &str, b: &str) -> bool {
        a == b
            || self.leads(a, b)
            || self.leads(b, a)
            || match (self.causes.get(a), self.causes.get(b)) {
                (Some(x), Some(y)) => !x.is_disjoint(y),
                _ => false,
            }
    }
}
