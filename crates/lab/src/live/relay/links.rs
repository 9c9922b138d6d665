//! The relay's links as text: `key=value` lists (`tputctl relay --forward`)
//! and the relay configuration file.

use serde::{Deserialize, Serialize};
use tput_netsim::LinkConfig;

use crate::Error;
use crate::scenario::{LinkSpec, link_config};

/// The keys of a link list, with the kind of value each takes.
const KEYS: &[(&str, Kind)] = &[
    ("rate", Kind::Text),
    ("delay", Kind::Text),
    ("queue_packets", Kind::Int),
    ("queue_bytes", Kind::Text),
    ("overhead_bytes", Kind::Int),
    ("loss", Kind::Float),
    ("ber", Kind::Float),
    ("cutoff.period", Kind::Text),
    ("cutoff.connected", Kind::Float),
    ("cutoff.phase", Kind::Text),
    ("cutoff.mode", Kind::Text),
    ("cutoff.pause_lead", Kind::Text),
    ("rate_schedule", Kind::Schedule),
    ("trace", Kind::Text),
    ("queue.kind", Kind::Text),
    ("queue.target", Kind::Text),
    ("queue.interval", Kind::Text),
    ("queue.ecn", Kind::Bool),
    ("queue.quantum", Kind::Int),
    ("queue.flows", Kind::Int),
    ("queue.min_th", Kind::Float),
    ("queue.max_th", Kind::Float),
    ("queue.max_p", Kind::Float),
    ("queue.weight", Kind::Float),
    ("queue.gentle", Kind::Bool),
    ("queue.bytes", Kind::Bool),
    ("queue.mean_packet", Kind::Int),
    ("queue.wait", Kind::Bool),
];

#[derive(Clone, Copy)]
enum Kind {
    Text,
    Int,
    Float,
    Bool,
    Schedule,
}

/// Parses a link given as `key=value` pairs separated by commas, with the
/// keys of a scenario's link table: `rate`, `delay`, `queue_packets` or
/// `queue_bytes`, `overhead_bytes`, `loss` or `ber`, `cutoff.period`,
/// `cutoff.connected`, `cutoff.mode`, `cutoff.phase`, `cutoff.pause_lead`,
/// `rate_schedule=AT:RATE;AT:RATE...` and `trace=FILE` (a Mahimahi
/// packet-delivery trace, relative to the current directory). Example:
/// `rate_schedule=AT:RATE;AT:RATE...`, and a queue discipline as
/// `aqm=KIND` (`drop_tail`, `codel`, `fq_codel`, `red`; the same as
/// `queue.kind=KIND`) with its parameters as `aqm.KEY=VALUE` (the keys of
/// the `queue` table: `aqm.target=5ms`, `aqm.ecn=true`...). Example:
/// `rate=36.864Mbit/s,delay=50ms,queue_bytes=64KiB,ber=1e-8`. `what` names
/// the list in errors (`--forward`), which are one line naming the bad key
/// or value.
pub fn parse_link_list(text: &str, what: &str) -> Result<LinkSpec, Error> {
    let bad = |m: String| Error::Invalid(format!("{what}: {m}"));
    let mut table = toml::Table::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((key, value)) = item.split_once('=') else {
            return Err(bad(format!("`{item}` is not key=value")));
        };
        let (key, value) = (key.trim(), value.trim());
        // `aqm=KIND` and `aqm.KEY` are the `queue` table's `kind` and `KEY`.
        let key = match key {
            "aqm" => "queue.kind".to_string(),
            k => match k.strip_prefix("aqm.") {
                Some(rest) => format!("queue.{rest}"),
                None => k.to_string(),
            },
        };
        let key = key.as_str();
        let Some(&(_, kind)) = KEYS.iter().find(|(k, _)| *k == key) else {
            let keys: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
            return Err(bad(format!(
                "unknown key `{key}` (expected one of {})",
                keys.join(", ")
            )));
        };
        let v = match kind {
            Kind::Text => toml::Value::String(value.to_string()),
            Kind::Int => toml::Value::Integer(
                value
                    .parse()
                    .map_err(|_| bad(format!("`{key}`: `{value}` is not a whole number")))?,
            ),
            Kind::Float => toml::Value::Float(
                value
                    .parse()
                    .map_err(|_| bad(format!("`{key}`: `{value}` is not a number")))?,
            ),
            Kind::Bool => toml::Value::Boolean(
                value
                    .parse()
                    .map_err(|_| bad(format!("`{key}`: `{value}` is not true or false")))?,
            ),
            Kind::Schedule => {
                let mut steps = Vec::new();
                for step in value.split(';').map(str::trim).filter(|s| !s.is_empty()) {
                    let Some((at, rate)) = step.split_once(':') else {
                        return Err(bad(format!("`{key}`: `{step}` is not AT:RATE")));
                    };
                    let mut t = toml::Table::new();
                    t.insert("at".into(), toml::Value::String(at.trim().into()));
                    t.insert("rate".into(), toml::Value::String(rate.trim().into()));
                    steps.push(toml::Value::Table(t));
                }
                toml::Value::Array(steps)
            }
        };
        let slot = match key.split_once('.') {
            Some((outer, inner)) => {
                let sub = table
                    .entry(outer)
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                let toml::Value::Table(sub) = sub else {
                    return Err(bad(format!("`{outer}` given twice")));
                };
                sub.entry(inner)
            }
            None => table.entry(key),
        };
        if let toml::map::Entry::Occupied(_) = slot {
            return Err(bad(format!("`{key}` given twice")));
        }
        slot.or_insert(v);
    }
    let spec: LinkSpec = toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| bad(e.message().replace('\n', " ").trim().to_string()))?;
    link_config(&spec, what)?;
    Ok(spec)
}

