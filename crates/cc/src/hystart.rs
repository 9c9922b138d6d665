//! HyStart++ (Balasubramanian, Huang, Olson, "HyStart++: Modified Slow
//! Start for TCP", RFC 9406, 2023): leave slow start when the round trip
//! time starts to grow, before the queue overflows, instead of at the first
//! loss; a few rounds of Conservative Slow Start (CSS) guard against
//! leaving on a jitter spike.
//!
//! An option of [`NewReno`](crate::NewReno) and [`Cubic`](crate::Cubic)
//! (`newreno:hystart=true`, `cubic:hystart=true`). As the RFC recommends
//! (§4.2), it runs only in the initial slow start, while `ssthresh` is still
//! infinite; after the first reduction the discovered `ssthresh` ends later
//! slow starts.
//!
//! Rounds (§4.2: "windowEnd = SND.NXT" at the start of a round, which ends
//! when that byte is acknowledged) are counted by send time here, as the
//! controller contract carries no sequence numbers: a round that began at
//! `t` ends with the first acknowledgement of a packet sent at or after `t`.
//! `now` is that acknowledgement's send time plus its RTT sample.
//!
//! `L` (§4.2, §4.3) is 8 always: over QUIC, quinn-proto reports every
//! packet's acknowledgement separately, so no single report exceeds one
//! datagram and `L` never binds (the RFC's `L = infinity` for paced senders
//! would give the same growth); over the simulator's TCP model, which does
//! not pace by default, a cumulative ACK covering many segments is held to
//! eight as the RFC asks of an unpaced sender.

use std::time::{Duration, Instant};

use crate::controller::{Ack, Phase};

/// RFC 9406 §4.3 `MIN_RTT_THRESH`.
const MIN_RTT_THRESH: Duration = Duration::from_millis(4);
/// RFC 9406 §4.3 `MAX_RTT_THRESH`.
const MAX_RTT_THRESH: Duration = Duration::from_millis(16);
/// RFC 9406 §4.3 `MIN_RTT_DIVISOR`.
const MIN_RTT_DIVISOR: u32 = 8;
/// RFC 9406 §4.3 `N_RTT_SAMPLE`.
const N_RTT_SAMPLE: u32 = 8;
/// RFC 9406 §4.3 `CSS_GROWTH_DIVISOR`.
const CSS_GROWTH_DIVISOR: u64 = 4;
/// RFC 9406 §4.3 `CSS_ROUNDS`.
const CSS_ROUNDS: u32 = 5;
/// RFC 9406 §4.3 `L` for a sender that does not pace (see the module docs).
const L: u64 = 8;

/// What one acknowledgement in the initial slow start does to the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Grow the window by this many bytes (standard slow start or CSS).
    Grow(u64),
    /// CSS lasted [`CSS_ROUNDS`] rounds: set `ssthresh = cwnd` and enter
    /// congestion avoidance (§4.2); this acknowledgement grows nothing.
    Exit,
}

/// HyStart++'s state for one connection's initial slow start (RFC 9406 §4.2).
#[derive(Debug, Clone, Default)]
pub(crate) struct HyStart {
    /// Send time at which the current round began; `None` before the first ACK.
    round_start: Option<Instant>,
    /// `lastRoundMinRTT` (`None`: infinity).
    last_round_min_rtt: Option<Duration>,
    /// `currentRoundMinRTT` (`None`: infinity).
    current_round_min_rtt: Option<Duration>,
    /// `rttSampleCount`.
    rtt_sample_count: u32,
    /// `cssBaselineMinRtt`; `Some` while in Conservative Slow Start.
    css_baseline_min_rtt: Option<Duration>,
    /// Rounds completed in CSS.
    css_rounds: u32,
    /// Times CSS was entered, for tests and traces.
    css_entries: u32,
}

impl HyStart {
    /// Whether the sender is in Conservative Slow Start.
    pub(crate) fn in_css(&self) -> bool {
        self.css_baseline_min_rtt.is_some()
    }

