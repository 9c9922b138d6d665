//! The scenario schema's TCP flows: which transport a group runs and the
//! TCP model's settings.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::scenario::serde_helpers::{human_duration, human_size};
use tput_cc::ControllerSpec;
use tput_tcp::{self as tcp, Profile, PrrBound, Recovery, TcpConfig};

/// The transport of a flow group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// Real QUIC connections (quinn-proto).
    #[default]
    Quic,
    /// The simulator's packet-level TCP model ([`tput_tcp`]).
    Tcp,
}

impl Transport {
    pub(super) fn is_quic(&self) -> bool {
        *self == Transport::Quic
    }
}

/// Delayed ACKs of a TCP sink: `true` (a 100 ms timer), `false`, or the timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DelayedAck {
    /// On with [`tcp::DEFAULT_DELAYED_ACK`], or off.
    Switch(bool),
    /// On with this timer.
    #[serde(with = "human_duration")]
    Timer(Duration),
}

/// The `[flows.tcp]` table: parameters of the TCP model (every key optional).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// `ns2` (default: [`TcpConfig::default`]) or `linux`
    /// ([`TcpConfig::linux`], plus an initial window of 10 segments and
    /// HyStart++ for NewReno and CUBIC): the defaults every other key
    /// overrides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// `reno`, `newreno` (default), `sack`, `rack` or `gbn`.
    #[serde(default)]
    pub recovery: Option<Recovery>,
    /// Minimum retransmission timeout (default 200 ms).
    #[serde(default, with = "human_duration::option")]
    pub min_rto: Option<Duration>,
    /// Delayed ACKs at the sink (default off).
    #[serde(default)]
    pub delayed_ack: Option<DelayedAck>,
    /// Payload bytes per segment (default 1000).
    #[serde(default, with = "human_size")]
    pub segment: Option<u64>,
    /// Receive window advertised by the sink (default 16 MiB).
    #[serde(default, with = "human_size")]
    pub receive_window: Option<u64>,
    /// SACK blocks from the sink (default: on exactly with `recovery = "sack"`).
    #[serde(default)]
    pub sack: Option<bool>,
    /// Limited Transmit, RFC 3042 (default off; ns-2's `singledup_` is on).
    #[serde(default)]
    pub limited_transmit: Option<bool>,
    /// Window scaling, RFC 7323 §2 (default on). Off, the window field of
    /// the TCP header (16 bits, RFC 9293 §3.1) caps `receive_window` at
    /// [`MAX_UNSCALED_WINDOW`] bytes: a larger one is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_scaling: Option<bool>,
    /// RTO before the first RTT sample (default 1 s, RFC 6298 §2.1; ns-2: 3 s).
    #[serde(default, with = "human_duration::option", skip_serializing_if = "Option::is_none")]
    pub initial_rto: Option<Duration>,
    /// Whether a fast retransmit restarts the retransmission timer (default
    /// on, as ns-2 and Linux; RFC 6298 §5 does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_timer_on_fast_retransmit: Option<bool>,
    /// When the controller's recovery period ends: `tcp` (default, with fast
    /// recovery) or `rfc9002` (one round trip later, QUIC's rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_recovery: Option<tcp::ControllerRecovery>,
    /// Pace segments at Linux's rate (default off, as ns-2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<bool>,
    /// RFC 7323 timestamps (default off, as ns-2; on in Linux): RTT samples
    /// from every ACK that advances the window, retransmissions included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<bool>,
    /// Proportional Rate Reduction in fast recovery, RFC 6937 (default off,
    /// as ns-2; on in Linux). Needs `recovery = "sack"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prr: Option<bool>,
    /// PRR's reduction bound, RFC 6937 §3: `ssrb` (default, as the RFC
    /// recommends) or `crb` (the conservative bound). Needs `prr = true`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prr_bound: Option<PrrBound>,
    /// ECN, RFC 3168 (default off, as ns-2): data ECT(0), ECE from the sink
    /// until CWR, one window reduction per window of data on ECE, so an
    /// `ecn` queue marks the flow's packets instead of dropping them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// HyStart++ (RFC 9406) on the flow's controller when it is `newreno`
    /// or `cubic` (default: on with `profile = "linux"`, else as the
    /// controller's spec says).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hystart: Option<bool>,
    /// The initial window of a `newreno` controller, segments (default: 10
    /// with `profile = "linux"` unless the spec gives `iw`, else the
    /// spec's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_window: Option<u32>,
}

