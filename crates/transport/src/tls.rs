//! TLS 1.3 set-up for QUIC (RFC 9001): identities, server and client configs.
//!
//! The server presents an [`Identity`]: a self-signed Ed25519 certificate
//! generated at start (fixed-size signatures keep simulated packet sizes
//! deterministic), or a certificate chain and key read from PEM files. The
//! client trusts the server through [`ServerTrust`]: a CA/self-signed root,
//! a pinned SHA-256 fingerprint of the server's certificate, or, only when
//! asked for explicitly, nothing at all.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use quinn_proto::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn_proto::rustls::{
    self, DigitallySignedStruct, DistinguishedName, SignatureScheme,
    client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier},
    crypto::CryptoProvider,
    pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime, pem::PemObject},
    server::{
        WebPkiClientVerifier,
        danger::{ClientCertVerified, ClientCertVerifier},
    },
};

use crate::error::{ConfigError, Error, PemFile, TlsError, TlsStep};

/// The ALPN protocol identifier of tput transfers.
pub const ALPN: &[u8] = b"tput/1";

/// A SHA-256 fingerprint of a DER certificate.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fingerprint(pub [u8; 32]);

impl Fingerprint {
    /// The fingerprint of `cert_der`.
    pub fn of(cert_der: &[u8]) -> Self {
        let d = ring::digest::digest(&ring::digest::SHA256, cert_der);
        let mut out = [0; 32];
        out.copy_from_slice(d.as_ref());
        Self(out)
    }
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Fingerprint({self})")
    }
}

impl std::str::FromStr for Fingerprint {
    type Err = Error;
    /// 64 hex digits; `:` separators (as `openssl x509 -fingerprint` prints) are allowed.
    fn from_str(s: &str) -> Result<Self, Error> {
        let hex: String = s.chars().filter(|&c| c != ':').collect();
        let bad = || Error::Config(ConfigError::Fingerprint(s.to_owned()));
        if hex.len() != 64 || !hex.is_ascii() {
            return Err(bad());
        }
        let mut out = [0; 32];
        for (i, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())?;
        }
        Ok(Self(out))
    }
}

/// A certificate chain and its private key.
pub struct Identity {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
}

impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Identity")
            .field("fingerprint", &self.fingerprint())
            .finish_non_exhaustive()
    }
}

impl Clone for Identity {
    fn clone(&self) -> Self {
        Self {
            chain: self.chain.clone(),
            key: self.key.clone_key(),
        }
    }
}

impl Identity {
    /// The quinn-proto server config of a tput server presenting this
    /// identity (TLS 1.3, ALPN [`ALPN`]), for tools that speak the protocol
    /// themselves, such as conformance tests; a [`Node`](crate::Node) builds its own.
    pub fn server_config(&self) -> Result<quinn_proto::ServerConfig, Error> {
        Ok(quinn_proto::ServerConfig::with_crypto(Arc::new(server_crypto(
            self, None, 256,
        )?)))
    }

