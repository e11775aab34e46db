//! `errata new <domain>/<slug>`: an entry scaffold with every key.
//!
//! The scaffold passes the schema; what it leaves for the author (signature, regex,
//! root cause, Chinese text, dead ends, workarounds) is exactly what `errata check`
//! then asks for.

use std::process::ExitCode;

use anyhow::{Context as _, Result, bail};
use errata_model::date::Date;
use serde_json::json;

use super::common;

/// Arguments of `errata new`.
#[derive(clap::Args)]
pub struct Args {
    /// The new entry's id, `<domain>/<slug>` (lower-case kebab).
    pub id: String,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let config = common::config()?;
    let Some((domain, slug)) = args.id.split_once('/') else {
        bail!("`{}`: expected <domain>/<slug>", args.id)
    };
    let kebab = |s: &str| {
        !s.is_empty()
            && s.split('-').all(|p| {
                !p.is_empty()
                    && p.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            })
    };
    if !kebab(domain) || !kebab(slug) {
        bail!(
            "`{}`: domain and slug must be lower-case kebab (a-z, 0-9, `-`)",
            args.id
        );
    }
    let path = config
        .data_dir
        .join("signatures")
        .join(domain)
        .join(format!("{slug}.json"));
    if path.exists() {
        bail!("{} already exists", path.display());
    }
    let today = Date::today().to_string();
    let entry = json!({
        "id": args.id, "signature": "", "signature_zh": "", "regex": "", "domain": domain,
        "category": "runtime_error", "subcategory": null, "root_cause": "", "root_cause_type": "generic",
        "root_cause_zh": "", "versions": [], "os_specific": {},
        "dead_ends": [{"action": "", "why_fails": "", "fail_rate": 0.5, "basis": {"kind": "estimate"}, "condition": "", "sources": []}],
        "dead_ends_zh": [""],
        "workarounds": [{"action": "", "success_rate": 0.5, "basis": {"kind": "estimate"}, "how": "", "condition": "", "sources": []}],
        "workarounds_zh": [""],
        "transition_graph": {"leads_to": [], "preceded_by": [], "frequently_confused_with": []},
        "official_doc_url": null, "official_doc_section": null, "error_code": null,
        "verification_tier": "ai_generated", "confidence": 0.5, "fix_success_rate": 0.5, "resolvable": "true",
        "operator_action": "",
        "first_seen": today, "last_confirmed": today, "last_updated": today, "evidence_count": 0,
        "tags": [], "locale": "en", "aliases": []
    });
    let text = errata_check::canonical_entry(&entry.to_string()).map_err(anyhow::Error::msg)?;
    std::fs::create_dir_all(path.parent().unwrap_or(&config.data_dir))
        .with_context(|| format!("cannot create {}", path.display()))?;
    super::fmt::write_atomically(&path, text.as_bytes())
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!(
        "created {}\nnext: fill in the empty fields, then run `errata check {}`",
        path.display(),
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}
