//! Finding every occurrence of a few short literals at once, ignoring ASCII case, with
//! Teddy's nibble masks (the packed searcher of Hyperscan, also in `aho-corasick`, which
//! has no case-insensitive or overlapping mode).
//!
//! The literals are dealt into eight buckets. For each of a literal's first three bytes,
//! two 16-byte tables say which buckets have a literal whose byte there has a given low
//! and a given high nibble; at each position of the text, the buckets left after looking
//! up its three bytes' nibbles are the only ones whose literals can start there. With
//! AVX2 that is six byte shuffles for 32 positions, so a window of text costs a fraction
//! of a hashed lookup; the literals of a bucket that is left are compared with the text.
//! Every occurrence passes its own bucket's masks, and each position is looked at once,
//! so every occurrence is found, exactly once.
//!
//! With many literals every bucket holds most nibbles and nothing is ruled out:
//! [`Teddy::new`] takes at most [`MAX_LITERALS`].

/// More literals than this rule out too little (see the module documentation).
pub(crate) const MAX_LITERALS: usize = 64;

/// Bytes of a literal that the masks look at; every literal has at least this many.
const MASKED: usize = 3;

#[derive(Debug)]
pub(crate) struct Teddy {
    /// `low[j][n]`: the buckets with a literal whose byte `j` has low nibble `n`.
    low: [[u8; 16]; MASKED],
    /// `high[j][n]`: the same for the high nibble.
    high: [[u8; 16]; MASKED],
    /// Each bucket's literals: their index (as given to [`Teddy::new`]) and bytes,
    /// ASCII lower-cased.
    buckets: [Vec<(u32, Vec<u8>)>; 8],
}

impl Teddy {
    /// Prepares `literals` (index, bytes), at most [`MAX_LITERALS`] of at least three
    /// bytes each; `None` otherwise, or when there are none.
    pub(crate) fn new(literals: &[(u32, Vec<u8>)]) -> Option<Teddy> {
        if literals.is_empty()
            || literals.len() > MAX_LITERALS
            || literals.iter().any(|(_, l)| l.len() < MASKED)
        {
            return None;
        }
        // Literals that begin alike share a bucket, so that their masks overlap rather
        // than widen eight buckets.
        let mut sorted: Vec<(u32, Vec<u8>)> = literals
            .iter()
            .map(|(i, l)| (*i, l.to_ascii_lowercase()))
            .collect();
        sorted.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
        let per_bucket = sorted.len().div_ceil(8);
        let mut teddy = Teddy {
            low: [[0; 16]; MASKED],
            high: [[0; 16]; MASKED],
            buckets: Default::default(),
        };
        for (k, (index, lit)) in sorted.into_iter().enumerate() {
            let bucket = k / per_bucket;
            let bit = 1u8 << bucket;
            for (j, &b) in lit[..MASKED].iter().enumerate() {
                for v in [b, b.to_ascii_uppercase()] {
                    teddy.low[j][usize::from(v & 15)] |= bit;
                    teddy.high[j][usize::from(v >> 4)] |= bit;
                }
            }
            teddy.buckets[bucket].push((index, lit));
        }
        Some(teddy)
    }

