//! [`CcSamples`]: a controller trace held compactly, a few bytes a sample.
//!
//! A [`CcSample`] takes 128 bytes in memory, most of them optional fields
//! that only the guarantee controller fills and that rarely change from one
//! sample to the next. A many-flow run keeps hundreds of thousands of them,
//! so a trace is stored as bytes instead: per sample a header byte saying
//! which fields changed, the time as a varint delta in nanoseconds, the
//! window as a zigzag varint delta, and only the changed optional fields.
//! A NewReno sample takes about 5 bytes. Decoding gives back exactly the
//! samples pushed (every `f64` bit for bit). The bytes live in chunks that
//! are filled and never moved (no buffer that doubles and leaves its old
//! copy behind as a hole in the heap): at most a chunk's worth is unused.

use tput_cc::BbrMode;

use super::CcSample;

/// A controller trace, compact: push samples, read them back in order with
/// [`iter`](Self::iter).
///
/// ```
/// use tput_lab::host::{CcSample, CcSamples};
/// let a = CcSample { time_secs: 0.25, cwnd_bytes: 12_000, ..CcSample::default() };
/// let b = CcSample { time_secs: 0.5, cwnd_bytes: 6_000, ssthresh_bytes: Some(6_000), ..a };
/// let trace: CcSamples = [a, b].into_iter().collect();
/// assert_eq!(trace.len(), 2);
/// assert_eq!(trace.to_vec(), vec![a, b]);
/// ```
#[derive(Clone, Default)]
pub struct CcSamples {
    /// The encoded samples; a sample never straddles two chunks.
    chunks: Vec<Vec<u8>>,
    len: usize,
    /// The BBR states met so far: a sample stores an index into this list
    /// (`BbrMode` may grow variants, so no fixed numbering).
    modes: Vec<BbrMode>,
    /// The last sample pushed: what the next one is encoded against.
    last: Option<CcSample>,
    /// The last time stored in nanoseconds.
    last_ns: u64,
}

// Header bits: which fields follow.
const TIME_NS: u16 = 1;
const SSTHRESH: u16 = 1 << 1;
const K: u16 = 1 << 2;
const SLOT: u16 = 1 << 3;
const K_BW: u16 = 1 << 4;
const K_MAX: u16 = 1 << 5;
const GOAL: u16 = 1 << 6;
/// A second header byte follows with the bits below, shifted down by 8.
const MORE: u16 = 1 << 7;
const FLOOR: u16 = 1 << 8;
const BBR: u16 = 1 << 9;

/// The most bytes one encoded sample takes: two header bytes, ten for the
/// time, ten for the window, eleven for each optional integer and each
/// optional float.
const MAX_SAMPLE_BYTES: usize = 2 + 10 + 10 + 3 * 11 + 4 * 11;
/// The first chunk's capacity (a short trace stays small); each next chunk
/// doubles it, up to [`MAX_CHUNK_BYTES`].
const FIRST_CHUNK_BYTES: usize = 256;
/// The largest chunk.
const MAX_CHUNK_BYTES: usize = 8192;

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn get_varint(bytes: &[u8], at: &mut usize) -> u64 {
    let mut v = 0u64;
    let mut shift = 0;
    loop {
        let b = bytes[*at];
        *at += 1;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return v;
        }
        shift += 7;
    }
}

fn zigzag(d: i64) -> u64 {
    ((d << 1) ^ (d >> 63)) as u64
}

fn unzigzag(v: u64) -> i64 {
    ((v >> 1) as i64) ^ -((v & 1) as i64)
}

/// `None` as a 0 byte, `Some(v)` as a 1 byte and `v` as a varint.
fn put_opt_u64(out: &mut Vec<u8>, v: Option<u64>) {
    match v {
        None => out.push(0),
        Some(v) => {
            out.push(1);
            put_varint(out, v);
        }
    }
}

fn get_opt_u64(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let tag = bytes[*at];
    *at += 1;
    (tag == 1).then(|| get_varint(bytes, at))
}

/// `None` as a 0 byte; `Some(v)` as the bits of `v` XOR those of `prev`
/// (0 for `None`): a byte `1 + z`, `z` the XOR's whole low zero bytes (at
/// most 7), then the XOR shifted right by `z` bytes as a varint. A value
/// close to the previous one shares its sign, exponent and top mantissa
/// bits (a short varint); a round one (a whole number of packets, a rate
/// in whole bits per second) has low zero bytes. 2 to 11 bytes, against 9
/// for the raw bits.
fn put_opt_f64(out: &mut Vec<u8>, v: Option<f64>, prev: Option<f64>) {
    match v {
        None => out.push(0),
        Some(v) => {
            let x = v.to_bits() ^ prev.map_or(0, f64::to_bits);
            let z = (x.trailing_zeros() / 8).min(7);
            out.push(1 + z as u8);
            put_varint(out, x >> (8 * z));
        }
    }
}

