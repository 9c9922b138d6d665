//! Nodes, links, static routes and the experiment topologies.

use std::collections::VecDeque;
use std::fmt;

use crate::{Error, LinkConfig};

/// A node (end host machine or router).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct NodeId(pub u32);

/// A unidirectional link.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct LinkId(pub u32);

impl NodeId {
    /// Index into per-node vectors.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl LinkId {
    /// Index into per-link vectors.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}

impl fmt::Display for LinkId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "l{}", self.0)
    }
}

const NO_ROUTE: u32 = u32::MAX;

/// A network: nodes, unidirectional links and static routes.
///
/// Routes give, per node and destination node, the link to forward on.
/// Routes not set with [`Topology::set_route`] are filled in when the
/// simulator is built: fewest hops, ties to the lowest link id. Routers
/// forward with no processing delay.
#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub(crate) nodes: u32,
    pub(crate) links: Vec<(NodeId, NodeId, LinkConfig)>,
    /// `(node, dst, link)` set by hand.
    manual_routes: Vec<(NodeId, NodeId, LinkId)>,
}

impl Topology {
    /// An empty topology.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a node.
    pub fn add_node(&mut self) -> NodeId {
        self.nodes += 1;
        NodeId(self.nodes - 1)
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes as usize
    }

    /// Number of links.
    pub fn link_count(&self) -> usize {
        self.links.len()
    }

    /// Endpoints and configuration of a link.
    pub fn link(&self, id: LinkId) -> Option<(NodeId, NodeId, &LinkConfig)> {
        self.links.get(id.index()).map(|(a, b, c)| (*a, *b, c))
    }

    fn check_node(&self, n: NodeId) -> Result<(), Error> {
        if n.0 < self.nodes {
            Ok(())
        } else {
            Err(Error::UnknownNode(n))
        }
    }

    /// Adds a unidirectional link `from -> to` after validating `config`.
    pub fn add_link(&mut self, from: NodeId, to: NodeId, config: LinkConfig) -> Result<LinkId, Error> {
        self.check_node(from)?;
        self.check_node(to)?;
        if from == to {
            return Err(Error::SelfLoop(from));
        }
        config.validate()?;
        self.links.push((from, to, config));
        Ok(LinkId(self.links.len() as u32 - 1))
    }

    /// Adds `a -> b` with `forward` and `b -> a` with `reverse`.
    pub fn add_duplex(
        &mut self,
        a: NodeId,
        b: NodeId,
        forward: LinkConfig,
        reverse: LinkConfig,
    ) -> Result<(LinkId, LinkId), Error> {
        let f = self.add_link(a, b, forward)?;
        let r = self.add_link(b, a, reverse)?;
        Ok((f, r))
    }

    /// Forces traffic at `node` for `dst` onto `link` (which must leave `node`).
    pub fn set_route(&mut self, node: NodeId, dst: NodeId, link: LinkId) -> Result<(), Error> {
        self.check_node(node)?;
        self.check_node(dst)?;
        let (from, _, _) = self.link(link).ok_or(Error::UnknownLink(link))?;
        if from != node {
            return Err(Error::RouteNotFromNode { node, link });
        }
        self.manual_routes.push((node, dst, link));
        Ok(())
    }

