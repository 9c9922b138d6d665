//! Why a transfer failed, typed: [`TransferError`] and the details it
//! carries. Each prints as the one line a user reads (`tputctl` prints it);
//! the variants tell the cases apart without reading the text.

use std::net::SocketAddr;
use std::time::Duration;

use tput_cc::units::format_duration;

use crate::error::{ConfigError, ProtocolError};
use crate::node::Refusal;

/// Why a transfer failed ([`TransferOutcome::error`](crate::TransferOutcome::error)),
/// from the point of view of the node that reports it. Each prints as one
/// line; the variants tell the cases apart without reading the text. New
/// variants may come in a minor release: match with a wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TransferError {
    /// Nothing at all came back from `peer` before the idle timeout (RFC
    /// 9000 §10.1): most likely no server runs there, or UDP is blocked.
    #[error("{}", no_answer(*peer, *idle_timeout))]
    NoAnswer {
        /// The server's address.
        peer: SocketAddr,
        /// The idle timeout, when this node's own strict timer
        /// ([`NodeConfig::strict_idle`](crate::NodeConfig::strict_idle))
        /// ended the connection; `None` when quinn-proto's did.
        idle_timeout: Option<Duration>,
    },
    /// The peer fell silent for the idle timeout (RFC 9000 §10.1).
    #[error("{}", timed_out(*idle_timeout))]
    TimedOut {
        /// The idle timeout, when this node's own strict timer ended the
        /// connection; `None` when quinn-proto's did.
        idle_timeout: Option<Duration>,
    },
    /// The server refused the transfer: the limit the request or the
    /// connection exceeds, as the server's close reason states it (RFC 9000
    /// §19.19). A reason that is no refusal of this crate's stays
    /// [`ClosedByPeer`](Self::ClosedByPeer). (A server reports no outcome
    /// for a request it refuses: no transfer began.)
    #[error("peer closed the connection: {0}")]
    Refused(Refusal),
    /// The server was already serving as many connections as it takes
    /// ([`NodeConfig::max_connections`](crate::NodeConfig::max_connections)):
    /// it refused the connection with CONNECTION_REFUSED (RFC 9000 §20.1).
    /// `live`: the message names the command-line flag that sets it.
    #[error(
        "refused: the server is serving as many connections as it takes at once{}",
        if *live { " (tputctl serve --max-clients)" } else { "" }
    )]
    ServerBusy {
        /// Whether the node runs live (not in a simulation).
        live: bool,
    },
    /// A payload byte does not match the pattern it was generated from.
    #[error("payload byte {offset} does not match the pattern")]
    Corrupt {
        /// Its offset in the payload.
        offset: u64,
    },
    /// The peer closed the connection with an application error (RFC 9000
    /// §19.19): a refusal, a protocol error or a failed verification on its
    /// side, or its own timeout; `reason` says which.
    #[error("peer closed the connection: {reason}")]
    ClosedByPeer {
        /// The application error code ([`CLOSE_PROTOCOL_ERROR`](crate::CLOSE_PROTOCOL_ERROR),
        /// [`CLOSE_CORRUPT`](crate::CLOSE_CORRUPT), [`CLOSE_TIMED_OUT`](crate::CLOSE_TIMED_OUT), ...).
        code: u64,
        /// The reason phrase, as sent (lossily decoded as UTF-8).
        reason: String,
    },
    /// The peer sent a malformed request (this node is its server) or
    /// report-stream frame.
    #[error(transparent)]
    Malformed(ProtocolError),
    /// The peer broke the transfer protocol otherwise: how.
    #[error(transparent)]
    Protocol(Violation),
    /// The peer stopped a stream this node writes (RFC 9000 §19.5), or the
    /// write failed for another reason quinn-proto gives.
    #[error("{}", stopped(*stream, error))]
    StreamStopped {
        /// Which of the transfer's streams.
        stream: TransferStream,
        /// quinn-proto's error (`Stopped` carries the peer's code).
        error: quinn_proto::WriteError,
    },
    /// The peer reset a stream this node reads (RFC 9000 §19.4) other than
    /// by the protocol's time-up reset.
    #[error("{}", reset(*stream, error))]
    StreamReset {
        /// Which of the transfer's streams.
        stream: TransferStream,
        /// quinn-proto's error (`Reset` carries the peer's code).
        error: quinn_proto::ReadError,
    },
    /// The connection was lost for another reason: a failed handshake
    /// (certificate, version), a transport error of the peer, a reset.
    #[error("{}", connection_lost(.0))]
    ConnectionLost(quinn_proto::ConnectionError),
    /// A setting this node cannot run the transfer with (found only once
    /// the connection is up, as a request that cannot be encoded).
    #[error(transparent)]
    Config(ConfigError),
    /// The connection closed before the transfer started (during the
    /// handshake, or before the request went out).
    #[error("connection closed before the transfer started")]
    NotStarted,
    /// The connection closed before the transfer completed, with no other
    /// error reported.
    #[error("connection closed before the transfer completed")]
    Incomplete,
}

