//! Finding every occurrence of many literals at once, ignoring ASCII case, by hashing one
//! four-byte window ("gram") of each.
//!
//! An Aho-Corasick automaton over 10,000 literals takes a table lookup and a match check
//! for every byte of a log (about 0.5 GB/s on one core, whatever the automaton's size).
//! Most log bytes are far from any literal, so this search asks a cheaper question first:
//! each literal is represented by one of its grams, the one made of the rarest bytes,
//! and every four-byte window of the text is hashed into a bitset of those grams. Only
//! where a bit is set are the literals with that gram compared with the text around it.
//! Every occurrence of a literal contains its gram at a fixed offset, so every occurrence
//! is found, exactly once, and the answers are those of an overlapping, ASCII
//! case-insensitive Aho-Corasick search (the tests compare the two).
//!
//! A three-byte literal has no gram of its own: it is represented by the 256 grams made
//! of it and the byte before it, and an occurrence at the very start of the text (no byte
//! before it) is checked directly. Shorter literals cannot be represented; the caller
//! keeps an automaton for a set that has one ([`GramSearch::new`] says `None`).

/// Literals shorter than this cannot be searched for by grams.
pub(crate) const MIN_LITERAL_LEN: usize = 3;

/// A literal set prepared for searching by grams.
#[derive(Debug)]
pub(crate) struct GramSearch {
    /// log2 of the number of bits in `filter`.
    bits: u32,
    /// Bit `hash(gram)` is set for every literal's gram.
    filter: Vec<u64>,
    /// Every literal's gram(s), sorted by hash (then gram, literal, offset).
    slots: Vec<Slot>,
    /// `slots[directory[h >> DIRECTORY_SHIFT]..directory[(h >> DIRECTORY_SHIFT) + 1]]`
    /// holds every slot whose hash is `h`: one lookup instead of a binary search at
    /// each window whose bit is set.
    directory: Vec<u32>,
    /// The literals, ASCII lower-cased.
    literals: Vec<Vec<u8>>,
    /// The three-byte literals, checked at the text's start.
    three_byte: Vec<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Slot {
    hash: u32,
    /// The gram, folded (see [`fold`]).
    gram: u32,
    literal: u32,
    /// Where the gram starts relative to the literal: -1 for a three-byte literal (its
    /// gram begins with the byte before it).
    offset: i32,
}

impl GramSearch {
    /// Prepares `literals` (any case); `None` when one is shorter than
    /// [`MIN_LITERAL_LEN`] or there are none.
    pub(crate) fn new(literals: &[Vec<u8>]) -> Option<GramSearch> {
        if literals.is_empty() || literals.iter().any(|l| l.len() < MIN_LITERAL_LEN) {
            return None;
        }
        let literals: Vec<Vec<u8>> = literals.iter().map(|l| l.to_ascii_lowercase()).collect();
        let mut grams: Vec<(u32, u32, i32)> = Vec::new();
        let mut three_byte = Vec::new();
        for (i, lit) in literals.iter().enumerate() {
            let i = i as u32;
            if lit.len() == 3 {
                three_byte.push(i);
                let mut seen = std::collections::BTreeSet::new();
                for before in 0..=255u8 {
                    let gram = fold(u32::from_le_bytes([before, lit[0], lit[1], lit[2]]));
                    if seen.insert(gram) {
                        grams.push((gram, i, -1));
                    }
                }
            } else {
                let offset = (0..=lit.len() - 4)
                    .min_by_key(|&o| lit[o..o + 4].iter().map(|&b| commonness(b)).sum::<u32>())
                    .unwrap_or(0);
                let gram = fold(u32::from_le_bytes([
                    lit[offset],
                    lit[offset + 1],
                    lit[offset + 2],
                    lit[offset + 3],
                ]));
                grams.push((gram, i, offset as i32));
            }
        }
        // About one bit in 128 set: a window of ordinary text sets off a comparison rarely,
        // and the bitset (at most 512 KiB) stays in the cache.
        let bits = (grams.len().max(1) * 128)
            .next_power_of_two()
            .trailing_zeros()
            .clamp(10, 22);
        let mut filter = vec![0u64; 1 << (bits - 6)];
        let mut slots: Vec<Slot> = grams
            .into_iter()
            .map(|(gram, literal, offset)| {
                let hash = hash(gram, bits);
                filter[(hash >> 6) as usize] |= 1 << (hash & 63);
                Slot {
                    hash,
                    gram,
                    literal,
                    offset,
                }
            })
            .collect();
        slots.sort_unstable();
        let buckets = 1usize << (bits - DIRECTORY_SHIFT);
        let directory = (0..=buckets)
            .map(|b| slots.partition_point(|s| ((s.hash >> DIRECTORY_SHIFT) as usize) < b) as u32)
            .collect();
        Some(GramSearch {
            bits,
            filter,
            slots,
            directory,
            literals,
            three_byte,
        })
    }

    /// Calls `found(literal, start, end)` for every occurrence of every literal in
    /// `text`, overlapping ones included, ignoring ASCII case.
    pub(crate) fn for_each(&self, text: &[u8], mut found: impl FnMut(usize, usize, usize)) {
        for &l in &self.three_byte {
            let lit = &self.literals[l as usize];
            if text.len() >= 3 && text[..3].eq_ignore_ascii_case(lit) {
                found(l as usize, 0, 3);
            }
        }
        for (i, window) in text.windows(4).enumerate() {
            let gram = fold(u32::from_le_bytes([
                window[0], window[1], window[2], window[3],
            ]));
            let hash = hash(gram, self.bits);
            if self.filter[(hash >> 6) as usize] & (1 << (hash & 63)) != 0 {
                self.compare(text, i, gram, hash, &mut found);
            }
        }
    }

