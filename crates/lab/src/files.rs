//! File-transfer workloads (seed 003: R. Araki, TCP variants under
//! power-saving link-rate control; see docs/papers.md): the accounting of
//! every file ([`FileStats`]), of QUIC's file workloads and, through
//! [`tcp_file_stats`], of the TCP model's file hosts (`tput_tcp::files`).
//!
//! A file is a new connection. Its *total time*, the primary figure, runs
//! from the file's arrival at the sender (the connection's creation) until
//! the sender holds the confirmation that its last byte arrived and verified:
//! the TCP model's ACK of the last byte (ns-2's "last ACK"), QUIC's receiver
//! report, which the receiver sends as it verifies the last byte. Handshake,
//! initial losses and their timeouts are in it, as in the paper's ns-2
//! measurement (from the file's arrival at the sender to the last ACK). Its
//! *transfer time*, kept beside it, runs from the moment the receiver sees
//! the transfer begin (QUIC: the request arrives at the server; the TCP
//! model, which has no handshake: the first segment arrives at the sink) to
//! the arrival of its last byte. The paper's mean file transfer time `D_e`
//! is the sum of the total times over the number of completed files, pooled
//! over every flow ([`pooled_mean`]). A file that never completes is counted,
//! never dropped: refused (the server's connection limit), failed, or
//! unfinished when the run ends.

use serde::Serialize;
use tput_tcp::files::{TcpFileClient, TcpFileServer};

/// What became of the files of one flow (or, merged, of many).
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct FileStats {
    /// Files whose connection was created.
    pub started: u64,
    /// Transfer time of each completed file (first arrival at the receiver
    /// to its last byte), seconds, in completion order.
    pub transfer_secs: Vec<f64>,
    /// Total time of each completed file (from its creation at the sender to
    /// the sender's confirmation of its last byte; see the module docs),
    /// seconds, paired with `transfer_secs`: the primary figure.
    pub total_secs: Vec<f64>,
    /// Size of each completed file, bytes, paired with `transfer_secs`.
    pub sizes: Vec<u64>,
    /// Files the server refused (its connection limit).
    pub refused: u64,
    /// Files that failed otherwise (the connection broke, a byte did not verify).
    pub failed: u64,
    /// Files still running when the run ended.
    pub unfinished: u64,
}

impl FileStats {
    /// Files that completed.
    pub fn completed(&self) -> usize {
        self.transfer_secs.len()
    }

    /// Files that did not complete: refused + failed + unfinished.
    pub fn lost(&self) -> u64 {
        self.refused + self.failed + self.unfinished
    }

    /// Add `other`'s files to these.
    pub fn merge(&mut self, other: &FileStats) {
        self.started += other.started;
        self.transfer_secs.extend_from_slice(&other.transfer_secs);
        self.total_secs.extend_from_slice(&other.total_secs);
        self.sizes.extend_from_slice(&other.sizes);
        self.refused += other.refused;
        self.failed += other.failed;
        self.unfinished += other.unfinished;
    }

    /// The paper's `D_e` over these files: sum of total times (creation to
    /// the last byte's confirmation) / completed files; `None` if none completed.
    pub fn mean_total_secs(&self) -> Option<f64> {
        crate::stats::mean(self.total_secs.iter().copied())
    }

    /// The same with transfer times (first arrival at the receiver to the
    /// last byte: no handshake, no initial wait).
    pub fn mean_transfer_secs(&self) -> Option<f64> {
        crate::stats::mean(self.transfer_secs.iter().copied())
    }
}

/// All files of `flows` pooled into one [`FileStats`] (so that `D_e` is the
/// sum of every file's time over every completed file, not a mean of
/// per-flow means).
pub fn pooled<'a>(flows: impl IntoIterator<Item = &'a FileStats>) -> FileStats {
    let mut all = FileStats::default();
    for f in flows {
        all.merge(f);
    }
    all
}

/// `D_e` pooled over `flows`: see [`pooled`] and [`FileStats::mean_total_secs`].
pub fn pooled_mean<'a>(flows: impl IntoIterator<Item = &'a FileStats>) -> Option<f64> {
    pooled(flows).mean_total_secs()
}

/// The files of a TCP flow: `client`'s starts and last ACKs joined with
/// `server`'s arrivals. A file completes when its sender has its last byte
/// acknowledged.
pub fn tcp_file_stats(client: &TcpFileClient, server: &TcpFileServer) -> FileStats {
    let mut s = FileStats {
        started: client.started(),
        ..FileStats::default()
    };
    let mut done = Vec::new();
    for conn in 0..client.started() as u32 {
        let (created, bytes) = client.file(conn).expect("started");
        match (server.file(conn), client.acked(conn)) {
            (Some((first, Some(end))), Some(acked)) => done.push((acked, end, first, created, bytes)),
            _ => s.unfinished += 1,
        }
    }
    done.sort_by_key(|&(acked, ..)| acked);
    for (acked, end, first, created, bytes) in done {
        s.transfer_secs.push(end.saturating_duration_since(first).as_secs_f64());
        s.total_secs
            .push(acked.saturating_duration_since(created).as_secs_f64());
        s.sizes.push(bytes);
    }
    s
}
