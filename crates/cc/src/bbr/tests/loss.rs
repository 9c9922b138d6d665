//! Reactions to loss, ECN, persistent congestion and application-limited
//! samples (draft §5.5.10), odd inputs and the configuration checks.

use super::*;

/// A flow in ProbeBW_UP, a round into the probe's feedback.
fn in_probe_up() -> Sim {
    let mut sim = lossless();
    sim.run_until_state(BbrMode::ProbeBwDown, Duration::from_secs(5));
    sim.run_until_state(BbrMode::ProbeBwUp, Duration::from_secs(5));
    sim.run_until(Duration::from_secs(1), |s| s.cc.ack_phase == AckPhase::ProbeFeedback);
    assert!(sim.cc.is_bw_probe_sample);
    assert_eq!(sim.cc.state, BbrMode::ProbeBwUp);
    sim
}

/// §5.5.10.2 `InflightAtLoss` computed from the path's own bookkeeping.
fn inflight_at_loss(tx_in_flight: u64, lost_since_sent: u64) -> u64 {
    let inflight_prev = (tx_in_flight - MSS) as f64;
    let lost_prev = (lost_since_sent - MSS) as f64;
    (inflight_prev + (0.02 * inflight_prev - lost_prev) / (1.0 - 0.02)) as u64
}

#[test]
fn loss_while_probing_sets_inflight_longterm_and_ends_the_probe() {
    // §5.5.10.2 (and A.21): losses above LossThresh of a probe's flight set
    // inflight_longterm to where the loss rate crossed 2% (at least Beta x
    // the target) and send ProbeBW_UP to ProbeBW_DOWN.
    let mut sim = in_probe_up();
    let target = sim.cc.target_inflight();
    let lost_before = sim.lost_bytes;
    let gone = sim.lose_oldest(4);
    // HandleLostPacket runs per packet, oldest first: the first one whose
    // losses since its send exceed 2% of its tx_in_flight triggers.
    let (k, p) = gone
        .iter()
        .enumerate()
        .find(|&(k, p)| {
            let lost = lost_before - p.lost_before + (k as u64 + 1) * MSS;
            lost as f64 > p.tx_in_flight as f64 * 0.02
        })
        .expect("4 of ~80 packets lost is above 2%");
    let lost_since = lost_before - p.lost_before + (k as u64 + 1) * MSS;
    let want = inflight_at_loss(p.tx_in_flight, lost_since).max((target as f64 * 0.7) as u64);
    let cc = &sim.cc;
    assert_eq!(cc.inflight_longterm, want);
    assert_eq!(cc.state, BbrMode::ProbeBwDown);
    assert!(cc.prev_probe_too_high && !cc.is_bw_probe_sample);
    assert_eq!(cc.undo_state, Some(BbrMode::ProbeBwUp));
    assert_eq!(cc.snapshot().phase, Phase::Recovery);

    // Precautionary probing (§5.3.3.6): the next UP stops as soon as
    // inflight reaches inflight_longterm, and a round later (no excess loss)
    // goes straight back to REFILL and UP, which then persists.
    let start = sim.transitions.len();
    sim.run_for(Duration::from_secs(6), |s| {
        if s.cc.state == BbrMode::ProbeBwCruise {
            // BoundCwndForModel: CRUISE keeps Headroom free.
            assert!(s.cc.cwnd <= s.cc.inflight_with_headroom().max(4 * MSS));
        }
    });
    let tr = &sim.transitions[start..];
    let ups: Vec<usize> = (0..tr.len()).filter(|&i| tr[i].to == BbrMode::ProbeBwUp).collect();
    assert!(ups.len() >= 2, "{:?}", summary(tr));
    let down = &tr[ups[0] + 1];
    assert_eq!(down.to, BbrMode::ProbeBwDown);
    assert!(down.after.prev_probe_precautionary && !down.after.prev_probe_too_high);
    // Stopped as the flight reached inflight_longterm (within the packet a
    // window-limited sender keeps free).
    assert!(down.after.prior_inflight + MSS >= down.after.inflight_longterm);
    let refill = &tr[ups[0] + 2];
    assert_eq!(refill.to, BbrMode::ProbeBwRefill, "{:?}", summary(tr));
    assert_eq!(refill.after.round_count, down.after.round_count + 1);
    assert!(!refill.after.prev_probe_precautionary);
    // The loss-free probes raised inflight_longterm again.
    assert!(sim.cc.inflight_longterm > want);
}

#[test]
fn handling_spurious_fast_recovery() {
    // A.18: a recovery declared spurious restores the models and the probe.
    let mut sim = in_probe_up();
    let cwnd = sim.cc.cwnd;
    sim.lose_oldest(4);
    assert_eq!(sim.cc.state, BbrMode::ProbeBwDown);
    assert_ne!(sim.cc.inflight_longterm, INFINITE);
    sim.cc.on_spurious_loss(sim.now);
    let cc = &sim.cc;
    assert_eq!(cc.inflight_longterm, INFINITE, "restored to its value before the loss");
    assert_eq!(cc.state, BbrMode::ProbeBwRefill, "back to probing");
    assert!(cc.cwnd >= cwnd, "RestoreCwnd");
    assert_eq!(cc.undo_state, None);
    assert!(!cc.is_loss_in_round);
    assert_ne!(cc.snapshot().phase, Phase::Recovery);
}

