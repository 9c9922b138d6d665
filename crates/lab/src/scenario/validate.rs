//! Checking a scenario before it runs; errors name the bad value.

use std::time::Duration;

use tput_cc::units::format_duration;
use tput_netsim::{CutMode, CutOff, DeliveryTrace, LinkConfig, QueueLimit, RandomLoss, RateStep, SimTime};

use tput_transport::{Direction, EvalSlot};

use super::schema::{CutModeSpec, LinkSpec, Scenario, TopologySpec, Transport};
use crate::Error;

/// The simulator's rate type for a rate of the scenario's.
fn sim_rate(r: tput_cc::units::Rate) -> tput_netsim::Rate {
    tput_netsim::Rate::from_bits_per_sec(r.bits_per_sec())
}

/// The simulator's link for `l`, validated; errors name `what`.
pub fn link_config(l: &LinkSpec, what: &str) -> Result<LinkConfig, Error> {
    let bad = |why: String| Error::Invalid(format!("{what}: {why}"));
    let mut c = LinkConfig::new(sim_rate(l.rate), l.delay);
    c = c.with_queue(match (l.queue_packets, l.queue_bytes) {
        (Some(_), Some(_)) => return Err(bad("give queue_packets or queue_bytes, not both".into())),
        (Some(p), None) => QueueLimit::Packets(p as _),
        (None, Some(b)) => QueueLimit::Bytes(b as _),
        (None, None) => QueueLimit::Packets(1000),
    });
    if let Some(o) = l.overhead_bytes {
        c = c.with_overhead(o);
    }
    if let Some(cut) = &l.cutoff {
        let mode = match cut.mode {
            CutModeSpec::Drop => CutMode::Drop,
            CutModeSpec::Hold => CutMode::Hold,
            CutModeSpec::HoldAbort => CutMode::HoldAbort,
            CutModeSpec::Pause => CutMode::Pause,
        };
        let mut co = CutOff::new(cut.period, cut.connected, mode);
        if let Some(p) = cut.phase {
            co = co.with_phase(p);
        }
        if let Some(lead) = cut.pause_lead {
            co = co.with_pause_lead(lead);
        }
        c = c.with_cutoff(co);
    }
    if !l.rate_schedule.is_empty() {
        c = c.with_rate_schedule(
            l.rate_schedule
                .iter()
                .map(|r| RateStep::new(SimTime::from_duration(r.at), sim_rate(r.rate)))
                .collect(),
        );
    }
    match (l.loss, l.ber) {
        (Some(_), Some(_)) => return Err(bad("give loss or ber, not both".into())),
        (Some(p), None) => c = c.with_loss(RandomLoss::PacketLoss(p)),
        (None, Some(b)) => c = c.with_loss(RandomLoss::BitErrorRate(b)),
        (None, None) => {}
    }
    if let Some(path) = &l.trace {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Invalid(format!("{what}.trace: cannot read {}: {e}", path.display())))?;
        let trace = DeliveryTrace::parse(&text)
            .map_err(|e| Error::Invalid(format!("{what}.trace: {}: {e}", path.display())))?;
        c = c.with_trace(trace);
    }
    if let Some(q) = &l.queue {
        let d = q.discipline().map_err(|e| Error::Invalid(format!("{what}.{e}")))?;
        c = c.with_discipline(d);
    }
    c.validate().map_err(|e| match e {
        tput_netsim::Error::BadQueueParameter { key, reason } => {
            Error::Invalid(format!("{what}.queue.{key}: {reason}"))
        }
        e => bad(e.to_string()),
    })?;
    Ok(c)
}

