//! Controller spec strings: `name[:key=value,...]`.
//!
//! Every controller parses from and prints back to a spec string;
//! `spec.to_string().parse() == Ok(spec)`. Display prints the parameters that
//! differ from their defaults (and the required ones), in registry order.
//!
//! ```
//! use tput_cc::ControllerSpec;
//! let spec: ControllerSpec = "guarantee:target=20Mbit/s,eval=32rtt,slot=8rtt".parse().unwrap();
//! assert_eq!(spec.to_string(), "guarantee:target=20Mbit/s,slot=8rtt");
//! assert_eq!(spec.to_string().parse::<ControllerSpec>().unwrap(), spec);
//! let err = "vegas:alpha=two".parse::<ControllerSpec>().unwrap_err();
//! assert_eq!(err.to_string(), "bad controller spec `vegas:alpha=two`: alpha: `two` is not a number");
//! ```

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use crate::aggregate::Aggregate;
use crate::bandwidth::BandwidthSource;
use crate::bbr::{Bbr, BbrConfig};
use crate::compound::{Compound, CompoundConfig};
use crate::controller::CongestionController;
use crate::cubic::{Cubic, CubicConfig};
use crate::error::ConfigError;
use crate::estimator::{Estimating, EstimatorConfig, InlineEstimator};
use crate::eval_slot::EvalSlot;
use crate::fixed::{FixedConfig, FixedWindow};
use crate::guarantee::{AbwSource, Guarantee, GuaranteeConfig, GuaranteeMode};
use crate::newreno::{NewReno, NewRenoConfig};
use crate::units::{Rate, format_duration, parse_duration};
use crate::vegas::{Vegas, VegasConfig};

/// A controller and its parameters, as named by a spec string.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ControllerSpec {
    /// `newreno`
    NewReno(NewRenoConfig),
    /// `cubic[:beta=..,c=..,fast_convergence=..,reno_friendly=..]`
    Cubic(CubicConfig),
    /// `vegas[:alpha=..,beta=..,gamma=..]`
    Vegas(VegasConfig),
    /// `ctcp[:alpha=..,beta=..,k=..,gamma=..,zeta=..]`
    Compound(CompoundConfig),
    /// `fixed:rate=RATE`
    Fixed(FixedConfig),
    /// `guarantee:target=RATE[,eval=..,slot=..,k_min=..,kmax_cwnd=..,physical=..,abw=..,mode=..,margin=..,overhead=..]`
    Guarantee(GuaranteeConfig),
    /// `bbr[:startup_gain=..,cwnd_gain=..,drain_gain=..,down_gain=..,up_gain=..,up_cwnd_gain=..,probe_rtt_gain=..,probe_rtt_interval=..,probe_rtt_duration=..,min_rtt_window=..,loss_thresh=..,beta=..,headroom=..,margin=..,iw=..,seed=..]`
    Bbr(BbrConfig),
}

/// A malformed spec string: the string and what is wrong with it
/// ([`SpecErrorKind`]). It prints as one line,
/// ``bad controller spec `SPEC`: WHY``.
///
/// ```
/// use tput_cc::{ControllerSpec, SpecErrorKind};
/// let e = "cubic:beta=2".parse::<ControllerSpec>().unwrap_err();
/// assert_eq!(e.spec(), "cubic:beta=2");
/// match e.kind() {
///     SpecErrorKind::Invalid(c) => assert_eq!(c.key(), "beta"),
///     other => panic!("unexpected {other}"),
/// }
/// assert_eq!(e.to_string(), "bad controller spec `cubic:beta=2`: beta: 2 must be in (0, 1)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad controller spec `{spec}`: {kind}")]
pub struct SpecError {
    spec: String,
    kind: SpecErrorKind,
}

impl SpecError {
    /// The spec string as given.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// What is wrong with it.
    pub fn kind(&self) -> &SpecErrorKind {
        &self.kind
    }
}

/// What is wrong with a spec string (see [`SpecError`]). New variants may
/// come in a minor release: match with a wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecErrorKind {
    /// The name before `:` is no controller of the [`registry`].
    #[error("unknown controller `{name}` (known: {})", known_controllers())]
    UnknownController {
        /// The name given.
        name: String,
    },
    /// An item of the parameter list has no `=`.
    #[error("`{item}` is not key=value")]
    NotKeyValue {
        /// The item given.
        item: String,
    },
    /// A key the controller does not take.
    #[error("{}", unknown_parameter(controller, key))]
    UnknownParameter {
        /// The controller's name.
        controller: &'static str,
        /// The key given.
        key: String,
    },
    /// A key given twice.
    #[error("parameter `{key}` given twice")]
    DuplicateParameter {
        /// The key.
        key: String,
    },
    /// A required key is missing.
    #[error("{controller} needs {key}=")]
    MissingParameter {
        /// The controller's name.
        controller: &'static str,
        /// The key it needs.
        key: &'static str,
    },
    /// A value that does not parse as the key's type.
    #[error("{key}: {reason}")]
    BadValue {
        /// The key.
        key: &'static str,
        /// The value given.
        value: String,
        /// What is wrong with it (it quotes the value).
        reason: String,
    },
    /// Values that parse but that the controller refuses (its `validate`).
    #[error(transparent)]
    Invalid(#[from] ConfigError),
}

fn known_controllers() -> String {
    REGISTRY.iter().map(|c| c.name).collect::<Vec<_>>().join(", ")
}

