//! A packet-level TCP model for the `tput-netsim` simulator, in the style of
//! ns-2's one-way agents (`Agent/TCP` and `Agent/TCPSink`): no handshake,
//! fixed-size segments, byte sequence numbers, cumulative ACKs. It exists so
//! that experiments can compare QUIC with the papers' transport.
//!
//! [`TcpSender`] and [`TcpSink`] are [`tput_netsim::Host`]s. The sender's
//! window comes from any `tput-cc` controller: every segment newly covered by
//! a cumulative ACK is one [`CongestionController::on_ack`] (with an RTT
//! sample, Karn's rule applied), a fast retransmit is one
//! [`CongestionKind::Loss`](tput_cc::CongestionKind::Loss) event and a retransmission timeout one
//! [`CongestionKind::PersistentCongestion`](tput_cc::CongestionKind::PersistentCongestion) event. The controller counts
//! payload bytes: it is built with the segment size as its `mss`, so its
//! window is in the same units as ns-2's `window_ * packetSize_`.
//!
//! Loss recovery ([`Recovery`]): Reno (RFC 5681 §3.2), NewReno (RFC 6582
//! §3.2), SACK (RFC 6675, with the sink's SACK blocks of RFC 2018) and
//! go-back-N. With [`TcpConfig::ecn`] the two ends speak ECN (RFC 3168): an
//! ECN-Echo is one [`CongestionKind::Ecn`](tput_cc::CongestionKind::Ecn)
//! event per window of data, the event a QUIC sender's controller hears of
//! a CE count (RFC 9002 §7.1). The retransmission timer follows RFC 6298. When fast recovery
//! ends the sender tells the controller
//! ([`CongestionController::on_recovery_end`]), so that the controller's
//! recovery period is TCP's ([`ControllerRecovery`]). A controller that
//! reports a pacing rate (BBR, the fixed window) is always paced at that
//! rate, as Linux paces at `sk_pacing_rate` when the congestion-control
//! module sets it; for the others, optional pacing ([`TcpConfig::pacing`])
//! spreads segments at Linux's rate from the window. With SACK recovery, a
//! controller that [counts selective acknowledgements]
//! (BBR) hears of a segment when a SACK block first covers it and of every
//! segment RFC 6675 declares lost, as QUIC reports packets; the others hear
//! of cumulative ACKs and one loss per recovery, as in ns-2.
//!
//! The model has its own records: the sender's [`TcpStats`],
//! [`TimeoutRecord`]s and [`IntervalRecord`]s, the sink's [`SinkReport`]
//! (with per-slot byte counts for whoever judges them against a target),
//! and a [`CcObserver`] hook through which the user of a sender watches its
//! controller. It knows nothing of QUIC: the experiment crate converts
//! these records into its own.
//!
//! # Modules
//!
//! - `sender`, `sink`: the two [`Host`](tput_netsim::Host)s;
//! - [`files`]: one connection per file over one address pair
//!   ([`TcpFileClient`](files::TcpFileClient), [`TcpFileServer`](files::TcpFileServer));
//! - `wire`: the wire format below and the payload pattern the sink checks.
//!
//! # Example
//!
//! A sender and its sink on a 10 Mbit/s, 10 ms link, NewReno's window:
//!
//! ```
//! use std::time::{Duration, Instant};
//! use tput_netsim::{Addr, Chain, LinkConfig, Rate, SimTime, Simulator};
//! use tput_tcp::{Amount, TcpConfig, TcpSender, TcpSink, TcpTransfer};
//!
//! let chain = Chain::build(&[LinkConfig::new(Rate::from_mbit_per_sec(10), Duration::from_millis(10))])?;
//! let mut sim = Simulator::new(chain.topology, 1);
//! let (src, dst) = (Addr::new(chain.nodes[0], 1), Addr::new(chain.nodes[1], 2));
//! let cfg = TcpConfig::default();
//! let sink = sim.attach(dst, TcpSink::new(cfg.clone(), Duration::from_secs(1), None))?;
//! let cc = "newreno".parse::<tput_cc::ControllerSpec>()?.build(cfg.segment as u16);
//! let transfer = TcpTransfer::new(dst, 1, SimTime::ZERO, Amount::Bytes(1_000_000));
//! let sender = sim.attach(src, TcpSender::new(cfg, cc, Instant::now(), transfer))?;
//! sim.run_for(Duration::from_secs(10));
//! let sender = sim.host::<TcpSender>(sender).unwrap();
//! assert!(sender.is_finished());
//! assert_eq!(sim.host::<TcpSink>(sink).unwrap().delivered(), 1_000_000);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Wire format
//!
//! Each segment is one simulator datagram whose payload starts with a
//! 12-byte header (kind `1`, a timestamp flag, a flag byte (1: CWR), a zero
//! byte, the sequence number of the first payload byte as a big-endian
//! `u64`; with timestamps the 8-byte TSval follows) and then the payload. With the
//! link's default `overhead_bytes` of 28 a data packet is `segment + 40`
//! bytes on the wire, ns-2's TCP/IP header size. An ACK is 16 bytes (kind
//! `2`, the number of SACK blocks, a flag byte (bit 0 when it answers a
//! segment already delivered, like RFC 2883's D-SACK; bit 1: ECE), a
//! timestamp flag, the cumulative ACK as a
//! `u64`, the receive window in bytes as a `u32`) plus 16 bytes per SACK
//! block (start and end as `u64`): 44 bytes on the wire without SACK blocks,
//! close to ns-2's 40-byte ACKs. Payload byte `i` of the stream is
//! `i mod 251`, which the sink checks.