    /// The routing table: fewest hops, ties to the lowest link id, routes
    /// set by hand first.
    pub(crate) fn routing_table(&self) -> RoutingTable {
        let n = self.nodes as usize;
        let mut out_links: Vec<(u32, u32)> = vec![(0, NO_ROUTE); n];
        for (i, (from, _, _)) in self.links.iter().enumerate() {
            let o = &mut out_links[from.index()];
            o.0 += 1;
            o.1 = i as u32;
        }
        let mut manual = vec![false; n];
        for &(node, _, _) in &self.manual_routes {
            manual[node.index()] = true;
        }
        // A node with one outgoing link and no hand-set route forwards
        // everything it can reach onto that link: one entry, if it reaches
        // every other node (checked below), instead of a row.
        let single: Vec<u32> = (0..n)
            .map(|i| match out_links[i] {
                (1, l) if !manual[i] => l,
                _ => NO_ROUTE,
            })
            .collect();
        let mut table = RoutingTable {
            n,
            single,
            row: vec![NO_ROW; n],
            full: Vec::new(),
        };
        for i in 0..n {
            if table.single[i] == NO_ROUTE {
                table.add_row(i);
            }
        }
        for &(node, dst, link) in &self.manual_routes {
            let r = table.row[node.index()] as usize;
            table.full[r + dst.index()] = link.0;
        }
        let mut reached = vec![0usize; n];
        self.reverse_bfs(|u, dst, l| {
            if table.row[u] == NO_ROW {
                reached[u] += 1;
            } else {
                let slot = &mut table.full[table.row[u] as usize + dst];
                if *slot == NO_ROUTE {
                    *slot = l;
                }
            }
        });
        // Single-link nodes that cannot reach everyone get a row after all.
        let partial: Vec<usize> = (0..n)
            .filter(|&i| table.row[i] == NO_ROW && reached[i] + 1 < n)
            .collect();
        if !partial.is_empty() {
            for &i in &partial {
                table.add_row(i);
            }
            self.reverse_bfs(|u, dst, l| {
                if partial.binary_search(&u).is_ok() {
                    table.full[table.row[u] as usize + dst] = l;
                }
            });
        }
        table
    }

    /// For every destination, a breadth-first search over reversed links;
    /// `found(u, dst, link)` for each node `u` that reaches `dst`, with the
    /// first link of one of its shortest paths (links in id order).
    fn reverse_bfs(&self, mut found: impl FnMut(usize, usize, u32)) {
        let n = self.nodes as usize;
        // Incoming links per node, in link-id order.
        let mut incoming: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (i, (_, to, _)) in self.links.iter().enumerate() {
            incoming[to.index()].push(i as u32);
        }
        let mut dist = vec![u32::MAX; n];
        let mut queue = VecDeque::new();
        for dst in 0..n {
            dist.iter_mut().for_each(|d| *d = u32::MAX);
            dist[dst] = 0;
            queue.clear();
            queue.push_back(dst);
            while let Some(v) = queue.pop_front() {
                for &l in &incoming[v] {
                    let u = self.links[l as usize].0.index();
                    if dist[u] == u32::MAX {
                        dist[u] = dist[v] + 1;
                        found(u, dst, l);
                        queue.push_back(u);
                    }
                }
            }
        }
    }
}

const NO_ROW: u32 = u32::MAX;

/// Next hops of every node: a node with one outgoing link that reaches every
/// other node (a host) keeps one entry, any other node (a router) a row of
/// one link per destination; memory grows with routers x nodes, not nodes².
#[derive(Clone, Debug)]
pub(crate) struct RoutingTable {
    n: usize,
    /// Per node: its only link, or `NO_ROUTE` if it has a row.
    single: Vec<u32>,
    /// Per node: where its row starts in `full`, or `NO_ROW`.
    row: Vec<u32>,
    full: Vec<u32>,
}

impl RoutingTable {
    fn add_row(&mut self, node: usize) {
        self.row[node] = u32::try_from(self.full.len()).expect("routing table under 4 G entries");
        self.full.resize(self.full.len() + self.n, NO_ROUTE);
    }

    /// The link `node` forwards a packet for `dst` onto, or `u32::MAX`
    /// (no route; also for `dst == node`).
    #[inline]
    pub(crate) fn route(&self, node: usize, dst: usize) -> u32 {
        if dst >= self.n || node == dst {
            return NO_ROUTE;
        }
        match self.row[node] {
            NO_ROW => self.single[node],
            r => self.full[r as usize + dst],
        }
    }
}

/// Parameters of a dumbbell (Yamanegi et al.; Araki):
/// `sender_i -> left -> right -> receiver_i`, with access links both ways per
/// pair and one bottleneck both ways between the routers.
///
/// Build one with [`DumbbellConfig::new`] (the struct is
/// `#[non_exhaustive]`; its fields are public for reading).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct DumbbellConfig {
    /// Number of sender/receiver pairs (>= 1).
    pub pairs: usize,
    /// Every access link, both directions.
    pub access: LinkConfig,
    /// Forward bottleneck `left -> right`, impairments included.
    pub bottleneck: LinkConfig,
    /// Reverse bottleneck `right -> left`; `None` = the forward one without
    /// impairments.
    pub reverse_bottleneck: Option<LinkConfig>,
}

