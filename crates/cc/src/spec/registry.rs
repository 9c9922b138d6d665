//! The [`registry`] of controllers: names, aliases and every parameter with
//! its unit, default and meaning.

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

/// HyStart++, a parameter of NewReno and CUBIC.
const HYSTART: ParamInfo = p(
    "hystart",
    "bool",
    Some("false"),
    "leave the initial slow start when the RTT grows, before the first loss (HyStart++, RFC 9406)",
);

pub(super) static REGISTRY: [ControllerInfo; 7] = [
    ControllerInfo {
        name: "newreno",
        aliases: &["reno"],
        summary: "NewReno: slow start, AIMD, one halving per round trip (RFC 9002 §7)",
        params: &[
            p(
                "iw",
                "packets",
                Some("RFC 9002"),
                "initial window (RFC 9002 §7.2: 10, at most 14720 bytes; ns-2's windowInit_ is 2)",
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
            HYSTART,
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
            HYSTART,
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

pub(super) fn info(name: &str) -> Option<&'static ControllerInfo> {
    REGISTRY.iter().find(|c| c.name == name || c.aliases.contains(&name))
}