    /// `phase` as a snapshot reports it: slow start is Conservative Slow
    /// Start while `hystart` says so.
    pub(crate) fn phase(hystart: Option<&HyStart>, phase: Phase) -> Phase {
        match phase {
            Phase::SlowStart if hystart.is_some_and(HyStart::in_css) => Phase::ConservativeSlowStart,
            phase => phase,
        }
    }

    /// How often CSS was entered (a jitter spike may enter it and return).
    #[cfg(test)]
    pub(crate) fn css_entries(&self) -> u32 {
        self.css_entries
    }

    /// Growth of `acked` bytes in the current state: `min(N, L * SMSS)` in
    /// standard slow start, a [`CSS_GROWTH_DIVISOR`]th of it in CSS (§4.2).
    pub(crate) fn growth(&self, acked: u64, mss: u64) -> u64 {
        let n = acked.min(L.saturating_mul(mss));
        if self.in_css() { n / CSS_GROWTH_DIVISOR } else { n }
    }

    /// One acknowledged packet in the initial slow start (RFC 9406 §4.2):
    /// round bookkeeping, the RTT sample, the delay-increase test that
    /// enters CSS, the test that leaves it for standard slow start, and the
    /// end of CSS after [`CSS_ROUNDS`] rounds.
    pub(crate) fn on_ack(&mut self, ack: &Ack, mss: u64) -> Step {
        let now = ack.sent + ack.rtt.latest;
        match self.round_start {
            None => self.start_round(now),
            Some(start) if ack.sent >= start => {
                // The round that began at `start` is over: this packet was
                // sent after it began.
                if self.in_css() {
                    self.css_rounds += 1;
                    if self.css_rounds >= CSS_ROUNDS {
                        // "If CSS_ROUNDS rounds are complete, enter congestion
                        // avoidance by setting the ssthresh to the current cwnd."
                        return Step::Exit;
                    }
                }
                self.start_round(now);
            }
            Some(_) => {}
        }
        // "currentRoundMinRTT = min(currentRoundMinRTT, currRTT);
        //  rttSampleCount += 1"
        let rtt = ack.rtt.latest;
        self.current_round_min_rtt = Some(self.current_round_min_rtt.map_or(rtt, |m| m.min(rtt)));
        self.rtt_sample_count = self.rtt_sample_count.saturating_add(1);
        if self.rtt_sample_count >= N_RTT_SAMPLE
            && let (Some(current), Some(last)) = (self.current_round_min_rtt, self.last_round_min_rtt)
        {
            match self.css_baseline_min_rtt {
                None => {
                    // "RttThresh = max(MIN_RTT_THRESH,
                    //    min(lastRoundMinRTT / MIN_RTT_DIVISOR, MAX_RTT_THRESH))
                    //  if (currentRoundMinRTT >= (lastRoundMinRTT + RttThresh))
                    //    cssBaselineMinRtt = currentRoundMinRTT
                    //    exit slow start and enter CSS"
                    let thresh = (last / MIN_RTT_DIVISOR).min(MAX_RTT_THRESH).max(MIN_RTT_THRESH);
                    if current >= last + thresh {
                        self.css_baseline_min_rtt = Some(current);
                        self.css_rounds = 0;
                        self.css_entries += 1;
                    }
                }
                Some(baseline) => {
                    // "if (currentRoundMinRTT < cssBaselineMinRtt)
                    //    cssBaselineMinRtt = infinity
                    //    resume slow start"
                    if current < baseline {
                        self.css_baseline_min_rtt = None;
                    }
                }
            }
        }
        Step::Grow(self.growth(ack.bytes, mss))
    }