impl DumbbellConfig {
    /// `pairs` sender/receiver pairs on `access` links, sharing
    /// `bottleneck`; the reverse bottleneck is the forward one without
    /// impairments.
    pub fn new(pairs: usize, access: LinkConfig, bottleneck: LinkConfig) -> Self {
        DumbbellConfig {
            pairs,
            access,
            bottleneck,
            reverse_bottleneck: None,
        }
    }

    /// Sets the reverse bottleneck (`None`: the forward one without
    /// impairments).
    #[must_use]
    pub fn with_reverse_bottleneck(mut self, reverse: Option<LinkConfig>) -> Self {
        self.reverse_bottleneck = reverse;
        self
    }
}

/// A built dumbbell: the topology plus the ids a caller needs to attach
/// hosts and read metrics.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Dumbbell {
    /// The network (pass it to [`crate::Simulator::new`]).
    pub topology: Topology,
    /// Sender nodes, one per pair.
    pub senders: Vec<NodeId>,
    /// Receiver nodes, one per pair.
    pub receivers: Vec<NodeId>,
    /// Router on the sender side.
    pub left: NodeId,
    /// Router on the receiver side.
    pub right: NodeId,
    /// `left -> right`, carrying the impairments.
    pub bottleneck: LinkId,
    /// `right -> left`.
    pub bottleneck_reverse: LinkId,
    /// Per pair: (`sender -> left`, `left -> sender`).
    pub sender_access: Vec<(LinkId, LinkId)>,
    /// Per pair: (`right -> receiver`, `receiver -> right`).
    pub receiver_access: Vec<(LinkId, LinkId)>,
}

impl Dumbbell {
    /// Builds the dumbbell; fails on zero pairs or an invalid link.
    pub fn build(config: &DumbbellConfig) -> Result<Dumbbell, Error> {
        Self::build_with_access(config, &vec![config.access.clone(); config.pairs])
    }

    /// Builds the dumbbell with its own access links for each pair:
    /// `access[i]` replaces [`DumbbellConfig::access`] for pair `i` (both
    /// of its access links, both ways), so pairs can differ in round-trip
    /// time, `2 * (bottleneck delay + 2 * access delay)`. Links get the same
    /// ids as with [`Dumbbell::build`]; `access` must hold one link per pair.
    ///
    /// ```
    /// # use std::time::Duration;
    /// # use tput_netsim::{Dumbbell, DumbbellConfig, LinkConfig, Rate};
    /// let link = |ms| LinkConfig::new(Rate::from_mbit_per_sec(100), Duration::from_millis(ms));
    /// let config = DumbbellConfig::new(2, link(1), link(5));
    /// // Round trips of 2 * (5 + 2 * 1) = 14 ms and 2 * (5 + 2 * 10) = 50 ms.
    /// let d = Dumbbell::build_with_access(&config, &[link(1), link(10)]).unwrap();
    /// assert_eq!(d.topology.link(d.sender_access[1].0).unwrap().2.delay, Duration::from_millis(10));
    /// ```
    pub fn build_with_access(config: &DumbbellConfig, access: &[LinkConfig]) -> Result<Dumbbell, Error> {
        if config.pairs == 0 {
            return Err(Error::NoPairs);
        }
        if access.len() != config.pairs {
            return Err(Error::AccessCount {
                pairs: config.pairs,
                got: access.len(),
            });
        }
        let mut t = Topology::new();
        let left = t.add_node();
        let right = t.add_node();
        let reverse = config
            .reverse_bottleneck
            .clone()
            .unwrap_or_else(|| config.bottleneck.without_impairments());
        let (bottleneck, bottleneck_reverse) = t.add_duplex(left, right, config.bottleneck.clone(), reverse)?;
        let mut d = Dumbbell {
            topology: Topology::new(),
            senders: Vec::with_capacity(config.pairs),
            receivers: Vec::with_capacity(config.pairs),
            left,
            right,
            bottleneck,
            bottleneck_reverse,
            sender_access: Vec::with_capacity(config.pairs),
            receiver_access: Vec::with_capacity(config.pairs),
        };
        for a in access {
            let s = t.add_node();
            let r = t.add_node();
            d.sender_access.push(t.add_duplex(s, left, a.clone(), a.clone())?);
            d.receiver_access.push(t.add_duplex(right, r, a.clone(), a.clone())?);
            d.senders.push(s);
            d.receivers.push(r);
        }
        d.topology = t;
        Ok(d)
    }
}

