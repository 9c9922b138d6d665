//! Trace-driven links: a link whose delivery opportunities come from a
//! packet-delivery trace in Mahimahi's format (Netravali, Sivaraman, Das,
//! Goyal, Winstein, Balakrishnan, Mickens, "Mahimahi: accurate
//! record-and-replay for HTTP", USENIX ATC 2015), the format Pantheon's
//! cellular traces use.
//!
//! A trace is a text file of one integer per line: the millisecond at which
//! the link may deliver one MTU-sized packet (several lines with the same
//! millisecond are several opportunities). The timestamps do not decrease;
//! at the end the trace starts over, shifted by its last timestamp (its
//! period). An opportunity nobody uses is lost, as in Mahimahi.
//!
//! One departure from Mahimahi: there an opportunity is a budget of 1504
//! bytes that several small packets may share; here each opportunity carries
//! exactly one packet, whatever its size (the simulator's packets are close
//! to the MTU; ACK paths are not trace-driven).
//!
//! [`DeliveryTrace::markov`] generates LTE-like traces from a seeded
//! Markov-modulated rate (`cargo run -p tput-netsim --example lte_trace`).

use std::fmt::Write as _;

use std::time::Duration;

use crate::{Error, Rate, Rng};

/// Bytes of one delivery opportunity in Mahimahi (an Ethernet MTU).
pub const TRACE_PACKET_BYTES: u64 = 1500;

const NS_PER_MS: u64 = 1_000_000;

/// The delivery opportunities of a trace-driven link (see the module docs).
///
/// ```
/// # use tput_netsim::DeliveryTrace;
/// // Two opportunities at 1 ms, one at 3 ms; then again at 4, 4 and 6 ms...
/// let t = DeliveryTrace::parse("1\n1\n3\n").unwrap();
/// assert_eq!((t.period_ms(), t.opportunities().len()), (3, 3));
/// assert_eq!(DeliveryTrace::parse("2\n1\n").unwrap_err().to_string(),
///            "delivery trace line 2: 1 ms comes before the previous line's 2 ms");
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DeliveryTrace {
    opportunities_ms: Vec<u64>,
}

impl DeliveryTrace {
    /// A trace of the given millisecond timestamps: at least one, in
    /// non-decreasing order, the last one positive (it is the period).
    pub fn new(opportunities_ms: Vec<u64>) -> Result<Self, Error> {
        for (i, w) in opportunities_ms.windows(2).enumerate() {
            if w[1] < w[0] {
                return Err(Error::BadTrace(format!(
                    "delivery trace line {}: {} ms comes before the previous line's {} ms",
                    i + 2,
                    w[1],
                    w[0]
                )));
            }
        }
        match opportunities_ms.last() {
            None => return Err(Error::BadTrace("delivery trace: no delivery opportunity".into())),
            Some(0) => {
                return Err(Error::BadTrace(
                    "delivery trace: the last timestamp (the period the trace repeats with) must be positive".into(),
                ));
            }
            Some(&last) if last > u64::MAX / NS_PER_MS / 2 => {
                return Err(Error::BadTrace(format!("delivery trace: {last} ms is too long")));
            }
            _ => {}
        }
        Ok(DeliveryTrace { opportunities_ms })
    }

