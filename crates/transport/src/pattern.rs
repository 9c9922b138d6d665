//! The keyed pseudo-random payload every transfer sends and verifies.
//!
//! Byte `i` of a transfer with key `k` is byte `i % 8` (little-endian) of
//! `splitmix64(k ^ (i / 8) * φ)`: cheap to generate and to check at any
//! offset, different for every transfer, so a misplaced, duplicated, lost or
//! corrupted byte is caught by the receiver.

/// SplitMix64 finaliser (G. L. Steele, D. Lea, C. H. Flood, "Fast splittable
/// pseudorandom number generators", OOPSLA 2014): the payload pattern, the
/// node's seeded keys and its connection IDs all draw from it.
pub(crate) fn splitmix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
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
        splitmix64(self.key ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15))
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
        for w in &mut words {
            w.copy_from_slice(&self.word(index).to_le_bytes());
            index += 1;
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
        let mut words = data[head..].chunks_exact(8);
        for w in &mut words {
            let got = u64::from_le_bytes(w.try_into().expect("8 bytes"));
            if got != self.word(at / 8) {
                return bytewise(at, w);
            }
            at += 8;
        }
        bytewise(at, words.remainder())
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
}
