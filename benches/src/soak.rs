//! A soak of one server: many clients over time, a third of them killed
//! mid-transfer, some with the wrong server pin or without the client
//! certificate the server requires, while garbage datagrams and Initials
//! from sources that never answer (spoofed-source floods look like this to
//! the server) arrive interleaved. Everything runs on 127.0.0.1 in this
//! process: the server on a thread of its own, the clients on another, the
//! flood on a third.
//!
//! What it reports: honest transfers verified (all must be), how the other
//! clients ended, whether the server itself ever failed, the process's
//! resident memory (peak, and after each round once its connections have
//! drained: it must not grow from round to round) and open file
//! descriptors.
//!
//! All clients share 127.0.0.1, so the per-address connection limit is off
//! here (`tputctl serve --max-per-address` would otherwise count every
//! client as one host); the server requires client certificates (mutual
//! TLS, as `tputctl serve --allow-client`) and applies the other limits.

use std::collections::BTreeMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tput_transport::{
    ClientAuth, Direction, Fingerprint, Identity, Node, NodeConfig, NodeEvent, ServerLimits, ServerTrust, TransferSpec,
    udp,
};

/// The size of a soak.
#[derive(Debug, Clone)]
pub struct Options {
    /// Rounds of load; memory after each must not grow.
    pub rounds: usize,
    /// Clients per round, started `client_gap` apart.
    pub clients: usize,
    /// Time between client starts.
    pub client_gap: Duration,
    /// Bytes of an honest transfer (uploads and downloads alternate).
    pub bytes: u64,
    /// A killed client is killed this long after it starts.
    pub kill_after: Duration,
    /// Garbage datagrams per round.
    pub garbage: usize,
    /// Initials from sources that never answer, per round.
    pub spoofed_initials: usize,
    /// Address validation with Retry (`tputctl serve --retry`).
    pub retry: bool,
    /// Idle and request timeouts of the server (how long a killed or
    /// spoofed connection can hold a slot).
    pub timeout: Duration,
    /// Connections the server holds at once.
    pub max_connections: usize,
}

impl Options {
    /// The bench's size: 2 rounds of 100 clients 100 ms apart, 10 000
    /// garbage datagrams and 500 spoofed Initials per round.
    pub fn full(retry: bool) -> Options {
        Options {
            rounds: 2,
            clients: 100,
            client_gap: Duration::from_millis(100),
            bytes: 2_000_000,
            kill_after: Duration::from_millis(200),
            garbage: 10_000,
            spoofed_initials: 500,
            retry,
            timeout: Duration::from_secs(5),
            max_connections: 64,
        }
    }
}

/// What kind of client a client is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Right pin, client certificate, runs to the end: must be verified.
    Honest,
    /// An honest client killed mid-transfer (its task is dropped: the
    /// server hears nothing more).
    Killed,
    /// Pins a fingerprint the server does not have: the client refuses.
    WrongPin,
    /// Presents no client certificate: the server refuses.
    NoCertificate,
}

/// The kind of the `i`-th client of a round: every third is killed, and of
/// the rest one in ten pins wrongly and one in ten has no certificate.
pub fn kind(i: usize) -> Kind {
    if i % 3 == 2 {
        Kind::Killed
    } else if i % 10 == 3 {
        Kind::WrongPin
    } else if i % 10 == 6 {
        Kind::NoCertificate
    } else {
        Kind::Honest
    }
}

/// One round's results.
#[derive(Debug, Clone, Default)]
pub struct Round {
    /// Honest clients, and how many were verified to the last byte.
    pub honest: usize,
    /// Honest transfers that completed with every byte verified.
    pub honest_verified: usize,
    /// Errors of honest clients that did not complete (should be empty).
    pub honest_errors: Vec<String>,
    /// Killed clients.
    pub killed: usize,
    /// Wrong-pin clients that failed, and those that (wrongly) did not.
    pub wrong_pin_refused: usize,
    /// Wrong-pin clients in all.
    pub wrong_pin: usize,
    /// Clients without a certificate that the server refused.
    pub no_cert_refused: usize,
    /// Clients without a certificate in all.
    pub no_cert: usize,
    /// Garbage datagrams and spoofed Initials sent.
    pub garbage_sent: usize,
    /// Spoofed Initials sent.
    pub spoofed_sent: usize,
    /// Seconds the round's load took.
    pub secs: f64,
    /// Resident memory after the round drained, KiB.
    pub rss_after_kib: u64,
    /// Open file descriptors after the round drained.
    pub fds_after: usize,
}

