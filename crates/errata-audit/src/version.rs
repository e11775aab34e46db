//! Versions as the reports write them (`570.124.04`, `2.6.0+cu126`, `12.6`) and the
//! conditions `affects` writes on them (`>=2.18.1, <2.19.3`, `none`, `true`).

use std::cmp::Ordering;

/// The leading numeric components: `2.6.0+cu126` → `[2, 6, 0]`; `None` when the text
/// does not start with a number.
pub fn parse(v: &str) -> Option<Vec<u64>> {
    let numeric: &str = v
        .trim()
        .split(|c: char| !(c.is_ascii_digit() || c == '.'))
        .next()?;
    let parts: Vec<u64> = numeric
        .split('.')
        .filter(|p| !p.is_empty())
        .map_while(|p| p.parse().ok())
        .collect();
    (!parts.is_empty()).then_some(parts)
}

/// Compares component by component, a missing component counting as 0 (`12.6` =
/// `12.6.0`).
pub fn compare(a: &[u64], b: &[u64]) -> Ordering {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| a.get(i).unwrap_or(&0).cmp(b.get(i).unwrap_or(&0)))
        .find(|o| o.is_ne())
        .unwrap_or(Ordering::Equal)
}

/// Whether `value` meets `condition`: comparators joined by `,` (all must hold:
/// `>=2.18.1, <2.19.3`), or a word compared without regard to case (`none`, `true`).
/// `None` when the condition is malformed.
pub fn holds(condition: &str, value: &str) -> Option<bool> {
    let mut all = true;
    for part in condition.split(',').map(str::trim) {
        let (op, operand) = ["<=", ">=", "==", "<", ">", "="]
            .iter()
            .find_map(|op| part.strip_prefix(op).map(|rest| (*op, rest.trim())))
            .unwrap_or(("word", part));
        let ok = if op == "word" {
            value.trim().eq_ignore_ascii_case(operand)
        } else {
            let (Some(v), Some(w)) = (parse(value), parse(operand)) else {
                // A fact that is not a version (`none`) meets no comparison.
                parse(operand)?;
                all = false;
                continue;
            };
            let o = compare(&v, &w);
            match op {
                "<" => o.is_lt(),
                "<=" => o.is_le(),
                ">" => o.is_gt(),
                ">=" => o.is_ge(),
                _ => o.is_eq(),
            }
        };
        all &= ok;
    }
    Some(all)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_conditions() {
        assert_eq!(parse("2.6.0+cu126"), Some(vec![2, 6, 0]));
        assert_eq!(parse("570.124.04"), Some(vec![570, 124, 4]));
        assert_eq!(parse("none"), None);
        assert!(compare(&[12, 6], &[12, 6, 0]).is_eq());
        assert_eq!(holds(">=2.18.1, <2.19.3", "2.18.3"), Some(true));
        assert_eq!(holds(">=2.18.1, <2.19.3", "2.19.3"), Some(false));
        assert_eq!(holds("none", "None"), Some(true));
        assert_eq!(holds("<2.1", "none"), Some(false));
        assert_eq!(holds("<abc", "1.0"), None);
    }
}
