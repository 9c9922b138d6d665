//! The state machine's transitions: Startup, Drain, the ProbeBW cycle and
//! ProbeRTT (draft §5.3), on loss-free paths.

use super::*;

#[test]
fn starts_in_startup_with_the_drafts_gains_and_initial_pacing_rate() {
    let cc = Bbr::new(BbrConfig::default(), DATAGRAM);
    assert_eq!(cc.mode(), BbrMode::Startup);
    assert_eq!((cc.pacing_gain, cc.cwnd_gain), table_gains(BbrMode::Startup));
    assert_eq!(cc.window(), 12_000, "RFC 9002 initial window");
    // §5.6.2 InitPacingRate before any RTT sample: 2.77 * InitialCwnd / 1 ms.
    assert_eq!(cc.pacing_rate(), Some((2.77 * 12_000.0 / 0.001) as u64));
    assert_eq!(cc.inflight_longterm, INFINITE);
    assert_eq!(cc.snapshot().phase, Phase::SlowStart);
}

#[test]
fn exiting_startup_on_bandwidth_plateau() {
    // A.1: Startup -> Drain once three rounds grow the rate by less than 25%.
    let mut sim = lossless();
    let mut startup_pacing = 0;
    let mut counts = Vec::new();
    while sim.cc.state == BbrMode::Startup {
        sim.step();
        assert!(sim.elapsed() < Duration::from_secs(5));
        if sim.cc.state == BbrMode::Startup && sim.cc.has_seen_rtt {
            // After InitPacingRate with the first RTT sample, Startup never
            // lowers its pacing rate (§5.6.2).
            let rate = sim.cc.pacing_rate().unwrap();
            assert!(rate >= startup_pacing, "{rate} < {startup_pacing}");
            startup_pacing = rate;
            if counts.last() != Some(&sim.cc.full_bw_count) {
                counts.push(sim.cc.full_bw_count);
            }
        }
    }
    let t = &sim.transitions[0];
    assert_eq!((t.from, t.to), (BbrMode::Startup, BbrMode::Drain));
    assert!(t.after.full_bw_reached && t.after.full_bw_now);
    assert_eq!(t.after.full_bw_count, 3);
    // The count went 0, 1, 2 before the exit: consecutive rounds.
    assert!(counts.ends_with(&[0, 1, 2]), "{counts:?}");
    assert_eq!(sim.drops, 0);
    // "ensure the estimated bandwidth (BBR.max_bw) is close (i.e., within
    // 2%) to the simulated bandwidth".
    let err = t.after.max_bw / TEN_MBIT - 1.0;
    assert!(err.abs() < 0.02, "max_bw {} vs {TEN_MBIT}", t.after.max_bw);
    let min_rtt = t.after.min_rtt.unwrap();
    assert!(min_rtt >= ms(40) && min_rtt < ms(41), "{min_rtt:?}");
    assert_eq!((t.after.pacing_gain, t.after.cwnd_gain), table_gains(BbrMode::Drain));
}

#[test]
fn exiting_drain_based_on_inflight() {
    // A.3: Drain -> ProbeBW_DOWN when inflight <= Inflight(1.0).
    let mut sim = lossless();
    sim.run_until_state(BbrMode::Drain, Duration::from_secs(5));
    let drain = sim.transitions.len();
    sim.run_until(Duration::from_secs(2), |s| s.cc.state != BbrMode::Drain);
    let t = &sim.transitions[drain];
    let cc = &t.after;
    // EnterProbeBW starts ProbeBW_DOWN; with inflight already at the BDP and
    // no inflight_longterm, the same ACK's UpdateProbeBWCyclePhase finds it
    // time to cruise (§5.3.3.9 IsTimeToCruise).
    assert_eq!(t.from, BbrMode::Drain);
    assert!(
        matches!(t.to, BbrMode::ProbeBwDown | BbrMode::ProbeBwCruise),
        "{:?}",
        t.to
    );
    assert_eq!(cc.cycle_stamp, Some(sim.t0 + t.at), "ProbeBW_DOWN started on this ACK");
    assert!(cc.inflight() <= cc.inflight_with_gain(cc.bw, 1.0));
    assert!(
        cc.round_count <= cc.drain_start_round + 3,
        "left by inflight, not by time"
    );
    assert_eq!((cc.pacing_gain, cc.cwnd_gain), table_gains(t.to));
}

