//! BBR version 3 (draft-ietf-ccwg-bbr-06): [`Bbr`] documents the draft
//! revision followed and every departure from it. Section numbers (§) in
//! this module are that revision's.
//!
//! The controller is split the way the draft is:
//! - `mod.rs`: state, initialization (§5.2.1), the per-transmit (§5.2.2),
//!   per-ACK (§5.2.3) and per-loss (§5.2.4) steps;
//! - `startup.rs`: Startup and Drain (§5.3.1, §5.3.2);
//! - `probe_bw.rs`: the ProbeBW cycle DOWN, CRUISE, REFILL, UP (§5.3.3);
//! - `probe_rtt.rs`: min RTT, ProbeRTT and restart from idle (§5.3.4,
//!   §5.4, §5.5.7);
//! - `model.rs`: round counting, `max_bw`, ACK aggregation (§5.5.1–§5.5.9);
//! - `congestion.rs`: the response to loss, `inflight_longterm` and the
//!   short-term model, undo (§5.5.10, §5.5.11);
//! - `control.rs`: pacing rate, send quantum and cwnd (§5.6).
//!
//! Its two windowed max filters are the crate's (`filter.rs`), shared with
//! the inline estimator.

mod congestion;
mod control;
mod model;
mod probe_bw;
mod probe_rtt;
mod startup;
#[cfg(test)]
mod tests;

use std::num::NonZeroU64;
use std::time::{Duration, Instant};

use crate::controller::{
    Ack, AlgorithmState, Congestion, CongestionController, CongestionKind, Phase, Recovery, Snapshot, init_window,
    min_window,
};
use crate::delivery_rate::{DeliveryRateSampler, RateSample};
use crate::error::ConfigError;

use crate::filter::{MaxBwFilter, WindowedMax};

/// Parameters of [`Bbr`]: the draft's constants (§2), defaults as specified.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct BbrConfig {
    /// `BBR.StartupPacingGain` (§2.5): 4 ln 2 ≈ 2.77.
    pub startup_gain: f64,
    /// `BBR.DefaultCwndGain` (§2.6): 2.
    pub cwnd_gain: f64,
    /// `BBR.DrainPacingGain` (§2.5): 0.5.
    pub drain_gain: f64,
    /// ProbeBW_DOWN's pacing gain (§5.3.3.1): 0.9.
    pub down_gain: f64,
    /// ProbeBW_UP's pacing gain (§5.3.3.5): 1.25.
    pub up_gain: f64,
    /// ProbeBW_UP's cwnd gain (§5.3.3.5): 2.25.
    pub up_cwnd_gain: f64,
    /// `BBR.ProbeRTTCwndGain` (§2.16.2): 0.5.
    pub probe_rtt_gain: f64,
    /// `BBR.ProbeRTTInterval` (§2.16.2): 5 s.
    pub probe_rtt_interval: Duration,
    /// `BBR.ProbeRTTDuration` (§2.16.2): 200 ms.
    pub probe_rtt_duration: Duration,
    /// `BBR.MinRTTFilterLen` (§2.16.1): 10 s.
    pub min_rtt_window: Duration,
    /// `BBR.LossThresh` (§2.8): 0.02.
    pub loss_thresh: f64,
    /// `BBR.Beta` (§2.8): 0.7.
    pub beta: f64,
    /// `BBR.Headroom` (§2.8): 0.15.
    pub headroom: f64,
    /// `BBR.PacingMarginPercent` (§2.5): 1 (percent).
    pub pacing_margin: f64,
    /// `C.InitialCwnd` in packets; `None` for RFC 9002 §7.2's initial window.
    pub initial_window: Option<u32>,
    /// Seed of the generator behind `PickProbeWait` (§5.3.3.8.2).
    pub seed: u64,
}

impl Default for BbrConfig {
    fn default() -> Self {
        Self {
            startup_gain: 2.77,
            cwnd_gain: 2.0,
            drain_gain: 0.5,
            down_gain: 0.9,
            up_gain: 1.25,
            up_cwnd_gain: 2.25,
            probe_rtt_gain: 0.5,
            probe_rtt_interval: Duration::from_secs(5),
            probe_rtt_duration: Duration::from_millis(200),
            min_rtt_window: Duration::from_secs(10),
            loss_thresh: 0.02,
            beta: 0.7,
            headroom: 0.15,
            pacing_margin: 1.0,
            initial_window: None,
            seed: 0,
        }
    }
}

