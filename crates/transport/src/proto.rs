//! The tput transfer protocol (version 4), on one bidirectional QUIC stream
//! per connection, plus one unidirectional stream for a download, and in
//! the application-buffer model one unidirectional stream per buffer.
//!
//! 1. The client opens a bidirectional stream and writes a [`Request`]: a
//!    fixed [`REQUEST_LEN`]-byte header (magic `TPUT`, version, direction,
//!    length of the controller spec, then amount, payload key, target rate,
//!    evaluation slot, reporting interval, the sender's rate limit, the
//!    application buffer size and the number of buffers, all
//!    big-endian) followed by the sender's controller spec as UTF-8 text (at
//!    most [`MAX_CC_SPEC_LEN`] bytes). The request carries every sender
//!    parameter, so for a download the server sends exactly as the client
//!    asked: with the controller it names and under its rate limit. A server
//!    that cannot parse the spec closes the connection with
//!    [`CLOSE_PROTOCOL_ERROR`](crate::CLOSE_PROTOCOL_ERROR) and a reason
//!    naming the error (the reason phrase of CONNECTION_CLOSE, RFC 9000 §19.19).
//! 2. The sender (client for an upload, server for a download) writes the
//!    [`Pattern`](crate::Pattern) payload on its half of the stream and
//!    finishes it. A transfer for a duration ends instead with RESET_STREAM
//!    carrying [`RESET_TIME_UP`] when the duration is over (RFC 9000 §19.4):
//!    data written into QUIC's send buffer but not yet sent is dropped rather
//!    than drained, so the transfer really lasts its duration. The receiver
//!    takes that reset as the normal end.
//!    Intervals and evaluation slots are zero (none) or at least
//!    [`MIN_PERIOD`].
//! 3. The receiver writes [`Frame`]s on its half of the stream (the client
//!    after its request): a [`Frame::Delivered`] for each reporting interval
//!    of its meter that has ended, sent when the first payload after its end
//!    arrives (with the ACK that arrival calls for anyway), then, once the
//!    payload has ended, one [`Frame::Report`], and finishes.
//! 4. For a download the server also opens a unidirectional stream and
//!    writes on it a [`Frame::Interval`] per completed interval record (the
//!    sender's series, with the delivered bytes of step 3 filled in), and,
//!    after the receiver's report has arrived, the last records and one
//!    [`Frame::Sender`], and finishes it.
//! 5. The client closes the connection with code 0 once it has everything:
//!    after an upload the receiver's report, after a download the end of
//!    both of the server's streams.
//!
//! A frame is a kind byte, a u32 big-endian body length (at most
//! [`MAX_FRAME_BYTES`]) and the body: 16 bytes (two u64) for
//! [`Frame::Delivered`], JSON for the others.

use std::time::Duration;

use tput_cc::ControllerSpec;
use tput_cc::units::Rate;

use crate::error::{AppBuffersError, ConfigError, FrameError, ProtocolError, RequestError};
use crate::stats::{IntervalStats, ReceiverReport, SenderReport};

/// The bytes that open every request.
pub const MAGIC: [u8; 4] = *b"TPUT";
/// The protocol version this crate speaks. Version 4 added the application
/// buffers to the request and changed the payload pattern (a shared table
/// masked per 4 KiB block, see [`Pattern`](crate::Pattern)): a version-3
/// peer is refused at the request instead of failing verification.
pub const VERSION: u8 = 4;
/// Stream reset code that ends a transfer for a duration (see step 2).
pub const RESET_TIME_UP: u32 = 0x7469;
/// Size of the fixed part of an encoded [`Request`]; the controller spec follows.
pub const REQUEST_LEN: usize = 80;
/// Longest controller spec a request may carry, bytes.
pub const MAX_CC_SPEC_LEN: usize = 1024;
/// Shortest reporting interval or evaluation slot a request may ask for
/// (other than zero, for none): the receiver keeps a counter per interval
/// and per slot, so a finer one would let a peer make it allocate without bound.
pub const MIN_PERIOD: Duration = Duration::from_millis(1);
/// Most application buffers a request may keep in flight (each is a
/// stream the receiver tracks; quinn-proto allows 100 concurrent
/// unidirectional streams by default).
pub const MAX_BUFFERS: u32 = 64;
/// Largest frame body a peer may send.
pub const MAX_FRAME_BYTES: usize = 4 << 20;
/// Largest report a peer may send (a report is one frame).
pub const MAX_REPORT_BYTES: usize = MAX_FRAME_BYTES;