    /// A fresh self-signed Ed25519 certificate for `names` (DNS names or IP addresses).
    pub fn self_signed(names: &[&str]) -> Result<Self, Error> {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).map_err(|e| TlsError::new(TlsStep::Key, e))?;
        Self::self_signed_with(names, key)
    }

    /// A self-signed Ed25519 certificate for `names` whose key is derived from
    /// `seed`: the same seed gives the same certificate, byte for byte (what a
    /// reproducible simulation needs). Anyone who knows the seed has the key:
    /// never use it on a real network.
    pub fn self_signed_from_seed(names: &[&str], seed: u64) -> Result<Self, Error> {
        // RFC 8410 §7: a PKCS#8 v1 Ed25519 private key is this fixed prefix
        // followed by the 32-byte seed.
        const PKCS8_PREFIX: [u8; 16] = [
            0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20,
        ];
        let mut der = PKCS8_PREFIX.to_vec();
        der.extend_from_slice(&crate::node::seed_bytes(seed, 7));
        let der = PrivatePkcs8KeyDer::from(der);
        let key = rcgen::KeyPair::from_pkcs8_der_and_sign_algo(&der, &rcgen::PKCS_ED25519)
            .map_err(|e| TlsError::new(TlsStep::Key, e))?;
        Self::self_signed_with(names, key)
    }

    fn self_signed_with(names: &[&str], key: rcgen::KeyPair) -> Result<Self, Error> {
        let names: Vec<String> = names.iter().map(|s| s.to_string()).collect();
        let mut params = rcgen::CertificateParams::new(names).map_err(|e| TlsError::new(TlsStep::Certificate, e))?;
        // A fixed serial keeps the certificate's size, and with it every
        // handshake packet's size, the same from run to run (rcgen's random
        // serial varies in DER length), which simulated runs rely on.
        params.serial_number = Some(rcgen::SerialNumber::from(vec![1]));
        let cert = params
            .self_signed(&key)
            .map_err(|e| TlsError::new(TlsStep::Certificate, e))?;
        Ok(Self {
            chain: vec![cert.der().clone()],
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        })
    }

    /// Read a PEM certificate chain and a PEM private key (PKCS#8, PKCS#1 or SEC1).
    pub fn from_pem_files(cert: &Path, key: &Path) -> Result<Self, Error> {
        let chain: Vec<_> = CertificateDer::pem_file_iter(cert)
            .and_then(|it| it.collect::<Result<_, _>>())
            .map_err(|e| pem_error(PemFile::Certificate, cert, e))?;
        if chain.is_empty() {
            return Err(ConfigError::EmptyPemFile {
                file: PemFile::Certificate,
                path: cert.to_owned(),
            }
            .into());
        }
        let key = PrivateKeyDer::from_pem_file(key).map_err(|e| pem_error(PemFile::Key, key, e))?;
        Ok(Self { chain, key })
    }

    /// The end-entity certificate, DER.
    pub fn cert_der(&self) -> &[u8] {
        &self.chain[0]
    }

    /// SHA-256 fingerprint of the end-entity certificate, for `--pin`.
    pub fn fingerprint(&self) -> Fingerprint {
        Fingerprint::of(self.cert_der())
    }
}

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// TLS secrets go to the file `SSLKEYLOGFILE` names, in the NSS key log
/// format Wireshark reads to decrypt QUIC; without the variable, nowhere.
/// Logging secrets changes no packet, so simulated runs stay reproducible.
fn key_log() -> Arc<dyn rustls::KeyLog> {
    Arc::new(rustls::KeyLogFile::new())
}

/// A QUIC server crypto config presenting `identity`, TLS 1.3 only (RFC 9001 §4.2).
/// A server's TLS configuration. `session_cache`: how many sessions its
/// resumption cache has room for (rustls reserves them all up front).
pub(crate) fn server_crypto(
    identity: &Identity,
    clients: Option<&ClientAuth>,
    session_cache: usize,
) -> Result<QuicServerConfig, Error> {
    let builder = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| TlsError::new(TlsStep::Server, e))?;
    let builder = match clients {
        None => builder.with_no_client_auth(),
        Some(auth) => builder.with_client_cert_verifier(Arc::new(ClientVerifier::new(auth)?)),
    };
    let mut tls = builder
        .with_single_cert(identity.chain.clone(), identity.key.clone_key())
        .map_err(|e| TlsError::new(TlsStep::Server, e))?;
    tls.alpn_protocols = vec![ALPN.to_vec()];
    tls.session_storage = rustls::server::ServerSessionMemoryCache::new(session_cache);
    tls.max_early_data_size = u32::MAX;
    tls.key_log = key_log();
    Ok(QuicServerConfig::try_from(tls).map_err(|e| TlsError::new(TlsStep::Server, e))?)
}

/// Which clients a server accepts: mutual TLS (RFC 8446 §4.3.2, the server's
/// CertificateRequest), in the spirit of iperf3's authorized users. A client
/// is accepted if its certificate has one of the `allowed` fingerprints, or
/// chains to one of the `roots`; any other client, with or without a
/// certificate, fails the handshake with a TLS alert.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClientAuth {
    /// Root certificates (DER) that client chains may end in.
    pub roots: Vec<Vec<u8>>,
    /// SHA-256 fingerprints of accepted client certificates.
    pub allowed: Vec<Fingerprint>,
}

impl ClientAuth {
    /// Add the certificates of a PEM file as roots.
    pub fn add_roots_from_pem_file(&mut self, path: &Path) -> Result<(), Error> {
        let certs: Vec<_> = CertificateDer::pem_file_iter(path)
            .and_then(|it| it.collect::<Result<_, _>>())
            .map_err(|e| pem_error(PemFile::ClientCa, path, e))?;
        if certs.is_empty() {
            return Err(ConfigError::EmptyPemFile {
                file: PemFile::ClientCa,
                path: path.to_owned(),
            }
            .into());
        }
        self.roots.extend(certs.into_iter().map(|c| c.to_vec()));
        Ok(())
    }
}

