//! Xid lines that no entry knows: NVIDIA's catalog meaning instead of silence.
//!
//! The knowledge base has entries for the Xids people report; the kernel driver prints
//! many more (`NVRM: Xid (PCI:0000:3b:00): 57, …`). For a line whose Xid no entry
//! matches, the index answers with a catalog entry built from NVIDIA's Xid catalog
//! (`errata_model::xid`, cited data): its name, description and recommended resolution,
//! and no advice of errata's own. Its id is `xid/<N>` (no slug, so it never collides with
//! a real entry's `xid/<N>-…`), it has no page, and [`Entry::catalog_source`] names the
//! page the meaning was read from.

use std::sync::OnceLock;

use crate::Entry;

/// The one pattern for every Xid line: the number is read from the end of the match.
pub(crate) const XID_LINE: &str = r"NVRM: Xid \([^)]*\): [0-9]+\b";

/// The catalog entry of the Xid `text` (a match of [`XID_LINE`]) names, when NVIDIA
/// documents that number.
pub(crate) fn entry_for(text: &str) -> Option<&'static Entry> {
    let digits = text.trim_end().rsplit(' ').next()?;
    let xid: u32 = digits.parse().ok()?;
    let entries = entries();
    let i = entries.binary_search_by_key(&xid, |(n, _)| *n).ok()?;
    Some(&entries[i].1)
}

/// One entry per documented Xid, by number, built once.
fn entries() -> &'static [(u32, Entry)] {
    static ENTRIES: OnceLock<Vec<(u32, Entry)>> = OnceLock::new();
    ENTRIES.get_or_init(|| {
        let mut out: Vec<(u32, Entry)> = errata_model::xid::catalog()
            .iter()
            .filter_map(|x| Some((x.xid, catalog_entry(x)?)))
            .collect();
        out.sort_by_key(|(n, _)| *n);
        out
    })
}

fn catalog_entry(x: &errata_model::xid::Xid) -> Option<Entry> {
    let name = if x.name.is_empty() {
        format!("Xid {}", x.xid)
    } else {
        format!("Xid {}: {}", x.xid, x.name)
    };
    let resolution = if x.resolution.is_empty() {
        "none given".to_string()
    } else {
        x.resolution.to_string()
    };
    let root_cause = format!(
        "NVIDIA's Xid catalog: {}. NVIDIA's recommended resolution: {resolution}. The \
         knowledge base has no entry of its own for this Xid.",
        x.description.trim_end_matches('.')
    );
    let root_cause_zh = format!(
        "NVIDIA Xid 目录的说明：`{}`。NVIDIA 建议的处理：`{resolution}`。知识库尚无此 Xid 的条目。",
        x.description.trim_end_matches('.')
    );
    Entry::from_value(serde_json::json!({
        "id": format!("xid/{}", x.xid),
        "signature": name,
        "signature_zh": name,
        "regex": XID_LINE,
        "root_cause": root_cause,
        "root_cause_zh": root_cause_zh,
        "verification_tier": "official",
        "operator_action": errata_model::xid::operator_action(x.resolution),
        "catalog": {
            "xid": x.xid,
            "name": x.name,
            "resolution": x.resolution,
            "source": x.source,
        },
    }))
    .ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_documented_xid_reads_as_its_catalog_entry() {
        let e = entry_for("NVRM: Xid (PCI:0000:3b:00): 57").expect("57 is documented");
        assert_eq!(e.id, "xid/57");
        assert!(e.signature.contains("FB_LINK_TRAINING_FAILURE_ERROR"));
        assert!(
            e.root_cause(crate::Lang::En).contains("CONTACT_SUPPORT"),
            "{}",
            e.root_cause(crate::Lang::En)
        );
        assert!(
            e.catalog_source()
                .is_some_and(|s| s.starts_with("https://docs.nvidia.com/"))
        );
        assert!(entry_for("NVRM: Xid (PCI:0000:3b:00): 9999").is_none());
    }
}