/// Gains above this are refused: they would only overflow the model.
const MAX_GAIN: f64 = 100.0;

// The negated comparisons in `validate` are deliberate: they also reject NaN.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
impl BbrConfig {
    /// Check the parameters; the message names the bad one.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let gains = [
            ("startup_gain", self.startup_gain, 1.0),
            ("cwnd_gain", self.cwnd_gain, 1.0),
            ("up_gain", self.up_gain, 1.0),
            ("up_cwnd_gain", self.up_cwnd_gain, 1.0),
        ];
        for (key, v, lo) in gains {
            if !(v >= lo && v <= MAX_GAIN) {
                return Err(ConfigError::new(
                    "bbr",
                    key,
                    format!("{v} must be in [{lo}, {MAX_GAIN}]"),
                ));
            }
        }
        for (key, v) in [
            ("drain_gain", self.drain_gain),
            ("down_gain", self.down_gain),
            ("probe_rtt_gain", self.probe_rtt_gain),
            ("beta", self.beta),
        ] {
            if !(v > 0.0 && v <= 1.0) {
                return Err(ConfigError::new("bbr", key, format!("{v} must be in (0, 1]")));
            }
        }
        if !(self.loss_thresh > 0.0 && self.loss_thresh < 1.0) {
            return Err(ConfigError::new(
                "bbr",
                "loss_thresh",
                format!("{} must be in (0, 1)", self.loss_thresh),
            ));
        }
        if !(self.headroom >= 0.0 && self.headroom < 1.0) {
            return Err(ConfigError::new(
                "bbr",
                "headroom",
                format!("{} must be in [0, 1)", self.headroom),
            ));
        }
        if !(self.pacing_margin >= 0.0 && self.pacing_margin < 100.0) {
            return Err(ConfigError::new(
                "bbr",
                "margin",
                format!("{} must be in [0, 100) percent", self.pacing_margin),
            ));
        }
        for (key, d) in [
            ("probe_rtt_interval", self.probe_rtt_interval),
            ("probe_rtt_duration", self.probe_rtt_duration),
        ] {
            if d.is_zero() {
                return Err(ConfigError::new("bbr", key, "must be positive"));
            }
        }
        if self.min_rtt_window < self.probe_rtt_interval {
            // §5.3.4.2: "BBR uses a BBR.MinRTTFilterLen equal to or longer
            // than BBR.ProbeRTTInterval to allow the filter window to include
            // at least one ProbeRTT."
            return Err(ConfigError::new(
                "bbr",
                "min_rtt_window",
                format!(
                    "{} must not be shorter than probe_rtt_interval {}",
                    crate::units::format_duration(self.min_rtt_window),
                    crate::units::format_duration(self.probe_rtt_interval)
                ),
            ));
        }
        if self.initial_window == Some(0) {
            return Err(ConfigError::new("bbr", "iw", "0 packets is not in [1, 4294967295]"));
        }
        Ok(())
    }
}

/// `BBR.state` (§5.1.1): where the state machine is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum BbrMode {
    /// Exponential search for the bandwidth (§5.3.1).
    Startup,
    /// Draining Startup's queue (§5.3.2).
    Drain,
    /// ProbeBW_DOWN: decelerating to leave headroom (§5.3.3.1).
    ProbeBwDown,
    /// ProbeBW_CRUISE: sending at the estimated bandwidth (§5.3.3.2).
    ProbeBwCruise,
    /// ProbeBW_REFILL: refilling the pipe before probing (§5.3.3.3).
    ProbeBwRefill,
    /// ProbeBW_UP: probing for more bandwidth (§5.3.3.5).
    ProbeBwUp,
    /// ProbeRTT: cutting inflight to measure the min RTT (§5.3.4).
    ProbeRtt,
}

impl BbrMode {
    /// `IsInAProbeBWState()` (§5.3.3.9).
    fn is_probe_bw(self) -> bool {
        matches!(
            self,
            Self::ProbeBwDown | Self::ProbeBwCruise | Self::ProbeBwRefill | Self::ProbeBwUp
        )
    }
}

