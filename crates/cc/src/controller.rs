//! The controller contract: one object-safe, sans-IO trait.
//!
//! Every call carries `now`; nothing reads a clock, spawns or allocates per ACK.
//! Windows and sizes are in bytes, times are [`Instant`]/[`Duration`] (the
//! simulator maps virtual time onto `Instant`, exactly as quinn-proto expects).

use std::fmt;
use std::num::NonZeroU64;
use std::time::{Duration, Instant};

use crate::bbr::BbrMode;

/// RTT statistics as seen when an acknowledgement is processed.
///
/// Built with [`new`](Self::new) or [`uniform`](Self::uniform) (the struct
/// is `#[non_exhaustive]`: a field may be added in a minor release).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RttSample {
    /// The RTT of the packet just acknowledged (`now - sent`), RFC 9002 §5.1 `latest_rtt`.
    pub latest: Duration,
    /// Smoothed RTT, RFC 9002 §5.3 `smoothed_rtt`.
    pub smoothed: Duration,
    /// Minimum RTT seen on the path, RFC 9002 §5.2 `min_rtt`.
    pub min: Duration,
}

impl RttSample {
    /// A sample of the `latest` RTT with the path's `smoothed` and `min` RTT.
    pub fn new(latest: Duration, smoothed: Duration, min: Duration) -> Self {
        Self { latest, smoothed, min }
    }

    /// A sample where latest, smoothed and minimum RTT are all `rtt`.
    pub fn uniform(rtt: Duration) -> Self {
        Self {
            latest: rtt,
            smoothed: rtt,
            min: rtt,
        }
    }
}

/// One newly acknowledged, ack-eliciting packet.
///
/// The struct is `#[non_exhaustive]` (a field may be added in a minor
/// release); a transport or a test builds it with [`new`](Self::new):
///
/// ```
/// use std::time::{Duration, Instant};
/// use tput_cc::{Ack, RttSample};
///
/// let sent = Instant::now();
/// let rtt = RttSample::new(Duration::from_millis(25), Duration::from_millis(22), Duration::from_millis(20));
/// let ack = Ack::new(sent, 1200, rtt).with_app_limited(true);
/// assert_eq!((ack.bytes, ack.rtt.min, ack.app_limited), (1200, Duration::from_millis(20), true));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Ack {
    /// When the packet was sent.
    pub sent: Instant,
    /// Its size in bytes (as counted in bytes in flight).
    pub bytes: u64,
    /// RTT statistics, including this packet's own sample in `latest`.
    pub rtt: RttSample,
    /// Whether the sender was application-limited before this acknowledgement.
    pub app_limited: bool,
}

impl Ack {
    /// The acknowledgement of a packet of `bytes` sent at `sent`, with the
    /// path's RTT statistics `rtt`; not application-limited.
    pub fn new(sent: Instant, bytes: u64, rtt: RttSample) -> Self {
        Self {
            sent,
            bytes,
            rtt,
            app_limited: false,
        }
    }

    /// The same acknowledgement with [`app_limited`](Self::app_limited) set to `app_limited`.
    pub fn with_app_limited(mut self, app_limited: bool) -> Self {
        self.app_limited = app_limited;
        self
    }
}

