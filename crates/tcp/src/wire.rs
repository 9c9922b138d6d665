//! The wire format of the model's segments and ACKs (see the crate docs) and the payload pattern the sink checks.

use std::sync::LazyLock;

use bytes::{BufMut, Bytes, BytesMut};

/// Bytes of the data header inside the datagram (see the module docs).
pub const DATA_HEADER_BYTES: usize = 12;
/// Bytes of an ACK without SACK blocks inside the datagram.
pub const ACK_HEADER_BYTES: usize = 16;
/// Bytes a timestamp adds to a segment (its TSval) or to an ACK (its TSecr),
/// with [`TcpConfig::timestamps`](crate::TcpConfig::timestamps).
pub const TIMESTAMP_BYTES: usize = 8;
/// Bytes per SACK block in an ACK.
pub const SACK_BLOCK_BYTES: usize = 16;
/// At most this many SACK blocks per ACK (RFC 2018 §3: three with timestamps).
pub const MAX_SACK_BLOCKS: usize = 3;
/// Largest segment the model sends (its payload must fit a controller's `u16` mss).
pub const MAX_SEGMENT: u32 = 65_000;

const KIND_DATA: u8 = 1;
const KIND_ACK: u8 = 2;
pub(crate) const PATTERN_PERIOD: u64 = 251;

/// `PATTERN[i] = i mod 251`, long enough for any segment at any offset.
static PATTERN: LazyLock<Vec<u8>> = LazyLock::new(|| {
    (0..PATTERN_PERIOD as usize + MAX_SEGMENT as usize)
        .map(|i| (i % 251) as u8)
        .collect()
});

/// The payload bytes of the stream at `[seq, seq + len)`.
pub(crate) fn pattern(seq: u64, len: usize) -> &'static [u8] {
    let start = (seq % PATTERN_PERIOD) as usize;
    &PATTERN[start..start + len]
}

/// A segment of `len` bytes at `seq`, with the sender's timestamp `tsval`
/// (nanoseconds of its clock) if it sends them: byte 1 is then 1 and the
/// header 8 bytes longer.
pub(crate) fn encode_data(seq: u64, len: usize, tsval: Option<u64>) -> Bytes {
    let ts_len = if tsval.is_some() { TIMESTAMP_BYTES } else { 0 };
    let mut b = BytesMut::with_capacity(DATA_HEADER_BYTES + ts_len + len);
    b.put_u8(KIND_DATA);
    b.put_u8(u8::from(tsval.is_some()));
    b.put_bytes(0, 2);
    b.put_u64(seq);
    if let Some(ts) = tsval {
        b.put_u64(ts);
    }
    b.put_slice(pattern(seq, len));
    b.freeze()
}

/// A segment's sequence number, timestamp if it has one, and payload.
pub(crate) fn decode_data(p: &[u8]) -> Option<(u64, Option<u64>, &[u8])> {
    if p.len() < DATA_HEADER_BYTES || p[0] != KIND_DATA || p[1] > 1 {
        return None;
    }
    let seq = u64::from_be_bytes(p[4..12].try_into().ok()?);
    if p[1] == 0 {
        return Some((seq, None, &p[DATA_HEADER_BYTES..]));
    }
    let end = DATA_HEADER_BYTES + TIMESTAMP_BYTES;
    let ts = u64::from_be_bytes(p.get(DATA_HEADER_BYTES..end)?.try_into().ok()?);
    Some((seq, Some(ts), &p[end..]))
}

/// A decoded ACK.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AckPacket {
    pub(crate) ack: u64,
    /// It answers a segment that lay wholly below the cumulative ACK (a
    /// duplicate), in the spirit of RFC 2883's D-SACK.
    pub(crate) dup: bool,
    pub(crate) rwnd: u64,
    pub(crate) sack: Vec<(u64, u64)>,
    /// The echoed timestamp (RFC 7323 §3.2 TSecr), if timestamps are on.
    pub(crate) tsecr: Option<u64>,
}

pub(crate) fn encode_ack(a: &AckPacket) -> Bytes {
    let ts_len = if a.tsecr.is_some() { TIMESTAMP_BYTES } else { 0 };
    let mut b = BytesMut::with_capacity(ACK_HEADER_BYTES + ts_len + SACK_BLOCK_BYTES * a.sack.len());
    b.put_u8(KIND_ACK);
    b.put_u8(a.sack.len() as u8);
    b.put_u8(u8::from(a.dup));
    b.put_u8(u8::from(a.tsecr.is_some()));
    b.put_u64(a.ack);
    b.put_u32(a.rwnd.min(u64::from(u32::MAX)) as u32);
    if let Some(ts) = a.tsecr {
        b.put_u64(ts);
    }
    for &(s, e) in &a.sack {
        b.put_u64(s);
        b.put_u64(e);
    }
    b.freeze()
}

pub(crate) fn decode_ack(p: &[u8]) -> Option<AckPacket> {
    if p.len() < ACK_HEADER_BYTES || p[0] != KIND_ACK {
        return None;
    }
    let n = p[1] as usize;
    let ts_len = match p[3] {
        0 => 0,
        1 => TIMESTAMP_BYTES,
        _ => return None,
    };
    if p.len() != ACK_HEADER_BYTES + ts_len + n * SACK_BLOCK_BYTES {
        return None;
    }
    let u64_at = |i: usize| u64::from_be_bytes(p[i..i + 8].try_into().expect("8 bytes"));
    let ack = u64_at(4);
    let rwnd = u64::from(u32::from_be_bytes(p[12..16].try_into().ok()?));
    let tsecr = (ts_len > 0).then(|| u64_at(ACK_HEADER_BYTES));
    let sack = (0..n)
        .map(|i| {
            let o = ACK_HEADER_BYTES + ts_len + i * SACK_BLOCK_BYTES;
            (u64_at(o), u64_at(o + 8))
        })
        .collect();
    Some(AckPacket {
        ack,
        dup: p[2] == 1,
        rwnd,
        sack,
        tsecr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_format_round_trips() {
        let d = encode_data(1234, 1000, None);
        assert_eq!(d.len(), 1000 + DATA_HEADER_BYTES);
        let (seq, ts, body) = decode_data(&d).unwrap();
        assert_eq!((seq, ts), (1234, None));
        assert_eq!(body, pattern(1234, 1000));
        let t = encode_data(1234, 1000, Some(987_654_321));
        assert_eq!(t.len(), 1000 + DATA_HEADER_BYTES + TIMESTAMP_BYTES);
        assert_eq!(decode_data(&t), Some((1234, Some(987_654_321), pattern(1234, 1000))));
        assert_eq!(decode_data(&t[..DATA_HEADER_BYTES + 4]), None, "a cut timestamp");
        let mut a = AckPacket {
            ack: 5000,
            dup: true,
            rwnd: 65_535,
            sack: vec![(6000, 7000), (9000, 12_000)],
            tsecr: None,
        };
        let b = encode_ack(&a);
        assert_eq!(b.len(), ACK_HEADER_BYTES + 2 * SACK_BLOCK_BYTES);
        assert_eq!(decode_ack(&b), Some(a.clone()));
        a.tsecr = Some(42);
        let c = encode_ack(&a);
        assert_eq!(c.len(), ACK_HEADER_BYTES + TIMESTAMP_BYTES + 2 * SACK_BLOCK_BYTES);
        assert_eq!(decode_ack(&c), Some(a));
        assert_eq!(decode_ack(&d), None);
        assert_eq!(decode_data(&b), None);
        assert_eq!(decode_ack(&b[..20]), None);
    }
}