fn get_opt_f64(bytes: &[u8], at: &mut usize, prev: Option<f64>) -> Option<f64> {
    let tag = bytes[*at];
    *at += 1;
    (tag != 0).then(|| {
        let x = get_varint(bytes, at) << (8 * u32::from(tag - 1));
        f64::from_bits(x ^ prev.map_or(0, f64::to_bits))
    })
}

fn f64_bits(v: Option<f64>) -> Option<u64> {
    v.map(f64::to_bits)
}

/// The nanoseconds `t` seconds stand for, if `t` is exactly what
/// `SimTime::as_secs_f64` gives for them (the simulator's own times).
fn exact_ns(t: f64) -> Option<u64> {
    if !(0.0..1.8e10).contains(&t) {
        return None;
    }
    let ns = (t * 1e9).round() as u64;
    ((ns as f64 * 1e-9).to_bits() == t.to_bits()).then_some(ns)
}

impl CcSamples {
    /// An empty trace.
    pub fn new() -> Self {
        Self::default()
    }

    /// Samples held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there is no sample.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes the encoded samples take.
    pub fn encoded_bytes(&self) -> usize {
        self.chunks.iter().map(Vec::len).sum()
    }

    /// Bytes allocated for them (the encoded bytes and the chunks' unused ends).
    pub fn allocated_bytes(&self) -> usize {
        self.chunks.iter().map(Vec::capacity).sum::<usize>() + self.chunks.capacity() * std::mem::size_of::<Vec<u8>>()
    }

    /// The chunk to write the next sample to, with room for one.
    fn chunk(&mut self) -> &mut Vec<u8> {
        let full = self
            .chunks
            .last()
            .is_none_or(|c| c.capacity() - c.len() < MAX_SAMPLE_BYTES);
        if full {
            let size = self.chunks.last().map_or(FIRST_CHUNK_BYTES, |c| c.capacity() * 2);
            self.chunks.push(Vec::with_capacity(size.min(MAX_CHUNK_BYTES)));
        }
        self.chunks.last_mut().expect("a chunk")
    }

    /// The last sample.
    pub fn last(&self) -> Option<&CcSample> {
        self.last.as_ref()
    }

    /// Append `s`.
    pub fn push(&mut self, s: CcSample) {
        let prev = self.last.unwrap_or_default();
        let mut head = 0u16;
        // Times run forward in a simulator's trace: a delta in nanoseconds.
        let ns = exact_ns(s.time_secs).filter(|&ns| ns >= self.last_ns);
        if ns.is_some() {
            head |= TIME_NS;
        }
        let changed = |a: bool, bit: u16| if a { bit } else { 0 };
        head |= changed(s.ssthresh_bytes != prev.ssthresh_bytes, SSTHRESH);
        head |= changed(f64_bits(s.k) != f64_bits(prev.k), K);
        head |= changed(s.slot_rtts != prev.slot_rtts, SLOT);
        head |= changed(f64_bits(s.k_bw) != f64_bits(prev.k_bw), K_BW);
        head |= changed(f64_bits(s.k_max) != f64_bits(prev.k_max), K_MAX);
        head |= changed(
            f64_bits(s.goal_bytes_per_sec) != f64_bits(prev.goal_bytes_per_sec),
            GOAL,
        );
        head |= changed(s.floor_bytes != prev.floor_bytes, FLOOR);
        head |= changed(s.bbr_mode != prev.bbr_mode, BBR);
        if head >> 8 != 0 {
            head |= MORE;
        }
        let bbr = match s.bbr_mode {
            Some(m) if head & BBR != 0 => Some(match self.modes.iter().position(|&x| x == m) {
                Some(i) => i as u64,
                None => {
                    self.modes.push(m);
                    self.modes.len() as u64 - 1
                }
            }),
            _ => None,
        };
        let last_ns = self.last_ns;
        let out = self.chunk();
        out.push(head as u8);
        if head & MORE != 0 {
            out.push((head >> 8) as u8);
        }
        match ns {
            Some(ns) => put_varint(out, ns - last_ns),
            None => out.extend_from_slice(&s.time_secs.to_bits().to_le_bytes()),
        }
        put_varint(out, zigzag(s.cwnd_bytes.wrapping_sub(prev.cwnd_bytes) as i64));
        if head & SSTHRESH != 0 {
            put_opt_u64(out, s.ssthresh_bytes);
        }
        if head & K != 0 {
            put_opt_f64(out, s.k, prev.k);
        }
        if head & SLOT != 0 {
            put_opt_u64(out, s.slot_rtts.map(u64::from));
        }
        if head & K_BW != 0 {
            put_opt_f64(out, s.k_bw, prev.k_bw);
        }
        if head & K_MAX != 0 {
            put_opt_f64(out, s.k_max, prev.k_max);
        }
        if head & GOAL != 0 {
            put_opt_f64(out, s.goal_bytes_per_sec, prev.goal_bytes_per_sec);
        }
        if head & FLOOR != 0 {
            put_opt_u64(out, s.floor_bytes);
        }
        if head & BBR != 0 {
            put_opt_u64(out, bbr);
        }
        if let Some(ns) = ns {
            self.last_ns = ns;
        }
        self.last = Some(s);
        self.len += 1;
    }