fn unknown_parameter(controller: &str, key: &str) -> String {
    let keys: Vec<_> = info(controller).map_or(Vec::new(), |i| i.params.iter().map(|p| p.name).collect());
    if keys.is_empty() {
        format!("{controller} takes no parameters, got `{key}`")
    } else {
        format!(
            "unknown parameter `{key}` for {controller} (known: {})",
            keys.join(", ")
        )
    }
}

/// One parameter of a controller, for listings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParamInfo {
    /// The key in the spec string.
    pub name: &'static str,
    /// Unit or type of the value.
    pub unit: &'static str,
    /// The default, as it would be written in a spec; `None` if required.
    pub default: Option<&'static str>,
    /// What it means.
    pub doc: &'static str,
}

/// One controller in the [`registry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ControllerInfo {
    /// The name in spec strings.
    pub name: &'static str,
    /// Other accepted names.
    pub aliases: &'static [&'static str],
    /// One line on what it is and which document it follows.
    pub summary: &'static str,
    /// Its parameters.
    pub params: &'static [ParamInfo],
}

const fn p(name: &'static str, unit: &'static str, default: Option<&'static str>, doc: &'static str) -> ParamInfo {
    ParamInfo {
        name,
        unit,
        default,
        doc,
    }
}

static REGISTRY: [ControllerInfo; 7] = [
    ControllerInfo {
        name: "newreno",
        aliases: &["reno"],
        summary: "NewReno: slow start, AIMD, one halving per round trip (RFC 9002 §7)",
        params: &[
            p(
                "iw",
                "packets",
                None,
                "initial window (default RFC 9002 §7.2: 10, at most 14720 bytes; ns-2's windowInit_ is 2)",
            ),
            p(
                "lw",
                "packets",
                Some("2"),
                "window after persistent congestion or a TCP timeout (RFC 9002 kMinimumWindow; RFC 5681 and ns-2: 1)",
            ),
            p(
                "count",
                "bytes|acks",
                Some("bytes"),
                "growth per acked byte (RFC 9002 §7.3) or per ACK, cwnd += SMSS*SMSS/cwnd with the fraction kept (RFC 5681 §3.1, ns-2's Agent/TCP)",
            ),
        ],
    },
    ControllerInfo {
        name: "cubic",
        aliases: &[],
        summary: "CUBIC: cubic window growth around W_max with a Reno-friendly region (RFC 9438)",
        params: &[
            p(
                "beta",
                "factor",
                Some("0.7"),
                "multiplicative decrease factor beta_cubic (§4.6)",
            ),
            p("c", "packets/s^3", Some("0.4"), "cubic scaling constant C (§4.2)"),
            p(
                "fast_convergence",
                "bool",
                Some("true"),
                "release bandwidth faster when W_max shrinks (§4.7)",
            ),
            p(
                "reno_friendly",
                "bool",
                Some("true"),
                "never grow slower than the Reno estimate W_est (§4.3)",
            ),
        ],
    },
    ControllerInfo {
        name: "vegas",
        aliases: &[],
        summary: "Vegas: keep alpha..beta packets queued, from expected vs actual rate (Brakmo & Peterson 1994)",
        params: &[
            p(
                "alpha",
                "packets",
                Some("2"),
                "grow by one packet per RTT while diff < alpha",
            ),
            p(
                "beta",
                "packets",
                Some("4"),
                "shrink by one packet per RTT while diff > beta",
            ),
            p("gamma", "packets", Some("1"), "leave slow start once diff > gamma"),
        ],
    },
    ControllerInfo {
        name: "ctcp",
        aliases: &["compound"],
        summary: "Compound TCP: loss window cwnd plus delay window dwnd (Tan et al. 2006)",
        params: &[
            p(
                "alpha",
                "factor",
                Some("0.125"),
                "dwnd growth: win += alpha * win^k per RTT",
            ),
            p(
                "beta",
                "factor",
                Some("0.5"),
                "multiplicative decrease of the total window on loss",
            ),
            p("k", "exponent", Some("0.75"), "exponent of the binomial increase"),
            p(
                "gamma",
                "packets",
                Some("30"),
                "queued-packet threshold above which dwnd shrinks",
            ),
            p(
                "zeta",
                "factor",
                Some("1"),
                "dwnd decrease per packet of diff above gamma",
            ),
        ],
    },
    ControllerInfo {
        name: "fixed",
        aliases: &[],
        summary: "fixed window rate * min_rtt, never reduced on loss (Yamanegi et al.'s baseline)",
        params: &[p(
            "rate",
            "rate",
            None,
            "the rate the window is sized for, e.g. 20Mbit/s",
        )],
    },
    ControllerInfo {
        name: "guarantee",
        aliases: &["tput"],
        summary: "throughput guarantee: Reno whose slope k chases a per-slot goal (Yamanegi, Hasegawa, Murata)",
        params: &[
            p(
                "target",
                "rate",
                None,
                "throughput bw to reach in every evaluation slot",
            ),
            p(
                "eval",
                "Nrtt or duration",
                Some("32rtt"),
                "evaluation slot length t (d = t / min_rtt if a duration)",
            ),
            p(
                "slot",
                "Nrtt",
                Some("eval/2"),
                "initial control slot length s, a power of two, 2 <= s <= d",
            ),
            p(
                "k_min",
                "packets/RTT",
                Some("1"),
                "lower clamp of the slope k (1 = never slower than Reno)",
            ),
            p(
                "kmax_cwnd",
                "factor",
                Some("2"),
                "k_max = A*srtt - kmax_cwnd*cwnd (2*cwnd as in the paper's summary; its eqs. (4)/(5) print 1*cwnd)",
            ),
            p(
                "physical",
                "rate",
                Some("from source"),
                "physical bottleneck bandwidth P, if the bandwidth source has none; replaces the inline estimate",
            ),
            p(
                "abw",
                "auto|inline",
                Some("auto"),
                "source of A and P: auto = the builder's source, else the inline estimator; inline = always the inline estimator",
            ),
            p(
                "mode",
                "floor|paper",
                Some("floor"),
                "floor = a loss never cuts below the window the target needs, with a breaker for infeasible targets; paper = the paper's rules exactly (Reno's halving)",
            ),
            p(
                "margin",
                "factor",
                Some("0.1"),
                "floor mode: the floor steers each evaluation slot's throughput toward (1 + margin) * target",
            ),
            p(
                "overhead",
                "bytes",
                Some("35 (floor), 0 (paper)"),
                "bytes of each acknowledged packet that are not goodput (QUIC header, AEAD tag, STREAM frame header); the target counts goodput",
            ),
        ],
    },
    ControllerInfo {
        name: "bbr",
        aliases: &[],
        summary: "BBRv3: pacing rate and cwnd from a model of bottleneck bandwidth and min RTT (draft-ietf-ccwg-bbr-06)",
        params: &[
            p(
                "startup_gain",
                "factor",
                Some("2.77"),
                "Startup pacing gain BBR.StartupPacingGain (§2.5)",
            ),
            p(
                "cwnd_gain",
                "factor",
                Some("2"),
                "cwnd gain BBR.DefaultCwndGain of every state but ProbeBW_UP and ProbeRTT (§2.6)",
            ),
            p(
                "drain_gain",
                "factor",
                Some("0.5"),
                "Drain pacing gain BBR.DrainPacingGain (§2.5)",
            ),
            p(
                "down_gain",
                "factor",
                Some("0.9"),
                "ProbeBW_DOWN pacing gain (§5.3.3.1)",
            ),
            p("up_gain", "factor", Some("1.25"), "ProbeBW_UP pacing gain (§5.3.3.5)"),
            p(
                "up_cwnd_gain",
                "factor",
                Some("2.25"),
                "ProbeBW_UP cwnd gain (§5.3.3.5)",
            ),
            p(
                "probe_rtt_gain",
                "factor",
                Some("0.5"),
                "ProbeRTT cwnd gain BBR.ProbeRTTCwndGain (§2.16.2)",
            ),
            p(
                "probe_rtt_interval",
                "duration",
                Some("5s"),
                "BBR.ProbeRTTInterval: ProbeRTT when the min RTT was not refreshed for this long (§5.3.4)",
            ),
            p(
                "probe_rtt_duration",
                "duration",
                Some("200ms"),
                "BBR.ProbeRTTDuration: time ProbeRTT holds inflight down (§5.3.4)",
            ),
            p(
                "min_rtt_window",
                "duration",
                Some("10s"),
                "BBR.MinRTTFilterLen, >= probe_rtt_interval (§5.5.7.2)",
            ),
            p(
                "loss_thresh",
                "factor",
                Some("0.02"),
                "BBR.LossThresh: loss rate per round that marks inflight too high (§2.8)",
            ),
            p(
                "beta",
                "factor",
                Some("0.7"),
                "BBR.Beta: multiplicative decrease per lossy round (§2.8)",
            ),
            p(
                "headroom",
                "factor",
                Some("0.15"),
                "BBR.Headroom: share of inflight_longterm left free for other flows (§2.8)",
            ),
            p(
                "margin",
                "percent",
                Some("1"),
                "BBR.PacingMarginPercent: pace this far below the bandwidth estimate (§2.5)",
            ),
            p(
                "iw",
                "packets",
                Some("RFC 9002"),
                "initial window C.InitialCwnd (RFC 9002 §7.2: 10, at most 14720 bytes)",
            ),
            p(
                "seed",
                "integer",
                Some("0"),
                "seed of the random ProbeBW wait (§5.3.3.8.2)",
            ),
        ],
    },
];