/// Whether a sender is using its congestion window, for RFC 9002 §7.8: "When
/// bytes in flight is smaller than the congestion window and sending is not
/// pacing limited, the congestion window is underutilized. ... When this
/// occurs, the congestion window SHOULD NOT be increased in either slow start
/// or congestion avoidance." A sender that is held back by the CPU, by its
/// own rate limit or by flow control is not application-limited in
/// quinn-proto's sense (it had data to send), yet leaves the window unused,
/// and a window that grows there grows without bound.
///
/// The rule is RFC 7661's (Fairhurst, Sathiaseelan, Secchi, "Updating TCP
/// to Support Rate-Limited Traffic", 2015, §4.3): the window counts as used
/// while the flight is at least half of it (`pipeACK >= cwnd / 2`). In slow
/// start a third suffices: RFC 9002 §7.8 exempts a pacing-limited sender,
/// and quinn-proto's pacer (1.25 x cwnd / srtt, which it does not report)
/// lets the flight of a bulk sender fall to about 0.6 of a window that
/// doubles every round trip, and at times under half of it (with a half,
/// the shipped bulk scenarios' slow starts changed; with a third they do
/// not). The flight measured is the one just before an ACK batch: bytes in
/// flight at the end of the previous batch, plus bytes sent since, minus
/// bytes declared lost since.
///
/// A transport calls [`on_sent`](Self::on_sent),
/// [`on_lost`](Self::on_lost) and [`on_end_acks`](Self::on_end_acks) as it
/// calls the controller, and marks an [`Ack`] application-limited when
/// [`window_used`](Self::window_used) says no; quinn-proto's adapter does.
///
/// ```
/// use tput_cc::WindowUse;
/// let mut usage = WindowUse::new();
/// usage.on_sent(12_000);
/// assert!(usage.window_used(20_000, || false)); // 12 kB in flight of a 20 kB window
/// usage.on_end_acks(6_000); // that ACK batch left 6 kB in flight
/// assert!(!usage.window_used(20_000, || false)); // under half of the window
/// usage.on_end_acks(7_000);
/// assert!(usage.window_used(20_000, || true)); // over a third, in slow start
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WindowUse {
    /// Bytes in flight at the end of the last ACK batch, plus bytes sent
    /// since, minus bytes declared lost since.
    in_flight: u64,
    /// The verdict for the ACK batch under way, fixed at its first
    /// acknowledgement (the flight then is the flight before the batch).
    batch: Option<bool>,
}

impl WindowUse {
    /// Nothing in flight yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// `bytes` were sent.
    pub fn on_sent(&mut self, bytes: u64) {
        self.in_flight = self.in_flight.saturating_add(bytes);
    }

    /// `bytes` were declared lost (no longer in flight).
    pub fn on_lost(&mut self, bytes: u64) {
        self.in_flight = self.in_flight.saturating_sub(bytes);
    }

    /// Whether the sender used a congestion window of `window` bytes before
    /// the ACK batch under way: its flight then was at least half of it
    /// (RFC 7661 §4.3), or a third while `slow_start()` says the controller
    /// is in slow start (asked only when needed). Every call until
    /// [`on_end_acks`](Self::on_end_acks) gives the first call's answer.
    pub fn window_used(&mut self, window: u64, slow_start: impl FnOnce() -> bool) -> bool {
        let in_flight = self.in_flight;
        *self.batch.get_or_insert_with(|| {
            in_flight.saturating_mul(2) >= window || (in_flight.saturating_mul(3) >= window && slow_start())
        })
    }

    /// The ACK batch ended with `bytes_in_flight` still unacknowledged.
    pub fn on_end_acks(&mut self, bytes_in_flight: u64) {
        self.in_flight = bytes_in_flight;
        self.batch = None;
    }
}

/// What kind of congestion signal a [`Congestion`] event carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum CongestionKind {
    /// Ordinary packet loss: the fast-retransmit analogue. Controllers reduce
    /// the window at most once per round trip (RFC 9002 §7.3.2).
    Loss,
    /// Persistent congestion (RFC 9002 §7.6): the analogue of a TCP
    /// retransmission timeout; the window collapses to the minimum.
    PersistentCongestion,
    /// An ECN congestion-experienced mark (RFC 9002 §7.1); nothing was lost.
    Ecn,
}

/// A congestion signal, built with [`new`](Self::new) (the struct is
/// `#[non_exhaustive]`: a field may be added in a minor release).
///
/// ```
/// use std::time::Instant;
/// use tput_cc::{Congestion, CongestionKind};
/// let loss = Congestion::new(CongestionKind::Loss, Instant::now(), 1200);
/// assert_eq!(loss.lost_bytes, 1200);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Congestion {
    /// The kind of signal.
    pub kind: CongestionKind,
    /// Send time of the most recent packet the signal refers to; a reduction
    /// is skipped when this packet was sent before the current recovery
    /// period began (RFC 9002 §7.3.2).
    pub sent: Instant,
    /// Bytes declared lost (0 for ECN).
    pub lost_bytes: u64,
}