    /// Calls `found(index, start, end)` for every occurrence of every literal in `text`,
    /// overlapping ones included, ignoring ASCII case.
    pub(crate) fn for_each(&self, text: &[u8], found: &mut impl FnMut(usize, usize, usize)) {
        let mut start = 0;
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            start = unsafe { self.positions_avx2(text, found) };
        }
        self.positions_from(text, start, found);
    }

    /// The buckets left at `at` (which has [`MASKED`] bytes after it).
    fn buckets_at(&self, text: &[u8], at: usize) -> u8 {
        (0..MASKED).fold(0xff, |left, j| {
            let b = text[at + j];
            left & self.low[j][usize::from(b & 15)] & self.high[j][usize::from(b >> 4)]
        })
    }

    /// One position at a time, from `start` on.
    pub(crate) fn positions_from(
        &self,
        text: &[u8],
        start: usize,
        found: &mut impl FnMut(usize, usize, usize),
    ) {
        for at in start..(text.len() + 1).saturating_sub(MASKED) {
            let left = self.buckets_at(text, at);
            if left != 0 {
                self.compare(text, at, left, found);
            }
        }
    }

    /// 32 positions at a time: the three 32-byte loads from a position and the next
    /// two, each split into nibbles and looked up in its masks by byte shuffles. Returns
    /// the first position it did not look at (the last few, whose loads would run past
    /// the text, are left to the caller).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn positions_avx2(&self, text: &[u8], found: &mut impl FnMut(usize, usize, usize)) -> usize {
        use std::arch::x86_64::*;
        let table = |mask: &[u8; 16]| {
            // SAFETY: `mask` is 16 readable bytes; the load is unaligned.
            _mm256_broadcastsi128_si256(unsafe { _mm_loadu_si128(mask.as_ptr().cast()) })
        };
        let low = [
            table(&self.low[0]),
            table(&self.low[1]),
            table(&self.low[2]),
        ];
        let high = [
            table(&self.high[0]),
            table(&self.high[1]),
            table(&self.high[2]),
        ];
        let nibble = _mm256_set1_epi8(15);
        let mut left = [0u8; 32];
        let mut i = 0;
        while let Some(bytes) = text.get(i..i + 32 + MASKED - 1) {
            let mut buckets = _mm256_set1_epi8(-1);
            for j in 0..MASKED {
                // SAFETY: `bytes` holds 32 bytes from `j` on (j < MASKED); unaligned load.
                let v = unsafe { _mm256_loadu_si256(bytes.as_ptr().add(j).cast()) };
                let lo = _mm256_shuffle_epi8(low[j], _mm256_and_si256(v, nibble));
                let hi = _mm256_shuffle_epi8(
                    high[j],
                    _mm256_and_si256(_mm256_srli_epi16::<4>(v), nibble),
                );
                buckets = _mm256_and_si256(buckets, _mm256_and_si256(lo, hi));
            }
            let empty = _mm256_movemask_epi8(_mm256_cmpeq_epi8(buckets, _mm256_setzero_si256()));
            let mut some = !(empty as u32);
            if some != 0 {
                // SAFETY: `left` is 32 writable bytes; the store is unaligned.
                unsafe { _mm256_storeu_si256(left.as_mut_ptr().cast(), buckets) };
                while some != 0 {
                    let k = some.trailing_zeros() as usize;
                    some &= some - 1;
                    self.compare(text, i + k, left[k], found);
                }
            }
            i += 32;
        }
        i
    }

    /// Compares the literals of the buckets in `left` with the text at `at`.
    #[cold]
    fn compare(
        &self,
        text: &[u8],
        at: usize,
        mut left: u8,
        found: &mut impl FnMut(usize, usize, usize),
    ) {
        while left != 0 {
            let bucket = left.trailing_zeros() as usize;
            left &= left - 1;
            for (index, lit) in &self.buckets[bucket] {
                if text
                    .get(at..at + lit.len())
                    .is_some_and(|t| t.eq_ignore_ascii_case(lit))
                {
                    found(*index as usize, at, at + lit.len());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_it_cannot_rule_out() {
        let lit = |s: &str| (0, s.as_bytes().to_vec());
        assert!(Teddy::new(&[]).is_none());
        assert!(Teddy::new(&[lit("ab")]).is_none());
        assert!(Teddy::new(&vec![lit("abc"); MAX_LITERALS + 1]).is_none());
        assert!(Teddy::new(&vec![lit("abc"); MAX_LITERALS]).is_some());
    }

    #[test]
    fn the_vectorised_loop_finds_what_the_one_position_loop_finds() {
        let literals: Vec<(u32, Vec<u8>)> = ["cuda", "NCCL", "err", "error", "): ", "0x1f"]
            .iter()
            .enumerate()
            .map(|(i, s)| (i as u32 * 3, s.as_bytes().to_vec()))
            .collect();
        let teddy = Teddy::new(&literals).unwrap();
        let line = b"CUDA error: an ERR0r in nccl (code 0x1F): err\n";
        let text: Vec<u8> = line
            .iter()
            .cycle()
            .take(line.len() * 7 + 5)
            .copied()
            .collect();
        let mut vectorised = Vec::new();
        teddy.for_each(&text, &mut |l, s, e| vectorised.push((l, s, e)));
        vectorised.sort_unstable();
        let mut one_at_a_time = Vec::new();
        teddy.positions_from(&text, 0, &mut |l, s, e| one_at_a_time.push((l, s, e)));
        one_at_a_time.sort_unstable();
        assert_eq!(vectorised, one_at_a_time);
        // Per line: cuda, error + err, ERR, nccl, ): , 0x1F, err (the last, and
        // the fifth line's tail is cut).
        assert_eq!(vectorised.len(), 8 * 7 + 1, "{vectorised:?}");
    }
}