use std::time::Duration;

use tput_cc::{CongestionController, Snapshot};
use tput_netsim::{Addr, FlowId, SimTime};

/// The README's example, compiled and run as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct CrateReadmeDoctests;

pub mod files;
mod sender;
mod sink;
mod wire;

pub use sender::TcpSender;
pub use sink::{SinkReport, TcpSink};
pub use wire::{ACK_HEADER_BYTES, DATA_HEADER_BYTES, MAX_SACK_BLOCKS, MAX_SEGMENT, SACK_BLOCK_BYTES};

/// Loss recovery of the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[non_exhaustive]
pub enum Recovery {
    /// RFC 5681 §3.2: fast retransmit and fast recovery, which ends with the
    /// first ACK of new data (ns-2's `Agent/TCP/Reno`).
    Reno,
    /// RFC 6582 §3.2: partial ACKs retransmit the next hole and keep fast
    /// recovery until everything sent before it is acknowledged (ns-2's
    /// `Agent/TCP/Newreno`).
    #[default]
    NewReno,
    /// RFC 6675: a scoreboard of the sink's SACK blocks, `pipe` instead of the
    /// window inflation, retransmission of every hole the scoreboard declares
    /// lost (ns-2's `Agent/TCP/Sack1`). Needs SACK blocks from the sink.
    Sack,
    /// Go-back-N: after a fast retransmit or a timeout, everything from the
    /// first unacknowledged segment is sent again.
    Gbn,
    /// RACK-TLP (RFC 8985), Linux's default since 4.18: a segment is lost
    /// when one sent sufficiently later (a reordering window later) has been
    /// delivered, so a lost retransmission is detected one round trip after
    /// it was sent; a tail loss probe (§7) draws an ACK when a tail of the
    /// flight gets none. Over RFC 6675's scoreboard and `pipe`; needs SACK
    /// blocks from the sink.
    Rack,
}

impl Recovery {
    /// Whether the rule set reads the sink's SACK blocks (`sack`, `rack`).
    pub fn uses_sack(self) -> bool {
        matches!(self, Recovery::Sack | Recovery::Rack)
    }
}

impl std::fmt::Display for Recovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Recovery::Reno => "reno",
            Recovery::NewReno => "newreno",
            Recovery::Sack => "sack",
            Recovery::Gbn => "gbn",
            Recovery::Rack => "rack",
        })
    }
}

