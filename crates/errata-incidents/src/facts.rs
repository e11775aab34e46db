//! What a log line says about where and when it was written: its time, host, rank and
//! the GPU's PCI bus id, read from the line formats GPU failures are logged in.
//!
//! | format | example start of line | time | host |
//! |---|---|---|---|
//! | `dmesg -T` | `[Thu Mar  7 10:11:12 2024] NVRM: Xid …` | wall clock | – |
//! | plain `dmesg` | `[12345.678901] NVRM: Xid …` | seconds since boot | – |
//! | syslog, kern.log, `journalctl` | `Mar  7 10:11:12 gpu01 kernel: …` | wall clock, no year | field 4 |
//! | ISO 8601 (journal `-o short-iso`, Python `logging`) | `2024-03-07 10:11:12,345 …` | wall clock | after a journal time |
//! | glog / PyTorch C++ (`c10`) | `E0307 10:11:12.345678 123 file.cc:1]`, also after `[rank3]:[` | wall clock, no year | – |
//! | torchrun | `[rank3]:…` | – | – |
//! | NCCL debug | `gpu01:1234:1290 [3] NCCL WARN …` | – | first field |
//!
//! Ranks come from torchrun's `[rankN]:` prefix, PyTorch's `[Rank N]` and `rank N`
//! phrases; PCI bus ids from the kernel driver's `(PCI:0000:3b:00)` and NCCL's `busId
//! 3b000`, both written `0000:3b:00`. Times carry no zone: the logs of one incident come
//! from one site's clocks, and mixing zones is the caller's to avoid.

use std::sync::LazyLock;

use errata_model::date::Date;
use regex::Regex;

/// When a line was written.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub enum Time {
    /// A wall-clock time, as seconds since 1970-01-01 00:00 in the log's own zone. A
    /// format without a year (syslog, glog) takes the year of the other logs, see
    /// [`LineFacts::year_missing`].
    Wall(f64),
    /// Seconds since the machine booted (plain `dmesg`): not comparable with a wall
    /// clock, nor with another machine's boot.
    Boot(f64),
}

/// What one line says.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LineFacts {
    pub time: Option<Time>,
    /// The wall time had no year (syslog, glog): [`Time::Wall`] was computed with the
    /// year passed to [`read`].
    pub year_missing: bool,
    pub host: Option<String>,
    pub rank: Option<u32>,
    pub pci: Option<String>,
}

const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

fn month(name: &str) -> Option<u32> {
    MONTHS.iter().position(|m| *m == name).map(|i| i as u32 + 1)
}

fn re(pattern: &str) -> Regex {
    // The patterns are constants of this file; a typo fails every test at once.
    Regex::new(pattern).unwrap_or_else(|e| panic!("facts pattern {pattern}: {e}"))
}

static DMESG_T: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d) (\d{4})\]",
    )
});
static BOOT: LazyLock<Regex> = LazyLock::new(|| re(r"^\[ *(\d+\.\d+)\]"));
static SYSLOG: LazyLock<Regex> =
    LazyLock::new(|| re(r"^([A-Z][a-z]{2}) +(\d{1,2}) (\d\d):(\d\d):(\d\d)(?:\.(\d+))? (\S+) "));
static ISO: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^\[?(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?(?:Z|[+-]\d\d:?\d\d)?\]?(?: (\S+) kernel:)?",
    )
});
static GLOG: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(?:\[rank\d+\]:)?\[?[IWEF](\d{1,2})(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+) ")
});
static NCCL: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:\[rank\d+\]:)?([\w.-]+):\d+:\d+ \[\d+\] NCCL "));
static RANK: LazyLock<Regex> =
    LazyLock::new(|| re(r"^\[rank(\d+)\]:|\[Rank (\d+)\]|\b[Rr]ank[ =:]+(\d+)\b"));
static PCI: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"\bPCI:(?:([0-9a-fA-F]{4,8}):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\b|\bbusId ([0-9a-fA-F]+)\b",
    )
});

fn wall(y: i64, mo: u32, d: u32, h: &str, mi: &str, s: &str, frac: Option<&str>) -> Option<Time> {
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) {
        return None;
    }
    let (h, mi, s): (i64, i64, i64) = (h.parse().ok()?, mi.parse().ok()?, s.parse().ok()?);
    let frac = frac
        .and_then(|f| format!("0.{f}").parse::<f64>().ok())
        .unwrap_or(0.0);
    let date = Date {
        year: u16::try_from(y).ok()?,
        month: u8::try_from(mo).ok()?,
        day: u8::try_from(d).ok()?,
    };
    let secs = date.unix_days() * 86_400 + h * 3600 + mi * 60 + s;
    Some(Time::Wall(secs as f64 + frac))
}

/// Group `i` of `c`, empty when it did not take part.
fn g<'h>(c: &regex::Captures<'h>, i: usize) -> &'h str {
    c.get(i).map_or("", |m| m.as_str())
}