impl Congestion {
    /// A signal of `kind` about packets up to one sent at `sent`, of which
    /// `lost_bytes` were declared lost.
    pub fn new(kind: CongestionKind, sent: Instant, lost_bytes: u64) -> Self {
        Self { kind, sent, lost_bytes }
    }
}

/// Which phase of its state machine a controller is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum Phase {
    /// Exponential growth (RFC 9002 §7.3.1).
    SlowStart,
    /// HyStart++'s Conservative Slow Start (RFC 9406 §4.2): the RTT has
    /// grown, so slow start goes on at a quarter of its pace for a few
    /// rounds before it ends.
    ConservativeSlowStart,
    /// Additive or algorithm-specific growth (RFC 9002 §7.3.3).
    CongestionAvoidance,
    /// After a reduction, until a packet sent after it is acknowledged (RFC 9002 §7.3.2)
    /// or the transport ends its own recovery ([`CongestionController::on_recovery_end`]).
    Recovery,
    /// The window does not react to the network (the fixed-window baseline).
    Fixed,
}

/// Algorithm-specific internal state, for traces and plots.
///
/// A trace record: its fields are plain numbers written to CSV and JSON as
/// they are, so each carries its unit in its name (`_bytes`, `_secs`,
/// `_bytes_per_sec`, `_packets`).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(tag = "algorithm", rename_all = "snake_case"))]
#[non_exhaustive]
pub enum AlgorithmState {
    /// NewReno has nothing beyond cwnd and ssthresh.
    NewReno,
    /// CUBIC (RFC 9438 §4).
    Cubic {
        /// `W_max` in bytes: the window before the last reduction.
        w_max_bytes: f64,
        /// `K` in seconds: time to climb back to `W_max`.
        k_secs: f64,
        /// `W_est` in bytes: the Reno-friendly estimate (§4.3).
        w_est_bytes: f64,
    },
    /// Vegas (Brakmo & Peterson 1994).
    Vegas {
        /// `BaseRTT` in seconds.
        base_rtt_secs: f64,
        /// `diff = (expected - actual) * BaseRTT`, in packets, from the last round.
        diff_packets: f64,
    },
    /// Compound TCP (Tan et al. 2006).
    Compound {
        /// The loss-based component `cwnd`, bytes.
        cwnd_bytes: u64,
        /// The delay-based component `dwnd`, bytes.
        dwnd_bytes: u64,
        /// Vegas-style `diff` from the last round, packets.
        diff_packets: f64,
    },
    /// The fixed window `rate * min_rtt`.
    Fixed {
        /// The configured rate, bytes per second.
        rate_bytes_per_sec: f64,
    },
    /// The throughput-guarantee controller (Yamanegi, Hasegawa, Murata).
    Guarantee {
        /// Current slope `k` (packets per RTT added in congestion avoidance).
        k: f64,
        /// Control slot length `s`, in RTTs.
        slot_rtts: u32,
        /// Evaluation slot length `d`, in RTTs.
        eval_rtts: u32,
        /// Goal of the current control slot `g_i`, bytes per second.
        goal_bytes_per_sec: f64,
        /// Index of the current control slot within its evaluation slot (from 1).
        control_slot: u32,
        /// Whether an earlier control slot of this evaluation slot missed its goal.
        congested: bool,
        /// Last available bandwidth `A` read, bytes per second (0 if unknown).
        available_bytes_per_sec: f64,
        /// `k_bw` (§2.4) as of the latest ACK, packets per RTT, before the clamp.
        #[cfg_attr(feature = "serde", serde(default))]
        k_bw: f64,
        /// `k_max` (eqs. (4)/(5)) as of the latest ACK, packets per RTT; `None`
        /// when unlimited (`A` unknown in an uncongested slot).
        #[cfg_attr(feature = "serde", serde(default))]
        k_max: Option<f64>,
        /// The window a loss cannot cut below, bytes (floor mode; 0 in the
        /// paper's mode or while the breaker is open).
        #[cfg_attr(feature = "serde", serde(default))]
        floor_bytes: u64,
        /// The controller has declared its target infeasible (floor mode's
        /// breaker tripped and no evaluation slot has met the target since).
        #[cfg_attr(feature = "serde", serde(default))]
        infeasible: bool,
    },
    /// BBRv3 (draft-ietf-ccwg-bbr-06). The gains follow from `mode` and the
    /// configuration; `bw` below `max_bw` shows the short-term model
    /// (`bw_shortterm`) binding. Kept no larger than the other variants.
    Bbr {
        /// `BBR.state`.
        mode: BbrMode,
        /// `BBR.full_bw_reached`.
        full_bw_reached: bool,
        /// `BBR.round_count` (saturating).
        round_count: u32,
        /// `BBR.max_bw`, bytes per second.
        max_bw_bytes_per_sec: f64,
        /// `BBR.bw = min(max_bw, bw_shortterm)`, bytes per second.
        bw_bytes_per_sec: f64,
        /// `BBR.min_rtt` in seconds; 0 before the first RTT sample.
        min_rtt_secs: f64,
        /// `C.pacing_rate`, bytes per second.
        pacing_rate_bytes_per_sec: f64,
        /// `BBR.inflight_longterm`, bytes; `None` while infinite.
        inflight_longterm_bytes: Option<NonZeroU64>,
        /// `BBR.inflight_shortterm`, bytes; `None` while infinite.
        inflight_shortterm_bytes: Option<NonZeroU64>,
        /// `BBR.extra_acked`, bytes.
        extra_acked_bytes: u64,
    },
    /// A controller defined outside this crate, in its own words: its name
    /// and the fields it chooses to report, in its order. Traces and plots
    /// show them as they show the built-in controllers' fields.
    Custom {
        /// The controller's name, e.g. `"my-aimd"`.
        name: String,
        /// `(field, value)` pairs, e.g. `("gain", 2.0)`.
        fields: Vec<(String, f64)>,
    },
}

