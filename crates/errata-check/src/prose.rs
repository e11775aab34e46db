//! The prose of an entry, field by field, for the rules that read it: the root cause,
//! each dead end's and workaround's `action`, `why_fails` / `how` and `condition`, and
//! their Chinese text.

use errata_model::Entry;

/// A prose field of an entry. Its JSON pointer is written out only for a field that is
/// reported: a rule reading every field of 10,000 entries needs none of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Field {
    RootCause,
    RootCauseZh,
    /// A dead end's `action`, `why_fails` or `condition`.
    DeadEnd(usize, &'static str),
    /// A workaround's `action`, `how` or `condition`.
    Workaround(usize, &'static str),
    DeadEndZh(usize),
    WorkaroundZh(usize),
}

impl Field {
    pub(crate) fn pointer(self) -> String {
        match self {
            Field::RootCause => "/root_cause".to_string(),
            Field::RootCauseZh => "/root_cause_zh".to_string(),
            Field::DeadEnd(i, key) => format!("/dead_ends/{i}/{key}"),
            Field::Workaround(i, key) => format!("/workarounds/{i}/{key}"),
            Field::DeadEndZh(i) => format!("/dead_ends_zh/{i}"),
            Field::WorkaroundZh(i) => format!("/workarounds_zh/{i}"),
        }
    }
}

/// Every prose field of `e`, in a fixed order: the root cause (English, Chinese), the
/// dead ends, the workarounds, then the Chinese dead ends and workarounds.
pub(crate) fn prose_fields(e: &Entry) -> impl Iterator<Item = (Field, &str)> {
    let dead_ends = e.dead_ends.iter().enumerate().flat_map(|(i, d)| {
        [
            (Field::DeadEnd(i, "action"), d.action.as_str()),
            (Field::DeadEnd(i, "why_fails"), d.why_fails.as_str()),
            (Field::DeadEnd(i, "condition"), d.condition.as_str()),
        ]
    });
    let workarounds = e.workarounds.iter().enumerate().flat_map(|(i, w)| {
        [
            (Field::Workaround(i, "action"), w.action.as_str()),
            (Field::Workaround(i, "how"), w.how.as_str()),
            (Field::Workaround(i, "condition"), w.condition.as_str()),
        ]
    });
    let dead_ends_zh = e
        .dead_ends_zh
        .iter()
        .enumerate()
        .map(|(i, t)| (Field::DeadEndZh(i), t.as_str()));
    let workarounds_zh = e
        .workarounds_zh
        .iter()
        .enumerate()
        .map(|(i, t)| (Field::WorkaroundZh(i), t.as_str()));
    [
        (Field::RootCause, e.root_cause.as_str()),
        (Field::RootCauseZh, e.root_cause_zh.as_str()),
    ]
    .into_iter()
    .chain(dead_ends)
    .chain(workarounds)
    .chain(dead_ends_zh)
    .chain(workarounds_zh)
}
