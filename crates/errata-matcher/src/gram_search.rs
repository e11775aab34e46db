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
//! On x86-64 CPUs with AVX2 the windows are taken eight at a time (one load, a shuffle,
//! one multiply, one gather); the answers are the same, which a test checks against the
//! one-window loop and the automaton. The gather fetches a 64-bit word for each of four
//! three-byte cores, each word answering for two windows (the one that starts a byte
//! before its core, by the bit of that byte, and the one that starts at the core, by the
//! bit of the byte after it): half the elements of gathering eight windows' bits, and
//! 5 to 8 per cent less CPU time for the whole match on the ten-thousand-entry bench.
//!
//! The gather is what a window costs, whatever the number of literals, so where it can
//! be, the search looks at fewer windows. A literal of [`STRIDED_LEN`] bytes or more is
//! represented by [`STRIDE`] consecutive grams of [`WIDE`] bytes, one of which starts at
//! a multiple of `STRIDE` wherever the literal occurs: only those windows are looked up
//! (a fourth of them, and eight bytes agree with a literal by chance far more rarely than
//! four). The shorter literals are then searched for by nibble masks ([`Teddy`]) when
//! they are few, as in a knowledge base whose triggers are mostly phrases; when they are
//! many, every literal goes into one table of four-byte grams looked up at every window,
//! as above, unless a few bytes rare in logs mark where the literals can be.
//!
//! That is the case when all but a few literals hold one of up to three punctuation bytes
//! (a bracket, a parenthesis: the `1003]` and `[e08658] (` of the ten-thousand-entry bench
//! bundle, the `): 79,` of an Xid line): each such literal is represented by its rarest
//! gram that holds one of them ([`Anchors`]), `memchr` finds those bytes in the text, and
//! only the windows that hold one where some gram does are looked up; the other literals,
//! a few words, go to nibble masks. Logs carry such bytes about once in a hundred bytes,
//! so this is a lookup per hundred bytes or so instead of a gather per eight; a stretch
//! where they are dense (JSON's quotes, say) is looked up window by window, block by
//! block. On the ten-thousand-entry bench (its 512 MiB log, two threads) the whole match
//! took 18 per cent less CPU time (user 810 to 665 ms, medians of 12 interleaved runs).
//!
//! Why the table of every literal is not looked up at every second window as well (each
//! literal by two grams one byte apart, one of which starts at an even position): it
//! halves the gathers, but a literal of five bytes then has no choice of grams, one of
//! the two is often common in logs (a year, a line number), and a three- or four-byte
//! literal needs a gram for every byte beside it. Measured on the ten-thousand-entry
//! bench bundle and its 512 MiB log, comparisons went from 153 thousand to 2.2 million
//! per 64 MiB and the whole match took 1.7 times the CPU time. Nor is the gather worth
//! replacing by eight scalar lookups (1.25 times the CPU time on an AMD Zen 4), or the bitset
//! by a smaller one (32 to 128 bits per gram: within the noise).
//!
//! A three-byte literal has no gram of its own: it is represented by the 256 grams made
//! of it and the byte before it, and an occurrence at the very start of the text (no byte
//! before it) is checked directly. Shorter literals cannot be represented; the caller
//! keeps an automaton for a set that has one ([`GramSearch::new`] says `None`).

use crate::byte_commonness::commonness;
use crate::teddy::{self, Teddy};

/// Literals shorter than this cannot be searched for by grams.
pub(crate) const MIN_LITERAL_LEN: usize = 3;

/// Windows apart in the strided table.
const STRIDE: usize = 4;
/// Bytes in a gram of the strided table: a window of ordinary text agrees with a
/// literal's eight bytes far more rarely than with four (four-byte grams looked up at a
/// fourth of the windows set off more comparisons than all windows with the rarest gram).
const WIDE: usize = 8;
/// A literal this long holds [`STRIDE`] consecutive wide grams, one of which starts at a
/// multiple of `STRIDE` wherever the literal occurs, so the strided table is looked up
/// only there (eight such windows are two 32-byte loads).
const STRIDED_LEN: usize = WIDE + STRIDE - 1;

/// A literal set prepared for searching by grams.
#[derive(Debug)]
pub(crate) struct GramSearch {
    /// The literals shorter than [`STRIDED_LEN`] when they are few (the usual case: a
    /// knowledge base's triggers are mostly whole phrases), by nibble masks.
    few_short: Option<Teddy>,
    /// Every literal, by four-byte grams looked up at every window, when the short ones
    /// are too many for nibble masks (a hashed lookup at every window then costs the
    /// same whatever the number of literals in it).
    every: Option<Table>,
    /// The literals of [`STRIDED_LEN`] bytes or more, by [`WIDE`] grams looked up at
    /// every [`STRIDE`]th window, when the short ones are few.
    strided: Option<Table>,
    /// When set, `every` holds only literals that contain one of these bytes, each by a
    /// gram that holds it, and is looked up only at the windows around those bytes in
    /// the text (see [`Anchors`]).
    anchors: Option<Anchors>,
    /// The literals, ASCII lower-cased.
    literals: Vec<Vec<u8>>,
    /// The three-byte literals in `every`, checked at the text's start.
    three_byte: Vec<u32>,
}