/// The facts of `line`. `year` completes a time written without one.
pub fn read(line: &str, year: i64) -> LineFacts {
    let mut facts = LineFacts::default();
    if let Some(c) = DMESG_T.captures(line) {
        facts.time = wall(
            g(&c, 6).parse().unwrap_or(year),
            month(g(&c, 1)).unwrap_or(0),
            g(&c, 2).parse().unwrap_or(0),
            g(&c, 3),
            g(&c, 4),
            g(&c, 5),
            None,
        );
    } else if let Some(c) = ISO.captures(line) {
        facts.time = wall(
            g(&c, 1).parse().unwrap_or(year),
            g(&c, 2).parse().unwrap_or(0),
            g(&c, 3).parse().unwrap_or(0),
            g(&c, 4),
            g(&c, 5),
            g(&c, 6),
            c.get(7).map(|m| m.as_str()),
        );
        facts.host = c.get(8).map(|m| m.as_str().to_string());
    } else if let Some(c) = SYSLOG.captures(line).filter(|c| month(g(c, 1)).is_some()) {
        facts.time = wall(
            year,
            month(g(&c, 1)).unwrap_or(0),
            g(&c, 2).parse().unwrap_or(0),
            g(&c, 3),
            g(&c, 4),
            g(&c, 5),
            c.get(6).map(|m| m.as_str()),
        );
        facts.year_missing = true;
        facts.host = Some(g(&c, 7).to_string());
    } else if let Some(c) = GLOG.captures(line) {
        facts.time = wall(
            year,
            g(&c, 1).parse().unwrap_or(0),
            g(&c, 2).parse().unwrap_or(0),
            g(&c, 3),
            g(&c, 4),
            g(&c, 5),
            c.get(6).map(|m| m.as_str()),
        );
        facts.year_missing = true;
    } else if let Some(c) = BOOT.captures(line) {
        facts.time = g(&c, 1).parse().ok().map(Time::Boot);
    }
    if facts.host.is_none()
        && let Some(c) = NCCL.captures(line)
    {
        facts.host = Some(g(&c, 1).to_string());
    }
    if let Some(c) = RANK.captures(line) {
        facts.rank = (1..=3).find_map(|i| c.get(i)?.as_str().parse().ok());
    }
    if let Some(c) = PCI.captures(line) {
        facts.pci = match c.get(4) {
            // NCCL's busId: domain, bus, device and function in hex, e.g. `3b000`.
            Some(id) => {
                let v = u64::from_str_radix(id.as_str(), 16).ok();
                v.map(|v| {
                    format!(
                        "{:04x}:{:02x}:{:02x}",
                        v >> 20,
                        (v >> 12) & 0xff,
                        (v >> 4) & 0xff
                    )
                })
            }
            None => {
                let domain = c
                    .get(1)
                    .map_or(0, |d| u64::from_str_radix(d.as_str(), 16).unwrap_or(0));
                Some(format!(
                    "{domain:04x}:{}:{}",
                    g(&c, 2).to_ascii_lowercase(),
                    g(&c, 3).to_ascii_lowercase()
                ))
            }
        };
    }
    facts
}

/// The year a full date in `text` names, for the formats that write one (`dmesg -T`,
/// ISO 8601), read from the first such line: what completes syslog's and glog's times.
pub fn year_in(text: &str) -> Option<i64> {
    text.lines().take(100_000).find_map(|l| {
        if let Some(c) = DMESG_T.captures(l) {
            return c.get(6)?.as_str().parse().ok();
        }
        ISO.captures(l)?.get(1)?.as_str().parse().ok()
    })
}

/// A wall time as `YYYY-MM-DD hh:mm:ss`, a boot time as `boot+S.sss s`.
pub fn show(time: Time) -> String {
    match time {
        Time::Boot(s) => format!("boot+{s:.3}s"),
        Time::Wall(s) => {
            let secs = s.floor() as i64;
            let rest = secs.rem_euclid(86_400);
            format!(
                "{} {:02}:{:02}:{:02}",
                Date::from_unix(secs),
                rest / 3600,
                rest % 3600 / 60,
                rest % 60
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wall_of(line: &str) -> String {
        show(read(line, 2024).time.expect(line))
    }

    #[test]
    fn every_format_gives_its_time_host_rank_and_gpu() {
        let xid = "[Thu Mar  7 10:11:12 2024] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.";
        assert_eq!(wall_of(xid), "2024-03-07 10:11:12");
        assert_eq!(read(xid, 2000).pci.as_deref(), Some("0000:3b:00"));

        let syslog =
            "Mar  7 10:11:13 gpu01 kernel: [12345.678901] NVRM: Xid (PCI:0000:3B:00): 79, pid=1";
        let f = read(syslog, 2024);
        assert_eq!(show(f.time.expect("time")), "2024-03-07 10:11:13");
        assert!(f.year_missing);
        assert_eq!(f.host.as_deref(), Some("gpu01"));
        assert_eq!(f.pci.as_deref(), Some("0000:3b:00"));

        let iso = "2024-03-07T10:11:14+0000 gpu02 kernel: NVRM: Xid (PCI:0000:3b:00): 79";
        assert_eq!(read(iso, 0).host.as_deref(), Some("gpu02"));
        assert_eq!(
            wall_of("2024-03-07 10:11:15,123 - root - ERROR - boom"),
            "2024-03-07 10:11:15"
        );

        let torch = "[rank3]:[E307 10:21:12.345678 1234 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout";
        let f = read(torch, 2024);
        assert_eq!(f.rank, Some(3));
        assert_eq!(show(f.time.expect("time")), "2024-03-07 10:21:12");

        let nccl = "gpu01:1234:1290 [3] NCCL INFO Channel 00 : 0[3b000] -> 1[5e000] via P2P/IPC busId 3b000";
        let f = read(nccl, 2024);
        assert_eq!(f.host.as_deref(), Some("gpu01"));
        assert_eq!(f.pci.as_deref(), Some("0000:3b:00"));

        assert_eq!(
            read("[ 1234.5] NVRM: Xid (PCI:0000:3b:00): 13", 2024).time,
            Some(Time::Boot(1234.5))
        );
        assert_eq!(
            read("RuntimeError: CUDA error: unspecified launch failure", 2024),
            LineFacts::default()
        );
    }

    #[test]
    fn dates_round_trip() {
        for text in ["1970-01-01", "2000-02-29", "2024-12-31", "2026-11-26"] {
            let date = Date::parse(text).expect("date");
            assert_eq!(Date::from_unix(date.unix_days() * 86_400), date);
        }
    }
}
