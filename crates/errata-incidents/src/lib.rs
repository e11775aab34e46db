//! One incident from many logs.
//!
//! A failure on a GPU node is rarely one line: an Xid 79 in the kernel log, "unspecified
//! launch failure" on one rank a second later, NCCL watchdog timeouts on every other rank
//! ten minutes after. [`find`] matches several logs with one [`Index`], reads each
//! matched line's time, host, rank and PCI bus id ([`facts`]), groups the matches into
//! incidents, and names each incident's first cause.
//!
//! Two matches are one incident when errata's transition graph relates their errors
//! ([`graph`]: the same error, one known to lead to the other, or both known to follow
//! from one error), their times are within the window (when both have comparable
//! times), and they do not name two different GPUs. The first cause is the member no
//! other member is known to lead to; among several, the earliest. The graph outranks
//! the clock: a kernel log whose clock runs a few minutes behind still puts the Xid
//! first. Where a log's times are missing or only relative to boot (plain `dmesg`), the
//! graph alone orders it, and the incident says so ([`Ordering::Graph`]).
//!
//! The incident's `operator_action` is its first cause's.

pub mod facts;
pub mod graph;

use errata_consumer::Index;
use serde_json::json;

pub use facts::{LineFacts, Time};
pub use graph::Graph;

/// One log: its name (a file path, as the caller wants it shown) and its text.
#[derive(Debug, Clone, Copy)]
pub struct Log<'a> {
    pub name: &'a str,
    pub text: &'a str,
}

/// How incidents are grouped.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// The longest gap, in seconds, between two matches of one incident when both have
    /// wall-clock times. PyTorch's NCCL watchdog gives up after 10 minutes by default,
    /// so the default is 30 minutes.
    pub window_secs: f64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            window_secs: 30.0 * 60.0,
        }
    }
}

/// One known error in one log line.
#[derive(Debug, Clone, PartialEq)]
pub struct Member {
    /// The log's name.
    pub file: String,
    /// 1-based line number.
    pub line: u64,
    /// The entry (or, for an Xid no entry knows, NVIDIA's catalog answer `xid/N`).
    pub id: String,
    /// The matched text.
    pub text: String,
    /// The line's own time, or the nearest earlier line's in the same log (a traceback's
    /// lines carry none).
    pub time: Option<Time>,
    pub host: Option<String>,
    /// From the line (`[rank3]:`, `[Rank 3]`), else from the log's name (`rank3.log`).
    pub rank: Option<u32>,
    /// The GPU's PCI bus id, `0000:3b:00`.
    pub pci: Option<String>,
    /// The entry's `operator_action`.
    pub operator_action: Option<String>,
    /// Which log, in the order given (ties are broken by it).
    log: usize,
}

/// What put the first cause first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ordering {
    /// The members' wall-clock times (and the graph where it decides).
    Time,
    /// The transition graph alone: some member's time is missing or only relative to
    /// boot, so the logs cannot be aligned by the clock.
    Graph,
}

/// Matches of several logs that are one failure.
#[derive(Debug, Clone, PartialEq)]
pub struct Incident {
    /// 1-based, in the order the incidents began.
    pub number: usize,
    /// Index into `members` of the first cause.
    pub first_cause: usize,
    /// The first cause's `operator_action`.
    pub operator_action: Option<String>,
    /// In time order where times compare, else log by log.
    pub members: Vec<Member>,
    pub ordered_by: Ordering,
}

impl Incident {
    /// The first cause.
    pub fn cause(&self) -> &Member {
        &self.members[self.first_cause]
    }

    /// The contract's JSON object for this incident (one line of `errata incidents
    /// --format json`).
    pub fn to_json(&self) -> serde_json::Value {
        let cause = self.cause();
        json!({
            "incident": self.number,
            "first_cause": {"id": cause.id, "file": cause.file, "line": cause.line},
            "operator_action": self.operator_action,
            "ordered_by": match self.ordered_by {
                Ordering::Time => "time",
                Ordering::Graph => "graph",
            },
            "members": self.members.iter().map(|m| json!({
                "file": m.file,
                "line": m.line,
                "id": m.id,
                "time": m.time.map(facts::show),
                "host": m.host,
                "rank": m.rank,
                "pci": m.pci,
            })).collect::<Vec<_>>(),
        })
    }
}