    /// The samples, in the order they were pushed.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            trace: self,
            chunk: 0,
            at: 0,
            prev: CcSample::default(),
            prev_ns: 0,
        }
    }

    /// The samples as a vector.
    pub fn to_vec(&self) -> Vec<CcSample> {
        self.iter().collect()
    }

    /// Give back the unused end of the last chunk (once the trace is complete).
    pub fn shrink_to_fit(&mut self) {
        if let Some(c) = self.chunks.last_mut() {
            c.shrink_to_fit();
        }
        self.chunks.shrink_to_fit();
    }
}

/// The samples of a [`CcSamples`], decoded one by one.
#[derive(Debug, Clone)]
pub struct Iter<'a> {
    trace: &'a CcSamples,
    chunk: usize,
    at: usize,
    prev: CcSample,
    prev_ns: u64,
}

impl Iterator for Iter<'_> {
    type Item = CcSample;

    fn next(&mut self) -> Option<CcSample> {
        let mut b = self.trace.chunks.get(self.chunk)?;
        if self.at >= b.len() {
            self.chunk += 1;
            self.at = 0;
            b = self.trace.chunks.get(self.chunk)?;
        }
        let at = &mut self.at;
        let mut head = u16::from(b[*at]);
        *at += 1;
        if head & MORE != 0 {
            head |= u16::from(b[*at]) << 8;
            *at += 1;
        }
        let mut s = self.prev;
        if head & TIME_NS != 0 {
            let ns = self.prev_ns + get_varint(b, at);
            self.prev_ns = ns;
            s.time_secs = ns as f64 * 1e-9;
        } else {
            let mut t = [0u8; 8];
            t.copy_from_slice(&b[*at..*at + 8]);
            *at += 8;
            s.time_secs = f64::from_bits(u64::from_le_bytes(t));
        }
        s.cwnd_bytes = self.prev.cwnd_bytes.wrapping_add(unzigzag(get_varint(b, at)) as u64);
        if head & SSTHRESH != 0 {
            s.ssthresh_bytes = get_opt_u64(b, at);
        }
        if head & K != 0 {
            s.k = get_opt_f64(b, at, self.prev.k);
        }
        if head & SLOT != 0 {
            s.slot_rtts = get_opt_u64(b, at).map(|v| v as u32);
        }
        if head & K_BW != 0 {
            s.k_bw = get_opt_f64(b, at, self.prev.k_bw);
        }
        if head & K_MAX != 0 {
            s.k_max = get_opt_f64(b, at, self.prev.k_max);
        }
        if head & GOAL != 0 {
            s.goal_bytes_per_sec = get_opt_f64(b, at, self.prev.goal_bytes_per_sec);
        }
        if head & FLOOR != 0 {
            s.floor_bytes = get_opt_u64(b, at);
        }
        if head & BBR != 0 {
            s.bbr_mode = get_opt_u64(b, at).map(|i| self.trace.modes[i as usize]);
        }
        self.prev = s;
        Some(s)
    }
}

impl<'a> IntoIterator for &'a CcSamples {
    type Item = CcSample;
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl FromIterator<CcSample> for CcSamples {
    fn from_iter<I: IntoIterator<Item = CcSample>>(iter: I) -> Self {
        let mut t = Self::new();
        t.extend(iter);
        t
    }
}

impl Extend<CcSample> for CcSamples {
    fn extend<I: IntoIterator<Item = CcSample>>(&mut self, iter: I) {
        for s in iter {
            self.push(s);
        }
    }
}

impl From<Vec<CcSample>> for CcSamples {
    fn from(v: Vec<CcSample>) -> Self {
        v.into_iter().collect()
    }
}

/// Equal when they hold equal samples (compared as [`CcSample`]s are).
impl PartialEq for CcSamples {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl std::fmt::Debug for CcSamples {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CcSamples")
            .field("len", &self.len)
            .field("encoded_bytes", &self.encoded_bytes())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(i: u64) -> CcSample {
        CcSample {
            time_secs: (i * 1_234_567) as f64 * 1e-9,
            cwnd_bytes: 12_000 + (i % 7) * 1_200,
            ssthresh_bytes: (i >= 100).then_some(30_000 + i / 1000),
            ..CcSample::default()
        }
    }