#[test]
fn exiting_drain_based_on_time() {
    // A.4: the bandwidth falls when Drain begins, so Drain's 0.5 x max_bw
    // cannot empty the queue; ProbeBW begins after 3 rounds of Drain.
    let mut sim = lossless();
    sim.run_until_state(BbrMode::Drain, Duration::from_secs(5));
    sim.rate = TEN_MBIT * 0.45;
    let drain = sim.transitions.len();
    sim.run_until(Duration::from_secs(5), |s| s.cc.state != BbrMode::Drain);
    let t = &sim.transitions[drain];
    assert_eq!((t.from, t.to), (BbrMode::Drain, BbrMode::ProbeBwDown));
    let cc = &t.after;
    assert_eq!(cc.round_count, cc.drain_start_round + 4);
    assert!(cc.inflight() > cc.inflight_with_gain(cc.bw, 1.0));
}

/// Check §5.6's control parameters against the model after every event of
/// a run past Startup.
fn check_controls(s: &Sim) {
    let cc = &s.cc;
    let (pacing_gain, cwnd_gain) = table_gains(cc.state);
    assert_eq!(
        (cc.pacing_gain, cc.cwnd_gain),
        (pacing_gain, cwnd_gain),
        "{:?}",
        cc.state
    );
    if cc.full_bw_reached && !cc.idle_restart && cc.bw > 0.0 {
        // SetPacingRate: pacing_gain * bw * (100 - 1) / 100.
        let want = pacing_gain * cc.bw * 0.99;
        assert!(
            (cc.pacing_rate - want).abs() <= want * 1e-12,
            "{} vs {want}",
            cc.pacing_rate
        );
        // SetCwnd with BBR.full_bw_reached: never above max_inflight (but MinPipeCwnd).
        assert!(cc.cwnd <= cc.max_inflight.max(4 * MSS));
    }
    let quantum = (cc.pacing_rate * 0.001).min(65_536.0) as u64;
    assert_eq!(cc.send_quantum().unwrap(), quantum.max(2 * MSS));
    assert!(cc.window() >= 4 * MSS || cc.recovery.is_open());
}

#[test]
fn the_probe_bw_cycle_down_cruise_refill_up() {
    // 10 Mbit/s, 40 ms: BDP ~ 41 packets, so the Reno-coexistence bound
    // (§5.3.3.8.2, min(BDP, 63) rounds, ~1.7 s) starts each probe before
    // T_bbr's 2-3 s.
    let mut sim = lossless();
    sim.run_until_state(BbrMode::ProbeBwDown, Duration::from_secs(5));
    let start = sim.transitions.len();
    sim.run_for(Duration::from_secs(12), check_controls);
    assert_eq!(sim.drops, 0);
    let tr = &sim.transitions[start..];
    for t in tr {
        assert!(allowed(t.from, t.to), "{:?} -> {:?} at {:?}", t.from, t.to, t.at);
    }
    let count = |from, to| tr.iter().filter(|t| (t.from, t.to) == (from, to)).count();
    use BbrMode::*;
    assert!(count(ProbeBwDown, ProbeBwCruise) >= 3, "{:?}", summary(tr));
    assert!(count(ProbeBwRefill, ProbeBwUp) >= 3);
    assert!(count(ProbeBwUp, ProbeBwDown) >= 3);
    let mut up_cycles = Vec::new();
    for (i, t) in tr.iter().enumerate() {
        let cc = &t.after;
        match (t.from, t.to) {
            (ProbeBwDown, ProbeBwCruise) => {
                // IsTimeToCruise: headroom and no queue.
                assert!(cc.inflight() <= cc.inflight_with_headroom());
                assert!(cc.inflight() <= cc.inflight_with_gain(cc.max_bw, 1.0));
            }
            (ProbeBwDown | ProbeBwCruise, ProbeBwRefill) => {
                // IsTimeToProbeBW: the wall clock or the Reno bound, in rounds.
                let waited = t.at - cc.cycle_stamp.unwrap().duration_since(sim.t0);
                let reno = (cc.target_inflight() / MSS).min(63);
                assert!(
                    waited > cc.bw_probe_wait || cc.rounds_since_probe_up >= reno,
                    "waited {waited:?} of {:?}, {} of {reno} rounds",
                    cc.bw_probe_wait,
                    cc.rounds_since_probe_up
                );
                assert!(cc.bw_probe_wait >= Duration::from_secs(2) && cc.bw_probe_wait < Duration::from_secs(3));
                assert!(cc.bw_shortterm.is_infinite() && cc.inflight_shortterm == INFINITE);
            }
            (ProbeBwRefill, ProbeBwUp) => {
                // One packet-timed round of REFILL.
                let refill = &tr[i - 1];
                assert_eq!(refill.to, ProbeBwRefill);
                assert_eq!(cc.round_count, refill.after.round_count + 1);
                assert!(cc.is_bw_probe_sample);
                up_cycles.push(cc.max_bw_filter.cycle_count);
            }
            (ProbeBwUp, ProbeBwDown) => {
                // IsTimeToGoDown on a plateau: no loss, full_bw_now.
                let up = &tr[i - 1];
                assert!(!cc.prev_probe_too_high);
                assert!(cc.round_count >= up.after.round_count + 3, "a plateau takes 3 rounds");
            }
            _ => {}
        }
    }
    // §5.5.6: the max_bw filter advances a round after each UP (and once
    // more after a ProbeRTT, which restarts the cycle at ProbeBW_DOWN).
    for w in up_cycles.windows(2) {
        assert!(w[1] > w[0] && w[1] <= w[0] + 2, "{up_cycles:?}");
    }
    // max_bw stays the path's rate through the cycles.
    assert!((sim.cc.max_bw / TEN_MBIT - 1.0).abs() < 0.02);
}