/// A snapshot of a controller's internal state ([`Snapshot::new`] builds one).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct Snapshot {
    /// The congestion window in bytes; always equal to [`CongestionController::window`].
    pub cwnd_bytes: u64,
    /// Slow-start threshold in bytes, `None` while infinite.
    pub ssthresh_bytes: Option<u64>,
    /// The phase of the state machine.
    pub phase: Phase,
    /// Algorithm-specific fields.
    pub state: AlgorithmState,
}

impl Snapshot {
    /// A snapshot, for controllers written outside this crate (the struct is
    /// `#[non_exhaustive]`).
    pub fn new(cwnd_bytes: u64, ssthresh_bytes: Option<u64>, phase: Phase, state: AlgorithmState) -> Self {
        Self {
            cwnd_bytes,
            ssthresh_bytes,
            phase,
            state,
        }
    }
}

/// A congestion controller: sans-IO, units of bytes and [`Instant`].
///
/// The call order mirrors quinn-proto's hook: [`on_sent`](Self::on_sent) per
/// transmission, [`on_ack`](Self::on_ack) per newly acknowledged packet, then
/// [`on_end_acks`](Self::on_end_acks) once per ACK frame, and
/// [`on_congestion`](Self::on_congestion) when loss detection declares loss.
///
/// ```
/// use std::time::{Duration, Instant};
/// use tput_cc::{Ack, CongestionController, ControllerSpec, RttSample};
///
/// let spec: ControllerSpec = "newreno".parse().unwrap();
/// let mut cc = spec.build(1200);
/// let t0 = Instant::now();
/// let before = cc.window();
/// let rtt = RttSample::uniform(Duration::from_millis(20));
/// cc.on_ack(t0 + rtt.latest, &Ack::new(t0, 1200, rtt));
/// assert_eq!(cc.window(), before + 1200); // slow start: +1 packet per acked packet
/// ```
pub trait CongestionController: Send + Sync + fmt::Debug {
    /// `bytes` were sent at `now`.
    fn on_sent(&mut self, now: Instant, bytes: u64) {
        let _ = (now, bytes);
    }
    /// A packet was newly acknowledged.
    fn on_ack(&mut self, now: Instant, ack: &Ack);
    /// An ACK batch ended; `bytes_in_flight` is what remains unacknowledged.
    fn on_end_acks(&mut self, now: Instant, bytes_in_flight: u64, app_limited: bool) {
        let _ = (now, bytes_in_flight, app_limited);
    }
    /// A congestion signal arrived.
    fn on_congestion(&mut self, now: Instant, event: &Congestion);
    /// The transport's own loss recovery ended at `now`: a transport that
    /// runs fast recovery itself (the TCP model: the ACK that covers
    /// `recover`, RFC 6582 §3.2 step 3; the first ACK of new data, RFC 5681
    /// §3.2 step 6; RFC 6675's `RecoveryPoint`) calls it after the
    /// [`on_ack`](Self::on_ack) calls of that ACK, so that the controller's
    /// recovery period ends with TCP's and not one round trip later, when a
    /// packet sent after the reduction is acknowledged (RFC 9002 §7.3.2).
    /// QUIC never calls it: there the RFC 9002 rule stands. The default
    /// does nothing, for controllers without a recovery period.
    fn on_recovery_end(&mut self, now: Instant) {
        let _ = now;
    }
    /// The path's maximum datagram size changed.
    fn on_mtu_update(&mut self, max_datagram_size: u16);
    /// Bytes that may be in flight.
    fn window(&self) -> u64;
    /// The window the controller started with.
    fn initial_window(&self) -> u64;
    /// The rate at which the controller wants to pace, bytes per second, if it has one.
    fn pacing_rate(&self) -> Option<u64> {
        None
    }
    /// The largest burst, in bytes, the controller wants a pacer to send
    /// back to back, if it has a preference (BBR's `C.send_quantum`,
    /// draft-ietf-ccwg-bbr-06 §5.6.3).
    fn send_quantum(&self) -> Option<u64> {
        None
    }
    /// Whether a transport with cumulative acknowledgements (TCP) should
    /// report a packet to [`on_ack`](Self::on_ack) when a selective
    /// acknowledgement (SACK, RFC 2018) first covers it, as QUIC reports
    /// every packet when it is first acknowledged, rather than when the
    /// cumulative acknowledgement passes it. Default `false`: RFC 5681's
    /// and ns-2's window growth counts cumulative ACKs. BBR says `true`: its
    /// delivery-rate samples update on every packet newly SACKed or ACKed
    /// (draft-ietf-ccwg-bbr-06 §4.1), and without them the first sample
    /// after a recovery would count several round trips of data as one.
    fn counts_selective_acks(&self) -> bool {
        false
    }
    /// The transport found that its latest loss recovery episode was
    /// spurious (every packet it declared lost arrived), e.g. from a TCP
    /// D-SACK (RFC 2883). Controllers that can undo their response
    /// (draft-ietf-ccwg-bbr-06 §5.5.11) do; the others ignore it.
    fn on_spurious_loss(&mut self, now: Instant) {
        let _ = now;
    }
    /// Internal state for traces; `snapshot().cwnd_bytes == window()`.
    fn snapshot(&self) -> Snapshot;
    /// A boxed copy of the controller's state.
    fn clone_box(&self) -> Box<dyn CongestionController>;
}

