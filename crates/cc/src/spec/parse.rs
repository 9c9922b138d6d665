//! Parsing a spec string into a [`ControllerSpec`].

use std::str::FromStr;

use crate::bbr::BbrConfig;
use crate::compound::CompoundConfig;
use crate::cubic::CubicConfig;
use crate::eval_slot::EvalSlot;
use crate::fixed::FixedConfig;
use crate::guarantee::{AbwSource, GuaranteeConfig, GuaranteeMode};
use crate::newreno::NewRenoConfig;
use crate::units::{Rate, parse_duration};
use crate::vegas::VegasConfig;

use super::ControllerSpec;
use super::error::{SpecError, SpecErrorKind};
use super::registry::info;

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
            if let Some(v) = get("hystart") {
                c.hystart = parse_bool("hystart", v)?;
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
            if let Some(v) = get("hystart") {
                c.hystart = parse_bool("hystart", v)?;
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
