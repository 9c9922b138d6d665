//! The loss floor of the guarantee controller's default mode, and its breaker.
//!
//! # Why the paper's rule misses its target under load
//!
//! The paper keeps Reno's loss response ("on loss, behave as Reno", §2.4) and
//! only steepens the growth after it. Against many Reno flows on a small
//! DropTail queue the flow is halved several times per slot; each halving
//! leaves it below the window its target needs (`bw * srtt`) for a round trip
//! or two, and the slope `k` wins back the window but not that time. Traced at
//! 30 competing NewReno flows and a 10 % target, the window's time-weighted
//! mean sat just under what the target needs and the flow met its target in
//! a few percent of slots (docs/guarantee.md has the trace).
//!
//! # The floor
//!
//! On a loss (or ECN mark) the window falls to
//! `max(cwnd * 0.5, floor)` instead of `cwnd * 0.5`, with
//! `floor = f * bw * srtt` (bytes; `srtt` the latest smoothed RTT). It never
//! *raises* the window on a loss: `cwnd` becomes `min(cwnd, max(cwnd / 2,
//! floor))`, and `ssthresh` becomes `max(cwnd / 2, floor)`, so a window below
//! the floor keeps growing in slow start up to it. Persistent congestion (the
//! RFC 9002 §7.6 analogue of a retransmission timeout) still collapses the
//! window to the minimum (RFC 9002 §7.6.2, RFC 6298 §5.5); only `ssthresh`
//! keeps the floor, so slow start climbs back to it.
//!
//! The factor `f` is adapted once per evaluation slot from the flow's *own*
//! slot throughput `x` (no `A`, no `P`: it behaves the same live and in the
//! simulator), toward a throughput of `(1 + margin) * bw`:
//!
//! - a slot that missed `bw`: `f <- min(max(f * (1 + margin) * bw / x, 1), 2)`
//!   (at least 1: a floor of the whole target window at once);
//! - a slot that met it: `f <- max(f * sqrt((1 + margin) * bw / x), f - 0.02)`,
//!   in `[0.5, 2]`: half the correction, and down by at most 0.02 a slot.
//!
//! The slow way down matters where the target is close to the flow's fair
//! share: there one lucky slot far above the target would otherwise lower
//! the floor enough for the next slot to miss (measured: the success ratio
//! at 10 Mbit/s against 10 NewReno flows on a 100 Mbit/s link rose from
//! 0.94 to 0.99 with it, and its mean rate from 11.5 to 11.8 Mbit/s).
//!
//! # Knowing the path
//!
//! `f` alone is blind to the path: it climbs to its cap after slots that
//! missed *because of the flow's own losses*, and a breaker retry used to
//! re-engage the whole floor at once. Measured on the seed-000 dumbbell
//! (100 Mbit/s, 5 ms, a 30-packet DropTail queue, 60 s, seeds 1-5;
//! docs/guarantee.md, "Near and beyond what the path carries"), 50 Mbit/s
//! against 30 NewReno flows lost 20-22 % of the flow's own packets and the
//! bottleneck 17-18 % (2.8 % with NewReno in the seat); 120 Mbit/s against
//! 10 NewReno flows dropped 9.8 % (0.7 %). Five rules:
//!
//! - **Lossy slots**: an evaluation slot (not the first, which holds the
//!   initial slow start's overshoot) whose own loss rate (bytes declared
//!   lost over bytes acknowledged and lost) is above
//!   [`Floor::LOSS_LIMIT`] (15 %), or that saw persistent congestion,
//!   never raises `f`; if it missed, it counts twice toward the breaker
//!   (infeasible after two such slots), and the ceiling (below) falls to
//!   [`Floor::RAMP_DOWN`] times the floor rate in force. 15 % lies above
//!   the own loss rate of every feasible case measured (2.3-4.1 % for
//!   targets of 10-40 % of the link against 30 NewReno flows; a limit of
//!   10 %, tried first with a per-round-trip guard, cost 20 Mbit/s against
//!   40 NewReno flows nearly all its slots) and below that of the storms
//!   (20-22 % at 50 %, 26-35 % for 20 flows booking the whole link).
//! - **The ceiling**: the floor rate is `min(f * bw, ceiling)`. A retry
//!   after the breaker starts with the ceiling at the last floor rate that
//!   met the target without excess loss, else at [`Floor::RAMP`] times the
//!   throughput the flow had as Reno, and the ceiling grows by `RAMP` per
//!   evaluation slot within the loss limit; a slot that missed with the
//!   ceiling below `f * bw` is the ramp still climbing, not a verdict (it
//!   neither raises `f` nor counts toward the breaker), and while it climbs
//!   the slope is `k_min`: the ceiling, not the paper's `k_bw` chasing the
//!   whole target, sets how fast the flow takes bandwidth back (measured:
//!   with `k_bw` free, each retry of 40 Mbit/s against 30 NewReno flows
//!   raised the window to 90 kB within a second and tripped again).
//! - **An early retry**: while the breaker is open, an evaluation slot whose
//!   own loss rate as Reno fell below half the highest of the off period
//!   (which was at least half the limit) shows that the path changed
//!   (capacity came back): the flow retries at once, its back-off reset.
//! - **At most one BDP**: the controller caps the floor window at the
//!   path's bandwidth-delay product `P * min_rtt` when `P` is known.
//! - **A target above the path's share is infeasible at once**: while the
//!   target (in acknowledged bytes) is above [`Floor::PATH_SHARE`] (0.6)
//!   of the physical bandwidth `P` the bandwidth source reports, there is
//!   no floor, the slope is `k_min` (plain Reno), the verdict is
//!   "infeasible", and evaluation slots teach `f` and the breaker nothing;
//!   when `P` rises again the floor resumes as it was. Measured (same
//!   dumbbell, seeds 1-3): 120 Mbit/s against 10 NewReno flows used to
//!   hold a whole BDP of floor for its first 2-3 s and every retry, and the
//!   competitors kept 0.15-0.17 of their NewReno-seat goodput in their
//!   worst 2-s window (0.81-0.84 over the run); with the rule the run is
//!   the NewReno seat's (1.00 in every window). 10 Mbit/s against 30 NewReno
//!   with the link at 15 Mbit/s for 20 s: worst 2-s window of the drop
//!   0.55-0.59 -> 0.85-0.89. 0.6 lies between the targets measured
//!   feasible against 30 NewReno (up to 50 % of the link, 0.52 `P` in
//!   acknowledged bytes) and the 70 % target that no rule made feasible.
//!   Without a known `P` (no source and no `physical=`) it never applies.
//! - **A slot that saw the path too small never raises the floor**: an
//!   evaluation slot in which the target was above `PATH_SHARE` of `P` at
//!   any ACK (the slot in which capacity comes back) raises neither `f`
//!   nor the ceiling and is no overbooked evidence, but its miss counts
//!   toward the breaker (`Floor::judges_slot`, with its measurement).
//! - **ECN marks are evidence like losses**: the own loss rate of a slot
//!   counts one datagram per ECN congestion event (`OwnLoss::on_congestion`
//!   in `slots.rs`, with its measurement), so a floor that overloads a
//!   marking AQM queue is as lossy as one that overloads a dropping one.
//!
//! # Pacing at the floor
//!
//! While the floor binds (the window below [`Floor::PACE_BELOW`] floor
//! windows, so the next loss's halving would stop at the floor) the
//! controller reports a pacing rate of `max(cwnd, floor) / srtt`, so the
//! floor window goes out spread over a round trip and not as a burst into
//! a small queue (quinn-proto's own pacer lets ten datagrams or more go at
//! once; a transport with a pacer of its own, the simulator's and the TCP
//! model's, paces at this rate). RFC 9002 §7.7 asks senders to pace.
//! Measured (same dumbbell, 30-packet queue, seeds 1-3): 50 Mbit/s against
//! 30 NewReno flows went from 8.4-10.2 % bottleneck drops and success
//! 0.92-0.97 to 5.5-5.6 % and 0.98 (NewReno in the seat: 2.75 %);
//! 10-40 Mbit/s kept 0.98 with drops of 3.0-4.6 %.
//!
//! When the target is easy (the flow's fair share well above it), `x` stays
//! above `(1 + margin) * bw`, `f` sinks to 0.5 and the floor (half the target
//! window) never binds: the flow is the paper's controller, which with a slot
//! goal it already meets runs at `k = k_min`, i.e. Reno. The floor engages only
//! as the target comes at risk.
//!
//! # The breaker
//!
//! A target the path cannot carry (an overbooked link) would make the floor a
//! window that never yields. After [`Floor::TRIP_AFTER`] consecutive
//! evaluation slots that missed `bw` with the floor engaged, the breaker
//! trips: the floor is dropped, the slope is held at `k_min` (plain Reno), and
//! the controller reports the target *infeasible*. It retries after an off
//! period of [`Floor::FIRST_BACKOFF`] evaluation slots, doubled at every trip
//! that follows a retry without success, up to [`Floor::MAX_BACKOFF`]. A slot
//! that meets the target, engaged or not, clears the verdict and resets the
//! back-off.