impl Clone for Box<dyn CongestionController> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// The minimum window after persistent congestion, bytes, RFC 9002 §7.2:
/// `kMinimumWindow = 2 * max_datagram_size`.
pub fn minimum_window(max_datagram_size: u16) -> u64 {
    min_window(u64::from(max_datagram_size))
}

/// The initial window, bytes, RFC 9002 §7.2: `min(10 * max_datagram_size, max(14720, 2 * max_datagram_size))`.
pub fn initial_window(max_datagram_size: u16) -> u64 {
    init_window(u64::from(max_datagram_size))
}

/// [`minimum_window`] for a maximum datagram size `mss` already widened to `u64`.
#[inline]
pub(crate) fn min_window(mss: u64) -> u64 {
    2 * mss
}

/// [`initial_window`] for a maximum datagram size `mss` already widened to `u64`.
#[inline]
pub(crate) fn init_window(mss: u64) -> u64 {
    (10 * mss).min(14_720.max(2 * mss))
}

/// RFC 9002 §7.3.2 recovery bookkeeping shared by the loss-based controllers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Recovery {
    /// `congestion_recovery_start_time` of RFC 9002 Appendix B.2.
    start: Option<Instant>,
    /// No packet sent after `start` has been acknowledged yet.
    open: bool,
}

