//! Calendar dates (`YYYY-MM-DD`), the only date format in the knowledge base.

use std::fmt;

/// A valid proleptic-Gregorian calendar date.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Date {
    /// Year (4 digits).
    pub year: u16,
    /// Month, 1–12.
    pub month: u8,
    /// Day, 1–31 (valid for the month).
    pub day: u8,
}

impl Date {
    /// Parses exactly `YYYY-MM-DD` and rejects impossible dates such as `2025-02-30`.
    ///
    /// ```
    /// use errata_model::date::Date;
    /// assert!(Date::parse("2024-02-29").is_some());
    /// assert!(Date::parse("2025-02-29").is_none());
    /// assert!(Date::parse("2025-1-5").is_none());
    /// ```
    pub fn parse(s: &str) -> Option<Date> {
        let b = s.as_bytes();
        if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<u16> {
            let part = s.get(r)?;
            part.bytes()
                .all(|c| c.is_ascii_digit())
                .then(|| part.parse().ok())?
        };
        let (year, month, day) = (num(0..4)?, num(5..7)? as u8, num(8..10)? as u8);
        let date = Date { year, month, day };
        (year >= 1 && (1..=12).contains(&month) && day >= 1 && day <= days_in_month(year, month))
            .then_some(date)
    }

    /// The same day `years` years earlier (29 February becomes 28 February).
    pub fn minus_years(self, years: u16) -> Date {
        let year = self.year.saturating_sub(years).max(1);
        let day = self.day.min(days_in_month(year, self.month));
        Date {
            year,
            month: self.month,
            day,
        }
    }

    /// Days from 1970-01-01 to this date (negative before it): the inverse of
    /// [`Date::from_unix`] on whole days (Howard Hinnant's days_from_civil).
    pub fn unix_days(self) -> i64 {
        let (y, m, d) = (
            i64::from(self.year),
            i64::from(self.month),
            i64::from(self.day),
        );
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
        era * 146_097 + doe - 719_468
    }

    /// The date of a Unix timestamp (UTC).
    pub fn from_unix(secs: i64) -> Date {
        // Howard Hinnant's civil_from_days.
        let z = secs.div_euclid(86_400) + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z - era * 146_097;
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
        let year = (yoe + era * 400 + i64::from(month <= 2)) as u16;
        Date { year, month, day }
    }

    /// Today (UTC), from the system clock.
    pub fn today() -> Date {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        Date::from_unix(secs)
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400) => {
            29
        }
        2 => 28,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unix_days() {
        assert_eq!(Date::from_unix(0).to_string(), "1970-01-01");
        assert_eq!(Date::from_unix(1_709_164_800).to_string(), "2024-02-29");
        assert_eq!(
            Date::parse("2024-02-29").map(|d| d.minus_years(1).to_string()),
            Some("2023-02-28".into())
        );
    }
}
