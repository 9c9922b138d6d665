//! The `mechanism` figure: why the paper's rule misses its target against
//! 30 NewReno flows at 10 %, and what the floor changes, from one traced run
//! per mode (seed 1). The controllers' traces ([`tput_lab::host::CcSample`])
//! are not kept in plan results, so these two runs simulate where the
//! figures are built.

use std::fmt::Write as _;
use std::time::Duration;

use tput_cc::QUIC_OVERHEAD;
use tput_lab::host::CcSample;
use tput_lab::plot::{Series, line_chart};
use tput_lab::scenario::{FlowResult, run};

use super::{competitor, mbit, scenario, tested};
use tput_tcp::Profile;

/// Competing NewReno flows.
const N: u32 = 30;
/// Target, percent of the bottleneck.
const PCT: f64 = 10.0;
/// Packet size for the window in packets, bytes.
const MSS: f64 = 1200.0;
/// Ignore the first second (slow start).
const SKIP_SECS: f64 = 1.0;

/// What one traced run showed.
#[derive(Debug, Clone, Default)]
pub struct ModeStats {
    /// `paper` or `default`.
    pub mode: &'static str,
    /// The tested flow's success ratio (1-s slots).
    pub success: f64,
    /// Its goodput, Mbit/s.
    pub mbps: f64,
    /// Time-weighted mean window, packets.
    pub cwnd_pkts: f64,
    /// The window the target needs: its acknowledged-byte rate times the mean smoothed RTT, packets.
    pub needed_pkts: f64,
    /// Fraction of the time the window was below that.
    pub below: f64,
    /// Fractions of the time `k` was set by: k_max below k_min (k forced to
    /// k_min), k_max clamping k_bw, k_bw itself, k_bw below k_min (goal met).
    pub k_forced: f64,
    /// See [`k_forced`](Self::k_forced).
    pub k_clamped: f64,
    /// See [`k_forced`](Self::k_forced).
    pub k_bw: f64,
    /// See [`k_forced`](Self::k_forced).
    pub k_met: f64,
    /// Time-weighted mean of the control-slot goal `g_i` over the controller's target.
    pub goal_ratio: f64,
    /// Fraction of the time the control slot `s` was 2 RTTs.
    pub s_at_2: f64,
    /// When `s` first reached 2, seconds (`None`: never).
    pub s_2_at: Option<f64>,
    /// Time-weighted mean loss floor, packets (0 in the paper's mode).
    pub floor_pkts: f64,
    /// Window reductions per RTT of the tested flow.
    pub halvings_per_rtt: f64,
    /// The same, mean over the competitors.
    pub competitor_halvings_per_rtt: f64,
    /// The tested flow's window over a 3-s excerpt, packets: `(t, cwnd)`.
    pub excerpt: Vec<(f64, f64)>,
}

/// Both traced runs.
#[derive(Debug, Clone, Default)]
pub struct Mechanism {
    /// Simulated time of each run.
    pub duration: Duration,
    /// The paper's mode, then the default.
    pub modes: Vec<ModeStats>,
}

/// Window reductions per RTT of `f` after [`SKIP_SECS`]: samples where the
/// window falls and `ssthresh` changes (persistent congestion included).
fn halvings_per_rtt(f: &FlowResult, end: f64) -> f64 {
    let cuts = f
        .cc_trace
        .to_vec()
        .windows(2)
        .filter(|w| {
            w[0].time_secs >= SKIP_SECS
                && w[1].cwnd_bytes < w[0].cwnd_bytes
                && w[1].ssthresh_bytes != w[0].ssthresh_bytes
        })
        .count();
    let srtt = super::mean(f.intervals.iter().map(|i| i.srtt_ms / 1e3));
    cuts as f64 / ((end - SKIP_SECS) / srtt)
}