/// Every controller with its parameters, units and defaults.
pub fn registry() -> &'static [ControllerInfo] {
    &REGISTRY
}

fn bad_value(key: &'static str, v: &str, reason: String) -> SpecErrorKind {
    SpecErrorKind::BadValue {
        key,
        value: v.to_owned(),
        reason,
    }
}

fn parse_f64(key: &'static str, v: &str) -> Result<f64, SpecErrorKind> {
    let x: f64 = v
        .parse()
        .map_err(|_| bad_value(key, v, format!("`{v}` is not a number")))?;
    if x.is_finite() {
        Ok(x)
    } else {
        Err(bad_value(key, v, format!("`{v}` is not finite")))
    }
}

fn parse_bool(key: &'static str, v: &str) -> Result<bool, SpecErrorKind> {
    match v {
        "true" | "on" | "yes" | "1" => Ok(true),
        "false" | "off" | "no" | "0" => Ok(false),
        _ => Err(bad_value(key, v, format!("`{v}` is not a boolean (true/false)"))),
    }
}

fn parse_packets(key: &'static str, v: &str) -> Result<u32, SpecErrorKind> {
    v.parse::<u32>()
        .map_err(|_| bad_value(key, v, format!("`{v}` is not a whole number of packets")))
}

fn parse_rate(key: &'static str, v: &str) -> Result<Rate, SpecErrorKind> {
    v.parse::<Rate>().map_err(|e| bad_value(key, v, e.to_string()))
}

