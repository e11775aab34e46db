//! `link-redirect` (warning): an external URL permanently redirects (`errata links`).
//!
//! Reported by `errata links`: the URL answers 301 or 308. The message names the final
//! URL; link to it directly so the link survives the old one being retired.
