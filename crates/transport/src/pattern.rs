//! The keyed pseudo-random payload every transfer sends and verifies.
//!
//! Word `w` (bytes `8w .. 8w + 8`, little-endian) of a transfer with key `k`
//! is `T[w % 512] ^ splitmix64(k ^ (w / 512) * φ)`: a fixed table `T` of 512
//! pseudo-random words (4 KiB, the same for every transfer) masked by one
//! keyed word per 4 KiB block. Generating and checking it is a table lookup
//! and an XOR per 8 bytes (a loop compilers vectorise), about ten times
//! cheaper than a keyed hash per word, at any offset. It stays different
//! for every transfer, and a misplaced, duplicated, lost or corrupted byte
//! is caught by the receiver: within a block the table words differ from
//! each other, and blocks differ by their keyed mask.

/// SplitMix64 finaliser (G. L. Steele, D. Lea, C. H. Flood, "Fast splittable
/// pseudorandom number generators", OOPSLA 2014): the payload pattern, the
/// node's seeded keys and its connection IDs all draw from it.
pub(crate) fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// φ = 2^64 / golden ratio, the SplitMix64 increment.
const PHI: u64 = 0x9e37_79b9_7f4a_7c15;

/// Words in the shared table (4 KiB).
const TABLE_WORDS: usize = 512;

/// The shared table: `splitmix64` of a fixed seed stream, computed at
/// compile time.
static TABLE: [u64; TABLE_WORDS] = table();

const fn table() -> [u64; TABLE_WORDS] {
    let mut t = [0u64; TABLE_WORDS];
    let mut i = 0;
    while i < TABLE_WORDS {
        let mut z = 0x7470_7574_7061_7474 ^ (i as u64).wrapping_mul(PHI);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        t[i] = z ^ (z >> 31);
        i += 1;
    }
    t
}

/// The payload pattern of one transfer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pattern {
    key: u64,
}

impl Pattern {
    /// The pattern for `key`.
    pub fn new(key: u64) -> Self {
        Self { key }
    }

    /// The key.
    pub fn key(&self) -> u64 {
        self.key
    }

    fn block(&self, index: u64) -> [u8; 8] {
        self.word(index).to_le_bytes()
    }

    fn word(&self, index: u64) -> u64 {
        TABLE[(index % TABLE_WORDS as u64) as usize] ^ self.mask(index / TABLE_WORDS as u64)
    }

    /// The keyed mask of 4 KiB block `block`.
    fn mask(&self, block: u64) -> u64 {
        splitmix64(self.key ^ block.wrapping_mul(PHI))
    }

    /// Fill `buf` with the bytes at stream offset `offset..offset + buf.len()`.
    pub fn fill(&self, offset: u64, buf: &mut [u8]) {
        // An unaligned head byte by byte, then whole 8-byte words (one store
        // each, no memcpy call), then the tail.
        let head = (((8 - offset % 8) % 8) as usize).min(buf.len());
        let (first, rest) = buf.split_at_mut(head);
        if head > 0 {
            let skip = (offset % 8) as usize;
            first.copy_from_slice(&self.block(offset / 8)[skip..skip + head]);
        }
        let mut index = (offset + head as u64) / 8;
        let mut words = rest.chunks_exact_mut(8);
        // Block by block: one mask, then a run of table words.
        loop {
            let mask = self.mask(index / TABLE_WORDS as u64);
            let from = (index % TABLE_WORDS as u64) as usize;
            let mut n = 0;
            // The table first: when it runs out, `zip` stops before taking
            // a word from `words`.
            for (t, w) in TABLE[from..].iter().zip(&mut words) {
                w.copy_from_slice(&(t ^ mask).to_le_bytes());
                n += 1;
            }
            index += n;
            if n < (TABLE_WORDS - from) as u64 {
                break;
            }
        }
        let tail = words.into_remainder();
        if !tail.is_empty() {
            let n = tail.len();
            tail.copy_from_slice(&self.block(index)[..n]);
        }
    }