/// When the controller's recovery period ends (see
/// [`CongestionController::on_recovery_end`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[non_exhaustive]
pub enum ControllerRecovery {
    /// With TCP's fast recovery: the ACK that covers `recover` (RFC 6582
    /// §3.2 step 3; RFC 6675's `RecoveryPoint`; for Reno the first ACK of
    /// new data, RFC 5681 §3.2 step 6). TCP does not grow its window during
    /// fast recovery and grows it from the next ACK on, as ns-2 and Linux
    /// do. The controller hears a retransmitted segment's ACK with the time
    /// of its first transmission, so that the repair of a hole does not end
    /// the period early.
    #[default]
    Tcp,
    /// RFC 9002 §7.3.2's rule alone, QUIC's: the period ends when a segment
    /// sent after the reduction is acknowledged, a retransmission counting
    /// as sent when it was resent (as a QUIC packet would be): with several
    /// losses in a window, NewReno's second partial ACK ends it and the
    /// window grows during TCP's fast recovery; Reno's ends a round trip
    /// after TCP's. What the model did before; for comparisons.
    Rfc9002,
}

impl std::fmt::Display for ControllerRecovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ControllerRecovery::Tcp => "tcp",
            ControllerRecovery::Rfc9002 => "rfc9002",
        })
    }
}

/// Linux's pacing rate in slow start, percent of `cwnd / srtt`
/// (`net.ipv4.tcp_pacing_ss_ratio`).
pub const PACING_SS_PERCENT: u64 = 200;
/// Linux's pacing rate in congestion avoidance, percent of `cwnd / srtt`
/// (`net.ipv4.tcp_pacing_ca_ratio`).
pub const PACING_CA_PERCENT: u64 = 120;

/// Default segment payload, bytes (ns-2's `Agent/TCP packetSize_`).
pub const DEFAULT_SEGMENT: u32 = 1000;
/// Default minimum RTO (Linux's `TCP_RTO_MIN`; ns-2's `minrto_` is 0.2 s in many scripts).
pub const DEFAULT_MIN_RTO: Duration = Duration::from_millis(200);
/// Delayed-ACK timer when delayed ACKs are on without a duration (ns-2's `Agent/TCPSink/DelAck interval_`).
pub const DEFAULT_DELAYED_ACK: Duration = Duration::from_millis(100);
/// Default receive window, bytes: large enough not to limit ordinary runs.
pub const DEFAULT_RECEIVE_WINDOW: u64 = 16 << 20;