/// Up to three bytes, rare in logs, at least one of which is in every literal of the
/// `every` table: the literals can only occur around those bytes of the text, which
/// `memchr` finds far faster than a hashed lookup of every window.
#[derive(Debug)]
struct Anchors {
    bytes: Vec<u8>,
    /// Bit `j` of `at[b]`: some literal's gram has byte `b` at position `j`, so the
    /// window that starts `j` bytes before such a byte of the text is looked up.
    at: [u8; 256],
}

/// Windows of the `every` table handled at a time by [`GramSearch::anchored`].
const ANCHOR_BLOCK: usize = 4096;
/// More anchor bytes than this in a block, and the block's windows are looked up one by
/// one instead: a lookup per window costs less than several per anchor once anchors are
/// this dense (JSON's quotes, say).
const MAX_ANCHORS_PER_BLOCK: usize = ANCHOR_BLOCK / 32;

/// The grams of some of the literals, and where to find the literals they stand for.
#[derive(Debug)]
struct Table {
    /// Bytes in a gram: 4 or [`WIDE`].
    width: usize,
    /// log2 of the number of bits in `filter`.
    bits: u32,
    /// Bit `hash(gram)` is set for every literal's gram.
    filter: Vec<u64>,
    /// log2 of the number of words in `cores`.
    core_bits: u32,
    /// Four-byte grams only (empty otherwise): for every literal's gram, word
    /// `core_hash(bytes 1..4)` has bit `byte 0 & 31` set and word `core_hash(bytes 0..3)`
    /// bit `32 + (byte 3 & 31)`, so that the word of one three-byte core answers for the
    /// window that starts a byte before it and for the window that starts at it: the
    /// eight-window loop gathers four words where it would gather eight bits.
    cores: Vec<u64>,
    /// Every literal's gram(s), sorted by hash (then gram, literal, offset).
    slots: Vec<Slot>,
    /// `slots[directory[h >> DIRECTORY_SHIFT]..directory[(h >> DIRECTORY_SHIFT) + 1]]`
    /// holds every slot whose hash is `h`: one lookup instead of a binary search at
    /// each window whose bit is set.
    directory: Vec<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Slot {
    hash: u32,
    /// The gram, folded (see [`fold`]; a four-byte gram in the low half).
    gram: u64,
    literal: u32,
    /// Where the gram starts relative to the literal: -1 for a three-byte literal (its
    /// gram begins with the byte before it).
    offset: i32,
    /// Four of the literal's bytes, folded, as far from the gram as the literal allows
    /// (its first four when the gram is not at its start, else its last four), and
    /// where they start relative to the window of the gram: a window whose gram is right
    /// but whose literal is not (the `568]` of `socket.cpp:568]` for the literal `9568]`)
    /// is told apart here, without reading the literal from elsewhere in memory.
    check: u32,
    check_at: i32,
    /// Where the gram holds its literal's anchor byte ([`Anchors`]), or `u8::MAX`.
    anchor_at: u8,
}

impl GramSearch {
    /// Prepares `literals` (any case); `None` when one is shorter than
    /// [`MIN_LITERAL_LEN`] or there are none.
    pub(crate) fn new(literals: &[Vec<u8>]) -> Option<GramSearch> {
        if literals.is_empty() || literals.iter().any(|l| l.len() < MIN_LITERAL_LEN) {
            return None;
        }
        let literals: Vec<Vec<u8>> = literals.iter().map(|l| l.to_ascii_lowercase()).collect();
        let few_short =
            literals.iter().filter(|l| l.len() < STRIDED_LEN).count() <= teddy::MAX_LITERALS;
        let anchor_bytes = if few_short {
            None
        } else {
            Anchors::choose(&literals)
        };
        // Which literals hold an anchor byte: decided once, for the count below and the
        // placing of each literal after it.
        let anchored: Vec<bool> = literals
            .iter()
            .map(|lit| {
                anchor_bytes
                    .as_ref()
                    .is_some_and(|bytes| lit.iter().any(|b| bytes.contains(b)))
            })
            .collect();
        // Around anchors, the few literals without one go to nibble masks, long ones too
        // when all fit: the strided table costs a gather per 32 bytes of text however few
        // literals it holds.
        let long_by_teddy = anchor_bytes.is_some()
            && anchored.iter().filter(|&&a| !a).count() <= teddy::MAX_LITERALS;
        let mut by_teddy: Vec<(u32, Vec<u8>)> = Vec::new();
        let mut every: Vec<Gram> = Vec::new();
        let mut strided: Vec<Gram> = Vec::new();
        let mut three_byte = Vec::new();
        let mut anchor_at = [0u8; 256];
        for ((i, lit), &anchored) in (0u32..).zip(&literals).zip(&anchored) {
            if anchored || (!few_short && anchor_bytes.is_none()) {
                let bytes = anchor_bytes.as_deref().filter(|_| anchored);
                if lit.len() == 3 {
                    three_byte.push(i);
                }
                for gram in every_grams(lit, i, bytes) {
                    if bytes.is_some() {
                        anchor_at[usize::from(gram.anchor_byte)] |= 1 << gram.anchor_at;
                    }
                    every.push(gram);
                }
            } else if lit.len() < STRIDED_LEN || long_by_teddy {
                by_teddy.push((i, lit.clone()));
            } else {
                strided.extend(strided_grams(lit, i));
            }
        }
        Some(GramSearch {
            few_short: Teddy::new(&by_teddy),
            every: Table::new(4, every, &literals),
            strided: Table::new(WIDE, strided, &literals),
            anchors: anchor_bytes.map(|bytes| Anchors {
                bytes,
                at: anchor_at,
            }),
            literals,
            three_byte,
        })
    }