/// Accepts client certificates by fingerprint or by chain (see [`ClientAuth`]).
#[derive(Debug)]
struct ClientVerifier {
    allowed: Vec<Fingerprint>,
    chain: Option<Arc<dyn ClientCertVerifier>>,
    provider: Arc<CryptoProvider>,
}

impl ClientVerifier {
    fn new(auth: &ClientAuth) -> Result<Self, Error> {
        if auth.roots.is_empty() && auth.allowed.is_empty() {
            return Err(ConfigError::NoClientAuthority.into());
        }
        let chain = if auth.roots.is_empty() {
            None
        } else {
            let mut roots = rustls::RootCertStore::empty();
            for der in &auth.roots {
                roots
                    .add(CertificateDer::from(der.clone()))
                    .map_err(|e| ConfigError::ClientCa(e.to_string()))?;
            }
            let v = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
                .build()
                .map_err(|e| ConfigError::ClientCa(e.to_string()))?;
            Some(v)
        };
        Ok(Self {
            allowed: auth.allowed.clone(),
            chain,
            provider: provider(),
        })
    }
}

impl ClientCertVerifier for ClientVerifier {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.chain.as_ref().map_or(&[], |c| c.root_hint_subjects())
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        if self.allowed.contains(&Fingerprint::of(end_entity)) {
            return Ok(ClientCertVerified::assertion());
        }
        match &self.chain {
            Some(chain) => chain.verify_client_cert(end_entity, intermediates, now),
            None => Err(rustls::Error::General(format!(
                "client certificate {} is not allowed",
                Fingerprint::of(end_entity)
            ))),
        }
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Err(rustls::Error::General("TLS 1.2 is not used by QUIC".into()))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// How the client decides to trust the server.
#[derive(Debug, Clone)]
pub enum ServerTrust {
    /// Verify the chain against this root certificate (DER) and the server name.
    Root(Vec<u8>),
    /// Accept exactly the certificate with this SHA-256 fingerprint (the
    /// handshake signature is still verified against it).
    Pinned(Fingerprint),
    /// Accept any certificate. Only for tests and explicit `--insecure` use:
    /// anyone on the path can impersonate the server.
    Insecure,
}

impl ServerTrust {
    /// Trust the first certificate of a PEM file as the root.
    pub fn root_from_pem_file(path: &Path) -> Result<Self, Error> {
        let mut certs = CertificateDer::pem_file_iter(path).map_err(|e| pem_error(PemFile::Ca, path, e))?;
        match certs.next() {
            Some(Ok(der)) => Ok(ServerTrust::Root(der.to_vec())),
            Some(Err(e)) => Err(pem_error(PemFile::Ca, path, e)),
            None => Err(ConfigError::EmptyPemFile {
                file: PemFile::Ca,
                path: path.to_owned(),
            }
            .into()),
        }
    }

    /// The quinn-proto client config of a tput client with this trust (TLS
    /// 1.3, ALPN [`ALPN`], no session resumption), for tools that speak the protocol themselves,
    /// such as conformance tests; a [`Node`](crate::Node) builds its own.
    pub fn client_config(&self) -> Result<quinn_proto::ClientConfig, Error> {
        Ok(quinn_proto::ClientConfig::new(Arc::new(client_crypto(self, None)?)))
    }
}

/// A QUIC client crypto config trusting the server as `trust` says.
pub(crate) fn client_crypto(trust: &ServerTrust, identity: Option<&Identity>) -> Result<QuicClientConfig, Error> {
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(|e| TlsError::new(TlsStep::Client, e))?;
    let builder = match trust {
        ServerTrust::Root(der) => {
            let mut roots = rustls::RootCertStore::empty();
            roots
                .add(CertificateDer::from(der.clone()))
                .map_err(|e| TlsError::new(TlsStep::Client, e))?;
            builder.with_root_certificates(roots)
        }
        ServerTrust::Pinned(fp) => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(PinnedVerifier {
                pin: Some(*fp),
                provider: provider(),
            })),
        ServerTrust::Insecure => {
            tracing::warn!("server certificate verification is disabled: the peer is not authenticated");
            builder
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(PinnedVerifier {
                    pin: None,
                    provider: provider(),
                }))
        }
    };
    let mut tls = match identity {
        None => builder.with_no_client_auth(),
        Some(id) => builder
            .with_client_auth_cert(id.chain.clone(), id.key.clone_key())
            .map_err(|e| TlsError::new(TlsStep::Client, e))?,
    };
    tls.alpn_protocols = vec![ALPN.to_vec()];
    tls.enable_early_data = true;
    // Each configuration serves one connection (a node builds one per
    // transfer), so its session store could only ever hold that
    // connection's own tickets and be read by no later connection: it keeps
    // none. The ClientHello is the same (an empty store offers no PSK,
    // RFC 8446 §4.2.11); rustls's default store reserves room for 256
    // servers up front, about 4.7 KB a connection.
    tls.resumption = rustls::client::Resumption::disabled();
    tls.key_log = key_log();
    Ok(QuicClientConfig::try_from(tls).map_err(|e| TlsError::new(TlsStep::Client, e))?)
}

