//! The one error type of this crate.

use std::fmt;
use std::path::{Path, PathBuf};

/// Why a bundle could not be written, read or compared. (A bundle that reads but is
/// wrong is a [`crate::VerifyReport`] with problems, not an error.)
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a file failed.
    Io {
        /// The file.
        path: PathBuf,
        /// The failure.
        source: std::io::Error,
    },
    /// A bundle given as input is unreadable or fails verification.
    Bundle {
        /// The bundle file.
        path: PathBuf,
        /// What is wrong with it.
        source: errata_consumer::Error,
    },
    /// Building the SQLite database failed.
    Sqlite(rusqlite::Error),
    /// An input other than the data is wrong (a schema file, a version, an option).
    Invalid(String),
}

impl Error {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Error {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    pub(crate) fn bundle(path: &Path, source: errata_consumer::Error) -> Error {
        Error::Bundle {
            path: path.to_path_buf(),
            source,
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Bundle { path, source } => write!(f, "{}: {source}", path.display()),
            Error::Sqlite(e) => write!(f, "building the SQLite database: {e}"),
            Error::Invalid(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            Error::Bundle { source, .. } => Some(source),
            Error::Sqlite(e) => Some(e),
            Error::Invalid(_) => None,
        }
    }
}

impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        Error::Sqlite(e)
    }
}
