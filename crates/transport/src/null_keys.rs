//! Packet protection that costs nothing, for simulated connections only.
//!
//! The TLS 1.3 handshake runs for real (rustls, as live); only the 1-RTT
//! keys it yields are replaced (RFC 9001 §5: packet protection, §5.4:
//! header protection) by keys that leave payload and header in the clear.
//! Sizes stay exactly those of AES-128-GCM: a 16-byte tag is appended
//! (RFC 9001 §5.3) and header protection samples 16 bytes (§5.4.2), so every
//! packet has the length it would have had, and a simulation's metrics are
//! those of the protected run. The tag carries the packet number, so a
//! packet opened with the wrong key or number is still refused.
//!
//! A node uses these only when [`SimOptions::null_packet_protection`] is
//! set, which only a simulation host can ask for (`Node::simulated`, behind
//! the `sim` feature): live connections are always protected.
//!
//! [`SimOptions::null_packet_protection`]: crate::node::SimOptions::null_packet_protection

use std::any::Any;
use std::sync::Arc;

use bytes::BytesMut;
use quinn_proto::crypto::{
    self, CryptoError, ExportKeyingMaterialError, HeaderKey, KeyPair, Keys, PacketKey, UnsupportedVersion,
};
use quinn_proto::transport_parameters::TransportParameters;
use quinn_proto::{ConnectError, ConnectionId, Side, TransportError};

/// AES-128-GCM's tag length (RFC 9001 §5.3).
const TAG_LEN: usize = 16;
/// Header protection's sample length (RFC 9001 §5.4.2).
const SAMPLE_LEN: usize = 16;

/// A packet key that seals nothing: the tag is the packet number (8 bytes,
/// big-endian) and 8 zero bytes.
struct NullPacketKey;

impl PacketKey for NullPacketKey {
    fn encrypt(&self, packet: u64, buf: &mut [u8], _header_len: usize) {
        let n = buf.len();
        let tag = &mut buf[n - TAG_LEN..];
        tag[..8].copy_from_slice(&packet.to_be_bytes());
        tag[8..].fill(0);
    }

    fn decrypt(&self, packet: u64, _header: &[u8], payload: &mut BytesMut) -> Result<(), CryptoError> {
        let n = payload.len();
        if n < TAG_LEN {
            return Err(CryptoError);
        }
        let tag = &payload[n - TAG_LEN..];
        if tag[..8] != packet.to_be_bytes() || tag[8..].iter().any(|&b| b != 0) {
            return Err(CryptoError);
        }
        payload.truncate(n - TAG_LEN);
        Ok(())
    }

    fn tag_len(&self) -> usize {
        TAG_LEN
    }

    fn confidentiality_limit(&self) -> u64 {
        u64::MAX
    }

    fn integrity_limit(&self) -> u64 {
        u64::MAX
    }
}

/// A header key that leaves the header as it is.
struct NullHeaderKey;

impl HeaderKey for NullHeaderKey {
    fn decrypt(&self, _pn_offset: usize, _packet: &mut [u8]) {}

    fn encrypt(&self, _pn_offset: usize, _packet: &mut [u8]) {}

    fn sample_size(&self) -> usize {
        SAMPLE_LEN
    }
}

fn null_packet_keys() -> KeyPair<Box<dyn PacketKey>> {
    KeyPair {
        local: Box::new(NullPacketKey),
        remote: Box::new(NullPacketKey),
    }
}

/// A TLS session whose 1-RTT keys are null; everything else is the inner
/// session's.
struct NullSession {
    inner: Box<dyn crypto::Session>,
    /// Key sets `write_handshake` has handed out: the first is for the
    /// Handshake space, the second for 1-RTT (RFC 9001 §4.1.4).
    keys_given: u8,
}

impl crypto::Session for NullSession {
    fn initial_keys(&self, dst_cid: &ConnectionId, side: Side) -> Keys {
        self.inner.initial_keys(dst_cid, side)
    }

    fn handshake_data(&self) -> Option<Box<dyn Any>> {
        self.inner.handshake_data()
    }

    fn peer_identity(&self) -> Option<Box<dyn Any>> {
        self.inner.peer_identity()
    }

