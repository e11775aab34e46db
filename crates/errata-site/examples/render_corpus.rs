//! Renders a data directory in memory and prints how long each step took, without
//! checking: `cargo run --release -p errata-site --example render_corpus -- DIR [OUT]`.
//! With OUT, also times rendering straight into OUT as `errata build` does (twice: into
//! a fresh directory, then replacing it). (For profiling the renderer alone; `cargo xtask bench`
//! times the real `errata build`.)

use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = std::env::args()
        .nth(1)
        .ok_or("usage: render_corpus DATA_DIR")?;
    let start = Instant::now();
    let kb = errata_load::KnowledgeBase::load(dir.as_ref())?;
    let loaded = start.elapsed();
    let start = Instant::now();
    let site = errata_site::render(&kb, &errata_site::SiteOptions::default())?;
    let rendered = start.elapsed();
    println!(
        "load {:.0} ms, render {:.0} ms: {} pages, {} files, {:.1} MiB",
        loaded.as_secs_f64() * 1e3,
        rendered.as_secs_f64() * 1e3,
        site.pages,
        site.files.len(),
        site.files.total_bytes() as f64 / (1024.0 * 1024.0)
    );
    if let Some(out) = std::env::args().nth(2) {
        // What `errata build` does: render again, each file written as it is rendered.
        let out = std::path::Path::new(&out);
        for what in ["fresh", "replacing"] {
            let start = Instant::now();
            let written = errata_site::render_into(&kb, &errata_site::SiteOptions::default(), out)?;
            let took = start.elapsed();
            let start = Instant::now();
            written.replaced.remove();
            println!(
                "render into {} ({what}) {:.0} ms, then removing the old site {:.0} ms",
                out.display(),
                took.as_secs_f64() * 1e3,
                start.elapsed().as_secs_f64() * 1e3
            );
        }
    }
    Ok(())
}
