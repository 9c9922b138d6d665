//! The tput transfer protocol, on one bidirectional QUIC stream per connection.
//!
//! 1. The client opens a bidirectional stream and writes a fixed 64-byte
//!    [`Request`]: magic `TPUT`, version, direction, amount, payload key,
//!    target rate, evaluation slot and reporting interval (all big-endian).
//! 2. The sender (client for an upload, server for a download) writes the
//!    [`Pattern`](crate::Pattern) payload and finishes its half of the stream.
//!    A transfer for a duration ends instead with RESET_STREAM carrying
//!    [`RESET_TIME_UP`] when the duration is over (since version 2): data that
//!    was written into QUIC's send buffer but not yet sent is dropped rather
//!    than drained, so the transfer really lasts its duration (with a quinn
//!    stream window of 1.25 MB the drain could otherwise add seconds at low
//!    rates). The receiver takes that reset as the normal end.
//! 3. For an upload the server answers with a length-prefixed JSON
//!    [`ReceiverReport`](crate::ReceiverReport) (u32 big-endian length, at most
//!    [`MAX_REPORT_BYTES`]) and finishes; the client closes the connection.

use std::time::Duration;

use crate::Error;

/// The bytes that open every request.
pub const MAGIC: [u8; 4] = *b"TPUT";
/// The protocol version this crate speaks.
pub const VERSION: u8 = 2;
/// Stream reset code that ends a transfer for a duration (see step 2).
pub const RESET_TIME_UP: u32 = 0x7469;
/// Size of an encoded [`Request`].
pub const REQUEST_LEN: usize = 64;
/// Largest report a peer may send.
pub const MAX_REPORT_BYTES: usize = 4 << 20;

/// Who sends the payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// The client sends, the server receives (iperf3's default).
    Upload,
    /// The server sends, the client receives (`--reverse`).
    Download,
}

/// What the client asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    /// Who sends.
    pub direction: Direction,
    /// Bytes to send; `None` = until `duration` ends.
    pub bytes: Option<u64>,
    /// How long to send; `None` = until `bytes` are sent.
    pub duration: Option<Duration>,
    /// Key of the payload pattern.
    pub key: u64,
    /// Target throughput, bits per second (0 = none).
    pub target_bps: u64,
    /// Evaluation slot length (zero = none).
    pub eval_slot: Duration,
    /// Statistics interval (zero = none).
    pub interval: Duration,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Request {
    /// Encode into the fixed wire form.
    pub fn encode(&self) -> [u8; REQUEST_LEN] {
        let mut b = [0u8; REQUEST_LEN];
        b[..4].copy_from_slice(&MAGIC);
        b[4] = VERSION;
        b[5] = match self.direction {
            Direction::Upload => 0,
            Direction::Download => 1,
        };
        let fields = [
            self.bytes.unwrap_or(u64::MAX),
            self.duration.map_or(0, nanos),
            self.key,
            self.target_bps,
            nanos(self.eval_slot),
            nanos(self.interval),
        ];
        for (i, v) in fields.iter().enumerate() {
            b[8 + 8 * i..16 + 8 * i].copy_from_slice(&v.to_be_bytes());
        }
        b
    }

    /// Decode and validate; the error names what is wrong.
    pub fn decode(b: &[u8]) -> Result<Self, Error> {
        let bad = |why: &str| Error::Protocol(format!("bad request: {why}"));
        if b.len() != REQUEST_LEN {
            return Err(bad(&format!("{} bytes, expected {REQUEST_LEN}", b.len())));
        }
        if b[..4] != MAGIC {
            return Err(bad("missing TPUT magic"));
        }
        if b[4] != VERSION {
            return Err(bad(&format!("version {}, this end speaks {VERSION}", b[4])));
        }
        let direction = match b[5] {
            0 => Direction::Upload,
            1 => Direction::Download,
            d => return Err(bad(&format!("direction {d}"))),
        };
        if b[6..8] != [0, 0] || b[56..] != [0; 8] {
            return Err(bad("reserved bytes are not zero"));
        }
        let field = |i: usize| u64::from_be_bytes(b[8 + 8 * i..16 + 8 * i].try_into().expect("8 bytes"));
        let bytes = Some(field(0)).filter(|&v| v != u64::MAX);
        let duration = Some(field(1)).filter(|&v| v != 0).map(Duration::from_nanos);
        if bytes.is_none() && duration.is_none() {
            return Err(bad("neither a byte count nor a duration"));
        }
        Ok(Self {
            direction,
            bytes,
            duration,
            key: field(2),
            target_bps: field(3),
            eval_slot: Duration::from_nanos(field(4)),
            interval: Duration::from_nanos(field(5)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Request {
        Request {
            direction: Direction::Download,
            bytes: Some(50_000_000),
            duration: None,
            key: 0xdead_beef,
            target_bps: 20_000_000,
            eval_slot: Duration::from_secs(1),
            interval: Duration::from_millis(500),
        }
    }

    #[test]
    fn round_trip() {
        let r = sample();
        assert_eq!(Request::decode(&r.encode()).unwrap(), r);
        let t = Request {
            bytes: None,
            duration: Some(Duration::from_secs(2)),
            direction: Direction::Upload,
            ..r
        };
        assert_eq!(Request::decode(&t.encode()).unwrap(), t);
    }

    #[test]
    fn garbage_is_rejected_with_a_reason() {
        let good = sample().encode();
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (good[..10].to_vec(), "10 bytes"),
            (
                {
                    let mut b = good;
                    b[0] = b'X';
                    b.to_vec()
                },
                "magic",
            ),
            (
                {
                    let mut b = good;
                    b[4] = 9;
                    b.to_vec()
                },
                "version 9",
            ),
            (
                {
                    let mut b = good;
                    b[5] = 7;
                    b.to_vec()
                },
                "direction 7",
            ),
            (
                {
                    let mut b = good;
                    b[60] = 1;
                    b.to_vec()
                },
                "reserved",
            ),
            (
                {
                    let mut b = good;
                    b[8..16].copy_from_slice(&u64::MAX.to_be_bytes());
                    b.to_vec()
                },
                "neither",
            ),
        ];
        for (bytes, want) in cases {
            let e = Request::decode(&bytes).unwrap_err().to_string();
            assert!(e.contains(want), "{e} lacks {want}");
        }
    }
}
