//! What a server admits: its limits on a request, and the refusal that
//! names the limit a request exceeds.

use std::time::Duration;

use tput_cc::units::{Rate, format_duration, parse_duration};

/// What a server lets its clients do. A request beyond a limit is refused
/// with a CONNECTION_CLOSE whose reason names the limit (RFC 9000 §19.19),
/// or, for what the server itself controls in a download (its duration and
/// rate), clamped to the limit when [`clamp`](Self::clamp) is set.
///
/// None by default; set them with the `with_*` setters (the struct is
/// `#[non_exhaustive]`):
///
/// ```
/// use std::time::Duration;
/// use tput_transport::ServerLimits;
/// let limits = ServerLimits::default()
///     .with_max_bytes(Some(1 << 30))
///     .with_max_rate(Some("100Mbit/s".parse()?))
///     .with_clamp(true);
/// assert_eq!(limits.max_bytes, Some(1 << 30));
/// # Ok::<(), tput_cc::units::UnitError>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServerLimits {
    /// Longest transfer a request may ask for.
    pub max_duration: Option<Duration>,
    /// Most bytes a request may ask for.
    pub max_bytes: Option<u64>,
    /// Fastest a download may be sent (a download without a rate limit
    /// asks for "as fast as possible", which is above any limit).
    pub max_rate: Option<Rate>,
    /// Clamp a download's duration and rate to the limits instead of refusing it.
    pub clamp: bool,
    /// Connections at once from one IP address (`None`: only `max_connections`).
    pub max_per_address: Option<usize>,
    /// Close a connection whose request has not arrived this long after the
    /// connection began (handshake included).
    pub request_timeout: Option<Duration>,
    /// Validate client addresses with a Retry packet before accepting
    /// (RFC 9000 §8.1.2): costs a round trip, defeats spoofed-source floods.
    pub retry: bool,
}

/// Why a server refused a transfer: the limit the client's request or
/// connection exceeds ([`ServerLimits`]). It prints as the reason of the
/// CONNECTION_CLOSE that refuses it (RFC 9000 §19.19), and the client reads
/// it back from there ([`TransferError::Refused`](crate::TransferError::Refused)).
/// New limits may come in a minor release: match with a wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Refusal {
    /// Longer than [`ServerLimits::max_duration`].
    #[error("refused: duration {} exceeds this server's limit of {}", format_duration(*asked), format_duration(*max))]
    Duration {
        /// The duration the request asked for.
        asked: Duration,
        /// The server's limit.
        max: Duration,
    },
    /// More than [`ServerLimits::max_bytes`].
    #[error("refused: {asked} bytes exceed this server's limit of {max} bytes")]
    Bytes {
        /// The byte count the request asked for.
        asked: u64,
        /// The server's limit.
        max: u64,
    },
    /// A download faster than [`ServerLimits::max_rate`].
    #[error("{}", rate_refusal(*asked, *max))]
    Rate {
        /// The rate limit the request asked for (`None`: none, as fast as possible).
        asked: Option<Rate>,
        /// The server's limit.
        max: Rate,
    },
    /// No request within [`ServerLimits::request_timeout`] of connecting.
    #[error("refused: no request within {} of connecting", format_duration(*within))]
    NoRequest {
        /// The server's limit.
        within: Duration,
    },
    /// More connections from one address than [`ServerLimits::max_per_address`].
    #[error(
        "refused: this server takes at most {max} connections at once from one address \
         (tputctl serve --max-per-address)"
    )]
    PerAddress {
        /// The server's limit.
        max: usize,
    },
}

impl Refusal {
    /// The refusal a close reason states, if it is one of this crate's: the
    /// text is read back, and taken only if the refusal prints as exactly
    /// that text again (the wire carries the reason, not the values).
    pub(crate) fn from_reason(reason: &str) -> Option<Refusal> {
        let refusal = Self::parse(reason.strip_prefix("refused: ")?)?;
        (refusal.to_string() == reason).then_some(refusal)
    }