/// `BBR.ack_phase` (§2.14): what the ACKs now arriving say about probing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AckPhase {
    /// ACKS_INIT: not probing bandwidth; not getting probe feedback.
    Init,
    /// ACKS_REFILLING: sending at estimated bandwidth to fill pipe.
    Refilling,
    /// ACKS_PROBE_STARTING: inflight rising to probe bandwidth.
    ProbeStarting,
    /// ACKS_PROBE_FEEDBACK: getting feedback from bandwidth probing.
    ProbeFeedback,
    /// ACKS_PROBE_STOPPING: stopped bandwidth probing; still getting feedback.
    ProbeStopping,
}

/// "Infinity" for volumes of data (§5.5.10.3's `ResetShortTermModel`, §5.2.1's
/// `BBR.inflight_longterm = Infinity`).
const INFINITE: u64 = u64::MAX;

/// Volumes are capped here (2^53 bytes, where `f64` stops being exact), so
/// that they stay finite whatever the inputs.
const MAX_VOLUME: f64 = 9_007_199_254_740_992.0;

/// BBR version 3, as specified by the IETF draft
/// **draft-ietf-ccwg-bbr-06** (N. Cardwell, I. Swett, J. Beshay, "BBR
/// Congestion Control", 6 July 2026); § numbers are that revision's. Its
/// delivery-rate sampling (§4.1, formerly
/// draft-cheng-iccrg-delivery-rate-estimation) is a [`DeliveryRateSampler`](crate::DeliveryRateSampler).
/// The pacing rate it computes is [`pacing_rate`](CongestionController::pacing_rate);
/// `C.send_quantum` is [`send_quantum`](CongestionController::send_quantum).
///
/// # Departures from the draft
///
/// Each is also noted at the code it concerns.
/// - **Per-packet state is per send instant** (see the sampler): quinn-proto
///   names no packet on acknowledgement. Lost bytes are taken from the
///   oldest records, and `HandleLostPacket` runs once per record (or part of
///   a record) they cover, since quinn reports one event per loss
///   detection, not per packet.
/// - **App-limited marking** comes from the transport: quinn's `app_limited`
///   flag (no data to send, window and pacer open) marks the connection
///   (`MarkConnectionAppLimited`) at the end of each ACK frame; the draft's
///   `CheckIfApplicationLimited` runs inside the transport.
/// - **`C.is_cwnd_limited`** is inferred: a send that leaves less than one
///   SMSS of window marks the current round cwnd-limited (quinn stops sending
///   when `in_flight + segment >= window`); the flag holds for that round and
///   the next.
/// - **Startup's loss exit** (§5.3.1.3) counts loss *events* in the round
///   where the draft counts "discontiguous sequence ranges lost" (quinn
///   reports events, not ranges); `C.has_selective_acks` is taken as true
///   (QUIC ACK ranges). "In fast recovery for at least one full
///   packet-timed round trip" reads the recovery state as it was when the
///   round-ending ACK arrived: an RFC 9002 recovery period ends with the ACK
///   of a packet sent after it began, which is that same ACK.
/// - **"C.inflight reaches BBR.inflight_longterm"** (precautionary probing,
///   §5.3.3.7) is judged on the flight when the ACK arrived, within one
///   SMSS: quinn sends only while `in_flight + segment < window`, so with
///   cwnd capped at `inflight_longterm` the flight never equals it.
/// - **`SaveStateUponLoss`** runs at most once per loss event: the draft's
///   per-packet `NoteLoss` would save again after a packet of the same event
///   ended a probe, overwriting the undo state with the post-response one.
/// - **Randomness** (§5.3.3.8.2's `PickProbeWait`) comes from a SplitMix64
///   generator seeded by `seed=` and stirred at every draw with the
///   connection's delivered bytes and elapsed time, so simulations are
///   reproducible while flows with different histories draw differently.
/// - **`IsRenoCoexistenceProbeTime`** compares rounds with `TargetInflight()`
///   in packets (SMSS); the pseudocode compares rounds with bytes.
/// - **ECN** (§3.7 leaves the response open but says CE marks "MUST" be
///   treated as congestion): a CE event counts as the loss of one SMSS for
///   the model (`C.lost`, `NoteLoss`, `HandleLostPacket` judged by the
///   newest packet the ACK covered), without touching inflight or the
///   loss-recovery cwnd save/restore.
/// - **Timeouts**: quinn-proto reports no RTO, only persistent congestion
///   (RFC 9002 §7.6), which runs `OnEnterRTO` (§5.6.4.4). Its
///   `C.cwnd = C.inflight + 1` is read as one SMSS, and the window never
///   falls below RFC 9002 §7.2's minimum of two SMSS.
/// - **Loss recovery** (`InLossRecovery()`) is RFC 9002 §7.3.2's recovery
///   period: it starts at a loss of a packet sent after the previous one
///   started, and ends with the ACK of a packet sent after it started.
/// - **Spurious loss recovery** (§5.5.11) is implemented behind
///   [`CongestionController::on_spurious_loss`], which neither quinn-proto
///   0.11 nor the simulator's TCP model calls yet.
/// - **Pacing rate floor**: a model rate of zero (possible only with
///   degenerate input) leaves the pacing rate unchanged, and
///   [`pacing_rate`](CongestionController::pacing_rate) is at least 1 B/s.
/// - The RTT sample of a TCP segment is the TCP model's (Karn's rule
///   applied); for QUIC it is `now - sent` of the newest acknowledged packet.
///
/// ```
/// use std::time::{Duration, Instant};
/// use tput_cc::{Ack, CongestionController, ControllerSpec, RttSample};
///
/// let mut cc = "bbr".parse::<ControllerSpec>()?.build(1200);
/// let t0 = Instant::now();
/// cc.on_sent(t0, 1200);
/// let rtt = RttSample::uniform(Duration::from_millis(20));
/// cc.on_ack(t0 + rtt.latest, &Ack::new(t0, 1200, rtt));
/// cc.on_end_acks(t0 + rtt.latest, 0, false);
/// // Startup paces at 2.77 x InitialCwnd / srtt (§5.6.2 InitPacingRate).
/// let rate = cc.pacing_rate().unwrap() as f64;
/// assert!((rate - 2.77 * 12_000.0 / 0.020).abs() <= 1.0, "{rate}");
/// # Ok::<(), tput_cc::SpecError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Bbr {
    config: BbrConfig,
    /// `C.SMSS`.
    mss: u64,
    /// `C.InitialCwnd`.
    initial_cwnd: u64,
    /// `C.cwnd`.
    cwnd: u64,
    /// `C.pacing_rate`, bytes per second.
    pacing_rate: f64,
    /// `C.send_quantum`, bytes.
    send_quantum: u64,
    /// `C.srtt` as last reported with an ACK.
    srtt: Option<Duration>,
    /// Whether `InitPacingRate` has run with an RTT sample (§5.6.2).
    has_seen_rtt: bool,
    sampler: DeliveryRateSampler,
    /// `RS`: the rate sample of the ACK being processed.
    rs: RateSample,
    /// The first event's time: the generator's clock and the stamps' start.
    epoch: Option<Instant>,
    /// RFC 9002 §7.3.2 recovery periods: `InLossRecovery()`.
    recovery: Recovery,
    /// `BBR.round_count` when the connection last entered loss recovery
    /// from outside it (recovery periods that follow one another while it
    /// is open keep it).
    recovery_round: u64,
    /// A recovery period ended on this ACK frame: `RestoreCwnd()` (§5.6.4.4).
    restore_pending: bool,
    /// Whether loss recovery was open when the current ACK frame arrived.
    recovery_open_at_ack: bool,
    /// The current ACK frame has had an `on_ack` already.
    in_ack_frame: bool,
    /// `C.inflight` when the current ACK frame arrived.
    prior_inflight: u64,
    /// A send this round left less than one SMSS of window.
    cwnd_limited_now: bool,
    /// The same for the previous round.
    cwnd_limited_prev: bool,

    /// `BBR.state`.
    state: BbrMode,
    /// `BBR.pacing_gain`.
    pacing_gain: f64,
    /// `BBR.cwnd_gain`.
    cwnd_gain: f64,
    /// `BBR.round_count`.
    round_count: u64,
    /// `BBR.round_start`.
    round_start: bool,
    /// `BBR.next_round_delivered`.
    next_round_delivered: u64,
    /// `BBR.idle_restart`.
    idle_restart: bool,
    /// `BBR.drain_start_round`.
    drain_start_round: u64,

    /// `BBR.max_bw_filter` and `BBR.cycle_count`.
    max_bw_filter: MaxBwFilter,
    /// `BBR.max_bw`, bytes per second.
    max_bw: f64,
    /// `BBR.bw_shortterm`, bytes per second (infinite when unset).
    bw_shortterm: f64,
    /// `BBR.bw`, bytes per second.
    bw: f64,
    /// `BBR.min_rtt`; `None` is "Infinity".
    min_rtt: Option<Duration>,
    /// `BBR.min_rtt_stamp`.
    min_rtt_stamp: Option<Instant>,
    /// `BBR.extra_acked`, bytes.
    extra_acked: u64,
    /// `BBR.extra_acked_filter`.
    extra_acked_filter: WindowedMax<u64, u64>,
    /// `BBR.extra_acked_interval_start`.
    extra_acked_interval_start: Option<Instant>,
    /// `BBR.extra_acked_delivered`.
    extra_acked_delivered: u64,
    /// `BBR.max_inflight`, bytes.
    max_inflight: u64,
    /// `BBR.inflight_longterm`, bytes ([`INFINITE`] when unset).
    inflight_longterm: u64,
    /// `BBR.inflight_shortterm`, bytes ([`INFINITE`] when unset).
    inflight_shortterm: u64,

    /// `BBR.bw_latest`.
    bw_latest: f64,
    /// `BBR.inflight_latest`.
    inflight_latest: u64,
    /// `BBR.loss_round_delivered`.
    loss_round_delivered: u64,
    /// `BBR.loss_round_start`.
    loss_round_start: bool,
    /// `BBR.is_loss_in_round`.
    is_loss_in_round: bool,
    /// Loss events in the current loss round (§5.3.1.3's "discontiguous
    /// sequence ranges lost"; see the departures on `Bbr`).
    loss_events_in_round: u32,

    /// `BBR.full_bw_reached`.
    full_bw_reached: bool,
    /// `BBR.full_bw_now`.
    full_bw_now: bool,
    /// `BBR.full_bw`.
    full_bw: f64,
    /// `BBR.full_bw_count`.
    full_bw_count: u32,

    /// `BBR.ack_phase`.
    ack_phase: AckPhase,
    /// `BBR.is_bw_probe_sample`.
    is_bw_probe_sample: bool,
    /// `BBR.bw_probe_up_acked`.
    bw_probe_up_acked: u64,
    /// `BBR.probe_up_acked_per_inc` ([`INFINITE`] when not growing).
    probe_up_acked_per_inc: u64,
    /// `BBR.bw_probe_up_rounds`.
    bw_probe_up_rounds: u32,
    /// `BBR.rounds_since_probe_up`.
    rounds_since_probe_up: u64,
    /// `BBR.bw_probe_wait`.
    bw_probe_wait: Duration,
    /// `BBR.cycle_stamp`.
    cycle_stamp: Option<Instant>,
    /// `BBR.prev_probe_too_high`.
    prev_probe_too_high: bool,
    /// `BBR.prev_probe_precautionary`.
    prev_probe_precautionary: bool,
    /// State of the SplitMix64 generator.
    rng: u64,

    /// `BBR.undo_state` (`None` is the draft's `None`).
    undo_state: Option<BbrMode>,
    /// `BBR.undo_bw_shortterm`.
    undo_bw_shortterm: f64,
    /// `BBR.undo_inflight_shortterm`.
    undo_inflight_shortterm: u64,
    /// `BBR.undo_inflight_longterm`.
    undo_inflight_longterm: u64,
    /// `BBR.prior_cwnd`.
    prior_cwnd: u64,

    /// `BBR.probe_rtt_min_delay`; `None` is "Infinity".
    probe_rtt_min_delay: Option<Duration>,
    /// `BBR.probe_rtt_min_stamp`.
    probe_rtt_min_stamp: Option<Instant>,
    /// `BBR.probe_rtt_expired`.
    probe_rtt_expired: bool,
    /// When ProbeRTT's wait began: `BBR.probe_rtt_done_stamp` is this plus
    /// `BBR.ProbeRTTDuration` (`None` is the draft's 0).
    probe_rtt_done_stamp: Option<Instant>,
    /// `BBR.probe_rtt_round_done`.
    probe_rtt_round_done: bool,
}

