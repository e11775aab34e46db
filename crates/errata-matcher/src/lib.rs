//! Recognise which of many known errors a line of log names.
//!
//! A [`Matcher`] is compiled once from a list of [`Pattern`]s (an entry's regex and its
//! aliases, in entry order) and then answers two questions:
//!
//! - [`Matcher::matches`]: which patterns match this text (a signature, a message)?
//!   One [`Match`] per pattern, most specific first. The checker's `regex-overlap` rule
//!   asks this of every entry's signature.
//! - [`Matcher::scan`]: which patterns match on which line of this chunk of log? Used by
//!   the consumer crate and `errata match` on logs of any size, a chunk at a time.
//!
//! How it stays fast with 10,000 patterns: each regex's syntax tree yields *required
//! literal sets* (every match contains one string of each set: `kernel\s+failed
//! \[E0*42\]` requires `kernel`, `failed` and `42]`). The set that the fewest other
//! patterns share becomes the regex's trigger; all triggers and aliases are found in one
//! pass that hashes every four-byte window of the text into a bitset of the literals'
//! rarest windows and compares literals only where a bit is set (an Aho-Corasick
//! automaton when a literal is shorter than three bytes); up to two more sets are
//! confirmed in the line; only then does
//! the regex run, on that line alone, as a Thompson NFA (a bounded backtracker). Regexes
//! with no usable literal run together as one `RegexSet`. Matching is line-oriented like
//! `grep`: regexes are rewritten so that no match can cross a `\n`, and `^`/`$` are line
//! anchors. Word boundaries (`\b`) are ASCII word boundaries: error names are ASCII, and a
//! Unicode boundary cost a table lookup per character on every line a regex ran on.
//!
//! How it stays safe with hostile patterns: each regex has a source length limit, a
//! nesting limit and a compiled-size limit ([`REGEX_SIZE_LIMIT`]); a pattern beyond them
//! is an error naming its index, never an allocation without bound. A regex that matches
//! the empty string (it would match every line) is refused too.
//!
//! # Ranking
//!
//! Most specific first, by these keys in order:
//! 1. **specificity**: the number of characters every match of the pattern spells out
//!    literally (`CUDA error: .*` has 12, `CUDA error: out of memory` has 25; an alias
//!    counts its characters but never more than its entry's regex, so that a generic
//!    entry's alias does not outrank a specific entry's regex; a case-insensitive letter counts one; `\d`, `.` and
//!    other classes count nothing; a repetition counts its minimum);
//! 2. the longer matched span;
//! 3. the earlier match in the line;
//! 4. the pattern given first.
//!
//! # Example
//!
//! ```
//! use errata_matcher::{Matcher, Pattern, Via};
//!
//! let matcher = Matcher::new(&[
//!     Pattern::new(r"CUDA error: .*"),
//!     Pattern::new(r"CUDA error: out of memory").with_aliases(["CUDA OOM"]),
//! ])
//! .map_err(|errors| format!("bad patterns: {errors:?}"))?;
//!
//! let found = matcher.matches("RuntimeError: CUDA error: out of memory (tried 2 GiB)");
//! assert_eq!(found.iter().map(|m| m.pattern).collect::<Vec<_>>(), [1, 0]);
//!
//! let log = b"step 1 ok\nstep 2: cuda oom, retrying\n";
//! let mut hits = Vec::new();
//! matcher.scan(log, |m| hits.push((m.line, m.pattern, m.via)));
//! assert_eq!(hits, [(1, 1, Via::Alias(0))]);
//! # Ok::<(), String>(())
//! ```
#![deny(missing_docs)]

mod analyze;
mod byte_commonness;
mod gram_search;
mod line_regex;
mod matcher;
mod teddy;

pub use matcher::{
    ANALYSIS_VERSION, Analysis, MAX_PATTERN_LEN, Match, Matcher, Pattern, REGEX_SIZE_LIMIT, Stats,
    Via,
};
