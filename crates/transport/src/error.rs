//! What can go wrong, typed: [`Error`] and the reasons it carries.
//!
//! Every error prints as one line that names what is wrong; the variants let
//! a program tell the cases apart without reading the text. The text of a
//! foreign error (rustls, rcgen, a PEM reader, quinn-proto) is part of the
//! line and not reported again through [`std::error::Error::source`], so
//! printing the chain (as `anyhow`'s `{:#}` does) shows it once.

use std::path::PathBuf;
use std::time::Duration;

use crate::failure::TransferError;
use crate::proto::MAX_BUFFERS;

/// What can go wrong in this crate. New variants may come in a minor
/// release: match with a wildcard arm.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A bad setting: the reason names it.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// Certificate or TLS set-up failed.
    #[error("TLS: {0}")]
    Tls(TlsError),
    /// The peer broke the transfer protocol.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
    /// A socket failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The OS error.
        source: std::io::Error,
    },
    /// A transfer failed.
    #[error("transfer {id} failed: {error}")]
    Transfer {
        /// Which transfer.
        id: u64,
        /// Why.
        error: TransferError,
    },
}

impl From<TlsError> for Error {
    fn from(e: TlsError) -> Self {
        Error::Tls(e)
    }
}

impl From<tput_cc::FactoryError> for Error {
    fn from(e: tput_cc::FactoryError) -> Self {
        Error::Config(ConfigError::Controller(e))
    }
}

impl From<tput_cc::EvalSlotError> for Error {
    fn from(e: tput_cc::EvalSlotError) -> Self {
        Error::Config(ConfigError::EvalSlot(e))
    }
}

impl From<AppBuffersError> for ConfigError {
    fn from(e: AppBuffersError) -> Self {
        ConfigError::AppBuffers(e)
    }
}

/// A bad setting of a [`NodeConfig`](crate::NodeConfig), a
/// [`TransferSpec`](crate::TransferSpec), a certificate or key file, or a
/// client-authentication set-up. New variants may come in a minor release.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// [`NodeConfig::mtu`](crate::NodeConfig::mtu) below QUIC's minimum
    /// datagram size (RFC 9000 §14).
    #[error("mtu {0} is below QUIC's minimum of 1200 bytes")]
    MtuTooSmall(u16),
    /// [`NodeConfig::max_mtu`](crate::NodeConfig::max_mtu) too small to
    /// carry QUIC's minimum datagram over IPv6.
    #[error("max mtu {0} is below 1248 bytes (QUIC's 1200-byte minimum datagram plus IPv6 and UDP headers)")]
    MaxMtuTooSmall(u16),
    /// The operating system's random source failed (a live node's seed).
    #[error("the operating system gave no randomness")]
    NoRandomness,
    /// A transfer with neither [`bytes`](crate::TransferSpec::bytes) nor
    /// [`duration`](crate::TransferSpec::duration).
    #[error("a transfer needs a byte count or a duration")]
    NoAmount,
    /// A rate limit of zero.
    #[error("a rate limit must be positive")]
    ZeroRateLimit,
    /// A statistics interval shorter than the protocol allows.
    #[error("interval {interval:?} is shorter than the protocol's minimum of {min:?}")]
    IntervalTooShort {
        /// The interval asked for.
        interval: Duration,
        /// The protocol's minimum.
        min: Duration,
    },
    /// An evaluation slot shorter than the protocol allows.
    #[error("evaluation slot {slot:?} is shorter than the protocol's minimum of {min:?}")]
    EvalSlotTooShort {
        /// The slot asked for.
        slot: Duration,
        /// The protocol's minimum.
        min: Duration,
    },
    /// Text that is no evaluation slot.
    #[error(transparent)]
    EvalSlot(tput_cc::EvalSlotError),
    /// A controller factory refused its configuration (a spec out of
    /// range, an aggregate its controllers would not join).
    #[error(transparent)]
    Controller(tput_cc::FactoryError),
    /// A bad application-buffer model.
    #[error(transparent)]
    AppBuffers(AppBuffersError),
    /// Application buffers asked for a download.
    #[error("application buffers are for uploads only")]
    BuffersForDownload,
    /// One of quinn-proto's own controllers asked for a download.
    #[error("quinn-proto's own controllers send uploads only (a download's server builds the controller)")]
    QuinnCcForDownload,
    /// A user's own controller asked for a download.
    #[error("a controller of your own sends uploads only (a download's server builds the controller from the request)")]
    OwnControllerForDownload,
    /// A controller spec longer than a request can carry.
    #[error("controller spec of {len} bytes: at most {max} fit in a request")]
    SpecTooLong {
        /// The spec's length, bytes.
        len: usize,
        /// The most a request carries.
        max: usize,
    },
    /// quinn-proto refused to start a connection.
    #[error("cannot connect to {server}: {reason}")]
    Connect {
        /// The server's address.
        server: std::net::SocketAddr,
        /// quinn-proto's reason.
        reason: String,
    },
    /// A qlog trace could not start in this file.
    #[error("cannot start a qlog trace in {}", path.display())]
    Qlog {
        /// The trace file.
        path: PathBuf,
    },
    /// A node built for a simulation without packet protection handed to a
    /// live driver.
    #[error("null packet protection is for simulations only: live connections are always encrypted")]
    NullProtectionLive,
    /// Text that is no SHA-256 fingerprint.
    #[error("invalid SHA-256 fingerprint `{0}`: expected 64 hex digits")]
    Fingerprint(String),
    /// A PEM file that cannot be read or parsed.
    #[error("{file} {}: {reason}", path.display())]
    PemFile {
        /// Which file.
        file: PemFile,
        /// Its path.
        path: PathBuf,
        /// What the reader said.
        reason: String,
    },
    /// A PEM file without the certificate it should hold.
    #[error("{file} {}: {}", path.display(), if *file == PemFile::Certificate { "no certificate in it" } else { "no PEM certificate in it" })]
    EmptyPemFile {
        /// Which file.
        file: PemFile,
        /// Its path.
        path: PathBuf,
    },
    /// Client authentication with neither a root nor an allowed fingerprint.
    #[error("client authentication needs a client CA or an allowed fingerprint")]
    NoClientAuthority,
    /// A client CA certificate that rustls refuses.
    #[error("client CA: {0}")]
    ClientCa(String),
}

