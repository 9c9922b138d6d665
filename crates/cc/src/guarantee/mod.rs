//! The throughput-guarantee controller of K. Yamanegi, G. Hasegawa, M. Murata,
//! "Congestion control mechanism of TCP for achieving predictable throughput"
//! (スループット保証を実現する TCP の輻輳制御方式の提案と評価): TCP Reno whose
//! congestion-avoidance slope `k`
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

use crate::aggregate::{Aggregate, Membership};
use crate::bandwidth::BandwidthSource;
use crate::controller::{Ack, AlgorithmState, Congestion, CongestionController, Snapshot, init_window};
use crate::eval_slot::EvalSlot;
use crate::reno::{Growth, RenoCore, WindowAdjustment};
use crate::units::Rate;

mod config;
mod floor;
mod overbooked;
mod slots;
pub use config::{AbwSource, GuaranteeConfig, GuaranteeMode, QUIC_OVERHEAD};
use floor::Floor;
use slots::{MAX_EVAL_LOG2, OwnLoss, Slots};

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
///   minimum window), once per round trip (RFC 9002 §7.3.2); in the default
///   mode not below the floor either (see "Floor" below).
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
///
/// # Floor (the default mode, [`GuaranteeMode::Floor`])
///
/// The paper's rule "on loss, behave as Reno" loses the time the window
/// spends below what the target needs after each halving; against many flows
/// on a small DropTail queue that time decides the slot (the paper
/// the trace). The default mode keeps every rule above and changes two:
///
/// - **Loss response.** A loss or ECN mark sets `ssthresh = max(cwnd / 2,
///   floor)` and `cwnd = max(cwnd / 2, min(cwnd, floor))` with
///   `floor = f * bw * srtt` (the latest smoothed RTT): never below the
///   floor, never raised by a loss. Persistent congestion still collapses
///   the window (RFC 9002 §7.6.2); `ssthresh` keeps the floor.
/// - **The target in goodput.** `bw` is the configured target scaled by
///   `mss / (mss - overhead)` ([`GuaranteeConfig::overhead`]).
///
/// `f` is adapted once per evaluation slot from the slot's own throughput `x`
/// toward `(1 + margin) * bw`: after a miss `f <- max(f * (1 + margin) * bw /
/// x, 1)`, after a met slot `f <- max(f * sqrt((1 + margin) * bw / x), f -
/// 0.02)`, always within `[0.5, 2]`. After 3 consecutive missed evaluation
/// slots the breaker opens: no floor, `k = k_min`, and
/// [`infeasible`](Self::infeasible) is true; it retries after 8 evaluation
/// slots, doubling the wait after each failed retry up to 64; a met slot
/// clears it. The floor also knows its path (see `floor.rs`, "Knowing the
/// path"): a slot losing more than 15 % of the flow's own packets never
/// raises `f` and counts twice toward the breaker, a retry's floor starts
/// low and ramps (with `k = k_min` while it does), a retry comes early when
/// the path's loss rate as Reno halves, the floor window is at most
/// `P * min_rtt`, a target above 0.6 of `P` is infeasible at
/// once (no floor, plain Reno, until `P` grows) and a slot that saw it so
/// is not judged, ECN congestion events count toward a slot's loss rate as
/// one datagram each, and while the floor binds
/// the controller paces at `max(cwnd, floor) / srtt`
/// ([`pacing_rate`](CongestionController::pacing_rate)). In an [`Aggregate`] the members' floors together claim at most
/// [`Aggregate::FLOOR_SHARE`] of `P`. An engaged slot losing more than 8 %
/// of the flow's own packets is evidence of an overbooked path: the breaker
/// opens at once, for an off period that doubles per such trip and that a
/// met retry does not shorten (see `overbooked.rs`).
#[derive(Debug, Clone)]
pub struct Guarantee {
    config: GuaranteeConfig,
    bandwidth: Option<Arc<dyn BandwidthSource>>,
    /// Seat in an [`Aggregate`]; shared by clones, leaves when the last one drops.
    member: Option<Arc<Membership>>,
    /// Target `bw` in acknowledged bytes per second: the configured target
    /// scaled by `mss / (mss - overhead)`.
    bw: f64,
    /// The loss floor and breaker (floor mode only).
    floor: Option<Floor>,
    /// The latest smoothed RTT, for the floor window.
    srtt: Duration,
    /// The floor rate as of the latest ACK, bytes per second (0 in paper mode).
    floor_rate: f64,
    /// The path's bandwidth-delay product `P * min_rtt` as of the latest
    /// ACK, bytes; `None` while `P` or the minimum RTT is unknown.
    bdp: Option<u64>,
    /// The flow's own losses, for the floor's loss rules (floor mode).
    losses: OwnLoss,
    /// Window, threshold and recovery: Reno's, shared with [`NewReno`](crate::NewReno).
    reno: RenoCore,
    /// Current slope, packets per RTT.
    k: f64,
    /// `k_bw` and `k_max` as of the latest ACK (for the snapshot; `k_max`
    /// infinite when unlimited).
    k_bw: f64,
    k_max: f64,
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

impl Guarantee {
    /// A guarantee controller reading `A` and `P` from `bandwidth`.
    pub fn new(config: GuaranteeConfig, max_datagram_size: u16, bandwidth: Option<Arc<dyn BandwidthSource>>) -> Self {
        let mss = u64::from(max_datagram_size);
        let (eval_rtts, slot_rtts) = match config.eval {
            EvalSlot::Rtts(d) => {
                let d = d.max(2);
                (d, initial_slot_rtts(config.slot_rtts, d))
            }
            EvalSlot::Time(_) => (0, 0),
        };
        let floor = (config.mode == GuaranteeMode::Floor).then(|| Floor::new(config.margin));
        Self {
            bw: acked_target(&config, mss),
            floor,
            srtt: Duration::ZERO,
            floor_rate: 0.0,
            bdp: None,
            losses: OwnLoss::default(),
            k: config.k_min,
            k_bw: 0.0,
            k_max: f64::INFINITY,
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
        self.member = Some(Arc::new(group.join(self.config.target.bytes_per_sec())));
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

    /// Whether the controller has declared its target infeasible: in floor
    /// mode, the breaker tripped (consecutive evaluation slots missed the
    /// target with the floor engaged) and no slot has met it since. Always
    /// `false` in paper mode.
    pub fn infeasible(&self) -> bool {
        self.floor.is_some_and(|f| f.infeasible())
    }

    /// How often the breaker has tripped (0 in paper mode).
    pub fn breaker_trips(&self) -> u64 {
        self.floor.map_or(0, |f| f.trips())
    }

    /// The floor factor `f` (`None` in paper mode).
    pub fn floor_factor(&self) -> Option<f64> {
        self.floor.map(|f| f.factor())
    }

    /// The window a loss cannot cut below now, bytes: `f * bw * srtt`,
    /// within an [`Aggregate`]'s admission cap (as of the latest ACK); 0 in
    /// paper mode, while the breaker is open, or before an RTT is known.
    pub fn floor_window(&self) -> u64 {
        if self.floor.is_none() {
            return 0;
        }
        let window = Floor::window(self.floor_rate, self.srtt);
        // Never more than the path's bandwidth-delay product `P * min_rtt`:
        // a floor above it could only stand in the queue.
        match self.bdp {
            Some(bdp) => window.min(bdp),
            None => window,
        }
    }

    /// The pacing rate while the floor binds (see `floor.rs`, "Pacing at
    /// the floor"), bytes per second: `max(cwnd, floor) / srtt` while
    /// `cwnd < 2 * floor` (the next loss's halving would stop at the floor);
    /// `None` otherwise, in paper mode, and before an RTT is known.
    ///
    /// Measured on the seed-000 dumbbell (100 Mbit/s, 5 ms, 30-packet
    /// DropTail queue, 60 s), 50 Mbit/s against 30 NewReno flows, seeds
    /// 1-3: bottleneck drops 8.4-10.2 % without it, 5.5-5.6 % with it
    /// (2.75 % with NewReno in the seat), success 0.92-0.97 -> 0.98;
    /// targets of 10-40 Mbit/s kept 0.98 at 3.0-4.6 % drops.
    fn floor_pacing_rate(&self) -> Option<u64> {
        let floor = self.floor_window();
        let srtt = self.srtt.as_secs_f64();
        if floor == 0 || srtt <= 0.0 {
            return None;
        }
        let cwnd = self.window();
        if cwnd >= Floor::PACE_BELOW * floor {
            return None;
        }
        let rate = cwnd.max(floor) as f64 / srtt;
        (rate.is_finite() && rate >= 1.0).then_some(rate as u64)
    }

    /// The floor rate `f * bw`, bytes per second, within an [`Aggregate`]'s admission cap.
    fn admitted_floor_rate(&self, now: Instant) -> f64 {
        let Some(floor) = self.floor else { return 0.0 };
        let rate = floor.rate(self.bw);
        match &self.member {
            Some(m) => m.admit_floor(rate, self.physical(now)),
            None => rate,
        }
    }

    /// Slot bookkeeping and the slope for an ACK at `now`. The slot state is
    /// updated in place (it is copied out only when a control slot closes).
    fn track(&mut self, now: Instant, ack: &Ack) {
        let available = self
            .bandwidth
            .as_ref()
            .and_then(|b| b.available(now))
            .map(Rate::bytes_per_sec)
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
        if !ack.rtt.smoothed.is_zero() {
            self.srtt = ack.rtt.smoothed;
        }
        if self.floor.is_some() {
            let p = self.physical(now);
            if let Some(floor) = self.floor.as_mut() {
                floor.set_path(self.bw, p);
            }
            self.floor_rate = self.admitted_floor_rate(now);
            let min_rtt = ack.rtt.min.as_secs_f64();
            self.bdp = (p.is_finite() && min_rtt > 0.0).then_some((p * min_rtt) as u64);
            self.losses.on_ack(ack.bytes);
        }
        let Some(slots) = self.slots.as_mut() else { return };
        slots.acked += ack.bytes;
        slots.eval_acked += ack.bytes;
        let n = slots.rtts_elapsed(nanos(elapsed));
        if let Some(slots) = self.slots.as_ref() {
            let (k, k_bw, k_max) = self.slope(now, slots, n);
            (self.k_bw, self.k_max) = (k_bw, k_max);
            // The breaker open: plain Reno.
            // While a retry's ceiling ramps, the ceiling and not k_bw sets the pace.
            self.k = if self.floor.is_some_and(|f| !f.engaged() || f.ramping(self.bw)) {
                self.config.k_min
            } else {
                k
            };
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
        let report = self.losses.end_evaluation(tput);
        if let Some(floor) = self.floor.as_mut() {
            floor.on_evaluation_end(report, self.bw);
        }
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
    /// Also returns `(k_bw, k_max)` for the snapshot.
    fn slope(&self, now: Instant, slots: &Slots, n: u64) -> (f64, f64, f64) {
        let mss = self.reno.mss() as f64;
        let s = f64::from(self.slot_rtts);
        let cwnd_pkts = self.cwnd() / mss;
        let k_bw = Self::k_bw(slots.goal_pkts, s, n as f64, cwnd_pkts, slots.acked as f64 / mss);
        let k_max = self.k_max(now, slots, slots.srtt_secs, cwnd_pkts);
        (k_bw.min(k_max).max(self.config.k_min), k_bw, k_max)
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
            .map(Rate::bytes_per_sec)
            .filter(|p| p.is_finite() && *p > 0.0)
            .or_else(|| self.config.physical.map(Rate::bytes_per_sec))
            .unwrap_or(f64::INFINITY)
    }
}

/// The target in acknowledged bytes per second: `target * mss / (mss - overhead)`,
/// the payload share taken as at least half a packet.
fn acked_target(config: &GuaranteeConfig, mss: u64) -> f64 {
    let overhead = u64::from(config.overhead_bytes());
    let payload = mss.saturating_sub(overhead).max(mss.div_ceil(2)).max(1);
    config.target.bytes_per_sec() * mss as f64 / payload as f64
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

impl Slope {
    /// One datagram per this many bytes acknowledged at window `cwnd`.
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

impl WindowAdjustment for Slope {
    #[inline]
    fn avoidance(&mut self, _now: Instant, _ack: &Ack, cwnd: u64, _mss: u64) -> Growth<u64> {
        Growth::PerMss(self.bytes_for_increase(cwnd))
    }
}

impl CongestionController for Guarantee {
    fn on_ack(&mut self, now: Instant, ack: &Ack) {
        // The slot bookkeeping and `k` run on every ACK, also in recovery and
        // while application-limited; the window itself grows as Reno's (§2.1).
        self.track(now, ack);
        self.reno.on_ack(now, ack, &mut Slope(self.k));
    }

    fn on_congestion(&mut self, now: Instant, event: &Congestion) {
        // Reno's halving once per round trip, and the timeout analogue
        // (persistent congestion: RFC 9002's minimum window of 2 datagrams,
        // where the paper's Reno drops to 1 packet), then slow start again.
        // In floor mode the halving stops at the floor (see `floor.rs`).
        if self.floor.is_some() {
            self.losses.on_congestion(event, self.reno.mss());
        }
        self.reno.on_congestion_above(now, event, self.floor_window());
    }

    fn on_recovery_end(&mut self, _now: Instant) {
        self.reno.end_recovery();
    }

    fn on_mtu_update(&mut self, max_datagram_size: u16) {
        self.reno.on_mtu_update(max_datagram_size);
        self.bw = acked_target(&self.config, self.reno.mss());
        let (s, mss) = (self.slot_rtts, self.reno.mss());
        if let Some(slots) = self.slots.as_mut() {
            slots.prime(s, mss);
        }
    }

    fn window(&self) -> u64 {
        self.reno.window()
    }

    fn initial_window(&self) -> u64 {
        init_window(self.reno.mss())
    }

    fn pacing_rate(&self) -> Option<u64> {
        self.floor_pacing_rate()
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
                k_bw: self.k_bw,
                k_max: self.k_max.is_finite().then_some(self.k_max),
                floor_bytes: self.floor_window(),
                infeasible: self.infeasible(),
            },
        }
    }

    fn clone_box(&self) -> Box<dyn CongestionController> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests;
