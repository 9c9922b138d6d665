//! The tokio back end: a [`Node`] on a real UDP socket, in real time.
//!
//! [`drive`] is the whole loop: send what the node wants sent, wait for a
//! datagram or the node's next wake-up, hand it over, repeat. [`transfer`]
//! and [`serve`] build the usual client and server on top of it.

use std::io::{self, IoSliceMut};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use quinn_udp::{RecvMeta, Transmit, UdpSocketState};
use tokio::io::Interest;
use tokio::net::UdpSocket;

use crate::Error;
use crate::node::{Node, NodeConfig, NodeEvent, Outgoing, TransferSpec};
use crate::stats::TransferOutcome;
use crate::tls::{Identity, ServerTrust};

/// Most datagrams read in one go before the node gets to send again.
const RECV_BATCH: usize = 64;
/// Receive buffer per message: one GRO batch is at most 64 KiB.
const RECV_SLOT: usize = 65_536;
/// Messages per receive call (at most quinn-udp's batch size).
const RECV_SLOTS: usize = 8;
/// Socket send and receive buffers asked for (as quinn's `perf` does): GSO
/// sends a connection's burst in one call, and the 208 KiB Linux default
/// receive buffer then overflows on loopback. The kernel caps the request at
/// `net.core.{r,w}mem_max`; a refusal is only logged.
const SOCKET_BUFFER: usize = 2 << 20;
/// Most datagrams per GSO call (the node also keeps a batch under 64 KiB,
/// which Linux requires: a larger one is refused with EMSGSIZE and all of it
/// is lost; that, not socket buffers, was why 64 segments of 1452 bytes once
/// stalled every transfer). With the transmit budget below, the kernel's
/// limit of 64 measured best on loopback (`benches/live/compare.sh`): 0.98x
/// quinn perf's CPU per GB, against 1.19x with 10 segments.
const GSO_SEGMENTS: usize = 64;
/// Datagrams a connection sends before the loop takes in what has arrived
/// ([`Node::set_transmit_budget`]); quinn's connection driver yields after
/// 20 too. Without it a sender emptied its whole window into the socket
/// before reading a single acknowledgement: on loopback a smoothed RTT of
/// ~1.2 ms instead of ~0.2 ms, and idle gaps that cost a third of the
/// goodput.
const TRANSMIT_BUDGET: usize = 20;

/// A live client's keep-alive ([`NodeConfig::keep_alive`]): after a NAT
/// rebinding a downloading client may have nothing to send, and the server
/// keeps sending to the old address; a PING after 500 ms of silence (or a
/// quarter of the idle timeout, if shorter) shows it the new one (RFC 9000
/// §9.3).
const CLIENT_KEEP_ALIVE: Duration = Duration::from_millis(500);

/// A live sender's stall probe interval ([`NodeConfig::stall_probe`]).
const STALL_PROBE: Duration = Duration::from_millis(500);

/// Errors a UDP socket reports that concern one peer, not the socket: an
/// ICMP port-unreachable surfacing as `ConnectionRefused`, for example.
fn transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::HostUnreachable
            | io::ErrorKind::NetworkUnreachable
            | io::ErrorKind::Interrupted
    ) || e.raw_os_error() == Some(90) // EMSGSIZE: a too-large datagram is the MTU prober's business
}

fn io_error(context: impl Into<String>) -> impl FnOnce(io::Error) -> Error {
    let context = context.into();
    move |source| Error::Io { context, source }
}

/// Send one [`Outgoing`] (a datagram or a GSO batch), waiting while the socket is full.
async fn send(socket: &UdpSocket, state: &UdpSocketState, out: &Outgoing) -> Result<(), Error> {
    let transmit = Transmit {
        destination: out.destination,
        // RFC 9000 §13.4: the codepoint quinn-proto asks for, in the IP
        // header's ECN field (quinn-udp sets IP_TOS / IPV6_TCLASS per call,
        // GSO batches included); `None` once the node's ECN is off.
        ecn: out.ecn.and_then(|e| quinn_udp::EcnCodepoint::from_bits(e as u8)),
        contents: &out.payload,
        segment_size: out.segment_size,
        src_ip: None,
    };
    loop {
        // quinn-udp logs and swallows per-datagram errors (UDP is unreliable
        // anyway; QUIC retransmits); only "would block" comes back.
        match socket.try_io(Interest::WRITABLE, || state.send(socket.into(), &transmit)) {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                socket
                    .writable()
                    .await
                    .map_err(io_error(format!("sending to {}", out.destination)))?;
            }
            Err(e) if transient(&e) => {
                tracing::debug!(dst = %out.destination, "send failed: {e}");
                return Ok(());
            }
            Err(e) => return Err(io_error(format!("sending to {}", out.destination))(e)),
        }
    }
}