    /// Calls `found(literal, start, end)` for every occurrence of every literal in
    /// `text`, overlapping ones included, ignoring ASCII case.
    pub(crate) fn for_each(&self, text: &[u8], mut found: impl FnMut(usize, usize, usize)) {
        self.at_the_start(text, &mut found);
        if let Some(teddy) = &self.few_short {
            teddy.for_each(text, &mut found);
        }
        if let Some(table) = &self.every {
            match &self.anchors {
                Some(anchors) => self.anchored(table, anchors, text, &mut found),
                None => self.every_window(table, text, 0, text.len(), &mut found),
            }
        }
        if let Some(table) = &self.strided {
            let mut start = 0;
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has AVX2, checked just above.
                start = unsafe { self.strided_avx2(table, text, &mut found) };
            }
            self.windows_from(table, text, (start, text.len()), STRIDE, &mut found);
        }
    }

    /// The three-byte literals at the very start of `text`, which no window holds with a
    /// byte before them.
    fn at_the_start(&self, text: &[u8], found: &mut impl FnMut(usize, usize, usize)) {
        for &l in &self.three_byte {
            let lit = &self.literals[l as usize];
            if text.len() >= 3 && text[..3].eq_ignore_ascii_case(lit) {
                found(l as usize, 0, 3);
            }
        }
    }

    /// The window loop of [`GramSearch::for_each`], one window at a time: every
    /// `step`th window of `table`'s width from window `start` (a multiple of `step`) on.
    fn windows_from(
        &self,
        table: &Table,
        text: &[u8],
        (start, end): (usize, usize),
        step: usize,
        found: &mut impl FnMut(usize, usize, usize),
    ) {
        for (i, window) in text
            .windows(table.width)
            .enumerate()
            .take(end)
            .skip(start)
            .step_by(step)
        {
            let gram = fold(window);
            let hash = table.hash(gram);
            if table.has(hash) {
                self.compare(table, text, i, gram, hash, None, found);
            }
        }
    }

