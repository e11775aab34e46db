//! The one error type of this crate.

use std::fmt;

/// Why a bundle could not be opened or used.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Reading the file failed.
    Io(std::io::Error),
    /// The bytes are not a readable `.tar.gz` (corrupt, truncated, or not a bundle).
    Archive(String),
    /// The bundle was written in a layout this crate does not know.
    UnsupportedFormat {
        /// The bundle's `format_version`.
        found: String,
    },
    /// `manifest.json` is missing or malformed.
    Manifest(String),
    /// One member is wrong: its hash or size differs from the manifest, it is missing,
    /// or it is not listed.
    Member {
        /// The member's path in the archive.
        member: String,
        /// What is wrong with it.
        problem: String,
    },
    /// `entries.json` does not hold entries.
    Entries(String),
    /// Some entries' regexes do not compile: `(entry id, reason)`.
    Patterns(Vec<(String, String)>),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(e) => write!(f, "cannot read the bundle: {e}"),
            Error::Archive(m) => write!(f, "not a readable bundle archive: {m}"),
            Error::UnsupportedFormat { found } => write!(
                f,
                "bundle format_version {found} is not supported: this errata-consumer ({}) reads format_version {} to {}; \
                 use a consumer release that supports it",
                env!("CARGO_PKG_VERSION"),
                crate::OLDEST_FORMAT_VERSION,
                crate::FORMAT_VERSION
            ),
            Error::Manifest(m) => write!(f, "bad manifest.json: {m}"),
            Error::Member { member, problem } => write!(f, "member `{member}`: {problem}"),
            Error::Entries(m) => write!(f, "bad entries.json: {m}"),
            Error::Patterns(list) => {
                write!(f, "{} entry regex(es) do not compile:", list.len())?;
                for (id, why) in list {
                    write!(f, "\n  {id}: {}", why.lines().last().unwrap_or(why))?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        Error::Io(e)
    }
}