/// Who sends the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The client sends, the server receives (iperf3's default).
    Upload,
    /// The server sends, the client receives (`--reverse`).
    Download,
}

/// The application-buffer model (Miyake, Kato, Suzuki, "Implementation of
/// high speed transport protocol as user level library and its
/// evaluation", 1995): the sender's application hands the transport
/// buffers of `size` bytes and keeps at most `count` of them in flight,
/// reusing one only once all its bytes are acknowledged. Each buffer is one
/// QUIC stream (protocol step 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct AppBuffers {
    /// Buffers in flight at most, 1 ..= [`MAX_BUFFERS`].
    pub count: u32,
    /// Bytes per buffer (the last one of a byte-counted transfer may be shorter).
    pub size: u64,
}

impl AppBuffers {
    /// Check the values; the error names the bad one.
    pub fn check(&self) -> Result<(), AppBuffersError> {
        if self.count == 0 || self.count > MAX_BUFFERS {
            return Err(AppBuffersError::Count(self.count));
        }
        if self.size == 0 {
            return Err(AppBuffersError::ZeroSize);
        }
        Ok(())
    }
}

/// What the client asks for: every parameter of the sender and the receiver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    /// Who sends.
    pub direction: Direction,
    /// Bytes to send; `None` = until `duration` ends.
    pub bytes: Option<u64>,
    /// How long to send; `None` = until `bytes` are sent.
    pub duration: Option<Duration>,
    /// Key of the payload pattern.
    pub key: u64,
    /// Target throughput (`None`: none; on the wire, bits per second, 0 for none).
    pub target: Option<Rate>,
    /// Evaluation slot length (zero = none).
    pub eval_slot: Duration,
    /// Statistics interval (zero = none).
    pub interval: Duration,
    /// The sender's application rate limit (`None`: none; on the wire,
    /// bits per second, 0 for none).
    pub rate_limit: Option<Rate>,
    /// The sender's controller spec (`tputctl cc list` syntax); a server
    /// builds it for a download.
    pub cc: String,
    /// The application-buffer model (uploads only); `None` sends the
    /// payload on the request's stream.
    pub buffers: Option<AppBuffers>,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// A rate on the wire: bits per second, 0 for none.
fn bits(rate: Option<Rate>) -> u64 {
    rate.map_or(0, Rate::bits_per_sec)
}

/// A rate from the wire (see [`bits`]).
fn rate(bits_per_sec: u64) -> Option<Rate> {
    (bits_per_sec > 0).then_some(Rate::from_bits_per_sec(bits_per_sec))
}

fn bad(why: RequestError) -> ProtocolError {
    ProtocolError::Request(why)
}

impl Request {
    /// Encode into the wire form: the fixed header, then the spec.
    ///
    /// The spec is not checked here (a peer must refuse a bad one), but one
    /// longer than [`MAX_CC_SPEC_LEN`] cannot be encoded.
    pub fn encode(&self) -> Result<Vec<u8>, ConfigError> {
        let spec = self.cc.as_bytes();
        if spec.len() > MAX_CC_SPEC_LEN {
            return Err(ConfigError::SpecTooLong {
                len: spec.len(),
                max: MAX_CC_SPEC_LEN,
            });
        }
        let mut b = vec![0u8; REQUEST_LEN + spec.len()];
        b[..4].copy_from_slice(&MAGIC);
        b[4] = VERSION;
        b[5] = match self.direction {
            Direction::Upload => 0,
            Direction::Download => 1,
        };
        b[6..8].copy_from_slice(&(spec.len() as u16).to_be_bytes());
        let fields = [
            self.bytes.unwrap_or(u64::MAX),
            self.duration.map_or(0, nanos),
            self.key,
            bits(self.target),
            nanos(self.eval_slot),
            nanos(self.interval),
            bits(self.rate_limit),
            self.buffers.map_or(0, |b| u64::from(b.count)),
            self.buffers.map_or(0, |b| b.size),
        ];
        for (i, v) in fields.iter().enumerate() {
            b[8 + 8 * i..16 + 8 * i].copy_from_slice(&v.to_be_bytes());
        }
        b[REQUEST_LEN..].copy_from_slice(spec);
        Ok(b)
    }