    /// Every window of the `every` table that starts in `start..end`: eight at a time
    /// where the CPU has AVX2, the rest one by one.
    fn every_window(
        &self,
        table: &Table,
        text: &[u8],
        start: usize,
        end: usize,
        found: &mut impl FnMut(usize, usize, usize),
    ) {
        #[allow(unused_mut)]
        let mut from = start;
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2, checked just above.
            from = unsafe { self.every_avx2(table, text, start, end, found) };
        }
        self.windows_from(table, text, (from, end), 1, found);
    }

    /// The `every` table's windows around the anchor bytes of `text`, block by block: a
    /// window is looked up when it holds an anchor byte where some gram holds it
    /// ([`Anchors::at`]), and compared only with the literals whose gram holds its anchor
    /// there, so a window reached from two anchors finds each literal once. A block
    /// with too many anchors is looked up window by window instead.
    fn anchored(
        &self,
        table: &Table,
        anchors: &Anchors,
        text: &[u8],
        found: &mut impl FnMut(usize, usize, usize),
    ) {
        let windows = text.len().saturating_sub(3);
        let mut positions = [0u32; MAX_ANCHORS_PER_BLOCK];
        let mut start = 0;
        while start < windows {
            let end = (start + ANCHOR_BLOCK).min(windows);
            // An anchor byte of a window that starts in the block lies before `end + 3`.
            let hay = &text[start..(end + 3).min(text.len())];
            let Some(count) = anchors.positions(hay, &mut positions) else {
                self.every_window(table, text, start, end, found);
                start = end;
                continue;
            };
            for &p in &positions[..count] {
                let p = start + p as usize;
                let mut at = anchors.at[usize::from(text[p])];
                while at != 0 {
                    let j = at.trailing_zeros() as usize;
                    at &= at - 1;
                    let Some(w) = p.checked_sub(j).filter(|&w| w >= start && w < end) else {
                        continue;
                    };
                    let gram = fold(&text[w..w + 4]);
                    let hash = table.hash(gram);
                    if table.has(hash) {
                        self.compare(table, text, w, gram, hash, Some(j as u8), found);
                    }
                }
            }
            start = end;
        }
    }

    /// The window loop of [`GramSearch::for_each`] over every window, eight at a time by
    /// the words of four three-byte cores ([`Table::cores`]): the cores are cut out of
    /// one 16-byte load by a shuffle, hashed with one multiply and their words gathered
    /// together; a window whose bit is set in its core's word is then looked up by its
    /// own gram. Looks at the windows that start in `start..end` and returns the first
    /// it did not look at (the last few of the range, and those whose 16 bytes would run
    /// past the text, are left to the caller).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn every_avx2(
        &self,
        table: &Table,
        text: &[u8],
        start: usize,
        end: usize,
        found: &mut impl FnMut(usize, usize, usize),
    ) -> usize {
        use std::arch::x86_64::*;
        // Core k (0..4) is bytes 2k+1..2k+4 of the load (a zero byte above): its word
        // answers for window 2k by the bit of byte 2k in its low half and for window 2k+1
        // by the bit of byte 2k+4 in its high half. So the two halves of word k are
        // shifted by those bytes' low five bits (lane 2k by byte 2k, lane 2k+1 by byte
        // 2k+4; each 128-bit lane shuffles its own copy of the load), and bit 0 of 32-bit
        // lane j answers for window j.
        let cores = _mm_setr_epi8(1, 2, 3, -1, 3, 4, 5, -1, 5, 6, 7, -1, 7, 8, 9, -1);
        let shifts = _mm256_setr_epi8(
            0, -1, -1, -1, 4, -1, -1, -1, 2, -1, -1, -1, 6, -1, -1, -1, //
            4, -1, -1, -1, 8, -1, -1, -1, 6, -1, -1, -1, 10, -1, -1, -1,
        );
        // A core has three bytes: folded as a gram is, its fourth byte left zero.
        let fold = _mm_set1_epi32((FOLD >> 8) as i32);
        let multiplier = _mm_set1_epi32(HASH_MULTIPLIER as i32);
        let low5 = _mm256_set1_epi32(31);
        let core_shift = _mm_cvtsi32_si128((32 - table.core_bits) as i32);
        let mut i = start;
        while i + 8 <= end
            && let Some(sixteen) = text.get(i..i + 16)
        {
            // SAFETY: `sixteen` is 16 readable bytes.
            let bytes = unsafe { _mm_loadu_si128(sixteen.as_ptr().cast()) };
            let words = _mm_srl_epi32(
                _mm_mullo_epi32(
                    _mm_or_si128(_mm_shuffle_epi8(bytes, cores), fold),
                    multiplier,
                ),
                core_shift,
            );
            // SAFETY: a word index is below 2^core_bits, the length of `cores`.
            let gathered =
                unsafe { _mm256_i32gather_epi64::<8>(table.cores.as_ptr().cast::<i64>(), words) };
            let by = _mm256_and_si256(
                _mm256_shuffle_epi8(_mm256_broadcastsi128_si256(bytes), shifts),
                low5,
            );
            let bits = _mm256_srlv_epi32(gathered, by);
            let mut set = _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32::<31>(bits)));
            while set != 0 {
                let k = set.trailing_zeros() as usize;
                set &= set - 1;
                let at = i + k;
                let gram = self::fold(&text[at..at + 4]);
                let hash = table.hash(gram);
                // The gram's own bit as well: a core word's bit stands for 32 bytes
                // around the core, the gram's for itself.
                if table.has(hash) {
                    self.compare(table, text, at, gram, hash, None, found);
                }
            }
            i += 8;
        }
        i
    }

    /// The window loop of [`GramSearch::for_each`] over every [`STRIDE`]th window of
    /// [`WIDE`] bytes, eight at a time: the 32 bytes from the first window are the eight
    /// windows' first halves as they lie, and the 32 bytes four further on their second
    /// halves. Returns the first window it did not look at, as
    /// [`GramSearch::every_avx2`] does.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn strided_avx2(
        &self,
        table: &Table,
        text: &[u8],
        found: &mut impl FnMut(usize, usize, usize),
    ) -> usize {
        use std::arch::x86_64::*;
        const _: () = assert!(STRIDE == 4 && WIDE == 8, "two loads four bytes apart");
        let fold = _mm256_set1_epi32(FOLD as i32);
        let (m_lo, m_hi) = (
            _mm256_set1_epi32(HASH_MULTIPLIER as i32),
            _mm256_set1_epi32(HASH_MULTIPLIER_HIGH as i32),
        );
        let mut i = 0;
        while let Some(bytes) = text.get(i..i + 36) {
            // SAFETY: `bytes` is 36 readable bytes, so both unaligned 32-byte loads
            // (from 0 and from 4) are inside it.
            let (lo, hi) = unsafe {
                (
                    _mm256_loadu_si256(bytes.as_ptr().cast()),
                    _mm256_loadu_si256(bytes.as_ptr().add(4).cast()),
                )
            };
            let product = _mm256_add_epi32(
                _mm256_mullo_epi32(_mm256_or_si256(lo, fold), m_lo),
                _mm256_mullo_epi32(_mm256_or_si256(hi, fold), m_hi),
            );
            let mut set = table.lookup_avx2(product);
            while set != 0 {
                let k = set.trailing_zeros() as usize;
                set &= set - 1;
                let at = i + STRIDE * k;
                let gram = self::fold(&text[at..at + WIDE]);
                self.compare(table, text, at, gram, table.hash(gram), None, found);
            }
            i += 8 * STRIDE;
        }
        i
    }

    /// Compares the literals whose gram hashes to `hash` with the text around window
    /// `at`; with `via`, only those whose gram holds its anchor byte at that position.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    fn compare(
        &self,
        table: &Table,
        text: &[u8],
        at: usize,
        gram: u64,
        hash: u32,
        via: Option<u8>,
        found: &mut impl FnMut(usize, usize, usize),
    ) {
        let bucket = (hash >> DIRECTORY_SHIFT) as usize;
        let slots =
            &table.slots[table.directory[bucket] as usize..table.directory[bucket + 1] as usize];
        for slot in slots {
            if slot.hash != hash || slot.gram != gram || via.is_some_and(|j| j != slot.anchor_at) {
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
            let Some(check) = (at as i64 + i64::from(slot.check_at))
                .try_into()
                .ok()
                .and_then(|c: usize| text.get(c..c + 4))
            else {
                continue;
            };
            if fold(check) as u32 == slot.check
                && text[start..start + lit.len()].eq_ignore_ascii_case(lit)
            {
                found(slot.literal as usize, start, start + lit.len());
            }
        }
    }
}

