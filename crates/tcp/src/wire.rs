//! The wire format of the model's segments and ACKs (see the crate docs) and the payload pattern the sink checks.

use std::sync::LazyLock;

use bytes::Bytes;

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
/// Byte 2 of a segment: RFC 3168 §6.1.2's CWR.
const DATA_CWR: u8 = 1;
/// Byte 2 of an ACK: a duplicate (see [`AckPacket::dup`]).
const ACK_DUP: u8 = 1;
/// Byte 2 of an ACK: RFC 3168 §6.1.3's ECE.
const ACK_ECE: u8 = 2;
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
/// header 8 bytes longer; `cwr` sets RFC 3168's CWR (byte 2).
pub(crate) fn encode_data(seq: u64, len: usize, tsval: Option<u64>, cwr: bool) -> Bytes {
    // The header built on the stack and copied once: writing it field by
    // field through `BufMut` cost a capacity check and a copy call each.
    let mut head = [0u8; DATA_HEADER_BYTES + TIMESTAMP_BYTES];
    head[0] = KIND_DATA;
    head[1] = u8::from(tsval.is_some());
    head[2] = if cwr { DATA_CWR } else { 0 };
    head[4..12].copy_from_slice(&seq.to_be_bytes());
    let mut n = DATA_HEADER_BYTES;
    if let Some(ts) = tsval {
        head[12..20].copy_from_slice(&ts.to_be_bytes());
        n += TIMESTAMP_BYTES;
    }
    let mut b = Vec::with_capacity(n + len);
    b.extend_from_slice(&head[..n]);
    b.extend_from_slice(pattern(seq, len));
    Bytes::from(b)
}

/// A decoded segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DataPacket<'a> {
    pub(crate) seq: u64,
    /// The sender's timestamp (RFC 7323 TSval), if timestamps are on.
    pub(crate) tsval: Option<u64>,
    /// RFC 3168 §6.1.2's Congestion Window Reduced flag.
    pub(crate) cwr: bool,
    pub(crate) payload: &'a [u8],
}

/// A segment's sequence number, timestamp if it has one, CWR flag and payload.
pub(crate) fn decode_data(p: &[u8]) -> Option<DataPacket<'_>> {
    if p.len() < DATA_HEADER_BYTES || p[0] != KIND_DATA || p[1] > 1 || p[2] & !DATA_CWR != 0 {
        return None;
    }
    let seq = u64::from_be_bytes(p[4..12].try_into().ok()?);
    let cwr = p[2] & DATA_CWR != 0;
    let (tsval, start) = if p[1] == 0 {
        (None, DATA_HEADER_BYTES)
    } else {
        let end = DATA_HEADER_BYTES + TIMESTAMP_BYTES;
        let ts = u64::from_be_bytes(p.get(DATA_HEADER_BYTES..end)?.try_into().ok()?);
        (Some(ts), end)
    };
    Some(DataPacket {
        seq,
        tsval,
        cwr,
        payload: &p[start..],
    })
}

/// A decoded ACK.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AckPacket {
    pub(crate) ack: u64,
    /// It answers a segment that lay wholly below the cumulative ACK (a
    /// duplicate), in the spirit of RFC 2883's D-SACK.
    pub(crate) dup: bool,
    /// RFC 3168 §6.1.3's ECN-Echo.
    pub(crate) ece: bool,
    pub(crate) rwnd: u64,
    pub(crate) sack: Vec<(u64, u64)>,
    /// The echoed timestamp (RFC 7323 §3.2 TSecr), if timestamps are on.
    pub(crate) tsecr: Option<u64>,
}