/// A whole soak's results.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Per round.
    pub rounds: Vec<Round>,
    /// Resident memory before any load, KiB.
    pub rss_before_kib: u64,
    /// Peak resident memory of the process (VmHWM), KiB.
    pub rss_peak_kib: u64,
    /// Open file descriptors before any load.
    pub fds_before: usize,
    /// Transfers the server finished: without error, and with one.
    pub server_ok: u64,
    /// Transfers the server ended with an error (killed clients' idle
    /// timeouts, refusals).
    pub server_transfer_errors: u64,
    /// The server itself failing (its drive loop returning an error).
    pub server_failure: Option<String>,
}

impl Report {
    /// Every impostor refused, the server never failed, memory after the
    /// last round within `slack_kib` of memory after the first, and (with
    /// `all_honest`) every honest transfer verified. Without Retry a
    /// spoofed-Initial flood can fill the connection table, so honest
    /// clients may be refused (the client names `--max-clients`): that is
    /// what `--retry` is for.
    pub fn healthy(&self, slack_kib: u64, all_honest: bool) -> bool {
        let first = self.rounds.first().map_or(0, |r| r.rss_after_kib);
        self.server_failure.is_none()
            && self.rounds.iter().all(|r| {
                (!all_honest || r.honest_verified == r.honest)
                    && r.wrong_pin_refused == r.wrong_pin
                    && r.no_cert_refused == r.no_cert
                    && r.rss_after_kib <= first + slack_kib
            })
    }

    /// A table of the rounds and a summary line.
    pub fn text(&self, o: &Options) -> String {
        let mut s = format!(
            "Soak: {} round(s) of {} clients {} ms apart ({} B transfers, a third killed after {} ms), {} garbage datagrams and {} spoofed Initials per round; Retry {}; server timeouts {} s, at most {} connections\n\n",
            o.rounds,
            o.clients,
            o.client_gap.as_millis(),
            o.bytes,
            o.kill_after.as_millis(),
            o.garbage,
            o.spoofed_initials,
            if o.retry { "on" } else { "off" },
            o.timeout.as_secs(),
            o.max_connections
        );
        s += "| round | honest verified | killed | wrong pin refused | no cert refused | garbage | spoofed Initials | load (s) | RSS after (MiB) | fds after |\n";
        s += "|---|---|---|---|---|---|---|---|---|---|\n";
        for (i, r) in self.rounds.iter().enumerate() {
            s += &format!(
                "| {} | {}/{} | {} | {}/{} | {}/{} | {} | {} | {:.1} | {:.1} | {} |\n",
                i + 1,
                r.honest_verified,
                r.honest,
                r.killed,
                r.wrong_pin_refused,
                r.wrong_pin,
                r.no_cert_refused,
                r.no_cert,
                r.garbage_sent,
                r.spoofed_sent,
                r.secs,
                r.rss_after_kib as f64 / 1024.0,
                r.fds_after
            );
            let mut errors: BTreeMap<&str, usize> = BTreeMap::new();
            for e in &r.honest_errors {
                *errors.entry(e).or_default() += 1;
            }
            for (e, n) in errors {
                s += &format!("  {n} honest client(s) failed: {e}\n");
            }
        }
        s += &format!(
            "\nRSS before {:.1} MiB, peak {:.1} MiB; fds before {}; server: {} transfers ok, {} ended with an error; server failure: {}\n",
            self.rss_before_kib as f64 / 1024.0,
            self.rss_peak_kib as f64 / 1024.0,
            self.fds_before,
            self.server_ok,
            self.server_transfer_errors,
            self.server_failure.as_deref().unwrap_or("none")
        );
        s
    }
}

/// `VmRSS` and `VmHWM` of this process, KiB (0 off Linux).
pub fn memory_kib() -> (u64, u64) {
    use tput_transport::usage::{peak_rss_kib, rss_kib};
    (rss_kib().unwrap_or(0), peak_rss_kib().unwrap_or(0))
}

/// Open file descriptors of this process (0 off Linux).
pub fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").map_or(0, |d| d.count())
}