impl TransferError {
    /// The reason a node closes the connection with when it fails this way:
    /// the text, or a refusal's own text (which the client reads back).
    pub(crate) fn close_reason(&self) -> String {
        match self {
            Self::Refused(r) => r.to_string(),
            other => other.to_string(),
        }
    }

    /// Whether a server turned the transfer away: this node refused it
    /// ([`Refused`](Self::Refused)), the server was full
    /// ([`ServerBusy`](Self::ServerBusy)), or the peer closed the connection
    /// with a refusal's reason (how a client learns of a [`Refusal`]).
    pub fn is_refusal(&self) -> bool {
        match self {
            Self::Refused(_) | Self::ServerBusy { .. } => true,
            Self::ClosedByPeer { reason, .. } => reason.starts_with("refused:"),
            _ => false,
        }
    }
}

/// One of a transfer's streams (the protocol's steps are described in the
/// `proto` module's source). New kinds may come in a minor release.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TransferStream {
    /// The client's bidirectional stream: the request, then an upload's
    /// payload and the receiver's frames back.
    Request,
    /// The stream that carries the payload (the request's stream).
    Payload,
    /// One application buffer's stream (an upload with [`AppBuffers`](crate::AppBuffers)).
    Buffer(quinn_proto::StreamId),
    /// A stream of report frames.
    Report,
}

/// The text of [`TransferError::StreamStopped`].
fn stopped(stream: TransferStream, e: &quinn_proto::WriteError) -> String {
    match stream {
        TransferStream::Request => format!("cannot write the request: {e}"),
        TransferStream::Payload => format!("peer stopped the stream: {e}"),
        TransferStream::Buffer(_) => format!("peer stopped a buffer stream: {e}"),
        TransferStream::Report => format!("peer stopped a report stream: {e}"),
    }
}

/// The text of [`TransferError::StreamReset`].
fn reset(stream: TransferStream, e: &quinn_proto::ReadError) -> String {
    match stream {
        TransferStream::Request => format!("request stream reset by the peer: {e}"),
        TransferStream::Payload => format!("payload stream reset by the peer: {e}"),
        TransferStream::Buffer(id) => format!("buffer stream {id} reset by the peer: {e}"),
        TransferStream::Report => format!("report stream reset by the peer: {e}"),
    }
}

/// Which end of a transfer: the one that sends the payload or the one that
/// receives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum End {
    /// The end that sends the payload.
    Sender,
    /// The end that receives and verifies it.
    Receiver,
}

impl std::fmt::Display for End {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            End::Sender => "sender",
            End::Receiver => "receiver",
        })
    }
}

