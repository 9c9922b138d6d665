//! Delivery-rate sampling: how fast the network delivered the most recent
//! flight of data, measured from the sender's own ACK stream
//! (draft-ietf-ccwg-bbr-06 §4.1); see [`DeliveryRateSampler`].

use std::time::{Duration, Instant};

use crate::send_ring::{SendRecord, SendRing, Sent};

/// At most this many send records are kept (oldest dropped first), so that
/// memory stays bounded whatever the caller does. 65 536 records are 78 MB
/// in flight at 1200-byte packets, far beyond any path we simulate.
const MAX_RECORDS: usize = 1 << 16;

/// The snapshot taken when data was sent (§4.1.2.1.2), for one send instant.
#[derive(Debug, Clone, Copy)]
struct SentRecord {
    /// `P.send_time`, `P.delivered`, `P.delivered_time`, `P.first_send_time`.
    state: SendRecord,
    /// Bytes sent at this instant.
    bytes: u64,
    /// Bytes of it neither acknowledged nor lost yet.
    unacked: u64,
    /// `P.lost`.
    lost: u64,
    /// `P.tx_in_flight`: `C.inflight` right after this instant's sends.
    tx_in_flight: u64,
    /// `P.is_app_limited`.
    is_app_limited: bool,
}

impl Sent for SentRecord {
    #[inline]
    fn record(&self) -> &SendRecord {
        &self.state
    }
}

/// One rate sample, `RS` of §2.3 and §4.1.2.1.3, generated per ACK frame.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RateSample {
    /// `RS.delivery_rate` in bytes per second: `delivered / interval`;
    /// `None` when this ACK gave no reliable sample (nothing with send state
    /// was acknowledged, or the interval is shorter than the minimum RTT).
    pub delivery_rate: Option<f64>,
    /// `RS.is_app_limited`: the newest acknowledged packet was sent while the
    /// connection was application-limited.
    pub is_app_limited: bool,
    /// `RS.interval`: `max(send_elapsed, ack_elapsed)`.
    pub interval: Duration,
    /// `RS.delivered`: bytes delivered over the interval.
    pub delivered: u64,
    /// `RS.prior_delivered`: `P.delivered` of the newest acknowledged packet;
    /// `None` when no acknowledged packet had send state (then the other
    /// fields taken from that packet are zero).
    pub prior_delivered: Option<u64>,
    /// `RS.prior_time`: `P.delivered_time` of the newest acknowledged packet.
    pub prior_time: Option<Instant>,
    /// `RS.send_elapsed` (§4.1.1.2.3).
    pub send_elapsed: Duration,
    /// `RS.ack_elapsed` (§4.1.1.2.1).
    pub ack_elapsed: Duration,
    /// `RS.rtt`: the RTT sample of the newest acknowledged packet (§4.2).
    pub rtt: Option<Duration>,
    /// `RS.newly_acked`: bytes acknowledged by this ACK frame.
    pub newly_acked: u64,
    /// `RS.newly_lost`: bytes declared lost since the previous ACK frame.
    pub newly_lost: u64,
    /// `RS.tx_in_flight`: `P.tx_in_flight` of the newest acknowledged packet.
    pub tx_in_flight: u64,
    /// `RS.lost`: bytes declared lost between the sending and the
    /// acknowledgement of the newest acknowledged packet (`C.lost - P.lost`).
    pub lost: u64,
}

/// What the model needs of a lost packet (or of the lost part of a send
/// aggregate), for draft-ietf-ccwg-bbr-06 §5.5.10.2's `HandleLostPacket(P)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LostPacket {
    /// When it was sent.
    pub send_time: Instant,
    /// `P.size`: bytes of it declared lost now.
    pub size: u64,
    /// `P.tx_in_flight`.
    pub tx_in_flight: u64,
    /// `C.lost - P.lost`: bytes lost since it was sent, its own included.
    pub lost_since_sent: u64,
    /// `P.is_app_limited`.
    pub is_app_limited: bool,
}