fn parse_rtts(key: &'static str, v: &str) -> Result<u32, SpecErrorKind> {
    let n = v
        .strip_suffix("rtt")
        .ok_or_else(|| bad_value(key, v, format!("`{v}` must be a number of RTTs such as 16rtt")))?;
    n.parse::<u32>()
        .map_err(|_| bad_value(key, v, format!("`{v}` must be a whole number of RTTs such as 16rtt")))
}

fn parse_eval(key: &'static str, v: &str) -> Result<EvalSlot, SpecErrorKind> {
    v.parse::<EvalSlot>().map_err(|e| bad_value(key, v, e.to_string()))
}

fn parse_abw(key: &'static str, v: &str) -> Result<AbwSource, SpecErrorKind> {
    match v {
        "auto" => Ok(AbwSource::Auto),
        "inline" => Ok(AbwSource::Inline),
        _ => Err(bad_value(
            key,
            v,
            format!("`{v}` is not a bandwidth source (auto, inline)"),
        )),
    }
}

fn parse_mode(key: &'static str, v: &str) -> Result<GuaranteeMode, SpecErrorKind> {
    match v {
        "floor" => Ok(GuaranteeMode::Floor),
        "paper" => Ok(GuaranteeMode::Paper),
        _ => Err(bad_value(key, v, format!("`{v}` is not a mode (floor, paper)"))),
    }
}

impl fmt::Display for GuaranteeMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GuaranteeMode::Floor => "floor",
            GuaranteeMode::Paper => "paper",
        })
    }
}

impl fmt::Display for AbwSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AbwSource::Auto => "auto",
            AbwSource::Inline => "inline",
        })
    }
}

fn info(name: &str) -> Option<&'static ControllerInfo> {
    REGISTRY.iter().find(|c| c.name == name || c.aliases.contains(&name))
}

impl FromStr for ControllerSpec {
    type Err = SpecError;
    fn from_str(spec: &str) -> Result<Self, SpecError> {
        parse(spec.trim()).map_err(|kind| SpecError {
            spec: spec.to_owned(),
            kind,
        })
    }
}

fn parse(spec: &str) -> Result<ControllerSpec, SpecErrorKind> {
    let (name, body) = spec.split_once(':').unwrap_or((spec, ""));
    let info = info(name).ok_or_else(|| SpecErrorKind::UnknownController { name: name.to_owned() })?;
    let mut pairs = Vec::new();
    for item in body.split(',').filter(|s| !s.is_empty()) {
        let (k, v) = item
            .split_once('=')
            .ok_or_else(|| SpecErrorKind::NotKeyValue { item: item.to_owned() })?;
        let (k, v) = (k.trim(), v.trim());
        if !info.params.iter().any(|p| p.name == k) {
            return Err(SpecErrorKind::UnknownParameter {
                controller: info.name,
                key: k.to_owned(),
            });
        }
        if pairs.iter().any(|&(seen, _)| seen == k) {
            return Err(SpecErrorKind::DuplicateParameter { key: k.to_owned() });
        }
        pairs.push((k, v));
    }
    let get = |k: &str| pairs.iter().find(|&&(key, _)| key == k).map(|&(_, v)| v);
    let required = |k: &'static str| {
        get(k).ok_or(SpecErrorKind::MissingParameter {
            controller: info.name,
            key: k,
        })
    };
    let spec = match info.name {
        "newreno" => {
            let mut c = NewRenoConfig::default();
            if let Some(v) = get("iw") {
                c.initial_window = Some(parse_packets("iw", v)?);
            }
            if let Some(v) = get("lw") {
                c.loss_window = parse_packets("lw", v)?;
            }
            if let Some(v) = get("count") {
                c.count = match v {
                    "bytes" => crate::newreno::Counting::Bytes,
                    "acks" => crate::newreno::Counting::Acks,
                    _ => return Err(bad_value("count", v, format!("`{v}` is not bytes or acks"))),
                };
            }
            ControllerSpec::NewReno(c)
        }
        "cubic" => {
            let mut c = CubicConfig::default();
            if let Some(v) = get("beta") {
                c.beta = parse_f64("beta", v)?;
            }
            if let Some(v) = get("c") {
                c.c = parse_f64("c", v)?;
            }
            if let Some(v) = get("fast_convergence") {
                c.fast_convergence = parse_bool("fast_convergence", v)?;
            }
            if let Some(v) = get("reno_friendly") {
                c.reno_friendly = parse_bool("reno_friendly", v)?;
            }
            ControllerSpec::Cubic(c)
        }
        "vegas" => {
            let mut c = VegasConfig::default();
            if let Some(v) = get("alpha") {
                c.alpha = parse_f64("alpha", v)?;
            }
            if let Some(v) = get("beta") {
                c.beta = parse_f64("beta", v)?;
            }
            if let Some(v) = get("gamma") {
                c.gamma = parse_f64("gamma", v)?;
            }
            ControllerSpec::Vegas(c)
        }
        "ctcp" => {
            let mut c = CompoundConfig::default();
            if let Some(v) = get("alpha") {
                c.alpha = parse_f64("alpha", v)?;
            }
            if let Some(v) = get("beta") {
                c.beta = parse_f64("beta", v)?;
            }
            if let Some(v) = get("k") {
                c.k = parse_f64("k", v)?;
            }
            if let Some(v) = get("gamma") {
                c.gamma = parse_f64("gamma", v)?;
            }
            if let Some(v) = get("zeta") {
                c.zeta = parse_f64("zeta", v)?;
            }
            ControllerSpec::Compound(c)
        }
        "fixed" => ControllerSpec::Fixed(FixedConfig {
            rate: parse_rate("rate", required("rate")?)?,
        }),
        "guarantee" => {
            let mut c = GuaranteeConfig::new(parse_rate("target", required("target")?)?);
            if let Some(v) = get("eval") {
                c.eval = parse_eval("eval", v)?;
            }
            if let Some(v) = get("slot") {
                c.slot_rtts = Some(parse_rtts("slot", v)?);
            }
            if let Some(v) = get("k_min") {
                c.k_min = parse_f64("k_min", v)?;
            }
            if let Some(v) = get("kmax_cwnd") {
                c.kmax_cwnd = parse_f64("kmax_cwnd", v)?;
            }
            if let Some(v) = get("physical") {
                c.physical = Some(parse_rate("physical", v)?);
            }
            if let Some(v) = get("abw") {
                c.abw = parse_abw("abw", v)?;
            }
            if let Some(v) = get("mode") {
                c.mode = parse_mode("mode", v)?;
            }
            if let Some(v) = get("margin") {
                c.margin = parse_f64("margin", v)?;
            }
            if let Some(v) = get("overhead") {
                c.overhead = Some(
                    v.parse::<u32>()
                        .map_err(|_| bad_value("overhead", v, format!("`{v}` is not a whole number of bytes")))?,
                );
            }
            ControllerSpec::Guarantee(c)
        }
        "bbr" => {
            let mut c = BbrConfig::default();
            for (key, field) in [
                ("startup_gain", &mut c.startup_gain),
                ("cwnd_gain", &mut c.cwnd_gain),
                ("drain_gain", &mut c.drain_gain),
                ("down_gain", &mut c.down_gain),
                ("up_gain", &mut c.up_gain),
                ("up_cwnd_gain", &mut c.up_cwnd_gain),
                ("probe_rtt_gain", &mut c.probe_rtt_gain),
                ("loss_thresh", &mut c.loss_thresh),
                ("beta", &mut c.beta),
                ("headroom", &mut c.headroom),
                ("margin", &mut c.pacing_margin),
            ] {
                if let Some(v) = get(key) {
                    *field = parse_f64(key, v)?;
                }
            }
            for (key, field) in [
                ("probe_rtt_interval", &mut c.probe_rtt_interval),
                ("probe_rtt_duration", &mut c.probe_rtt_duration),
                ("min_rtt_window", &mut c.min_rtt_window),
            ] {
                if let Some(v) = get(key) {
                    *field = parse_duration(v).map_err(|e| bad_value(key, v, e.to_string()))?;
                }
            }
            if let Some(v) = get("iw") {
                c.initial_window = Some(parse_packets("iw", v)?);
            }
            if let Some(v) = get("seed") {
                c.seed = v
                    .parse::<u64>()
                    .map_err(|_| bad_value("seed", v, format!("`{v}` is not a whole number")))?;
            }
            ControllerSpec::Bbr(c)
        }
        other => unreachable!("registry entry {other} has no parser"),
    };
    spec.validate()?;
    Ok(spec)
}

