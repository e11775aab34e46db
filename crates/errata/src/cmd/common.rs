//! Helpers shared by subcommands.
