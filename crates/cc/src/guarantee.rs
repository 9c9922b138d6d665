//! The throughput-guarantee controller of K. Yamanegi, G. Hasegawa, M. Murata,
//! "Congestion control mechanism of TCP for achieving predictable throughput"
//! (スループット保証を実現する TCP の輻輳制御方式の提案と評価; see
//! docs/papers.md, "seed 000"): TCP Reno whose congestion-avoidance slope `k`
//! is chosen at every ACK so that the mean throughput of every evaluation slot
//! reaches a target `bw`.
//!
//! Section and equation numbers (§2.x, eq. (n)) refer to that paper.
//!
//! Transcendental functions (`log2`) come from the `libm` crate, not `std`:
//! `std` calls the platform's C library, whose results may differ in the last
//! bits between machines; `libm` gives bit-identical results on every target,
//! so one scenario and seed give the same bytes on x86_64 and aarch64.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::aggregate::{Aggregate, Membership};
use crate::bandwidth::BandwidthSource;
use crate::controller::{Ack, AlgorithmState, Congestion, CongestionController, Snapshot, initial_window};
use crate::eval_slot::EvalSlot;
use crate::reno::{RenoCore, WindowAdjustment};
use crate::units::Rate;

/// Where a [`Guarantee`] built from a spec gets `A` and `P` from (spec key `abw`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AbwSource {
    /// The bandwidth source the builder passes (e.g. a simulator's oracle); if
    /// none is passed, the [`InlineEstimator`](crate::InlineEstimator).
    #[default]
    Auto,
    /// Always the [`InlineEstimator`](crate::InlineEstimator), even if a source is passed.
    Inline,
}

/// Parameters of [`Guarantee`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuaranteeConfig {
    /// Target throughput `bw`.
    pub target: Rate,
    /// Evaluation slot length; default 32 RTTs (the paper's `d = 32`).
    pub eval: EvalSlot,
    /// Initial control slot `s` in RTTs; default `d / 2`.
    pub slot_rtts: Option<u32>,
    /// Lower clamp `k_min` of the slope; default 1 (never slower than Reno).
    pub k_min: f64,
    /// The factor on `cwnd` in `k_max = A*srtt - kmax_cwnd*cwnd`; default 2
    /// (the paper's summary; eqs. (4)/(5) as printed use 1).
    pub kmax_cwnd: f64,
    /// Physical bandwidth `P`, used when the bandwidth source does not report one
    /// (and given to the inline estimator, whose own `P` estimate it replaces).
    pub physical: Option<Rate>,
    /// Where `A` and `P` come from when built by [`ControllerSpec`](crate::ControllerSpec); default `auto`.
    #[serde(default)]
    pub abw: AbwSource,
}

impl GuaranteeConfig {
    /// The paper's defaults for a target of `target`.
    pub fn new(target: Rate) -> Self {
        Self {
            target,
            eval: EvalSlot::Rtts(32),
            slot_rtts: None,
            k_min: 1.0,
            kmax_cwnd: 2.0,
            physical: None,
            abw: AbwSource::Auto,
        }
    }

    /// Check the parameters.
    pub fn validate(&self) -> Result<(), String> {
        if self.target.bits_per_sec() == 0 {
            return Err("target: must be positive".into());
        }
        match self.eval {
            EvalSlot::Rtts(d) if d < 2 || !d.is_power_of_two() => {
                return Err(format!("eval: {d}rtt must be a power of two >= 2"));
            }
            EvalSlot::Time(t) if t.is_zero() => return Err("eval: must be positive".into()),
            _ => {}
        }
        if let Some(s) = self.slot_rtts {
            if s < 2 || !s.is_power_of_two() {
                return Err(format!("slot: {s}rtt must be a power of two >= 2"));
            }
            if let EvalSlot::Rtts(d) = self.eval
                && s > d
            {
                return Err(format!("slot: {s}rtt must not exceed eval {d}rtt"));
            }
        }
        if !(self.k_min >= 0.0 && self.k_min.is_finite()) {
            return Err(format!("k_min: {} must be >= 0", self.k_min));
        }
        if !(self.kmax_cwnd >= 0.0 && self.kmax_cwnd.is_finite()) {
            return Err(format!("kmax_cwnd: {} must be >= 0", self.kmax_cwnd));
        }
        if self.physical.is_some_and(|p| p.bits_per_sec() == 0) {
            return Err("physical: must be positive".into());
        }
        Ok(())
    }
}

