//! Durations as written on the command line: `7d`, `12h`, `30m`, `45s`, `500ms`.

use std::time::Duration;

/// Parses `<number><unit>` with unit `ms`, `s`, `m`, `h`, `d` or `w` (a bare `0` is also
/// accepted). Returns a message for anything else, so a typo is an error, not a default.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(errata_links::parse_duration("7d"), Ok(Duration::from_secs(7 * 86_400)));
/// assert_eq!(errata_links::parse_duration("250ms"), Ok(Duration::from_millis(250)));
/// assert!(errata_links::parse_duration("7 days").is_err());
/// ```
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let bad = || {
        format!(
            "invalid duration `{text}`: expected a number and a unit (ms, s, m, h, d, w), e.g. `7d`"
        )
    };
    let n: u64 = number.parse().map_err(|_| bad())?;
    let secs = |per: u64| n.checked_mul(per).map(Duration::from_secs).ok_or_else(bad);
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "s" => secs(1),
        "m" => secs(60),
        "h" => secs(3_600),
        "d" => secs(86_400),
        "w" => secs(7 * 86_400),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_errors() {
        assert_eq!(parse_duration("45s"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_duration("30m"), Ok(Duration::from_secs(1_800)));
        assert_eq!(parse_duration("2h"), Ok(Duration::from_secs(7_200)));
        assert_eq!(parse_duration("1w"), Ok(Duration::from_secs(604_800)));
        assert_eq!(parse_duration("0"), Ok(Duration::ZERO));
        for bad in ["", "d", "7", "7x", "-1d", "1.5h", "99999999999999999999d"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}
