//! Property tests over random event sequences, for every controller: the
//! window stays finite and at or above the minimum window, nothing panics,
//! the snapshot agrees with `window()`, and a pacing rate, where a
//! controller has one, is positive and finite.

use std::sync::Arc;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use tput_cc::{
    Ack, AlgorithmState, BandwidthSource, Congestion, CongestionKind, ControllerSpec, RttSample, SharedBandwidth,
    minimum_window,
};

#[derive(Debug, Clone)]
enum Event {
    /// Advance time by `gap_us`, then ack a packet of `bytes` with `rtt_us` of latency.
    Ack {
        gap_us: u32,
        bytes: u16,
        rtt_us: u32,
        app_limited: bool,
    },
    /// End an ACK batch with this much in flight.
    EndAcks { in_flight: u32 },
    /// A congestion signal about a packet sent `age_us` ago.
    Congestion { kind: u8, age_us: u32 },
    /// Send `bytes`.
    Sent { bytes: u16 },
    /// Advance time by `gap_us`, then ack one of the packets sent so far
    /// and still unacknowledged (the `pick`-th, modulo their number), by
    /// its send time as quinn does, and end the ACK batch.
    AckSent { gap_us: u32, pick: u16, app_limited: bool },
    /// The available bandwidth changes (guarantee controller only).
    Available { mbps: u16 },
    /// The path MTU changes.
    Mtu { mtu: u16 },
}

fn event() -> impl Strategy<Value = Event> {
    prop_oneof![
        6 => (0u32..50_000, 1u16..1500, 0u32..2_000_000, any::<bool>())
            .prop_map(|(gap_us, bytes, rtt_us, app_limited)| Event::Ack { gap_us, bytes, rtt_us, app_limited }),
        2 => (0u32..10_000_000).prop_map(|in_flight| Event::EndAcks { in_flight }),
        2 => (0u8..3, 0u32..2_000_000).prop_map(|(kind, age_us)| Event::Congestion { kind, age_us }),
        2 => (1u16..1500).prop_map(|bytes| Event::Sent { bytes }),
        3 => (0u32..50_000, any::<u16>(), any::<bool>())
            .prop_map(|(gap_us, pick, app_limited)| Event::AckSent { gap_us, pick, app_limited }),
        1 => (0u16..2000).prop_map(|mbps| Event::Available { mbps }),
        1 => (1200u16..9000).prop_map(|mtu| Event::Mtu { mtu }),
    ]
}

