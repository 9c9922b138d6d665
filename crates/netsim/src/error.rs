//! Configuration errors.

use crate::{Addr, LinkId, NodeId};

/// A bad configuration value. Every message is one line naming the value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A link (or rate-schedule step) with a rate of zero.
    #[error("link rate must be greater than 0 bit/s, got {0} bit/s")]
    ZeroRate(u64),
    /// A node id that the topology does not contain.
    #[error("unknown node {0}")]
    UnknownNode(NodeId),
    /// A link id that the topology does not contain.
    #[error("unknown link {0}")]
    UnknownLink(LinkId),
    /// A link from a node to itself.
    #[error("link from node {0} to itself")]
    SelfLoop(NodeId),
    /// A route whose link does not leave the node it is installed on.
    #[error("route at node {node} uses link {link}, which does not leave that node")]
    RouteNotFromNode {
        /// Node the route was installed on.
        node: NodeId,
        /// Offending link.
        link: LinkId,
    },
    /// A queue limit of zero.
    #[error("queue capacity must be at least 1 packet or byte, got 0")]
    ZeroQueue,
    /// A cut-off connected fraction outside `(0, 1]`.
    #[error("cut-off connected fraction must be in (0, 1], got {0}")]
    BadConnectedFraction(f64),
    /// A cut-off period of zero.
    #[error("cut-off period must be greater than 0, got {0:?}")]
    ZeroPeriod(std::time::Duration),
    /// A packet-loss probability outside `[0, 1]`.
    #[error("packet loss probability must be in [0, 1], got {0}")]
    BadLossProbability(f64),
    /// A bit error rate outside `[0, 1]`.
    #[error("bit error rate must be in [0, 1], got {0}")]
    BadBitErrorRate(f64),
    /// Rate-schedule steps out of time order.
    #[error("rate schedule steps must be in increasing time order, step at {0} is out of order")]
    UnsortedRateSchedule(crate::SimTime),
    /// Two hosts on one address.
    #[error("address {0} already has a host")]
    AddressInUse(Addr),
    /// A host id that was never attached.
    #[error("unknown host {0}")]
    UnknownHost(u32),
    /// A mean that is not finite and positive.
    #[error("mean must be finite and greater than 0, got {0}")]
    BadMean(f64),
    /// A Pareto shape of 1 or less (infinite mean).
    #[error("Pareto shape must be greater than 1, got {0}")]
    BadParetoShape(f64),
    /// A dumbbell with no sender/receiver pair.
    #[error("a dumbbell needs at least 1 sender/receiver pair, got 0")]
    NoPairs,
    /// A chain with no link.
    #[error("a chain needs at least 1 link, got 0")]
    EmptyChain,
    /// A dumbbell given a number of per-pair access links other than its
    /// number of pairs.
    #[error("a dumbbell with {pairs} pairs needs {pairs} access links, got {got}")]
    AccessCount {
        /// Pairs of the dumbbell.
        pairs: usize,
        /// Access links given.
        got: usize,
    },
    /// A parking-lot pair whose hops are out of order or past the last hop.
    #[error("a parking-lot pair crosses hops {first}..={last}, but the hops are 0..={}", .hops.saturating_sub(1))]
    BadPairHops {
        /// First hop the pair crosses.
        first: usize,
        /// Last hop the pair crosses.
        last: usize,
        /// Hops of the parking lot.
        hops: usize,
    },
    /// A malformed delivery trace (the message names the line).
    #[error("{0}")]
    BadTrace(String),
    /// A trace-driven link with a cut-off or a rate schedule.
    #[error("a trace-driven link takes its timing from the trace: no cutoff or rate_schedule with it")]
    TraceWithSchedule,
    /// A bad queue-discipline parameter.
    #[error("queue.{key}: {reason}")]
    BadQueueParameter {
        /// The parameter's key.
        key: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A zero sampling interval or oracle window.
    #[error("{what} must be greater than 0, got {value:?}")]
    ZeroDuration {
        /// Which setting.
        what: &'static str,
        /// Its value.
        value: std::time::Duration,
    },
}