    /// The whole request's length from its fixed header (the first
    /// [`REQUEST_LEN`] bytes), after checking magic, version and spec length,
    /// so that a reader knows how much more to read.
    pub fn encoded_len(header: &[u8]) -> Result<usize, ProtocolError> {
        if header.len() < REQUEST_LEN {
            return Err(bad(RequestError::Short {
                len: header.len(),
                min: REQUEST_LEN,
            }));
        }
        if header[..4] != MAGIC {
            return Err(bad(RequestError::Magic));
        }
        if header[4] != VERSION {
            return Err(bad(RequestError::Version {
                got: header[4],
                ours: VERSION,
            }));
        }
        let spec = usize::from(u16::from_be_bytes([header[6], header[7]]));
        if spec > MAX_CC_SPEC_LEN {
            return Err(bad(RequestError::SpecTooLong {
                len: spec,
                max: MAX_CC_SPEC_LEN,
            }));
        }
        Ok(REQUEST_LEN + spec)
    }

    /// Decode and validate (including the controller spec); the error names what is wrong.
    pub fn decode(b: &[u8]) -> Result<Self, ProtocolError> {
        let len = Self::encoded_len(b)?;
        if b.len() != len {
            return Err(bad(RequestError::Length {
                len: b.len(),
                announced: len,
            }));
        }
        let direction = match b[5] {
            0 => Direction::Upload,
            1 => Direction::Download,
            d => return Err(bad(RequestError::Direction(d))),
        };
        let field = |i: usize| u64::from_be_bytes(b[8 + 8 * i..16 + 8 * i].try_into().expect("8 bytes"));
        let bytes = Some(field(0)).filter(|&v| v != u64::MAX);
        let duration = Some(field(1)).filter(|&v| v != 0).map(Duration::from_nanos);
        if bytes.is_none() && duration.is_none() {
            return Err(bad(RequestError::NoAmount));
        }
        let eval_slot = Duration::from_nanos(field(4));
        let interval = Duration::from_nanos(field(5));
        for (name, d) in [("evaluation slot", eval_slot), ("interval", interval)] {
            if !d.is_zero() && d < MIN_PERIOD {
                return Err(bad(RequestError::PeriodTooShort {
                    what: name,
                    period: d,
                    min: MIN_PERIOD,
                }));
            }
        }
        let cc = std::str::from_utf8(&b[REQUEST_LEN..])
            .map_err(|_| bad(RequestError::SpecNotUtf8))?
            .to_owned();
        let buffers = match (field(7), field(8)) {
            (0, 0) => None,
            (count, size) => {
                let b = AppBuffers {
                    count: u32::try_from(count).unwrap_or(u32::MAX),
                    size,
                };
                b.check().map_err(|e| bad(RequestError::AppBuffers(e)))?;
                if direction == Direction::Download {
                    return Err(bad(RequestError::BuffersForDownload));
                }
                Some(b)
            }
        };
        let req = Self {
            buffers,
            direction,
            bytes,
            duration,
            key: field(2),
            target: rate(field(3)),
            eval_slot,
            interval,
            rate_limit: rate(field(6)),
            cc,
        };
        req.controller()?;
        Ok(req)
    }

    /// The sender's controller, parsed; the error names the spec and what is wrong with it.
    pub fn controller(&self) -> Result<ControllerSpec, ProtocolError> {
        // The spec's own error names it: "bad controller spec `...`: why".
        self.cc.parse().map_err(|e| bad(RequestError::Controller(e)))
    }
}

/// One message on a report stream (steps 3 and 4).
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// Receiver to sender: new payload bytes that arrived and were verified
    /// in the receiver's reporting interval `index`, each counted once at
    /// its first arrival, out-of-order arrivals included (complete: later
    /// arrivals count in later intervals).
    Delivered {
        /// Interval number, from 0.
        index: u64,
        /// Payload bytes.
        bytes: u64,
    },
    /// Receiver to sender, last: the receiver's report.
    Report(ReceiverReport),
    /// Server to client after a download: one of the sender's interval records.
    Interval(IntervalStats),
    /// Server to client after a download, last: the sender's report.
    Sender(SenderReport),
}

const KIND_DELIVERED: u8 = 1;
const KIND_REPORT: u8 = 2;
const KIND_INTERVAL: u8 = 3;
const KIND_SENDER: u8 = 4;