/// The per-ACK accumulator of §4.1.2.3 (`InitRateSample` .. `GenerateRateSample`).
#[derive(Debug, Clone, Copy, Default)]
struct Pending {
    /// The newest acknowledged record's snapshot, once any had one.
    newest: Option<SentRecord>,
    /// `RS.rtt` of the newest acknowledged packet.
    rtt: Option<Duration>,
    newly_acked: u64,
    newly_lost: u64,
}

/// The delivery-rate estimator of draft-ietf-ccwg-bbr-06 §4.1.
///
/// The algorithm is the one of draft-cheng-iccrg-delivery-rate-estimation-02,
/// which draft-ietf-ccwg-bbr-06 now carries as its §4.1 ("Delivery Rate
/// Samples"); section numbers below are those of draft-ietf-ccwg-bbr-06.
/// Any controller can embed one: feed it the
/// [`CongestionController`](crate::CongestionController) calls it sees and
/// read one [`RateSample`] per ACK frame.
///
/// # Per-packet state keyed by send time
///
/// The draft keeps a snapshot of the connection's delivery state per packet
/// (§4.1.2.1.2: `P.delivered`, `P.delivered_time`, `P.first_send_time`,
/// `P.is_app_limited`, `P.tx_in_flight`, `P.lost`) and finds it again when
/// the packet is acknowledged. quinn-proto 0.11's congestion hook names no
/// packet on acknowledgement (`on_ack(now, sent, bytes, app_limited, rtt)`),
/// only the packet's send time, and calls `on_sent` once per transmit (a GSO
/// batch is one call). So the sampler keeps one record per send *time*:
/// - every `on_sent` at a new instant opens a record; further sends at the
///   same instant (the rest of a GSO batch, another `poll_transmit` in the
///   same event) join it, keeping the first send's snapshot — the state at
///   that instant before any later ACK, a sample over a slightly longer
///   interval. §4.1.3.1 recommends exactly this for offload: "it is
///   RECOMMENDED that the per-packet state ... be tracked for each packet
///   'aggregate' rather than each IP packet";
/// - an ACK of a packet sent at `t` uses the record of `t` and takes the
///   packet's bytes off it; the record goes once all its bytes are acked
///   or lost (a partly acknowledged aggregate keeps its snapshot, as a split
///   TSO segment does in Linux);
/// - the simulator's TCP model calls `on_sent` per segment, so there a
///   record is a segment (or the segments sent in one instant).
///
/// Losses carry no send times that name every lost packet (quinn reports one
/// event per loss detection with the total bytes and the newest lost packet's
/// send time; the TCP model reports the time of the event), so
/// [`lose_oldest`](DeliveryRateSampler::lose_oldest) takes lost bytes from
/// the *oldest* records: in QUIC every unacknowledged packet older than a
/// lost one is lost too (RFC 9002 §6.1's thresholds grow with age), and a
/// TCP fast retransmit loses the oldest segment. Records of packets that are
/// never acknowledged nor declared lost (quinn's ACK-only packets are not in
/// flight) are dropped oldest-first whenever the records hold more bytes than
/// the transport says are in flight.
///
/// # Application-limited marking
///
/// §4.1.2.4 marks the connection application-limited when the sender has run
/// out of data with window to spare. quinn-proto computes that condition
/// itself after each `poll_transmit` (no data and not blocked by the window
/// or the pacer) and passes it as `app_limited` with every ACK; the caller
/// calls [`mark_app_limited`](DeliveryRateSampler::mark_app_limited) when it
/// is set, which starts the "bubble" of §4.1.1.3 at `C.delivered + C.inflight`.
///
/// # Data counts as delivered when the caller reports its ACK
///
/// Linux counts selectively acknowledged data as delivered when the SACK
/// arrives. A transport that reports such data only once the cumulative
/// ACK covers it (the simulator's TCP model, ns-2 style) makes the first
/// sample after a loss recovery count a recovery's worth of data, delivered
/// over several round trips, in one round trip: an inflated rate (the
/// ambiguity of §4.1.3.5). quinn-proto reports every packet as its ACK
/// range arrives.
///
/// ```
/// use std::time::{Duration, Instant};
/// use tput_cc::DeliveryRateSampler;
///
/// let mut s = DeliveryRateSampler::new();
/// let t0 = Instant::now();
/// let rtt = Duration::from_millis(10);
/// // Ten 1000-byte packets, one every millisecond; each acked one RTT later.
/// for i in 0..10 {
///     s.on_sent(t0 + Duration::from_millis(i), 1000);
/// }
/// let mut last = None;
/// for i in 0..10 {
///     let sent = t0 + Duration::from_millis(i);
///     s.on_ack(sent + rtt, sent, 1000, rtt);
///     last = s.end_ack(Some(s.inflight())).delivery_rate;
/// }
/// // The last sample spans the whole flight: 10 000 bytes over 19 ms
/// // (from the first send, as nothing was in flight before it).
/// assert!((last.unwrap() - 10_000.0 / 0.019).abs() < 1.0);
/// ```
#[derive(Debug, Clone)]
pub struct DeliveryRateSampler {
    /// `C.delivered`.
    delivered: u64,
    /// `C.delivered_time`.
    delivered_time: Option<Instant>,
    /// `C.first_send_time`.
    first_send_time: Option<Instant>,
    /// `C.lost`.
    lost: u64,
    /// `C.app_limited`: the end of the application-limited bubble, 0 if none.
    app_limited: u64,
    /// `C.inflight`, counted here and set to the transport's value at the
    /// end of every ACK frame.
    inflight: u64,
    /// `C.min_rtt`: the smallest positive RTT sample seen.
    min_rtt: Option<Duration>,
    /// Send records, oldest first, at strictly increasing send times.
    records: SendRing<SentRecord>,
    /// Sum of `unacked` over `records`.
    recorded: u64,
    pending: Pending,
    /// The newest record acknowledged by the latest ACK frame that had one.
    last_acked: Option<SentRecord>,
}