    fn early_crypto(&self) -> Option<(Box<dyn HeaderKey>, Box<dyn PacketKey>)> {
        self.inner.early_crypto()
    }

    fn early_data_accepted(&self) -> Option<bool> {
        self.inner.early_data_accepted()
    }

    fn is_handshaking(&self) -> bool {
        self.inner.is_handshaking()
    }

    fn read_handshake(&mut self, buf: &[u8]) -> Result<bool, TransportError> {
        self.inner.read_handshake(buf)
    }

    fn transport_parameters(&self) -> Result<Option<TransportParameters>, TransportError> {
        self.inner.transport_parameters()
    }

    fn write_handshake(&mut self, buf: &mut Vec<u8>) -> Option<Keys> {
        let keys = self.inner.write_handshake(buf)?;
        self.keys_given = self.keys_given.saturating_add(1);
        if self.keys_given < 2 {
            return Some(keys);
        }
        Some(Keys {
            header: KeyPair {
                local: Box::new(NullHeaderKey),
                remote: Box::new(NullHeaderKey),
            },
            packet: null_packet_keys(),
        })
    }

    fn next_1rtt_keys(&mut self) -> Option<KeyPair<Box<dyn PacketKey>>> {
        // Keep the inner session's key schedule in step, hand out null keys.
        self.inner.next_1rtt_keys()?;
        Some(null_packet_keys())
    }

    fn is_valid_retry(&self, orig_dst_cid: &ConnectionId, header: &[u8], payload: &[u8]) -> bool {
        self.inner.is_valid_retry(orig_dst_cid, header, payload)
    }

    fn export_keying_material(
        &self,
        output: &mut [u8],
        label: &[u8],
        context: &[u8],
    ) -> Result<(), ExportKeyingMaterialError> {
        self.inner.export_keying_material(output, label, context)
    }
}

/// A server crypto configuration whose sessions end in null 1-RTT keys.
pub(crate) struct NullServerConfig(pub(crate) Arc<dyn crypto::ServerConfig>);

impl crypto::ServerConfig for NullServerConfig {
    fn initial_keys(&self, version: u32, dst_cid: &ConnectionId) -> Result<Keys, UnsupportedVersion> {
        self.0.initial_keys(version, dst_cid)
    }

    fn retry_tag(&self, version: u32, orig_dst_cid: &ConnectionId, packet: &[u8]) -> [u8; 16] {
        self.0.retry_tag(version, orig_dst_cid, packet)
    }

    fn start_session(self: Arc<Self>, version: u32, params: &TransportParameters) -> Box<dyn crypto::Session> {
        Box::new(NullSession {
            inner: self.0.clone().start_session(version, params),
            keys_given: 0,
        })
    }
}

/// A client crypto configuration whose sessions end in null 1-RTT keys.
pub(crate) struct NullClientConfig(pub(crate) Arc<dyn crypto::ClientConfig>);

impl crypto::ClientConfig for NullClientConfig {
    fn start_session(
        self: Arc<Self>,
        version: u32,
        server_name: &str,
        params: &TransportParameters,
    ) -> Result<Box<dyn crypto::Session>, ConnectError> {
        Ok(Box::new(NullSession {
            inner: self.0.clone().start_session(version, server_name, params)?,
            keys_given: 0,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_null_key_keeps_sizes_and_refuses_a_wrong_packet_number() {
        let k = NullPacketKey;
        let header = [0x40u8, 1, 2, 3];
        let mut buf = Vec::from(&header[..]);
        buf.extend_from_slice(b"payload");
        buf.extend_from_slice(&[0xee; TAG_LEN]);
        k.encrypt(77, &mut buf, header.len());
        let mut payload = BytesMut::from(&buf[header.len()..]);
        let mut wrong = payload.clone();
        assert!(k.decrypt(78, &header, &mut wrong).is_err());
        k.decrypt(77, &header, &mut payload).unwrap();
        assert_eq!(&payload[..], b"payload");
        let mut short = BytesMut::from(&[0u8; 5][..]);
        assert!(k.decrypt(0, &header, &mut short).is_err());
        assert_eq!(k.tag_len(), 16);
        assert_eq!(NullHeaderKey.sample_size(), 16);
    }
}