use std::time::Duration;

use super::overbooked::Overbooking;

/// What the controller saw over one evaluation slot, for [`Floor::on_evaluation_end`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SlotReport {
    /// The slot's throughput `x`, bytes per second (acknowledged bytes).
    pub x: f64,
    /// The flow's own loss rate over the slot: bytes declared lost, plus
    /// one datagram per ECN congestion event, over bytes acknowledged plus
    /// lost (0 when nothing was sent; see `OwnLoss::end_evaluation`).
    pub loss: f64,
    /// Persistent congestion (the retransmission-timeout analogue) was declared in the slot.
    pub persistent: bool,
}

impl SlotReport {
    /// A slot of throughput `x` without losses.
    #[cfg(test)]
    pub(crate) fn clean(x: f64) -> Self {
        Self {
            x,
            loss: 0.0,
            persistent: false,
        }
    }
}

/// The floor factor `f`, the path ceiling, the breaker and the infeasibility verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Floor {
    /// `f`, in `[MIN_FACTOR, MAX_FACTOR]`.
    factor: f64,
    /// The throughput `f` steers toward is `(1 + margin) * bw`.
    margin: f64,
    /// The ceiling on the floor rate, bytes per second (infinite: none).
    ceiling: f64,
    /// The floor rate in force at the end of the last evaluation slot that
    /// met the target with the floor engaged and its own loss within the limit.
    last_met: Option<f64>,
    /// Throughput of the last evaluation slot with the breaker open.
    off_throughput: f64,
    /// The own loss rate as plain Reno in the first slot of the running off
    /// period: the path as the breaker found it.
    off_reference: Option<f64>,
    /// Consecutive evaluation slots that missed `bw` with the floor engaged
    /// (a slot that missed with its own loss above the limit counts twice).
    misses: u32,
    /// Evaluation slots left with the floor off (0: engaged).
    off_slots: u32,
    /// The next off period, evaluation slots.
    backoff: u32,
    /// The breaker tripped and no slot has met the target since.
    infeasible: bool,
    /// How often the breaker tripped.
    trips: u64,
    /// An engaged evaluation slot has ended (the first holds the initial
    /// slow start, whose overshoot is not the floor's doing).
    started: bool,
    /// Two engaged evaluation slots have ended (the second holds the
    /// aftermath of the competitors' slow starts: see `overbooked.rs`).
    settled: bool,
    /// The target is above [`Floor::PATH_SHARE`] of the path's physical
    /// bandwidth `P` as of the latest ACK: no floor, and infeasible.
    over_path: bool,
    /// The target was above [`Floor::PATH_SHARE`] of `P` at some ACK of the
    /// running evaluation slot (see [`Floor::judges_slot`]).
    over_path_in_slot: bool,
    /// Evidence of an overbooked path and its back-off (`overbooked.rs`).
    pub(super) overbooking: Overbooking,
}