/// A relay configuration file: `[forward]` and (optionally) `[reverse]`
/// link tables, with the keys of a scenario's link table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelayLinks {
    /// Clients to the server.
    pub forward: LinkSpec,
    /// The server to its clients; default: the forward link without its
    /// impairments (cut-off, rate schedule, loss), as a scenario's chain.
    #[serde(default)]
    pub reverse: Option<LinkSpec>,
}

impl RelayLinks {
    /// Reads a TOML file; the error is one line naming the file and line.
    pub fn from_toml_file(path: &std::path::Path) -> Result<Self, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Invalid(format!("cannot read {}: {e}", path.display())))?;
        let links: RelayLinks = toml::from_str(&text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start.min(text.len())].lines().count().max(1));
            let msg = e.message().replace('\n', " ").trim().to_string();
            match line {
                Some(l) => Error::Invalid(format!("{}:{l}: {msg}", path.display())),
                None => Error::Invalid(format!("{}: {msg}", path.display())),
            }
        })?;
        links.configs()?;
        Ok(links)
    }

    /// The two links' simulator configurations (forward, reverse).
    pub fn configs(&self) -> Result<(LinkConfig, LinkConfig), Error> {
        let forward = link_config(&self.forward, "forward")?;
        let reverse = match &self.reverse {
            Some(r) => link_config(r, "reverse")?,
            None => forward.without_impairments(),
        };
        Ok((forward, reverse))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn link_lists_parse_like_link_tables() {
        let s = parse_link_list(
            "rate=36.864Mbit/s, delay=50ms,queue_bytes=64KiB,ber=1e-8,\
             cutoff.period=10ms,cutoff.connected=0.5,cutoff.mode=drop,rate_schedule=1s:10Mbit/s;2s:20Mbit/s",
            "--forward",
        )
        .unwrap();
        assert_eq!(s.rate.bits_per_sec(), 36_864_000);
        assert_eq!(s.delay, Duration::from_millis(50));
        assert_eq!(s.queue_bytes, Some(64 * 1024));
        assert_eq!(s.ber, Some(1e-8));
        assert_eq!(s.rate_schedule.len(), 2);
        assert_eq!(s.rate_schedule[1].rate.bits_per_sec(), 20_000_000);
        let c = s.cutoff.unwrap();
        assert_eq!(c.period, Duration::from_millis(10));
        assert_eq!(c.connected, 0.5);
        // A queue discipline: `aqm=` and `aqm.KEY=` are the `queue` table.
        let s = parse_link_list(
            "rate=10Mbit/s,delay=5ms,aqm=fq_codel,aqm.target=2ms,aqm.ecn=false,aqm.quantum=300",
            "--forward",
        )
        .unwrap();
        let q = s.queue.clone().unwrap();
        assert_eq!(q.kind, crate::scenario::QueueKind::FqCodel);
        assert_eq!(
            (q.target, q.ecn, q.quantum),
            (Some(Duration::from_millis(2)), Some(false), Some(300))
        );
        let cfg = link_config(&s, "--forward").unwrap();
        assert_eq!(cfg.discipline.name(), "fq_codel");
    }

    /// `trace=FILE` gives the forward link the trace's opportunities; the
    /// default reverse link runs at `rate` without it.
    #[test]
    fn a_link_list_takes_a_delivery_trace() {
        let shipped =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/traces/constant-12mbit.trace");
        let list = format!("rate=20Mbit/s,delay=10ms,trace={}", shipped.display());
        let s = parse_link_list(&list, "--forward").unwrap();
        assert_eq!(s.trace.as_deref(), Some(shipped.as_path()));
        let (forward, reverse) = RelayLinks {
            forward: s,
            reverse: None,
        }
        .configs()
        .unwrap();
        assert_eq!(
            forward.trace.as_ref().map(|t| t.opportunities().to_vec()),
            Some(vec![1])
        );
        assert!(reverse.trace.is_none());
        let e = parse_link_list("rate=1Mbit/s,delay=1ms,trace=/nonexistent/x.trace", "--forward")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--forward.trace: cannot read /nonexistent/x.trace"),
            "{e}"
        );
    }

    #[test]
    fn bad_link_lists_name_the_key_or_value() {
        let e = |s: &str| parse_link_list(s, "--forward").unwrap_err().to_string();
        assert!(e("rate=1Mbit/s,delay=1ms,qeue=3").contains("unknown key `qeue`"));
        assert!(
            e("rate=10Mbits,delay=1ms").contains("10Mbits"),
            "{}",
            e("rate=10Mbits,delay=1ms")
        );
        assert!(e("rate=1Mbit/s,delay=1ms,loss=x").contains("`loss`: `x` is not a number"));
        assert!(
            e("rate=1Mbit/s,delay=1ms,loss=2").contains("probability"),
            "{}",
            e("rate=1Mbit/s,delay=1ms,loss=2")
        );
        assert!(e("rate=1Mbit/s").contains("delay"));
        assert!(e("rate=1Mbit/s,rate=2Mbit/s,delay=1ms").contains("`rate` given twice"));
        assert!(e("rate").contains("not key=value"));
        assert_eq!(
            e("rate=1Mbit/s,delay=1ms,aqm=red,aqm.target=5ms"),
            "--forward.queue.target: not a parameter of kind = \"red\""
        );
        assert!(e("rate=1Mbit/s,delay=1ms,aqm=pie").contains("pie"));
        assert!(e("rate=1Mbit/s,delay=1ms,aqm=codel,aqm.ecn=yes").contains("`queue.ecn`: `yes` is not true or false"));
        assert_eq!(
            e("rate=1Mbit/s,delay=1ms,aqm=red,aqm.max_p=2"),
            "--forward.queue.max_p: must be in (0, 1], got 2"
        );
        for msg in [e("rate=1Mbit/s,delay=1ms,qeue=3"), e("rate=10Mbits,delay=1ms")] {
            assert!(msg.starts_with("--forward: ") && !msg.contains('\n'), "{msg}");
        }
    }
}