#[test]
fn loss_when_not_probing_lowers_the_short_term_model_once_per_round() {
    // §5.5.10.3: at the end of a round with loss, bw_shortterm =
    // max(bw_latest, Beta x bw_shortterm) and inflight_shortterm likewise,
    // starting from max_bw and cwnd (InitLowerBounds).
    let mut sim = lossless();
    sim.run_until_state(BbrMode::ProbeBwCruise, Duration::from_secs(5));
    sim.lose_oldest(1);
    assert!(sim.cc.is_loss_in_round);
    assert!(
        sim.cc.bw_shortterm.is_infinite(),
        "nothing changes before the round ends"
    );
    sim.run_until(Duration::from_secs(1), |s| s.cc.bw_shortterm.is_finite());
    let (cc, pre) = (&sim.cc, sim.pre.unwrap());
    let bw_latest = pre.bw_latest.max(cc.rs.delivery_rate.unwrap_or(0.0));
    assert_eq!(cc.bw_shortterm, bw_latest.max(0.7 * cc.max_bw));
    let inflight_latest = pre.inflight_latest.max(cc.rs.delivered);
    assert_eq!(
        cc.inflight_shortterm,
        inflight_latest.max((0.7 * pre.cwnd as f64) as u64)
    );
    assert_eq!(cc.bw, cc.max_bw.min(cc.bw_shortterm), "BoundBWForModel");
    assert!(cc.cwnd <= cc.inflight_shortterm.max(4 * MSS), "BoundCwndForModel");
    assert!(!cc.is_loss_in_round);
    // Another loss in the next round lowers it by Beta at most once more.
    let (bw1, inflight1) = (cc.bw_shortterm, cc.inflight_shortterm);
    sim.lose_oldest(1);
    sim.lose_oldest(1);
    let rounds = sim.cc.round_count;
    sim.run_until(Duration::from_secs(1), |s| s.cc.bw_shortterm != bw1);
    assert!(sim.cc.bw_shortterm >= 0.7 * bw1 - 1e-9);
    assert!(sim.cc.inflight_shortterm >= (0.7 * inflight1 as f64) as u64);
    assert!(sim.cc.round_count <= rounds + 2);
    // REFILL discards the short-term model.
    sim.run_until_state(BbrMode::ProbeBwRefill, Duration::from_secs(4));
    assert!(sim.cc.bw_shortterm.is_infinite());
    assert_eq!(sim.cc.inflight_shortterm, INFINITE);
}

#[test]
fn exiting_startup_on_high_loss() {
    // §5.3.1.3: a queue of 8 packets against a BDP of ~41: Startup overflows
    // it. After a full round in recovery with >2% loss and >= 6 loss
    // events, Startup ends with inflight_longterm = max(bdp, inflight_latest).
    let mut sim = Sim::new(BbrConfig::default(), TEN_MBIT, ms(40), 8 * MSS);
    let mut events_seen = 0;
    sim.run_until(Duration::from_secs(5), |s| {
        events_seen = events_seen.max(s.cc.loss_events_in_round);
        s.cc.state != BbrMode::Startup
    });
    let t = &sim.transitions[0];
    assert_eq!((t.from, t.to), (BbrMode::Startup, BbrMode::Drain));
    let cc = &t.after;
    assert!(sim.drops > 0);
    assert!(events_seen >= 6, "{events_seen}");
    assert!(cc.full_bw_count < 3, "left on loss, not on a plateau");
    assert_eq!(cc.undo_state, Some(BbrMode::Startup));
    assert!(cc.full_bw_reached && cc.full_bw_now);
    // max(bdp, inflight_latest): at least a BDP of the path.
    let bdp = (TEN_MBIT * 0.040) as u64;
    assert!(cc.inflight_longterm >= bdp * 9 / 10, "{}", cc.inflight_longterm);
    assert!(cc.inflight_longterm < 3 * bdp, "{}", cc.inflight_longterm);
}

#[test]
fn persistent_congestion_collapses_cwnd_and_recovery_restores_it() {
    // §5.6.4.4 OnEnterRTO: cwnd = inflight + 1 SMSS (at least 2 SMSS);
    // leaving recovery restores the cwnd saved on entry.
    let mut sim = lossless();
    sim.run_until_state(BbrMode::ProbeBwCruise, Duration::from_secs(5));
    let cwnd = sim.cc.cwnd;
    let n = sim.flight.len();
    let newest = sim.flight.back().unwrap().sent;
    sim.flight.clear();
    sim.dropped_in_flight = 0;
    sim.lose(newest, n as u64 * MSS, CongestionKind::PersistentCongestion);
    assert_eq!(sim.cc.inflight(), 0);
    assert_eq!(sim.cc.window(), 2 * MSS);
    assert_eq!(sim.cc.prior_cwnd, cwnd);
    assert_eq!(sim.cc.snapshot().phase, Phase::Recovery);
    // The next packets are sent after the recovery began: their ACK ends it.
    let mut low = u64::MAX;
    sim.run_until(Duration::from_secs(1), |s| {
        if s.cc.recovery.is_open() {
            low = s.cc.cwnd;
        }
        !s.cc.recovery.is_open()
    });
    assert!(low < cwnd / 4);
    assert!(sim.cc.cwnd >= cwnd.min(sim.cc.inflight_shortterm).min(sim.cc.max_inflight));
}