/// A built chain `nodes[0] -> nodes[1] -> ... -> nodes[k]`.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Chain {
    /// The network (pass it to [`crate::Simulator::new`]).
    pub topology: Topology,
    /// The nodes in path order; the first and last are the end hosts.
    pub nodes: Vec<NodeId>,
    /// `nodes[i] -> nodes[i+1]`, with the given configurations.
    pub forward: Vec<LinkId>,
    /// `nodes[i+1] -> nodes[i]`, the same links without impairments.
    pub reverse: Vec<LinkId>,
}

impl Chain {
    /// One node more than `hops`; the forward links use `hops` in order.
    ///
    /// A hop `i > 0` with a [`CutMode::Pause`](crate::CutMode::Pause)
    /// cut-off models a switch that PAUSEs its upstream neighbour just before
    /// each cut (Morokoshi and Yakoh's remedy (2), IEEE 802.3x): hop `i - 1`, unless it
    /// has a cut-off of its own, gets [`CutOff::upstream_pause`](crate::CutOff::upstream_pause)
    /// of it, so the sender's own queue holds its traffic through the cut.
    pub fn build(hops: &[LinkConfig]) -> Result<Chain, Error> {
        if hops.is_empty() {
            return Err(Error::EmptyChain);
        }
        let mut t = Topology::new();
        let nodes: Vec<NodeId> = (0..=hops.len()).map(|_| t.add_node()).collect();
        let mut forward = Vec::with_capacity(hops.len());
        let mut reverse = Vec::with_capacity(hops.len());
        for (i, cfg) in hops.iter().enumerate() {
            let mut cfg = cfg.clone();
            // A `pause` cut-off on hop i + 1 PAUSEs this hop's transmitter
            // ahead of each cut (Morokoshi and Yakoh's remedy (2)), unless this hop has
            // a cut-off of its own.
            if cfg.cutoff.is_none()
                && let Some(next) = hops.get(i + 1)
                && let Some(c) = next.cutoff.filter(|c| c.mode == crate::CutMode::Pause)
            {
                cfg.cutoff = Some(c.upstream_pause(cfg.delay));
            }
            let (f, r) = t.add_duplex(nodes[i], nodes[i + 1], cfg.clone(), cfg.without_impairments())?;
            forward.push(f);
            reverse.push(r);
        }
        Ok(Chain {
            topology: t,
            nodes,
            forward,
            reverse,
        })
    }
}

/// One sender/receiver pair of a [`ParkingLot`]: the hops it crosses and
/// its access links.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ParkingLotPair {
    /// First hop crossed (0-based): the sender hangs off router `first_hop`.
    pub first_hop: usize,
    /// Last hop crossed (inclusive): the receiver hangs off router `last_hop + 1`.
    pub last_hop: usize,
    /// Both access links of the pair (sender and receiver side), both ways.
    pub access: LinkConfig,
}

impl ParkingLotPair {
    /// A pair crossing hops `first_hop..=last_hop` with `access` links.
    pub fn new(first_hop: usize, last_hop: usize, access: LinkConfig) -> Self {
        ParkingLotPair {
            first_hop,
            last_hop,
            access,
        }
    }
}

/// A built parking lot: routers `routers[0] -> ... -> routers[k]` joined by
/// `k` hops, and one sender/receiver pair per [`ParkingLotPair`], the sender
/// on the router where its path enters, the receiver on the router where it
/// leaves. The classic multi-bottleneck test: a long flow crossing every hop
/// competes on each with cross traffic that crosses only that one (Floyd,
/// "Connections with multiple congested gateways in packet-switched
/// networks, part 1: one-way traffic", 1991).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ParkingLot {
    /// The network (pass it to [`crate::Simulator::new`]).
    pub topology: Topology,
    /// The routers in path order.
    pub routers: Vec<NodeId>,
    /// `routers[i] -> routers[i+1]`, with the given configurations.
    pub forward: Vec<LinkId>,
    /// `routers[i+1] -> routers[i]`, the same links without impairments.
    pub reverse: Vec<LinkId>,
    /// Sender nodes, one per pair.
    pub senders: Vec<NodeId>,
    /// Receiver nodes, one per pair.
    pub receivers: Vec<NodeId>,
}