/// The throughput-guarantee controller (Yamanegi, Hasegawa, Murata; see the module docs).
///
/// Units are bytes and seconds; where the paper's formulas are in packets,
/// `packets = bytes / mss` with the current maximum datagram size.
///
/// # Window (§2.1, Reno base)
///
/// - Slow start at connection start and after persistent congestion: exactly
///   Reno, `cwnd += acked bytes` while `cwnd < ssthresh` (RFC 9002 §7.3.1).
/// - Congestion avoidance: the paper's eq. (1) `cwnd <- cwnd + k / cwnd` per
///   ACK, i.e. `k` datagrams per window acknowledged, counted as one `mss`
///   per `cwnd / k` bytes acked (`k` as of that ACK). With `k = 1` this is
///   exactly [`NewReno`](crate::NewReno): both run one Reno core.
/// - Loss or ECN: `ssthresh = cwnd / 2`, `cwnd = ssthresh` (not below the
///   minimum window), once per round trip (RFC 9002 §7.3.2).
/// - Persistent congestion (the timeout analogue): `cwnd` = RFC 9002's minimum
///   window of 2 datagrams (§7.2); the paper's Reno uses 1 packet. Slow start again.
/// - No growth in recovery or while application-limited (RFC 9002 §7.8, as
///   [`NewReno`](crate::NewReno)); the slot bookkeeping and `k` are updated anyway.
///
/// # Slots (§2.2, §2.3)
///
/// - The evaluation slot is `d` RTTs. With [`EvalSlot::Time`]`(t)`,
///   `d = t / min_rtt` is computed once, when the first evaluation slot starts,
///   and rounded to the nearest power of two *in log scale*
///   (`2^round(log2(t / min_rtt))`), at least 2 (at most 2^30).
/// - The control slot is `s` RTTs: initially [`GuaranteeConfig::slot_rtts`] or
///   `d / 2`, clamped to `[2, d]`; `d / s` control slots per evaluation slot.
/// - Slots start at the first ACK (the first RTT sample; ACKs before any
///   non-zero RTT is known are not counted). For that very first slot, `srtt_1`
///   is the ACK's own RTT (`latest`), because RFC 9002 §5.3 initialises
///   `smoothed_rtt` to the first sample while a transport may still report its
///   initial guess (quinn-proto's 333 ms) at that moment. Later slots take
///   `srtt_i` = the smoothed RTT of the ACK that starts them. Slots run during
///   slow start and recovery too: throughput counts regardless of phase.
///   Until then snapshots report `control_slot = 1`, `goal = bw`, and (with
///   [`EvalSlot::Time`]) `eval_rtts = slot_rtts = 0`.
/// - No timer: an ACK arriving at least `srtt_i * s` after slot `i` began ends
///   it with `tput_i = bytes acked in the slot / actual elapsed time`, and
///   starts slot `i + 1` at that instant. An ACK belongs to the slot running
///   after this check (slots are half-open, `[start_i, start_{i+1})`).
/// - A long gap without ACKs (several slots' worth) is absorbed into the
///   running slot: it ends at the first ACK after the gap, its throughput is
///   taken over the whole gap (so the deficit shows), and it counts as *one*
///   control slot; the next slot starts at that ACK.
/// - Goal: `g_1 = bw`, `g_i = bw + (g_{i-1} - tput_{i-1})`; the carry is
///   discarded when the evaluation slot ends. Slot `i` *missed* its goal if
///   `tput_i < g_i`.
///
/// # Slope (§2.4)
///
/// At every ACK, after the slot bookkeeping and before this ACK grows the
/// window, `k = max(k_min, min(k_bw, k_max))` with
///
/// - `k_bw` from [`Guarantee::k_bw`] (the closed form, with
///   `n_j = floor(elapsed / srtt_i)` and the ACK counter including this ACK);
/// - `k_max`, with `A` and `P` in packets/s and `c = kmax_cwnd` (default 2:
///   eqs. (4)/(5) subtract `cwnd`, the paper's summary `2 * cwnd`):
///   - uncongested (no earlier control slot of this evaluation slot missed):
///     `k_max = A * srtt_i - c * cwnd`;
///   - congested: `k_max = min(A + g_i - avgA_{i-1}, P) * srtt_i - c * cwnd`,
///     where `avgA_{i-1}` is the time-weighted mean of `A` over the previous
///     control slot (`A` is sampled at each ACK and held until the next one;
///     intervals where `A` was unknown are left out; if it was unknown for the
///     whole slot, the current `A` stands in, giving `min(g_i, P)`).
///   - `A` unknown (no source, or the source returns `None`) means unlimited:
///     no `k_max` when uncongested, and `P * srtt_i - c * cwnd` when congested.
///     `P` comes from the source, else [`GuaranteeConfig::physical`], else is
///     unlimited.
///
/// # Dynamic `s` (§2.5)
///
/// When an evaluation slot ends (its `d / s`-th control slot closed), with its
/// throughput = bytes acked in it / its duration:
///
/// - halve `s` (not below 2) if the evaluation slot was *congested* and missed `bw`;
/// - double `s` (not above `d`) if it was not congested, met `bw`, and
///   `cwnd / srtt >= bw` at its end (the paper prints `cwnd * srtt`, a typo;
///   `srtt` is the smoothed RTT of the closing ACK);
/// - otherwise keep `s`. The new `s` applies from the next evaluation slot.
///
/// An evaluation slot counts as congested if *any* of its control slots missed
/// its goal, the last one included. The last slot's miss would have switched
/// `k_max` to eq. (5) had the evaluation slot continued; counting only slots
/// that actually ran under eq. (5) would make `s = d` (one control slot)
/// absorbing, since that slot can never run congested, whereas the paper's
/// Fig. 5 shows `s` shrinking after a calm phase in which it could grow.
#[derive(Debug, Clone)]
pub struct Guarantee {
    config: GuaranteeConfig,
    bandwidth: Option<Arc<dyn BandwidthSource>>,
    /// Seat in an [`Aggregate`]; shared by clones, leaves when the last one drops.
    member: Option<Arc<Membership>>,
    /// Target `bw`, bytes per second.
    bw: f64,
    /// Window, threshold and recovery: Reno's, shared with [`NewReno`](crate::NewReno).
    reno: RenoCore,
    /// Current slope, packets per RTT.
    k: f64,
    /// `d`; 0 until known ([`EvalSlot::Time`] before the first ACK).
    eval_rtts: u32,
    /// `s`; 0 until `d` is known.
    slot_rtts: u32,
    /// Slot bookkeeping, from the first ACK on.
    slots: Option<Slots>,
    /// The last `A` read, bytes per second.
    available: Option<f64>,
    /// Throughput of the last completed evaluation slot, bytes per second.
    last_eval_throughput: Option<f64>,
    /// Completed evaluation slots.
    evals_completed: u64,
    /// Completed evaluation slots whose throughput reached `bw`.
    evals_met: u64,
}

/// Largest `d` that [`EvalSlot::Time`] can produce: `2^MAX_EVAL_LOG2` RTTs.
const MAX_EVAL_LOG2: f64 = 30.0;

/// Evaluation- and control-slot state.
#[derive(Debug, Clone, Copy)]
struct Slots {
    /// When the current evaluation slot began.
    eval_start: Instant,
    /// Bytes acked in the current evaluation slot.
    eval_acked: u64,
    /// `i`, the current control slot, from 1.
    index: u32,
    /// When control slot `i` began.
    start: Instant,
    /// `srtt_i`, never zero.
    srtt: Duration,
    /// Bytes acked in control slot `i` (`ack^{n_j} - ack^0`).
    acked: u64,
    /// `g_i`, bytes per second.
    goal: f64,
    /// An earlier control slot of this evaluation slot missed its goal.
    congested: bool,
    /// Integral of `A` over slot `i` so far, bytes.
    a_bytes: f64,
    /// Seconds of slot `i` over which `A` was known.
    a_secs: f64,
    /// Up to when `A` has been integrated.
    a_until: Instant,
    /// `avgA_{i-1}`, bytes per second; `None` if `A` was never known in it.
    prev_avg_a: Option<f64>,
    // Per-slot constants and the RTT count, kept so that an ACK does not
    // recompute them (they change only when a slot begins, or the MSS).
    /// `srtt_i` in seconds.
    srtt_secs: f64,
    /// The slot's goal in packets, `g_i * srtt_i * s / mss`.
    goal_pkts: f64,
    /// Whole RTTs elapsed in the slot, `n`.
    n: u64,
    /// When `n` next grows, nanoseconds after `start`: `(n + 1) * srtt_i`.
    next_rtt_ns: u64,
}

impl Slots {
    fn new(now: Instant, srtt: Duration, bw: f64) -> Self {
        Self {
            eval_start: now,
            eval_acked: 0,
            index: 1,
            start: now,
            srtt,
            acked: 0,
            goal: bw,
            congested: false,
            a_bytes: 0.0,
            a_secs: 0.0,
            a_until: now,
            prev_avg_a: None,
            srtt_secs: srtt.as_secs_f64(),
            goal_pkts: 0.0,
            n: 0,
            next_rtt_ns: nanos(srtt).max(1),
        }
    }

    /// Recompute the slot's goal in packets (after the goal, `s` or the MSS changed).
    fn prime(&mut self, slot_rtts: u32, mss: u64) {
        self.goal_pkts = self.goal * self.srtt_secs * f64::from(slot_rtts) / mss as f64;
    }

    /// `n`, the whole RTTs elapsed in the slot `elapsed_ns` after its start:
    /// `elapsed / srtt_i` rounded down, kept by stepping a boundary (a
    /// division only after a long silence).
    fn rtts_elapsed(&mut self, elapsed_ns: u64) -> u64 {
        if elapsed_ns >= self.next_rtt_ns {
            let srtt = nanos(self.srtt).max(1);
            if elapsed_ns - self.next_rtt_ns < 8 * srtt {
                while elapsed_ns >= self.next_rtt_ns {
                    self.n += 1;
                    self.next_rtt_ns = self.next_rtt_ns.saturating_add(srtt);
                }
            } else {
                self.n = elapsed_ns / srtt;
                self.next_rtt_ns = srtt.saturating_mul(self.n.saturating_add(1));
            }
        }
        self.n
    }

    /// `A` was `available` from the last ACK until `now` (piecewise constant).
    fn integrate_available(&mut self, now: Instant, available: Option<f64>) {
        if let Some(a) = available {
            let dt = now.saturating_duration_since(self.a_until).as_secs_f64();
            self.a_bytes += a * dt;
            self.a_secs += dt;
        }
        self.a_until = now;
    }