/// The incidents in `logs`, in the order they began.
pub fn find(index: &Index, logs: &[Log<'_>], options: &Options) -> Vec<Incident> {
    let year = logs
        .iter()
        .find_map(|l| facts::year_in(l.text))
        .unwrap_or(2000);
    let mut members = Vec::new();
    for (i, log) in logs.iter().enumerate() {
        members.extend(members_of(index, i, log, year));
    }
    let graph = Graph::new(index.entries());
    let groups = group(&members, &graph, options);
    let mut incidents: Vec<Incident> = groups
        .into_iter()
        .map(|ids| {
            let mut ms: Vec<Member> = ids.into_iter().map(|i| members[i].clone()).collect();
            ms.sort_by(position);
            let (first_cause, ordered_by) = first_cause(&ms, &graph);
            Incident {
                number: 0,
                first_cause,
                operator_action: ms[first_cause].operator_action.clone(),
                members: ms,
                ordered_by,
            }
        })
        .collect();
    incidents.sort_by(|a, b| position(&a.members[0], &b.members[0]));
    for (i, incident) in incidents.iter_mut().enumerate() {
        incident.number = i + 1;
    }
    incidents
}

/// A log's name says its rank: `rank3.log`, `train_rank_3.out`.
fn rank_in_name(name: &str) -> Option<u32> {
    let base = name.rsplit(['/', '\\']).next()?.to_ascii_lowercase();
    let at = base.find("rank")? + 4;
    let digits: String = base[at..]
        .trim_start_matches(['_', '-'])
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

/// How far back a line without a time looks for the time of the line it belongs to (a
/// traceback's last line is far below the logging line that began it).
const LOOK_BACK_LINES: usize = 200;

fn members_of(index: &Index, log: usize, l: &Log<'_>, year: i64) -> Vec<Member> {
    let text = l.text;
    let mut out: Vec<Member> = Vec::new();
    for found in index.match_text(text) {
        // A line's best match only: the others on it are the same failure, said twice.
        if out.last().is_some_and(|m| m.line == found.line) {
            continue;
        }
        let start = usize::try_from(found.span.start)
            .unwrap_or(0)
            .min(text.len());
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line = &text[line_start..line_end];
        let mut f = facts::read(line, year);
        if f.time.is_none() {
            f.time = text[..line_start]
                .lines()
                .rev()
                .take(LOOK_BACK_LINES)
                .find_map(|l| facts::read(l, year).time);
        }
        out.push(Member {
            file: l.name.to_string(),
            line: found.line,
            id: found.entry.id.clone(),
            text: found.text.trim().to_string(),
            time: f.time,
            host: f.host,
            rank: f.rank.or_else(|| rank_in_name(l.name)),
            pci: f.pci,
            operator_action: found.entry.operator_action.clone(),
            log,
        });
    }
    out
}

/// Wall times first in time order, then the rest log by log, line by line.
fn position(a: &Member, b: &Member) -> std::cmp::Ordering {
    let key = |m: &Member| match m.time {
        Some(Time::Wall(t)) => (0, t),
        _ => (1, 0.0),
    };
    let (ka, kb) = (key(a), key(b));
    ka.0.cmp(&kb.0)
        .then(ka.1.total_cmp(&kb.1))
        .then(a.log.cmp(&b.log))
        .then(a.line.cmp(&b.line))
}

/// Whether two matches can be one failure by where and when they happened.
fn compatible(a: &Member, b: &Member, window: f64) -> bool {
    if let (Some(p), Some(q)) = (&a.pci, &b.pci)
        && p != q
    {
        return false;
    }
    match (a.time, b.time) {
        (Some(Time::Wall(s)), Some(Time::Wall(t))) => (s - t).abs() <= window,
        (Some(Time::Boot(s)), Some(Time::Boot(t))) if a.log == b.log => (s - t).abs() <= window,
        // Times that cannot be compared: the graph alone decides.
        _ => true,
    }
}

/// Groups of member indices, by union-find over related, compatible pairs.
fn group(members: &[Member], graph: &Graph, options: &Options) -> Vec<Vec<usize>> {
    let mut parent: Vec<usize> = (0..members.len()).collect();
    fn root(parent: &mut [usize], mut i: usize) -> usize {
        while parent[i] != i {
            parent[i] = parent[parent[i]];
            i = parent[i];
        }
        i
    }
    // Wall-timed members in time order, so each is compared only with those inside the
    // window after it; every other member is compared with all.
    let mut order: Vec<usize> = (0..members.len()).collect();
    order.sort_by(|&a, &b| position(&members[a], &members[b]));
    let wall = |i: usize| match members[i].time {
        Some(Time::Wall(t)) => Some(t),
        _ => None,
    };
    for (k, &i) in order.iter().enumerate() {
        for &j in &order[k + 1..] {
            if let (Some(s), Some(t)) = (wall(i), wall(j))
                && t - s > options.window_secs
            {
                // Later wall times are further still; untimed members come after them
                // in `order` and are compared when `i` is one of them, or here:
                if order[k + 1..].iter().all(|&x| wall(x).is_some()) {
                    break;
                }
                continue;
            }
            if compatible(&members[i], &members[j], options.window_secs)
                && graph.related(&members[i].id, &members[j].id)
            {
                let (ri, rj) = (root(&mut parent, i), root(&mut parent, j));
                if ri != rj {
                    parent[ri.max(rj)] = ri.min(rj);
                }
            }
        }
    }
    let mut groups: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for i in 0..members.len() {
        let r = root(&mut parent, i);
        groups.entry(r).or_default().push(i);
    }
    groups.into_values().collect()
}

/// The member no other member is known to lead to (a cycle in the graph blocks
/// nothing); among several, the earliest by [`position`].
fn first_cause(members: &[Member], graph: &Graph) -> (usize, Ordering) {
    let led_to = |m: &Member| {
        members
            .iter()
            .any(|o| o.id != m.id && graph.leads(&o.id, &m.id) && !graph.leads(&m.id, &o.id))
    };
    let first = (0..members.len())
        .find(|&i| !led_to(&members[i]))
        .unwrap_or(0);
    let timed = members
        .iter()
        .all(|m| matches!(m.time, Some(Time::Wall(_))));
    (
        first,
        if timed {
            Ordering::Time
        } else {
            Ordering::Graph
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_name_can_say_its_rank() {
        assert_eq!(rank_in_name("logs/rank3.log"), Some(3));
        assert_eq!(rank_in_name("train_rank_12.out"), Some(12));
        assert_eq!(rank_in_name("kern.log"), None);
    }
}