struct Server {
    addr: SocketAddr,
    ok: Arc<AtomicU64>,
    errors: Arc<AtomicU64>,
    failure: std::sync::mpsc::Receiver<Option<String>>,
}

fn start_server(o: &Options, identity: Identity, client: Fingerprint) -> Result<Server, String> {
    let config = NodeConfig::default()
        .with_idle_timeout(o.timeout)
        .with_max_connections(o.max_connections)
        .with_client_auth(Some(ClientAuth {
            allowed: vec![client],
            ..ClientAuth::default()
        }))
        .with_limits(
            ServerLimits::default()
                .with_max_duration(Some(Duration::from_secs(600)))
                .with_request_timeout(Some(o.timeout))
                .with_retry(o.retry),
        );
    let (ok, errors) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (ok2, errors2) = (ok.clone(), errors.clone());
    let (addr, fail_rx) = crate::spawn_server(identity, config, move |ev| {
        if let NodeEvent::Finished(out) = ev {
            if out.ok() { &ok2 } else { &errors2 }.fetch_add(1, Ordering::Relaxed);
        }
    })?;
    Ok(Server {
        addr,
        ok,
        errors,
        failure: fail_rx,
    })
}

/// Real client Initials (padded to 1200 bytes, RFC 9000 §14.1) for `server`,
/// each of a new connection, from a client node that will never answer.
fn initials(server: SocketAddr, n: usize) -> Vec<Vec<u8>> {
    let mut node = match Node::client(NodeConfig::default()) {
        Ok(n) => n,
        Err(_) => return Vec::new(),
    };
    let trust = ServerTrust::Pinned(Fingerprint([0; 32]));
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let spec = TransferSpec::upload(1, "newreno".parse().expect("a controller"));
        if node
            .start_transfer(Instant::now(), server, "localhost", &trust, spec)
            .is_err()
        {
            break;
        }
        while let Some(t) = node.poll_transmit() {
            out.extend(t.datagrams().map(|d| d.to_vec()));
        }
    }
    out.truncate(n);
    out
}