fn specs() -> Vec<ControllerSpec> {
    [
        "newreno",
        "cubic",
        "cubic:fast_convergence=false,reno_friendly=false",
        "cubic:hystart=true",
        "newreno:hystart=true",
        "newreno:count=acks,hystart=true",
        "vegas",
        "ctcp",
        "fixed:rate=20Mbit/s",
        "guarantee:target=20Mbit/s",
        "guarantee:target=900Mbit/s,eval=4rtt,slot=2rtt",
        "guarantee:target=10Mbit/s,eval=100ms,physical=100Mbit/s",
        "guarantee:target=20Mbit/s,abw=inline",
        "guarantee:target=20Mbit/s,eval=32rtt,slot=16rtt,mode=paper",
        "guarantee:target=900Mbit/s,eval=4rtt,slot=2rtt,mode=paper,margin=0",
        "guarantee:target=1Gbit/s,eval=2rtt,margin=1,overhead=1199",
        "bbr",
        "bbr:startup_gain=1,drain_gain=1,down_gain=0.1,up_gain=100,headroom=0,margin=99,loss_thresh=0.999",
        "bbr:probe_rtt_interval=1ms,min_rtt_window=1ms,probe_rtt_duration=1ns,iw=1,beta=1,seed=7",
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn windows_stay_sane(events in prop::collection::vec(event(), 1..300)) {
        for spec in specs() {
            let bw = SharedBandwidth::new();
            bw.set_physical(tput_cc::units::Rate::from_mbit_per_sec(100));
            let source: Arc<dyn BandwidthSource> = Arc::new(bw.clone());
            let mut cc = spec.build_with(1200, Some(source));
            let mut mss = 1200u64;
            let mut now = Instant::now() + Duration::from_secs(10);
            let mut min_rtt: Option<Duration> = None;
            let mut srtt = Duration::from_millis(333);
            // Packets sent and not yet acknowledged: (send time, bytes).
            let mut outstanding: Vec<(Instant, u64)> = Vec::new();
            for ev in &events {
                match *ev {
                    Event::Ack { gap_us, bytes, rtt_us, app_limited } => {
                        now += Duration::from_micros(gap_us.into());
                        let latest = Duration::from_micros(rtt_us.into());
                        let min = min_rtt.map_or(latest, |m| m.min(latest));
                        min_rtt = Some(min);
                        srtt = (srtt * 7 + latest) / 8;
                        let sent = now.checked_sub(latest).unwrap_or(now);
                        let rtt = RttSample::new(latest, srtt, min);
                        cc.on_ack(now, &Ack::new(sent, bytes.into(), rtt).with_app_limited(app_limited));
                    }
                    Event::EndAcks { in_flight } => cc.on_end_acks(now, in_flight.into(), false),
                    Event::Congestion { kind, age_us } => {
                        let kind = [CongestionKind::Loss, CongestionKind::PersistentCongestion, CongestionKind::Ecn][usize::from(kind)];
                        let sent = now.checked_sub(Duration::from_micros(age_us.into())).unwrap_or(now);
                        let lost_bytes = if kind == CongestionKind::Ecn { 0 } else { mss };
                        cc.on_congestion(now, &Congestion::new(kind, sent, lost_bytes));
                    }
                    Event::Sent { bytes } => {
                        cc.on_sent(now, bytes.into());
                        outstanding.push((now, bytes.into()));
                    }
                    Event::AckSent { gap_us, pick, app_limited } => {
                        now += Duration::from_micros(gap_us.into());
                        if !outstanding.is_empty() {
                            let (sent, bytes) = outstanding.remove(usize::from(pick) % outstanding.len());
                            let latest = now - sent;
                            let min = min_rtt.map_or(latest, |m| m.min(latest));
                            min_rtt = Some(min);
                            srtt = (srtt * 7 + latest) / 8;
                            let rtt = RttSample::new(latest, srtt, min);
                            cc.on_ack(now, &Ack::new(sent, bytes, rtt).with_app_limited(app_limited));
                            let in_flight = outstanding.iter().map(|&(_, b)| b).sum();
                            cc.on_end_acks(now, in_flight, app_limited);
                        }
                    }
                    Event::Available { mbps } => bw.set_available(tput_cc::units::Rate::from_mbit_per_sec(u64::from(mbps))),
                    Event::Mtu { mtu } => {
                        mss = mtu.into();
                        cc.on_mtu_update(mtu);
                    }
                }
                let w = cc.window();
                prop_assert!(w >= minimum_window(u16::try_from(mss).expect("a datagram size")), "{spec}: window {w} below minimum after {ev:?}");
                prop_assert!(w < 1 << 50, "{spec}: window {w} absurd after {ev:?}");
                let snap = cc.snapshot();
                prop_assert_eq!(snap.cwnd_bytes, w, "{}: snapshot disagrees", spec);
                if let Some(ss) = snap.ssthresh_bytes {
                    prop_assert!(ss > 0, "{spec}: zero ssthresh");
                }
                if let Some(rate) = cc.pacing_rate() {
                    prop_assert!(rate > 0, "{spec}: zero pacing rate after {ev:?}");
                }
                if let Some(quantum) = cc.send_quantum() {
                    prop_assert!(quantum > 0 && quantum <= 64 * 1024 + 2 * mss, "{spec}: quantum {quantum}");
                }
                if let AlgorithmState::Bbr { pacing_rate_bytes_per_sec: r, max_bw_bytes_per_sec: bw, .. } = snap.state {
                    prop_assert!(r.is_finite() && r > 0.0, "{spec}: pacing rate {r} after {ev:?}");
                    prop_assert!(bw.is_finite() && bw >= 0.0, "{spec}: max_bw {bw}");
                }
            }
            // A clone carries the same state.
            prop_assert_eq!(cc.clone().window(), cc.window());
            prop_assert_eq!(cc.clone().pacing_rate(), cc.pacing_rate());
        }
    }
}
