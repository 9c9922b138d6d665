//! Datagram buffers shared by the nodes of one simulated run.
//!
//! Live, [`Node::recycle`](super::Node::recycle) hands a sent datagram's
//! buffer back to the node that sent it. In a simulation a datagram's buffer
//! ends its life at another node: the receiver, once it has read the payload
//! out of it. Without a pool every simulated datagram costs an allocation at
//! the sender and a free at the receiver, both of a size (about 1 500 bytes)
//! that glibc's per-thread cache does not keep (it stops at 1 032 bytes):
//! 6 % of a many-flow run's instructions went to `malloc` and `free`.
//!
//! A [`BufferPool`] closes the loop: receivers put back the buffers of the
//! payload they have verified and of the short datagrams (acknowledgements)
//! they copy out, senders take from it before they allocate. Which buffer
//! carries which datagram changes nothing a run computes.

// Only simulator hosts (the `sim` feature) hand a node a pool.
#![cfg_attr(not(feature = "sim"), allow(dead_code))]

use std::sync::{Arc, Mutex, PoisonError};

use bytes::{Bytes, BytesMut};

/// Most buffers a pool keeps; more are freed. At 1 500 bytes each, 6 MiB.
const KEEP: usize = 4096;

/// Smallest capacity worth keeping: a datagram of a 1 200-byte path (the
/// QUIC minimum, RFC 9000 §14) fits it.
const MIN_CAPACITY: usize = 1200;

/// Largest capacity kept: a buffer from a GSO batch or a socket read is not
/// a datagram buffer and stays out of the pool.
const MAX_CAPACITY: usize = 4096;

/// A pool of datagram buffers that the nodes of one simulated run share
/// ([`Node::share_buffers`](super::Node::share_buffers)). Cloning it gives
/// another handle on the same pool.
#[derive(Clone, Debug, Default)]
pub struct BufferPool {
    free: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl BufferPool {
    /// An empty pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Buffers waiting in the pool.
    pub fn len(&self) -> usize {
        self.free.lock().unwrap_or_else(PoisonError::into_inner).len()
    }

    /// Whether the pool holds no buffer.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(super) fn take(&self) -> Option<Vec<u8>> {
        self.free.lock().unwrap_or_else(PoisonError::into_inner).pop()
    }

    fn give(&self, mut buf: Vec<u8>) {
        if !(MIN_CAPACITY..=MAX_CAPACITY).contains(&buf.capacity()) {
            return;
        }
        buf.clear();
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        if free.len() < KEEP {
            free.push(buf);
        }
    }

    /// Puts back the allocation behind `buf` if nothing else shares it.
    pub(super) fn recycle_mut(&self, mut buf: BytesMut) {
        buf.clear();
        // Unique (it has to be: `buf` is the only handle), with no bytes in
        // view, the conversion hands back the whole original allocation.
        self.give(buf.into());
    }

    /// Puts back the allocation behind `bytes` if `bytes` is its last
    /// handle (the payload of a datagram, once read).
    pub(super) fn recycle(&self, bytes: Bytes) {
        if let Ok(buf) = bytes.try_into_mut() {
            self.recycle_mut(buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_datagrams_buffer_comes_back_once_its_last_handle_is_read() {
        let pool = BufferPool::new();
        let mut v = Vec::with_capacity(1500);
        v.extend_from_slice(&[7; 1400]);
        let ptr = v.as_ptr();
        // As the simulator carries it and quinn-proto splits it.
        let mut m = BytesMut::from(Bytes::from(v));
        let header = m.split_to(40).freeze();
        let payload = m.freeze();
        // Still shared with the header: not taken.
        pool.recycle(payload.clone());
        assert!(pool.is_empty());
        drop(header);
        pool.recycle(payload);
        assert_eq!(pool.len(), 1);
        let back = pool.take().expect("one buffer");
        assert_eq!(back.as_ptr(), ptr, "the same allocation");
        assert!(back.is_empty() && back.capacity() >= 1400);
        // Buffers of other sizes stay out.
        pool.recycle(Bytes::from(vec![0u8; 100]));
        pool.recycle(Bytes::from(vec![0u8; 65536]));
        assert!(pool.is_empty());
    }
}
