//! `link-dead` (error): an external URL does not answer with success (`errata links`).
//!
//! Reported by `errata links`, not by `errata check`: the URL answered 4xx/5xx (after
//! retries, honouring `429 Retry-After`), timed out, refused the connection, or redirects
//! in a loop. Replace it with a working URL or an archived copy.