/// Check a scenario without running it; the error names the bad value.
pub fn validate(s: &Scenario) -> Result<(), Error> {
    if s.duration.is_zero() {
        return Err(Error::Invalid("duration must be positive".into()));
    }
    if s.interval.is_zero() {
        return Err(Error::Invalid("interval must be positive".into()));
    }
    if s.mtu < 1200 {
        return Err(Error::Invalid(format!("mtu {} is below QUIC's minimum of 1200", s.mtu)));
    }
    if s.flows.is_empty() {
        return Err(Error::Invalid("no flows".into()));
    }
    for (i, g) in s.flows.iter().enumerate() {
        let what = format!("flows[{i}]");
        if g.count == 0 {
            return Err(Error::Invalid(format!("{what}: count must be at least 1")));
        }
        let start = g.start.unwrap_or_default();
        let stop = g.stop.unwrap_or(s.duration);
        if stop <= start + g.effective_start_jitter() {
            return Err(Error::Invalid(format!(
                "{what}: stop must come after start + start_jitter ({} + {})",
                format_duration(start),
                format_duration(g.effective_start_jitter())
            )));
        }
        if stop > s.duration {
            return Err(Error::Invalid(format!("{what}: stop is after the scenario's duration")));
        }
        if g.aggregate && matches!(g.eval_slot, Some(EvalSlot::Rtts(_))) {
            // Each flow measures its own handshake RTT: RTT-based slots differ
            // in length between flows and could not be summed slot by slot.
            return Err(Error::Invalid(format!(
                "{what}: an aggregate group needs eval_slot as a duration (e.g. \"1s\"), not in RTTs"
            )));
        }
        if g.aggregate {
            // The members divide the oracle's available bandwidth among
            // themselves; other controllers, or a guarantee estimating A
            // itself, would not join (tput_cc::QuinnFactory::with_aggregate).
            match &g.cc {
                tput_cc::ControllerSpec::Guarantee(c) if c.abw == tput_cc::AbwSource::Inline => {
                    return Err(Error::Invalid(format!(
                        "{what}: aggregate needs abw=auto: with abw=inline each member's own estimate of A already counts the others"
                    )));
                }
                tput_cc::ControllerSpec::Guarantee(_) => {}
                other => {
                    return Err(Error::Invalid(format!(
                        "{what}: aggregate coordinates guarantee controllers, not `{other}`"
                    )));
                }
            }
        }
        if g.aggregate && g.files.is_some() {
            return Err(Error::Invalid(format!(
                "{what}: aggregate and files exclude each other"
            )));
        }
        if let Some(b) = g.app_buffers() {
            b.check().map_err(|e| Error::Invalid(format!("{what}.buffers: {e}")))?;
            if g.transport == Transport::Tcp {
                return Err(Error::Invalid(format!(
                    "{what}.buffers: QUIC only (the TCP model's sender always has data)"
                )));
            }
            if g.direction == Some(Direction::Download) {
                return Err(Error::Invalid(format!("{what}.buffers: uploads only")));
            }
        } else if g.buffer_size.is_some() {
            return Err(Error::Invalid(format!("{what}.buffer_size: needs buffers")));
        }
        if g.receive_window == Some(0) {
            return Err(Error::Invalid(format!("{what}.receive_window: must be positive")));
        }
        if g.receive_window.is_some() && g.transport == Transport::Tcp {
            return Err(Error::Invalid(format!(
                "{what}.receive_window: QUIC only (use tcp.receive_window)"
            )));
        }
        if g.quinn_paced && !(g.quinn && g.quinn_cc() == Some(tput_cc::QuinnCc::BbrPaced)) {
            return Err(Error::Invalid(format!(
                "{what}.quinn_paced: needs quinn = true and cc = \"bbr\" (quinn-proto's BBR), not `{}`{}",
                g.cc,
                if g.quinn { "" } else { " without quinn" }
            )));
        }
        if g.quinn {
            let refuse = |why: &str| Err(Error::Invalid(format!("{what}.quinn: {why}")));
            if g.quinn_cc().is_none() {
                return refuse(&format!(
                    "quinn-proto has its own newreno, cubic and bbr, with no parameters, not `{}`",
                    g.cc
                ));
            }
            if g.transport == Transport::Tcp {
                return refuse("QUIC only");
            }
            if g.direction == Some(Direction::Download) {
                return refuse("uploads only");
            }
        }
        if g.ecn && g.transport == Transport::Tcp {
            return Err(Error::Invalid(format!(
                "{what}.ecn: QUIC only; the TCP model's ECN is tcp = {{ ecn = true }}"
            )));
        }
        if g.tcp.is_some() && g.transport != Transport::Tcp {
            return Err(Error::Invalid(format!("{what}.tcp: needs transport = \"tcp\"")));
        }
        if g.transport == Transport::Tcp {
            let refuse = |key: &str, why: &str| Err(Error::Invalid(format!("{what}.{key}: {why}")));
            if g.direction == Some(Direction::Download) {
                return refuse("direction", "transport = \"tcp\" runs uploads only");
            }
            if g.rate_limit.is_some() {
                return refuse("rate_limit", "not supported with transport = \"tcp\" yet");
            }
            if matches!(g.eval_slot, Some(EvalSlot::Rtts(_))) {
                return refuse(
                    "eval_slot",
                    "RTT-based slots use QUIC's handshake RTT; give a duration with transport = \"tcp\"",
                );
            }
            let spec = g.tcp.clone().unwrap_or_default();
            let bad = |e: String| Error::Invalid(format!("{what}.tcp.{e}"));
            spec.config().map_err(bad)?;
            spec.controller(&g.cc).map_err(bad)?;
        }
        if let Some(f) = &g.files {
            if g.bytes.is_some() {
                return Err(Error::Invalid(format!("{what}: files and bytes exclude each other")));
            }
            if f.mean_gap.is_zero() || f.mean_size == 0 || f.shape.is_nan() || f.shape <= 1.0 {
                return Err(Error::Invalid(format!(
                    "{what}.files: mean_gap and mean_size must be positive, shape > 1"
                )));
            }
            if f.drain.is_some_and(|d| d > MAX_FILES_DRAIN) {
                return Err(Error::Invalid(format!(
                    "{what}.files.drain: {} is longer than the limit of 1h",
                    format_duration(f.drain.unwrap_or_default())
                )));
            }
        }
    }
    match &s.topology {
        TopologySpec::Dumbbell {
            bottleneck,
            access,
            reverse_bottleneck,
        } => {
            link_config(bottleneck, "topology.bottleneck")?;
            link_config(access, "topology.access")?;
            if let Some(r) = reverse_bottleneck {
                link_config(r, "topology.reverse_bottleneck")?;
            }
        }
        TopologySpec::Chain { hops, .. } => {
            if hops.is_empty() {
                return Err(Error::Invalid("topology.hops: a chain needs at least one link".into()));
            }
        }
        TopologySpec::ParkingLot { hops, access, .. } => {
            if hops.is_empty() {
                return Err(Error::Invalid(
                    "topology.hops: a parking lot needs at least one link".into(),
                ));
            }
            link_config(access, "topology.access")?;
        }
    }
    let hops = s.topology.hops();
    if !matches!(s.topology, TopologySpec::Dumbbell { .. }) {
        for (i, h) in hops.iter().enumerate() {
            link_config(h, &format!("topology.hops[{i}]"))?;
        }
    }
    if let Some(h) = s.topology.headline_hop().filter(|&h| h >= hops.len()) {
        return Err(Error::Invalid(format!(
            "topology.headline_hop: {h} is past the last hop ({})",
            hops.len() - 1
        )));
    }
    for (i, g) in s.flows.iter().enumerate() {
        let what = format!("flows[{i}]");
        if let Some(a) = &g.access {
            if matches!(s.topology, TopologySpec::Chain { .. }) {
                return Err(Error::Invalid(format!(
                    "{what}.access: a chain's flows share its end hosts; per-group access links need a dumbbell or a parking lot"
                )));
            }
            link_config(a, &format!("{what}.access"))?;
        }
        if !matches!(s.topology, TopologySpec::ParkingLot { .. }) {
            for (key, v) in [("first_hop", g.first_hop), ("last_hop", g.last_hop)] {
                if v.is_some() {
                    return Err(Error::Invalid(format!(
                        "{what}.{key}: only flows of a parking lot choose their hops"
                    )));
                }
            }
            continue;
        }
        for (key, v) in [("first_hop", g.first_hop), ("last_hop", g.last_hop)] {
            if let Some(h) = v.filter(|&h| h >= hops.len()) {
                return Err(Error::Invalid(format!(
                    "{what}.{key}: {h} is past the last hop ({})",
                    hops.len() - 1
                )));
            }
        }
        let range = g.hop_range(hops.len());
        if range.start() > range.end() {
            return Err(Error::Invalid(format!(
                "{what}.first_hop: {} comes after last_hop {}",
                range.start(),
                range.end()
            )));
        }
    }
    schedules_within(s)
}