/// Run the two traced simulations of `duration` each.
pub fn traced(duration: Duration) -> Result<Mechanism, String> {
    let mut modes = Vec::new();
    for (mode, variant) in [("paper", "paper"), ("default", "default")] {
        let s = scenario(
            tested(variant, PCT, Profile::Ns2),
            N,
            &competitor("quic-newreno", Profile::Ns2),
            1,
            duration,
        );
        let r = run(&s, |_| {}).map_err(|e| format!("{mode}: {e}"))?;
        let f = &r.flows[0];
        let end = duration.as_secs_f64();
        let target = mbit(PCT).bytes_per_sec();
        // The controller's own target: goodput scaled by the QUIC overhead in floor mode.
        let own = if mode == "paper" {
            target
        } else {
            target * MSS / (MSS - f64::from(QUIC_OVERHEAD))
        };
        let srtt = super::mean(f.intervals.iter().map(|i| i.srtt_ms / 1e3));
        let needed = own * srtt / MSS;
        let mut st = ModeStats {
            mode,
            success: f.success_ratio.unwrap_or(f64::NAN),
            mbps: f.bytes as f64 * 8.0 / end / 1e6,
            needed_pkts: needed,
            ..ModeStats::default()
        };
        let (mut total, mut cw, mut goal, mut floor) = (0.0, 0.0, 0.0, 0.0);
        let t = &f.cc_trace;
        let next_times = t.iter().skip(1).map(|s| s.time_secs).chain(std::iter::once(end));
        for (s, next) in t.iter().zip(next_times) {
            if s.time_secs < SKIP_SECS {
                continue;
            }
            let dt = (next - s.time_secs).max(0.0);
            let pkts = s.cwnd_bytes as f64 / MSS;
            total += dt;
            cw += dt * pkts;
            if pkts < needed {
                st.below += dt;
            }
            classify(&s, dt, &mut st);
            goal += dt * s.goal_bytes_per_sec.unwrap_or(f64::NAN) / own;
            floor += dt * s.floor_bytes.unwrap_or(0) as f64 / MSS;
            if s.slot_rtts == Some(2) {
                st.s_at_2 += dt;
                st.s_2_at.get_or_insert(s.time_secs);
            }
        }
        let total = total.max(f64::MIN_POSITIVE);
        st.cwnd_pkts = cw / total;
        st.goal_ratio = goal / total;
        st.floor_pkts = floor / total;
        for x in [
            &mut st.below,
            &mut st.k_forced,
            &mut st.k_clamped,
            &mut st.k_bw,
            &mut st.k_met,
            &mut st.s_at_2,
        ] {
            *x /= total;
        }
        st.halvings_per_rtt = halvings_per_rtt(f, end);
        st.competitor_halvings_per_rtt = super::mean(r.flows[1..].iter().map(|c| halvings_per_rtt(c, end)));
        let from = (end / 6.0).max(SKIP_SECS);
        st.excerpt = t
            .iter()
            .filter(|s| (from..from + 3.0).contains(&s.time_secs))
            .map(|s| (s.time_secs, s.cwnd_bytes as f64 / MSS))
            .collect();
        modes.push(st);
    }
    Ok(Mechanism { duration, modes })
}

/// Which bound set `k` in sample `s`, weighted by `dt`.
fn classify(s: &CcSample, dt: f64, st: &mut ModeStats) {
    let (Some(k), Some(k_bw), Some(k_max)) = (s.k, s.k_bw, s.k_max) else {
        return;
    };
    // k = max(k_min, min(k_bw, k_max)) with k_min = 1 (§2.4).
    let slot = if k_max < 1.0 && k == 1.0 {
        &mut st.k_forced
    } else if k_bw > k_max {
        &mut st.k_clamped
    } else if k_bw < 1.0 {
        &mut st.k_met
    } else {
        &mut st.k_bw
    };
    *slot += dt;
}

impl Mechanism {
    /// The table.
    pub fn table(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "\n== mechanism: one guarantee flow at {PCT} % against {N} QUIC NewReno flows, seed 1, {} s, traced (from 1 s on) ==",
            self.duration.as_secs()
        );
        let mut table = tput_lab::report::Table::new()
            .left("mode", 8)
            .right("success", 7)
            .right("Mbit/s", 6)
            .right("cwnd / needed", 15)
            .right("below", 6)
            .right("k by: forced/k_max/k_bw/met", 27)
            .right("g_i/bw", 6)
            .right("s=2 (from s)", 13)
            .right("floor", 6)
            .right("halvings/RTT", 15);
        for m in &self.modes {
            table.row([
                m.mode.to_string(),
                format!("{:.2}", m.success),
                format!("{:.2}", m.mbps),
                format!("{:.1} / {:.1}", m.cwnd_pkts, m.needed_pkts),
                format!("{:.2}", m.below),
                format!("{:.2}/{:.2}/{:.2}/{:.2}", m.k_forced, m.k_clamped, m.k_bw, m.k_met),
                format!("{:.2}", m.goal_ratio),
                format!(
                    "{:.2} ({})",
                    m.s_at_2,
                    m.s_2_at.map_or("never".into(), |s| format!("{s:.1}"))
                ),
                format!("{:.1}", m.floor_pkts),
                format!("{:.3} vs {:.3}", m.halvings_per_rtt, m.competitor_halvings_per_rtt),
            ]);
        }
        t += &table.text();
        let _ = writeln!(
            t,
            "(cwnd and floor in 1200-byte packets, time-weighted; needed = the controller's target in acknowledged bytes x mean srtt;\n \
             below = share of time under it; halvings = window reductions per RTT, tested vs the competitors' mean)"
        );
        t
    }

    /// `mechanism_cwnd.svg`: the two windows over a 3-s excerpt and the window the target needs.
    pub fn files(&self) -> Vec<(String, String)> {
        let mut series: Vec<Series> = self
            .modes
            .iter()
            .map(|m| Series {
                name: format!("{} mode", m.mode),
                points: m.excerpt.clone(),
            })
            .collect();
        if let Some(m) = self.modes.first()
            && let (Some(a), Some(b)) = (m.excerpt.first(), m.excerpt.last())
        {
            series.push(Series {
                name: "window the target needs".into(),
                points: vec![(a.0, m.needed_pkts), (b.0, m.needed_pkts)],
            });
        }
        vec![(
            "mechanism_cwnd.svg".into(),
            line_chart(
                &format!("Guarantee flow's window, {PCT} % against {N} NewReno flows"),
                "time, s",
                "cwnd, 1200-byte packets",
                &series,
            ),
        )]
    }
}