    /// Start the next control slot at `now`.
    fn begin_control_slot(&mut self, now: Instant, srtt: Duration) {
        self.start = now;
        self.srtt = srtt;
        self.srtt_secs = srtt.as_secs_f64();
        self.n = 0;
        self.next_rtt_ns = nanos(srtt).max(1);
        self.acked = 0;
        self.a_bytes = 0.0;
        self.a_secs = 0.0;
        self.a_until = now;
    }
}

impl Guarantee {
    /// A guarantee controller reading `A` and `P` from `bandwidth`.
    pub fn new(config: GuaranteeConfig, mss: u64, bandwidth: Option<Arc<dyn BandwidthSource>>) -> Self {
        let (eval_rtts, slot_rtts) = match config.eval {
            EvalSlot::Rtts(d) => {
                let d = d.max(2);
                (d, initial_slot_rtts(config.slot_rtts, d))
            }
            EvalSlot::Time(_) => (0, 0),
        };
        Self {
            bw: config.target.bytes_per_sec(),
            k: config.k_min,
            config,
            bandwidth,
            member: None,
            reno: RenoCore::new(mss),
            eval_rtts,
            slot_rtts,
            slots: None,
            available: None,
            last_eval_throughput: None,
            evals_completed: 0,
            evals_met: 0,
        }
    }

    /// Join `group`: from now on `A` and the goal carry are coordinated with
    /// the other members, as described in [`Aggregate`]. Without other members
    /// the controller behaves exactly as alone.
    pub fn with_aggregate(mut self, group: &Aggregate) -> Self {
        self.member = Some(Arc::new(group.join(self.bw)));
        self
    }

    /// The slope `k_bw` (packets per RTT) that makes control slot `i` reach its
    /// goal, the closed form of §2.4 (all quantities in packets/RTTs):
    ///
    /// ```text
    /// m    = s - n - 1
    /// k_bw = 2 * (goal - m * cwnd - acked) / (m * (m + 1))
    /// ```
    ///
    /// `goal = g_i * srtt_i * s` is what the slot must deliver, `n` the whole
    /// RTTs elapsed in the slot, `cwnd` the window and `acked` what the slot
    /// has delivered so far. Over the remaining `m` RTTs (the slot minus one RTT
    /// to see the ACK and one for a retransmission) a window growing by `k` per
    /// RTT sends `m * cwnd + k * m * (m + 1) / 2`. The paper's eq. (2) writes
    /// `(s - n + 1) * cwnd`, its closed form `(s - n - 1)`; we use the latter.
    ///
    /// Near the slot end `m <= 0` and the formula is undefined; we then take
    /// `m = 1`: the missing packets are to be sent within one more RTT beyond
    /// the current window, `k_bw = goal - acked - cwnd` (the caller clamps it).
    ///
    /// ```
    /// use tput_cc::Guarantee;
    /// assert_eq!(Guarantee::k_bw(100.0, 8.0, 2.0, 10.0, 20.0), 2.0); // m = 5
    /// assert_eq!(Guarantee::k_bw(100.0, 8.0, 7.0, 10.0, 60.0), 30.0); // m = 0 -> 1
    /// ```
    pub fn k_bw(goal_pkts: f64, s: f64, n: f64, cwnd_pkts: f64, acked_pkts: f64) -> f64 {
        let m = s - n - 1.0;
        if m <= 0.0 {
            goal_pkts - acked_pkts - cwnd_pkts
        } else {
            2.0 * (goal_pkts - m * cwnd_pkts - acked_pkts) / (m * (m + 1.0))
        }
    }

    /// The congestion window in bytes, as a float for the slope formulas.
    fn cwnd(&self) -> f64 {
        self.reno.window() as f64
    }

    /// The current slope `k`, packets per RTT (`k_min` until the first ACK).
    pub fn k(&self) -> f64 {
        self.k
    }

    /// The control slot length `s` in RTTs; `None` until `d` is known.
    pub fn slot_rtts(&self) -> Option<u32> {
        (self.slot_rtts != 0).then_some(self.slot_rtts)
    }

    /// The evaluation slot length `d` in RTTs; with [`EvalSlot::Time`],
    /// `None` until the first ACK.
    pub fn eval_rtts(&self) -> Option<u32> {
        (self.eval_rtts != 0).then_some(self.eval_rtts)
    }

    /// Throughput of the last completed evaluation slot, bytes per second.
    pub fn last_eval_throughput(&self) -> Option<f64> {
        self.last_eval_throughput
    }

    /// `(completed, met)`: evaluation slots completed so far, and how many of
    /// them reached the target.
    pub fn evaluations(&self) -> (u64, u64) {
        (self.evals_completed, self.evals_met)
    }

    /// Slot bookkeeping and the slope for an ACK at `now`. The slot state is
    /// updated in place (it is copied out only when a control slot closes).
    fn track(&mut self, now: Instant, ack: &Ack) {
        let available = self
            .bandwidth
            .as_ref()
            .and_then(|b| b.available(now))
            .filter(|a| a.is_finite() && *a >= 0.0);
        let available = match &self.member {
            Some(m) => {
                let srtt = ack.rtt.smoothed.as_secs_f64();
                let rate = if srtt > 0.0 { self.cwnd() / srtt } else { 0.0 };
                m.share_available(available, rate)
            }
            None => available,
        };
        let mut elapsed = Duration::ZERO;
        match self.slots.as_mut() {
            Some(slots) => {
                slots.integrate_available(now, self.available);
                elapsed = now.saturating_duration_since(slots.start);
                if slots.srtt.checked_mul(self.slot_rtts).is_some_and(|len| elapsed >= len) {
                    let mut closing = *slots;
                    self.close_control_slot(&mut closing, now, ack.rtt.smoothed);
                    self.slots = Some(closing);
                    // The next slot begins now.
                    elapsed = Duration::ZERO;
                }
            }
            None => match self.first_slots(now, ack) {
                Some(mut slots) => {
                    slots.prime(self.slot_rtts, self.reno.mss());
                    self.slots = Some(slots);
                }
                None => {
                    self.available = available;
                    return;
                }
            },
        }
        self.available = available;
        let Some(slots) = self.slots.as_mut() else { return };
        slots.acked += ack.bytes;
        slots.eval_acked += ack.bytes;
        let n = slots.rtts_elapsed(nanos(elapsed));
        if let Some(slots) = self.slots.as_ref() {
            self.k = self.slope(now, slots, n);
        }
    }

    /// The first evaluation slot, started by the first ACK with an RTT sample.
    fn first_slots(&mut self, now: Instant, ack: &Ack) -> Option<Slots> {
        let rtt = &ack.rtt;
        // RFC 9002 §5.3: the first sample initialises smoothed_rtt to latest_rtt.
        let srtt = if rtt.latest.is_zero() { rtt.smoothed } else { rtt.latest };
        if srtt.is_zero() {
            return None;
        }
        if let EvalSlot::Time(t) = self.config.eval
            && self.eval_rtts == 0
        {
            let min = match (rtt.min.is_zero(), rtt.latest.is_zero()) {
                (false, false) => rtt.min.min(rtt.latest),
                (false, true) => rtt.min,
                (true, _) => rtt.latest,
            };
            if min.is_zero() {
                return None;
            }
            self.eval_rtts = eval_rtts_for(t, min);
            self.slot_rtts = initial_slot_rtts(self.config.slot_rtts, self.eval_rtts);
        }
        Some(Slots::new(now, srtt, self.bw))
    }

