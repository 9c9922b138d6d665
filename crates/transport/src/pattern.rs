//! The keyed pseudo-random payload every transfer sends and verifies.
//!
//! Byte `i` of a transfer with key `k` is byte `i % 8` (little-endian) of
//! `splitmix64(k ^ (i / 8) * φ)`: cheap to generate and to check at any
//! offset, different for every transfer, so a misplaced, duplicated, lost or
//! corrupted byte is caught by the receiver.

/// SplitMix64 finaliser (Steele, Lea, Flood 2014).
fn mix(mut z: u64) -> u64 {
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
        mix(self.key ^ index.wrapping_mul(0x9e37_79b9_7f4a_7c15)).to_le_bytes()
    }

    /// Fill `buf` with the bytes at stream offset `offset..offset + buf.len()`.
    pub fn fill(&self, offset: u64, buf: &mut [u8]) {
        let mut pos = 0;
        while pos < buf.len() {
            let at = offset + pos as u64;
            let (index, skip) = (at / 8, (at % 8) as usize);
            let block = self.block(index);
            let n = (8 - skip).min(buf.len() - pos);
            buf[pos..pos + n].copy_from_slice(&block[skip..skip + n]);
            pos += n;
        }
    }

    /// Check `data` against the pattern at `offset`; on a mismatch, the stream
    /// offset of the first wrong byte.
    pub fn verify(&self, offset: u64, data: &[u8]) -> Result<(), u64> {
        let mut pos = 0;
        while pos < data.len() {
            let at = offset + pos as u64;
            let (index, skip) = (at / 8, (at % 8) as usize);
            let block = self.block(index);
            let n = (8 - skip).min(data.len() - pos);
            if data[pos..pos + n] != block[skip..skip + n] {
                let bad = (0..n).find(|&i| data[pos + i] != block[skip + i]).unwrap_or(0);
                return Err(at + bad as u64);
            }
            pos += n;
        }
        Ok(())
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
        // Another key gives other bytes.
        assert!(Pattern::new(43).verify(0, &whole).is_err());
    }
}
