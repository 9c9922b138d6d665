//! Traffic support for the transport layer: flow start/stop schedules and
//! file-transfer arrivals (Yamanegi et al.'s flow counts changing over
//! time; Araki's exponential gaps and Pareto sizes).
//!
//! The simulator moves datagrams only; a transport host reads these
//! schedules to decide when to open and close connections (typically by
//! reporting the next event time from [`crate::Host::poll_timeout`]).

use std::time::Duration;

use crate::{Error, Exponential, FlowId, Pareto, Rng, SimTime};

/// Start or stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum FlowAction {
    /// The flow begins sending.
    Start,
    /// The flow stops sending.
    Stop,
}

/// One scheduled action.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct FlowEvent {
    /// When.
    pub at: SimTime,
    /// Which flow.
    pub flow: FlowId,
    /// What happens.
    pub action: FlowAction,
}

/// A list of flow starts and stops, kept in time order (events at the same
/// time stay in insertion order).
///
/// ```
/// use tput_netsim::{FlowSchedule, SimTime};
/// // Yamanegi et al., Figs. 4/5: 1 Reno flow for 0-5 s, 5 for 5-10 s, 30 after 10 s.
/// let mut s = FlowSchedule::new();
/// s.start(SimTime::ZERO, 1);
/// for f in 2..=5 { s.start(SimTime::from_secs(5), f); }
/// for f in 6..=30 { s.start(SimTime::from_secs(10), f); }
/// assert_eq!(s.active_at(SimTime::from_secs(7)).len(), 5);
/// assert_eq!(s.next_after(SimTime::from_secs(5)), Some(SimTime::from_secs(10)));
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct FlowSchedule {
    events: Vec<FlowEvent>,
}

impl FlowSchedule {
    /// An empty schedule.
    pub fn new() -> Self {
        Self::default()
    }

    fn insert(&mut self, ev: FlowEvent) -> &mut Self {
        let pos = self.events.partition_point(|e| e.at <= ev.at);
        self.events.insert(pos, ev);
        self
    }

    /// Starts `flow` at `at`.
    pub fn start(&mut self, at: SimTime, flow: FlowId) -> &mut Self {
        self.insert(FlowEvent {
            at,
            flow,
            action: FlowAction::Start,
        })
    }

    /// Stops `flow` at `at`.
    pub fn stop(&mut self, at: SimTime, flow: FlowId) -> &mut Self {
        self.insert(FlowEvent {
            at,
            flow,
            action: FlowAction::Stop,
        })
    }

    /// All events in time order.
    pub fn events(&self) -> &[FlowEvent] {
        &self.events
    }

    /// Events with `from < at <= to`, for a host that wakes at `to` having
    /// last looked at `from`.
    pub fn between(&self, from: SimTime, to: SimTime) -> &[FlowEvent] {
        let a = self.events.partition_point(|e| e.at <= from);
        let b = self.events.partition_point(|e| e.at <= to);
        &self.events[a..b.max(a)]
    }

    /// The first event time strictly after `t`.
    pub fn next_after(&self, t: SimTime) -> Option<SimTime> {
        let i = self.events.partition_point(|e| e.at <= t);
        self.events.get(i).map(|e| e.at)
    }

    /// Whether `flow` is running at `t` (its last event at or before `t` is
    /// a start).
    pub fn is_active(&self, flow: FlowId, t: SimTime) -> bool {
        self.events
            .iter()
            .take_while(|e| e.at <= t)
            .filter(|e| e.flow == flow)
            .last()
            .is_some_and(|e| e.action == FlowAction::Start)
    }

    /// Flows running at `t`, ascending.
    pub fn active_at(&self, t: SimTime) -> Vec<FlowId> {
        let mut flows: Vec<FlowId> = self.events.iter().map(|e| e.flow).collect();
        flows.sort_unstable();
        flows.dedup();
        flows.retain(|&f| self.is_active(f, t));
        flows
    }
}

/// File transfers arriving with exponential gaps and Pareto sizes
/// (Araki, a study of TCP under network power-saving control, 2011): an endless iterator of `(start time, bytes)`.
///
/// Sizes are rounded up to whole bytes (at least 1). The first file starts
/// one gap after `start`.
#[derive(Clone, Debug)]
pub struct FileArrivals {
    rng: Rng,
    gap: Exponential,
    size: Pareto,
    next_ns: f64,
}

impl FileArrivals {
    /// `mean_gap` between starts, Pareto sizes of `mean_bytes` and
    /// `shape`, drawing from `rng` (e.g. `Rng::derive(seed, stream)`).
    pub fn new(rng: Rng, start: SimTime, mean_gap: Duration, mean_bytes: f64, shape: f64) -> Result<Self, Error> {
        Ok(FileArrivals {
            rng,
            // Sampled in seconds, scaled to ns per draw.
            gap: Exponential::new(mean_gap.as_secs_f64())?,
            size: Pareto::new(mean_bytes, shape)?,
            next_ns: start.as_nanos() as f64,
        })
    }
}

impl Iterator for FileArrivals {
    type Item = (SimTime, u64);

    fn next(&mut self) -> Option<(SimTime, u64)> {
        self.next_ns += self.gap.sample(&mut self.rng) * 1e9;
        let size = self.size.sample(&mut self.rng).ceil().max(1.0) as u64;
        Some((SimTime::from_nanos(self.next_ns as u64), size))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_queries() {
        let mut s = FlowSchedule::new();
        s.start(SimTime::from_secs(1), 7)
            .stop(SimTime::from_secs(3), 7)
            .start(SimTime::from_secs(2), 8);
        let times: Vec<u64> = s.events().iter().map(|e| e.at.as_nanos() / 1_000_000_000).collect();
        assert_eq!(times, [1, 2, 3]);
        assert!(!s.is_active(7, SimTime::from_millis(999)));
        assert!(s.is_active(7, SimTime::from_secs(1)));
        assert!(!s.is_active(7, SimTime::from_secs(3)));
        assert_eq!(s.active_at(SimTime::from_millis(2500)), [7, 8]);
        assert_eq!(s.between(SimTime::from_secs(1), SimTime::from_secs(3)).len(), 2);
        assert_eq!(s.next_after(SimTime::from_secs(3)), None);
    }

    #[test]
    fn file_arrivals_rate_and_sizes() {
        let mut f = FileArrivals::new(
            Rng::derive(5, 1),
            SimTime::ZERO,
            Duration::from_millis(10),
            50_000.0,
            2.5,
        )
        .unwrap();
        let n = 20_000;
        let mut last = SimTime::ZERO;
        let mut sizes = 0u64;
        for _ in 0..n {
            let (t, b) = f.next().unwrap();
            assert!(t >= last && b >= 30_000);
            last = t;
            sizes += b;
        }
        // Mean gap 10 ms: n gaps sum to 200 s, sd sqrt(n)*0.01 = 1.41 s.
        assert!((last.as_secs_f64() - 200.0).abs() < 5.0 * 1.42);
        // Pareto(2.5) has finite variance: x_m^2 a/((a-1)^2(a-2)).
        let xm: f64 = 30_000.0;
        let sd = (xm * xm * 2.5 / (1.5f64 * 1.5 * 0.5)).sqrt() / (n as f64).sqrt();
        let mean = sizes as f64 / n as f64;
        assert!((mean - 50_000.5).abs() < 6.0 * sd, "mean {mean}, sd {sd}");
    }
}
