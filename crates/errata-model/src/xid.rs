//! The Xid catalog: every Xid number NVIDIA documents, with its name, description and
//! NVIDIA's recommended resolution.
//!
//! Cited data, not generated: `data/xid-catalog.tsv` is copied from NVIDIA's Xid
//! documentation (its header names the pages and the date they were read). The kernel
//! driver prints these numbers as `NVRM: Xid (PCI:0000:3b:00): 79, pid=…, …`; `errata
//! decode` and the matcher's bare-number lines read them from here.

use std::sync::OnceLock;

/// `xid<TAB>name<TAB>resolution<TAB>description<TAB>source`, `#` lines first.
pub const CATALOG_TSV: &str = include_str!("../data/xid-catalog.tsv");

/// One documented Xid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Xid {
    /// The number the driver prints.
    pub xid: u32,
    /// NVIDIA's mnemonic (`ROBUST_CHANNEL_GR_EXCEPTION`); empty when it has none.
    pub name: &'static str,
    /// NVIDIA's recommended resolution bucket (`RESTART_APP`, `RESET_GPU`, …); empty
    /// when the catalog gives none.
    pub resolution: &'static str,
    /// NVIDIA's description.
    pub description: &'static str,
    /// The page it was read from.
    pub source: &'static str,
}

/// Every documented Xid, by number.
pub fn catalog() -> &'static [Xid] {
    static CATALOG: OnceLock<Vec<Xid>> = OnceLock::new();
    CATALOG.get_or_init(|| parse(CATALOG_TSV))
}

/// The Xid numbered `xid`.
pub fn by_number(xid: u32) -> Option<&'static Xid> {
    catalog().iter().find(|x| x.xid == xid)
}

/// The operator action (the entry field `operator_action`) NVIDIA's resolution bucket
/// calls for: `IGNORE` is `none`, `RESTART_APP` `restart-process`, `RESET_GPU`
/// `reset-gpu`, `RESTART_BM` / `RESTART_VM` `reboot-node`, `UPDATE_SWFW`
/// `fix-environment`; `CONTACT_SUPPORT`, `CHECK_MECHANICALS`, `CHECK_UVM` and the
/// `WORKFLOW_…` buckets (a procedure to follow, hardware suspect) `drain-and-inspect`.
/// A bucket the catalog leaves empty, or one this list does not know, is
/// `drain-and-inspect` too: an unexplained Xid is inspected before the node takes work.
pub fn operator_action(resolution: &str) -> &'static str {
    match resolution {
        "IGNORE" => "none",
        "RESTART_APP" => "restart-process",
        "RESET_GPU" => "reset-gpu",
        "RESTART_BM" | "RESTART_VM" => "reboot-node",
        "UPDATE_SWFW" => "fix-environment",
        _ => "drain-and-inspect",
    }
}

/// `-` is the file's "none".
fn field(text: &'static str) -> &'static str {
    let text = text.trim();
    if text == "-" { "" } else { text }
}

fn parse(tsv: &'static str) -> Vec<Xid> {
    tsv.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| {
            let mut cols = l.split('\t');
            Some(Xid {
                xid: cols.next()?.trim().parse().ok()?,
                name: field(cols.next()?),
                resolution: field(cols.next()?),
                description: field(cols.next()?),
                source: field(cols.next()?),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every data line is a row: a malformed line would silently drop an Xid.
    #[test]
    fn every_line_is_a_row_in_order() {
        let lines = CATALOG_TSV
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .count();
        assert_eq!(catalog().len(), lines);
        assert!(catalog().len() >= 50, "{} Xids", catalog().len());
        assert!(catalog().windows(2).all(|w| w[0].xid < w[1].xid));
        for x in catalog() {
            assert!(!x.description.is_empty(), "Xid {}", x.xid);
            assert!(
                x.source.starts_with("https://docs.nvidia.com/"),
                "Xid {}",
                x.xid
            );
        }
    }

    #[test]
    fn facts_from_nvidia_documentation() {
        let fallen = by_number(79).map(|x| x.description.to_ascii_lowercase());
        assert!(
            fallen
                .as_deref()
                .is_some_and(|d| d.contains("fallen off the bus")),
            "{fallen:?}"
        );
        assert!(by_number(48).is_some_and(|x| x.description.to_ascii_lowercase().contains("ecc")));
        assert!(by_number(0).is_none());
    }
}
