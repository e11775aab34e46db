//! `errata new`.

use std::process::ExitCode;

/// Arguments.
#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<ExitCode> {
    anyhow::bail!("`errata new` is not available in this build yet")
}