/// How the peer broke the transfer protocol, beyond a malformed request or
/// frame ([`TransferError::Protocol`]). New kinds may come in a minor
/// release: match with a wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Violation {
    /// The peer's transport parameters allow no stream of this direction,
    /// which the protocol needs (RFC 9000 §4.6).
    #[error("peer allows no {0} stream")]
    NoStream(quinn_proto::Dir),
    /// The peer's stream flow-control window is smaller than the request.
    #[error("the peer's stream window took {taken} of the request's {len} bytes")]
    RequestWindow {
        /// Bytes it took.
        taken: usize,
        /// The request's length.
        len: usize,
    },
    /// The request stream ended before the whole request arrived.
    #[error("stream ended before the request was complete")]
    RequestIncomplete,
    /// The server has no handle on the connection's controller (this
    /// node's fault, reported as the request's).
    #[error("this server cannot build the requested controller")]
    NoControllerSwitch,
    /// A delivered-bytes count for a transfer without intervals.
    #[error("delivered-bytes frame for a transfer without intervals")]
    CountWithoutIntervals,
    /// A delivered-bytes count for an interval that has not begun.
    #[error("delivered-bytes frame for interval {0}, which has not begun")]
    CountTooEarly(u64),
    /// The receiver's report came while the payload was still being sent.
    #[error("receiver report before the payload ended")]
    EarlyReport,
    /// The receiver verified another number of bytes than were sent.
    #[error("receiver verified {verified} bytes, {sent} were sent")]
    ReportMismatch {
        /// Bytes the receiver's report says it verified.
        verified: u64,
        /// Bytes this end sent.
        sent: u64,
    },
    /// A frame out of turn (named as in [`FrameError::Json`](crate::FrameError::Json)).
    #[error("unexpected {frame} from the {from}")]
    UnexpectedFrame {
        /// The frame's name.
        frame: &'static str,
        /// Who sent it.
        from: End,
    },
    /// The peer ended its report stream without its report.
    #[error("{0} ended its stream without a report")]
    NoReport(End),
    /// The payload stream ended short of the byte count the request asked for.
    #[error("stream ended after {got} of {expected} bytes")]
    ShortPayload {
        /// Bytes that arrived.
        got: u64,
        /// Bytes the request asked for.
        expected: u64,
    },
    /// Payload on the request stream of a transfer that sends it in
    /// application buffers.
    #[error("payload on the request stream of a transfer with application buffers")]
    PayloadOnRequestStream,
    /// A buffer stream whose index puts it beyond any payload offset.
    #[error("buffer stream {0} is beyond any payload offset")]
    BufferOffset(quinn_proto::StreamId),
    /// A buffer stream longer than a buffer.
    #[error("buffer stream {id} exceeds {size} bytes")]
    BufferTooLong {
        /// The stream.
        id: quinn_proto::StreamId,
        /// A buffer's size, bytes.
        size: u64,
    },
}

impl From<Violation> for TransferError {
    fn from(v: Violation) -> Self {
        TransferError::Protocol(v)
    }
}

/// The text of [`TransferError::NoAnswer`].
fn no_answer(peer: SocketAddr, idle_timeout: Option<Duration>) -> String {
    let hint = "is a server running there, and is UDP let through?";
    match idle_timeout {
        Some(d) => format!(
            "nothing answered at {peer}: no packet came back in {} (the idle timeout; {hint})",
            format_duration(d)
        ),
        None => format!("nothing answered at {peer}: no packet came back within the idle timeout ({hint})"),
    }
}

/// The text of [`TransferError::TimedOut`].
fn timed_out(idle_timeout: Option<Duration>) -> String {
    match idle_timeout {
        Some(d) => format!(
            "connection timed out: no packet from the peer for {} (the idle timeout)",
            format_duration(d)
        ),
        None => "connection timed out (no packet within the idle timeout)".into(),
    }
}

/// The text of [`TransferError::ConnectionLost`].
fn connection_lost(e: &quinn_proto::ConnectionError) -> String {
    // webpki refuses a CA certificate as the server's own (`openssl req
    // -x509` makes one): say what works.
    if e.to_string().contains("CaUsedAsEndEntity") {
        format!(
            "connection lost: {e}: the server presents a CA certificate (CA:TRUE, \
             as `openssl req -x509` makes by default) as its own, which verification \
             against a root refuses; pin it instead (--pin with the fingerprint \
             `tputctl serve` prints), or give the server a leaf certificate signed \
             by the CA that --ca names"
        )
    } else {
        format!("connection lost: {e}")
    }
}