    /// Check `data` against the pattern at `offset`; on a mismatch, the stream
    /// offset of the first wrong byte.
    pub fn verify(&self, offset: u64, data: &[u8]) -> Result<(), u64> {
        let head = (((8 - offset % 8) % 8) as usize).min(data.len());
        let bytewise = |at: u64, part: &[u8]| -> Result<(), u64> {
            let block = self.block(at / 8);
            let skip = (at % 8) as usize;
            match part.iter().zip(&block[skip..]).position(|(a, b)| a != b) {
                Some(i) => Err(at + i as u64),
                None => Ok(()),
            }
        };
        bytewise(offset, &data[..head])?;
        let mut at = offset + head as u64;
        let body = &data[head..];
        let words = body.len() / 8;
        let mut w = 0;
        // Block by block: OR together the differences of a run of words (a
        // loop without early exits, which compilers vectorise) and look for
        // the first wrong byte only if the run has one.
        while w < words {
            let index = at / 8;
            let mask = self.mask(index / TABLE_WORDS as u64);
            let from = (index % TABLE_WORDS as u64) as usize;
            let run = (TABLE_WORDS - from).min(words - w);
            let bytes = &body[8 * w..8 * (w + run)];
            let mut diff = 0u64;
            for (c, t) in bytes.chunks_exact(8).zip(&TABLE[from..from + run]) {
                diff |= u64::from_le_bytes(c.try_into().expect("8 bytes")) ^ t ^ mask;
            }
            if diff != 0 {
                for (i, c) in bytes.chunks_exact(8).enumerate() {
                    bytewise(at + 8 * i as u64, c)?;
                }
            }
            w += run;
            at += 8 * run as u64;
        }
        bytewise(at, &body[8 * words..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_is_offset_consistent_and_verifies() {
        let p = Pattern::new(42);
        let mut whole = vec![0; 1000];
        p.fill(0, &mut whole);
        for (start, len) in [(0, 1), (3, 5), (7, 9), (13, 500), (999, 1)] {
            let mut part = vec![0; len];
            p.fill(start as u64, &mut part);
            assert_eq!(part, whole[start..start + len]);
            assert_eq!(p.verify(start as u64, &part), Ok(()));
        }
        let mut bad = whole.clone();
        bad[517] ^= 1;
        assert_eq!(p.verify(0, &bad), Err(517));
        assert_eq!(p.verify(500, &bad[500..]), Err(517));
        // Shifted data (a lost or duplicated byte) is caught.
        assert!(p.verify(1, &whole[..100]).is_err());
        // Every offset and length against the definition, byte by byte.
        for start in 0..20u64 {
            for len in [0usize, 1, 7, 8, 9, 15, 16, 17, 63] {
                let mut part = vec![0; len];
                p.fill(start, &mut part);
                for (i, b) in part.iter().enumerate() {
                    let at = start + i as u64;
                    assert_eq!(*b, p.block(at / 8)[(at % 8) as usize], "offset {at}");
                }
                assert_eq!(p.verify(start, &part), Ok(()));
                if len > 0 {
                    let mut bad = part.clone();
                    bad[len - 1] ^= 0x80;
                    assert_eq!(p.verify(start, &bad), Err(start + len as u64 - 1));
                }
            }
        }
        // Another key gives other bytes.
        assert!(Pattern::new(43).verify(0, &whole).is_err());
    }

    #[test]
    fn blocks_join_seamlessly_and_every_byte_is_checked() {
        let p = Pattern::new(7);
        let mut whole = vec![0; 3 * 4096 + 100];
        p.fill(0, &mut whole);
        for (i, b) in whole.iter().enumerate() {
            assert_eq!(*b, p.block(i as u64 / 8)[i % 8], "byte {i}");
        }
        // Pieces across block boundaries, at odd offsets.
        for (start, len) in [(4090, 20), (4095, 8193), (8191, 1), (1, 3 * 4096)] {
            let mut part = vec![0; len];
            p.fill(start as u64, &mut part);
            assert_eq!(part, whole[start..start + len]);
            assert_eq!(p.verify(start as u64, &part), Ok(()));
        }
        for bad_at in [0usize, 4095, 4096, 4103, 8200, whole.len() - 1] {
            let mut bad = whole.clone();
            bad[bad_at] ^= 4;
            assert_eq!(p.verify(0, &bad), Err(bad_at as u64), "corrupted at {bad_at}");
        }
        // Data shifted by a whole block, or by a whole table, is caught.
        assert!(p.verify(4096, &whole[..4096]).is_err());
        assert!(p.verify(0, &whole[4096..8192]).is_err());
        // Blocks are masked differently: no two 4 KiB blocks are equal.
        assert_ne!(whole[..4096], whole[4096..8192]);
    }
}
