//! What checking one URL found.

use serde::{Deserialize, Serialize};

/// The result of checking one distinct URL (after following its redirects).
///
/// This is also what the cache stores, so the serialized form is part of the cache file
/// format: `{"result": "alive", "status": 200}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "result", rename_all = "kebab-case")]
pub enum Outcome {
    /// The URL answered with a success status, directly or through temporary redirects.
    Alive {
        /// The final status code.
        status: u16,
    },
    /// The URL works, but only through one or more permanent redirects (301/308): it
    /// should be replaced with `to`.
    Moved {
        /// The final status code.
        status: u16,
        /// Where the permanent redirects lead (the URL to write instead).
        to: String,
    },
    /// The URL is dead: an error status, a connection failure, a timeout, a redirect loop.
    Dead {
        /// The HTTP status, when the server answered with one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status: Option<u16>,
        /// Why, in a few words (`HTTP 404 Not Found`, `redirect loop: a → b → a`).
        reason: String,
    },
    /// No verdict: the host kept answering `429 Too Many Requests`. Never cached, never an
    /// error; the next run tries again.
    Unknown {
        /// Why there is no verdict.
        reason: String,
    },
}

impl Outcome {
    /// Whether this outcome is worth keeping in the cache: a verdict, not a shrug.
    pub fn is_verdict(&self) -> bool {
        !matches!(self, Outcome::Unknown { .. })
    }
}