impl Table {
    /// The table of `grams`, each `width` bytes, of `literals` (which give each slot its
    /// [`check_of`]); `None` when there are none.
    fn new(width: usize, grams: Vec<Gram>, literals: &[Vec<u8>]) -> Option<Table> {
        if grams.is_empty() {
            return None;
        }
        // About one bit in 128 set: a window of ordinary text sets off a comparison rarely,
        // and the bitset (at most 512 KiB) stays in the cache.
        let bits = (grams.len() * 128)
            .next_power_of_two()
            .trailing_zeros()
            .clamp(10, 22);
        let core_bits = (grams.len() * CORE_WORDS_PER_GRAM)
            .next_power_of_two()
            .trailing_zeros()
            .clamp(8, 20);
        let mut table = Table {
            width,
            bits,
            filter: vec![0u64; 1 << (bits - 6)],
            core_bits,
            cores: if width == 4 {
                vec![0u64; 1 << core_bits]
            } else {
                Vec::new()
            },
            slots: Vec::with_capacity(grams.len()),
            directory: Vec::new(),
        };
        for Gram {
            gram,
            literal,
            offset,
            anchor_at,
            ..
        } in grams
        {
            let (check, check_at) = check_of(&literals[literal as usize], offset, gram);
            let hash = table.hash(gram);
            table.filter[(hash >> 6) as usize] |= 1 << (hash & 63);
            if width == 4 {
                let g = gram as u32;
                let before = table.core_hash(g >> 8);
                table.cores[before as usize] |= 1 << (g & 31);
                let at = table.core_hash(g & 0x00FF_FFFF);
                table.cores[at as usize] |= 1 << (32 + ((g >> 24) & 31));
            }
            table.slots.push(Slot {
                hash,
                gram,
                literal,
                offset,
                check,
                check_at,
                anchor_at,
            });
        }
        table.slots.sort_unstable();
        let buckets = 1usize << (bits - DIRECTORY_SHIFT);
        table.directory = (0..=buckets)
            .map(|b| {
                table
                    .slots
                    .partition_point(|s| ((s.hash >> DIRECTORY_SHIFT) as usize) < b)
                    as u32
            })
            .collect();
        Some(table)
    }

    /// The filter bit of a folded gram: its halves multiplied by two odd constants and
    /// added (what [`GramSearch::strided_avx2`] computes eight at a time with 32-bit
    /// multiplies), the top `bits` bits of the sum. A four-byte gram has no high half.
    #[inline]
    fn hash(&self, gram: u64) -> u32 {
        let (lo, hi) = (gram as u32, (gram >> 32) as u32);
        let mut product = lo.wrapping_mul(HASH_MULTIPLIER);
        if self.width > 4 {
            product = product.wrapping_add(hi.wrapping_mul(HASH_MULTIPLIER_HIGH));
        }
        product >> (32 - self.bits)
    }

    /// Whether bit `hash` of the filter is set: some literal's gram may have that hash.
    #[inline]
    fn has(&self, hash: u32) -> bool {
        self.filter[(hash >> 6) as usize] & (1 << (hash & 63)) != 0
    }