/// Run `node` on `socket` until `on_event` says stop. Socket errors that concern a single peer are
/// logged and skipped; any other is returned.
///
/// The socket is driven through `quinn-udp`: on Linux, a connection's
/// datagrams leave in GSO batches (one `sendmsg` for up to 64 datagrams and
/// 64 KiB, or the kernel's limit if lower; [`Node::set_max_segments`]) and
/// arrive in GRO batches that are split here; elsewhere, or if the kernel
/// refuses, one datagram per call. After 20 datagrams of a connection the
/// loop reads what has arrived before it sends on
/// ([`Node::set_transmit_budget`]). Datagrams leave with the ECN codepoint
/// the node asks for and arrive with the one their IP header carried
/// (RFC 9000 §13.4; [`NodeConfig::ecn`] switches both off).
pub async fn drive(
    socket: &UdpSocket,
    node: &mut Node,
    mut on_event: impl FnMut(&mut Node, NodeEvent) -> ControlFlow<()>,
) -> Result<(), Error> {
    // Only a node built by `Node::simulated` (the `sim` feature) can leave
    // packets in the clear; live code cannot build one.
    #[cfg(feature = "sim")]
    if node.null_packet_protection() {
        return Err(crate::ConfigError::NullProtectionLive.into());
    }
    let state = UdpSocketState::new(socket.into()).map_err(io_error("setting up the UDP socket"))?;
    for (what, r) in [
        ("send", state.set_send_buffer_size(socket.into(), SOCKET_BUFFER)),
        ("receive", state.set_recv_buffer_size(socket.into(), SOCKET_BUFFER)),
    ] {
        if let Err(e) = r {
            tracing::debug!("could not enlarge the UDP {what} buffer: {e}");
        }
    }
    let slots = RECV_SLOTS.clamp(1, quinn_udp::BATCH_SIZE);
    let mut bufs = vec![0u8; RECV_SLOT * slots];
    let mut metas = vec![RecvMeta::default(); slots];
    // One receive call's datagrams, reused from call to call.
    let mut batch: Batch = Vec::new();
    let mut arena = RecvArena::with_capacity(RECV_SLOT * slots);
    node.set_transmit_budget(TRANSMIT_BUDGET);
    loop {
        // GSO may be switched off by quinn-udp after a kernel refusal.
        node.set_max_segments(state.max_gso_segments().min(GSO_SEGMENTS));
        while let Some(out) = node.poll_transmit() {
            send(socket, &state, &out).await?;
            node.recycle(out);
        }
        while let Some(ev) = node.poll_event() {
            if on_event(node, ev).is_break() {
                return Ok(());
            }
        }
        if node.has_more_to_send() {
            // Take in what has arrived (acknowledgements) before sending on.
            // The socket is non-blocking: this asks the kernel directly,
            // whatever tokio last saw of its readiness.
            let mut slices: Vec<IoSliceMut<'_>> = bufs.chunks_mut(RECV_SLOT).map(IoSliceMut::new).collect();
            match state.recv(socket.into(), &mut slices, &mut metas) {
                Ok(n) => {
                    hand_over(node, &slices, &metas, n, &mut arena, &mut batch);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock || transient(&e) => {}
                Err(e) => return Err(io_error("receiving")(e)),
            }
            // Timers fall due while a connection keeps sending, too.
            let now = Instant::now();
            if node.poll_timeout().is_some_and(|t| t <= now) {
                node.handle_timeout(now);
            }
            node.send_more(now);
            continue;
        }
        let deadline = node.poll_timeout();
        let sleep = async {
            match deadline {
                Some(t) => tokio::time::sleep_until(tokio::time::Instant::from_std(t)).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            r = socket.readable() => {
                r.map_err(io_error("receiving"))?;
                let mut handled = 0;
                while handled < RECV_BATCH {
                    let mut slices: Vec<IoSliceMut<'_>> = bufs.chunks_mut(RECV_SLOT).map(IoSliceMut::new).collect();
                    match socket.try_io(Interest::READABLE, || state.recv(socket.into(), &mut slices, &mut metas)) {
                        Ok(n) => handled += hand_over(node, &slices, &metas, n, &mut arena, &mut batch),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                        Err(e) if transient(&e) => tracing::debug!("receive failed: {e}"),
                        Err(e) => return Err(io_error("receiving")(e)),
                    }
                }
            }
            () = sleep => node.handle_timeout(Instant::now()),
        }
    }
}

/// Hand the datagrams of one receive call's `n` messages to `node`: every
/// datagram first, then each connection driven once. A message may be a GRO
/// batch: datagrams of `stride` bytes, the last maybe shorter, copied into
/// `arena`. `batch` is scratch space, empty between calls. Returns the
/// datagrams handed over.
/// Each datagram goes with the ECN codepoint its IP header carried
/// (quinn-udp reads IP_TOS / IPV6_TCLASS; a GRO batch shares one), which
/// the node counts into its ACK frames (RFC 9000 §13.4.1).
fn hand_over(
    node: &mut Node,
    slices: &[IoSliceMut<'_>],
    metas: &[RecvMeta],
    n: usize,
    arena: &mut RecvArena,
    batch: &mut Batch,
) -> usize {
    for (meta, slice) in metas.iter().zip(slices).take(n) {
        let data = &slice[..meta.len.min(slice.len())];
        let ecn = meta.ecn.and_then(|e| quinn_proto::EcnCodepoint::from_bits(e as u8));
        arena.split(data, meta.stride, |d| batch.push((meta.addr, ecn, d)));
    }
    let count = batch.len();
    node.handle_datagrams_ecn(Instant::now(), batch.drain(..));
    count
}

/// One receive call's datagrams: sender, ECN codepoint, payload.
type Batch = Vec<(SocketAddr, Option<quinn_proto::EcnCodepoint>, BytesMut)>;

/// Where received datagrams are copied to: one allocation, reused from
/// receive call to receive call. quinn-proto takes each datagram as an owned
/// `BytesMut` (it decrypts in place and keeps stream data as slices of it
/// until the application reads them), so every datagram is copied out of
/// the receive buffers once; here each receive message (a GRO batch) is
/// copied into the arena and split into its datagrams, which share the
/// arena's allocation. Once all of them are dropped (normally by the next
/// receive call: the node reads what they carry before it returns), the
/// arena takes its whole allocation back.
///
/// Why not one fresh allocation per datagram: a receive call takes up to
/// [`RECV_SLOTS`] GRO batches of up to 64 KiB, all alive until the node has
/// handled the call's last datagram. With 9000-byte datagrams (`--max-mtu
/// 9000`) that is half a megabyte of heap that the allocator gave back to
/// the kernel after every call and faulted in again, zeroed, on the next:
/// page faults, page clearing and their accounting took about a tenth of
/// the CPU of a loopback upload.
struct RecvArena {
    buf: BytesMut,
}

impl RecvArena {
    fn with_capacity(capacity: usize) -> Self {
        Self {
            buf: BytesMut::with_capacity(capacity),
        }
    }

    /// Copy one received message into the arena and hand its datagrams to
    /// `out` in order: `stride` bytes each (the GRO segment size; a message
    /// without GRO has `stride` equal to its length), the last maybe shorter.
    fn split(&mut self, data: &[u8], stride: usize, mut out: impl FnMut(BytesMut)) {
        // Room for the message: the unused end of the allocation, or the
        // whole allocation again if no datagram cut from it is alive, or
        // else a new one (the old one is freed with its last datagram).
        self.buf.reserve(data.len());
        self.buf.extend_from_slice(data);
        let mut message = self.buf.split();
        let stride = stride.max(1);
        while !message.is_empty() {
            out(message.split_to(stride.min(message.len())));
        }
    }
}

/// CPU time (user plus system) this process has used, in seconds
/// ([`usage::process_cpu_secs`](crate::usage::process_cpu_secs)). The
/// [`transfer`] and [`serve`] loops use it as [`NodeConfig::cpu_clock`]
/// unless one is set.
pub use crate::usage::process_cpu_secs;

async fn bind(addr: SocketAddr) -> Result<UdpSocket, Error> {
    UdpSocket::bind(addr)
        .await
        .map_err(io_error(format!("binding UDP {addr}")))
}

/// What every live node gets, where the caller left them unset: the
/// process's CPU clock, stall probes ([`STALL_PROBE`]) and, for a client,
/// keep-alive PINGs ([`CLIENT_KEEP_ALIVE`]); and the strict idle timeout
/// ([`NodeConfig::strict_idle`]). A transfer whose path dies, in either
/// direction, then fails one idle timeout after the last packet received,
/// and the peer hears why if the other direction still works; one whose
/// path only has periodic outages carries on.
fn live_config(mut config: NodeConfig, client: bool) -> NodeConfig {
    config.cpu_clock.get_or_insert(process_cpu_secs);
    config.stall_probe.get_or_insert(STALL_PROBE);
    if client {
        config
            .keep_alive
            .get_or_insert(CLIENT_KEEP_ALIVE.min(config.idle_timeout / 4));
    }
    config.strict_idle = true;
    config
}

/// Run `specs` (one connection each) from a fresh client socket to `server`.
/// Returns when every transfer has ended, with one outcome per transfer in
/// start order; `on_interval` sees every interval record of the senders as
/// it is complete (see [`IntervalStats`](crate::IntervalStats)), downloads included.
/// The node gets the live settings: keep-alive PINGs, stall probes and
/// the strict idle timeout ([`NodeConfig::keep_alive`],
/// [`NodeConfig::stall_probe`], [`NodeConfig::strict_idle`]).
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
    let mut node = Node::client(live_config(config, true))?;
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
/// The node gets the live settings: stall probes and the strict idle
/// timeout ([`NodeConfig::stall_probe`], [`NodeConfig::strict_idle`]).
pub async fn serve(
    socket: &UdpSocket,
    identity: &Identity,
    config: NodeConfig,
    on_event: impl FnMut(&mut Node, NodeEvent) -> ControlFlow<()>,
) -> Result<(), Error> {
    let mut node = Node::server(live_config(config, false), identity)?;
    drive(socket, &mut node, on_event).await
}

/// Bind a UDP socket for [`serve`], with a one-line error naming the address.
pub async fn bind_server(addr: SocketAddr) -> Result<UdpSocket, Error> {
    bind(addr).await
}

#[cfg(test)]
mod tests {
    use super::RecvArena;
    use bytes::BytesMut;

    fn split(arena: &mut RecvArena, data: &[u8], stride: usize) -> Vec<BytesMut> {
        let mut out = Vec::new();
        arena.split(data, stride, |d| out.push(d));
        out
    }

    #[test]
    fn a_gro_batch_splits_into_its_datagrams() {
        let mut arena = RecvArena::with_capacity(1024);
        let data: Vec<u8> = (0..25).collect();
        let d = split(&mut arena, &data, 10);
        assert_eq!(d.iter().map(|d| d.len()).collect::<Vec<_>>(), [10, 10, 5]);
        assert_eq!(d.concat(), data);
        // Without GRO the stride is the message's length: one datagram.
        let d = split(&mut arena, &data[..7], 7);
        assert_eq!(d.len(), 1);
        assert_eq!(&d[0][..], &data[..7]);
        // A zero stride (no segment size) is taken as one byte, not a hang.
        assert_eq!(split(&mut arena, &data[..3], 0).len(), 3);
    }

    #[test]
    fn the_arena_reuses_its_allocation_once_its_datagrams_are_dropped() {
        let mut arena = RecvArena::with_capacity(64);
        let first = split(&mut arena, &[1; 40], 20);
        let start = first[0].as_ptr();
        drop(first);
        // 24 bytes are left at the end: too few for 40, and nothing cut
        // from the allocation is alive, so it is taken back from the start.
        let second = split(&mut arena, &[2; 40], 20);
        assert_eq!(second[0].as_ptr(), start);
        assert_eq!(second.concat(), [2; 40]);
    }

    #[test]
    fn a_datagram_still_held_is_never_overwritten() {
        let mut arena = RecvArena::with_capacity(64);
        let held = split(&mut arena, &[1; 40], 20);
        let start = held[0].as_ptr();
        for round in 2..10u8 {
            let d = split(&mut arena, &[round; 40], 20);
            assert_ne!(d[0].as_ptr(), start);
            assert_eq!(d.concat(), [round; 40]);
        }
        assert_eq!(held.concat(), [1; 40]);
    }
    #[test]
    fn the_cpu_clock_advances_with_work() {
        let Some(before) = super::process_cpu_secs() else {
            // No /proc: nothing to read (not Linux).
            assert!(!std::path::Path::new("/proc/self/stat").exists());
            return;
        };
        // Busy for at least 50 ms of CPU time, 5 ticks of USER_HZ.
        let mut x = 1u64;
        let mut after = before;
        let t = std::time::Instant::now();
        while after - before < 0.05 && t.elapsed() < std::time::Duration::from_secs(10) {
            for i in 0..1_000_000u64 {
                x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
            }
            after = super::process_cpu_secs().unwrap();
        }
        assert!(after - before >= 0.05, "{before} -> {after}");
    }
}
