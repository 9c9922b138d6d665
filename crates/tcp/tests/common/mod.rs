//! The scripted path the test files drive the TCP model over: sender and
//! sink through the `Host` trait, a serializing forward link with a fixed
//! delay, a plain delay back, and exactly the data packets a test names
//! dropped (and, for ECN, marked CE).
#![allow(dead_code)] // each test binary uses its part

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::{Duration, Instant};

use bytes::Bytes;
use tput_netsim::{Addr, Ecn, Host, NodeId, SimTime};
use tput_tcp::{Amount, CcObserver, Recovery, TcpConfig, TcpSender, TcpSink, TcpTransfer};

/// Segment size here, bytes.
pub const SEG: u64 = 1000;

/// Which data transmissions are lost: (segment index, transmission number from 1).
pub type DropRule = Box<dyn FnMut(SimTime, u64, u32) -> bool>;

/// Which ECN-capable data transmissions arrive marked CE: (segment index,
/// transmission number from 1). Not-ECT packets are never marked.
pub type MarkRule = Box<dyn FnMut(u64, u32) -> bool>;

/// How much later than the others a data transmission arrives (segment
/// index, transmission number from 1): a held packet is overtaken by the
/// ones behind it, as on a path that reorders.
pub type HoldRule = Box<dyn FnMut(u64, u32) -> Duration>;

/// The path: forward rate and delay, which data packets it drops, and which
/// it holds back.
pub struct Path {
    pub rate_bps: u64,
    pub delay: Duration,
    pub drop: DropRule,
    pub hold: HoldRule,
}

/// A path that holds nothing back.
pub fn no_hold() -> HoldRule {
    Box::new(|_, _| Duration::ZERO)
}

/// A packet on its way: (arrival, order, to the sink, payload, ECN bits).
pub type InFlight = (SimTime, u64, bool, Vec<u8>, u8);

/// The controller's window at every change: (seconds, bytes).
#[derive(Default)]
pub struct Windows(pub Vec<(f64, u64)>);

impl CcObserver for Windows {
    fn observe(&mut self, now: SimTime, cc: &dyn tput_cc::CongestionController) {
        let w = cc.window();
        if self.0.last().is_none_or(|&(_, last)| last != w) {
            self.0.push((now.as_secs_f64(), w));
        }
    }
}

/// What a run leaves.
pub struct Outcome {
    pub sender: TcpSender<Windows>,
    pub sink: TcpSink,
    /// When each data packet left the sender, and its segment index.
    pub sends: Vec<(SimTime, u64)>,
    /// When each data packet that was not dropped reached the sink, and its
    /// segment index.
    pub arrivals: Vec<(SimTime, u64)>,
    /// Beside each of `sends`: its ECN codepoint as sent and its CWR flag.
    pub codepoints: Vec<(Ecn, bool)>,
    /// Every ACK as it reached the sender: (time, cumulative ACK, ECE flag).
    pub acks: Vec<(SimTime, u64, bool)>,
}

pub fn seq_of(p: &Bytes) -> u64 {
    u64::from_be_bytes(p[4..12].try_into().unwrap())
}

/// Run `n` bytes (or until `Amount::Until`) over `path` until the sender has
/// finished or `limit` of virtual time has passed.
pub fn run(cfg: TcpConfig, cc: &str, amount: Amount, path: Path, limit: Duration) -> Outcome {
    run_marked(cfg, cc, amount, path, Box::new(|_, _| false), limit)
}

