//! Random Early Detection: Floyd and Jacobson, "Random Early Detection
//! gateways for congestion avoidance", IEEE/ACM Transactions on Networking
//! 1(4), 1993, as ns-2's `Queue/RED` implements it (`queue/red.cc`): the
//! average queue on every arrival (§4, with the idle-time correction of
//! §11), the drop probability linear between the thresholds (§4), the
//! count-based uniformisation of §7 (with ns-2's `wait_`), Floyd's "gentle"
//! variant above `max_th`, byte mode, and ECN marking of early drops
//! (RFC 3168 §5 and §7).

use super::{DropCause, Fifo, Limits, Out, try_mark};
use crate::model::Frame;
use crate::{RedConfig, Rng};

/// RED's state.
#[derive(Debug)]
pub(crate) struct Red<P> {
    c: RedConfig,
    q: Fifo<P>,
    limits: Limits,
    rng: Rng,
    /// The average queue (packets, or bytes in byte mode).
    pub avg: f64,
    /// Arrivals since the last drop or mark (ns-2 `count`).
    count: u64,
    /// Bytes since the last drop or mark (ns-2 `count_bytes`).
    count_bytes: u64,
    /// The average was at or above `min_th` at the previous arrival (ns-2 `old`).
    old: bool,
    /// The time the queue went idle (ns), if it is idle.
    idle_since: Option<u64>,
}

impl<P> Red<P> {
    pub fn new(c: &RedConfig, limits: Limits, rng: Rng) -> Self {
        Red {
            c: *c,
            q: Fifo::default(),
            limits,
            rng,
            avg: 0.0,
            count: 0,
            count_bytes: 0,
            old: false,
            idle_since: Some(0),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.q.q.is_empty()
    }

    pub fn front_wire(&self) -> Option<u64> {
        self.q.q.front().map(|f| f.wire)
    }

    /// The thresholds in the unit of the average.
    fn thresholds(&self) -> (f64, f64) {
        let unit = if self.c.bytes { self.c.mean_packet as f64 } else { 1.0 };
        (self.c.min_th * unit, self.c.max_th * unit)
    }

    /// The probability before uniformisation (ns-2 `calculate_p_new`):
    /// `max_p (avg - min_th) / (max_th - min_th)` between the thresholds; in
    /// gentle mode `max_p + (1 - max_p)(avg - max_th) / max_th` up to twice
    /// `max_th`.
    pub(crate) fn base_p(&self, avg: f64) -> f64 {
        let (min_th, max_th) = self.thresholds();
        let p = if avg < max_th {
            self.c.max_p * (avg - min_th) / (max_th - min_th)
        } else if self.c.gentle {
            self.c.max_p + (1.0 - self.c.max_p) * (avg - max_th) / max_th
        } else {
            1.0
        };
        p.clamp(0.0, 1.0)
    }

    /// ns-2 `modify_p`: spread drops evenly (§7): `p / (1 - count p)`, or
    /// with `wait` 0 until `count p >= 1` and `p / (2 - count p)` after.
    fn modify_p(&self, p: f64, size: u64) -> f64 {
        let count = if self.c.bytes {
            (self.count_bytes / self.c.mean_packet as u64) as f64
        } else {
            self.count as f64
        };
        let cp = count * p;
        let mut p = if self.c.wait {
            if cp < 1.0 {
                0.0
            } else if cp < 2.0 {
                p / (2.0 - cp)
            } else {
                1.0
            }
        } else if cp < 1.0 {
            p / (1.0 - cp)
        } else {
            1.0
        };
        if self.c.bytes && p < 1.0 {
            p = p * size as f64 / self.c.mean_packet as f64;
        }
        p.min(1.0)
    }

    /// An arrival (ns-2 `REDQueue::enque`).
    pub fn enqueue(
        &mut self,
        now: u64,
        rate: crate::Rate,
        mut f: Frame<P>,
        out: &mut impl Out<P>,
    ) -> Result<(), (Frame<P>, DropCause)> {
        let qlen = if self.c.bytes {
            self.q.bytes as f64
        } else {
            self.q.q.len() as f64
        };
        // §11: after an idle period, age the average as if `m` small
        // packets had arrived to an empty queue, `m` = idle time times the
        // link's rate in mean-sized packets (ns-2's `ptc`).
        let mut m = 0.0;
        if let Some(since) = self.idle_since.take() {
            let ptc = rate.bits_per_sec() as f64 / (8.0 * self.c.mean_packet as f64);
            m = (ptc * now.saturating_sub(since) as f64 / 1e9).floor();
        }
        let w = self.c.weight;
        self.avg = self.avg * libm::pow(1.0 - w, m) * (1.0 - w) + w * qlen;
        self.count += 1;
        self.count_bytes += f.wire;
        let (min_th, max_th) = self.thresholds();
        let mut early = false;
        let mut forced = false;
        if self.avg >= min_th && qlen > 1.0 {
            if (!self.c.gentle && self.avg >= max_th) || (self.c.gentle && self.avg >= 2.0 * max_th) {
                forced = true;
            } else if !self.old {
                // The average just crossed min_th: start counting.
                self.count = 1;
                self.count_bytes = f.wire;
                self.old = true;
            } else {
                let p = self.modify_p(self.base_p(self.avg), f.wire);
                if self.rng.next_f64() <= p {
                    self.count = 0;
                    self.count_bytes = 0;
                    early = true;
                }
            }
        } else {
            self.old = false;
        }
        if self.limits.exceeded(self.q.q.len() as u64 + 1, self.q.bytes + f.wire) {
            return Err((f, DropCause::Overflow));
        }
        if forced || (early && !try_mark(self.c.ecn, &mut f, out)) {
            return Err((f, DropCause::Aqm));
        }
        f.enqueued = now;
        self.q.push(f);
        Ok(())
    }

    /// The head packet. When the queue empties, the idle period starts as
    /// the last packet's transmission ends (at the current rate): ns-2's
    /// link asks its queue for a packet, and finds none, only then.
    pub fn dequeue(&mut self, now: u64, rate: crate::Rate) -> Option<Frame<P>> {
        let f = self.q.pop()?;
        if self.q.q.is_empty() {
            self.idle_since = Some(now + crate::serialization_ns(f.wire * 8, rate));
        }
        Some(f)
    }

    #[cfg(test)]
    fn queued_len(&self) -> usize {
        self.q.q.len()
    }
}

#[cfg(test)]
mod tests {
    use super::super::testutil::{Record, frame};
    use super::*;
    use crate::Ecn;

