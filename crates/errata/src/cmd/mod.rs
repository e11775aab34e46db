//! One module per subcommand: its arguments (`Args`) and `run`.

pub mod audit;
pub mod build;
pub mod bundle;
pub mod changed;
pub mod check;
pub mod decode;
pub mod explain;
pub mod fmt;
pub mod incidents;
pub mod links;
pub mod matching;
pub mod mcp;
pub mod migrate;
pub mod new;
pub mod outcome;
pub mod serve;

pub mod common;