impl Bbr {
    /// A BBR controller for a path with maximum datagram size `max_datagram_size` bytes:
    /// §5.2.1 `OnInit()`.
    pub fn new(config: BbrConfig, max_datagram_size: u16) -> Self {
        let mss = u64::from(max_datagram_size);
        let mss = mss.max(1);
        let initial_cwnd = match config.initial_window {
            Some(packets) => u64::from(packets).saturating_mul(mss),
            None => init_window(mss),
        };
        let rng = config.seed;
        let mut bbr = Self {
            config,
            mss,
            initial_cwnd,
            // §5.6.4.1: "at initialization, BBR uses the transport sender
            // implementation's initial congestion window".
            cwnd: initial_cwnd,
            pacing_rate: 0.0,
            send_quantum: 2 * mss,
            srtt: None,
            has_seen_rtt: false,
            sampler: DeliveryRateSampler::new(),
            rs: RateSample::default(),
            epoch: None,
            recovery: Recovery::default(),
            recovery_round: 0,
            restore_pending: false,
            recovery_open_at_ack: false,
            in_ack_frame: false,
            prior_inflight: 0,
            cwnd_limited_now: false,
            cwnd_limited_prev: false,
            state: BbrMode::Startup,
            pacing_gain: 1.0,
            cwnd_gain: 1.0,
            round_count: 0,
            round_start: false,
            next_round_delivered: 0,
            idle_restart: false,
            drain_start_round: 0,
            max_bw_filter: MaxBwFilter::default(),
            max_bw: 0.0,
            bw_shortterm: f64::INFINITY,
            bw: 0.0,
            min_rtt: None,
            min_rtt_stamp: None,
            extra_acked: 0,
            extra_acked_filter: WindowedMax::new(),
            extra_acked_interval_start: None,
            extra_acked_delivered: 0,
            max_inflight: initial_cwnd,
            inflight_longterm: INFINITE,
            inflight_shortterm: INFINITE,
            bw_latest: 0.0,
            inflight_latest: 0,
            loss_round_delivered: 0,
            loss_round_start: false,
            is_loss_in_round: false,
            loss_events_in_round: 0,
            full_bw_reached: false,
            full_bw_now: false,
            full_bw: 0.0,
            full_bw_count: 0,
            ack_phase: AckPhase::Init,
            is_bw_probe_sample: false,
            bw_probe_up_acked: 0,
            probe_up_acked_per_inc: INFINITE,
            bw_probe_up_rounds: 0,
            rounds_since_probe_up: 0,
            bw_probe_wait: Duration::ZERO,
            cycle_stamp: None,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
            rng,
            undo_state: None,
            undo_bw_shortterm: 0.0,
            undo_inflight_shortterm: 0,
            undo_inflight_longterm: 0,
            prior_cwnd: 0,
            probe_rtt_min_delay: None,
            probe_rtt_min_stamp: None,
            probe_rtt_expired: false,
            probe_rtt_done_stamp: None,
            probe_rtt_round_done: false,
        };
        bbr.reset_congestion_signals();
        bbr.reset_short_term_model();
        bbr.reset_full_bw();
        bbr.init_pacing_rate();
        bbr.enter_startup();
        bbr
    }

