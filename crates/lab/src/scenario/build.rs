//! The simulated network of a scenario.

use tput_netsim::{Addr, Chain, Dumbbell, DumbbellConfig, LinkConfig, LinkId, ParkingLot, ParkingLotPair, Simulator};

use super::schema::{LinkSpec, Scenario, TopologySpec};
use super::validate::link_config;
use crate::Error;

/// Endpoints of every flow and the links to watch.
pub(super) struct Net {
    pub(super) sim: Simulator,
    pub(super) pairs: Vec<(Addr, Addr)>,
    /// The forward links between the routers, in path order (a dumbbell's
    /// bottleneck, a chain's or a parking lot's hops): the candidates for
    /// the headline link, each with per-hop counters in the results.
    pub(super) hops: Vec<LinkId>,
    /// The link the bandwidth oracle watches: the hop the scenario names,
    /// else the first.
    pub(super) oracle_link: LinkId,
}

/// The access links of each flow: its group's `access`, else `default`
/// (`topology.access`).
fn per_flow_access(s: &Scenario, default: &LinkSpec) -> Result<Vec<LinkConfig>, Error> {
    let mut out = Vec::new();
    for (i, g) in s.flows.iter().enumerate() {
        let c = match &g.access {
            Some(a) => link_config(a, &format!("flows[{i}].access"))?,
            None => link_config(default, "topology.access")?,
        };
        out.extend(std::iter::repeat_n(c, g.count as usize));
    }
    Ok(out)
}

fn hop_configs(hops: &[LinkSpec]) -> Result<Vec<LinkConfig>, Error> {
    hops.iter()
        .enumerate()
        .map(|(i, h)| link_config(h, &format!("topology.hops[{i}]")))
        .collect()
}

pub(super) fn build(s: &Scenario, flows: usize) -> Result<Net, Error> {
    let named = |hops: &[LinkId]| hops[s.topology.headline_hop().unwrap_or(0).min(hops.len() - 1)];
    match &s.topology {
        TopologySpec::Dumbbell {
            bottleneck,
            access,
            reverse_bottleneck,
        } => {
            let config = DumbbellConfig::new(
                flows,
                link_config(access, "topology.access")?,
                link_config(bottleneck, "topology.bottleneck")?,
            )
            .with_reverse_bottleneck(
                reverse_bottleneck
                    .as_ref()
                    .map(|r| link_config(r, "topology.reverse_bottleneck"))
                    .transpose()?,
            );
            let d = Dumbbell::build_with_access(&config, &per_flow_access(s, access)?)
                .map_err(|e| Error::Invalid(e.to_string()))?;
            let pairs = d
                .senders
                .iter()
                .zip(&d.receivers)
                .map(|(&a, &b)| (Addr::new(a, 5000), Addr::new(b, 4433)));
            Ok(Net {
                pairs: pairs.collect(),
                hops: vec![d.bottleneck],
                oracle_link: d.bottleneck,
                sim: Simulator::new(d.topology, s.seed),
            })
        }
        TopologySpec::Chain { hops, .. } => {
            let c = Chain::build(&hop_configs(hops)?).map_err(|e| Error::Invalid(e.to_string()))?;
            let (a, b) = (c.nodes[0], *c.nodes.last().expect("a chain has nodes"));
            let pairs = (0..flows).map(|i| (Addr::new(a, 5000 + i as u16), Addr::new(b, 4433 + i as u16)));
            Ok(Net {
                pairs: pairs.collect(),
                oracle_link: named(&c.forward),
                hops: c.forward,
                sim: Simulator::new(c.topology, s.seed),
            })
        }
        TopologySpec::ParkingLot { hops, access, .. } => {
            let access = per_flow_access(s, access)?;
            let mut pairs = Vec::with_capacity(flows);
            let mut k = 0;
            for g in &s.flows {
                let range = g.hop_range(hops.len());
                for _ in 0..g.count {
                    pairs.push(ParkingLotPair::new(*range.start(), *range.end(), access[k].clone()));
                    k += 1;
                }
            }
            let p = ParkingLot::build(&hop_configs(hops)?, &pairs).map_err(|e| Error::Invalid(e.to_string()))?;
            let pairs = p
                .senders
                .iter()
                .zip(&p.receivers)
                .map(|(&a, &b)| (Addr::new(a, 5000), Addr::new(b, 4433)));
            Ok(Net {
                pairs: pairs.collect(),
                oracle_link: named(&p.forward),
                hops: p.forward,
                sim: Simulator::new(p.topology, s.seed),
            })
        }
    }
}
