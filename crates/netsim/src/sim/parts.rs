//! The engine's parts: event kinds, the packet in flight, the simulator as
//! a link's driver, host slots, the flow table, and the trace hash.

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::host::AnyHost;
use crate::metrics::FlowStats;
use crate::model::{LinkDriver, LinkEvent, LinkModel, LinkTrace};
use crate::oracle::OracleState;
use crate::queue::{Ev, EventQueue};
use crate::{Addr, FlowId, NodeId, SimTime};

pub(super) const NO_ROUTE: u32 = u32::MAX;
/// Flow ids below this live in a vector; larger ones in a map.
const DENSE_FLOWS: u32 = 1 << 16;
/// Random streams of links are `LINK_STREAM | link index`.
pub(super) const LINK_STREAM: u64 = 0x4C49_4E4B << 32;

pub(super) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Kind {
    /// End of a transmission that someone waits for.
    Kick,
    Arrive,
    Timer,
    CutStart,
    CutEnd,
    PauseStart,
    RateChange,
    Sample,
    OracleTick,
}

/// Trace event codes folded into the trace hash.
#[derive(Clone, Copy)]
#[repr(u8)]
pub(super) enum TraceKind {
    Offer = 1,
    DropQueue,
    DropCut,
    DropRandom,
    Arrive,
    Deliver,
    DropAqm,
    Mark,
}

impl Ev {
    #[inline]
    pub(super) fn kind(&self) -> Kind {
        KINDS[(self.aux & 0xFF) as usize]
    }
    #[inline]
    pub(super) fn arg(&self) -> u32 {
        self.aux >> 8
    }
}

const KINDS: [Kind; 9] = [
    Kind::Kick,
    Kind::Arrive,
    Kind::Timer,
    Kind::CutStart,
    Kind::CutEnd,
    Kind::PauseStart,
    Kind::RateChange,
    Kind::Sample,
    Kind::OracleTick,
];

/// A datagram on its way (its flow and wire bytes travel in the link's
/// [`crate::Frame`]).
#[derive(Debug)]
pub(super) struct Packet {
    pub(super) src: Addr,
    pub(super) dst: Addr,
    pub(super) payload: Bytes,
}

impl Packet {
    /// The hash of its addresses and ports that FQ-CoDel classifies it by
    /// (RFC 8290 §4.1.1; SplitMix64's finaliser over the 4-tuple).
    #[inline]
    pub(super) fn flow_hash(&self) -> u64 {
        let a = (self.src.node.0 as u64) << 16 | self.src.port as u64;
        let b = (self.dst.node.0 as u64) << 16 | self.dst.port as u64;
        let mut z = a.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ b;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

pub(super) struct LinkRt {
    pub(super) model: LinkModel<Packet>,
    pub(super) to: NodeId,
    /// Oracles fed by this link's transmissions.
    pub(super) oracles: Vec<u32>,
}

/// Folds one event into the trace hash.
#[inline]
pub(super) fn fold_trace(trace: &mut u64, time: u64, kind: TraceKind, id: u32, size: u64) {
    let word = (kind as u64) << 56 | (id as u64) << 32 | (size & 0xFFFF_FFFF);
    *trace = (*trace ^ time).wrapping_mul(FNV_PRIME);
    *trace = (*trace ^ word).wrapping_mul(FNV_PRIME);
}

#[inline]
pub(super) fn push_ev(heap: &mut EventQueue, seq: &mut u64, time: u64, kind: Kind, id: u32, arg: u32) {
    debug_assert!(arg < 1 << 24);
    *seq += 1;
    heap.push(Ev {
        time,
        seq: *seq,
        id,
        aux: arg << 8 | kind as u32,
    });
}

/// The simulator as the driver of one link: link events go on the event
/// queue, transmissions feed the link's oracles, counted events the trace.
pub(super) struct SimDriver<'a> {
    pub(super) heap: &'a mut EventQueue,
    pub(super) seq: &'a mut u64,
    pub(super) trace: &'a mut u64,
    pub(super) oracles: &'a mut [OracleState],
    pub(super) watched: &'a [u32],
    pub(super) li: u32,
}

impl LinkDriver for SimDriver<'_> {
    #[inline]
    fn schedule(&mut self, at: SimTime, event: LinkEvent) {
        let (kind, arg) = match event {
            LinkEvent::TxDone(g) => (Kind::Kick, g),
            LinkEvent::Arrive => (Kind::Arrive, 0),
            LinkEvent::CutStart => (Kind::CutStart, 0),
            LinkEvent::CutEnd => (Kind::CutEnd, 0),
            LinkEvent::PauseStart => (Kind::PauseStart, 0),
            LinkEvent::RateChange(k) => (Kind::RateChange, k),
        };
        push_ev(self.heap, self.seq, at.as_nanos(), kind, self.li, arg);
    }

    #[inline]
    fn transmitted(&mut self, done: SimTime, flow: FlowId, wire: u64) {
        for &o in self.watched {
            self.oracles[o as usize].on_packet(done.as_nanos(), flow, wire);
        }
    }

    #[inline]
    fn trace(&mut self, time: SimTime, what: LinkTrace, wire: u64) {
        let kind = match what {
            LinkTrace::Offer => TraceKind::Offer,
            LinkTrace::DropQueue => TraceKind::DropQueue,
            LinkTrace::DropCutoff => TraceKind::DropCut,
            LinkTrace::DropRandom => TraceKind::DropRandom,
            LinkTrace::DropAqm => TraceKind::DropAqm,
            LinkTrace::Mark => TraceKind::Mark,
        };
        fold_trace(self.trace, time.as_nanos(), kind, self.li, wire);
    }

    #[inline]
    fn watches_transmissions(&self) -> bool {
        !self.watched.is_empty()
    }
}

pub(super) struct HostSlot {
    pub(super) host: Box<dyn AnyHost>,
    pub(super) addr: Addr,
    /// The host's last reported wake-up.
    pub(super) wake: Option<u64>,
    /// Earliest timer event known to be in the heap for this host.
    pub(super) armed: Option<u64>,
}

#[derive(Clone, Copy, Default)]
pub(super) struct FlowEntry {
    pub(super) used: bool,
    pub(super) stats: FlowStats,
    pub(super) last_sampled: u64,
}

#[derive(Default)]
pub(super) struct FlowTable {
    pub(super) dense: Vec<FlowEntry>,
    pub(super) sparse: BTreeMap<FlowId, FlowEntry>,
}

impl FlowTable {
    #[inline]
    pub(super) fn entry(&mut self, flow: FlowId) -> &mut FlowEntry {
        let e = if flow < DENSE_FLOWS {
            let i = flow as usize;
            if i >= self.dense.len() {
                self.dense.resize(i + 1, FlowEntry::default());
            }
            &mut self.dense[i]
        } else {
            self.sparse.entry(flow).or_default()
        };
        if !e.used {
            e.used = true;
            e.stats.flow = flow;
        }
        e
    }

    pub(super) fn get(&self, flow: FlowId) -> Option<&FlowEntry> {
        let e = if flow < DENSE_FLOWS {
            self.dense.get(flow as usize)
        } else {
            self.sparse.get(&flow)
        };
        e.filter(|e| e.used)
    }

    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = &mut FlowEntry> {
        self.dense.iter_mut().chain(self.sparse.values_mut()).filter(|e| e.used)
    }

    pub(super) fn iter(&self) -> impl Iterator<Item = &FlowEntry> {
        self.dense.iter().chain(self.sparse.values()).filter(|e| e.used)
    }
}
