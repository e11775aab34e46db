//! Times the bundle of a data directory: `cargo run --release -p errata-bundle --example
//! bundle_corpus -- DATA [OUT]`. Prints the load time, a baseline (serialising
//! entries.json alone) and the bundle write time, in milliseconds.

use std::path::PathBuf;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args_os().skip(1);
    let data = PathBuf::from(args.next().ok_or("usage: bundle_corpus DATA [OUT]")?);
    let scratch = tempfile::tempdir()?;
    let out = args
        .next()
        .map(PathBuf::from)
        .unwrap_or_else(|| scratch.path().join("bundle"));
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1000.0;

    let t = Instant::now();
    let kb = errata_load::KnowledgeBase::load(&data)?;
    let load = ms(t);

    // Baseline: what every bundle must do at least, entries.json from the loaded text.
    let t = Instant::now();
    let values: Vec<serde_json::Value> = kb.entries.iter().map(|d| d.value()).collect();
    let json = serde_json::to_vec(&values)?;
    let baseline = ms(t);

    let opts = errata_bundle::BundleOptions {
        out_dir: out,
        ..Default::default()
    };
    let t = Instant::now();
    let path = errata_bundle::write_bundle(&kb, &opts)?;
    let write = ms(t);
    let size = std::fs::metadata(&path)?.len();
    println!(
        "{} entries: load {load:.0} ms; entries.json alone {baseline:.0} ms ({:.1} MiB); bundle {write:.0} ms = {:.1}x baseline; {:.2} MiB",
        values.len(),
        json.len() as f64 / 1048576.0,
        write / baseline,
        size as f64 / 1048576.0
    );
    Ok(())
}