impl ControllerSpec {
    /// The canonical name of the controller.
    pub fn name(&self) -> &'static str {
        match self {
            Self::NewReno(_) => "newreno",
            Self::Cubic(_) => "cubic",
            Self::Vegas(_) => "vegas",
            Self::Compound(_) => "ctcp",
            Self::Fixed(_) => "fixed",
            Self::Guarantee(_) => "guarantee",
            Self::Bbr(_) => "bbr",
        }
    }

    /// Check parameter ranges; the error names the bad parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            Self::NewReno(c) => c.validate(),
            Self::Cubic(c) => c.validate(),
            Self::Vegas(c) => c.validate(),
            Self::Compound(c) => c.validate(),
            Self::Fixed(c) => c.validate(),
            Self::Guarantee(c) => c.validate(),
            Self::Bbr(c) => c.validate(),
        }
    }

    /// The same spec for a transport whose acknowledged bytes are all payload
    /// (the simulator's TCP model counts segment payload): a guarantee
    /// controller with no explicit `overhead` gets 0, so that its target is
    /// not scaled up for QUIC's headers. Other specs are returned unchanged.
    ///
    /// ```
    /// use tput_cc::ControllerSpec;
    /// let spec: ControllerSpec = "guarantee:target=10Mbit/s".parse().unwrap();
    /// assert_eq!(spec.for_payload_acks().to_string(), "guarantee:target=10Mbit/s,overhead=0");
    /// let spec: ControllerSpec = "guarantee:target=10Mbit/s,overhead=40".parse().unwrap();
    /// assert_eq!(spec.for_payload_acks(), spec);
    /// ```
    pub fn for_payload_acks(&self) -> ControllerSpec {
        match self {
            Self::Guarantee(c) if c.overhead.is_none() => Self::Guarantee(GuaranteeConfig {
                overhead: Some(0),
                ..c.clone()
            }),
            other => other.clone(),
        }
    }

    /// Build the controller for a path whose maximum datagram size is `mss` bytes.
    ///
    /// The guarantee controller built this way has no external bandwidth
    /// source, so it measures `A` and `P` inline; see [`build_with`](Self::build_with).
    pub fn build(&self, mss: u16) -> Box<dyn CongestionController> {
        self.build_with(mss, None)
    }

    /// Build the controller; the guarantee controller reads `A` and `P` from `bandwidth`.
    /// Other controllers ignore it.
    ///
    /// With `abw=inline`, or `abw=auto` and no `bandwidth`, the guarantee
    /// controller reads them from an [`InlineEstimator`] instead (given
    /// `physical=` as its `P`), and comes wrapped in the [`Estimating`]
    /// decorator that feeds the estimator.
    pub fn build_with(&self, mss: u16, bandwidth: Option<Arc<dyn BandwidthSource>>) -> Box<dyn CongestionController> {
        self.build_in(mss, bandwidth, None)
    }

    /// [`build_with`](Self::build_with), and a guarantee controller fed by
    /// `bandwidth` joins `aggregate` (see [`Aggregate`]). One that measures
    /// `A` inline does not (its estimate already excludes the other members),
    /// nor do other controllers.
    pub fn build_in(
        &self,
        mss: u16,
        bandwidth: Option<Arc<dyn BandwidthSource>>,
        aggregate: Option<&Aggregate>,
    ) -> Box<dyn CongestionController> {
        let mss = u64::from(mss);
        let join = |g: Guarantee| match aggregate {
            Some(group) => g.with_aggregate(group),
            None => g,
        };
        match self {
            Self::NewReno(c) => Box::new(NewReno::new(c.clone(), mss)),
            Self::Cubic(c) => Box::new(Cubic::new(c.clone(), mss)),
            Self::Vegas(c) => Box::new(Vegas::new(c.clone(), mss)),
            Self::Compound(c) => Box::new(Compound::new(c.clone(), mss)),
            Self::Fixed(c) => Box::new(FixedWindow::new(c.clone(), mss)),
            Self::Bbr(c) => Box::new(Bbr::new(c.clone(), mss)),
            Self::Guarantee(c) => match (c.abw, bandwidth) {
                (AbwSource::Auto, Some(source)) => Box::new(join(Guarantee::new(c.clone(), mss, Some(source)))),
                _ => {
                    let estimator = InlineEstimator::new(EstimatorConfig {
                        physical: c.physical.map(Rate::bytes_per_sec),
                        ..EstimatorConfig::default()
                    });
                    // Not joined to `aggregate`: an inline estimate of A already
                    // counts the other members as cross traffic, and the
                    // coordinator would subtract their rates a second time.
                    let inner = Guarantee::new(c.clone(), mss, Some(Estimating::source(&estimator)));
                    Box::new(Estimating::new(estimator, Box::new(inner)))
                }
            },
        }
    }
}

