//! What a [`LinkModel`](super::LinkModel) and its driver exchange: the
//! timed events, the trace of counted events, the driver trait, and a
//! packet with its tag and the verdict on it.

use crate::{Ecn, FlowId, SimTime};

/// A transition a [`LinkModel`](crate::LinkModel) asks its driver to run at a given time.
///
/// Deliberately exhaustive: a driver must run every event the model asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LinkEvent {
    /// The transmission of this generation ends ([`LinkModel::on_tx_done`](crate::LinkModel::on_tx_done)).
    TxDone(u32),
    /// The head of the propagating packets reaches the far end
    /// ([`LinkModel::on_arrive`](crate::LinkModel::on_arrive)).
    Arrive,
    /// A cut begins ([`LinkModel::on_cut_start`](crate::LinkModel::on_cut_start)).
    CutStart,
    /// A cut ends ([`LinkModel::on_cut_end`](crate::LinkModel::on_cut_end)).
    CutEnd,
    /// The transmitter stops ahead of a cut ([`LinkModel::on_pause_start`](crate::LinkModel::on_pause_start)).
    PauseStart,
    /// Step `n` of the rate schedule takes effect ([`LinkModel::on_rate_change`](crate::LinkModel::on_rate_change)).
    RateChange(u32),
}

/// What a [`LinkModel`](crate::LinkModel) reports to its driver, for a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinkTrace {
    /// A packet was accepted into the queue.
    Offer,
    /// An arrival found the queue full (or, with FQ-CoDel, a packet of the
    /// fattest flow was dropped to make room).
    DropQueue,
    /// The queue discipline's AQM dropped a packet (never with DropTail).
    DropAqm,
    /// The queue discipline marked a packet CE (never with DropTail).
    Mark,
    /// A packet was lost to a cut-off.
    DropCutoff,
    /// A packet was lost to random loss.
    DropRandom,
}

/// The driver of a [`LinkModel`](crate::LinkModel): it runs the model's timed transitions.
pub trait LinkDriver {
    /// Call `event` back on the model at `at` (never earlier than the `now`
    /// of the call that asks). Events at the same time run in the order they
    /// were asked for.
    fn schedule(&mut self, at: SimTime, event: LinkEvent);
    /// A packet's last bit left the transmitter at `done` (a packet lost to
    /// random loss is not reported).
    #[inline]
    fn transmitted(&mut self, done: SimTime, flow: FlowId, wire: u64) {
        let _ = (done, flow, wire);
    }
    /// A counted event, at its time, with the packet's wire bytes.
    #[inline]
    fn trace(&mut self, time: SimTime, what: LinkTrace, wire: u64) {
        let _ = (time, what, wire);
    }
    /// Whether [`LinkDriver::transmitted`] must be called at the end of every
    /// transmission even when nothing waits behind it (costs one event per
    /// packet).
    #[inline]
    fn watches_transmissions(&self) -> bool {
        false
    }
}

/// A packet on a link: its wire bytes (payload plus the link's overhead),
/// its flow, its ECN codepoint (CE if this link's queue marked it), and the
/// caller's item.
#[derive(Debug)]
pub struct Frame<P> {
    /// Wire bytes on this link.
    pub wire: u64,
    /// The flow it belongs to.
    pub flow: FlowId,
    /// Its ECN codepoint.
    pub ecn: Ecn,
    /// The caller's packet.
    pub item: P,
    /// The hash FQ-CoDel classifies it by.
    pub(crate) hash: u64,
    /// When it entered the queue (ns).
    pub(crate) enqueued: u64,
}

/// What a link knows of a packet besides its size: its flow, its ECN
/// codepoint and the hash of its addresses and ports that a flow-queueing
/// discipline ([`crate::QueueDiscipline::FqCodel`]) classifies it by.
///
/// ```
/// use tput_netsim::{Ecn, PacketTag};
/// let t = PacketTag::new(3).with_ecn(Ecn::Ect0).with_hash(0xfeed);
/// assert_eq!((t.flow, t.ecn, t.hash), (3, Ecn::Ect0, 0xfeed));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PacketTag {
    /// The flow (per-flow metrics, the bandwidth oracle).
    pub flow: FlowId,
    /// The ECN codepoint.
    pub ecn: Ecn,
    /// Flow-queue hash (default: the flow id).
    pub hash: u64,
}

impl PacketTag {
    /// A `Not-ECT` packet of `flow`, hashed by its flow id.
    pub fn new(flow: FlowId) -> Self {
        PacketTag {
            flow,
            ecn: Ecn::NotEct,
            hash: flow as u64,
        }
    }
    /// With ECN codepoint `ecn`.
    pub fn with_ecn(mut self, ecn: Ecn) -> Self {
        self.ecn = ecn;
        self
    }
    /// With flow-queue hash `hash`.
    pub fn with_hash(mut self, hash: u64) -> Self {
        self.hash = hash;
        self
    }
}

/// The outcome of [`LinkModel::offer`](crate::LinkModel::offer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Verdict {
    /// Accepted: queued or being serialized.
    Accepted,
    /// Dropped: the queue was full.
    DroppedQueue,
    /// Dropped (or, with ECN, marked and queued: then [`Verdict::Accepted`])
    /// by the queue discipline's AQM on arrival (RED).
    DroppedAqm,
    /// Dropped: the link is cut in [`CutMode::Drop`](crate::CutMode::Drop).
    DroppedCutoff,
}
