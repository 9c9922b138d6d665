//! The endpoint interface between the simulator and the hosts it runs.

use std::any::Any;
use std::fmt;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};

use crate::{NodeId, SimTime};
use bytes::Bytes;

/// Traffic class chosen by the sending host; per-flow metrics and the
/// bandwidth oracle classify datagrams by it. Small dense numbers are the
/// cheapest (ids below 65 536 are kept in a vector).
pub type FlowId = u32;

/// A host's address: a node and a port on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Addr {
    /// The node the host lives on.
    pub node: NodeId,
    /// The port on that node.
    pub port: u16,
}

impl Addr {
    /// `(node, port)`.
    pub const fn new(node: NodeId, port: u16) -> Self {
        Addr { node, port }
    }

    /// A stable IPv4 socket address for this address, for hosts that need
    /// one (quinn-proto): node `n` is `10.a.b.c` with `a.b.c` = `n + 1` in
    /// base 256, so nodes up to 2^24 - 2 map one-to-one.
    pub fn to_socket_addr(self) -> SocketAddr {
        let n = self.node.0.wrapping_add(1);
        let ip = Ipv4Addr::new(10, (n >> 16) as u8, (n >> 8) as u8, n as u8);
        SocketAddr::V4(SocketAddrV4::new(ip, self.port))
    }

    /// The inverse of [`Addr::to_socket_addr`]; `None` for other addresses.
    pub fn from_socket_addr(sa: SocketAddr) -> Option<Self> {
        let SocketAddr::V4(v4) = sa else { return None };
        let o = v4.ip().octets();
        if o[0] != 10 {
            return None;
        }
        let n = (o[1] as u32) << 16 | (o[2] as u32) << 8 | o[3] as u32;
        Some(Addr::new(NodeId(n.checked_sub(1)?), v4.port()))
    }
}

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.node, self.port)
    }
}

/// An attached host, as returned by [`crate::Simulator::attach`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct HostId(pub u32);

impl HostId {
    /// Index into per-host vectors.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// The ECN codepoint of a datagram's IP header (RFC 3168 §5: the two bits
/// of the ECN field), carried from sender to receiver through every link.
///
/// A queue discipline with ECN on marks an ECN-capable (`ECT(0)`/`ECT(1)`)
/// datagram [`Ecn::Ce`] where it would otherwise drop it; a `Not-ECT`
/// datagram is dropped. Hosts that know nothing of ECN send `Not-ECT` (the
/// default).
///
/// ```
/// use tput_netsim::Ecn;
/// assert_eq!(Ecn::from_bits(0b10), Ecn::Ect0);
/// assert!(Ecn::Ect1.is_ect() && !Ecn::Ce.is_ect());
/// assert_eq!(Ecn::default(), Ecn::NotEct);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
pub enum Ecn {
    /// `00`: not ECN-capable.
    #[default]
    NotEct,
    /// `01`: ECN-capable transport, codepoint 1.
    Ect1,
    /// `10`: ECN-capable transport, codepoint 0.
    Ect0,
    /// `11`: congestion experienced (set by a router).
    Ce,
}

impl Ecn {
    /// The codepoint of the two low bits of `bits` (RFC 3168 §5).
    pub const fn from_bits(bits: u8) -> Self {
        match bits & 0b11 {
            0b00 => Ecn::NotEct,
            0b01 => Ecn::Ect1,
            0b10 => Ecn::Ect0,
            _ => Ecn::Ce,
        }
    }

    /// The two bits of the ECN field.
    pub const fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect1 => 0b01,
            Ecn::Ect0 => 0b10,
            Ecn::Ce => 0b11,
        }
    }

    /// `ECT(0)` or `ECT(1)`: a router may mark it CE instead of dropping it.
    pub const fn is_ect(self) -> bool {
        matches!(self, Ecn::Ect0 | Ecn::Ect1)
    }
}

/// A datagram a host hands to the network.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Datagram {
    /// Destination address.
    pub dst: Addr,
    /// Flow the datagram belongs to (chosen by the sender).
    pub flow: FlowId,
    /// The ECN codepoint it is sent with ([`Ecn::NotEct`] unless the host
    /// speaks ECN).
    pub ecn: Ecn,
    /// UDP payload. The simulator moves it, never copies it; the link adds
    /// its header overhead to the size for timing and byte counts.
    pub payload: Bytes,
}

impl Datagram {
    /// A `Not-ECT` datagram of `flow` to `dst`.
    pub fn new(dst: Addr, flow: FlowId, payload: Bytes) -> Self {
        Datagram {
            dst,
            flow,
            ecn: Ecn::NotEct,
            payload,
        }
    }

    /// The same datagram with ECN codepoint `ecn`.
    pub fn with_ecn(mut self, ecn: Ecn) -> Self {
        self.ecn = ecn;
        self
    }
}

/// An endpoint hosted by the simulator (sans-IO, in virtual time).
///
/// After every call into a host (attach, [`Host::on_datagram`],
/// [`Host::on_timeout`], [`crate::Simulator::kick`]) the simulator drains
/// [`Host::poll_transmit`] until it returns `None`, then reads
/// [`Host::poll_timeout`]. `on_timeout` is called once the virtual clock
/// reaches the reported wake-up time (never early). The shape follows
/// quinn-proto's `Endpoint`/`Connection` driving loop, so a host wrapping
/// one maps each call one-to-one (with [`SimTime::to_instant`] for `now`).
pub trait Host: 'static {
    /// Called once when the host is attached, with its own address.
    fn on_attach(&mut self, now: SimTime, local: Addr) {
        let _ = (now, local);
    }

    /// A datagram from `from` (flow `flow`) arrived at `now` with ECN
    /// codepoint `ecn` (the sender's, or [`Ecn::Ce`] if a queue marked it).
    /// The payload is the sender's buffer itself; `Bytes::try_into_mut`
    /// succeeds without a copy when the sender built it from an owned buffer.
    fn on_datagram(&mut self, now: SimTime, from: Addr, flow: FlowId, ecn: Ecn, payload: Bytes);

    /// The next datagram to send at `now`, if any.
    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram>;

    /// When the host next wants [`Host::on_timeout`]; `None` = no timer.
    fn poll_timeout(&mut self) -> Option<SimTime>;

    /// The wake-up time reported by `poll_timeout` has been reached.
    fn on_timeout(&mut self, now: SimTime);
}

/// Object-safe `Host` plus downcasting, blanket-implemented for every host so
/// callers can get their concrete type back after a run.
pub(crate) trait AnyHost: Host {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Host> AnyHost for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

impl<H: Host + ?Sized> Host for Box<H> {
    fn on_attach(&mut self, now: SimTime, local: Addr) {
        (**self).on_attach(now, local)
    }
    fn on_datagram(&mut self, now: SimTime, from: Addr, flow: FlowId, ecn: Ecn, payload: Bytes) {
        (**self).on_datagram(now, from, flow, ecn, payload)
    }
    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        (**self).poll_transmit(now)
    }
    fn poll_timeout(&mut self) -> Option<SimTime> {
        (**self).poll_timeout()
    }
    fn on_timeout(&mut self, now: SimTime) {
        (**self).on_timeout(now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_addr_round_trip() {
        for n in [0u32, 1, 255, 256, 70_000] {
            let a = Addr::new(NodeId(n), 4433);
            assert_eq!(Addr::from_socket_addr(a.to_socket_addr()), Some(a));
        }
        assert_eq!(Addr::new(NodeId(0), 1).to_socket_addr().to_string(), "10.0.0.1:1");
    }
}