    /// Close control slot `i` at `now`; maybe the evaluation slot; start the next.
    fn close_control_slot(&mut self, slots: &mut Slots, now: Instant, srtt_now: Duration) {
        let elapsed = now.saturating_duration_since(slots.start).as_secs_f64();
        let tput = slots.acked as f64 / elapsed;
        if tput < slots.goal {
            slots.congested = true;
        }
        slots.prev_avg_a = (slots.a_secs > 0.0).then(|| slots.a_bytes / slots.a_secs);
        let srtt = if srtt_now.is_zero() { slots.srtt } else { srtt_now };
        if slots.index >= (self.eval_rtts / self.slot_rtts).max(1) {
            self.close_evaluation_slot(slots, now, srtt);
            slots.eval_start = now;
            slots.eval_acked = 0;
            slots.index = 1;
            slots.goal = self.bw;
            slots.congested = false;
            if let Some(m) = &self.member {
                m.pool_carry(0.0);
            }
        } else {
            // §2.3: g_{i+1} = bw + (g_i - tput_i); in an aggregate, the
            // member's share of the group's pooled carry.
            slots.index += 1;
            let carry = slots.goal - tput;
            slots.goal = self.bw + self.member.as_ref().map_or(carry, |m| m.pool_carry(carry));
        }
        slots.begin_control_slot(now, srtt);
        slots.prime(self.slot_rtts, self.reno.mss());
    }

    /// §2.5: judge the evaluation slot ending at `now` and adapt `s`.
    fn close_evaluation_slot(&mut self, slots: &Slots, now: Instant, srtt: Duration) {
        let secs = now.saturating_duration_since(slots.eval_start).as_secs_f64();
        let tput = slots.eval_acked as f64 / secs;
        let met = tput >= self.bw;
        self.last_eval_throughput = Some(tput);
        self.evals_completed += 1;
        self.evals_met += u64::from(met);
        if slots.congested && !met {
            self.slot_rtts = (self.slot_rtts / 2).max(2);
        } else if !slots.congested && met && self.cwnd() / srtt.as_secs_f64() >= self.bw {
            self.slot_rtts = (self.slot_rtts * 2).min(self.eval_rtts);
        }
    }

    /// `k = max(k_min, min(k_bw, k_max))`, §2.4, with `n` whole RTTs elapsed.
    fn slope(&self, now: Instant, slots: &Slots, n: u64) -> f64 {
        let mss = self.reno.mss() as f64;
        let s = f64::from(self.slot_rtts);
        let cwnd_pkts = self.cwnd() / mss;
        let k_bw = Self::k_bw(slots.goal_pkts, s, n as f64, cwnd_pkts, slots.acked as f64 / mss);
        k_bw.min(self.k_max(now, slots, slots.srtt_secs, cwnd_pkts))
            .max(self.config.k_min)
    }

    /// `k_max`, eqs. (4)/(5) with the factor `kmax_cwnd` on `cwnd`.
    fn k_max(&self, now: Instant, slots: &Slots, srtt: f64, cwnd_pkts: f64) -> f64 {
        let rate = match (self.available, slots.congested) {
            (None, false) => return f64::INFINITY,
            (Some(a), false) => a,
            (None, true) => self.physical(now),
            (Some(a), true) => {
                let avg = slots.prev_avg_a.unwrap_or(a);
                (a + slots.goal - avg).min(self.physical(now))
            }
        };
        if rate.is_infinite() {
            return f64::INFINITY;
        }
        rate * srtt / self.reno.mss() as f64 - self.config.kmax_cwnd * cwnd_pkts
    }

    /// `P`, bytes per second: from the source, else the configuration, else unlimited.
    fn physical(&self, now: Instant) -> f64 {
        self.bandwidth
            .as_ref()
            .and_then(|b| b.physical(now))
            .filter(|p| p.is_finite() && *p > 0.0)
            .or_else(|| self.config.physical.map(Rate::bytes_per_sec))
            .unwrap_or(f64::INFINITY)
    }
}

/// A duration in nanoseconds, saturating at `u64::MAX` (584 years).
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

/// `d = t / min_rtt` rounded to the nearest power of two in log scale, in `[2, 2^30]`.
fn eval_rtts_for(t: Duration, min_rtt: Duration) -> u32 {
    let ratio = t.as_nanos() as f64 / min_rtt.as_nanos() as f64;
    let exp = libm::log2(ratio).round().clamp(1.0, MAX_EVAL_LOG2);
    1 << (exp as u32)
}

/// The initial `s`: configured or `d / 2`, clamped to `[2, d]`.
fn initial_slot_rtts(configured: Option<u32>, d: u32) -> u32 {
    configured.unwrap_or(d / 2).clamp(2, d.max(2))
}

/// §2.1, eq. (1): `cwnd <- cwnd + k / cwnd` per acknowledged packet, i.e. `k`
/// datagrams per window acknowledged: one datagram per `cwnd / k` bytes (the
/// form of Linux's `tcp_cong_avoid_ai(tp, cwnd / k, acked)`). With `k = 1`
/// this is NewReno's RFC 9002 §7.3.3 exactly.
#[derive(Debug, Clone, Copy)]
struct Slope(f64);

impl WindowAdjustment for Slope {
    #[inline]
    fn bytes_for_increase(&self, cwnd: u64) -> u64 {
        // k <= 0 (or NaN, which a validated config cannot produce): no growth.
        // A tiny k gives a huge count, which `as` saturates at u64::MAX.
        // Rounded to nearest by `+ 0.5` and truncation (`f64::round` is a
        // library call on baseline x86_64); exact for k = 1.
        if self.0 > 0.0 {
            ((cwnd as f64 / self.0 + 0.5) as u64).max(1)
        } else {
            u64::MAX
        }
    }
}

impl CongestionController for Guarantee {
    fn on_ack(&mut self, now: Instant, ack: &Ack) {
        // The slot bookkeeping and `k` run on every ACK, also in recovery and
        // while application-limited; the window itself grows as Reno's (§2.1).
        self.track(now, ack);
        self.reno.on_ack(ack, &Slope(self.k));
    }

    fn on_congestion(&mut self, now: Instant, event: &Congestion) {
        // Reno's halving once per round trip, and the timeout analogue
        // (persistent congestion: RFC 9002's minimum window of 2 datagrams,
        // where the paper's Reno drops to 1 packet), then slow start again.
        self.reno.on_congestion(now, event);
    }

    fn on_recovery_end(&mut self, _now: Instant) {
        self.reno.end_recovery();
    }

    fn on_mtu_update(&mut self, max_datagram_size: u16) {
        self.reno.on_mtu_update(max_datagram_size);
        let (s, mss) = (self.slot_rtts, self.reno.mss());
        if let Some(slots) = self.slots.as_mut() {
            slots.prime(s, mss);
        }
    }

    fn window(&self) -> u64 {
        self.reno.window()
    }

