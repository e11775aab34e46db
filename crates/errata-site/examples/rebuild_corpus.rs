//! Builds a data directory once with [`errata_site::SiteState`], then times incremental
//! rebuilds after editing one entry (its root cause, then its signature), adding one and
//! deleting it, without checking: `cargo run --release -p errata-site --example rebuild_corpus -- DIR [N]`.
//! DIR is copied first, so it is never modified. (For profiling the incremental path
//! alone; `cargo xtask bench-site` times the real `errata serve`.)

use std::path::{Path, PathBuf};
use std::time::Instant;

fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for item in std::fs::read_dir(from)? {
        let item = item?;
        let target = to.join(item.file_name());
        if item.file_type()?.is_dir() {
            copy_dir(&item.path(), &target)?;
        } else {
            std::fs::copy(item.path(), &target)?;
        }
    }
    Ok(())
}

fn first_entry(dir: &Path) -> Option<PathBuf> {
    let mut domains: Vec<PathBuf> = std::fs::read_dir(dir.join("signatures"))
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    domains.sort();
    let mut files: Vec<PathBuf> = std::fs::read_dir(domains.first()?)
        .ok()?
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    files.into_iter().next()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: rebuild_corpus DATA_DIR [N]")?;
    let n: usize = std::env::args()
        .nth(2)
        .map_or(Ok(5), |s| s.parse())
        .map_err(|e| format!("N: {e}"))?;
    let scratch = tempfile::tempdir()?;
    let data = scratch.path().join("data");
    copy_dir(Path::new(&dir), &data)?;
    let start = Instant::now();
    let kb = errata_load::KnowledgeBase::load(&data)?;
    let (mut state, report) = errata_site::SiteState::full_build(
        kb,
        errata_site::SiteOptions::default(),
        &scratch.path().join("site"),
    )?;
    let full = start.elapsed();
    println!(
        "full build {:.0} ms ({} pages)",
        full.as_secs_f64() * 1e3,
        report.pages
    );
    let entry = first_entry(&data).ok_or("no entry")?;
    let original = std::fs::read_to_string(&entry)?;
    for (what, field) in [("root cause", "root_cause"), ("signature", "signature")] {
        let mut times = Vec::new();
        for i in 0..n {
            let mut value: serde_json::Value = serde_json::from_str(&original)?;
            let old = value[field].as_str().unwrap_or("").to_string();
            value[field] = serde_json::Value::String(format!("{old} (edit {i})"));
            std::fs::write(&entry, serde_json::to_string_pretty(&value)?)?;
            let start = Instant::now();
            let r = state.rebuild(std::slice::from_ref(&entry))?;
            times.push(start.elapsed().as_secs_f64() * 1e3);
            if i == 0 {
                println!("{what}: {r:?}");
            }
        }
        times.sort_by(f64::total_cmp);
        println!(
            "rebuild after a {what} edit: median {:.1} ms (min {:.1}, max {:.1}) over {n}",
            times[times.len() / 2],
            times[0],
            times[times.len() - 1]
        );
    }
    // An entry added (a copy under a new id), then deleted again.
    let mut value: serde_json::Value = serde_json::from_str(&original)?;
    let id = value["id"].as_str().unwrap_or("x/y").to_string();
    let new_id = format!("{id}-copy");
    value["id"] = serde_json::Value::String(new_id.clone());
    let added = entry.with_file_name(format!(
        "{}.json",
        new_id.rsplit('/').next().unwrap_or("copy")
    ));
    std::fs::write(&added, serde_json::to_string_pretty(&value)?)?;
    for what in ["added", "deleted"] {
        if what == "deleted" {
            std::fs::remove_file(&added)?;
        }
        let start = Instant::now();
        let r = state.rebuild(std::slice::from_ref(&added))?;
        println!(
            "rebuild after an entry was {what}: {:.1} ms ({r:?})",
            start.elapsed().as_secs_f64() * 1e3
        );
    }
    Ok(())
}