pub(crate) fn encode_ack(a: &AckPacket) -> Bytes {
    let ts_len = if a.tsecr.is_some() { TIMESTAMP_BYTES } else { 0 };
    // Built on the stack and copied once (see `encode_data`).
    let mut head = [0u8; ACK_HEADER_BYTES + TIMESTAMP_BYTES];
    head[0] = KIND_ACK;
    head[1] = a.sack.len() as u8;
    head[2] = if a.dup { ACK_DUP } else { 0 } | if a.ece { ACK_ECE } else { 0 };
    head[3] = u8::from(a.tsecr.is_some());
    head[4..12].copy_from_slice(&a.ack.to_be_bytes());
    head[12..16].copy_from_slice(&(a.rwnd.min(u64::from(u32::MAX)) as u32).to_be_bytes());
    if let Some(ts) = a.tsecr {
        head[16..24].copy_from_slice(&ts.to_be_bytes());
    }
    let mut b = Vec::with_capacity(ACK_HEADER_BYTES + ts_len + SACK_BLOCK_BYTES * a.sack.len());
    b.extend_from_slice(&head[..ACK_HEADER_BYTES + ts_len]);
    for &(s, e) in &a.sack {
        b.extend_from_slice(&s.to_be_bytes());
        b.extend_from_slice(&e.to_be_bytes());
    }
    Bytes::from(b)
}

pub(crate) fn decode_ack(p: &[u8]) -> Option<AckPacket> {
    if p.len() < ACK_HEADER_BYTES || p[0] != KIND_ACK || p[2] & !(ACK_DUP | ACK_ECE) != 0 {
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
    // Most ACKs carry no SACK block: no iterator to collect then.
    let sack = if n == 0 {
        Vec::new()
    } else {
        (0..n)
            .map(|i| {
                let o = ACK_HEADER_BYTES + ts_len + i * SACK_BLOCK_BYTES;
                (u64_at(o), u64_at(o + 8))
            })
            .collect()
    };
    Some(AckPacket {
        ack,
        dup: p[2] & ACK_DUP != 0,
        ece: p[2] & ACK_ECE != 0,
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
        let d = encode_data(1234, 1000, None, false);
        assert_eq!(d.len(), 1000 + DATA_HEADER_BYTES);
        let p = decode_data(&d).unwrap();
        assert_eq!((p.seq, p.tsval, p.cwr), (1234, None, false));
        assert_eq!(p.payload, pattern(1234, 1000));
        let t = encode_data(1234, 1000, Some(987_654_321), true);
        assert_eq!(t.len(), 1000 + DATA_HEADER_BYTES + TIMESTAMP_BYTES);
        let p = decode_data(&t).unwrap();
        assert_eq!((p.seq, p.tsval, p.cwr), (1234, Some(987_654_321), true));
        assert_eq!(p.payload, pattern(1234, 1000));
        assert_eq!(decode_data(&t[..DATA_HEADER_BYTES + 4]), None, "a cut timestamp");
        let mut a = AckPacket {
            ack: 5000,
            dup: true,
            ece: false,
            rwnd: 65_535,
            sack: vec![(6000, 7000), (9000, 12_000)],
            tsecr: None,
        };
        let b = encode_ack(&a);
        assert_eq!(b.len(), ACK_HEADER_BYTES + 2 * SACK_BLOCK_BYTES);
        assert_eq!(decode_ack(&b), Some(a.clone()));
        a.tsecr = Some(42);
        a.ece = true;
        let c = encode_ack(&a);
        assert_eq!(c.len(), ACK_HEADER_BYTES + TIMESTAMP_BYTES + 2 * SACK_BLOCK_BYTES);
        assert_eq!(decode_ack(&c), Some(a.clone()));
        a.dup = false;
        assert_eq!(decode_ack(&encode_ack(&a)), Some(a));
        assert_eq!(decode_ack(&d), None);
        assert_eq!(decode_data(&b), None);
        assert_eq!(decode_ack(&b[..20]), None);
    }

    #[test]
    fn without_flags_the_bytes_are_as_before_ecn() {
        // Byte 2 of a segment and of an ACK stays 0 (or the duplicate flag
        // alone) unless CWR or ECE is set: a run without ECN sends the same
        // bytes as before the flags existed.
        assert_eq!(encode_data(0, 10, None, false)[2], 0);
        assert_eq!(encode_data(0, 10, None, true)[2], DATA_CWR);
        let a = AckPacket {
            ack: 0,
            dup: true,
            ece: false,
            rwnd: 1,
            sack: Vec::new(),
            tsecr: None,
        };
        assert_eq!(encode_ack(&a)[2], 1);
        let mut bad = encode_data(0, 10, None, false).to_vec();
        bad[2] = 4;
        assert_eq!(decode_data(&bad), None, "an unknown flag");
    }
}