    fn parse(text: &str) -> Option<Refusal> {
        const LIMIT: &str = " exceeds this server's limit of ";
        if let Some(rest) = text.strip_prefix("duration ") {
            let (asked, max) = rest.split_once(LIMIT)?;
            return Some(Refusal::Duration {
                asked: parse_duration(asked).ok()?,
                max: parse_duration(max).ok()?,
            });
        }
        if let Some(rest) = text.strip_prefix("a rate of ") {
            let (asked, rest) = rest.split_once(LIMIT)?;
            let (max, _) = rest.split_once(" for downloads")?;
            return Some(Refusal::Rate {
                asked: Some(asked.parse().ok()?),
                max: max.parse().ok()?,
            });
        }
        if let Some(rest) =
            text.strip_prefix("the download asked for no rate limit, and this server sends downloads at most at ")
        {
            let (max, _) = rest.split_once(": ")?;
            return Some(Refusal::Rate {
                asked: None,
                max: max.parse().ok()?,
            });
        }
        if let Some(rest) = text.strip_prefix("no request within ") {
            let (within, _) = rest.split_once(" of connecting")?;
            return Some(Refusal::NoRequest {
                within: parse_duration(within).ok()?,
            });
        }
        if let Some(rest) = text.strip_prefix("this server takes at most ") {
            let (max, _) = rest.split_once(' ')?;
            return Some(Refusal::PerAddress { max: max.parse().ok()? });
        }
        let (asked, rest) = text.split_once(" bytes exceed this server's limit of ")?;
        Some(Refusal::Bytes {
            asked: asked.parse().ok()?,
            max: rest.strip_suffix(" bytes")?.parse().ok()?,
        })
    }
}

/// The text of [`Refusal::Rate`]: a request without a rate limit is told so.
fn rate_refusal(asked: Option<Rate>, max: Rate) -> String {
    match asked {
        None => format!(
            "refused: the download asked for no rate limit, and this server sends downloads at most at {max}: \
             ask for one (-b/--rate-limit {max} or less)"
        ),
        Some(asked) => {
            format!(
                "refused: a rate of {asked} exceeds this server's limit of {max} for downloads (ask with -b/--rate-limit)"
            )
        }
    }
}

impl ServerLimits {
    setters! {
        with_max_duration: max_duration: Option<Duration>;
        with_max_bytes: max_bytes: Option<u64>;
        with_max_rate: max_rate: Option<Rate>;
        with_clamp: clamp: bool;
        with_max_per_address: max_per_address: Option<usize>;
        with_request_timeout: request_timeout: Option<Duration>;
        with_retry: retry: bool;
    }

    /// Check `req` against the limits, clamping where allowed; the error
    /// names the limit.
    pub(crate) fn admit(&self, req: &mut crate::proto::Request) -> Result<(), Refusal> {
        let download = req.direction == crate::proto::Direction::Download;
        if let (Some(max), Some(d)) = (self.max_duration, req.duration)
            && d > max
        {
            if !(self.clamp && download) {
                return Err(Refusal::Duration { asked: d, max });
            }
            req.duration = Some(max);
        }
        if let (Some(max), Some(b)) = (self.max_bytes, req.bytes)
            && b > max
        {
            return Err(Refusal::Bytes { asked: b, max });
        }
        if let Some(max) = self.max_rate.filter(|_| download) {
            let asked = req.rate_limit;
            if asked.is_none_or(|a| a > max) {
                if !self.clamp {
                    return Err(Refusal::Rate { asked, max });
                }
                req.rate_limit = Some(max);
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_reads_every_refusal_back_from_its_text() {
        let rate = |r: &str| r.parse::<Rate>().unwrap();
        for r in [
            Refusal::Duration {
                asked: Duration::from_secs(5),
                max: Duration::from_millis(1500),
            },
            Refusal::Bytes {
                asked: 2_000_000,
                max: 1_000_000,
            },
            Refusal::Rate {
                asked: None,
                max: rate("20Mbit/s"),
            },
            Refusal::Rate {
                asked: Some(rate("1.5Gbit/s")),
                max: rate("12345bit/s"),
            },
            Refusal::NoRequest {
                within: Duration::from_micros(250),
            },
            Refusal::PerAddress { max: 2 },
        ] {
            assert_eq!(Refusal::from_reason(&r.to_string()), Some(r.clone()), "{r}");
        }
        // Another server's words, or ours changed, are no refusal of ours.
        for text in [
            "refused: the server is full",
            "refused: duration 5 s exceeds this server's limit of 1s",
            "refused: 10 bytes exceed this server's limit of 5 bytes!",
            "bad request: missing TPUT magic",
            "",
        ] {
            assert_eq!(Refusal::from_reason(text), None, "{text}");
        }
    }
}
