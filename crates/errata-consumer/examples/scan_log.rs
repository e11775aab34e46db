//! Scan a log with a bundle: `cargo run -p errata-consumer --example scan_log -- BUNDLE [LOG] [--zh]`.
//!
//! Reads the log from the file, or from standard input without one, in bounded memory,
//! and prints each known error with what to try.

use std::process::ExitCode;

use errata_consumer::{Bundle, Lang};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let lang = if args.iter().any(|a| a == "--zh") {
        Lang::Zh
    } else {
        Lang::En
    };
    let paths: Vec<&String> = args.iter().filter(|a| !a.starts_with("--")).collect();
    let Some(bundle_path) = paths.first() else {
        eprintln!("usage: scan_log BUNDLE [LOG] [--zh]");
        return ExitCode::from(2);
    };
    let bundle = match Bundle::open(bundle_path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let m = bundle.manifest();
    eprintln!("errata data {} ({} entries)", m.version, m.counts.entries);
    let print = |found: errata_consumer::Found<'_>| {
        let advice = found.entry.advice(lang);
        println!("line {}: {} [{}]", found.line, found.entry.id, found.text);
        println!("  cause: {}", advice.root_cause);
        for step in advice.dead_ends.iter().take(2) {
            println!("  don't: {} ({})", step.action, step.detail);
        }
        for step in advice.workarounds.iter().take(2) {
            println!("  try:   {}", step.action);
        }
    };
    let result = match paths.get(1) {
        Some(log) => std::fs::File::open(log).and_then(|f| bundle.scan(f, print)),
        None => bundle.scan(std::io::stdin().lock(), print),
    };
    match result {
        Ok(stats) => {
            eprintln!("{} lines, {} known errors", stats.lines, stats.matches);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
