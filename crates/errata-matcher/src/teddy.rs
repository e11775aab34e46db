//! Finding every occurrence of a few short literals at once, ignoring ASCII case, with
//! Teddy's nibble masks (the packed searcher of Hyperscan, also in `aho-corasick`, which
//! has no case-insensitive or overlapping mode).
//!
//! Each literal is masked by its three rarest consecutive bytes (by
//! [`crate::byte_commonness::commonness`]; its first three at a tie), not necessarily its
//! first: `graph` by `aph`, since `gra` begins every `gradient` of a training log. The
//! literals are dealt into eight buckets, those masked alike together and the rest
//! paired so that the masks let through as little common text as they can (see
//! [`buckets_of`]). For each of the three masked bytes,
//! two 16-byte tables say which buckets have a literal whose byte there has a given low
//! and a given high nibble; at each position of the text, the buckets left after looking
//! up its three bytes' nibbles are the only ones whose literals' masked bytes can start
//! there, and each such literal is compared from as many bytes before. With
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
    /// Each bucket's literals: their index (as given to [`Teddy::new`]), bytes (ASCII
    /// lower-cased) and where in them the masked bytes start.
    buckets: [Vec<(u32, Vec<u8>, usize)>; 8],
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
        let mut teddy = Teddy {
            low: [[0; 16]; MASKED],
            high: [[0; 16]; MASKED],
            buckets: Default::default(),
        };
        for (bucket, group) in buckets_of(literals).into_iter().enumerate() {
            let bit = 1u8 << bucket;
            for (j, (low, high)) in group.masks.iter().enumerate() {
                for n in 0..16 {
                    if low & (1 << n) != 0 {
                        teddy.low[j][n] |= bit;
                    }
                    if high & (1 << n) != 0 {
                        teddy.high[j][n] |= bit;
                    }
                }
            }
            teddy.buckets[bucket] = group.literals;
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
            for (index, lit, offset) in &self.buckets[bucket] {
                let Some(start) = at.checked_sub(*offset) else {
                    continue;
                };
                if text
                    .get(start..start + lit.len())
                    .is_some_and(|t| t.eq_ignore_ascii_case(lit))
                {
                    found(*index as usize, start, start + lit.len());
                }
            }
        }
    }
}

/// Literals that share a bucket, and the nibbles its masks let through.
struct Group {
    /// (index, bytes ASCII lower-cased, offset of the masked bytes), sorted.
    literals: Vec<(u32, Vec<u8>, usize)>,
    /// For each masked byte: the low nibbles and the high nibbles let through, as bits.
    masks: [(u16, u16); MASKED],
}

/// What a position of log text costs a bucket with `masks` and `literals` literals,
/// roughly: how likely a byte triple passes the masks (each byte weighted by how common
/// it is, see [`crate::byte_commonness::commonness`]), times the literals then compared.
fn cost(masks: &[(u16, u16); MASKED], literals: usize) -> u64 {
    let passes: u64 = masks
        .iter()
        .map(|&(low, high)| {
            (0..=255u8)
                .filter(|b| low & (1 << (b & 15)) != 0 && high & (1 << (b >> 4)) != 0)
                .map(|b| 1u64 << crate::byte_commonness::commonness(b))
                .sum::<u64>()
        })
        .product();
    passes * literals as u64
}

/// The masks of two groups together.
fn union(a: &[(u16, u16); MASKED], b: &[(u16, u16); MASKED]) -> [(u16, u16); MASKED] {
    std::array::from_fn(|j| (a[j].0 | b[j].0, a[j].1 | b[j].1))
}