    /// Parses a trace file's text: one integer (milliseconds) per line;
    /// blank lines are skipped. The error names the line.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let mut ms = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let v = line.parse::<u64>().map_err(|_| {
                Error::BadTrace(format!(
                    "delivery trace line {}: `{line}` is not a whole number of milliseconds",
                    i + 1
                ))
            })?;
            ms.push(v);
        }
        Self::new(ms)
    }

    /// The trace as file text, one timestamp per line.
    pub fn to_text(&self) -> String {
        let mut s = String::with_capacity(self.opportunities_ms.len() * 6);
        for m in &self.opportunities_ms {
            let _ = writeln!(s, "{m}");
        }
        s
    }

    /// The timestamps, milliseconds.
    pub fn opportunities(&self) -> &[u64] {
        &self.opportunities_ms
    }

    /// The period the trace repeats with: its last timestamp.
    pub fn period_ms(&self) -> u64 {
        *self.opportunities_ms.last().expect("validated: not empty")
    }

    /// The mean rate of [`TRACE_PACKET_BYTES`] packets over one period
    /// (rounded down to a whole bit per second).
    pub fn mean_rate(&self) -> Rate {
        let bits = self.opportunities_ms.len() as u128 * u128::from(TRACE_PACKET_BYTES * 8) * 1000;
        Rate::from_bits_per_sec(u64::try_from(bits / u128::from(self.period_ms())).unwrap_or(u64::MAX))
    }

    /// An LTE-like trace of `duration`: a rate that jumps between
    /// `rates` (a birth-death Markov chain: every `dwell` it stays with
    /// probability `1 - 2p`, or moves one state up or down with `p = move_prob`
    /// each, reflecting at the ends), turned into opportunities by
    /// accumulating the bytes the rate allows each millisecond. Seeded: the same
    /// arguments give the same trace. A simplification of the Markov-modulated
    /// models of cellular capacity (e.g. Winstein, Sivaraman, Balakrishnan,
    /// "Stochastic forecasts achieve high throughput and low delay over
    /// cellular networks", NSDI 2013, whose Sprout models the rate as a
    /// random walk), not a fit to any measured network.
    ///
    /// The trace's resolution is a millisecond: `duration` and `dwell` count
    /// in whole milliseconds (a fraction of one is ignored).
    pub fn markov(
        seed: u64,
        duration: Duration,
        rates: &[Rate],
        dwell: Duration,
        move_prob: f64,
    ) -> Result<Self, Error> {
        let whole_ms = |d: Duration| u64::try_from(d.as_millis()).unwrap_or(u64::MAX);
        let (duration_ms, dwell_ms) = (whole_ms(duration), whole_ms(dwell));
        if rates.is_empty() || dwell_ms == 0 || duration_ms == 0 || !(0.0..=0.5).contains(&move_prob) {
            return Err(Error::BadTrace(
                "delivery trace: markov needs rates, a dwell and a duration of at least 1 ms, and a move probability in [0, 0.5]"
                    .into(),
            ));
        }
        let rates_bps: Vec<u64> = rates.iter().map(|r| r.bits_per_sec()).collect();
        let mut rng = Rng::new(seed);
        let mut state = rates_bps.len() / 2;
        let mut credit_bits = 0u64;
        let mut ms = Vec::new();
        for t in 1..=duration_ms {
            if t % dwell_ms == 0 {
                let u = rng.next_f64();
                if u < move_prob {
                    state = state.saturating_sub(1);
                } else if u < 2.0 * move_prob {
                    state = (state + 1).min(rates_bps.len() - 1);
                }
            }
            credit_bits += rates_bps[state] / 1000;
            while credit_bits >= TRACE_PACKET_BYTES * 8 {
                credit_bits -= TRACE_PACKET_BYTES * 8;
                ms.push(t);
            }
        }
        // The last line is the period.
        if ms.last() != Some(&duration_ms) {
            ms.push(duration_ms);
        }
        Self::new(ms)
    }
}

/// The next unused opportunity of a trace, in nanoseconds since time 0.
#[derive(Clone, Debug)]
pub(crate) struct TraceCursor {
    ns: Vec<u64>,
    period_ns: u64,
    /// Loops completed before the cursor's.
    round: u64,
    /// Index of the next unused opportunity in `ns`.
    index: usize,
}

impl TraceCursor {
    pub(crate) fn new(trace: &DeliveryTrace) -> Self {
        TraceCursor {
            ns: trace.opportunities_ms.iter().map(|m| m * NS_PER_MS).collect(),
            period_ns: trace.period_ms() * NS_PER_MS,
            round: 0,
            index: 0,
        }
    }

    fn at(&self) -> u64 {
        (self.round * self.period_ns).saturating_add(self.ns[self.index])
    }