#[test]
fn ecn_marks_are_treated_as_congestion() {
    // §3.7: a CE mark counts as the loss of one SMSS: outside probing it
    // feeds the short-term model, while probing it counts toward LossThresh.
    let mut sim = lossless();
    sim.run_until_state(BbrMode::ProbeBwCruise, Duration::from_secs(5));
    let inflight = sim.cc.inflight();
    sim.lose(sim.now, 0, CongestionKind::Ecn);
    assert!(sim.cc.is_loss_in_round);
    assert_eq!(sim.cc.sampler.lost(), MSS);
    assert_eq!(sim.cc.inflight(), inflight, "nothing left the network");
    assert_ne!(sim.cc.snapshot().phase, Phase::Recovery);
    sim.run_until(Duration::from_secs(1), |s| s.cc.bw_shortterm.is_finite());

    let mut sim = in_probe_up();
    let tx = sim.cc.inflight() as f64;
    let marks = (tx * 0.02 / MSS as f64).floor() as usize + 1;
    for _ in 0..marks {
        sim.lose(sim.now, 0, CongestionKind::Ecn);
    }
    assert_eq!(sim.cc.state, BbrMode::ProbeBwDown, "{marks} marks of {tx} bytes");
    assert_ne!(sim.cc.inflight_longterm, INFINITE);
}

#[test]
fn app_limited_samples_do_not_lower_max_bw() {
    // A.22 and §5.5.4: while the application sends at a tenth of the path
    // rate, ProbeBW's samples are app-limited and max_bw keeps the path rate.
    let mut sim = lossless();
    sim.run_until_state(BbrMode::ProbeBwCruise, Duration::from_secs(5));
    let max_bw = sim.cc.max_bw;
    sim.app = App::Rate {
        rate: TEN_MBIT / 10.0,
        since: sim.now,
        base: sim.sent_bytes,
    };
    sim.run_for(Duration::from_secs(8), |s| {
        assert!(s.cc.max_bw >= max_bw, "{} < {max_bw}", s.cc.max_bw);
        assert_ne!(s.cc.state, BbrMode::Startup);
    });
    // The cycles went on (REFILL, UP) without advancing the filter away.
    assert!(sim.transitions.iter().any(|t| t.to == BbrMode::ProbeBwUp));
}

#[test]
fn odd_inputs_keep_window_and_pacing_sane() {
    let mut cc = Bbr::new(BbrConfig::default(), DATAGRAM);
    fuzz_odd_inputs(&mut cc, |cc| {
        let rate = cc.pacing_rate().unwrap();
        assert!(rate >= 1);
        assert!(cc.pacing_rate.is_finite() && cc.pacing_rate > 0.0);
        assert!(cc.cwnd as f64 <= MAX_VOLUME);
        assert!(cc.bw.is_finite() && cc.max_bw.is_finite());
    });
}

#[test]
fn config_checks_name_the_parameter() {
    let bad = |f: fn(&mut BbrConfig)| {
        let mut c = BbrConfig::default();
        f(&mut c);
        c.validate().unwrap_err()
    };
    assert!(BbrConfig::default().validate().is_ok());
    let e = bad(|c| c.up_gain = 0.5);
    assert_eq!((e.controller(), e.key()), ("bbr", "up_gain"));
    assert_eq!(e.to_string(), "up_gain: 0.5 must be in [1, 100]");
    assert_eq!(bad(|c| c.startup_gain = 0.5).key(), "startup_gain");
    assert_eq!(bad(|c| c.drain_gain = 1.5).key(), "drain_gain");
    assert_eq!(bad(|c| c.beta = f64::NAN).key(), "beta");
    assert_eq!(bad(|c| c.loss_thresh = 1.0).key(), "loss_thresh");
    assert_eq!(bad(|c| c.headroom = -0.1).key(), "headroom");
    assert_eq!(bad(|c| c.pacing_margin = 100.0).key(), "margin");
    assert_eq!(
        bad(|c| c.probe_rtt_duration = Duration::ZERO).key(),
        "probe_rtt_duration"
    );
    assert_eq!(
        bad(|c| c.min_rtt_window = Duration::from_secs(1)).key(),
        "min_rtt_window"
    );
    assert_eq!(bad(|c| c.initial_window = Some(0)).key(), "iw");
}