    /// Compares the literals whose gram hashes to `hash` with the text around window
    /// `at`.
    #[cold]
    fn compare(
        &self,
        text: &[u8],
        at: usize,
        gram: u32,
        hash: u32,
        found: &mut impl FnMut(usize, usize, usize),
    ) {
        let bucket = (hash >> DIRECTORY_SHIFT) as usize;
        let slots =
            &self.slots[self.directory[bucket] as usize..self.directory[bucket + 1] as usize];
        for slot in slots {
            if slot.hash != hash || slot.gram != gram {
                continue;
            }
            let lit = &self.literals[slot.literal as usize];
            let Some(start) = (at as i64 - i64::from(slot.offset))
                .try_into()
                .ok()
                .filter(|&s: &usize| s + lit.len() <= text.len())
            else {
                continue;
            };
            if text[start..start + lit.len()].eq_ignore_ascii_case(lit) {
                found(slot.literal as usize, start, start + lit.len());
            }
        }
    }
}

const HASH_MULTIPLIER: u32 = 0x9E37_79B1;
/// Hashes that share a directory bucket: 32 bits of the filter per bucket, so that the
/// directory is an eighth of the filter's size and a bucket holds about one slot.
const DIRECTORY_SHIFT: u32 = 5;

#[inline]
fn hash(gram: u32, bits: u32) -> u32 {
    gram.wrapping_mul(HASH_MULTIPLIER) >> (32 - bits)
}

/// Sets bit 5 of every byte: ASCII letters lose their case (other bytes may merge with
/// a neighbour, which only costs a comparison, never an occurrence).
fn fold(four: u32) -> u32 {
    four | 0x2020_2020
}

/// How often a byte occurs in log text, roughly (higher: more often). A literal is
/// represented by its window of the least common bytes, so that ordinary lines rarely
/// set off a comparison: brackets and other punctuation before capitals before digits
/// before lower-case letters before spaces.
fn commonness(b: u8) -> u32 {
    match b {
        b' ' => 6,
        b'e' | b't' | b'a' | b'o' | b'i' | b'n' | b's' | b'r' => 5,
        b'a'..=b'z' | b'A'..=b'Z' => 4,
        b'0'..=b'9' | b'.' | b':' | b'-' | b'_' | b'/' | b',' => 3,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::{AhoCorasickBuilder, MatchKind};

    /// What an overlapping, ASCII case-insensitive Aho-Corasick search finds.
    fn automaton(literals: &[Vec<u8>], text: &[u8]) -> Vec<(usize, usize, usize)> {
        let ac = AhoCorasickBuilder::new()
            .match_kind(MatchKind::Standard)
            .ascii_case_insensitive(true)
            .build(literals)
            .unwrap();
        let mut v: Vec<_> = ac
            .find_overlapping_iter(text)
            .map(|m| (m.pattern().as_usize(), m.start(), m.end()))
            .collect();
        v.sort_unstable();
        v
    }

    fn grams(literals: &[Vec<u8>], text: &[u8]) -> Vec<(usize, usize, usize)> {
        let mut v = Vec::new();
        GramSearch::new(literals)
            .unwrap()
            .for_each(text, |l, s, e| v.push((l, s, e)));
        v.sort_unstable();
        v
    }

    /// A small generator, so that the cases are the same on every run.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
        fn bytes(&mut self, alphabet: &[u8], len: usize) -> Vec<u8> {
            (0..len)
                .map(|_| alphabet[self.below(alphabet.len() as u64) as usize])
                .collect()
        }
    }

    #[test]
    fn finds_what_an_overlapping_automaton_finds() {
        // A small alphabet (case, digits, brackets, a newline, bytes that fold onto
        // others, UTF-8) makes overlaps, repeats and near misses common.
        let alphabet = b"aAbB1]2[ \n@`{\xc3\xa9";
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        for case in 0..400 {
            let n = 1 + rng.below(40) as usize;
            let literals: Vec<Vec<u8>> = (0..n)
                .map(|_| {
                    let len = 3 + rng.below(6) as usize;
                    rng.bytes(alphabet, len)
                })
                .collect();
            let len = rng.below(300) as usize;
            let text = rng.bytes(alphabet, len);
            assert_eq!(
                grams(&literals, &text),
                automaton(&literals, &text),
                "case {case}: {literals:?} in {text:?}"
            );
        }
    }

    #[test]
    fn edges_of_the_text_and_duplicate_literals() {
        let literals = vec![b"abc".to_vec(), b"ABC".to_vec(), b"bcd1".to_vec()];
        for text in [&b"abc"[..], b"abcd1", b"xabc", b"ab", b"", b"ABCD1ABC"] {
            assert_eq!(
                grams(&literals, text),
                automaton(&literals, text),
                "{text:?}"
            );
        }
        assert!(GramSearch::new(&[b"ab".to_vec()]).is_none());
        assert!(GramSearch::new(&[]).is_none());
    }
}