/// The literals dealt into at most eight buckets. Literals whose masked bytes agree
/// start in one group; then the two groups whose merging adds least to the cost (see
/// [`cost`]) are merged until eight are left. Dealing the literals in sorted order
/// instead put `nvml`, `olver`, `par`, `returned` and `tatu` in one bucket, whose masks
/// let through `per`, `tra`, `ter` and much of English: a comparison every ninety bytes
/// of a training log.
fn buckets_of(literals: &[(u32, Vec<u8>)]) -> Vec<Group> {
    // Each literal is masked by its [`MASKED`] rarest consecutive bytes (the first such
    // run at a tie): a literal that begins with a common trigram (`gra` of `graph`, in
    // every `gradient` of a training log) would set off a comparison at each.
    let mut sorted: Vec<(u32, Vec<u8>, usize)> = literals
        .iter()
        .map(|(i, l)| {
            let l = l.to_ascii_lowercase();
            let offset = (0..=l.len() - MASKED)
                .min_by_key(|&o| {
                    let rarity: u32 = l[o..o + MASKED]
                        .iter()
                        .map(|&b| crate::byte_commonness::commonness(b))
                        .sum();
                    (rarity, o)
                })
                .unwrap_or(0);
            (*i, l, offset)
        })
        .collect();
    fn masked((_, l, o): &(u32, Vec<u8>, usize)) -> &[u8] {
        &l[*o..*o + MASKED]
    }
    sorted.sort_by(|a, b| {
        masked(a)
            .cmp(masked(b))
            .then(a.1.cmp(&b.1))
            .then(a.0.cmp(&b.0))
    });
    let mut groups: Vec<Group> = Vec::new();
    for literal in sorted {
        // Copied: `literal` moves into its group below.
        let window = masked(&literal).to_vec();
        if let Some(group) = groups
            .last_mut()
            .filter(|g| masked(&g.literals[0]) == window.as_slice())
        {
            group.literals.push(literal);
            continue;
        }
        let mut masks = [(0u16, 0u16); MASKED];
        for (m, &b) in masks.iter_mut().zip(&window) {
            for v in [b, b.to_ascii_uppercase()] {
                *m = (m.0 | 1 << (v & 15), m.1 | 1 << (v >> 4));
            }
        }
        groups.push(Group {
            literals: vec![literal],
            masks,
        });
    }
    let mut alone: Vec<u64> = groups
        .iter()
        .map(|g| cost(&g.masks, g.literals.len()))
        .collect();
    let growth = |a: &Group, b: &Group, alone_a: u64, alone_b: u64| {
        cost(
            &union(&a.masks, &b.masks),
            a.literals.len() + b.literals.len(),
        )
        .saturating_sub(alone_a + alone_b)
    };
    // growths[a][b] (a < b): what merging groups a and b adds; recomputed only for the
    // group a merge changed.
    let mut growths: Vec<Vec<u64>> = (0..groups.len())
        .map(|a| {
            (0..groups.len())
                .map(|b| {
                    if a < b {
                        growth(&groups[a], &groups[b], alone[a], alone[b])
                    } else {
                        u64::MAX
                    }
                })
                .collect()
        })
        .collect();
    while groups.len() > 8 {
        let (mut a, mut b, mut least) = (0, 1, u64::MAX);
        for (i, row) in growths.iter().enumerate() {
            for (j, &g) in row.iter().enumerate().skip(i + 1) {
                if g < least {
                    (a, b, least) = (i, j, g);
                }
            }
        }
        let other = groups.remove(b);
        alone.remove(b);
        growths.remove(b);
        growths.iter_mut().for_each(|row| {
            row.remove(b);
        });
        let merged = &mut groups[a];
        merged.literals.extend(other.literals);
        merged
            .literals
            .sort_by(|x, y| x.1.cmp(&y.1).then(x.0.cmp(&y.0)).then(x.2.cmp(&y.2)));
        merged.masks = union(&merged.masks, &other.masks);
        alone[a] = cost(&merged.masks, merged.literals.len());
        for i in 0..groups.len() {
            if i != a {
                let (lo, hi) = (i.min(a), i.max(a));
                growths[lo][hi] = growth(&groups[lo], &groups[hi], alone[lo], alone[hi]);
            }
        }
    }
    groups
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

    #[test]
    fn literals_that_begin_alike_share_a_bucket_and_english_passes_no_mask() {
        // The short literals of this repository's knowledge base when the bucket packing
        // was written.
        let words = [
            "): ", "): 109,", "): 119,", "): 120,", "): 13,", "): 145,", "): 149,", "): 154,",
            "): 31,", "): 32,", "): 43,", "): 45,", "): 48,", "): 56,", "): 6", "): 74,", "): 8,",
            "): 92,", "): 94,", "): 95,", "cubla", "cuda", "cudnn", "cufft", "curand", "err",
            "error", "failed", "failure", "nccl", "nvml", "olver", "par", "returned", "tatu",
            "ult",
        ];
        let literals: Vec<(u32, Vec<u8>)> = (0u32..)
            .zip(words)
            .map(|(i, w)| (i, w.as_bytes().to_vec()))
            .collect();
        let teddy = Teddy::new(&literals).unwrap();
        let xid = teddy
            .buckets
            .iter()
            .find(|b| b.iter().any(|(_, l, _)| l == b"): "))
            .unwrap();
        assert_eq!(xid.len(), 20, "{xid:?}");
        // Dealt in sorted order, one bucket let all of these through.
        for english in ["per", "tra", "ter", "pre", "Tem", "dat"] {
            assert_eq!(teddy.buckets_at(english.as_bytes(), 0), 0, "{english}");
        }
        // Each word passes its bucket's masks where its rarest bytes begin.
        for word in words {
            let passes =
                (0..=word.len() - MASKED).any(|o| teddy.buckets_at(word.as_bytes(), o) != 0);
            assert!(passes, "{word}");
        }
    }
}