    fn initial_window(&self) -> u64 {
        initial_window(self.reno.mss())
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            cwnd_bytes: self.window(),
            ssthresh_bytes: self.reno.ssthresh(),
            phase: self.reno.phase(),
            state: AlgorithmState::Guarantee {
                k: self.k,
                slot_rtts: self.slot_rtts,
                eval_rtts: self.eval_rtts,
                goal_bytes_per_sec: self.slots.map_or(self.bw, |s| s.goal),
                control_slot: self.slots.map_or(1, |s| s.index),
                congested: self.slots.is_some_and(|s| s.congested),
                available_bytes_per_sec: self.available.unwrap_or(0.0),
            },
        }
    }

    fn clone_box(&self) -> Box<dyn CongestionController> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bandwidth::SharedBandwidth;
    use crate::controller::{CongestionKind, Phase, minimum_window};
    use crate::testutil::*;

    const MS: Duration = Duration::from_millis(1);

    /// The `AlgorithmState::Guarantee` fields of a snapshot.
    #[derive(Debug, PartialEq)]
    struct State {
        k: f64,
        slot_rtts: u32,
        eval_rtts: u32,
        goal: f64,
        control_slot: u32,
        congested: bool,
        available: f64,
    }

    fn state(cc: &Guarantee) -> State {
        match cc.snapshot().state {
            AlgorithmState::Guarantee {
                k,
                slot_rtts,
                eval_rtts,
                goal_bytes_per_sec,
                control_slot,
                congested,
                available_bytes_per_sec,
            } => State {
                k,
                slot_rtts,
                eval_rtts,
                goal: goal_bytes_per_sec,
                control_slot,
                congested,
                available: available_bytes_per_sec,
            },
            other => panic!("not a guarantee snapshot: {other:?}"),
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[track_caller]
    fn assert_close(a: f64, b: f64) {
        assert!(close(a, b), "{a} != {b}");
    }

    fn config(target_bytes_per_sec: u64, eval: EvalSlot, slot: Option<u32>) -> GuaranteeConfig {
        GuaranteeConfig {
            eval,
            slot_rtts: slot,
            ..GuaranteeConfig::new(Rate::from_bytes_per_sec(target_bytes_per_sec))
        }
    }

    fn harness(config: GuaranteeConfig, bw: Option<&SharedBandwidth>) -> Harness<Guarantee> {
        let source = bw.map(|b| Arc::new(b.clone()) as Arc<dyn BandwidthSource>);
        Harness::new(Guarantee::new(config, MSS, source), RTT)
    }

    /// Acknowledge `bytes` at `t0 + ms` (sent one RTT earlier; srtt = min RTT = 20 ms).
    fn ack_at(h: &mut Harness<Guarantee>, t0: Instant, ms: u64, bytes: u64) {
        h.now = t0 + Duration::from_millis(ms);
        h.ack(bytes);
    }

    /// Bytes per second as SharedBandwidth's bits per second.
    fn bits(bytes_per_sec: u64) -> u64 {
        bytes_per_sec * 8
    }

    // ---- Reno base -------------------------------------------------------

    #[test]
    fn slow_start_is_reno() {
        let mut h = harness(config(1000, EvalSlot::Rtts(32), None), None);
        assert_eq!(h.cc.window(), 12_000);
        h.round();
        assert_eq!(h.cc.window(), 24_000);
        h.round();
        assert_eq!(h.cc.window(), 48_000);
        assert_eq!(h.cc.snapshot().phase, Phase::SlowStart);
        assert_eq!(h.cc.snapshot().ssthresh_bytes, None);
    }

    #[test]
    fn loss_halves_once_per_round_trip() {
        let mut h = harness(config(1000, EvalSlot::Rtts(32), None), None);
        h.round();
        h.round();
        let before = h.cc.window(); // 48_000
        let sent = h.now - RTT / 2;
        for _ in 0..3 {
            h.lose(sent, CongestionKind::Loss);
        }
        assert_eq!(h.cc.window(), before / 2);
        assert_eq!(h.cc.snapshot().ssthresh_bytes, Some(before / 2));
        assert_eq!(h.cc.snapshot().phase, Phase::Recovery);
        h.ack_sent_at(sent, MSS); // sent before the reduction: no growth
        assert_eq!(h.cc.window(), before / 2);
        // Recovery ends with the ACK of a packet sent after it began; that ACK
        // counts towards growth: with k = 1, one mss per 24_000 bytes acked,
        // so the 20th such ACK grows the window to 25_200.
        h.advance(RTT + MS);
        h.ack(MSS);
        assert_eq!(h.cc.snapshot().phase, Phase::CongestionAvoidance);
        assert_eq!(h.cc.k(), 1.0);
        for _ in 0..18 {
            h.ack(MSS);
        }
        assert_eq!(h.cc.window(), 24_000);
        h.ack(MSS);
        assert_eq!(h.cc.window(), 25_200);
        h.lose(h.now - RTT / 4, CongestionKind::Loss);
        assert_eq!(h.cc.window(), 12_600);
        // ECN reduces like loss.
        h.advance(RTT);
        h.lose(h.now, CongestionKind::Ecn);
        assert_eq!(h.cc.window(), 6_300);
    }

    #[test]
    fn congestion_avoidance_at_k_min_is_reno() {
        let mut h = harness(config(1000, EvalSlot::Rtts(32), None), None);
        h.round();
        h.lose(h.now - RTT / 2, CongestionKind::Loss); // cwnd = ssthresh = 12_000
        assert_eq!(h.cc.window(), 12_000);
        h.round(); // acks of the flight sent before the reduction: no growth
        assert_eq!(h.cc.window(), 12_000);
        // 10 acks of 1200 bytes: one window acknowledged, one mss more
        // (eq. (1) with k = 1, counted as RFC 9002 §7.3.3 counts it).
        h.round();
        assert_eq!(h.cc.k(), 1.0);
        assert_eq!(h.cc.window(), 13_200);
        assert_eq!(h.cc.snapshot().phase, Phase::CongestionAvoidance);
    }

    #[test]
    fn persistent_congestion_collapses_to_minimum_window_and_slow_starts() {
        let mut h = harness(config(1000, EvalSlot::Rtts(32), None), None);
        h.round();
        h.round();
        h.lose(h.now - RTT, CongestionKind::PersistentCongestion);
        assert_eq!(h.cc.window(), minimum_window(MSS));
        assert_eq!(h.cc.snapshot().ssthresh_bytes, Some(24_000));
        assert_eq!(h.cc.snapshot().phase, Phase::SlowStart);
        h.flight.clear();
        h.advance(RTT);
        h.round();
        assert_eq!(h.cc.window(), 4 * MSS);
    }

    // ---- the slope k -----------------------------------------------------

    #[test]
    fn rtts_elapsed_steps_like_the_division() {
        // Irregular ACK gaps, small and large, against (now - start) / srtt.
        let t0 = Instant::now();
        for srtt_us in [1u64, 7, 20_000, 123_457] {
            let srtt = Duration::from_micros(srtt_us);
            let mut slots = Slots::new(t0, srtt, 1.0);
            let mut now = t0;
            let mut x = 12345u64;
            for _ in 0..2000 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let gap = match x >> 60 {
                    0 => srtt * 20,
                    1..=3 => srtt + Duration::from_nanos(x % 1000),
                    _ => Duration::from_nanos((x >> 20) % (srtt_us * 400 + 1)),
                };
                now += gap;
                let want = nanos(now - t0) / nanos(srtt);
                assert_eq!(
                    slots.rtts_elapsed(nanos(now - t0)),
                    want,
                    "srtt {srtt:?} at {:?}",
                    now - t0
                );
            }
        }
    }

    #[test]
    fn k_bw_closed_form() {
        // m = 8 - 2 - 1 = 5: 2 * (100 - 5*10 - 20) / (5*6) = 60 / 30.
        assert_eq!(Guarantee::k_bw(100.0, 8.0, 2.0, 10.0, 20.0), 2.0);
        // m = 16 - 0 - 1 = 15: 2 * (2000 - 15*19 - 10) / (15*16) = 3410 / 240.
        assert_close(Guarantee::k_bw(2000.0, 16.0, 0.0, 19.0, 10.0), 3410.0 / 240.0);
        // m = 1 is the formula itself: 2 * (40 - 10 - 1) / 2 = 29.
        assert_eq!(Guarantee::k_bw(40.0, 2.0, 0.0, 10.0, 1.0), 29.0);
        // m <= 0 is defined as m = 1: missing - cwnd = (100 - 60) - 10.
        assert_eq!(Guarantee::k_bw(100.0, 8.0, 7.0, 10.0, 60.0), 30.0);
        assert_eq!(Guarantee::k_bw(100.0, 8.0, 9.0, 10.0, 60.0), 30.0);
        // Ahead of the goal: negative.
        assert!(Guarantee::k_bw(10.0, 8.0, 2.0, 10.0, 20.0) < 0.0);
    }

    #[test]
    fn controller_uses_k_bw_including_the_slot_end_rule() {
        // goal = 7.5e6 B/s * 20 ms * 8 / 1200 B = 1000 packets per control slot.
        let mut h = harness(config(7_500_000, EvalSlot::Rtts(16), Some(8)), None);
        let t0 = h.now;
        ack_at(&mut h, t0, 20, MSS); // slot starts; n = 0, m = 7, cwnd 10, acked 1
        assert_close(h.cc.k(), 2.0 * (1000.0 - 7.0 * 10.0 - 1.0) / (7.0 * 8.0));
        assert_close(h.cc.k(), Guarantee::k_bw(1000.0, 8.0, 0.0, 10.0, 1.0));
        ack_at(&mut h, t0, 20 + 45, MSS); // n = 2, m = 5, cwnd 11, acked 2
        assert_close(h.cc.k(), 2.0 * (1000.0 - 5.0 * 11.0 - 2.0) / (5.0 * 6.0));
        ack_at(&mut h, t0, 20 + 150, MSS); // n = 7, m = 0 -> 1: 1000 - 3 - 12
        assert_close(h.cc.k(), 985.0);
        assert_close(h.cc.k(), Guarantee::k_bw(1000.0, 8.0, 7.0, 12.0, 3.0));
        assert_eq!(state(&h.cc).control_slot, 1);
    }

    #[test]
    fn k_stays_at_k_min_when_the_goal_is_met_easily() {
        let bw = SharedBandwidth::new();
        bw.set_available(1_000_000_000);
        let mut h = harness(config(1000, EvalSlot::Rtts(32), None), Some(&bw));
        for _ in 0..4 {
            h.round();
            assert_eq!(h.cc.k(), 1.0);
        }
        h.lose(h.now - RTT / 2, CongestionKind::Loss);
        for _ in 0..40 {
            h.round();
            assert_eq!(h.cc.k(), 1.0);
        }
        let st = state(&h.cc);
        assert_eq!(st.available, 125_000_000.0);
        assert!(!st.congested);
    }

    #[test]
    fn k_rises_above_k_min_when_behind() {
        let bw = SharedBandwidth::new();
        bw.set_available(1_000_000_000); // A*srtt = 2083.3 packets: no clamp
        let mut h = harness(config(7_500_000, EvalSlot::Rtts(32), None), Some(&bw));
        h.round();
        // Last of the 10 ACKs: s = 16, goal = 7.5e6*0.02*16/1200 = 2000 packets,
        // n = 0, m = 15, cwnd 19 before its growth, acked 10.
        assert_close(h.cc.k(), 2.0 * (2000.0 - 15.0 * 19.0 - 10.0) / (15.0 * 16.0));
        assert!(h.cc.k() > 14.0);
        // In congestion avoidance the window grows k packets per RTT, not one.
        h.lose(h.now - RTT / 2, CongestionKind::Loss);
        h.round();
        let w = h.cc.window();
        h.round();
        assert!(h.cc.window() > w + 5 * MSS, "{} -> {}", w, h.cc.window());
    }

    #[test]
    fn k_is_clamped_by_uncongested_k_max() {
        // A*srtt = 1.5e6 B/s * 20 ms / 1200 B = 25 packets; k_max = 25 - 2*10 = 5.
        let bw = SharedBandwidth::new();
        bw.set_available(bits(1_500_000));
        let mut h = harness(config(7_500_000, EvalSlot::Rtts(32), None), Some(&bw));
        let t0 = h.now;
        ack_at(&mut h, t0, 20, MSS);
        let k_bw = Guarantee::k_bw(2000.0, 16.0, 0.0, 10.0, 1.0);
        assert!(k_bw > 15.0);
        assert_close(h.cc.k(), 5.0);
        assert_eq!(state(&h.cc).available, 1_500_000.0);
        // kmax_cwnd = 1 (eqs. (4)/(5) as printed): 25 - 10 = 15, still below k_bw.
        let mut c = config(7_500_000, EvalSlot::Rtts(32), None);
        c.kmax_cwnd = 1.0;
        let mut h = harness(c, Some(&bw));
        ack_at(&mut h, t0, 20, MSS);
        assert_close(h.cc.k(), 15.0);
        // k_max below k_min: k = k_min.
        bw.set_available(bits(1_200_000)); // 20 - 2*10 = 0
        let mut h = harness(config(7_500_000, EvalSlot::Rtts(32), None), Some(&bw));
        ack_at(&mut h, t0, 20, MSS);
        assert_eq!(h.cc.k(), 1.0);
    }

    /// Slot 1 (40 ms) misses; at the first ACK of slot 2 the congested k_max applies.
    fn congested_k(physical_source: Option<u64>, physical_config: Option<u64>) -> (f64, State) {
        let bw = SharedBandwidth::new();
        if let Some(p) = physical_source {
            bw.set_physical(bits(p));
        }
        let mut c = config(1_200_000, EvalSlot::Rtts(8), Some(2));
        c.physical = physical_config.map(Rate::from_bytes_per_sec);
        let mut h = harness(c, Some(&bw));
        let t0 = h.now;
        bw.set_available(bits(1_200_000));
        ack_at(&mut h, t0, 20, MSS);
        // Uncongested: k_max = 1.2e6*0.02/1200 - 2*10 = 0, k_bw = 29: k = k_min.
        assert_eq!(h.cc.k(), 1.0);
        bw.set_available(bits(2_400_000));
        ack_at(&mut h, t0, 30, MSS);
        bw.set_available(bits(2_400_000));
        ack_at(&mut h, t0, 60, MSS);
        (h.cc.k(), state(&h.cc))
    }

    #[test]
    fn k_is_clamped_by_congested_k_max() {
        // Slot 1 = [20, 60) ms: 2400 B / 40 ms = 60 kB/s < g_1 = 1.2 MB/s: missed.
        // g_2 = 1.2e6 + 1.2e6 - 6e4 = 2.34e6. avgA_1 is time-weighted:
        // (1.2e6 * 10 ms + 2.4e6 * 30 ms) / 40 ms = 2.1e6 (the plain mean would be 1.8e6).
        // k_max = (2.4e6 + 2.34e6 - 2.1e6) * 0.02 / 1200 - 2 * 12 = 44 - 24 = 20;
        // k_bw = 2 * (78 - 1*12 - 1) / 2 = 65.
        let (k, st) = congested_k(None, None);
        assert!(st.congested);
        assert_eq!(st.control_slot, 2);
        assert_close(st.goal, 2_340_000.0);
        assert_close(k, 20.0);
        // P = 1.8e6 B/s < 2.64e6: k_max = 1.8e6 * 0.02 / 1200 - 24 = 6,
        // from the source or from the configuration.
        assert_close(congested_k(Some(1_800_000), None).0, 6.0);
        assert_close(congested_k(None, Some(1_800_000)).0, 6.0);
        assert_close(congested_k(Some(1_800_000), Some(100_000_000)).0, 6.0);
    }

    #[test]
    fn without_a_there_is_no_uncongested_k_max_and_p_bounds_the_congested_one() {
        let mut c = config(1_200_000, EvalSlot::Rtts(8), Some(2));
        c.physical = Some(Rate::from_bytes_per_sec(1_800_000));
        let mut h = harness(c, None);
        let t0 = h.now;
        ack_at(&mut h, t0, 20, MSS);
        assert_close(h.cc.k(), 29.0); // k_bw unclamped
        assert_eq!(state(&h.cc).available, 0.0);
        ack_at(&mut h, t0, 40, MSS);
        ack_at(&mut h, t0, 60, MSS); // slot 1 missed: k_max = P*srtt - 2*cwnd = 30 - 24
        assert!(state(&h.cc).congested);
        assert_close(h.cc.k(), 6.0);
    }

    // ---- goals and slots -------------------------------------------------

    #[test]
    fn deficit_carries_to_the_next_control_slot_and_is_discarded_at_the_evaluation_end() {
        // d = 4, s = 2: two control slots of 40 ms; one 1200 B ACK per 20 ms.
        let mut h = harness(config(1_200_000, EvalSlot::Rtts(4), Some(2)), None);
        let t0 = h.now;
        ack_at(&mut h, t0, 20, MSS);
        ack_at(&mut h, t0, 40, MSS);
        let st = state(&h.cc);
        assert_eq!((st.control_slot, st.goal, st.congested), (1, 1_200_000.0, false));
        ack_at(&mut h, t0, 60, MSS); // tput_1 = 2400 B / 40 ms = 60 kB/s
        let st = state(&h.cc);
        assert_eq!(st.control_slot, 2);
        assert_close(st.goal, 1_200_000.0 + (1_200_000.0 - 60_000.0));
        assert!(st.congested);
        ack_at(&mut h, t0, 80, MSS);
        ack_at(&mut h, t0, 100, MSS); // slot 2 ends, and with it the evaluation slot
        let st = state(&h.cc);
        assert_eq!((st.control_slot, st.goal, st.congested), (1, 1_200_000.0, false));
        assert_close(h.cc.last_eval_throughput().unwrap(), 4800.0 / 0.08);
        assert_eq!(h.cc.evaluations(), (1, 0));
        assert_eq!(h.cc.slot_rtts(), Some(2)); // would halve, but 2 is the floor

        // A surplus carries too: g_2 = 1000 + (1000 - 60000) < 0.
        let mut h = harness(config(1000, EvalSlot::Rtts(4), Some(2)), None);
        for ms in [20, 40, 60] {
            ack_at(&mut h, t0, ms, MSS);
        }
        let st = state(&h.cc);
        assert_eq!(st.control_slot, 2);
        assert_close(st.goal, -58_000.0);
        assert!(!st.congested);
        assert_eq!(h.cc.k(), 1.0);
    }

    // ---- aggregate -------------------------------------------------------

    #[test]
    fn a_lone_aggregate_member_behaves_as_the_paper_controller() {
        let bw = SharedBandwidth::new();
        bw.set_available(bits(2_000_000));
        let group = Aggregate::new();
        let c = config(1_200_000, EvalSlot::Rtts(8), Some(2));
        let mut alone = harness(c.clone(), Some(&bw));
        let mut member = harness(c, Some(&bw));
        member.cc = member.cc.with_aggregate(&group);
        member.now = alone.now;
        for h in [&mut alone, &mut member] {
            // Slow start to ~80 packets, then congestion avoidance with a loss
            // every 6 rounds: control and evaluation slots close, goals carry.
            for r in 0..40 {
                h.round();
                if r % 6 == 2 {
                    h.lose_oldest();
                }
            }
        }
        assert_eq!(member.cc.snapshot(), alone.cc.snapshot());
        assert_eq!(member.cc.k(), alone.cc.k());
        assert_eq!(member.cc.evaluations(), alone.cc.evaluations());
        assert!(alone.cc.evaluations().0 >= 2, "{:?}", alone.cc.evaluations());
    }

    #[test]
    fn aggregate_members_split_the_headroom_and_pool_their_carry() {
        // A = 1.5e6 B/s for the group. Member b reports a rate of 10 packets
        // per 20 ms = 600 kB/s; a (same target, same rate) then gets
        // A_a = 600e3 + 0.5 * (1.5e6 - 1.2e6) = 750 kB/s instead of 1.5e6:
        // k_max = 750e3 * 0.02 / 1200 - 2 * 10 = -7.5 -> k = k_min (alone: 5).
        let bw = SharedBandwidth::new();
        bw.set_available(bits(1_500_000));
        let group = Aggregate::new();
        let c = config(7_500_000, EvalSlot::Rtts(32), None);
        let mut a = harness(c.clone(), Some(&bw));
        a.cc = a.cc.with_aggregate(&group);
        let mut b = harness(c, Some(&bw));
        b.cc = b.cc.with_aggregate(&group);
        b.now = a.now;
        let t0 = a.now;
        ack_at(&mut b, t0, 20, MSS);
        ack_at(&mut a, t0, 20, MSS);
        assert_eq!(state(&a.cc).available, 750_000.0);
        assert_eq!(a.cc.k(), 1.0);
        drop(b);
        ack_at(&mut a, t0, 21, MSS);
        assert_eq!(state(&a.cc).available, 1_500_000.0);
        // Alone again: k_max = 25 - 2 * 11 (slow start grew cwnd by one packet).
        assert_close(a.cc.k(), 3.0);
    }

    #[test]
    fn a_member_ahead_lowers_the_goal_of_one_behind() {
        // d = 4, s = 2 as in the carry test (control slots of 40 ms). Member b
        // delivers 120 kB in its first slot (ahead), member a 2400 B (behind).
        let group = Aggregate::new();
        let c = config(1_200_000, EvalSlot::Rtts(4), Some(2));
        let mut a = harness(c.clone(), None);
        a.cc = a.cc.with_aggregate(&group);
        let mut b = harness(c, None);
        b.cc = b.cc.with_aggregate(&group);
        b.now = a.now;
        let t0 = a.now;
        ack_at(&mut b, t0, 20, MSS);
        ack_at(&mut b, t0, 40, 120_000 - MSS);
        ack_at(&mut b, t0, 60, MSS); // tput_b = 120 kB / 40 ms = 3e6: carry -1.8e6
        assert_close(state(&b.cc).goal, 1_200_000.0 - 0.5 * 1_800_000.0);
        for ms in [20, 40, 60] {
            ack_at(&mut a, t0, ms, MSS); // tput_a = 60e3: carry +1.14e6
        }
        // Pooled carry: -1.8e6 + 1.14e6 = -0.66e6, half of it each.
        assert_close(state(&a.cc).goal, 1_200_000.0 - 330_000.0);
        // Alone, a would chase 2.34e6.
    }

    #[test]
    fn a_long_gap_closes_one_slot_over_the_whole_gap() {
        let mut h = harness(config(1_200_000, EvalSlot::Rtts(8), Some(2)), None);
        let t0 = h.now;
        ack_at(&mut h, t0, 20, MSS);
        ack_at(&mut h, t0, 220, MSS); // five slots' worth of silence
        let st = state(&h.cc);
        assert_eq!(st.control_slot, 2);
        // tput_1 = 1200 B / 200 ms = 6 kB/s.
        assert_close(st.goal, 2.0 * 1_200_000.0 - 6_000.0);
        ack_at(&mut h, t0, 240, MSS);
        assert_eq!(state(&h.cc).control_slot, 2); // the new slot started at 220 ms
    }

    #[test]
    fn s_halves_when_congested_and_missed() {
        // d = 8, s = 4: two control slots of 80 ms; 60 kB/s against 1.2 MB/s.
        let mut h = harness(config(1_200_000, EvalSlot::Rtts(8), Some(4)), None);
        let t0 = h.now;
        for ms in (20..=340).step_by(20) {
            ack_at(&mut h, t0, ms, MSS);
            let expected = if ms < 180 { 4 } else { 2 };
            assert_eq!(h.cc.slot_rtts(), Some(expected), "at {ms} ms");
            assert_eq!(state(&h.cc).slot_rtts, expected);
        }
        // The second evaluation slot (4 x 40 ms) ended at 340 ms: s stays at 2.
        assert_eq!(h.cc.evaluations(), (2, 0));

        // s = d: the single control slot missing its goal counts as congested.
        let mut h = harness(config(1_200_000, EvalSlot::Rtts(8), Some(8)), None);
        for ms in (20..=180).step_by(20) {
            ack_at(&mut h, t0, ms, MSS);
        }
        assert_eq!(h.cc.evaluations(), (1, 0));
        assert_eq!(h.cc.slot_rtts(), Some(4));
    }

    #[test]
    fn s_doubles_when_uncongested_met_and_fast_enough() {
        // d = 8, s = 2; 60 kB/s against 1 kB/s; cwnd/srtt >= 12000 B / 20 ms.
        let mut h = harness(config(1000, EvalSlot::Rtts(8), Some(2)), None);
        let t0 = h.now;
        for ms in (20..=500).step_by(20) {
            ack_at(&mut h, t0, ms, MSS);
            let expected = match ms {
                ..180 => 2,    // first evaluation slot: 4 x 40 ms
                180..340 => 4, // second: 2 x 80 ms
                _ => 8,        // third: 1 x 160 ms, ends at 500 ms; 8 = d is the ceiling
            };
            assert_eq!(h.cc.slot_rtts(), Some(expected), "at {ms} ms");
        }
        assert_eq!(h.cc.evaluations(), (3, 3));
        assert_eq!(state(&h.cc).eval_rtts, 8);
    }

    #[test]
    fn s_stays_otherwise() {
        // d = 16, s = 4: four control slots of 80 ms, evaluation slot [20, 340) ms.
        let t0 = Instant::now();
        // (a) Uncongested and met, but cwnd/srtt = 12000 B / 20 ms = 600 kB/s < 900 kB/s.
        // ACK frames of 24 000 B every 20 ms: 1.2 MB/s; app-limited, so cwnd stays.
        let mut h = harness(config(900_000, EvalSlot::Rtts(16), Some(4)), None);
        h.app_limited = true;
        for ms in (20..=340).step_by(20) {
            ack_at(&mut h, t0, ms, 24_000);
        }
        assert_eq!(h.cc.window(), 12_000);
        assert_eq!(h.cc.evaluations(), (1, 1));
        assert!(!state(&h.cc).congested);
        assert_eq!(h.cc.slot_rtts(), Some(4));
        // Same with target 600 kB/s = cwnd/srtt: it doubles (the boundary case).
        let mut h = harness(config(600_000, EvalSlot::Rtts(16), Some(4)), None);
        h.app_limited = true;
        for ms in (20..=340).step_by(20) {
            ack_at(&mut h, t0, ms, 24_000);
        }
        assert_eq!(h.cc.slot_rtts(), Some(8));

        // (b) Congested (slot 1: 4800 B / 80 ms = 60 kB/s < 600 kB/s) but met:
        // (4800 + 12 * 24000) B / 320 ms = 915 kB/s >= 600 kB/s.
        let mut h = harness(config(600_000, EvalSlot::Rtts(16), Some(4)), None);
        h.app_limited = true;
        for ms in (20..=340).step_by(20) {
            ack_at(&mut h, t0, ms, if ms < 100 { MSS } else { 24_000 });
            if ms == 100 {
                assert!(state(&h.cc).congested);
            }
        }
        assert_close(h.cc.last_eval_throughput().unwrap(), 915_000.0);
        assert_eq!(h.cc.evaluations(), (1, 1));
        assert_eq!(h.cc.slot_rtts(), Some(4));
    }

    #[test]
    fn eval_time_is_rounded_to_a_power_of_two_in_log_scale() {
        let cases = [
            (1000, None, 64, 32),  // 50 -> 2^round(5.64) = 64
            (928, None, 64, 32),   // 46.4 -> 2^round(5.54) = 64 (linear rounding: 32)
            (900, None, 32, 16),   // 45 -> 2^round(5.49) = 32
            (640, None, 32, 16),   // exactly 32
            (10, None, 2, 2),      // 0.5 -> at least 2
            (100, Some(16), 4, 4), // 5 -> 4; the configured s is clamped to d
        ];
        for (ms, slot, d, s) in cases {
            let mut h = harness(config(1000, EvalSlot::Time(Duration::from_millis(ms)), slot), None);
            assert_eq!((h.cc.eval_rtts(), h.cc.slot_rtts()), (None, None));
            assert_eq!(state(&h.cc).eval_rtts, 0);
            h.advance(RTT);
            h.ack(MSS);
            assert_eq!(h.cc.eval_rtts(), Some(d), "{ms} ms");
            assert_eq!(h.cc.slot_rtts(), Some(s), "{ms} ms");
            // d is fixed once: a smaller min RTT later does not change it.
            h.rtt = RTT / 2;
            h.advance(RTT);
            h.ack(MSS);
            assert_eq!(h.cc.eval_rtts(), Some(d));
        }
    }

    #[test]
    fn survives_odd_inputs() {
        // Zero and Duration::MAX RTTs reach the slot-end test and n_j; with an
        // oracle that reads 0 and u64::MAX / 2 bits per second in turn.
        for a in [0, u64::MAX / 2] {
            let bw = SharedBandwidth::new();
            bw.set_available(a);
            bw.set_physical(100_000_000);
            let mut cc = Guarantee::new(config(20_000_000, EvalSlot::Rtts(4), Some(2)), MSS, Some(Arc::new(bw)));
            crate::testutil::fuzz_odd_inputs(&mut cc, |cc| assert!(cc.k().is_finite() && cc.k() >= 1.0));
        }
    }

    #[test]
    fn window_is_finite_and_at_least_the_minimum() {
        let bw = SharedBandwidth::new();
        bw.set_available(u64::MAX / 2);
        let mut h = harness(config(u64::MAX / 16, EvalSlot::Rtts(2), None), Some(&bw));
        h.round();
        h.lose(h.now - RTT / 2, CongestionKind::Loss);
        for _ in 0..20 {
            h.advance(RTT);
            h.ack(MSS);
        }
        assert!(h.cc.k().is_finite());
        assert!(h.cc.window() >= minimum_window(MSS));
        assert_eq!(h.cc.snapshot().cwnd_bytes, h.cc.window());
        h.lose(h.now, CongestionKind::PersistentCongestion);
        assert_eq!(h.cc.window(), minimum_window(MSS));
    }
}