/// Parameters of a TCP sender and its sink.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpConfig {
    /// Payload bytes per segment (ns-2's `packetSize_`), 1..=[`MAX_SEGMENT`].
    pub segment: u32,
    /// Loss recovery of the sender.
    pub recovery: Recovery,
    /// Duplicate ACKs that trigger a fast retransmit (RFC 5681 §3.2: 3).
    pub dupack_threshold: u32,
    /// Lower bound of the RTO (RFC 6298 §2.4 says 1 s; the default is 200 ms).
    pub min_rto: Duration,
    /// Upper bound of the RTO, backoff included (RFC 6298 §2.5: at least 60 s).
    pub max_rto: Duration,
    /// RTO before the first RTT sample (RFC 6298 §2.1: 1 s; ns-2's
    /// `rtxcur_init_`: 3 s, RFC 2988's value).
    pub initial_rto: Duration,
    /// Whether a fast retransmit restarts the retransmission timer. RFC 6298
    /// §5 restarts it only when new data is acknowledged (§5.3) or it fires
    /// (§5.6), so after a fast retransmit the pending timeout still counts
    /// from the last ACK of new data. ns-2 (`reset_rtx_timer` in its
    /// duplicate-ACK action) and Linux (the head of the retransmission queue
    /// re-arms it when resent, `tcp_xmit_retransmit_queue`) restart it, so
    /// the retransmission gets a whole RTO: the default. Off, a timeout can
    /// follow the fast retransmit sooner.
    pub restart_timer_on_fast_retransmit: bool,
    /// When the controller's recovery period ends.
    pub controller_recovery: ControllerRecovery,
    /// Pace segments (off in ns-2 and by default): at most one segment per
    /// `len / rate`, rate = `cwnd / SRTT` times [`PACING_SS_PERCENT`] while
    /// `cwnd < ssthresh / 2` and [`PACING_CA_PERCENT`] after, as Linux's
    /// `tcp_update_pacing_rate`; no pacing before the first RTT sample.
    /// Retransmissions are paced too. A controller that reports its own
    /// pacing rate ([`CongestionController::pacing_rate`])
    /// is paced at that rate whatever this says (one segment per
    /// `len / rate`, with no burst allowance).
    pub pacing: bool,
    /// Clock granularity `G` of RFC 6298 §2.
    pub granularity: Duration,
    /// Largest backoff factor of the RTO (RFC 6298 §5.5 doubles it per timeout).
    pub max_backoff: u32,
    /// Delayed ACKs (RFC 5681 §4.2): ACK every second in-order segment, or
    /// after this timer; `None` = an ACK per segment.
    pub delayed_ack: Option<Duration>,
    /// Whether the sink sends SACK blocks (RFC 2018).
    pub sack: bool,
    /// RFC 7323 timestamps (off in ns-2's TCP and by default; on in
    /// Linux): every segment carries the sender's clock, every ACK echoes
    /// the timestamp of the segment that last advanced the window (§4.3),
    /// and each ACK that advances the window gives an RTT sample (§4.1),
    /// also for retransmitted data, so a valid sample ends an RTO backoff
    /// (RFC 6298 §5.7) without waiting for a segment sent only once.
    /// Segments and ACKs are 8 bytes longer.
    pub timestamps: bool,
    /// Receive window the sink advertises, bytes; the sender never has more
    /// than this beyond the cumulative ACK.
    pub receive_window: u64,
    /// Limited Transmit (RFC 3042): each of the first duplicate ACKs below
    /// the threshold lets one more segment out beyond the window (ns-2's
    /// `Agent/TCP singledup_`, on by default in ns-2 2.35). Reno, NewReno and
    /// go-back-N recovery; ignored with `sack`.
    pub limited_transmit: bool,
    /// Proportional Rate Reduction (RFC 6937) in fast recovery, with its
    /// default bound PRR-SSRB (§3): each ACK lets out data in proportion
    /// (`ssthresh / RecoverFS`) to what it reports delivered while `pipe`
    /// is above the controller's reduced window, and slow-starts back to it,
    /// at most one segment beyond what was delivered, while `pipe` is below.
    /// Off (the default, as ns-2 and RFC 6675): the sender waits until `pipe`
    /// falls below the reduced window. Needs SACK or RACK-TLP recovery.
    pub prr: bool,
    /// The reduction bound of PRR while `pipe` is below `ssthresh`
    /// ([`PrrBound`], RFC 6937 §3): PRR-SSRB (the default) or PRR-CRB. Only
    /// with [`prr`](Self::prr).
    pub prr_bound: PrrBound,
    /// ECN (RFC 3168), off by default as in ns-2. On, the sender sends new
    /// data as ECT(0) (never a retransmission, §6.1.5), the sink sets ECE on
    /// every ACK from a CE-marked arrival until a segment with CWR arrives
    /// (§6.1.3), and the sender answers ECE with one congestion event of its
    /// controller per window of data, nothing retransmitted, and sets CWR on
    /// the next new segment (§6.1.2). Both ends are configured alike: there
    /// is no handshake to negotiate it (§6.1.1). Pure ACKs are Not-ECT
    /// (§6.1.4).
    pub ecn: bool,
}

/// PRR's reduction bound (RFC 6937 §3): how far the sender may catch up
/// towards `ssthresh` when losses have taken `pipe` below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[non_exhaustive]
pub enum PrrBound {
    /// Slow-start reduction bound, the RFC's default: "limit =
    /// MAX(prr_delivered - prr_out, DeliveredData) + MSS", at most one
    /// segment beyond what is delivered.
    #[default]
    Ssrb,
    /// Conservative reduction bound: "limit = prr_delivered - prr_out",
    /// never more than what was delivered (strict packet conservation).
    Crb,
}

impl std::fmt::Display for PrrBound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PrrBound::Ssrb => "ssrb",
            PrrBound::Crb => "crb",
        })
    }
}