/// Largest receive window without window scaling (RFC 9293 §3.1: a 16-bit field).
pub const MAX_UNSCALED_WINDOW: u64 = 65_535;

impl TcpSpec {
    /// The model's configuration; the error names the bad key.
    pub fn config(&self) -> Result<TcpConfig, String> {
        let d = self.profile()?.config();
        let recovery = self.recovery.unwrap_or(d.recovery);
        let segment = match self.segment {
            None => d.segment,
            Some(b) => u32::try_from(b).map_err(|_| format!("segment: {b} bytes is too large"))?,
        };
        if self.window_scaling == Some(false)
            && let Some(w) = self.receive_window.filter(|&w| w > MAX_UNSCALED_WINDOW)
        {
            return Err(format!(
                "receive_window: {w} bytes needs window scaling (RFC 7323 §2); without it at most {MAX_UNSCALED_WINDOW}"
            ));
        }
        if self.window_scaling == Some(false) && self.receive_window.is_none() {
            return Err(format!(
                "window_scaling: off needs an explicit receive_window of at most {MAX_UNSCALED_WINDOW} bytes"
            ));
        }
        let c = TcpConfig {
            segment,
            recovery,
            min_rto: self.min_rto.unwrap_or(d.min_rto),
            delayed_ack: match self.delayed_ack {
                None => d.delayed_ack,
                Some(DelayedAck::Switch(false)) => None,
                Some(DelayedAck::Switch(true)) => Some(d.delayed_ack.unwrap_or(tcp::DEFAULT_DELAYED_ACK)),
                Some(DelayedAck::Timer(t)) => Some(t),
            },
            sack: self.sack.unwrap_or(d.sack || recovery.uses_sack()),
            receive_window: self.receive_window.unwrap_or(d.receive_window),
            limited_transmit: self.limited_transmit.unwrap_or(d.limited_transmit),
            initial_rto: self.initial_rto.unwrap_or(d.initial_rto),
            restart_timer_on_fast_retransmit: self
                .restart_timer_on_fast_retransmit
                .unwrap_or(d.restart_timer_on_fast_retransmit),
            controller_recovery: self.controller_recovery.unwrap_or(d.controller_recovery),
            pacing: self.pacing.unwrap_or(d.pacing),
            timestamps: self.timestamps.unwrap_or(d.timestamps),
            // A profile's PRR goes with its recovery: another recovery key
            // without SACK turns it off rather than refusing.
            prr: self.prr.unwrap_or(d.prr && recovery.uses_sack()),
            prr_bound: self.prr_bound.unwrap_or(d.prr_bound),
            ecn: self.ecn.unwrap_or(d.ecn),
            ..d
        };
        c.validate().map_err(|e| e.to_string())?;
        Ok(c)
    }

    /// The profile the other keys depart from; the error names the key.
    pub fn profile(&self) -> Result<Profile, String> {
        self.profile
            .as_deref()
            .map_or(Ok(Profile::Ns2), str::parse)
            .map_err(|e| format!("profile: {e}"))
    }

    /// The flow's controller with what the TCP settings add to it: HyStart++
    /// and the initial window ([`TcpSpec::hystart`],
    /// [`TcpSpec::initial_window`], or the profile's); the error names the key.
    pub fn controller(&self, cc: &ControllerSpec) -> Result<ControllerSpec, String> {
        let linux = self.profile()? == Profile::Linux;
        let hystart = self.hystart.or(linux.then_some(true));
        let mut cc = cc.clone();
        match &mut cc {
            ControllerSpec::NewReno(c) => {
                if let Some(h) = hystart {
                    c.hystart = h;
                }
                // Linux's initial window, 10 segments (RFC 6928).
                let profile_iw = (linux && c.initial_window.is_none()).then_some(10);
                if let Some(iw) = self.initial_window.or(profile_iw) {
                    c.initial_window = Some(iw);
                }
            }
            ControllerSpec::Cubic(c) => {
                if let Some(h) = hystart {
                    c.hystart = h;
                }
                if self.initial_window.is_some() {
                    return Err("initial_window: only a newreno controller's is settable; cubic starts at RFC 9002 §7.2's window (10 segments of up to 1472 bytes)".into());
                }
            }
            _ if self.initial_window.is_some() => {
                return Err(format!(
                    "initial_window: only a newreno controller's is settable, not {}'s",
                    cc.name()
                ));
            }
            _ => {}
        }
        cc.validate().map_err(|e| format!("initial_window: {e}"))?;
        Ok(cc)
    }
}