/// Sends `garbage` random datagrams and the `spoofed` Initials, interleaved
/// and spread over `over`, each Initial from a fresh socket closed at once.
fn flood(server: SocketAddr, garbage: usize, spoofed: Vec<Vec<u8>>, over: Duration, seed: u64) -> (usize, usize) {
    let Ok(sock) = UdpSocket::bind("127.0.0.1:0") else {
        return (0, 0);
    };
    let total = garbage + spoofed.len();
    let every = spoofed.len().max(1);
    let t0 = Instant::now();
    let mut x = seed | 1;
    let mut rand = move || {
        // xorshift64: cheap noise; the flood need not be reproducible.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let (mut g, mut s) = (0, 0);
    let mut buf = [0u8; 1400];
    for i in 0..total {
        let due = over.mul_f64(i as f64 / total.max(1) as f64);
        if let Some(wait) = due.checked_sub(t0.elapsed()) {
            std::thread::sleep(wait);
        }
        if s < spoofed.len() && (i % (total / every).max(1) == 0 || g >= garbage) {
            if let Ok(one) = UdpSocket::bind("127.0.0.1:0") {
                let _ = one.send_to(&spoofed[s], server);
            }
            s += 1;
        } else if g < garbage {
            let len = 1 + (rand() % buf.len() as u64) as usize;
            for b in buf[..len].iter_mut() {
                *b = rand() as u8;
            }
            // Some look like long-header packets of QUIC version 1.
            if len > 6 && g % 4 == 0 {
                buf[0] = 0xc0 | (buf[0] & 0x0f);
                buf[1..5].copy_from_slice(&1u32.to_be_bytes());
            }
            let _ = sock.send_to(&buf[..len], server);
            g += 1;
        }
    }
    (g, s)
}

/// Runs the soak; `progress` sees a line per round.
pub fn run(o: &Options, mut progress: impl FnMut(&str)) -> Result<Report, String> {
    let server_id = Identity::self_signed(&["localhost"]).map_err(|e| e.to_string())?;
    let client_id = Identity::self_signed(&["tput-client"]).map_err(|e| e.to_string())?;
    let (rss_before_kib, _) = memory_kib();
    let mut report = Report {
        rss_before_kib,
        fds_before: open_fds(),
        ..Report::default()
    };
    let server = start_server(o, server_id.clone(), client_id.fingerprint())?;
    let good = ServerTrust::Pinned(server_id.fingerprint());
    let bad = ServerTrust::Pinned(Fingerprint([0x5a; 32]));
    for round in 0..o.rounds {
        let t0 = Instant::now();
        let load = o.client_gap * o.clients as u32;
        let spoofed = initials(server.addr, o.spoofed_initials);
        let (addr, garbage) = (server.addr, o.garbage);
        let flooder = std::thread::spawn(move || flood(addr, garbage, spoofed, load, round as u64 + 1));
        let outcomes = crate::runtime().block_on(async {
            let mut tasks = Vec::new();
            for i in 0..o.clients {
                let k = kind(i);
                let config = NodeConfig::default()
                    .with_idle_timeout(o.timeout)
                    .with_client_identity((k != Kind::NoCertificate).then(|| client_id.clone()));
                let trust = if k == Kind::WrongPin { bad.clone() } else { good.clone() };
                let mut spec = TransferSpec::upload(
                    if k == Kind::Killed { 1 << 40 } else { o.bytes },
                    "cubic".parse().expect("a controller"),
                );
                if i % 2 == 1 {
                    spec.direction = Direction::Download;
                }
                let addr = server.addr;
                let task = tokio::spawn(async move {
                    udp::transfer(addr, "localhost", &trust, config, vec![spec], |_, _| {}).await
                });
                if k == Kind::Killed {
                    let kill_after = o.kill_after;
                    let abort = task.abort_handle();
                    tokio::spawn(async move {
                        tokio::time::sleep(kill_after).await;
                        abort.abort();
                    });
                }
                tasks.push((k, task));
                tokio::time::sleep(o.client_gap).await;
            }
            let mut outcomes = Vec::new();
            for (k, t) in tasks {
                let r = tokio::time::timeout(Duration::from_secs(120), t).await;
                outcomes.push((k, r));
            }
            outcomes
        });
        let (garbage_sent, spoofed_sent) = flooder.join().unwrap_or((0, 0));
        let secs = t0.elapsed().as_secs_f64();
        let mut r = Round {
            garbage_sent,
            spoofed_sent,
            secs,
            ..Round::default()
        };
        for (k, res) in outcomes {
            // `Ok(Ok(Ok(outcomes)))`: the task ran and the client returned.
            let out = match res {
                Ok(Ok(Ok(v))) => v.into_iter().next(),
                _ => None,
            };
            let failed = out.as_ref().is_none_or(|x| !x.ok());
            match k {
                Kind::Honest => {
                    r.honest += 1;
                    match &out {
                        Some(x) if x.ok() && x.receiver.as_ref().is_some_and(|rr| rr.bytes == o.bytes) => {
                            r.honest_verified += 1
                        }
                        Some(x) => r
                            .honest_errors
                            .push(x.error.as_ref().map_or_else(|| "short".into(), ToString::to_string)),
                        None => r.honest_errors.push("no outcome (hung or the client failed)".into()),
                    }
                }
                Kind::Killed => r.killed += 1,
                Kind::WrongPin => {
                    r.wrong_pin += 1;
                    r.wrong_pin_refused += usize::from(failed);
                }
                Kind::NoCertificate => {
                    r.no_cert += 1;
                    r.no_cert_refused += usize::from(failed);
                }
            }
        }
        // Let killed and spoofed connections time out on the server.
        std::thread::sleep(o.timeout * 2 + Duration::from_secs(1));
        r.rss_after_kib = memory_kib().0;
        r.fds_after = open_fds();
        progress(&format!(
            "round {}: honest {}/{} verified, {} killed, load {:.1} s, RSS {:.1} MiB, {} fds",
            round + 1,
            r.honest_verified,
            r.honest,
            r.killed,
            r.secs,
            r.rss_after_kib as f64 / 1024.0,
            r.fds_after
        ));
        report.rounds.push(r);
    }
    // A server that failed has said why; one still serving has not (its
    // thread ends with the process).
    report.server_failure = server.failure.try_recv().unwrap_or(None);
    report.server_ok = server.ok.load(Ordering::Relaxed);
    report.server_transfer_errors = server.errors.load(Ordering::Relaxed);
    report.rss_peak_kib = memory_kib().1;
    Ok(report)
}