    /// Takes the first unused opportunity at or after `t` (nanoseconds)
    /// and returns its time; the ones before `t` are lost.
    pub(crate) fn take(&mut self, t: u64) -> u64 {
        if self.at() < t {
            // Every opportunity of rounds before `t / period - 1` is before `t`.
            let round = (t / self.period_ns).saturating_sub(1);
            if round > self.round {
                self.round = round;
                self.index = 0;
            }
            loop {
                let base = self.round * self.period_ns;
                let rest = &self.ns[self.index..];
                let skip = rest.partition_point(|&n| base + n < t);
                if skip < rest.len() {
                    self.index += skip;
                    break;
                }
                self.round += 1;
                self.index = 0;
            }
        }
        let at = self.at();
        self.index += 1;
        if self.index == self.ns.len() {
            self.index = 0;
            self.round += 1;
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn the_cursor_loops_and_skips_unused_opportunities() {
        let t = DeliveryTrace::parse("1\n1\n3\n\n").unwrap();
        let mut c = TraceCursor::new(&t);
        let ms = |c: &mut TraceCursor, t_ms: u64| c.take(t_ms * NS_PER_MS) / NS_PER_MS;
        assert_eq!(ms(&mut c, 0), 1);
        assert_eq!(ms(&mut c, 0), 1);
        assert_eq!(ms(&mut c, 0), 3);
        // The second round: 4, 4, 6.
        assert_eq!(ms(&mut c, 0), 4);
        // 4 is lost: asked at 5 ms.
        assert_eq!(ms(&mut c, 5), 6);
        // Far ahead: round 1000 starts at 3000 ms.
        assert_eq!(ms(&mut c, 3000), 3000, "round 999's last opportunity is at 3000 ms");
        assert_eq!(ms(&mut c, 3000), 3001);
        assert_eq!(ms(&mut c, 3000), 3001);
        assert_eq!(ms(&mut c, 3001), 3003);
        assert_eq!(c.take(3_003_000_001) / NS_PER_MS, 3004);
    }

    /// With a backlogged queue the link delivers exactly the trace's
    /// opportunities: per second of virtual time, as many packets as the
    /// trace has lines per one-second period, at the trace's instants.
    #[test]
    fn a_backlogged_link_delivers_exactly_the_opportunities() {
        use crate::{LinkConfig, LinkOutput, LinkRunner, QueueLimit, SimTime};
        let mbit = Rate::from_mbit_per_sec;
        let trace = DeliveryTrace::markov(3, ms(1000), &[mbit(3), mbit(12), mbit(30)], ms(50), 0.3).unwrap();
        let per_period = trace.opportunities().len();
        assert!(per_period > 500, "{per_period}");
        let cfg = LinkConfig::new(Rate::from_mbit_per_sec(1), std::time::Duration::ZERO)
            .with_queue(QueueLimit::Packets(100_000))
            .with_trace(trace.clone());
        let mut link = LinkRunner::new(&cfg, 1).unwrap();
        for i in 0..20_000u32 {
            link.offer(SimTime::ZERO, 1472, i);
        }
        let mut per_second = [0usize; 10];
        let mut first_round = Vec::new();
        while let Some(out) = link.poll(SimTime::from_secs(10)) {
            if let LinkOutput::Deliver { at, frame } = out {
                let ns = at.as_nanos();
                assert_eq!(ns % NS_PER_MS, 0, "on a millisecond");
                per_second[((ns - 1) / 1_000_000_000) as usize] += 1;
                if ns <= 1_000_000_000 {
                    first_round.push(ns / NS_PER_MS);
                }
                assert!(frame.item < 20_000);
            }
        }
        assert_eq!(per_second, [per_period; 10]);
        assert_eq!(first_round, trace.opportunities());
        let s = link.stats(SimTime::from_secs(10));
        assert_eq!(s.delivered.packets as usize, 10 * per_period);
        assert_eq!(s.queued.packets as usize, 20_000 - 10 * per_period - 1);
    }

    #[test]
    fn bad_traces_name_the_line() {
        let e = |s: &str| DeliveryTrace::parse(s).unwrap_err().to_string();
        assert_eq!(e(""), "delivery trace: no delivery opportunity");
        assert_eq!(
            e("1\nx\n"),
            "delivery trace line 2: `x` is not a whole number of milliseconds"
        );
        assert_eq!(
            e("0\n"),
            "delivery trace: the last timestamp (the period the trace repeats with) must be positive"
        );
        assert_eq!(
            e("1\n-3\n"),
            "delivery trace line 2: `-3` is not a whole number of milliseconds"
        );
    }

    #[test]
    fn markov_traces_are_seeded_and_follow_their_rates() {
        let mbit = Rate::from_mbit_per_sec;
        let rates = [mbit(6), mbit(12), mbit(24)];
        let a = DeliveryTrace::markov(7, ms(10_000), &rates, ms(100), 0.2).unwrap();
        assert_eq!(a, DeliveryTrace::markov(7, ms(10_000), &rates, ms(100), 0.2).unwrap());
        assert_ne!(a, DeliveryTrace::markov(8, ms(10_000), &rates, ms(100), 0.2).unwrap());
        assert_eq!(a.period_ms(), 10_000);
        let mean = a.mean_rate();
        assert!((mbit(6)..mbit(24)).contains(&mean), "{mean}");
        // A constant rate gives exactly its opportunities: 12 Mbit/s is one per ms.
        let c = DeliveryTrace::markov(1, ms(1000), &[mbit(12)], ms(100), 0.0).unwrap();
        assert_eq!(c.mean_rate(), mbit(12));
        // Less than a millisecond of dwell is refused.
        assert!(DeliveryTrace::markov(1, ms(1000), &[mbit(12)], Duration::from_micros(999), 0.0).is_err());
        assert_eq!(c.opportunities(), (1..=1000).collect::<Vec<u64>>());
        assert_eq!(DeliveryTrace::parse(&c.to_text()).unwrap(), c);
    }
}