    /// The word of a folded three-byte core (in the low three bytes) in `cores`.
    #[inline]
    fn core_hash(&self, core: u32) -> u32 {
        (core & 0x00FF_FFFF).wrapping_mul(HASH_MULTIPLIER) >> (32 - self.core_bits)
    }

    /// Which of eight grams, given as their hashes' products (see [`Table::hash`]), have
    /// their bit set in the filter, as the low eight bits: one gather.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    #[inline]
    fn lookup_avx2(&self, products: std::arch::x86_64::__m256i) -> i32 {
        use std::arch::x86_64::*;
        let hashes = _mm256_srl_epi32(products, _mm_cvtsi32_si128((32 - self.bits) as i32));
        // SAFETY: a hash is below 2^bits and the filter holds 2^(bits-6) u64s, that
        // is 2^(bits-5) u32s, so `hash >> 5` indexes inside it; on x86 (little
        // endian) bit `hash & 31` of that u32 is bit `hash & 63` of the u64.
        let gathered = unsafe {
            _mm256_i32gather_epi32::<4>(
                self.filter.as_ptr().cast::<i32>(),
                _mm256_srli_epi32::<5>(hashes),
            )
        };
        let bits = _mm256_srlv_epi32(gathered, _mm256_and_si256(hashes, _mm256_set1_epi32(31)));
        _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32::<31>(bits)))
    }
}

/// A literal's gram, before it goes into a [`Table`].
struct Gram {
    /// Folded (see [`fold`]).
    gram: u64,
    literal: u32,
    /// Where the gram starts in the literal (-1: the byte before a three-byte literal).
    offset: i32,
    /// Where the gram holds the literal's anchor byte, and which byte that is (`u8::MAX`
    /// and 0 when the literal is not anchored).
    anchor_at: u8,
    anchor_byte: u8,
}

/// How common the `len` bytes of `lit` from `o` on are, summed.
fn commonness_of(lit: &[u8], o: usize, len: usize) -> u32 {
    lit[o..o + len].iter().map(|&b| commonness(b)).sum()
}

/// The four-byte gram(s) of literal `i` (`lit`, lower-cased) in the `every` table: the
/// window of its rarest bytes, or with `anchors`, the rarest window that holds one of
/// them. A three-byte literal has a gram for each byte that may come before it.
fn every_grams(lit: &[u8], i: u32, anchors: Option<&[u8]>) -> Vec<Gram> {
    // Where a window holds its first anchor byte, and which byte it is: `(u8::MAX, 0)`
    // without anchors, `None` for a window that holds none.
    let anchor_in = |window: &[u8]| match anchors {
        None => Some((u8::MAX, 0)),
        Some(bytes) => window
            .iter()
            .position(|b| bytes.contains(b))
            .map(|j| (j as u8, window[j])),
    };
    if lit.len() == 3 {
        // The gram begins with the byte before the literal, so its anchor is one byte
        // further in (`u8::MAX`, no anchor, stays as it is).
        let (anchor_at, anchor_byte) =
            anchor_in(lit).map_or((u8::MAX, 0), |(j, b)| (j.saturating_add(1), b));
        let mut seen = std::collections::BTreeSet::new();
        return (0..=255u8)
            .filter_map(|before| {
                let gram = fold(&[before, lit[0], lit[1], lit[2]]);
                seen.insert(gram).then_some(Gram {
                    gram,
                    literal: i,
                    offset: -1,
                    anchor_at,
                    anchor_byte,
                })
            })
            .collect();
    }
    let best = (0..=lit.len() - 4)
        .filter_map(|o| anchor_in(&lit[o..o + 4]).map(|anchor| (o, anchor)))
        .min_by_key(|&(o, _)| (commonness_of(lit, o, 4), o));
    let Some((offset, (anchor_at, anchor_byte))) = best else {
        return Vec::new();
    };
    vec![Gram {
        gram: fold(&lit[offset..offset + 4]),
        literal: i,
        offset: offset as i32,
        anchor_at,
        anchor_byte,
    }]
}

/// The [`STRIDE`] consecutive wide grams of literal `i` (`lit`, lower-cased, at least
/// [`STRIDED_LEN`] bytes) made of its rarest bytes.
fn strided_grams(lit: &[u8], i: u32) -> impl Iterator<Item = Gram> + '_ {
    let first = (0..=lit.len() - STRIDED_LEN)
        .min_by_key(|&o| commonness_of(lit, o, STRIDED_LEN))
        .unwrap_or(0);
    (first..first + STRIDE).map(move |offset| Gram {
        gram: fold(&lit[offset..offset + WIDE]),
        literal: i,
        offset: offset as i32,
        anchor_at: u8::MAX,
        anchor_byte: 0,
    })
}