    fn red(c: RedConfig) -> Red<u32> {
        Red::new(
            &c,
            Limits {
                packets: 100,
                bytes: u64::MAX,
            },
            Rng::new(7),
        )
    }

    #[test]
    fn average_follows_the_ewma_and_decays_over_idle_time() {
        let mut r = red(RedConfig::default().with_weight(0.5));
        let mut rec = Record::default();
        // Arrivals at time 0 into queues of 0, 1, 2 packets (no departure).
        for i in 0..3 {
            r.enqueue(
                0,
                crate::Rate::from_mbit_per_sec(8),
                frame(i, 1000, 0, Ecn::NotEct, 0),
                &mut rec,
            )
            .unwrap();
        }
        // idle at start: m = 0 at t = 0; avg = 0, then 0.5, then 1.25.
        assert!((r.avg - 1.25).abs() < 1e-12, "{}", r.avg);
        for _ in 0..3 {
            r.dequeue(0, crate::Rate::from_mbit_per_sec(8));
        }
        // Idle from 1 ms (the last packet's transmission at 8 Mbit/s) to
        // 11 ms: 10 ms at 1000 mean-sized packets per s = 10 packet times.
        r.enqueue(
            11_000_000,
            crate::Rate::from_mbit_per_sec(8),
            frame(9, 1000, 0, Ecn::NotEct, 0),
            &mut rec,
        )
        .unwrap();
        let expect = 1.25 * 0.5f64.powi(11);
        assert!((r.avg - expect).abs() < 1e-12, "{} vs {expect}", r.avg);
    }

    #[test]
    fn drop_probability_between_and_beyond_the_thresholds() {
        let r = red(RedConfig::default());
        assert_eq!(r.base_p(5.0), 0.0);
        assert!((r.base_p(10.0) - 0.05).abs() < 1e-12);
        assert!((r.base_p(15.0) - 0.1).abs() < 1e-12);
        // Gentle: from max_p at max_th to 1 at 2 max_th.
        assert!((r.base_p(22.5) - 0.55).abs() < 1e-12);
        assert_eq!(r.base_p(30.0), 1.0);
        let hard = red(RedConfig::default().with_gentle(false));
        assert_eq!(hard.base_p(15.0), 1.0);
        // Byte mode: thresholds in mean packets.
        let b = red(RedConfig::default().with_bytes(true).with_mean_packet(1000));
        assert!((b.base_p(10_000.0) - 0.05).abs() < 1e-12);
    }

    /// A standing queue of about 10 packets (avg 10: p_b = 0.05): with
    /// `wait`, drops come about every 1/p_b + 1/(2 p_b)... on average
    /// between 1/p_b and 2/p_b arrivals apart; the fraction dropped is near
    /// 1/(1.5/p_b).
    #[test]
    fn early_drops_at_the_expected_rate_and_ecn_marks_instead() {
        for ecn in [false, true] {
            let mut r = red(RedConfig::default().with_weight(0.02).with_ecn(ecn));
            let mut rec = Record::default();
            let (mut drops, mut arrivals) = (0u32, 0u32);
            let code = if ecn { Ecn::Ect1 } else { Ecn::NotEct };
            for i in 0..200_000u32 {
                // Keep the queue at 10 packets: one in, one out.
                match r.enqueue(
                    0,
                    crate::Rate::from_mbit_per_sec(8),
                    frame(i, 1000, 0, code, 0),
                    &mut rec,
                ) {
                    Ok(()) => {}
                    Err((_, c)) => {
                        assert_eq!(c, DropCause::Aqm);
                        drops += 1;
                    }
                }
                arrivals += 1;
                if r.queued_len() > 10 {
                    r.dequeue(0, crate::Rate::from_mbit_per_sec(8));
                }
            }
            let frac = (drops as f64 + rec.marked as f64) / arrivals as f64;
            // avg settles at 10 (the queue holds 10 before each arrival).
            assert!((r.avg - 10.0).abs() < 0.5, "avg {}", r.avg);
            // With wait: inter-drop gaps uniform on [1/p_b, 2/p_b] = [20, 40].
            assert!((frac - 1.0 / 30.0).abs() < 0.004, "fraction {frac}");
            if ecn {
                assert_eq!(drops, 0);
                assert!(rec.marked > 1000);
            } else {
                assert_eq!(rec.marked, 0);
            }
        }
    }
}