impl fmt::Display for ControllerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        let mut put = |cond: bool, k: &str, v: String| {
            if cond {
                parts.push(format!("{k}={v}"));
            }
        };
        match self {
            Self::NewReno(c) => {
                let d = NewRenoConfig::default();
                if let Some(iw) = c.initial_window {
                    put(true, "iw", iw.to_string());
                }
                put(c.loss_window != d.loss_window, "lw", c.loss_window.to_string());
                put(c.count != d.count, "count", "acks".to_string());
            }
            Self::Cubic(c) => {
                let d = CubicConfig::default();
                put(c.beta != d.beta, "beta", c.beta.to_string());
                put(c.c != d.c, "c", c.c.to_string());
                put(
                    c.fast_convergence != d.fast_convergence,
                    "fast_convergence",
                    c.fast_convergence.to_string(),
                );
                put(
                    c.reno_friendly != d.reno_friendly,
                    "reno_friendly",
                    c.reno_friendly.to_string(),
                );
            }
            Self::Vegas(c) => {
                let d = VegasConfig::default();
                put(c.alpha != d.alpha, "alpha", c.alpha.to_string());
                put(c.beta != d.beta, "beta", c.beta.to_string());
                put(c.gamma != d.gamma, "gamma", c.gamma.to_string());
            }
            Self::Compound(c) => {
                let d = CompoundConfig::default();
                put(c.alpha != d.alpha, "alpha", c.alpha.to_string());
                put(c.beta != d.beta, "beta", c.beta.to_string());
                put(c.k != d.k, "k", c.k.to_string());
                put(c.gamma != d.gamma, "gamma", c.gamma.to_string());
                put(c.zeta != d.zeta, "zeta", c.zeta.to_string());
            }
            Self::Fixed(c) => put(true, "rate", c.rate.to_string()),
            Self::Guarantee(c) => {
                let d = GuaranteeConfig::new(c.target);
                put(true, "target", c.target.to_string());
                put(c.eval != d.eval, "eval", c.eval.to_string());
                if let Some(s) = c.slot_rtts {
                    put(true, "slot", format!("{s}rtt"));
                }
                put(c.k_min != d.k_min, "k_min", c.k_min.to_string());
                put(c.kmax_cwnd != d.kmax_cwnd, "kmax_cwnd", c.kmax_cwnd.to_string());
                if let Some(r) = c.physical {
                    put(true, "physical", r.to_string());
                }
                put(c.abw != d.abw, "abw", c.abw.to_string());
                put(c.mode != d.mode, "mode", c.mode.to_string());
                put(c.margin != d.margin, "margin", c.margin.to_string());
                if let Some(o) = c.overhead {
                    put(true, "overhead", o.to_string());
                }
            }
            Self::Bbr(c) => {
                let d = BbrConfig::default();
                for (key, v, dv) in [
                    ("startup_gain", c.startup_gain, d.startup_gain),
                    ("cwnd_gain", c.cwnd_gain, d.cwnd_gain),
                    ("drain_gain", c.drain_gain, d.drain_gain),
                    ("down_gain", c.down_gain, d.down_gain),
                    ("up_gain", c.up_gain, d.up_gain),
                    ("up_cwnd_gain", c.up_cwnd_gain, d.up_cwnd_gain),
                    ("probe_rtt_gain", c.probe_rtt_gain, d.probe_rtt_gain),
                ] {
                    put(v != dv, key, v.to_string());
                }
                for (key, v, dv) in [
                    ("probe_rtt_interval", c.probe_rtt_interval, d.probe_rtt_interval),
                    ("probe_rtt_duration", c.probe_rtt_duration, d.probe_rtt_duration),
                    ("min_rtt_window", c.min_rtt_window, d.min_rtt_window),
                ] {
                    put(v != dv, key, format_duration(v));
                }
                for (key, v, dv) in [
                    ("loss_thresh", c.loss_thresh, d.loss_thresh),
                    ("beta", c.beta, d.beta),
                    ("headroom", c.headroom, d.headroom),
                    ("margin", c.pacing_margin, d.pacing_margin),
                ] {
                    put(v != dv, key, v.to_string());
                }
                if let Some(iw) = c.initial_window {
                    put(true, "iw", iw.to_string());
                }
                put(c.seed != d.seed, "seed", c.seed.to_string());
            }
        }
        f.write_str(self.name())?;
        if !parts.is_empty() {
            write!(f, ":{}", parts.join(","))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn examples_parse_and_round_trip() {
        for s in [
            "newreno",
            "reno",
            "newreno:iw=2,lw=1",
            "newreno:lw=1",
            "newreno:iw=2,lw=1,count=acks",
            "newreno:count=bytes",
            "cubic",
            "cubic:beta=0.7",
            "cubic:beta=0.8,c=0.3,fast_convergence=false,reno_friendly=off",
            "vegas:alpha=2,beta=4",
            "vegas:alpha=1.5,beta=3,gamma=2",
            "ctcp",
            "compound:gamma=10,k=0.8",
            "fixed:rate=20Mbit/s",
            "guarantee:target=20Mbit/s,eval=32rtt,slot=16rtt",
            "guarantee:target=2.5MB/s,eval=1s",
            "tput:target=10Mbit/s,eval=64rtt,k_min=1,kmax_cwnd=1,physical=100Mbit/s",
            "guarantee:target=20Mbit/s,abw=inline",
            "guarantee:target=20Mbit/s,abw=auto",
            "guarantee:target=20Mbit/s,physical=100Mbit/s,abw=inline",
            "guarantee:target=20Mbit/s,mode=paper",
            "guarantee:target=20Mbit/s,mode=floor,margin=0.2,overhead=0",
            "bbr",
            "bbr:startup_gain=2.885,drain_gain=0.35,loss_thresh=0.05,beta=0.5",
            "bbr:probe_rtt_interval=10s,min_rtt_window=20s,probe_rtt_duration=100ms",
            "bbr:cwnd_gain=2.5,down_gain=0.85,up_gain=1.5,up_cwnd_gain=3,probe_rtt_gain=0.75",
            "bbr:headroom=0,margin=0,iw=32,seed=18446744073709551615",
        ] {
            let spec: ControllerSpec = s.parse().unwrap_or_else(|e| panic!("{s}: {e}"));
            let printed = spec.to_string();
            assert_eq!(printed.parse::<ControllerSpec>().unwrap(), spec, "{s} -> {printed}");
        }
        assert_eq!("cubic:beta=0.7".parse::<ControllerSpec>().unwrap().to_string(), "cubic");
        assert_eq!(
            "bbr:beta=0.7,probe_rtt_interval=5000ms,seed=0"
                .parse::<ControllerSpec>()
                .unwrap()
                .to_string(),
            "bbr"
        );
        assert_eq!(
            "bbr:seed=3,probe_rtt_duration=0.25s,loss_thresh=0.05"
                .parse::<ControllerSpec>()
                .unwrap()
                .to_string(),
            "bbr:probe_rtt_duration=250ms,loss_thresh=0.05,seed=3"
        );
        match "bbr:probe_rtt_interval=2s,iw=4".parse::<ControllerSpec>().unwrap() {
            ControllerSpec::Bbr(c) => {
                assert_eq!(c.probe_rtt_interval, std::time::Duration::from_secs(2));
                assert_eq!(c.initial_window, Some(4));
                assert_eq!(c.beta, BbrConfig::default().beta);
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            "newreno:lw=2,iw=2".parse::<ControllerSpec>().unwrap().to_string(),
            "newreno:iw=2"
        );
        assert_eq!(
            "newreno:iw=2,lw=1".parse::<ControllerSpec>().unwrap(),
            ControllerSpec::NewReno(NewRenoConfig::ns2())
        );
        let guarantee = |s: &str| s.parse::<ControllerSpec>().unwrap().to_string();
        assert_eq!(
            guarantee("guarantee:target=20Mbit/s,abw=auto"),
            "guarantee:target=20Mbit/s"
        );
        assert_eq!(
            guarantee("guarantee:abw=inline,target=20Mbit/s"),
            "guarantee:target=20Mbit/s,abw=inline"
        );
        match "guarantee:target=1Mbit/s,abw=inline".parse::<ControllerSpec>().unwrap() {
            ControllerSpec::Guarantee(c) => assert_eq!(c.abw, AbwSource::Inline),
            other => panic!("{other:?}"),
        }
        assert_eq!(GuaranteeConfig::new(Rate::from_mbit_per_sec(1)).abw, AbwSource::Auto);
        assert_eq!(
            "vegas:alpha=1".parse::<ControllerSpec>().unwrap().to_string(),
            "vegas:alpha=1"
        );
    }

    #[test]
    fn errors_name_the_bad_part() {
        let cases = [
            ("bbr2", "unknown controller `bbr2`"),
            ("bbr:gain=2", "unknown parameter `gain` for bbr (known: startup_gain,"),
            ("bbr:beta=0", "beta: 0 must be in (0, 1]"),
            ("bbr:beta=x", "beta: `x` is not a number"),
            ("bbr:loss_thresh=1", "loss_thresh: 1 must be in (0, 1)"),
            ("bbr:startup_gain=0.9", "startup_gain: 0.9 must be in [1, 100]"),
            ("bbr:up_gain=inf", "up_gain: `inf` is not finite"),
            ("bbr:drain_gain=2", "drain_gain: 2 must be in (0, 1]"),
            ("bbr:headroom=1", "headroom: 1 must be in [0, 1)"),
            ("bbr:margin=100", "margin: 100 must be in [0, 100) percent"),
            (
                "bbr:probe_rtt_interval=5",
                "probe_rtt_interval: invalid duration `5`: missing unit",
            ),
            ("bbr:probe_rtt_duration=0s", "probe_rtt_duration: must be positive"),
            (
                "bbr:probe_rtt_interval=20s",
                "min_rtt_window: 10s must not be shorter than probe_rtt_interval 20s",
            ),
            ("bbr:iw=0", "iw: 0 packets is not in"),
            ("bbr:seed=-1", "seed: `-1` is not a whole number"),
            (
                "newreno:x=1",
                "unknown parameter `x` for newreno (known: iw, lw, count)",
            ),
            ("newreno:count=segments", "count: `segments` is not bytes or acks"),
            ("newreno:iw=0", "iw: 0 packets is not in"),
            ("newreno:lw=1.5", "lw: `1.5` is not a whole number of packets"),
            ("cubic:gamma=1", "unknown parameter `gamma` for cubic"),
            ("cubic:beta", "`beta` is not key=value"),
            ("cubic:beta=1.5", "beta"),
            ("cubic:beta=0.5,beta=0.6", "given twice"),
            ("fixed", "fixed needs rate="),
            ("fixed:rate=20", "rate: invalid rate `20`"),
            ("guarantee:eval=32rtt", "guarantee needs target="),
            ("guarantee:target=1Mbit/s,slot=3rtt", "slot"),
            ("guarantee:target=1Mbit/s,eval=32rtt,slot=64rtt", "slot"),
            ("guarantee:target=1Mbit/s,eval=soon", "eval"),
            ("vegas:alpha=5,beta=4", "alpha"),
            ("ctcp:k=nan", "k:"),
            (
                "guarantee:target=1Mbit/s,abw=oracle",
                "abw: `oracle` is not a bandwidth source",
            ),
            ("guarantee:target=1Mbit/s,mode=strict", "mode: `strict` is not a mode"),
            ("guarantee:target=1Mbit/s,margin=2", "margin: 2 must be in [0, 1]"),
            (
                "guarantee:target=1Mbit/s,overhead=-1",
                "overhead: `-1` is not a whole number",
            ),
            (
                "guarantee:target=1Mbit/s,overhead=1500",
                "overhead: 1500 bytes must be below",
            ),
        ];
        for (s, want) in cases {
            let e = s.parse::<ControllerSpec>().unwrap_err().to_string();
            assert!(e.contains(want), "{s}: got `{e}`, want `{want}`");
            assert!(e.contains(&format!("`{s}`")), "{e}");
        }
    }

    #[test]
    fn errors_are_typed() {
        let kind = |s: &str| s.parse::<ControllerSpec>().unwrap_err().kind().clone();
        assert_eq!(kind("hybla"), SpecErrorKind::UnknownController { name: "hybla".into() });
        assert_eq!(kind("cubic:beta"), SpecErrorKind::NotKeyValue { item: "beta".into() });
        assert_eq!(
            kind("cubic:gain=2"),
            SpecErrorKind::UnknownParameter {
                controller: "cubic",
                key: "gain".into()
            }
        );
        assert_eq!(
            kind("cubic:c=1,c=2"),
            SpecErrorKind::DuplicateParameter { key: "c".into() }
        );
        assert_eq!(
            kind("fixed"),
            SpecErrorKind::MissingParameter {
                controller: "fixed",
                key: "rate"
            }
        );
        match kind("vegas:gamma=x") {
            SpecErrorKind::BadValue { key, value, .. } => assert_eq!((key, value.as_str()), ("gamma", "x")),
            other => panic!("{other:?}"),
        }
        match kind("ctcp:k=2") {
            SpecErrorKind::Invalid(e) => assert_eq!((e.controller(), e.key()), ("ctcp", "k")),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn registry_names_every_spec() {
        for info in registry() {
            let needs: Vec<String> = info
                .params
                .iter()
                .filter(|p| p.default.is_none())
                .map(|p| format!("{}={}", p.name, if p.unit == "rate" { "1Mbit/s" } else { "1" }))
                .collect();
            let s = if needs.is_empty() {
                info.name.to_owned()
            } else {
                format!("{}:{}", info.name, needs.join(","))
            };
            let spec: ControllerSpec = s.parse().unwrap();
            assert_eq!(spec.name(), info.name);
        }
    }
}