#[test]
fn bandwidth_probes_wait_two_to_three_seconds_on_a_large_bdp() {
    // 100 Mbit/s, 100 ms: BDP ~ 1040 packets, so the Reno bound is 63
    // rounds (6.3 s) and T_bbr (2-3 s, §5.3.3.8.2) starts the probe.
    let mut waits = Vec::new();
    for seed in [0, 1] {
        let config = BbrConfig {
            seed,
            ..BbrConfig::default()
        };
        let mut sim = Sim::new(config, 12.5e6, ms(100), u64::MAX);
        sim.run_until_state(BbrMode::ProbeBwDown, Duration::from_secs(5));
        sim.run_until_state(BbrMode::ProbeBwRefill, Duration::from_secs(4));
        let t = sim.transitions.last().unwrap();
        let cc = &t.after;
        let waited = t.at - cc.cycle_stamp.unwrap().duration_since(sim.t0);
        assert!(waited > cc.bw_probe_wait, "{waited:?} {:?}", cc.bw_probe_wait);
        // The first ACK after the wait ends it (ACKs arrive every ~0.1 ms).
        assert!(waited < cc.bw_probe_wait + ms(1), "{waited:?} {:?}", cc.bw_probe_wait);
        assert!(cc.rounds_since_probe_up < 63);
        waits.push(cc.bw_probe_wait);
    }
    assert_ne!(waits[0], waits[1], "seeds draw different waits");
}

#[test]
fn runs_are_reproducible() {
    let run = || {
        let mut sim = lossless();
        sim.run_for(Duration::from_secs(4), |_| {});
        summary(&sim.transitions)
    };
    assert_eq!(run(), run());
}

#[test]
fn entering_and_exiting_probe_rtt() {
    // A.10: no lower RTT for ProbeRTTInterval (the path's RTT never falls
    // below the first sample) -> ProbeRTT, then back to ProbeBW_CRUISE.
    let mut sim = lossless();
    let mut in_probe_rtt = Vec::new();
    sim.run_for(Duration::from_secs(12), |s| {
        if s.cc.state == BbrMode::ProbeRtt {
            in_probe_rtt.push((s.now, s.cc.cwnd, s.cc.probe_rtt_cwnd(), s.cc.inflight()));
        }
    });
    let tr = &sim.transitions;
    let entries: Vec<&Transition> = tr.iter().filter(|t| t.to == BbrMode::ProbeRtt).collect();
    assert_eq!(entries.len(), 2, "{:?}", summary(tr));
    for e in &entries {
        // Entered once the min-delay stamp was more than 5 s old ...
        let stamp = e.probe_stamp_before.unwrap();
        let age = sim.t0 + e.at - stamp;
        assert!(
            age > Duration::from_secs(5) && age < Duration::from_millis(5100),
            "{age:?}"
        );
        assert_eq!((e.after.pacing_gain, e.after.cwnd_gain), table_gains(BbrMode::ProbeRtt));
    }
    // ... with cwnd held at ProbeRTTCwnd = max(0.5 BDP, 4 SMSS).
    for &(_, cwnd, cap, _) in &in_probe_rtt {
        assert!(cwnd <= cap, "{cwnd} > {cap}");
    }
    let exits: Vec<&Transition> = tr.iter().filter(|t| t.from == BbrMode::ProbeRtt).collect();
    assert_eq!(exits.len(), 2);
    for (e, x) in entries.iter().zip(&exits) {
        assert_eq!(x.to, BbrMode::ProbeBwCruise, "full_bw_reached: back to ProbeBW");
        // ProbeRTTDuration after inflight fell to ProbeRTTCwnd, and a round.
        let drained = in_probe_rtt
            .iter()
            .find(|&&(t, _, cap, inflight)| t >= sim.t0 + e.at && inflight <= cap)
            .unwrap()
            .0;
        assert!(sim.t0 + x.at > drained + ms(200));
        assert!(x.after.round_count > e.after.round_count);
        // RestoreCwnd: the cwnd saved at entry comes back (up to the model's caps).
        assert!(x.after.cwnd >= e.after.prior_cwnd.min(x.after.max_inflight));
        assert!(x.after.bw_shortterm.is_infinite(), "ResetShortTermModel");
    }
    // The exit schedules the next ProbeRTT ProbeRTTInterval later.
    let gap = entries[1].at - exits[0].at;
    assert!(
        gap > Duration::from_secs(5) && gap < Duration::from_millis(5100),
        "{gap:?}"
    );
}