impl Anchors {
    /// At most three bytes, among those rare in logs (punctuation other than `.:-_/,`),
    /// that the most literals hold, chosen greedily until every literal holds one; `None`
    /// when more short literals would be left without one than [`Teddy`] takes. Only
    /// bytes with no other case are chosen, so a literal occurs only at those very bytes.
    fn choose(literals: &[Vec<u8>]) -> Option<Vec<u8>> {
        let mut left: Vec<&Vec<u8>> = literals.iter().collect();
        let mut chosen = Vec::new();
        while !left.is_empty() && chosen.len() < 3 {
            let mut holders = [0usize; 256];
            for lit in &left {
                let mut seen = [false; 256];
                for &b in lit.iter() {
                    if !seen[usize::from(b)] && is_anchor_byte(b) {
                        seen[usize::from(b)] = true;
                        holders[usize::from(b)] += 1;
                    }
                }
            }
            let Some((best, &n)) = holders
                .iter()
                .enumerate()
                .max_by_key(|&(b, &n)| (n, 255 - b))
            else {
                break;
            };
            if n == 0 {
                break;
            }
            let best = best as u8;
            chosen.push(best);
            left.retain(|lit| !lit.contains(&best));
        }
        let short_left = left.iter().filter(|l| l.len() < STRIDED_LEN).count();
        (!chosen.is_empty() && short_left <= teddy::MAX_LITERALS).then_some(chosen)
    }

    /// Where the anchor bytes are in `hay`, into `out`; `None` when there are more than
    /// `out` holds.
    fn positions(&self, hay: &[u8], out: &mut [u32; MAX_ANCHORS_PER_BLOCK]) -> Option<usize> {
        let mut n = 0;
        let mut push = |p: usize| {
            if n == out.len() {
                return false;
            }
            out[n] = p as u32;
            n += 1;
            true
        };
        let all = match *self.bytes.as_slice() {
            [a] => memchr::memchr_iter(a, hay).all(&mut push),
            [a, b] => memchr::memchr2_iter(a, b, hay).all(&mut push),
            [a, b, c, ..] => memchr::memchr3_iter(a, b, c, hay).all(&mut push),
            [] => true,
        };
        all.then_some(n)
    }
}

/// Whether `b` may be an anchor: printable ASCII punctuation, rare in logs by
/// [`commonness`], and not a letter (whose other case a literal would match too).
fn is_anchor_byte(b: u8) -> bool {
    b.is_ascii_punctuation() && commonness(b) == 0
}

/// Words of `Table::cores` per gram, rounded up to a power of two: each gram sets two
/// bits, so about one word in two holds a bit. Measured on the ten-thousand-entry bench
/// bundle (a 512 KiB table): a window whose core word says yes is a gram of the filter
/// three times in four; eight words per gram (1 MiB) ran no faster.
const CORE_WORDS_PER_GRAM: usize = 4;
const HASH_MULTIPLIER: u32 = 0x9E37_79B1;
const HASH_MULTIPLIER_HIGH: u32 = 0x85EB_CA77;
/// Hashes that share a directory bucket: 32 bits of the filter per bucket, so that the
/// directory is an eighth of the filter's size and a bucket holds about one slot.
const DIRECTORY_SHIFT: u32 = 5;
/// Bit 5 of every byte (see [`fold`]), of a four-byte gram and of an eight-byte one.
const FOLD: u32 = 0x2020_2020;
const FOLD_WIDE: u64 = 0x2020_2020_2020_2020;

/// [`Slot::check`] and [`Slot::check_at`] of literal `lit` (lower-cased) whose gram
/// starts at `offset` in it: its first four bytes where the gram starts later, else its
/// last four; a three-byte literal's `gram` holds all of it, and is its own check.
fn check_of(lit: &[u8], offset: i32, gram: u64) -> (u32, i32) {
    let from = match lit.len() {
        ..4 => return (gram as u32, 0),
        _ if offset > 0 => 0,
        len => len - 4,
    };
    (fold(&lit[from..from + 4]) as u32, from as i32 - offset)
}