impl Default for DeliveryRateSampler {
    fn default() -> Self {
        Self::new()
    }
}

impl DeliveryRateSampler {
    /// A sampler for a connection that has sent nothing yet.
    pub fn new() -> Self {
        Self {
            delivered: 0,
            delivered_time: None,
            first_send_time: None,
            lost: 0,
            app_limited: 0,
            inflight: 0,
            min_rtt: None,
            records: SendRing::new(MAX_RECORDS, 0),
            recorded: 0,
            pending: Pending::default(),
            last_acked: None,
        }
    }

    /// `C.delivered`: bytes acknowledged over the connection's lifetime.
    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    /// `C.lost`: bytes declared lost over the connection's lifetime.
    pub fn lost(&self) -> u64 {
        self.lost
    }

    /// `C.inflight`: the sampler's count of bytes in flight.
    pub fn inflight(&self) -> u64 {
        self.inflight
    }

    /// Whether the connection is marked application-limited (`C.app_limited != 0`).
    pub fn is_app_limited(&self) -> bool {
        self.app_limited != 0
    }

    /// `C.min_rtt`: the smallest positive RTT sample given to [`on_ack`](Self::on_ack).
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// `bytes` were sent at `now` (§4.1.2.2 `OnPacketSent`).
    pub fn on_sent(&mut self, now: Instant, bytes: u64) {
        if bytes == 0 {
            return;
        }
        // A send time before the newest record's (input out of order) joins it.
        let now = self.records.newest().map_or(now, |r| r.state.send_time.max(now));
        if self.inflight == 0 {
            // "If there is no data in flight yet, then we can start the
            // delivery rate interval at the current time".
            self.first_send_time = Some(now);
            self.delivered_time = Some(now);
        }
        self.inflight = self.inflight.saturating_add(bytes);
        self.recorded = self.recorded.saturating_add(bytes);
        let is_app_limited = self.app_limited != 0;
        match self.records.newest_mut() {
            Some(r) if r.state.send_time == now => {
                r.bytes = r.bytes.saturating_add(bytes);
                r.unacked = r.unacked.saturating_add(bytes);
                r.tx_in_flight = self.inflight;
                r.is_app_limited |= is_app_limited;
            }
            _ => {
                let dropped = self.records.push(SentRecord {
                    state: SendRecord {
                        send_time: now,
                        delivered: self.delivered,
                        delivered_time: self.delivered_time.unwrap_or(now),
                        first_send_time: self.first_send_time.unwrap_or(now),
                    },
                    bytes,
                    unacked: bytes,
                    lost: self.lost,
                    tx_in_flight: self.inflight,
                    is_app_limited,
                });
                if let Some(r) = dropped {
                    self.recorded -= r.unacked;
                }
            }
        }
    }