#[test]
fn probe_rtt_during_startup_returns_to_startup_and_app_limited_startup_never_ends() {
    // A.20 and A.7: an application sending 1 Mbit/s on a 10 Mbit/s path
    // keeps every sample app-limited, so Startup never sees a plateau; after
    // 5 s without a lower RTT it enters ProbeRTT and comes back to Startup.
    let mut sim = lossless();
    sim.app = App::Rate {
        rate: TEN_MBIT / 10.0,
        since: sim.t0,
        base: 0,
    };
    sim.run_for(Duration::from_secs(7), |s| assert!(!s.cc.full_bw_reached));
    let modes: Vec<(BbrMode, BbrMode)> = sim.transitions.iter().map(|t| (t.from, t.to)).collect();
    assert_eq!(
        modes,
        [
            (BbrMode::Startup, BbrMode::ProbeRtt),
            (BbrMode::ProbeRtt, BbrMode::Startup)
        ]
    );
    assert!(sim.transitions[0].at > Duration::from_secs(5));
    assert_eq!(sim.drops, 0);
    // App-limited samples above the estimate still raise it (§5.5.4): it
    // reflects the application's rate.
    let ratio = sim.cc.max_bw / (TEN_MBIT / 10.0);
    assert!(ratio > 0.9 && ratio < 1.5, "{ratio}");
}

#[test]
fn skipping_probe_rtt_due_to_application_limited_sending() {
    // A.11: after an idle period longer than ProbeRTTInterval the restart is
    // marked idle_restart and ProbeRTT is skipped.
    let mut sim = lossless();
    sim.run_until_state(BbrMode::ProbeBwCruise, Duration::from_secs(5));
    let before = sim.cc.max_bw;
    sim.app = App::Paused {
        until: sim.now + Duration::from_secs(6),
    };
    sim.run_until(Duration::from_secs(7), |s| {
        s.sent_bytes > 0 && s.flight.is_empty() && s.now > s.t0
    });
    // The connection drained its flight while app-limited ...
    assert!(sim.cc.sampler.is_app_limited());
    // ... and resumes after the pause with nothing in flight.
    let resumed = sim.transitions.len();
    sim.run_until(Duration::from_secs(7), |s| !s.flight.is_empty());
    assert!(sim.cc.idle_restart, "HandleRestartFromIdle");
    if sim.cc.state.is_probe_bw() {
        // "BBR sets C.pacing_rate to exactly BBR.bw" (with the 1% margin).
        let want = sim.cc.bw * 0.99;
        assert!((sim.cc.pacing_rate - want).abs() < 1e-6 * want);
    }
    sim.run_for(Duration::from_secs(3), |_| {});
    assert!(
        sim.transitions[resumed..].iter().all(|t| t.to != BbrMode::ProbeRtt),
        "{:?}",
        summary(&sim.transitions[resumed..])
    );
    assert!(!sim.cc.idle_restart, "cleared by the first ACK that delivered data");
    assert!(before > 0.0 && (sim.cc.max_bw / TEN_MBIT - 1.0).abs() < 0.02);
}
