//! The wire format of the model's segments and ACKs (see the module docs of
//! [`tcp`](super)) and the payload pattern the sink checks.

use std::sync::LazyLock;

use bytes::{BufMut, Bytes, BytesMut};

/// Bytes of the data header inside the datagram (see the module docs).
pub const DATA_HEADER_BYTES: usize = 12;
/// Bytes of an ACK without SACK blocks inside the datagram.
pub const ACK_HEADER_BYTES: usize = 16;
/// Bytes per SACK block in an ACK.
pub const SACK_BLOCK_BYTES: usize = 16;
/// At most this many SACK blocks per ACK (RFC 2018 §3: three with timestamps).
pub const MAX_SACK_BLOCKS: usize = 3;
/// Largest segment the model sends (its payload must fit a controller's `u16` mss).
pub const MAX_SEGMENT: u32 = 65_000;

const KIND_DATA: u8 = 1;
const KIND_ACK: u8 = 2;
pub(super) const PATTERN_PERIOD: u64 = 251;

/// `PATTERN[i] = i mod 251`, long enough for any segment at any offset.
static PATTERN: LazyLock<Vec<u8>> = LazyLock::new(|| {
    (0..PATTERN_PERIOD as usize + MAX_SEGMENT as usize)
        .map(|i| (i % 251) as u8)
        .collect()
});

/// The payload bytes of the stream at `[seq, seq + len)`.
pub(super) fn pattern(seq: u64, len: usize) -> &'static [u8] {
    let start = (seq % PATTERN_PERIOD) as usize;
    &PATTERN[start..start + len]
}

pub(super) fn encode_data(seq: u64, len: usize) -> Bytes {
    let mut b = BytesMut::with_capacity(DATA_HEADER_BYTES + len);
    b.put_u8(KIND_DATA);
    b.put_bytes(0, 3);
    b.put_u64(seq);
    b.put_slice(pattern(seq, len));
    b.freeze()
}

pub(super) fn decode_data(p: &[u8]) -> Option<(u64, &[u8])> {
    if p.len() < DATA_HEADER_BYTES || p[0] != KIND_DATA {
        return None;
    }
    let seq = u64::from_be_bytes(p[4..12].try_into().ok()?);
    Some((seq, &p[DATA_HEADER_BYTES..]))
}

/// A decoded ACK.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct AckPacket {
    pub(super) ack: u64,
    /// It answers a segment that lay wholly below the cumulative ACK (a
    /// duplicate), in the spirit of RFC 2883's D-SACK.
    pub(super) dup: bool,
    pub(super) rwnd: u64,
    pub(super) sack: Vec<(u64, u64)>,
}

pub(super) fn encode_ack(a: &AckPacket) -> Bytes {
    let mut b = BytesMut::with_capacity(ACK_HEADER_BYTES + SACK_BLOCK_BYTES * a.sack.len());
    b.put_u8(KIND_ACK);
    b.put_u8(a.sack.len() as u8);
    b.put_u8(u8::from(a.dup));
    b.put_u8(0);
    b.put_u64(a.ack);
    b.put_u32(a.rwnd.min(u64::from(u32::MAX)) as u32);
    for &(s, e) in &a.sack {
        b.put_u64(s);
        b.put_u64(e);
    }
    b.freeze()
}

pub(super) fn decode_ack(p: &[u8]) -> Option<AckPacket> {
    if p.len() < ACK_HEADER_BYTES || p[0] != KIND_ACK {
        return None;
    }
    let n = p[1] as usize;
    if p.len() != ACK_HEADER_BYTES + n * SACK_BLOCK_BYTES {
        return None;
    }
    let u64_at = |i: usize| u64::from_be_bytes(p[i..i + 8].try_into().expect("8 bytes"));
    let ack = u64_at(4);
    let rwnd = u64::from(u32::from_be_bytes(p[12..16].try_into().ok()?));
    let sack = (0..n)
        .map(|i| {
            let o = ACK_HEADER_BYTES + i * SACK_BLOCK_BYTES;
            (u64_at(o), u64_at(o + 8))
        })
        .collect();
    Some(AckPacket {
        ack,
        dup: p[2] == 1,
        rwnd,
        sack,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_format_round_trips() {
        let d = encode_data(1234, 1000);
        assert_eq!(d.len(), 1000 + DATA_HEADER_BYTES);
        let (seq, body) = decode_data(&d).unwrap();
        assert_eq!(seq, 1234);
        assert_eq!(body, pattern(1234, 1000));
        let a = AckPacket {
            ack: 5000,
            dup: true,
            rwnd: 65_535,
            sack: vec![(6000, 7000), (9000, 12_000)],
        };
        let b = encode_ack(&a);
        assert_eq!(b.len(), ACK_HEADER_BYTES + 2 * SACK_BLOCK_BYTES);
        assert_eq!(decode_ack(&b), Some(a));
        assert_eq!(decode_ack(&d), None);
        assert_eq!(decode_data(&b), None);
        assert_eq!(decode_ack(&b[..20]), None);
    }
}