impl From<Refusal> for TransferError {
    fn from(r: Refusal) -> Self {
        TransferError::Refused(r)
    }
}

impl From<ProtocolError> for TransferError {
    fn from(e: ProtocolError) -> Self {
        TransferError::Malformed(e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::FrameError;

    #[test]
    fn transfer_errors_print_one_line_each() {
        let peer: SocketAddr = "192.0.2.1:4433".parse().unwrap();
        let idle = Some(Duration::from_millis(500));
        for (e, text) in [
            (
                TransferError::NoAnswer {
                    peer,
                    idle_timeout: idle,
                },
                "nothing answered at 192.0.2.1:4433: no packet came back in 500ms (the idle timeout; \
                 is a server running there, and is UDP let through?)",
            ),
            (
                TransferError::NoAnswer {
                    peer,
                    idle_timeout: None,
                },
                "nothing answered at 192.0.2.1:4433: no packet came back within the idle timeout \
                 (is a server running there, and is UDP let through?)",
            ),
            (
                TransferError::TimedOut { idle_timeout: idle },
                "connection timed out: no packet from the peer for 500ms (the idle timeout)",
            ),
            (
                TransferError::TimedOut { idle_timeout: None },
                "connection timed out (no packet within the idle timeout)",
            ),
            (
                TransferError::Refused(Refusal::Bytes { asked: 10, max: 5 }),
                "peer closed the connection: refused: 10 bytes exceed this server's limit of 5 bytes",
            ),
            (
                TransferError::ServerBusy { live: false },
                "refused: the server is serving as many connections as it takes at once",
            ),
            (
                TransferError::Corrupt { offset: 7 },
                "payload byte 7 does not match the pattern",
            ),
            (
                TransferError::ClosedByPeer {
                    code: 2,
                    reason: "payload byte 7 does not match the pattern".into(),
                },
                "peer closed the connection: payload byte 7 does not match the pattern",
            ),
            (
                TransferError::Malformed(ProtocolError::Frame(FrameError::Kind(9))),
                "bad frame: unknown kind 9",
            ),
            (
                Violation::ReportMismatch { verified: 3, sent: 4 }.into(),
                "receiver verified 3 bytes, 4 were sent",
            ),
            (
                Violation::UnexpectedFrame {
                    frame: "sender report",
                    from: End::Receiver,
                }
                .into(),
                "unexpected sender report from the receiver",
            ),
            (
                TransferError::StreamStopped {
                    stream: TransferStream::Report,
                    error: quinn_proto::WriteError::ClosedStream,
                },
                "peer stopped a report stream: closed stream",
            ),
            (
                TransferError::ConnectionLost(quinn_proto::ConnectionError::Reset),
                "connection lost: reset by peer",
            ),
            (
                TransferError::Incomplete,
                "connection closed before the transfer completed",
            ),
        ] {
            assert_eq!(e.to_string(), text);
        }
    }

    #[test]
    fn refusals_are_told_apart_from_other_closes() {
        let refused = TransferError::Refused(Refusal::PerAddress { max: 2 });
        assert!(refused.is_refusal() && TransferError::ServerBusy { live: true }.is_refusal());
        // On the wire a refusal is its own text, which the client reads back.
        assert_eq!(
            refused.close_reason(),
            "refused: this server takes at most 2 connections at once from one address \
             (tputctl serve --max-per-address)"
        );
        let other_server = TransferError::ClosedByPeer {
            code: 1,
            reason: "refused: not today".into(),
        };
        assert!(other_server.is_refusal());
        assert!(!TransferError::Corrupt { offset: 0 }.is_refusal());
    }
}