impl Default for TcpConfig {
    fn default() -> Self {
        Self {
            segment: DEFAULT_SEGMENT,
            recovery: Recovery::NewReno,
            dupack_threshold: 3,
            min_rto: DEFAULT_MIN_RTO,
            max_rto: Duration::from_secs(60),
            initial_rto: Duration::from_secs(1),
            restart_timer_on_fast_retransmit: true,
            controller_recovery: ControllerRecovery::Tcp,
            pacing: false,
            granularity: Duration::from_millis(1),
            max_backoff: 64,
            delayed_ack: None,
            sack: false,
            timestamps: false,
            receive_window: DEFAULT_RECEIVE_WINDOW,
            limited_transmit: false,
            prr: false,
            prr_bound: PrrBound::Ssrb,
            ecn: false,
        }
    }
}

/// Linux's shortest delayed-ACK timer (`TCP_ATO_MIN`, 40 ms), the one
/// [`Profile::Linux`] gives the sink.
pub const LINUX_DELAYED_ACK: Duration = Duration::from_millis(40);

/// A named set of [`TcpConfig`] values, from which a scenario's other keys
/// depart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Profile {
    /// ns-2's TCP as the papers measured it: [`TcpConfig::default`].
    #[default]
    Ns2,
    /// TCP as Linux runs it ([`TcpConfig::linux`]).
    Linux,
}

impl Profile {
    /// The profile's settings.
    pub fn config(self) -> TcpConfig {
        match self {
            Profile::Ns2 => TcpConfig::default(),
            Profile::Linux => TcpConfig::linux(),
        }
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Profile::Ns2 => "ns2",
            Profile::Linux => "linux",
        })
    }
}

impl std::str::FromStr for Profile {
    type Err = String;

    /// `ns2` or `linux`.
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "ns2" => Ok(Profile::Ns2),
            "linux" => Ok(Profile::Linux),
            other => Err(format!("unknown profile \"{other}\" (ns2 or linux)")),
        }
    }
}

impl TcpConfig {
    /// TCP as Linux runs it (since 4.18): SACK with RACK-TLP loss detection
    /// (RFC 8985) and PRR (RFC 6937), timestamps (RFC 7323), delayed ACKs
    /// at Linux's shortest timer ([`LINUX_DELAYED_ACK`]; Linux adapts it
    /// between 40 and 200 ms and ACKs at once in its quick-ACK mode, which
    /// the model does not), a 200 ms minimum RTO and a 1 s initial RTO; the
    /// rest as [`TcpConfig::default`]. The initial window and HyStart are
    /// the controller's.
    pub fn linux() -> Self {
        Self {
            recovery: Recovery::Rack,
            sack: true,
            prr: true,
            timestamps: true,
            delayed_ack: Some(LINUX_DELAYED_ACK),
            min_rto: DEFAULT_MIN_RTO,
            initial_rto: Duration::from_secs(1),
            ..Self::default()
        }
    }

    /// The settings on one line, e.g. `recovery=rack sack prr timestamps
    /// delayed_ack=40ms min_rto=200ms initial_rto=1s segment=1000B`.
    pub fn summary(&self) -> String {
        let ms = |d: Duration| format!("{}ms", d.as_millis());
        let mut parts = vec![format!("recovery={}", self.recovery)];
        for (on, name) in [
            (self.sack, "sack"),
            (self.prr, "prr"),
            (self.timestamps, "timestamps"),
            (self.pacing, "pacing"),
            (self.limited_transmit, "limited_transmit"),
        ] {
            if on {
                parts.push(name.to_string());
            }
        }
        parts.push(match self.delayed_ack {
            Some(d) => format!("delayed_ack={}", ms(d)),
            None => "delayed_ack=off".to_string(),
        });
        parts.push(format!("min_rto={}", ms(self.min_rto)));
        parts.push(format!("initial_rto={}", ms(self.initial_rto)));
        parts.push(format!("segment={}B", self.segment));
        parts.push(format!("receive_window={}B", self.receive_window));
        parts.push(format!("controller_recovery={}", self.controller_recovery));
        parts.join(" ")
    }
}

