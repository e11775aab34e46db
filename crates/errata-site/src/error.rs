use std::fmt;
use std::path::PathBuf;

/// Why a site could not be built or written. The previous output is untouched in every
/// case: nothing is written until the whole site has rendered.
#[derive(Debug)]
pub struct Error {
    kind: ErrorKind,
    path: Option<PathBuf>,
    message: String,
}

/// The kind of an [`Error`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A template (embedded or from the override directory) failed to parse or render.
    Template,
    /// A UI-strings file (`i18n/<lang>.toml`) is missing or malformed.
    Strings,
    /// A run-records file under `runs/` is not valid JSON of the run-record shape.
    RunRecords,
    /// Reading or writing a file failed.
    Io,
}

impl Error {
    pub(crate) fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            path: None,
            message: message.into(),
        }
    }

    pub(crate) fn with_path(mut self, path: impl Into<PathBuf>) -> Error {
        self.path = Some(path.into());
        self
    }

    /// A lock shared by the rendering threads was poisoned: one of them panicked. (Rayon
    /// re-raises such a panic first, so this is the report of last resort, not an unwrap.)
    pub(crate) fn renderer_panicked() -> Error {
        Error::new(ErrorKind::Io, "a renderer panicked")
    }

    pub(crate) fn io(path: impl Into<PathBuf>, err: std::io::Error) -> Error {
        Error::new(ErrorKind::Io, err.to_string()).with_path(path)
    }

    /// What kind of failure this is.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The file involved, when there is one.
    pub fn path(&self) -> Option<&std::path::Path> {
        self.path.as_deref()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.path {
            Some(path) => write!(f, "{}: {}", path.display(), self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {}