impl Floor {
    /// Consecutive missed evaluation slots that trip the breaker.
    pub(crate) const TRIP_AFTER: u32 = 3;
    /// The first off period, evaluation slots.
    pub(crate) const FIRST_BACKOFF: u32 = 8;
    /// The longest off period, evaluation slots.
    pub(crate) const MAX_BACKOFF: u32 = 64;
    /// Smallest `f`: a floor of half the target's window.
    pub(crate) const MIN_FACTOR: f64 = 0.5;
    /// Largest `f`: twice the target's window.
    pub(crate) const MAX_FACTOR: f64 = 2.0;
    /// `f` after a missed slot is at least this.
    const ENGAGE_FACTOR: f64 = 1.0;
    /// The most a met slot lowers `f`.
    pub(crate) const MAX_STEP_DOWN: f64 = 0.02;
    /// The own loss rate of an evaluation slot above which the floor is
    /// taken to overload the queue.
    pub(crate) const LOSS_LIMIT: f64 = 0.15;
    /// The ceiling grows by this factor per evaluation slot whose own loss is within the limit.
    pub(crate) const RAMP: f64 = 1.5;
    /// The ceiling shrinks by this factor per evaluation slot whose own loss is above the limit.
    pub(crate) const RAMP_DOWN: f64 = 0.8;
    /// The largest share of the path's physical bandwidth `P` a target may
    /// ask; above it the target is infeasible at once and the flow is
    /// plain Reno (see "Knowing the path").
    pub(crate) const PATH_SHARE: f64 = 0.6;
    /// The controller paces while its window is below this many floor
    /// windows (see "Pacing at the floor").
    pub(crate) const PACE_BELOW: u64 = 2;
    /// A retry's ceiling is at least this share of `bw`, so that a ramp from
    /// a flow that delivered nothing while off still grows.
    const RETRY_MIN: f64 = 0.05;