    #[test]
    fn samples_come_back_bit_for_bit() {
        let mut all: Vec<CcSample> = (0..500).map(sample).collect();
        // Every field, odd values, times that are no simulator time, a window that shrinks to 0.
        all.push(CcSample {
            time_secs: 0.1 + 0.2,
            cwnd_bytes: 0,
            ssthresh_bytes: Some(u64::MAX),
            k: Some(-0.0),
            slot_rtts: Some(u32::MAX),
            k_bw: Some(f64::NAN),
            k_max: Some(f64::INFINITY),
            goal_bytes_per_sec: Some(1.25e6),
            floor_bytes: Some(254),
            bbr_mode: Some(BbrMode::ProbeRtt),
        });
        all.push(CcSample {
            time_secs: -1.0,
            cwnd_bytes: u64::MAX,
            ssthresh_bytes: Some(254),
            bbr_mode: Some(BbrMode::Drain),
            ..CcSample::default()
        });
        all.push(CcSample {
            time_secs: 3.0,
            bbr_mode: Some(BbrMode::ProbeRtt),
            ..CcSample::default()
        });
        let trace: CcSamples = all.iter().copied().collect();
        assert_eq!(trace.len(), all.len());
        let back = trace.to_vec();
        assert_eq!(back.len(), all.len());
        for (a, b) in all.iter().zip(&back) {
            // NaN != NaN: compare the bits of every f64.
            let bits = |s: &CcSample| {
                (
                    s.time_secs.to_bits(),
                    s.cwnd_bytes,
                    s.ssthresh_bytes,
                    s.k.map(f64::to_bits),
                    s.slot_rtts,
                    s.k_bw.map(f64::to_bits),
                    s.k_max.map(f64::to_bits),
                    s.goal_bytes_per_sec.map(f64::to_bits),
                    s.floor_bytes,
                    s.bbr_mode,
                )
            };
            assert_eq!(bits(a), bits(b));
        }
        assert_eq!(trace.last().map(|s| s.time_secs), Some(3.0));
    }

    #[test]
    fn a_guarantee_sample_codes_its_floats_short() {
        // k in whole packets, k_bw drifting, the goal and k_max constant.
        let g = |i: u64| CcSample {
            time_secs: (i * 1_000_000) as f64 * 1e-9,
            cwnd_bytes: 12_000 + i * 10,
            k: Some((i / 50) as f64),
            slot_rtts: Some(16),
            k_bw: Some(3.7 + (i % 97) as f64 * 1e-3),
            k_max: Some(f64::INFINITY),
            goal_bytes_per_sec: Some(1.25e6),
            floor_bytes: Some(0),
            ..CcSample::default()
        };
        let all: Vec<CcSample> = (0..5_000).map(g).collect();
        let trace: CcSamples = all.iter().copied().collect();
        assert_eq!(trace.to_vec(), all);
        // Header, time and window take 5 bytes, and k_bw changes every
        // time: 9 raw bytes would make it 14.2 a sample (k's 9 every 50th).
        let per_sample = trace.encoded_bytes() as f64 / trace.len() as f64;
        assert!(per_sample < 13.0, "{per_sample} bytes a sample");
        // Round values take a byte or two after the tag.
        let mut one = Vec::new();
        put_opt_f64(&mut one, Some(4.0), Some(3.0));
        assert!(one.len() <= 3, "{one:?}");
        let mut at = 0;
        assert_eq!(get_opt_f64(&one, &mut at, Some(3.0)), Some(4.0));
        assert_eq!(at, one.len());
    }

    #[test]
    fn a_newreno_sample_takes_a_few_bytes() {
        let trace: CcSamples = (0..10_000).map(sample).collect();
        let per_sample = trace.encoded_bytes() as f64 / trace.len() as f64;
        assert!(per_sample <= 6.5, "{per_sample} bytes a sample");
        // Chunks are filled, not doubled: at most a chunk's worth unused.
        let spare = trace.allocated_bytes() - trace.encoded_bytes();
        assert!(spare <= MAX_CHUNK_BYTES, "{spare} bytes unused");
        assert_eq!(trace.iter().count(), 10_000);
        assert!(std::mem::size_of::<CcSample>() >= 100);
    }
}