    /// The state machine's state.
    pub fn mode(&self) -> BbrMode {
        self.state
    }

    /// `BBR.max_bw`, bytes per second.
    pub fn max_bw(&self) -> f64 {
        self.max_bw
    }

    /// `BBR.min_rtt`, once there is an RTT sample.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// The time-dependent stamps of `OnInit()` that need a `Now()`: taken at
    /// the first event, since construction has no clock.
    fn start_clock(&mut self, now: Instant) {
        if self.epoch.is_none() {
            self.epoch = Some(now);
            self.min_rtt_stamp = Some(now);
            self.probe_rtt_min_stamp = Some(now);
            self.extra_acked_interval_start = Some(now);
        }
    }

    /// `C.inflight`.
    fn inflight(&self) -> u64 {
        self.sampler.inflight()
    }

    /// `C.is_cwnd_limited` (§2.2): "True if the connection has fully utilized
    /// C.cwnd at any point in the last packet-timed round trip."
    fn is_cwnd_limited(&self) -> bool {
        self.cwnd_limited_now || self.cwnd_limited_prev
    }

    /// Set `BBR.state` and its gains from §5.6.1's table (the pseudocode's
    /// `Enter*`/`Start*` functions set some of them; the table all).
    fn set_state(&mut self, state: BbrMode) {
        let c = &self.config;
        let (pacing, cwnd) = match state {
            BbrMode::Startup => (c.startup_gain, c.cwnd_gain),
            BbrMode::Drain => (c.drain_gain, c.cwnd_gain),
            BbrMode::ProbeBwDown => (c.down_gain, c.cwnd_gain),
            BbrMode::ProbeBwCruise | BbrMode::ProbeBwRefill => (1.0, c.cwnd_gain),
            BbrMode::ProbeBwUp => (c.up_gain, c.up_cwnd_gain),
            BbrMode::ProbeRtt => (1.0, c.probe_rtt_gain),
        };
        self.state = state;
        self.pacing_gain = pacing;
        self.cwnd_gain = cwnd;
    }