    /// A floor steering toward `(1 + margin) * bw`, starting at `f = 1`.
    pub(crate) fn new(margin: f64) -> Self {
        Self {
            factor: Self::ENGAGE_FACTOR,
            margin,
            ceiling: f64::INFINITY,
            last_met: None,
            off_throughput: 0.0,
            off_reference: None,
            misses: 0,
            off_slots: 0,
            backoff: Self::FIRST_BACKOFF,
            infeasible: false,
            trips: 0,
            started: false,
            settled: false,
            over_path: false,
            over_path_in_slot: false,
            overbooking: Overbooking::new(),
        }
    }

    /// Whether a target of `bw` is above [`Floor::PATH_SHARE`] of the
    /// physical bandwidth `physical` (both bytes per second; an unknown `P`
    /// is infinite and never is), and remember it until the next call.
    pub(crate) fn set_path(&mut self, bw: f64, physical: f64) {
        self.over_path = physical.is_finite() && bw > Self::PATH_SHARE * physical;
        self.over_path_in_slot |= self.over_path;
    }

    /// Whether the evaluation slot now ending may raise `f` and the ceiling
    /// (its miss still counts toward the breaker); starts the next slot's
    /// record.
    ///
    /// Not when the target was above [`Floor::PATH_SHARE`] of `P` at any
    /// ACK of it, its last included: such a slot ran, in part or in whole,
    /// as plain Reno on a path too small for the target, so its throughput
    /// says nothing of the floor. Judged as a floor slot, the slot in which
    /// capacity comes back (the first ACKs at full rate, the rest as Reno
    /// on the small path) is a deep miss that raises `f` to its cap of 2,
    /// and `f` then comes down by at most [`Floor::MAX_STEP_DOWN`] a slot.
    /// Measured on the seed-000 dumbbell (100 Mbit/s, 5 ms, 30 packets,
    /// 60 s), 10 Mbit/s against 30 NewReno with the link at 15 Mbit/s from
    /// 20 to 40 s: the flow's floor rate after capacity returned was about
    /// twice the target and its mean over the last 20 s 1.68x the target
    /// (seeds 1-2); with this rule the floor resumes at the `f` it had
    /// before the drop, and the mean is 1.12x (seeds 1-5, the target met
    /// again within 1 s of the return). RFC 9743 §4 (transient events: after capacity
    /// returns, a flow takes no more than it did before the change).
    fn judges_slot(&mut self) -> bool {
        let judged = !self.over_path && !self.over_path_in_slot;
        self.over_path_in_slot = false;
        judged
    }

    /// Whether the floor applies (the breaker has not tripped, or its off period is over).
    pub(crate) fn engaged(&self) -> bool {
        self.off_slots == 0 && !self.over_path
    }

    /// `f`.
    pub(crate) fn factor(&self) -> f64 {
        self.factor
    }

    /// Whether the controller declares its target infeasible.
    pub(crate) fn infeasible(&self) -> bool {
        self.infeasible || self.over_path
    }

    /// How often the breaker has tripped.
    pub(crate) fn trips(&self) -> u64 {
        self.trips
    }

    /// The own loss rate above which the floor overloads the queue.
    pub(crate) fn loss_limit(&self) -> f64 {
        Self::LOSS_LIMIT
    }

    /// Whether the ceiling holds the floor below `f * bw` (a ramp still climbing).
    pub(crate) fn ramping(&self, bw: f64) -> bool {
        self.engaged() && self.ceiling < self.factor * bw
    }

    /// The floor rate `min(f * bw, ceiling)`, bytes per second; 0 while the breaker is open.
    pub(crate) fn rate(&self, bw: f64) -> f64 {
        if self.engaged() {
            (self.factor * bw).min(self.ceiling)
        } else {
            0.0
        }
    }

    /// The floor window for a floor rate of `rate` bytes per second and a
    /// smoothed RTT `srtt`, bytes.
    pub(crate) fn window(rate: f64, srtt: Duration) -> u64 {
        let w = rate * srtt.as_secs_f64();
        if w.is_finite() && w > 0.0 { w as u64 } else { 0 }
    }