    /// "At the start of each round during standard slow start and CSS":
    /// `lastRoundMinRTT = currentRoundMinRTT`, `currentRoundMinRTT =
    /// infinity`, `rttSampleCount = 0`.
    fn start_round(&mut self, now: Instant) {
        self.round_start = Some(now);
        self.last_round_min_rtt = self.current_round_min_rtt;
        self.current_round_min_rtt = None;
        self.rtt_sample_count = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::RttSample;

    const MSS: u64 = 1200;

    /// Feed `n` acknowledgements of a round whose packets were sent at
    /// `sent` (after the previous round's acknowledgements arrived) and see
    /// `rtt`; the first ends the previous round.
    fn round(h: &mut HyStart, sent: Instant, rtt: Duration, n: u32) -> Vec<Step> {
        (0..n)
            .map(|i| {
                let s = sent + Duration::from_micros(u64::from(i));
                h.on_ack(&Ack::new(s, MSS, RttSample::uniform(rtt)), MSS)
            })
            .collect()
    }

    #[test]
    fn a_steady_rtt_stays_in_standard_slow_start() {
        let mut h = HyStart::default();
        let t0 = Instant::now();
        for r in 0..20u64 {
            let steps = round(&mut h, t0 + Duration::from_secs(r), Duration::from_millis(100), 16);
            assert!(steps.iter().all(|&s| s == Step::Grow(MSS)), "round {r}");
        }
        assert_eq!(h.css_entries(), 0);
    }

    #[test]
    fn a_delay_increase_enters_css_and_five_rounds_later_exits() {
        let mut h = HyStart::default();
        let t0 = Instant::now();
        let at = |r: u64| t0 + Duration::from_secs(r);
        round(&mut h, at(0), Duration::from_millis(100), 16);
        round(&mut h, at(1), Duration::from_millis(100), 16);
        // 100 ms / 8 = 12.5 ms: a round 13 ms slower is above the threshold.
        let steps = round(&mut h, at(2), Duration::from_millis(113), 16);
        // The first seven samples cannot decide; the eighth enters CSS.
        assert!(steps[..7].iter().all(|&s| s == Step::Grow(MSS)));
        assert!(h.in_css());
        assert_eq!(steps[7], Step::Grow(MSS / CSS_GROWTH_DIVISOR));
        for r in 3..7 {
            let steps = round(&mut h, at(r), Duration::from_millis(113), 16);
            assert!(steps.iter().all(|&s| s == Step::Grow(MSS / 4)), "round {r}: {steps:?}");
        }
        // The fifth CSS round ends with the next round's first ACK.
        assert_eq!(round(&mut h, at(7), Duration::from_millis(113), 1), vec![Step::Exit]);
    }

    #[test]
    fn a_spike_below_the_threshold_or_that_subsides_does_not_end_slow_start() {
        let mut h = HyStart::default();
        let t0 = Instant::now();
        let at = |r: u64| t0 + Duration::from_secs(r);
        round(&mut h, at(0), Duration::from_millis(100), 16);
        // 12 ms: below max(4 ms, min(100 / 8, 16 ms)) = 12.5 ms.
        round(&mut h, at(1), Duration::from_millis(112), 16);
        assert!(!h.in_css());
        // Against 112 ms, 125 ms crosses the threshold (14 ms): CSS ...
        round(&mut h, at(2), Duration::from_millis(126), 16);
        assert!(h.in_css());
        // ... and a round back at 100 ms returns to standard slow start.
        let steps = round(&mut h, at(3), Duration::from_millis(100), 16);
        assert!(!h.in_css());
        assert_eq!(*steps.last().unwrap(), Step::Grow(MSS));
        assert_eq!(h.css_entries(), 1);
    }

    #[test]
    fn the_threshold_is_clamped_to_4_and_16_ms() {
        for (base_ms, below_ms, above_ms) in [(10u64, 13u64, 14u64), (400, 415, 416)] {
            for (rtt_ms, enters) in [(below_ms, false), (above_ms, true)] {
                let mut h = HyStart::default();
                let t0 = Instant::now();
                round(&mut h, t0, Duration::from_millis(base_ms), 16);
                round(&mut h, t0 + Duration::from_secs(1), Duration::from_millis(rtt_ms), 16);
                assert_eq!(h.in_css(), enters, "base {base_ms} ms, round at {rtt_ms} ms");
            }
        }
    }

    #[test]
    fn a_stretch_ack_grows_at_most_l_datagrams() {
        let h = HyStart::default();
        assert_eq!(h.growth(100 * MSS, MSS), 8 * MSS);
        assert_eq!(h.growth(500, MSS), 500);
    }
}
