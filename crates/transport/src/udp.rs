//! The tokio back end: a [`Node`] on a real UDP socket, in real time.
//!
//! [`drive`] is the whole loop: send what the node wants sent, wait for a
//! datagram or the node's next wake-up, hand it over, repeat. [`transfer`]
//! and [`serve`] build the usual client and server on top of it.

use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::ops::ControlFlow;
use std::time::Instant;

use bytes::BytesMut;
use tokio::net::UdpSocket;

use crate::Error;
use crate::node::{Node, NodeConfig, NodeEvent, TransferSpec};
use crate::stats::TransferOutcome;
use crate::tls::{Identity, ServerTrust};

/// Most datagrams read in one go before the node gets to send again.
const RECV_BATCH: usize = 64;

/// Errors a UDP socket reports that concern one peer, not the socket: an
/// ICMP port-unreachable surfacing as `ConnectionRefused`, for example.
fn transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::HostUnreachable
            | io::ErrorKind::NetworkUnreachable
            | io::ErrorKind::WouldBlock
            | io::ErrorKind::Interrupted
    ) || e.raw_os_error() == Some(90) // EMSGSIZE: a too-large datagram is the MTU prober's business
}

/// Run `node` on `socket` until `on_event` says stop. Datagrams from the
/// socket carry flow id 0. Socket errors that concern a single peer are
/// logged and skipped; any other is returned.
pub async fn drive(
    socket: &UdpSocket,
    node: &mut Node,
    mut on_event: impl FnMut(&mut Node, NodeEvent) -> ControlFlow<()>,
) -> Result<(), Error> {
    let mut buf = vec![0u8; 65_536];
    loop {
        while let Some(out) = node.poll_transmit() {
            if let Err(e) = socket.send_to(&out.payload, out.destination).await {
                if !transient(&e) {
                    return Err(Error::Io {
                        context: format!("sending to {}", out.destination),
                        source: e,
                    });
                }
                tracing::debug!(dst = %out.destination, "send failed: {e}");
            }
        }
        while let Some(ev) = node.poll_event() {
            if on_event(node, ev).is_break() {
                return Ok(());
            }
        }
        let deadline = node.poll_timeout();
        let sleep = async {
            match deadline {
                Some(t) => tokio::time::sleep_until(tokio::time::Instant::from_std(t)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = socket.recv_from(&mut buf) => {
                match r {
                    Ok((n, from)) => {
                        node.handle_datagram(Instant::now(), from, 0, BytesMut::from(&buf[..n]));
                        for _ in 1..RECV_BATCH {
                            match socket.try_recv_from(&mut buf) {
                                Ok((n, from)) => node.handle_datagram(Instant::now(), from, 0, BytesMut::from(&buf[..n])),
                                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                                Err(e) if transient(&e) => continue,
                                Err(e) => return Err(Error::Io { context: "receiving".into(), source: e }),
                            }
                        }
                    }
                    Err(e) if transient(&e) => tracing::debug!("receive failed: {e}"),
                    Err(e) => return Err(Error::Io { context: "receiving".into(), source: e }),
                }
            }
            () = sleep => node.handle_timeout(Instant::now()),
        }
    }
}

async fn bind(addr: SocketAddr) -> Result<UdpSocket, Error> {
    UdpSocket::bind(addr).await.map_err(|e| Error::Io {
        context: format!("binding UDP {addr}"),
        source: e,
    })
}

/// Run `specs` (one connection each) from a fresh client socket to `server`.
/// Returns when every transfer has ended, with one outcome per transfer in
/// start order; `on_interval` sees every sender-side interval record as it is made.
pub async fn transfer(
    server: SocketAddr,
    server_name: &str,
    trust: &ServerTrust,
    config: NodeConfig,
    specs: Vec<TransferSpec>,
    mut on_interval: impl FnMut(u64, &crate::IntervalStats),
) -> Result<Vec<TransferOutcome>, Error> {
    let local: SocketAddr = match server.ip() {
        IpAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        IpAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let socket = bind(local).await?;
    let mut node = Node::client(config)?;
    let mut ids = Vec::new();
    for spec in specs {
        ids.push(node.start_transfer(Instant::now(), server, server_name, trust, spec)?);
    }
    let mut outcomes: Vec<Option<TransferOutcome>> = vec![None; ids.len()];
    let mut left = ids.len();
    drive(&socket, &mut node, |_, ev| {
        match ev {
            NodeEvent::Interval { id, stats } => on_interval(id, &stats),
            NodeEvent::Finished(o) => {
                if let Some(i) = ids.iter().position(|&id| id == o.id) {
                    outcomes[i] = Some(*o);
                    left -= 1;
                }
            }
        }
        if left == 0 {
            ControlFlow::Break(())
        } else {
            ControlFlow::Continue(())
        }
    })
    .await?;
    // Every connection has drained, so its close has been sent.
    Ok(outcomes.into_iter().flatten().collect())
}

/// Serve transfers on `socket` until `on_event` says stop (or forever).
pub async fn serve(
    socket: &UdpSocket,
    identity: &Identity,
    config: NodeConfig,
    on_event: impl FnMut(&mut Node, NodeEvent) -> ControlFlow<()>,
) -> Result<(), Error> {
    let mut node = Node::server(config, identity)?;
    drive(socket, &mut node, on_event).await
}

/// Bind a UDP socket for [`serve`], with a one-line error naming the address.
pub async fn bind_server(addr: SocketAddr) -> Result<UdpSocket, Error> {
    bind(addr).await
}