    /// An evaluation slot ended with `slot` against the target `bw` (bytes
    /// per second, in the same units as `slot.x`).
    pub(crate) fn on_evaluation_end(&mut self, slot: SlotReport, bw: f64) {
        let x = slot.x;
        let met = x >= bw;
        let judged = self.judges_slot();
        if self.over_path {
            // The path cannot carry the target now: nothing to learn about
            // f or the breaker until it can again.
            return;
        }
        if !self.engaged() {
            // Plain Reno: its own loss rate is the path's baseline.
            self.off_throughput = x;
            let reference = self.off_reference.unwrap_or(0.0).max(slot.loss);
            self.off_reference = Some(reference);
            if met {
                self.clear();
                self.ceiling = f64::INFINITY;
                self.overbooking.off_period_over();
            } else {
                // The path changed (its loss rate as Reno fell to half the
                // highest of this off period): retry now, the back-off reset.
                if self.overbooking.allows_early_retry()
                    && reference >= Self::LOSS_LIMIT / 2.0
                    && slot.loss < reference / 2.0
                {
                    self.off_slots = 1;
                    self.backoff = Self::FIRST_BACKOFF;
                }
                self.off_slots -= 1;
                if self.off_slots == 0 {
                    // The retry starts low: at the last floor that met the
                    // target, else at RAMP times what Reno got, and ramps.
                    let start = (Self::RAMP * self.off_throughput).max(Self::RETRY_MIN * bw);
                    self.ceiling = self.last_met.map_or(start, |m| m.min(self.factor * bw).max(start));
                    self.overbooking.off_period_over();
                }
            }
            return;
        }
        // An overbooked path (`overbooked.rs`): yield at once, for long.
        // Not on a slot that ran partly as Reno on a path too small for the
        // target (its losses are not the floor's).
        if self.started
            && judged
            && let Some(off) = self.overbooking.on_engaged_slot(&slot, !self.settled)
        {
            self.yield_overbooked(off);
            return;
        }
        let lossy = self.started && (slot.loss > self.loss_limit() || slot.persistent);
        self.settled = self.started;
        self.started = true;
        let want = (1.0 + self.margin) * bw;
        // x = 0 (nothing delivered): the largest correction.
        let ratio = if x > 0.0 { want / x } else { f64::INFINITY };
        let in_force = self.rate(bw);
        let (factor_before, ceiling_before) = (self.factor, self.ceiling);
        // The ceiling held the floor below `f * bw`: a ramp still climbing.
        let capped = self.ceiling < self.factor * bw;
        if met {
            self.clear();
            let f = (self.factor * ratio.sqrt()).max(self.factor - Self::MAX_STEP_DOWN);
            // A lossy slot never raises f.
            self.factor = if lossy { f.min(self.factor) } else { f };
        } else if lossy {
            // The floor's own losses made the miss: not a reason for more
            // floor, but evidence that the path cannot carry it.
            self.misses += 2;
        } else if capped {
            // The ramp had not reached the floor: no verdict yet (the
            // ceiling grows and f waits).
        } else {
            self.factor = (self.factor * ratio).max(Self::ENGAGE_FACTOR);
            self.misses += 1;
        }
        if lossy {
            self.ceiling = Self::RAMP_DOWN * in_force.min(self.ceiling);
        } else {
            if met {
                self.last_met = Some(in_force);
            }
            self.ceiling *= Self::RAMP;
        }
        self.factor = if self.factor.is_finite() {
            self.factor.clamp(Self::MIN_FACTOR, Self::MAX_FACTOR)
        } else {
            Self::MAX_FACTOR
        };
        if self.ceiling >= Self::MAX_FACTOR * bw * Self::RAMP {
            self.ceiling = f64::INFINITY;
        }
        if !judged {
            // A slot that was partly on a path too small for the target
            // ([`Floor::judges_slot`]) raises neither f nor the ceiling, but
            // its miss still counts toward the breaker: with an estimate of
            // P that crosses the threshold now and then (live, the inline
            // estimator), every slot can be such a slot, and a flow whose
            // misses never counted would hold its floor on a path that
            // cannot carry it.
            self.factor = self.factor.min(factor_before);
            self.ceiling = self.ceiling.min(ceiling_before);
        }
        if self.misses >= Self::TRIP_AFTER {
            self.misses = 0;
            self.off_slots = self.backoff;
            self.backoff = (self.backoff * 2).min(Self::MAX_BACKOFF);
            self.infeasible = true;
            self.trips += 1;
            self.off_reference = None;
            self.factor = Self::ENGAGE_FACTOR;
        }
    }