/// Accepts the certificate whose SHA-256 matches `pin` (any certificate if
/// `pin` is `None`), and verifies handshake signatures with it.
#[derive(Debug)]
struct PinnedVerifier {
    pin: Option<Fingerprint>,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for PinnedVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.pin {
            Some(pin) if Fingerprint::of(end_entity) != pin => Err(rustls::Error::General(format!(
                "server certificate fingerprint {} does not match the pinned {pin}",
                Fingerprint::of(end_entity)
            ))),
            _ => Ok(ServerCertVerified::assertion()),
        }
    }

    fn verify_tls12_signature(
        &self,
        _message: &[u8],
        _cert: &CertificateDer<'_>,
        _dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        Err(rustls::Error::General("TLS 1.2 is not used by QUIC".into()))
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

/// A PEM reader's error about `path`.
fn pem_error(file: PemFile, path: &Path, e: impl fmt::Display) -> Error {
    ConfigError::PemFile {
        file,
        path: path.to_owned(),
        reason: e.to_string(),
    }
    .into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_parse_and_print() {
        let id = Identity::self_signed(&["localhost"]).unwrap();
        let fp = id.fingerprint();
        assert_eq!(fp.to_string().len(), 64);
        assert_eq!(fp.to_string().parse::<Fingerprint>().unwrap(), fp);
        let colons: Vec<String> = fp.0.iter().map(|b| format!("{b:02X}")).collect();
        assert_eq!(colons.join(":").parse::<Fingerprint>().unwrap(), fp);
        let e = "abcd".parse::<Fingerprint>().unwrap_err().to_string();
        assert!(e.contains("`abcd`"), "{e}");
        assert!("zz".repeat(32).parse::<Fingerprint>().is_err());
    }

    #[test]
    fn configs_build() {
        let id = Identity::self_signed(&["localhost", "127.0.0.1"]).unwrap();
        server_crypto(&id, None, 256).unwrap();
        client_crypto(&ServerTrust::Root(id.cert_der().to_vec()), None).unwrap();
        client_crypto(&ServerTrust::Pinned(id.fingerprint()), Some(&id)).unwrap();
        client_crypto(&ServerTrust::Insecure, None).unwrap();
        let auth = ClientAuth {
            allowed: vec![id.fingerprint()],
            ..ClientAuth::default()
        };
        server_crypto(&id, Some(&auth), 256).unwrap();
        let Err(e) = server_crypto(&id, Some(&ClientAuth::default()), 256) else {
            panic!("client authentication with nothing to accept");
        };
        let e = e.to_string();
        assert!(e.contains("client CA or an allowed fingerprint"), "{e}");
    }

    #[test]
    fn a_seeded_identity_is_the_same_certificate_every_time() {
        let a = Identity::self_signed_from_seed(&["localhost"], 42).unwrap();
        let b = Identity::self_signed_from_seed(&["localhost"], 42).unwrap();
        let c = Identity::self_signed_from_seed(&["localhost"], 43).unwrap();
        assert_eq!(a.cert_der(), b.cert_der());
        assert_eq!(a.fingerprint(), b.fingerprint());
        assert_ne!(a.fingerprint(), c.fingerprint());
        // Same size as any other self-signed Ed25519 certificate for the name.
        assert_eq!(
            a.cert_der().len(),
            Identity::self_signed(&["localhost"]).unwrap().cert_der().len()
        );
    }

    #[test]
    fn missing_pem_files_are_named() {
        let e = Identity::from_pem_files(Path::new("/nonexistent/cert.pem"), Path::new("/nonexistent/key.pem"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/cert.pem"), "{e}");
    }
}
