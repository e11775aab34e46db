//! Snippet annotations: a fence's info string (`cuda expect=ok timeout=10s`) and an
//! entry's `verify.annotations` (the same grammar without a language).

use errata_model::snippet::{AnnotationError, Annotations, FenceInfo, parse_expect};

/// Parses the input (UTF-8, lossily) as a fence info string and as bare annotations.
///
/// Invariants: the same result twice; every error's span lies inside the string on
/// character boundaries (the checker points at it); an `expect=` value prints back to
/// text that parses to the same value.
pub fn fence_info(data: &[u8]) {
    let info = String::from_utf8_lossy(data);
    let parsed = FenceInfo::parse(&info);
    assert_eq!(parsed, FenceInfo::parse(&info), "parsing is deterministic");
    spans_within(&info, &parsed.errors);
    expect_round_trips(&parsed.annotations);

    let (annotations, errors) = Annotations::parse(&info);
    spans_within(&info, &errors);
    expect_round_trips(&annotations);
}

fn spans_within(info: &str, errors: &[AnnotationError]) {
    for e in errors {
        let r = &e.span;
        assert!(
            r.start <= r.end
                && r.end <= info.len()
                && info.is_char_boundary(r.start)
                && info.is_char_boundary(r.end),
            "error span {r:?} outside the {}-byte info string {info:?}: {}",
            info.len(),
            e.message
        );
    }
}

fn expect_round_trips(annotations: &Annotations) {
    if let Some(expect) = &annotations.expect {
        let printed = expect.to_string();
        assert_eq!(
            parse_expect(&printed).as_ref(),
            Ok(expect),
            "expect={printed} does not parse back"
        );
    }
}
