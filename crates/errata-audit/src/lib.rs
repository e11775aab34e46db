//! Known-bad environments, before anything crashes: cargo-audit for GPU stacks.
//!
//! [`audit`] reads environment reports ([`facts`]), derives what the cited tables
//! ([`tables`]) say about them, and names every entry whose `affects` conditions hold:
//!
//! | derived fact | `true` when |
//! |---|---|
//! | `driver_too_old_for_torch_cuda` | the driver is older than the CUDA PyTorch was built with needs (CUDA 11 on: the major version's minor-version-compatibility branch; before: the release's own driver) |
//! | `gpu_not_in_torch_build` | some GPU's compute capability has neither a binary of its major version at or below it nor PTX at or below it in PyTorch's build |
//! | `torch_without_cuda_on_gpu` | PyTorch is a CPU-only build and the report shows an NVIDIA GPU or driver |
//! | `nccl_older_than_torch_pin` | the NCCL wheel PyTorch's release pins on PyPI is installed at an older version (the same package, for a build of the same CUDA major) |
//!
//! A derived fact is left out when a fact it needs is missing: the audit never guesses.
//! Findings are sorted by entry id; a healthy report has none.

pub mod facts;
pub mod tables;
pub mod version;

use std::collections::BTreeMap;

use errata_consumer::{Entry, Index};
use serde::Serialize;

pub use facts::Facts;

/// One entry whose conditions an environment meets.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The entry.
    pub id: String,
    /// Each fact the condition named, with the value that met it.
    pub because: BTreeMap<String, String>,
    /// `error` (the error will happen) or `warning` (it can).
    pub severity: String,
    /// Why, in the language asked for.
    pub note: String,
    /// The entry's best workaround (its first), in the language asked for.
    pub fix: String,
}

/// What an audit found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The facts read, and derived.
    pub facts: BTreeMap<String, serde_json::Value>,
    pub findings: Vec<Finding>,
}

/// The facts the tables add to a report's own.
fn derive(f: &mut Facts) -> BTreeMap<&'static str, String> {
    let mut out = BTreeMap::new();
    let windows =
        f.os.as_deref()
            .is_some_and(|o| o.to_ascii_lowercase().contains("windows"));
    if f.compute_capability.is_empty() {
        let mut ccs: Vec<String> = f
            .gpu
            .iter()
            .filter_map(|g| tables::compute_capability(g))
            .map(str::to_string)
            .collect();
        ccs.dedup();
        f.compute_capability = ccs;
    }
    let cuda_build = f.torch_cuda.clone().filter(|c| c != "none");
    if let (Some(driver), Some(build)) = (&f.driver, &cuda_build)
        && let Some(minimum) = tables::minimum_driver(build, windows)
        && let (Some(d), Some(m)) = (version::parse(driver), version::parse(minimum))
    {
        out.insert(
            "driver_too_old_for_torch_cuda",
            version::compare(&d, &m).is_lt().to_string(),
        );
        out.insert("driver_minimum_for_torch_cuda", minimum.to_string());
    }
    if f.torch_arch_list.is_empty()
        && let (Some(torch), Some(build)) = (&f.torch, &cuda_build)
        && let Some((arches, release)) = tables::torch_arches(torch, build)
    {
        f.torch_arch_list = arches;
        f.torch_arch_list_source = Some(format!(
            "release wheels of torch {release} for CUDA {build} (cited table)"
        ));
    }
    if !f.torch_arch_list.is_empty() && !f.compute_capability.is_empty() {
        let missing = f
            .compute_capability
            .iter()
            .any(|cc| !tables::runs_on(&f.torch_arch_list, cc));
        out.insert("gpu_not_in_torch_build", missing.to_string());
    }
    if f.torch_cuda.as_deref() == Some("none") {
        let gpu = !f.gpu.is_empty() || f.driver.is_some();
        out.insert("torch_without_cuda_on_gpu", gpu.to_string());
    }
    if let Some(torch) = &f.torch
        && let Some((package, pinned)) = tables::torch_nccl_pin(torch)
        && let Some(installed) = f.nvidia_wheels.get(package)
        && same_cuda_major(package, f.torch_cuda.as_deref())
        && let (Some(i), Some(p)) = (version::parse(installed), version::parse(pinned))
    {
        out.insert(
            "nccl_older_than_torch_pin",
            version::compare(&i, &p).is_lt().to_string(),
        );
        out.insert("nccl_pinned_by_torch", format!("{package}=={pinned}"));
    }
    out
}

