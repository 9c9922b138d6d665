//! NewReno as specified for QUIC by RFC 9002 §7 and Appendix B (the RFC 6582
//! semantics of one window reduction per round trip).

use std::time::Instant;

use crate::controller::{Ack, AlgorithmState, Congestion, CongestionController, Snapshot, init_window};
use crate::error::ConfigError;
pub use crate::reno::Counting;
use crate::reno::{OnePerWindow, RenoCore};

/// Largest `iw` or `lw` accepted, packets.
pub const MAX_WINDOW_PACKETS: u32 = 1_000_000;

/// The windows NewReno starts from and falls back to.
///
/// The defaults are RFC 9002's: an initial window of
/// `min(10 * max_datagram_size, max(14720, 2 * max_datagram_size))` (§7.2)
/// and `kMinimumWindow` = 2 datagrams after persistent congestion (§7.6.2).
/// TCP as RFC 5681 §3.1 and ns-2 2.35 have it starts from `IW` segments
/// (ns-2's `Agent/TCP windowInit_`, default 2) and restarts from the loss
/// window `LW` = 1 segment after a retransmission timeout (ns-2's
/// `slowdown(CLOSE_CWND_RESTART)`): `newreno:iw=2,lw=1`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct NewRenoConfig {
    /// Initial window, packets; `None`: RFC 9002 §7.2's.
    pub initial_window: Option<u32>,
    /// Window after persistent congestion (a TCP retransmission timeout), packets.
    pub loss_window: u32,
    /// How acknowledgements count towards growth (default: bytes, RFC 9002;
    /// `acks`: RFC 5681 §3.1 per ACK, as ns-2).
    #[cfg_attr(feature = "serde", serde(default))]
    pub count: Counting,
    /// Leave the initial slow start by HyStart++ (RFC 9406) when the RTT
    /// grows, instead of at the first loss; default off.
    #[cfg_attr(feature = "serde", serde(default))]
    pub hystart: bool,
}

impl Default for NewRenoConfig {
    fn default() -> Self {
        Self {
            initial_window: None,
            loss_window: 2,
            count: Counting::Bytes,
            hystart: false,
        }
    }
}

impl NewRenoConfig {
    /// ns-2 2.35's `Agent/TCP` windows: `iw = 2`, `lw = 1`.
    pub fn ns2() -> Self {
        Self {
            initial_window: Some(2),
            loss_window: 1,
            count: Counting::Bytes,
            hystart: false,
        }
    }

    /// Check parameter ranges; the message names the bad parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let ok = |n: u32| (1..=MAX_WINDOW_PACKETS).contains(&n);
        if let Some(iw) = self.initial_window
            && !ok(iw)
        {
            return Err(ConfigError::new(
                "newreno",
                "iw",
                format!("{iw} packets is not in 1..={MAX_WINDOW_PACKETS}"),
            ));
        }
        if !ok(self.loss_window) {
            return Err(ConfigError::new(
                "newreno",
                "lw",
                format!("{} packets is not in 1..={MAX_WINDOW_PACKETS}", self.loss_window),
            ));
        }
        Ok(())
    }
}

/// NewReno (RFC 9002 §7).
///
/// - Slow start: `cwnd += acked bytes` while `cwnd < ssthresh` (§7.3.1).
/// - Congestion avoidance: one `max_datagram_size` per window of acked bytes (§7.3.3).
/// - Loss or ECN: `ssthresh = cwnd / 2`, `cwnd = max(ssthresh, kMinimumWindow)`,
///   at most once per round trip: signals about packets sent before the current
///   recovery period began are ignored (§7.3.2, Appendix B.6).
/// - Persistent congestion: `cwnd = kMinimumWindow` (§7.6.2), or the
///   configured loss window.
/// - No growth while application-limited (§7.8) or in recovery.
///
/// [`NewRenoConfig`] can set the initial and the loss window (in packets),
/// count ACKs instead of bytes ([`Counting::Acks`], RFC 5681 §3.1) and leave
/// the initial slow start by HyStart++ (RFC 9406; `newreno:hystart=true`).
#[derive(Debug, Clone)]
pub struct NewReno {
    core: RenoCore,
    initial: u64,
}

impl NewReno {
    /// A NewReno controller for a path with maximum datagram size `max_datagram_size` bytes.
    pub fn new(config: NewRenoConfig, max_datagram_size: u16) -> Self {
        let mss = u64::from(max_datagram_size);
        let initial = config
            .initial_window
            .map_or_else(|| init_window(mss), |n| u64::from(n) * mss);
        Self {
            core: RenoCore::with_windows(mss, initial, u64::from(config.loss_window))
                .with_counting(config.count)
                .with_hystart(config.hystart),
            initial,
        }
    }
}