impl Recovery {
    /// Whether a packet sent at `sent` belongs to the current recovery period
    /// (RFC 9002 Appendix B.5 `InCongestionRecovery`).
    pub(crate) fn in_recovery(&self, sent: Instant) -> bool {
        self.start.is_some_and(|start| sent <= start)
    }
    /// Decide whether a congestion signal about a packet sent at `sent` starts a
    /// new recovery period. Returns `true` (and records `now`) if the window
    /// should be reduced: at most once per round trip (RFC 9002 §7.3.2, Appendix B.6).
    pub(crate) fn enter(&mut self, now: Instant, sent: Instant) -> bool {
        if self.in_recovery(sent) {
            return false;
        }
        self.start = Some(now);
        self.open = true;
        true
    }
    /// Note an acknowledgement; recovery ends when a packet sent after it began is acked.
    /// Returns whether the packet was sent inside the recovery period (no growth then).
    pub(crate) fn on_ack(&mut self, sent: Instant) -> bool {
        let inside = self.in_recovery(sent);
        if !inside {
            self.open = false;
        }
        inside
    }
    /// Whether the controller is still in its recovery period.
    pub(crate) fn is_open(&self) -> bool {
        self.open
    }
    /// The snapshot phase: recovery while it is open, else slow start or congestion avoidance.
    pub(crate) fn phase(&self, in_slow_start: bool) -> Phase {
        if self.open {
            Phase::Recovery
        } else if in_slow_start {
            Phase::SlowStart
        } else {
            Phase::CongestionAvoidance
        }
    }
    /// Persistent congestion resets the recovery start (RFC 9002 Appendix B.8).
    pub(crate) fn reset(&mut self) {
        *self = Self::default();
    }
    /// The transport ended its loss recovery
    /// ([`CongestionController::on_recovery_end`]): every later ACK may grow
    /// the window, and the next congestion signal starts a new period.
    pub(crate) fn end(&mut self) {
        *self = Self::default();
    }
}

/// BaseRTT and once-per-RTT rounds for the delay-based controllers (Vegas
/// §3.2, Compound TCP §3). BaseRTT is the smallest non-zero RTT seen. A round
/// ends with the ACK of a packet sent at or after the round's start; that
/// ACK's own sample counts towards the next round.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct DelayRounds {
    base_rtt: Option<Duration>,
    /// When the current round began; `None` before the first ACK.
    round_start: Option<Instant>,
    /// Smallest non-zero RTT sample of the current round.
    round_min_rtt: Option<Duration>,
    /// Whether any ACK of the current round was application-limited.
    round_app_limited: bool,
}

/// What a finished round measured.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RoundEnd {
    /// BaseRTT and the round's smallest RTT sample, when both are known.
    pub rtts: Option<(Duration, Duration)>,
    /// Whether any ACK of the round (the closing one included) was application-limited.
    pub app_limited: bool,
}

impl DelayRounds {
    /// BaseRTT so far.
    pub(crate) fn base_rtt(&self) -> Option<Duration> {
        self.base_rtt
    }

    /// Note an ACK at `now`; returns the round it closed, if any.
    pub(crate) fn on_ack(&mut self, now: Instant, ack: &Ack) -> Option<RoundEnd> {
        for sample in [ack.rtt.min, ack.rtt.latest] {
            if sample > Duration::ZERO && self.base_rtt.is_none_or(|b| sample < b) {
                self.base_rtt = Some(sample);
            }
        }
        let ended = match self.round_start {
            None => {
                self.round_start = Some(now);
                None
            }
            Some(start) if ack.sent >= start => {
                let min = self.round_min_rtt.take();
                let end = RoundEnd {
                    rtts: self.base_rtt.zip(min),
                    app_limited: self.round_app_limited || ack.app_limited,
                };
                self.round_start = Some(now);
                self.round_app_limited = false;
                Some(end)
            }
            Some(_) => None,
        };
        // This ACK's sample belongs to the round now under way.
        let latest = ack.rtt.latest;
        if latest > Duration::ZERO && self.round_min_rtt.is_none_or(|r| latest < r) {
            self.round_min_rtt = Some(latest);
        }
        self.round_app_limited |= ack.app_limited;
        ended
    }
}