/// The folded gram of a window of four or eight bytes: bit 5 of every byte set, so that
/// ASCII letters lose their case (other bytes may merge with a neighbour, which only
/// costs a comparison, never an occurrence).
fn fold(window: &[u8]) -> u64 {
    match *window {
        [a, b, c, d] => u64::from(u32::from_le_bytes([a, b, c, d]) | FOLD),
        [a, b, c, d, e, f, g, h] => u64::from_le_bytes([a, b, c, d, e, f, g, h]) | FOLD_WIDE,
        // Only grams of four and WIDE bytes are made; any other short window folds the
        // same way.
        _ => {
            let n = window.len().min(8);
            let mut gram = [0u8; 8];
            gram[..n].copy_from_slice(&window[..n]);
            (u64::from_le_bytes(gram) | FOLD_WIDE) & (u64::MAX >> (64 - 8 * n.max(1)))
        }
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
        /// 1 to `most` literals of 3 to `3 + longer - 1` bytes.
        fn literals(&mut self, alphabet: &[u8], most: u64, longer: u64) -> Vec<Vec<u8>> {
            let n = 1 + self.below(most) as usize;
            (0..n)
                .map(|_| {
                    let len = 3 + self.below(longer) as usize;
                    self.bytes(alphabet, len)
                })
                .collect()
        }
    }

    /// How a search holds its literals: 0 by nibble masks and the strided table, 1 by
    /// the table of every window, 2 around anchor bytes.
    fn way(search: &GramSearch) -> usize {
        match (&search.anchors, &search.every) {
            (Some(_), _) => 2,
            (None, Some(_)) => 1,
            (None, None) => 0,
        }
    }

    #[test]
    fn finds_what_an_overlapping_automaton_finds() {
        // A small alphabet (case, digits, brackets, a newline, bytes that fold onto
        // others, UTF-8) makes overlaps, repeats and near misses common; without its
        // punctuation no byte can be an anchor.
        let alphabet = b"aAbB1]2[ \n@`{\xc3\xa9";
        let plain = b"aAbB12 \n.:\xc3\xa9";
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut ways = [0; 3];
        for case in 0..600 {
            // Two cases in three have more short literals than nibble masks take.
            let (most, letters) = match case % 3 {
                0 => (40, &alphabet[..]),
                1 => (300, &alphabet[..]),
                _ => (300, &plain[..]),
            };
            let literals = rng.literals(letters, most, 10);
            let len = rng.below(300) as usize;
            let text = rng.bytes(alphabet, len);
            ways[way(&GramSearch::new(&literals).unwrap())] += 1;
            assert_eq!(
                grams(&literals, &text),
                automaton(&literals, &text),
                "case {case}: {literals:?} in {text:?}"
            );
        }
        assert!(ways.iter().all(|&n| n > 100), "{ways:?}");
    }

    #[test]
    fn anchored_blocks_sparse_and_dense_find_what_the_automaton_finds() {
        // Many literals, most holding a bracket or a parenthesis (some at their very
        // start or end, some of three bytes), a few holding none (nibble masks) and some
        // long ones; texts of several blocks where anchors are rare, with stretches
        // dense enough that a block is looked up window by window, and literals planted.
        let mut rng = Rng(0x853c_49e6_748f_ea9b);
        let words = b"abcdE01 :";
        for case in 0..60 {
            let mut literals: Vec<Vec<u8>> = (0..90 + rng.below(60))
                .map(|_| {
                    // Nine in ten short (3 to 10 bytes), the rest long.
                    let len = match rng.below(10) {
                        0 => 11 + rng.below(20) as usize,
                        _ => 2 + rng.below(8) as usize,
                    };
                    let mut lit = rng.bytes(words, len);
                    let at = rng.below(lit.len() as u64 + 1) as usize;
                    lit.insert(at, b"])(["[rng.below(4) as usize]);
                    lit
                })
                .collect();
            for _ in 0..rng.below(20) {
                let len = 3 + rng.below(9) as usize;
                literals.push(rng.bytes(words, len));
            }
            let search = GramSearch::new(&literals).unwrap();
            assert_eq!(way(&search), 2, "case {case}");
            let mut text = Vec::new();
            while text.len() < 3 * ANCHOR_BLOCK + rng.below(5000) as usize {
                match rng.below(10) {
                    0 => {
                        text.extend_from_slice(&literals[rng.below(literals.len() as u64) as usize])
                    }
                    1 if case % 2 == 0 => text.extend(rng.bytes(b"]](x", 600)),
                    _ => {
                        let len = 1 + rng.below(200) as usize;
                        text.extend(rng.bytes(words, len));
                    }
                }
            }
            let mut v = Vec::new();
            search.for_each(&text, |l, s, e| v.push((l, s, e)));
            v.sort_unstable();
            assert_eq!(v, automaton(&literals, &text), "case {case}");
        }
    }

    #[test]
    fn the_vectorised_loop_finds_what_the_one_window_loop_finds() {
        // Longer texts than above, over log-like bytes, so that most windows go through
        // the eight-at-a-time loop and the one-window loop takes only the tail.
        let alphabet = b"abcdeABCDE0123 :[]()_\n";
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..200 {
            let literals = rng.literals(alphabet, if case % 2 == 0 { 60 } else { 160 }, 12);
            let len = rng.below(3000) as usize;
            let text = rng.bytes(alphabet, len);
            let search = GramSearch::new(&literals).unwrap();
            let mut one_at_a_time = Vec::new();
            let mut push = |l, s, e| one_at_a_time.push((l, s, e));
            search.at_the_start(&text, &mut push);
            if let Some(teddy) = &search.few_short {
                teddy.positions_from(&text, 0, &mut push);
            }
            for (table, step) in [(&search.every, 1), (&search.strided, STRIDE)] {
                if let Some(table) = table {
                    search.windows_from(table, &text, (0, text.len()), step, &mut push);
                }
            }
            one_at_a_time.sort_unstable();
            assert_eq!(grams(&literals, &text), one_at_a_time, "case {case}");
            assert_eq!(one_at_a_time, automaton(&literals, &text), "case {case}");
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