    /// §5.2.3 `UpdateOnACK()`, after the rate sample has been generated.
    fn update_on_ack(&mut self, now: Instant) {
        self.update_model_and_state(now);
        self.update_control_parameters();
    }

    /// §5.2.3 `UpdateModelAndState()`.
    fn update_model_and_state(&mut self, now: Instant) {
        self.update_latest_delivery_signals();
        self.update_congestion_signals();
        self.update_ack_aggregation(now);
        self.check_full_bw_reached();
        self.check_startup_done();
        self.check_drain_done(now);
        self.update_probe_bw_cycle_phase(now);
        self.update_min_rtt(now);
        self.check_probe_rtt(now);
        self.advance_latest_delivery_signals();
        self.bound_bw_for_model();
    }

    /// §5.2.3 `UpdateControlParameters()`.
    fn update_control_parameters(&mut self) {
        self.set_pacing_rate();
        self.set_send_quantum();
        self.set_cwnd();
    }

    /// The next draw of the generator, in `[0, 1)`: SplitMix64, stirred
    /// with what this connection has delivered and how long it has run
    /// (see the departures on `Bbr`).
    fn random_unit(&mut self, now: Instant) -> f64 {
        let elapsed = self
            .epoch
            .map_or(0, |e| now.saturating_duration_since(e).as_nanos() as u64);
        self.rng ^= self.sampler.delivered().rotate_left(17) ^ elapsed.rotate_left(41);
        self.rng = self.rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// The state as [`AlgorithmState::Bbr`].
    fn algorithm_state(&self) -> AlgorithmState {
        // A (degenerate) zero volume shows as 1 byte: the field is non-zero.
        let finite = |v: u64| (v != INFINITE).then(|| NonZeroU64::new(v.max(1))).flatten();
        AlgorithmState::Bbr {
            mode: self.state,
            full_bw_reached: self.full_bw_reached,
            round_count: u32::try_from(self.round_count).unwrap_or(u32::MAX),
            max_bw_bytes_per_sec: self.max_bw,
            bw_bytes_per_sec: self.bw,
            min_rtt_secs: self.min_rtt.map_or(0.0, |d| d.as_secs_f64()),
            pacing_rate_bytes_per_sec: self.pacing_rate,
            inflight_longterm_bytes: finite(self.inflight_longterm),
            inflight_shortterm_bytes: finite(self.inflight_shortterm),
            extra_acked_bytes: self.extra_acked,
        }
    }
}

impl CongestionController for Bbr {
    fn on_sent(&mut self, now: Instant, bytes: u64) {
        self.start_clock(now);
        // §5.2.2 `OnTransmit()`.
        self.handle_restart_from_idle(now);
        self.sampler.on_sent(now, bytes);
        // `C.is_cwnd_limited`: quinn stops at `in_flight + segment >= window`.
        if self.inflight().saturating_add(self.mss) >= self.cwnd {
            self.cwnd_limited_now = true;
        }
    }