    /// `MarkConnectionAppLimited()` of §4.1.2.4: the bubble ends once
    /// everything now delivered or in flight has been delivered.
    pub fn mark_app_limited(&mut self) {
        self.app_limited = self.delivered.saturating_add(self.inflight).max(1);
    }

    /// A packet of `bytes` sent at `sent` was newly acknowledged at `now`
    /// with RTT sample `rtt` (§4.1.2.3 `UpdateRateSample`).
    pub fn on_ack(&mut self, now: Instant, sent: Instant, bytes: u64, rtt: Duration) {
        self.delivered = self.delivered.saturating_add(bytes);
        self.delivered_time = Some(now);
        self.inflight = self.inflight.saturating_sub(bytes);
        self.pending.newly_acked = self.pending.newly_acked.saturating_add(bytes);
        if rtt > Duration::ZERO && self.min_rtt.is_none_or(|m| rtt < m) {
            self.min_rtt = Some(rtt);
        }
        let Some(i) = self.records.position(sent) else {
            return; // no send state (trimmed, or sent before we counted)
        };
        let Some(slot) = self.records.get_mut(i) else { return };
        let record = *slot;
        let take = bytes.min(slot.unacked);
        slot.unacked -= take;
        let gone = slot.unacked == 0;
        self.recorded -= take;
        if gone {
            self.records.remove(i);
        }
        // "Update info using the newest packet" (IsNewestPacket): records
        // are per send instant, so the newest is the latest send time.
        let newest = match self.pending.newest {
            None => true,
            Some(n) => record.state.send_time > n.state.send_time,
        };
        if newest {
            self.pending.newest = Some(record);
            self.pending.rtt = (rtt > Duration::ZERO).then_some(rtt);
            self.first_send_time = Some(record.state.send_time);
        }
    }

    /// Declare up to `max_bytes` of the oldest unacknowledged data lost and
    /// return the record they came from, or `None` when no record is left.
    /// Call it until it returns `None` or the lost bytes are used up; bytes
    /// with no record go to [`note_lost`](Self::note_lost).
    pub fn lose_oldest(&mut self, max_bytes: u64) -> Option<LostPacket> {
        if max_bytes == 0 {
            return None;
        }
        let record = self.records.oldest_mut()?;
        let size = max_bytes.min(record.unacked);
        record.unacked -= size;
        let snapshot = *record;
        if record.unacked == 0 {
            self.records.pop_oldest();
        }
        self.recorded -= size;
        self.note_lost(size);
        Some(LostPacket {
            send_time: snapshot.state.send_time,
            size,
            tx_in_flight: snapshot.tx_in_flight,
            lost_since_sent: self.lost.saturating_sub(snapshot.lost),
            is_app_limited: snapshot.is_app_limited,
        })
    }

    /// Count `bytes` as lost without a send record (`C.lost` grows, and
    /// `C.inflight` shrinks).
    pub fn note_lost(&mut self, bytes: u64) {
        self.lost = self.lost.saturating_add(bytes);
        self.inflight = self.inflight.saturating_sub(bytes);
        self.pending.newly_lost = self.pending.newly_lost.saturating_add(bytes);
    }