/// Which PEM file a [`ConfigError::PemFile`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PemFile {
    /// An identity's certificate chain.
    Certificate,
    /// An identity's private key.
    Key,
    /// A server's client CA ([`ClientAuth`](crate::ClientAuth)).
    ClientCa,
    /// A client's server CA ([`ServerTrust::Root`](crate::ServerTrust::Root)).
    Ca,
}

impl std::fmt::Display for PemFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PemFile::Certificate => "certificate file",
            PemFile::Key => "key file",
            PemFile::ClientCa => "client CA file",
            PemFile::Ca => "CA file",
        })
    }
}

/// A bad [`AppBuffers`](crate::AppBuffers) model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AppBuffersError {
    /// Not between 1 and the protocol's maximum of buffers in flight.
    #[error("{0} application buffers: between 1 and {MAX_BUFFERS} may be in flight")]
    Count(u32),
    /// Buffers of no bytes.
    #[error("application buffers of 0 bytes")]
    ZeroSize,
}

/// Which step of the TLS set-up failed (see [`TlsError`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TlsStep {
    /// Generating or loading a certificate's key pair.
    Key,
    /// Building a self-signed certificate.
    Certificate,
    /// Building the server's TLS configuration.
    Server,
    /// Building the client's TLS configuration.
    Client,
}

/// Certificate or TLS set-up failed: the step and the TLS library's error,
/// whose text is the message.
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct TlsError {
    step: TlsStep,
    error: Box<dyn std::error::Error + Send + Sync>,
}

impl TlsError {
    pub(crate) fn new(step: TlsStep, error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self {
            step,
            error: Box::new(error),
        }
    }

    /// The step that failed.
    pub fn step(&self) -> TlsStep {
        self.step
    }

    /// The TLS library's error (rustls or rcgen).
    pub fn error(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.error
    }
}

/// The peer broke the transfer protocol: a bad request (server side) or a
/// bad frame on a report stream.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ProtocolError {
    /// The request that opens a transfer.
    #[error("bad request: {0}")]
    Request(RequestError),
    /// A frame on a report stream.
    #[error("bad frame: {0}")]
    Frame(FrameError),
}

/// What is wrong with a transfer request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RequestError {
    /// Shorter than the fixed header.
    #[error("{len} bytes, expected at least {min}")]
    Short {
        /// Bytes received.
        len: usize,
        /// The header's length.
        min: usize,
    },
    /// The header does not start with the protocol's magic.
    #[error("missing TPUT magic")]
    Magic,
    /// Another protocol version.
    #[error("version {got}, this end speaks {ours}")]
    Version {
        /// The peer's version.
        got: u8,
        /// This end's.
        ours: u8,
    },
    /// A controller spec longer than allowed.
    #[error("controller spec of {len} bytes exceeds the limit of {max}")]
    SpecTooLong {
        /// The announced length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Not the length the header announces.
    #[error("{len} bytes, the header announces {announced}")]
    Length {
        /// Bytes received.
        len: usize,
        /// Bytes announced.
        announced: usize,
    },
    /// An unknown direction code.
    #[error("direction {0}")]
    Direction(u8),
    /// Neither a byte count nor a duration.
    #[error("neither a byte count nor a duration")]
    NoAmount,
    /// An evaluation slot or interval shorter than the protocol's minimum.
    #[error("{what} of {period:?} is shorter than {min:?}")]
    PeriodTooShort {
        /// `evaluation slot` or `interval`.
        what: &'static str,
        /// The period asked for.
        period: Duration,
        /// The minimum.
        min: Duration,
    },
    /// The controller spec is not UTF-8.
    #[error("controller spec is not UTF-8")]
    SpecNotUtf8,
    /// A bad application-buffer model.
    #[error(transparent)]
    AppBuffers(AppBuffersError),
    /// Application buffers on a download.
    #[error("application buffers are for uploads only")]
    BuffersForDownload,
    /// A controller spec that does not parse.
    #[error(transparent)]
    Controller(tput_cc::SpecError),
}

/// What is wrong with a report-stream frame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// Longer than any frame may be.
    #[error("{len} bytes, at most {max} allowed")]
    TooLong {
        /// The announced length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// A delivered-bytes frame of the wrong length.
    #[error("delivered-bytes frame of {0} bytes, expected 16")]
    DeliveredLength(usize),
    /// A JSON frame whose body does not parse; names the frame.
    #[error("{0} is not valid JSON")]
    Json(&'static str),
    /// An unknown frame kind.
    #[error("unknown kind {0}")]
    Kind(u8),
}

impl From<RequestError> for Error {
    fn from(e: RequestError) -> Self {
        Error::Protocol(ProtocolError::Request(e))
    }
}

impl From<FrameError> for Error {
    fn from(e: FrameError) -> Self {
        Error::Protocol(ProtocolError::Frame(e))
    }
}