impl ParkingLot {
    /// Builds the parking lot; fails on no hop, a pair whose hops are out of
    /// order or past the last hop, or an invalid link. The reverse hops mirror
    /// the forward ones without impairments.
    pub fn build(hops: &[LinkConfig], pairs: &[ParkingLotPair]) -> Result<ParkingLot, Error> {
        if hops.is_empty() {
            return Err(Error::EmptyChain);
        }
        if pairs.is_empty() {
            return Err(Error::NoPairs);
        }
        if let Some(p) = pairs
            .iter()
            .find(|p| p.first_hop > p.last_hop || p.last_hop >= hops.len())
        {
            return Err(Error::BadPairHops {
                first: p.first_hop,
                last: p.last_hop,
                hops: hops.len(),
            });
        }
        let mut t = Topology::new();
        let routers: Vec<NodeId> = (0..=hops.len()).map(|_| t.add_node()).collect();
        let mut forward = Vec::with_capacity(hops.len());
        let mut reverse = Vec::with_capacity(hops.len());
        for (i, cfg) in hops.iter().enumerate() {
            let (f, r) = t.add_duplex(routers[i], routers[i + 1], cfg.clone(), cfg.without_impairments())?;
            forward.push(f);
            reverse.push(r);
        }
        let mut senders = Vec::with_capacity(pairs.len());
        let mut receivers = Vec::with_capacity(pairs.len());
        for p in pairs {
            let s = t.add_node();
            let r = t.add_node();
            t.add_duplex(s, routers[p.first_hop], p.access.clone(), p.access.clone())?;
            t.add_duplex(routers[p.last_hop + 1], r, p.access.clone(), p.access.clone())?;
            senders.push(s);
            receivers.push(r);
        }
        Ok(ParkingLot {
            topology: t,
            routers,
            forward,
            reverse,
            senders,
            receivers,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rate;
    use std::time::Duration;

    fn cfg() -> LinkConfig {
        LinkConfig::new(Rate::from_mbit_per_sec(1), Duration::from_millis(1))
    }

    #[test]
    fn routes_follow_fewest_hops() {
        let d = Dumbbell::build(&DumbbellConfig::new(2, cfg(), cfg())).unwrap();
        let t = &d.topology;
        let table = t.routing_table();
        let route = |a: NodeId, b: NodeId| table.route(a.index(), b.index());
        assert_eq!(route(d.senders[0], d.receivers[1]), d.sender_access[0].0.0);
        assert_eq!(route(d.left, d.receivers[1]), d.bottleneck.0);
        assert_eq!(route(d.right, d.receivers[1]), d.receiver_access[1].0.0);
        assert_eq!(route(d.receivers[1], d.senders[0]), d.receiver_access[1].1.0);
        assert_eq!(route(d.right, d.senders[0]), d.bottleneck_reverse.0);
        assert_eq!(route(d.left, d.left), NO_ROUTE);
    }

    /// A node with one outgoing link keeps one entry only if it reaches
    /// every node; otherwise it gets a row, with no route where it has none.
    #[test]
    fn single_link_nodes_route_like_rows() {
        let mut t = Topology::new();
        let (a, b, c, d) = (t.add_node(), t.add_node(), t.add_node(), t.add_node());
        let ab = t.add_link(a, b, cfg()).unwrap();
        let bc = t.add_link(b, c, cfg()).unwrap();
        let cb = t.add_link(c, b, cfg()).unwrap();
        let ba = t.add_link(b, a, cfg()).unwrap();
        let table = t.routing_table();
        let route = |x: NodeId, y: NodeId| table.route(x.index(), y.index());
        // `a` and `c` have one link each but cannot reach the isolated `d`.
        assert_eq!(route(a, c), ab.0);
        assert_eq!(route(a, d), NO_ROUTE);
        assert_eq!(route(c, a), cb.0);
        assert_eq!(route(b, a), ba.0);
        assert_eq!(route(b, c), bc.0);
        assert_eq!(route(a, a), NO_ROUTE);
        assert_eq!(table.route(a.index(), 99), NO_ROUTE);
        // Joined to `d`, `a` keeps one entry and still routes the same.
        let mut t2 = t.clone();
        t2.add_link(d, a, cfg()).unwrap();
        t2.add_link(c, d, cfg()).unwrap();
        let table2 = t2.routing_table();
        assert_eq!(table2.route(a.index(), c.index()), ab.0);
        assert_eq!(table2.route(a.index(), d.index()), ab.0);
        assert_eq!(table2.route(d.index(), c.index()), t2.link_count() as u32 - 2);
    }

    #[test]
    fn parking_lot_paths_cross_their_hops_only() {
        let hops = [cfg(), cfg(), cfg()];
        let pairs = [
            ParkingLotPair::new(0, 2, cfg()),
            ParkingLotPair::new(1, 1, cfg()),
            ParkingLotPair::new(2, 2, cfg()),
        ];
        let p = ParkingLot::build(&hops, &pairs).unwrap();
        let t = &p.topology;
        let table = t.routing_table();
        // Follow the routes from each sender to its receiver.
        let path = |i: usize| {
            let (mut at, dst) = (p.senders[i], p.receivers[i]);
            let mut links = Vec::new();
            while at != dst {
                let l = LinkId(table.route(at.index(), dst.index()));
                links.push(l);
                at = t.link(l).unwrap().1;
            }
            links.into_iter().filter(|l| p.forward.contains(l)).collect::<Vec<_>>()
        };
        assert_eq!(path(0), p.forward);
        assert_eq!(path(1), [p.forward[1]]);
        assert_eq!(path(2), [p.forward[2]]);
        assert_eq!(
            ParkingLot::build(&hops, &[ParkingLotPair::new(1, 3, cfg())]).unwrap_err(),
            Error::BadPairHops {
                first: 1,
                last: 3,
                hops: 3
            }
        );
        assert!(ParkingLot::build(&hops, &[ParkingLotPair::new(2, 1, cfg())]).is_err());
        assert_eq!(ParkingLot::build(&[], &pairs).unwrap_err(), Error::EmptyChain);
    }

    #[test]
    fn per_pair_access_links_keep_the_link_ids() {
        let c = DumbbellConfig::new(2, cfg(), cfg());
        let plain = Dumbbell::build(&c).unwrap();
        let slow = LinkConfig::new(Rate::from_mbit_per_sec(1), Duration::from_millis(50));
        let d = Dumbbell::build_with_access(&c, &[cfg(), slow.clone()]).unwrap();
        assert_eq!(d.sender_access, plain.sender_access);
        assert_eq!(d.receiver_access, plain.receiver_access);
        for l in [
            d.sender_access[1].0,
            d.sender_access[1].1,
            d.receiver_access[1].0,
            d.receiver_access[1].1,
        ] {
            assert_eq!(d.topology.link(l).unwrap().2, &slow);
        }
        assert_eq!(d.topology.link(d.sender_access[0].0).unwrap().2, &cfg());
        assert_eq!(
            Dumbbell::build_with_access(&c, &[cfg()]).unwrap_err().to_string(),
            "a dumbbell with 2 pairs needs 2 access links, got 1"
        );
    }

    #[test]
    fn builder_errors() {
        let mut t = Topology::new();
        let a = t.add_node();
        assert_eq!(t.add_link(a, NodeId(5), cfg()), Err(Error::UnknownNode(NodeId(5))));
        assert_eq!(t.add_link(a, a, cfg()), Err(Error::SelfLoop(a)));
        let b = t.add_node();
        let l = t.add_link(a, b, cfg()).unwrap();
        assert_eq!(t.set_route(b, a, l), Err(Error::RouteNotFromNode { node: b, link: l }));
        assert_eq!(Chain::build(&[]).unwrap_err(), Error::EmptyChain);
        assert_eq!(
            Dumbbell::build(&DumbbellConfig::new(0, cfg(), cfg())).unwrap_err(),
            Error::NoPairs
        );
        assert_eq!(
            Chain::build(&[LinkConfig::new(Rate::ZERO, Duration::ZERO)])
                .unwrap_err()
                .to_string(),
            "link rate must be greater than 0 bit/s, got 0 bit/s"
        );
    }
}