    /// Count `bytes` in `C.lost` (and `RS.newly_lost`) without changing
    /// `C.inflight`: congestion-experienced marks that a controller weighs
    /// as losses, although the data arrived.
    pub fn note_marked(&mut self, bytes: u64) {
        self.lost = self.lost.saturating_add(bytes);
        self.pending.newly_lost = self.pending.newly_lost.saturating_add(bytes);
    }

    /// The state the newest packet acknowledged by the current ACK frame
    /// (or, between frames, the latest one) was sent with, as a
    /// [`LostPacket`] of `size` bytes: a congestion signal about a packet
    /// that is gone, such as an ECN mark reported with the ACK, is judged by it.
    pub fn newest_acked_as_lost(&self, size: u64) -> Option<LostPacket> {
        self.pending.newest.or(self.last_acked).map(|r| LostPacket {
            send_time: r.state.send_time,
            size,
            tx_in_flight: r.tx_in_flight,
            lost_since_sent: self.lost.saturating_sub(r.lost),
            is_app_limited: r.is_app_limited,
        })
    }

    /// Finish the ACK frame (§4.1.2.3 `GenerateRateSample`) and start the next.
    ///
    /// `bytes_in_flight` is the transport's own count after this ACK, if it
    /// has one: the sampler takes it as `C.inflight` and drops the oldest
    /// records that hold more than that.
    pub fn end_ack(&mut self, bytes_in_flight: Option<u64>) -> RateSample {
        if let Some(in_flight) = bytes_in_flight {
            self.inflight = in_flight;
            while self.recorded > in_flight {
                let excess = self.recorded - in_flight;
                let Some(front) = self.records.oldest_mut() else { break };
                let take = excess.min(front.unacked);
                front.unacked -= take;
                self.recorded -= take;
                if front.unacked == 0 {
                    self.records.pop_oldest();
                }
            }
        }
        let pending = std::mem::take(&mut self.pending);
        if pending.newest.is_some() {
            self.last_acked = pending.newest;
        }
        // "Clear app-limited field if bubble is ACKed and gone."
        if self.app_limited != 0 && self.delivered > self.app_limited {
            self.app_limited = 0;
        }
        let mut rs = RateSample {
            newly_acked: pending.newly_acked,
            newly_lost: pending.newly_lost,
            rtt: pending.rtt,
            ..RateSample::default()
        };
        let Some(p) = pending.newest else {
            return rs; // nothing with send state delivered on this ACK
        };
        let now = self.delivered_time.unwrap_or(p.state.send_time);
        rs.prior_delivered = Some(p.state.delivered);
        rs.prior_time = Some(p.state.delivered_time);
        rs.is_app_limited = p.is_app_limited;
        rs.tx_in_flight = p.tx_in_flight;
        rs.lost = self.lost.saturating_sub(p.lost);
        rs.send_elapsed = p.state.send_time.saturating_duration_since(p.state.first_send_time);
        rs.ack_elapsed = now.saturating_duration_since(p.state.delivered_time);
        // §4.1.1.2.4: "delivery_elapsed = max(ack_elapsed, send_elapsed)".
        rs.interval = rs.send_elapsed.max(rs.ack_elapsed);
        rs.delivered = self.delivered.saturating_sub(p.state.delivered);
        // "if (RS.interval < C.min_rtt) return /* no reliable rate sample */"
        if rs.interval > Duration::ZERO && self.min_rtt.is_none_or(|m| rs.interval >= m) {
            rs.delivery_rate = Some(rs.delivered as f64 / rs.interval.as_secs_f64());
        }
        rs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// One ACK frame acknowledging `acks` (send time, bytes) at `now`.
    fn ack(s: &mut DeliveryRateSampler, now: Instant, acks: &[(Instant, u64)]) -> RateSample {
        for &(sent, bytes) in acks {
            s.on_ack(now, sent, bytes, now - sent);
        }
        let inflight = s.inflight();
        s.end_ack(Some(inflight))
    }

    #[test]
    fn ack_rate_is_delivered_over_the_interval_between_knees() {
        // §4.1.1.2.1: a steady 1 packet/ms flow over a 20 ms RTT. Packets sent
        // while data is in flight start their interval at the previous ACK.
        let t0 = Instant::now();
        let mut s = DeliveryRateSampler::new();
        let rtt = 20 * MS;
        for i in 0..20 {
            s.on_sent(t0 + i * MS, 1000);
        }
        // ACK clocking: packet i is acked at 20 + i ms and packet 20 + i sent then.
        let mut rates = Vec::new();
        for i in 0..40u32 {
            let sent = t0 + i * MS;
            let now = sent + rtt;
            let rs = ack(&mut s, now, &[(sent, 1000)]);
            rates.push(rs);
            s.on_sent(now, 1000);
        }
        // First flight: interval from the first send (nothing was in flight).
        let first = rates[0];
        assert_eq!(first.delivered, 1000);
        assert_eq!(first.interval, rtt);
        assert_eq!(first.prior_delivered, Some(0));
        // The 21st ACK is of the first packet sent after an ACK: its sample
        // covers the 20 packets delivered between the knees 20 ms apart.
        let steady = rates[20];
        assert_eq!(steady.prior_delivered, Some(1000));
        assert_eq!(steady.delivered, 20_000);
        assert_eq!(steady.ack_elapsed, 20 * MS);
        assert!((steady.delivery_rate.unwrap() - 1_000_000.0).abs() < 1e-6);
        assert_eq!(steady.rtt, Some(rtt));
        assert_eq!(steady.newly_acked, 1000);
        assert!(!steady.is_app_limited);
    }

    #[test]
    fn the_interval_is_the_longer_of_send_and_ack_elapsed() {
        // §4.1.1.2.4: "delivery_elapsed = max(ack_elapsed, send_elapsed)".
        let t0 = Instant::now();
        let mut s = DeliveryRateSampler::new();
        s.on_sent(t0, 1000);
        let rs = ack(&mut s, t0 + 30 * MS, &[(t0, 1000)]);
        assert_eq!(rs.interval, 30 * MS);
        // Ten packets sent 1 ms apart from an empty pipe, all acked by one
        // ACK 40 ms later: the ACK interval is the longer one.
        let base = t0 + 30 * MS;
        for i in 0..10 {
            s.on_sent(base + i * MS, 1000);
        }
        let acks: Vec<_> = (0..10).map(|i| (base + i * MS, 1000)).collect();
        let rs = ack(&mut s, base + 40 * MS, &acks);
        assert_eq!(rs.send_elapsed, 9 * MS, "first to last send of the flight");
        assert_eq!(rs.ack_elapsed, 40 * MS);
        assert_eq!(rs.interval, 40 * MS);
        assert_eq!(rs.delivered, 10_000);
        assert_eq!(rs.rtt, Some(31 * MS), "the newest packet's RTT");
        // Ten packets 5 ms apart, each acked 31 ms after it was sent, except
        // the last, acked 27 ms after (its ACK was compressed toward the one
        // before). It was sent at 45 ms, after the ACKs of packets 0..2
        // (at 31, 36, 41 ms): its knee is 41 ms and its flight began with
        // packet 2's send at 10 ms. ack_elapsed = 72 - 41 = 31 ms is shorter
        // than send_elapsed = 45 - 10 = 35 ms, so the send rate caps it.
        let base = base + 40 * MS;
        // (time in ms, Some(packet acked) or None for the next send), in time order.
        let mut events: Vec<(u32, Option<u32>)> = (0..10).map(|i| (5 * i, None)).collect();
        events.extend((0..9).map(|i| (5 * i + 31, Some(i))));
        events.push((72, Some(9)));
        events.sort_by_key(|&(t, a)| (t, a.is_none()));
        let mut rs = RateSample::default();
        for (t, acked) in events {
            match acked {
                None => s.on_sent(base + t * MS, 1000),
                Some(i) => rs = ack(&mut s, base + t * MS, &[(base + 5 * i * MS, 1000)]),
            }
        }
        assert_eq!(rs.send_elapsed, 35 * MS);
        assert_eq!(rs.ack_elapsed, 31 * MS);
        assert_eq!(rs.interval, 35 * MS);
        // Delivered before its send: 1000 + 10 000 + 3 packets; now 21 000.
        assert_eq!(rs.prior_delivered, Some(14_000));
        assert_eq!(rs.delivered, 7000);
        assert!((rs.delivery_rate.unwrap() - 7000.0 / 0.035).abs() < 1e-6);
    }

    #[test]
    fn a_batch_sent_at_one_instant_shares_one_snapshot() {
        // quinn's GSO: one on_sent for 4 packets, four acks with the same send time.
        let t0 = Instant::now();
        let mut s = DeliveryRateSampler::new();
        s.on_sent(t0, 4800);
        s.on_sent(t0, 1200); // another transmit in the same instant joins it
        assert_eq!(s.inflight(), 6000);
        let now = t0 + 10 * MS;
        let rs = ack(&mut s, now, &[(t0, 1200), (t0, 1200)]);
        assert_eq!(rs.newly_acked, 2400);
        assert_eq!(rs.tx_in_flight, 6000, "inflight after the instant's last send");
        assert_eq!(rs.prior_delivered, Some(0));
        // The rest, in a later ACK: still the same record's snapshot.
        let rs = ack(&mut s, now + MS, &[(t0, 1200), (t0, 1200), (t0, 1200)]);
        assert_eq!(rs.prior_delivered, Some(0));
        assert_eq!(rs.delivered, 6000);
        assert!(s.records.is_empty());
        assert_eq!(s.inflight(), 0);
    }

    #[test]
    fn app_limited_bubble_marks_samples_until_it_is_delivered() {
        // §4.1.1.3: marking at delivered + inflight; every packet sent before
        // the bubble is acked carries the mark, and the mark clears when the
        // bubble's bytes have been delivered.
        let t0 = Instant::now();
        let mut s = DeliveryRateSampler::new();
        s.on_sent(t0, 1000);
        s.on_sent(t0 + MS, 1000);
        s.mark_app_limited(); // ran out of data with 2000 bytes in flight
        assert!(s.is_app_limited());
        s.on_sent(t0 + 2 * MS, 1000); // sent while app-limited
        let rs = ack(&mut s, t0 + 20 * MS, &[(t0, 1000)]);
        assert!(!rs.is_app_limited, "sent before the mark");
        assert!(s.is_app_limited(), "bubble (2000) not yet delivered (1000)");
        let rs = ack(&mut s, t0 + 21 * MS, &[(t0 + MS, 1000)]);
        assert!(!rs.is_app_limited);
        assert!(s.is_app_limited(), "delivered 2000 is not past the bubble end 2000");
        s.on_sent(t0 + 21 * MS, 1000); // still marked
        let rs = ack(&mut s, t0 + 22 * MS, &[(t0 + 2 * MS, 1000)]);
        assert!(rs.is_app_limited, "sent inside the bubble");
        assert!(!s.is_app_limited(), "3000 delivered: the bubble is gone");
        s.on_sent(t0 + 22 * MS, 1000);
        let rs = ack(&mut s, t0 + 41 * MS, &[(t0 + 21 * MS, 1000)]);
        assert!(rs.is_app_limited, "sent while still marked");
        let rs = ack(&mut s, t0 + 42 * MS, &[(t0 + 22 * MS, 1000)]);
        assert!(!rs.is_app_limited, "sent after the bubble cleared");
    }

    #[test]
    fn losses_come_from_the_oldest_records_and_count_in_rs_lost() {
        let t0 = Instant::now();
        let mut s = DeliveryRateSampler::new();
        for i in 0..5 {
            s.on_sent(t0 + i * MS, 1000);
        }
        // The first two packets are declared lost together (quinn: one event).
        let mut lost = Vec::new();
        let mut left = 2000;
        while let Some(p) = s.lose_oldest(left) {
            left -= p.size;
            lost.push(p);
        }
        assert_eq!(left, 0);
        assert_eq!(lost.len(), 2);
        assert_eq!(lost[0].send_time, t0);
        assert_eq!(lost[0].tx_in_flight, 1000);
        assert_eq!(lost[0].lost_since_sent, 1000, "counted as it is declared");
        assert_eq!(lost[1].send_time, t0 + MS);
        assert_eq!(lost[1].lost_since_sent, 2000);
        assert_eq!(s.lost(), 2000);
        assert_eq!(s.inflight(), 3000);
        // The next ACK's sample says how much was lost since its packet was sent.
        let rs = ack(&mut s, t0 + 22 * MS, &[(t0 + 2 * MS, 1000)]);
        assert_eq!(rs.lost, 2000);
        assert_eq!(rs.newly_lost, 2000);
        assert_eq!(rs.tx_in_flight, 3000);
        assert!(s.lose_oldest(0).is_none());
        // Bytes beyond every record are still counted.
        while s.lose_oldest(u64::MAX).is_some() {}
        s.note_lost(500);
        assert_eq!(s.lost(), 4500);
        assert_eq!(s.inflight(), 0);
    }

    #[test]
    fn records_never_acked_are_trimmed_to_the_transports_inflight() {
        let t0 = Instant::now();
        let mut s = DeliveryRateSampler::new();
        s.on_sent(t0, 50); // an ACK-only packet: never acked, never lost
        s.on_sent(t0 + MS, 1000);
        s.on_sent(t0 + 2 * MS, 1000);
        s.on_ack(t0 + 20 * MS, t0 + MS, 1000, 19 * MS);
        let rs = s.end_ack(Some(1000)); // the transport never counted the 50 bytes
        assert_eq!(s.records.len(), 1);
        assert_eq!(s.records.oldest().map(|r| r.state.send_time), Some(t0 + 2 * MS));
        assert_eq!(s.inflight(), 1000);
        assert_eq!(rs.delivered, 1000);
        // And a record count beyond the cap drops the oldest.
        for i in 0..(MAX_RECORDS as u32 + 10) {
            s.on_sent(t0 + 3 * MS + i * Duration::from_micros(1), 1);
        }
        assert_eq!(s.records.len(), MAX_RECORDS);
        assert_eq!(s.recorded, s.records.iter().map(|r| r.unacked).sum::<u64>());
    }

    #[test]
    fn short_intervals_give_no_rate() {
        // §4.1.2.3: "if (RS.interval < C.min_rtt) return /* no reliable rate sample */".
        let t0 = Instant::now();
        let mut s = DeliveryRateSampler::new();
        s.on_sent(t0, 1000);
        let rs = ack(&mut s, t0 + 20 * MS, &[(t0, 1000)]);
        assert!(rs.delivery_rate.is_some());
        // A packet sent at 20 ms and "acked" 5 ms later with a 5 ms RTT
        // sample: min RTT falls to 5 ms, the interval is 5 ms: a sample.
        s.on_sent(t0 + 20 * MS, 1000);
        s.on_ack(t0 + 25 * MS, t0 + 20 * MS, 1000, 5 * MS);
        assert!(s.end_ack(None).delivery_rate.is_some());
        // An ACK of something with no record gives no rate but counts delivery.
        s.on_ack(t0 + 26 * MS, t0, 700, 26 * MS);
        let rs = s.end_ack(None);
        assert_eq!(rs.delivery_rate, None);
        assert_eq!(rs.prior_delivered, None);
        assert_eq!(rs.newly_acked, 700);
        assert_eq!(s.delivered(), 2700);
        // An interval below the minimum RTT is discarded.
        s.on_sent(t0 + 26 * MS, 1000);
        s.on_ack(t0 + 26 * MS + Duration::from_micros(100), t0 + 26 * MS, 1000, 7 * MS);
        let rs = s.end_ack(None);
        assert_eq!(rs.interval, Duration::from_micros(100));
        assert_eq!(rs.delivery_rate, None);
    }
}