impl CongestionController for NewReno {
    fn on_ack(&mut self, now: Instant, ack: &Ack) {
        self.core.on_ack(now, ack, &mut OnePerWindow);
    }

    fn on_end_acks(&mut self, _now: Instant, _bytes_in_flight: u64, _app_limited: bool) {
        self.core.on_end_acks();
    }

    fn on_congestion(&mut self, now: Instant, event: &Congestion) {
        self.core.on_congestion(now, event);
    }

    fn on_recovery_end(&mut self, _now: Instant) {
        self.core.end_recovery();
    }

    fn on_mtu_update(&mut self, max_datagram_size: u16) {
        self.core.on_mtu_update(max_datagram_size);
    }

    fn window(&self) -> u64 {
        self.core.window()
    }

    fn initial_window(&self) -> u64 {
        self.initial
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            cwnd_bytes: self.core.window(),
            ssthresh_bytes: self.core.ssthresh(),
            phase: self.core.phase(),
            state: AlgorithmState::NewReno,
        }
    }

    fn clone_box(&self) -> Box<dyn CongestionController> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::{CongestionKind, Phase};
    use crate::testutil::*;
    use std::time::Duration;

    #[test]
    fn slow_start_doubles_per_round_trip() {
        let mut h = Harness::new(NewReno::new(NewRenoConfig::default(), DATAGRAM), RTT);
        let w0 = h.cc.window();
        assert_eq!(w0, 12_000);
        h.round(); // a full window acked
        assert_eq!(h.cc.window(), 2 * w0);
        h.round();
        assert_eq!(h.cc.window(), 4 * w0);
        assert_eq!(h.cc.snapshot().phase, Phase::SlowStart);
    }

    #[test]
    fn halves_once_per_round_trip_not_per_lost_packet() {
        let mut h = Harness::new(NewReno::new(NewRenoConfig::default(), DATAGRAM), RTT);
        h.round();
        h.round();
        let before = h.cc.window(); // 48_000
        let sent = h.now - RTT / 2; // three packets of the same flight are lost
        for _ in 0..3 {
            h.lose(sent, CongestionKind::Loss);
        }
        assert_eq!(h.cc.window(), before / 2);
        assert_eq!(h.cc.snapshot().ssthresh_bytes, Some(before / 2));
        assert_eq!(h.cc.snapshot().phase, Phase::Recovery);
        // Acks for packets sent before the reduction do not grow the window.
        h.ack_sent_at(sent, MSS);
        assert_eq!(h.cc.window(), before / 2);
        // Recovery ends with the ACK of a packet sent after it began;
        // a loss from that later flight halves again.
        h.advance(RTT + Duration::from_millis(1));
        h.ack(MSS);
        assert_eq!(h.cc.snapshot().phase, Phase::CongestionAvoidance);
        h.lose(h.now - RTT / 4, CongestionKind::Loss);
        assert_eq!(h.cc.window(), before / 4);
    }

    #[test]
    fn the_transport_can_end_recovery_before_a_later_packet_is_acked() {
        let mut h = Harness::new(NewReno::new(NewRenoConfig::default(), DATAGRAM), RTT);
        h.round();
        let sent = h.now - RTT / 2;
        h.lose(sent, CongestionKind::Loss);
        let w = h.cc.window();
        assert_eq!(h.cc.snapshot().phase, Phase::Recovery);
        // TCP's fast recovery ends with the ACK that covers `recover`
        // (RFC 6582 §3.2 step 3); that ACK itself does not grow the window.
        h.ack_sent_at(sent, MSS);
        h.cc.on_recovery_end(h.now);
        assert_eq!(h.cc.window(), w);
        assert_eq!(h.cc.snapshot().phase, Phase::CongestionAvoidance);
        // From then on packets sent before the reduction count towards growth.
        h.ack_sent_at(sent, w);
        assert_eq!(h.cc.window(), w + MSS);
        // A new loss reduces again at once, even about an old packet.
        h.lose(sent, CongestionKind::Loss);
        assert_eq!(h.cc.window(), (w + MSS) / 2);
    }

    #[test]
    fn counting_acks_grows_per_ack_and_keeps_the_fraction() {
        let config = NewRenoConfig {
            count: Counting::Acks,
            ..NewRenoConfig::default()
        };
        let mut h = Harness::new(NewReno::new(config, DATAGRAM), RTT);
        // Slow start: an ACK of two packets adds one MSS (RFC 5681 eq. 2),
        // not two (what byte counting adds).
        let t = h.now;
        h.advance(RTT);
        h.ack_sent_at(t, MSS);
        h.ack_sent_at(t, MSS);
        h.cc.on_end_acks(h.now, 0, false);
        assert_eq!(h.cc.window(), 12_000 + MSS);
        h.lose(h.now, CongestionKind::Loss);
        h.cc.on_recovery_end(h.now);
        let w = h.cc.window();
        assert_eq!(w, 6_600);
        // Congestion avoidance: SMSS * SMSS / cwnd per ACK (eq. 3), 218 bytes
        // and a remainder of 1_200 * 1_200 - 218 * 6_600 = 1_200.
        h.ack(MSS);
        assert_eq!(h.cc.window(), w + 218);
        // One MSS more after about cwnd / MSS = 5.5 ACKs: the sixth.
        let mut acks = 1;
        while h.cc.window() < w + MSS {
            h.ack(MSS);
            acks += 1;
        }
        assert_eq!((acks, h.cc.window()), (6, 7_815));
        // An ACK batch without an acked packet (a duplicate) grows nothing.
        let before = h.cc.window();
        h.cc.on_end_acks(h.now, 0, false);
        assert_eq!(h.cc.window(), before);
    }

    #[test]
    fn congestion_avoidance_adds_one_packet_per_window() {
        let mut h = Harness::new(NewReno::new(NewRenoConfig::default(), DATAGRAM), RTT);
        h.round();
        h.lose(h.now - RTT / 2, CongestionKind::Loss); // cwnd = ssthresh = 12_000
        let w = h.cc.window();
        assert_eq!(w, 12_000);
        h.round(); // ACKs of the flight sent before the reduction: no growth
        assert_eq!(h.cc.window(), w);
        h.round();
        assert_eq!(h.cc.window(), w + MSS);
        h.round();
        assert_eq!(h.cc.window(), w + 2 * MSS);
    }

    #[test]
    fn persistent_congestion_collapses_to_minimum_and_restarts_slow_start() {
        let mut h = Harness::new(NewReno::new(NewRenoConfig::default(), DATAGRAM), RTT);
        h.round();
        h.round();
        h.lose(h.now - RTT, CongestionKind::PersistentCongestion);
        assert_eq!(h.cc.window(), 2 * MSS);
        assert_eq!(h.cc.snapshot().ssthresh_bytes, Some(24_000));
        h.flight.clear(); // persistent congestion declared the whole flight lost
        h.advance(RTT);
        h.round();
        assert_eq!(h.cc.window(), 4 * MSS);
    }

    #[test]
    fn ns2_windows_start_at_two_and_restart_at_one_packet() {
        let mut h = Harness::new(NewReno::new(NewRenoConfig::ns2(), DATAGRAM), RTT);
        assert_eq!(h.cc.window(), 2 * MSS);
        assert_eq!(h.cc.initial_window(), 2 * MSS);
        h.round();
        h.round();
        assert_eq!(h.cc.window(), 8 * MSS);
        h.lose(h.now - RTT, CongestionKind::PersistentCongestion);
        assert_eq!(h.cc.window(), MSS);
        // ssthresh keeps RFC 9002's floor of two packets (ns-2: 2 as well).
        assert_eq!(h.cc.snapshot().ssthresh_bytes, Some(4 * MSS));
        h.flight.clear();
        h.advance(RTT);
        h.round();
        assert_eq!(h.cc.window(), 2 * MSS);
        // A loss at a small window halves to no less than two packets.
        h.lose(h.now - RTT / 2, CongestionKind::Loss);
        assert_eq!(h.cc.window(), 2 * MSS);
    }

    #[test]
    fn window_parameters_are_validated() {
        assert!(NewRenoConfig::ns2().validate().is_ok());
        let bad_iw = NewRenoConfig {
            initial_window: Some(0),
            ..NewRenoConfig::default()
        };
        assert_eq!(bad_iw.validate().unwrap_err().key(), "iw");
        let bad_lw = NewRenoConfig {
            loss_window: 0,
            ..NewRenoConfig::default()
        };
        assert_eq!(
            bad_lw.validate().unwrap_err().to_string(),
            format!("lw: 0 packets is not in 1..={MAX_WINDOW_PACKETS}")
        );
    }

    #[test]
    fn ecn_reduces_like_loss_and_app_limited_acks_do_not_grow() {
        let mut h = Harness::new(NewReno::new(NewRenoConfig::default(), DATAGRAM), RTT);
        h.lose(h.now, CongestionKind::Ecn);
        assert_eq!(h.cc.window(), 6_000);
        h.advance(RTT);
        h.app_limited = true;
        h.round();
        assert_eq!(h.cc.window(), 6_000);
    }
}