    fn on_ack(&mut self, now: Instant, ack: &Ack) {
        self.start_clock(now);
        let was_open = self.recovery.is_open();
        if !std::mem::replace(&mut self.in_ack_frame, true) {
            self.recovery_open_at_ack = was_open;
            self.prior_inflight = self.inflight();
        }
        self.recovery.on_ack(ack.sent);
        if was_open && !self.recovery.is_open() {
            // §5.6.4.4: "Upon exiting loss recovery ... BBR restores the
            // best-known cwnd value we had upon entering loss recovery".
            self.restore_pending = true;
        }
        if ack.rtt.smoothed > Duration::ZERO {
            self.srtt = Some(ack.rtt.smoothed);
        }
        self.sampler.on_ack(now, ack.sent, ack.bytes, ack.rtt.latest);
    }

    fn on_end_acks(&mut self, now: Instant, bytes_in_flight: u64, app_limited: bool) {
        self.start_clock(now);
        if app_limited {
            // §4.1.2.4 `MarkConnectionAppLimited()`, on quinn's verdict.
            self.sampler.mark_app_limited();
        }
        if !std::mem::take(&mut self.in_ack_frame) {
            self.recovery_open_at_ack = self.recovery.is_open();
            self.prior_inflight = self.inflight();
        }
        // §5.2.3: `GenerateRateSample()` first.
        self.rs = self.sampler.end_ack(Some(bytes_in_flight));
        if self.rs.newly_acked == 0 {
            return; // no data newly acknowledged: nothing to update
        }
        if !self.has_seen_rtt && self.srtt.is_some() {
            // §5.6.2: the initial rate uses "the initial C.srtt after the
            // first non-zero RTT sample".
            self.init_pacing_rate();
        }
        if std::mem::take(&mut self.restore_pending) {
            self.restore_cwnd();
        }
        self.update_on_ack(now);
    }