/// A `rate_schedule` step at or after the scenario's end would never take
/// effect: an error naming it rather than a silent no-op.
fn schedules_within(s: &Scenario) -> Result<(), Error> {
    let mut links: Vec<(String, &LinkSpec)> = match &s.topology {
        TopologySpec::Dumbbell {
            bottleneck,
            access,
            reverse_bottleneck,
        } => [
            ("topology.bottleneck", Some(bottleneck)),
            ("topology.access", Some(access)),
            ("topology.reverse_bottleneck", reverse_bottleneck.as_ref()),
        ]
        .into_iter()
        .filter_map(|(w, l)| l.map(|l| (w.to_string(), l)))
        .collect(),
        TopologySpec::Chain { hops, .. } => hops
            .iter()
            .enumerate()
            .map(|(i, h)| (format!("topology.hops[{i}]"), h))
            .collect(),
        TopologySpec::ParkingLot { hops, access, .. } => hops
            .iter()
            .enumerate()
            .map(|(i, h)| (format!("topology.hops[{i}]"), h))
            .chain([("topology.access".to_string(), access)])
            .collect(),
    };
    links.extend(
        s.flows
            .iter()
            .enumerate()
            .filter_map(|(i, g)| g.access.as_ref().map(|a| (format!("flows[{i}].access"), a))),
    );
    for (what, l) in links {
        if let Some((i, r)) = l.rate_schedule.iter().enumerate().find(|(_, r)| r.at >= s.duration) {
            return Err(Error::Invalid(format!(
                "{what}.rate_schedule[{i}]: at = {} is not before the scenario's end ({})",
                format_duration(r.at),
                format_duration(s.duration)
            )));
        }
    }
    Ok(())
}

/// Longest [`FilesSpec::drain`].
const MAX_FILES_DRAIN: Duration = Duration::from_secs(3600);