/// A [`TcpConfig`] value out of range; the message names the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// `segment` is 0 or above [`MAX_SEGMENT`] (the value, bytes).
    #[error("segment: {0} bytes must be in 1..={MAX_SEGMENT}")]
    Segment(u32),
    /// `receive_window` is below one segment or not below 4 GiB.
    #[error("receive_window: {window} bytes must be at least one segment ({segment}) and below 4 GiB")]
    ReceiveWindow {
        /// The receive window, bytes.
        window: u64,
        /// The segment, bytes.
        segment: u32,
    },
    /// `min_rto` is zero or above `max_rto`.
    #[error("min_rto: must be positive and at most max_rto (60s)")]
    MinRto,
    /// `initial_rto` is zero or above `max_rto`.
    #[error("initial_rto: must be positive and at most max_rto (60s)")]
    InitialRto,
    /// The delayed-ACK timer is zero or above 500 ms.
    #[error("delayed_ack: the timer must be in (0, 500ms] (RFC 1122 §4.2.3.2)")]
    DelayedAck,
    /// SACK or RACK-TLP recovery without the sink's SACK blocks.
    #[error("sack: recovery = \"{0}\" needs the sink's SACK blocks (sack = true)")]
    SackWithoutBlocks(Recovery),
    /// PRR without SACK or RACK-TLP recovery.
    #[error("prr: needs recovery = \"sack\" or \"rack\" (RFC 6937 reduces a window measured by RFC 6675's pipe)")]
    PrrWithoutSack,
    /// A PRR bound other than the default without PRR.
    #[error("prr_bound: needs prr = true")]
    PrrBoundWithoutPrr,
    /// `dupack_threshold` or `max_backoff` is zero.
    #[error("dupack_threshold and max_backoff must be at least 1")]
    ZeroCount,
}

impl TcpConfig {
    /// Check the values; the error names the bad field.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.segment == 0 || self.segment > MAX_SEGMENT {
            return Err(ConfigError::Segment(self.segment));
        }
        if self.receive_window < u64::from(self.segment) || self.receive_window > u64::from(u32::MAX) {
            return Err(ConfigError::ReceiveWindow {
                window: self.receive_window,
                segment: self.segment,
            });
        }
        if self.min_rto.is_zero() || self.min_rto > self.max_rto {
            return Err(ConfigError::MinRto);
        }
        if self.initial_rto.is_zero() || self.initial_rto > self.max_rto {
            return Err(ConfigError::InitialRto);
        }
        if let Some(d) = self.delayed_ack
            && (d.is_zero() || d > Duration::from_millis(500))
        {
            return Err(ConfigError::DelayedAck);
        }
        if self.recovery.uses_sack() && !self.sack {
            return Err(ConfigError::SackWithoutBlocks(self.recovery));
        }
        if self.prr && !self.recovery.uses_sack() {
            return Err(ConfigError::PrrWithoutSack);
        }
        if self.prr_bound != PrrBound::Ssrb && !self.prr {
            return Err(ConfigError::PrrBoundWithoutPrr);
        }
        if self.dupack_threshold == 0 || self.max_backoff == 0 {
            return Err(ConfigError::ZeroCount);
        }
        Ok(())
    }
}

/// How much a sender sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Amount {
    /// Exactly this many bytes.
    Bytes(u64),
    /// New segments until this time; what was sent by then is delivered.
    Until(SimTime),
}

/// What a sender sends, to whom and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TcpTransfer {
    /// The sink.
    pub dst: Addr,
    /// The flow id of the datagrams (the sink's ACKs carry it back).
    pub flow: FlowId,
    /// When the first segment leaves.
    pub start: SimTime,
    /// How much.
    pub amount: Amount,
    /// Length of the interval records (zero: none).
    pub interval: Duration,
}

impl TcpTransfer {
    /// `amount` to `dst` in datagrams of `flow`, from `start`, without
    /// interval records.
    pub fn new(dst: Addr, flow: FlowId, start: SimTime, amount: Amount) -> Self {
        Self {
            dst,
            flow,
            start,
            amount,
            interval: Duration::ZERO,
        }
    }

