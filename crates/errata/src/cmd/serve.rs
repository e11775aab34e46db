//! `errata serve` (being built; see the issue tracker).

use std::process::ExitCode;

/// Arguments.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`errata serve` is not available in this build yet")
}