    fn on_congestion(&mut self, now: Instant, event: &Congestion) {
        self.start_clock(now);
        match event.kind {
            CongestionKind::Loss => {
                if !self.recovery.in_recovery(event.sent) {
                    // A new recovery period: §5.6.4.4 `OnEnterFastRecovery()`
                    // (`SaveStateUponLoss` includes `SaveCwnd`, which reads
                    // InLossRecovery() as it was before this period).
                    if !self.recovery.is_open() {
                        self.recovery_round = self.round_count;
                    }
                    self.save_state_upon_loss();
                    self.recovery.enter(now, event.sent);
                }
                self.on_lost_bytes(now, event.lost_bytes);
            }
            CongestionKind::PersistentCongestion => {
                self.on_lost_bytes(now, event.lost_bytes);
                self.on_enter_rto();
                // An RTO starts a recovery period now (RFC 9002 Appendix B.8).
                self.recovery.reset();
                self.recovery.enter(now, now);
                self.recovery_round = self.round_count;
            }
            CongestionKind::Ecn => self.on_ce_mark(now),
        }
    }

    fn on_spurious_loss(&mut self, now: Instant) {
        self.start_clock(now);
        self.handle_spurious_loss_detection();
    }

    fn on_mtu_update(&mut self, max_datagram_size: u16) {
        self.mss = u64::from(max_datagram_size).max(1);
        self.cwnd = self.cwnd.max(min_window(self.mss));
    }

    fn window(&self) -> u64 {
        self.cwnd.max(min_window(self.mss))
    }

    fn initial_window(&self) -> u64 {
        self.initial_cwnd.max(min_window(self.mss))
    }

    fn pacing_rate(&self) -> Option<u64> {
        // `as` saturates; the rate is finite.
        Some((self.pacing_rate as u64).max(1))
    }

    fn send_quantum(&self) -> Option<u64> {
        Some(self.send_quantum)
    }

    /// §4.1: every packet newly SACKed or ACKed updates the rate sample.
    fn counts_selective_acks(&self) -> bool {
        true
    }

    fn snapshot(&self) -> Snapshot {
        let phase = if self.recovery.is_open() {
            Phase::Recovery
        } else if self.state == BbrMode::Startup {
            Phase::SlowStart
        } else {
            Phase::CongestionAvoidance
        };
        Snapshot {
            cwnd_bytes: self.window(),
            ssthresh_bytes: None,
            phase,
            state: self.algorithm_state(),
        }
    }

    fn clone_box(&self) -> Box<dyn CongestionController> {
        Box::new(self.clone())
    }
}
