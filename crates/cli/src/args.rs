//! Value parsers shared by the commands' arguments, and the qlog directory.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use tput_cc::units::{Rate, parse_duration, parse_size};
use tput_cc::{ControllerSpec, QuinnCc, SpecErrorKind};
use tput_transport::{EvalSlot, Fingerprint};

use crate::Failure;

/// A rate, as everywhere a rate is read (`Rate`'s one parser): 100Mbit/s,
/// 12.5MB/s, or iperf3's 100M (bit/s, k/M/G/T = 1000^n).
pub(crate) fn parse_rate(s: &str) -> Result<Rate, String> {
    s.parse::<Rate>().map_err(|e| e.to_string())
}

/// A duration, or a bare number of seconds (iperf3's -t and -i).
pub(crate) fn parse_secs(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(v) => Duration::try_from_secs_f64(v)
            .map_err(|_| format!("duration `{s}` must be a non-negative number of seconds")),
        Err(_) => parse_duration(s).map_err(|e| e.to_string()),
    }
}

/// A transfer's duration (`-t`): positive. iperf3 reads `-t 0` as "no
/// limit"; tputctl has no unlimited transfer and says so in one line.
pub(crate) fn parse_transfer_time(s: &str) -> Result<Duration, String> {
    let d = parse_secs(s)?;
    if d.is_zero() {
        return Err(format!(
            "`{s}`: a transfer needs a positive duration (iperf3's -t 0, no limit, is not supported): \
             give e.g. -t 10, or a size with -n"
        ));
    }
    Ok(d)
}

/// An idle timeout: a duration from 1 s to 1 h.
pub(crate) fn parse_idle_timeout(s: &str) -> Result<Duration, String> {
    let d = parse_secs(s)?;
    if !(Duration::from_secs(1)..=Duration::from_secs(3600)).contains(&d) {
        return Err(format!("idle timeout `{s}` must be from 1s to 1h"));
    }
    Ok(d)
}

/// A size, or iperf3's bare form: a number of bytes with an optional K, M, G or T (1024^n).
pub(crate) fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, shift) = match t.char_indices().last() {
        Some((i, c)) if "kKMGT".contains(c) => (&t[..i], 10 * (1 + "KMGT".find(c.to_ascii_uppercase()).unwrap_or(0))),
        _ => (t, 0),
    };
    let bytes = match num.parse::<u64>() {
        Ok(v) => v
            .checked_mul(1u64 << shift)
            .ok_or_else(|| format!("size `{s}` is too large"))?,
        Err(_) => parse_size(s).map_err(|e| e.to_string())?,
    };
    if bytes == 0 {
        return Err(format!("size `{s}` must be positive"));
    }
    Ok(bytes)
}

/// A sender's controller as `--cc` names it: one of this workspace's specs,
/// or one of quinn-proto's own controllers (`quinn-newreno`, `quinn-cubic`,
/// `quinn-bbr`, `quinn-bbr-paced`, uploads only), which the request names by this crate's
/// controller of the same algorithm.
#[derive(Debug, Clone)]
pub(crate) struct CcChoice {
    /// The spec the request carries.
    pub(crate) spec: ControllerSpec,
    /// quinn-proto's controller to run instead, if one was named.
    pub(crate) quinn: Option<QuinnCc>,
}

impl std::fmt::Display for CcChoice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.quinn {
            Some(q) => write!(f, "{q}"),
            None => write!(f, "{}", self.spec),
        }
    }
}

pub(crate) fn parse_cc_choice(s: &str) -> Result<CcChoice, String> {
    if s.trim_start().starts_with("quinn-") {
        let q = s.trim().parse::<QuinnCc>().map_err(|e| e.to_string())?;
        return Ok(CcChoice {
            spec: q.counterpart(),
            quinn: Some(q),
        });
    }
    let spec = s.parse::<ControllerSpec>().map_err(|e| match e.kind() {
        // `--cc` takes quinn-proto's own controllers too: list them.
        SpecErrorKind::UnknownController { .. } => {
            format!("{e}; quinn-proto's own: {}", QuinnCc::ALL.map(|q| q.name()).join(", "))
        }
        _ => e.to_string(),
    })?;
    Ok(CcChoice { spec, quinn: None })
}

pub(crate) fn parse_pin(s: &str) -> Result<Fingerprint, String> {
    s.parse::<Fingerprint>().map_err(|e| e.to_string())
}

pub(crate) fn parse_socket_addr(s: &str) -> Result<SocketAddr, String> {
    s.parse::<SocketAddr>()
        .map_err(|_| format!("`{s}` is not an IP address with a port, such as 0.0.0.0:4433"))
}

pub(crate) fn parse_eval_slot(s: &str) -> Result<EvalSlot, String> {
    s.parse::<EvalSlot>().map_err(|e| e.to_string())
}

/// The qlog directory, created if missing.
pub(crate) fn qlog_dir(dir: Option<&std::path::Path>) -> Result<Option<PathBuf>, Failure> {
    let Some(dir) = dir else { return Ok(None) };
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::Input(format!("cannot create the qlog directory {}: {e}", dir.display())))?;
    Ok(Some(dir.to_path_buf()))
}
