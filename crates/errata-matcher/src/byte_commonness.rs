//! How common a byte is in log text, for the searches that pick what to look for.

/// How often a byte occurs in log text, roughly (higher: more often): brackets and other
/// punctuation before capitals before digits before lower-case letters before spaces.
/// The gram search represents a literal by its window of the least common bytes, and
/// Teddy weighs what its masks let through by it, so that ordinary lines rarely set off a
/// comparison.
pub(crate) fn commonness(b: u8) -> u32 {
    match b {
        b' ' => 6,
        b'e' | b't' | b'a' | b'o' | b'i' | b'n' | b's' | b'r' => 5,
        b'a'..=b'z' | b'A'..=b'Z' => 4,
        b'0'..=b'9' | b'.' | b':' | b'-' | b'_' | b'/' | b',' => 3,
        _ => 0,
    }
}