/// Whether a PyTorch build is for the CUDA major of the pinned `package`
/// (`nvidia-nccl-cu12`). `torch_cuda` is what the facts already read from collect_env or
/// from the version's `+cuXYZ` (`none` for a CPU-only build, which pins nothing); when
/// nothing says, a plain `torch 2.2.0` from pip is the PyPI build the table is about.
fn same_cuda_major(package: &str, torch_cuda: Option<&str>) -> bool {
    let Some((_, major)) = package.rsplit_once("-cu") else {
        return false;
    };
    match torch_cuda {
        Some("none") => false,
        Some(cuda) => cuda.split('.').next() == Some(major),
        None => true,
    }
}

/// The entry's first workaround as written (an entry puts the fix for the common case
/// first), in the language asked for.
fn first_fix(e: &Entry, zh: bool) -> String {
    let texts = e.texts();
    match (zh, texts.workarounds_zh.first(), texts.workarounds.first()) {
        (true, Some(z), _) if !z.is_empty() => z.clone(),
        (_, _, Some(w)) => w.action.clone(),
        _ => String::new(),
    }
}

/// Audits the environment `text` describes against the `affects` of `index`'s entries,
/// and names the known errors the reports themselves show (`nvidia-smi` failing with
/// `Driver/library version mismatch`, PyTorch's warning that the GPU is not supported):
/// such a finding's `because` is `{"report_line": …}`. `zh` picks the language of notes
/// and fixes.
pub fn audit(text: &str, index: &Index, zh: bool) -> Report {
    let entries = index.entries();
    let mut f = facts::read(text);
    let derived = derive(&mut f);
    let mut values: BTreeMap<String, Vec<String>> = f
        .by_name()
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    for (k, v) in &derived {
        values.insert((*k).to_string(), vec![v.clone()]);
    }
    let mut findings = Vec::new();
    for e in entries {
        for a in &e.affects {
            let mut because = BTreeMap::new();
            let met = !a.when.is_empty()
                && a.when.iter().all(|(fact, condition)| {
                    let hit = values.get(fact).and_then(|vs| {
                        vs.iter()
                            .find(|v| version::holds(condition, v) == Some(true))
                    });
                    if let Some(v) = hit {
                        because.insert(fact.clone(), v.clone());
                    }
                    hit.is_some()
                });
            if !met {
                continue;
            }
            findings.push(Finding {
                id: e.id.clone(),
                because,
                severity: a.severity.clone().unwrap_or_else(|| "error".into()),
                note: if zh && !a.note_zh.is_empty() {
                    a.note_zh.clone()
                } else {
                    a.note.clone()
                },
                fix: first_fix(e, zh),
            });
            break;
        }
    }
    // What the reports show outright: each known error once, unless a condition already
    // named its entry.
    for found in index.match_text(text) {
        let e = found.entry;
        if findings.iter().any(|f: &Finding| f.id == e.id) {
            continue;
        }
        let line = found.text.trim();
        findings.push(Finding {
            id: e.id.clone(),
            because: BTreeMap::from([(
                "report_line".to_string(),
                line.chars().take(200).collect(),
            )]),
            severity: "error".into(),
            note: if zh {
                format!(
                    "报告中已出现此错误：{}",
                    e.signature(errata_consumer::Lang::Zh)
                )
            } else {
                format!("The report itself shows this error: {}", e.signature)
            },
            fix: first_fix(e, zh),
        });
    }
    findings.sort_by(|a, b| a.id.cmp(&b.id));
    let mut facts: BTreeMap<String, serde_json::Value> = match serde_json::to_value(&f) {
        Ok(serde_json::Value::Object(m)) => m.into_iter().collect(),
        _ => BTreeMap::new(),
    };
    for (k, v) in derived {
        facts.insert(k.to_string(), serde_json::Value::String(v));
    }
    Report { facts, findings }
}