/// [`run`] with the ECN-capable data packets `mark` names arriving CE.
pub fn run_marked(
    cfg: TcpConfig,
    cc: &str,
    amount: Amount,
    mut path: Path,
    mut mark: MarkRule,
    limit: Duration,
) -> Outcome {
    let epoch = Instant::now();
    let a = Addr::new(NodeId(0), 1);
    let b = Addr::new(NodeId(1), 2);
    let spec: tput_cc::ControllerSpec = cc.parse().unwrap();
    let transfer = TcpTransfer::new(b, 1, SimTime::ZERO, amount).with_interval(Duration::from_secs(1));
    let cc = spec.build(cfg.segment as u16);
    let mut sender = TcpSender::with_observer(cfg.clone(), cc, epoch, transfer, Windows::default());
    let mut sink = TcpSink::new(cfg.clone(), Duration::from_secs(1), None);
    sink.record_delivery();
    let mut heap: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
    let mut order = 0u64;
    let mut link_free = SimTime::ZERO;
    let mut sends: HashMap<u64, u32> = HashMap::new();
    let mut now = SimTime::ZERO;
    let mut send_times = Vec::new();
    let mut arrivals = Vec::new();
    let mut codepoints = Vec::new();
    let mut acks = Vec::new();
    let end = SimTime::from_duration(limit);
    loop {
        while let Some(d) = sender.poll_transmit(now) {
            send_times.push((now, seq_of(&d.payload) / SEG));
            codepoints.push((d.ecn, d.payload[2] & 1 == 1));
            let wire_bits = (d.payload.len() as u64 + 28) * 8;
            let ser = Duration::from_nanos(wire_bits * 1_000_000_000 / path.rate_bps);
            link_free = link_free.max(now) + ser;
            let seg = seq_of(&d.payload) / SEG;
            let k = sends.entry(seg).or_default();
            *k += 1;
            if !(path.drop)(now, seg, *k) {
                order += 1;
                let at = link_free + path.delay + (path.hold)(seg, *k);
                arrivals.push((at, seg));
                let ce = d.ecn != Ecn::NotEct && mark(seg, *k);
                let ecn = if ce { Ecn::Ce } else { d.ecn };
                heap.push(Reverse((at, order, true, d.payload.to_vec(), ecn.bits())));
            }
        }
        while let Some(d) = sink.poll_transmit(now) {
            order += 1;
            heap.push(Reverse((
                now + path.delay,
                order,
                false,
                d.payload.to_vec(),
                d.ecn.bits(),
            )));
        }
        if sender.is_finished() {
            break;
        }
        let next = [
            heap.peek().map(|Reverse(e)| e.0),
            sender.poll_timeout(),
            sink.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(next) = next.filter(|&t| t <= end) else { break };
        now = next;
        if heap.peek().is_some_and(|Reverse(e)| e.0 == now) {
            let Reverse((_, _, to_sink, p, ecn)) = heap.pop().unwrap();
            let ecn = Ecn::from_bits(ecn);
            if to_sink {
                sink.on_datagram(now, a, 1, ecn, Bytes::from(p));
            } else {
                acks.push((now, u64::from_be_bytes(p[4..12].try_into().unwrap()), p[2] & 2 == 2));
                sender.on_datagram(now, b, 1, ecn, Bytes::from(p));
            }
        } else {
            if sender.poll_timeout().is_some_and(|t| t <= now) {
                sender.on_timeout(now);
            }
            if sink.poll_timeout().is_some_and(|t| t <= now) {
                sink.on_timeout(now);
            }
        }
    }
    Outcome {
        sender,
        sink,
        sends: send_times,
        arrivals,
        codepoints,
        acks,
    }
}

pub fn cfg(recovery: Recovery) -> TcpConfig {
    TcpConfig {
        recovery,
        sack: recovery.uses_sack(),
        ..TcpConfig::default()
    }
}

/// 10 Mbit/s, 20 ms one way.
pub fn path(drop: impl FnMut(SimTime, u64, u32) -> bool + 'static) -> Path {
    Path {
        rate_bps: 10_000_000,
        delay: Duration::from_millis(20),
        drop: Box::new(drop),
        hold: no_hold(),
    }
}

pub fn drop_first(segs: &'static [u64]) -> impl FnMut(SimTime, u64, u32) -> bool {
    move |_, s, k| k == 1 && segs.contains(&s)
}

pub const ALL: [Recovery; 4] = [Recovery::Reno, Recovery::NewReno, Recovery::Sack, Recovery::Gbn];

/// Every byte arrived once, in order, and the sender knows it.
pub fn assert_complete(o: &Outcome, n: u64) {
    assert!(o.sender.is_finished(), "sender unfinished: {:?}", o.sender.stats());
    assert_eq!(o.sink.delivered(), n);
    let log = o.sink.delivered_log().unwrap();
    assert_eq!(log.len() as u64, n);
    assert!(
        log.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8),
        "delivered bytes out of order"
    );
    assert_eq!(o.sink.report().corrupt, 0);
}