impl Frame {
    /// Encode: kind, u32 big-endian length, body.
    pub fn encode(&self) -> Vec<u8> {
        let (kind, body) = match self {
            Frame::Delivered { index, bytes } => {
                let mut b = index.to_be_bytes().to_vec();
                b.extend_from_slice(&bytes.to_be_bytes());
                (KIND_DELIVERED, b)
            }
            Frame::Report(r) => (KIND_REPORT, serde_json::to_vec(r).expect("reports serialize")),
            Frame::Interval(i) => (KIND_INTERVAL, serde_json::to_vec(i).expect("records serialize")),
            Frame::Sender(s) => (KIND_SENDER, serde_json::to_vec(s).expect("reports serialize")),
        };
        let mut out = Vec::with_capacity(5 + body.len());
        out.push(kind);
        out.extend_from_slice(&(body.len() as u32).to_be_bytes());
        out.extend_from_slice(&body);
        out
    }

    /// Take one complete frame off the front of `buf`: `Ok(None)` if more
    /// bytes are needed; the error names what is wrong.
    pub fn take(buf: &mut Vec<u8>) -> Result<Option<Frame>, ProtocolError> {
        let bad = ProtocolError::Frame;
        if buf.len() < 5 {
            return Ok(None);
        }
        let kind = buf[0];
        let len = u32::from_be_bytes(buf[1..5].try_into().expect("4 bytes")) as usize;
        if len > MAX_FRAME_BYTES {
            return Err(bad(FrameError::TooLong {
                len,
                max: MAX_FRAME_BYTES,
            }));
        }
        if buf.len() < 5 + len {
            return Ok(None);
        }
        let body = &buf[5..5 + len];
        let json = |what: &'static str| bad(FrameError::Json(what));
        let frame = match kind {
            KIND_DELIVERED if len == 16 => Frame::Delivered {
                index: u64::from_be_bytes(body[..8].try_into().expect("8 bytes")),
                bytes: u64::from_be_bytes(body[8..].try_into().expect("8 bytes")),
            },
            KIND_DELIVERED => return Err(bad(FrameError::DeliveredLength(len))),
            KIND_REPORT => Frame::Report(serde_json::from_slice(body).map_err(|_| json("receiver report"))?),
            KIND_INTERVAL => Frame::Interval(serde_json::from_slice(body).map_err(|_| json("interval record"))?),
            KIND_SENDER => Frame::Sender(serde_json::from_slice(body).map_err(|_| json("sender report"))?),
            k => return Err(bad(FrameError::Kind(k))),
        };
        buf.drain(..5 + len);
        Ok(Some(frame))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ProtocolError;

    fn sample() -> Request {
        Request {
            direction: Direction::Download,
            bytes: Some(50_000_000),
            duration: None,
            key: 0xdead_beef,
            target: Some(Rate::from_bits_per_sec(20_000_000)),
            eval_slot: Duration::from_secs(1),
            interval: Duration::from_millis(500),
            rate_limit: Some(Rate::from_bits_per_sec(40_000_000)),
            cc: "vegas:alpha=2,beta=4".into(),
            buffers: None,
        }
    }

    #[test]
    fn rates_travel_as_bits_per_second_with_zero_for_none() {
        let field = |b: &[u8], i: usize| u64::from_be_bytes(b[8 + 8 * i..16 + 8 * i].try_into().unwrap());
        let b = sample().encode().unwrap();
        assert_eq!((field(&b, 3), field(&b, 6)), (20_000_000, 40_000_000));
        let none = Request {
            target: None,
            rate_limit: None,
            ..sample()
        };
        let b = none.encode().unwrap();
        assert_eq!((field(&b, 3), field(&b, 6)), (0, 0));
        assert_eq!(Request::decode(&b).unwrap(), none);
    }

    #[test]
    fn round_trip() {
        let r = sample();
        let b = r.encode().unwrap();
        assert_eq!(b.len(), REQUEST_LEN + r.cc.len());
        assert_eq!(Request::encoded_len(&b[..REQUEST_LEN]).unwrap(), b.len());
        assert_eq!(Request::decode(&b).unwrap(), r);
        let t = Request {
            bytes: None,
            duration: Some(Duration::from_secs(2)),
            direction: Direction::Upload,
            rate_limit: None,
            cc: "cubic".into(),
            ..r
        };
        assert_eq!(Request::decode(&t.encode().unwrap()).unwrap(), t);
        let u = Request {
            buffers: Some(AppBuffers {
                count: 4,
                size: 512 << 10,
            }),
            ..t
        };
        assert_eq!(Request::decode(&u.encode().unwrap()).unwrap(), u);
    }

    #[test]
    fn garbage_is_rejected_with_a_reason() {
        let good = sample().encode().unwrap();
        let with = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut b = good.clone();
            f(&mut b);
            b
        };
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (good[..10].to_vec(), "10 bytes"),
            (with(&|b| b[0] = b'X'), "magic"),
            (with(&|b| b[4] = 9), "version 9"),
            (with(&|b| b[5] = 7), "direction 7"),
            (with(&|b| b[8..16].copy_from_slice(&u64::MAX.to_be_bytes())), "neither"),
            (
                with(&|b| b[6..8].copy_from_slice(&2000u16.to_be_bytes())),
                "2000 bytes exceeds",
            ),
            (with(&|b| b.push(b' ')), "header announces"),
            (with(&|b| b[REQUEST_LEN] = 0xff), "not UTF-8"),
            (
                with(&|b| b[48..56].copy_from_slice(&1u64.to_be_bytes())),
                "interval of 1ns is shorter",
            ),
            (
                with(&|b| b[40..48].copy_from_slice(&999_999u64.to_be_bytes())),
                "evaluation slot of",
            ),
            (
                with(&|b| b[64..72].copy_from_slice(&65u64.to_be_bytes())),
                "65 application buffers",
            ),
            (
                with(&|b| b[64..72].copy_from_slice(&2u64.to_be_bytes())),
                "buffers of 0 bytes",
            ),
            (
                with(&|b| {
                    b[64..72].copy_from_slice(&2u64.to_be_bytes());
                    b[72..80].copy_from_slice(&1000u64.to_be_bytes());
                }),
                "uploads only",
            ),
        ];
        for (bytes, want) in cases {
            let e = Request::decode(&bytes).unwrap_err();
            assert!(matches!(e, ProtocolError::Request(_)), "{e:?}");
            let e = e.to_string();
            assert!(e.starts_with("bad request: ") && e.contains(want), "{e} lacks {want}");
        }
        // The variants carry the values.
        match Request::decode(&with(&|b| b[4] = 9)) {
            Err(ProtocolError::Request(r)) => {
                assert_eq!(r, RequestError::Version { got: 9, ours: VERSION })
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_bad_controller_spec_is_named() {
        let r = Request {
            cc: "warp:speed=9".into(),
            ..sample()
        };
        let e = Request::decode(&r.encode().unwrap()).unwrap_err().to_string();
        assert!(e.contains("controller spec") && e.contains("warp"), "{e}");
        let long = Request {
            cc: "x".repeat(MAX_CC_SPEC_LEN + 1),
            ..sample()
        };
        match long.encode() {
            Err(e) => {
                assert_eq!(
                    e,
                    ConfigError::SpecTooLong {
                        len: 1025,
                        max: MAX_CC_SPEC_LEN
                    }
                );
                assert!(e.to_string().contains("1025 bytes"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn frames_round_trip_and_arrive_in_pieces() {
        let frames = vec![
            Frame::Delivered {
                index: 3,
                bytes: 123_456,
            },
            Frame::Report(ReceiverReport {
                bytes: 7,
                duration_secs: 1.5,
                interval_bytes: vec![3, 4],
                slots: Vec::new(),
                success_ratio: None,
                cpu_secs: Some(0.25),
            }),
            Frame::Sender(SenderReport {
                cc: "cubic".into(),
                written_bytes: 9,
                cpu_secs: None,
            }),
        ];
        let wire: Vec<u8> = frames.iter().flat_map(Frame::encode).collect();
        let mut buf = Vec::new();
        let mut got = Vec::new();
        // One byte at a time: a frame is taken only once it is complete.
        for b in wire {
            buf.push(b);
            while let Some(f) = Frame::take(&mut buf).unwrap() {
                got.push(f);
            }
        }
        assert_eq!(got, frames);
        assert!(buf.is_empty());
    }

    #[test]
    fn bad_frames_are_named() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (vec![9, 0, 0, 0, 0], "unknown kind 9"),
            (vec![1, 0, 0, 0, 2, 0, 0], "expected 16"),
            (vec![2, 0, 0, 0, 2, b'{', b'x'], "receiver report is not valid JSON"),
            (vec![3, 0xff, 0, 0, 0], "at most"),
        ];
        for (mut bytes, want) in cases {
            let e = Frame::take(&mut bytes).unwrap_err();
            assert!(matches!(e, ProtocolError::Frame(_)), "{e:?}");
            let e = e.to_string();
            assert!(e.starts_with("bad frame: ") && e.contains(want), "{e} lacks {want}");
        }
        match Frame::take(&mut vec![9, 0, 0, 0, 0]) {
            Err(ProtocolError::Frame(f)) => assert_eq!(f, FrameError::Kind(9)),
            other => panic!("{other:?}"),
        }
    }
}
