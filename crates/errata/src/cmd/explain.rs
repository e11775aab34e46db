//! `errata explain RULE`: a rule's documentation, like `rustc --explain`.

use std::process::ExitCode;

use anyhow::Result;

/// Arguments of `errata explain`.
#[derive(clap::Args)]
pub struct Args {
    /// The rule id (e.g. `date-order`); omit to list every rule.
    pub rule: Option<String>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    match args.rule {
        None => {
            for r in errata_check::RULES {
                println!("{:<22} {:<8} {}", r.id, r.severity.as_str(), r.summary);
            }
            Ok(ExitCode::SUCCESS)
        }
        Some(id) => match errata_check::rule_info(&id) {
            Some(r) => {
                println!(
                    "# {} ({})\n\n{}\n\n{}",
                    r.id,
                    r.severity.as_str(),
                    r.summary,
                    r.doc
                );
                Ok(ExitCode::SUCCESS)
            }
            None => {
                eprintln!("error: no rule `{id}`; `errata explain` lists them all");
                Ok(ExitCode::from(2))
            }
        },
    }
}