    /// Evidence of an overbooked path (`overbooked.rs`): the breaker opens
    /// for `off` evaluation slots, and the retry starts low.
    fn yield_overbooked(&mut self, off: u32) {
        self.misses = 0;
        self.off_slots = off;
        self.infeasible = true;
        self.trips += 1;
        self.off_reference = None;
        self.factor = Self::ENGAGE_FACTOR;
        self.last_met = None;
    }

    /// A slot met the target: the verdict, the miss count and the back-off reset.
    fn clear(&mut self) {
        self.infeasible = false;
        self.misses = 0;
        self.backoff = Self::FIRST_BACKOFF;
        self.off_slots = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Floor {
        fn on_evaluation_end_x(&mut self, x: f64, bw: f64) {
            self.on_evaluation_end(SlotReport::clean(x), bw);
        }
    }

    const BW: f64 = 1_000_000.0;

    /// A floor past its first evaluation slot.
    fn started() -> Floor {
        Floor {
            started: true,
            ..Floor::new(0.1)
        }
    }

    #[test]
    fn the_first_slot_with_its_slow_start_is_never_lossy() {
        let mut f = Floor::new(0.1);
        f.on_evaluation_end(lossy(0.5 * BW, 0.3), BW);
        assert_eq!((f.factor(), f.misses), (2.0, 1));
        // The second is: two more misses, and the breaker trips.
        f.on_evaluation_end(lossy(0.5 * BW, 0.3), BW);
        assert!(f.infeasible() && !f.engaged());
        assert_eq!((f.trips(), f.factor()), (1, 1.0));
    }

    #[test]
    fn a_miss_engages_at_least_the_target_window_and_corrects_in_full() {
        let mut f = started();
        f.factor = 0.5;
        f.on_evaluation_end_x(0.9 * BW, BW); // 1.1 / 0.9 * 0.5 = 0.61 -> at least 1
        assert_eq!(f.factor(), 1.0);
        f.on_evaluation_end_x(0.5 * BW, BW); // 1.0 * 2.2
        assert_eq!(f.factor(), 2.0);
        assert!(f.engaged() && !f.infeasible());
    }

    #[test]
    fn met_slots_correct_by_half_toward_the_margin_at_most_a_step_down() {
        // Far above the margin: sqrt(1.1 / 4.4) = 0.5 would halve f; one step only.
        let mut f = started();
        f.on_evaluation_end_x(4.4 * BW, BW);
        assert_eq!(f.factor(), 1.0 - Floor::MAX_STEP_DOWN);
        // A little above it: the half correction is the smaller step.
        let mut f = started();
        f.on_evaluation_end_x(1.1 * 1.0201 * BW, BW); // sqrt(1 / 1.0201) = 0.990...
        assert!((f.factor() - 1.0 / 1.01).abs() < 1e-12, "{}", f.factor());
        // Met but below the margin: f rises by half the correction.
        // x = 1.017 bw, f * sqrt(1.1 / 1.017) = 1.04.
        let mut f = started();
        f.on_evaluation_end_x(1.1 * BW / 1.0816, BW);
        assert!((f.factor() - 1.04).abs() < 1e-12);
        assert_eq!(f.misses, 0);
        // x = 0.909 bw missed.
        let mut f = started();
        f.on_evaluation_end_x(1.1 * BW / 1.21, BW);
        assert_eq!(f.misses, 1);
        // Down to the minimum, never below.
        let mut f = started();
        for _ in 0..100 {
            f.on_evaluation_end_x(10.0 * BW, BW);
        }
        assert_eq!(f.factor(), Floor::MIN_FACTOR);
    }

    #[test]
    fn the_breaker_trips_backs_off_and_retries() {
        let mut f = started();
        for _ in 0..Floor::TRIP_AFTER - 1 {
            f.on_evaluation_end_x(0.5 * BW, BW);
            assert!(f.engaged());
        }
        f.on_evaluation_end_x(0.5 * BW, BW);
        assert!(!f.engaged() && f.infeasible());
        assert_eq!((f.trips(), f.rate(BW)), (1, 0.0));
        assert_eq!(Floor::window(f.rate(BW), Duration::from_millis(20)), 0);
        for _ in 0..Floor::FIRST_BACKOFF - 1 {
            f.on_evaluation_end_x(0.5 * BW, BW);
            assert!(!f.engaged());
        }
        f.on_evaluation_end_x(0.5 * BW, BW);
        assert!(f.engaged() && f.infeasible(), "retry");
        assert_eq!(f.factor(), 1.0);
        // The retry fails: twice the off period. Its ceiling starts at 1.5x
        // what Reno got (0.75 bw) and ramps; the slots it holds the floor
        // below f * bw do not count, so 3 misses take 5 slots here.
        let mut slots = 0;
        while f.engaged() && slots < 10 {
            f.on_evaluation_end_x(0.5 * BW, BW);
            slots += 1;
        }
        assert_eq!(slots, 5);
        assert_eq!((f.trips(), f.off_slots), (2, 2 * Floor::FIRST_BACKOFF));
        // A met slot while off ends the verdict and the off period.
        f.on_evaluation_end_x(1.5 * BW, BW);
        assert!(f.engaged() && !f.infeasible());
        assert_eq!(f.backoff, Floor::FIRST_BACKOFF);
    }

    #[test]
    fn the_back_off_is_capped() {
        let mut f = started();
        for _ in 0..1000 {
            f.on_evaluation_end_x(0.0, BW);
        }
        assert!(f.backoff <= Floor::MAX_BACKOFF && f.factor().is_finite());
        assert_eq!(f.backoff, Floor::MAX_BACKOFF);
    }

    #[test]
    fn the_window_is_rate_times_srtt() {
        assert_eq!(Floor::window(1_000_000.0, Duration::from_millis(20)), 20_000);
        assert_eq!(Floor::window(f64::NAN, Duration::from_millis(20)), 0);
        assert_eq!(Floor::window(f64::INFINITY, Duration::from_millis(20)), 0);
    }

    fn lossy(x: f64, loss: f64) -> SlotReport {
        SlotReport {
            x,
            loss,
            persistent: false,
        }
    }

    #[test]
    fn a_lossy_slot_never_raises_f_and_counts_twice_toward_the_breaker() {
        // 20 % own loss is above the 15 % limit, and above the overbooked
        // path's 8 % (overbooked.rs), whose rule now answers first: the
        // breaker opens at once.
        let mut f = started();
        f.on_evaluation_end(lossy(0.5 * BW, 0.2), BW);
        assert_eq!(f.factor(), 1.0, "not raised to 2.2");
        assert!(!f.engaged() && f.infeasible());
        // Persistent congestion is lossy too.
        let mut f = started();
        f.on_evaluation_end(
            SlotReport {
                x: 0.5 * BW,
                loss: 0.0,
                persistent: true,
            },
            BW,
        );
        assert_eq!((f.factor(), f.misses), (1.0, 2));
        // A lossy slot that met the target: f may fall, never rise; the
        // ceiling falls below the floor in force.
        let mut f = started();
        f.on_evaluation_end(
            SlotReport {
                x: 1.05 * BW,
                loss: 0.0,
                persistent: true,
            },
            BW,
        );
        assert_eq!(f.factor(), 1.0);
        assert!((f.rate(BW) - Floor::RAMP_DOWN * BW).abs() < 1e-6, "{}", f.rate(BW));
        assert!(!f.infeasible());
        // Within the limits: as before.
        let mut f = started();
        f.on_evaluation_end(lossy(0.5 * BW, 0.07), BW);
        assert_eq!((f.factor(), f.misses), (2.0, 1));
    }

    #[test]
    fn a_retry_starts_low_and_ramps() {
        let mut f = started();
        for _ in 0..Floor::TRIP_AFTER {
            f.on_evaluation_end(lossy(0.3 * BW, 0.02), BW);
        }
        assert!(!f.engaged());
        for _ in 0..Floor::FIRST_BACKOFF {
            f.on_evaluation_end(lossy(0.4 * BW, 0.01), BW);
        }
        // The retry: RAMP times what Reno got, not f * bw.
        assert!(f.engaged());
        let start = Floor::RAMP * 0.4 * BW;
        assert!((f.rate(BW) - start).abs() < 1e-6, "{}", f.rate(BW));
        // A clean miss under the ceiling is the ramp climbing: not a miss
        // for the breaker, f waits, the ceiling grows by RAMP.
        f.on_evaluation_end(lossy(0.6 * BW, 0.01), BW);
        assert!((f.rate(BW) - Floor::RAMP * start).abs() < 1e-6, "{}", f.rate(BW));
        assert_eq!((f.factor(), f.misses), (1.0, 0));
        // A lossy slot (even one that met the target) cuts the ceiling
        // below the floor in force.
        f.on_evaluation_end(
            SlotReport {
                x: 1.2 * BW,
                loss: 0.0,
                persistent: true,
            },
            BW,
        );
        assert!((f.rate(BW) - Floor::RAMP_DOWN * Floor::RAMP * start).abs() < 1e-6);
    }

    #[test]
    fn a_retry_after_a_met_floor_starts_at_that_floor() {
        // Met at f = 1 (x = 1.1 bw: f stays 1), then the path shrank.
        let mut f = started();
        f.on_evaluation_end(lossy(1.1 * BW, 0.01), BW);
        let met = f.rate(BW);
        for _ in 0..Floor::TRIP_AFTER {
            f.on_evaluation_end(lossy(0.3 * BW, 0.02), BW);
        }
        assert!(!f.engaged());
        for _ in 0..Floor::FIRST_BACKOFF {
            f.on_evaluation_end(lossy(0.3 * BW, 0.01), BW);
        }
        assert!(f.engaged() && f.infeasible());
        assert!((f.rate(BW) - met).abs() < 1e-6, "{} vs {met}", f.rate(BW));
    }

    #[test]
    fn a_path_that_recovers_ends_the_off_period_early() {
        let mut f = started();
        for _ in 0..Floor::TRIP_AFTER {
            f.on_evaluation_end(lossy(0.3 * BW, 0.02), BW);
        }
        assert_eq!((f.trips(), f.off_slots), (1, Floor::FIRST_BACKOFF));
        // As Reno the loss rate stays near what the breaker found: keep off.
        f.on_evaluation_end(lossy(0.3 * BW, 0.15), BW);
        f.on_evaluation_end(lossy(0.3 * BW, 0.12), BW);
        assert!(!f.engaged());
        // Capacity came back: below half the highest rate of the off period. Retry now.
        f.on_evaluation_end(lossy(0.3 * BW, 0.04), BW);
        assert!(f.engaged() && f.infeasible());
        assert_eq!(f.backoff, Floor::FIRST_BACKOFF);
        // A steady, low Reno loss rate (an infeasible target on a calm path) never does.
        let mut f = started();
        for _ in 0..Floor::TRIP_AFTER {
            f.on_evaluation_end(lossy(0.3 * BW, 0.02), BW);
        }
        f.on_evaluation_end(lossy(0.3 * BW, 0.03), BW);
        f.on_evaluation_end(lossy(0.3 * BW, 0.005), BW);
        assert!(!f.engaged());
    }

    #[test]
    fn misses_count_when_the_path_estimate_crosses_the_share_now_and_then() {
        // P's estimate puts the target above the share at one ACK of each
        // slot and below it at the slot's end: the slots raise no f, but
        // their misses trip the breaker as clean misses do.
        let p = 100.0 * BW;
        let bw = 0.59 * p;
        let mut f = started();
        for _ in 0..Floor::TRIP_AFTER {
            assert!(!f.infeasible());
            let before = f.factor();
            f.set_path(0.61 * p, p);
            f.set_path(bw, p);
            f.on_evaluation_end(SlotReport::clean(0.5 * bw), bw);
            assert!(f.factor() <= before, "{} -> {}", before, f.factor());
        }
        assert!(f.infeasible() && f.trips() == 1);
    }

    #[test]
    fn a_target_above_the_path_share_is_infeasible_without_a_floor() {
        let p = 100.0 * BW;
        let mut f = started();
        f.set_path(0.59 * p, p);
        assert!(f.engaged() && !f.infeasible() && f.rate(0.59 * p) > 0.0);
        f.set_path(0.61 * p, p);
        assert!(!f.engaged() && f.infeasible());
        assert_eq!(f.rate(0.61 * p), 0.0);
        // Slots while the path is too small change nothing (but the record
        // of the running slot, which the next ACK's `set_path` renews).
        let before = Floor {
            over_path_in_slot: false,
            ..f
        };
        for _ in 0..10 {
            f.on_evaluation_end(lossy(0.1 * p, 0.3), 0.61 * p);
        }
        assert_eq!(f, before);
        // The path grows back (or P is unknown): the floor as it was.
        f.set_path(0.61 * p, 2.0 * p);
        assert!(f.engaged() && !f.infeasible() && f.rate(0.61 * p) > 0.0);
        f.set_path(0.61 * p, f64::INFINITY);
        assert!(f.engaged());
    }
}