    /// The same with an interval record every `interval` from `start`.
    pub fn with_interval(mut self, interval: Duration) -> Self {
        self.interval = interval;
        self
    }
}

/// One retransmission timeout.
#[derive(Debug, Clone, Copy, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub struct TimeoutRecord {
    /// When it fired, seconds of simulated time.
    pub at_secs: f64,
    /// The RTO after the backoff (the wait before the next timeout), seconds.
    pub next_rto_secs: f64,
    /// Consecutive timeouts so far, this one included.
    pub consecutive: u32,
}

/// What a sender did (a record for CSV and JSON files: a field's suffix
/// names its unit).
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct TcpStats {
    /// Data segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Retransmitted segments.
    pub retransmits: u64,
    /// Fast retransmits (entries into loss recovery by duplicate ACKs or SACK).
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Tail loss probes sent (RFC 8985 §7; RACK-TLP recovery only).
    #[cfg_attr(feature = "serde", serde(default))]
    pub tail_loss_probes: u64,
    /// Timeouts in a row without an ACK of new data in between, now.
    pub consecutive_timeouts: u32,
    /// The longest run of consecutive timeouts.
    pub max_consecutive_timeouts: u32,
    /// Payload bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    /// ACKs received (duplicates included).
    pub acks_received: u64,
    /// Current RTO (backoff included), seconds.
    pub rto_secs: f64,
    /// Smoothed RTT (RFC 6298 `SRTT`), seconds; 0 before the first sample.
    pub srtt_secs: f64,
    /// When every byte was acknowledged, seconds; `None` while unfinished.
    pub finished_secs: Option<f64>,
    /// ACKs received with ECE set ([`TcpConfig::ecn`]).
    #[cfg_attr(feature = "serde", serde(default))]
    pub ece_acks: u64,
    /// Window reductions in answer to ECE (RFC 3168 §6.1.2: at most one per
    /// window of data, none during loss recovery).
    #[cfg_attr(feature = "serde", serde(default))]
    pub ecn_reductions: u64,
}

/// One interval of the sender: what it wrote and how its controller stood
/// at the interval's end. The bytes the sink delivered in the same interval
/// are the sink's ([`SinkReport::interval_bytes`]), counted from the same
/// origin when the sink has [`TcpSink::with_interval_origin`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct IntervalRecord {
    /// Start of the interval since the sender's start.
    pub start: Duration,
    /// End of the interval since the sender's start (the last interval ends
    /// when the last byte is acknowledged).
    pub end: Duration,
    /// Payload bytes sent for the first time in the interval.
    pub written_bytes: u64,
    /// The controller's window at the end of the interval, bytes.
    pub cwnd_bytes: u64,
    /// Smoothed RTT (RFC 6298 `SRTT`) at the end of the interval; zero
    /// before the first sample.
    pub srtt: Duration,
    /// Smallest RTT sample so far; zero before the first sample.
    pub min_rtt: Duration,
    /// Segments declared lost in the interval (fast retransmits, timeouts,
    /// and RFC 6675's losses during SACK recovery).
    pub lost_packets: u64,
    /// Congestion events signalled to the controller in the interval.
    pub congestion_events: u64,
    /// The controller's state at the end of the interval.
    pub controller: Snapshot,
}

/// Watches a sender's controller: [`TcpSender`] calls
/// [`observe`](Self::observe) after every datagram and timer event from its
/// start on, so the observer sees every change of the controller's state
/// and keeps what it wants (a thinned trace, a plot's points). `()` watches
/// nothing; `Option<O>` watches with `O` when `Some`.
pub trait CcObserver: 'static {
    /// The controller `cc` as it stands at `now`.
    fn observe(&mut self, now: SimTime, cc: &dyn CongestionController);
}

impl CcObserver for () {
    fn observe(&mut self, _now: SimTime, _cc: &dyn CongestionController) {}
}

impl<O: CcObserver> CcObserver for Option<O> {
    fn observe(&mut self, now: SimTime, cc: &dyn CongestionController) {
        if let Some(o) = self {
            o.observe(now, cc);
        }
    }
}
