//! The simulated network of a scenario.

use tput_netsim::{Addr, Chain, Dumbbell, DumbbellConfig, LinkConfig, LinkId, Simulator};

use super::schema::{Scenario, TopologySpec};
use super::validate::link_config;
use crate::Error;

/// Endpoints of every flow and the link to watch.
pub(super) struct Net {
    pub(super) sim: Simulator,
    pub(super) pairs: Vec<(Addr, Addr)>,
    pub(super) bottleneck: LinkId,
}

pub(super) fn build(s: &Scenario, flows: usize) -> Result<Net, Error> {
    match &s.topology {
        TopologySpec::Dumbbell {
            bottleneck,
            access,
            reverse_bottleneck,
        } => {
            let d = Dumbbell::build(&DumbbellConfig {
                pairs: flows,
                access: link_config(access, "topology.access")?,
                bottleneck: link_config(bottleneck, "topology.bottleneck")?,
                reverse_bottleneck: reverse_bottleneck
                    .as_ref()
                    .map(|r| link_config(r, "topology.reverse_bottleneck"))
                    .transpose()?,
            })
            .map_err(|e| Error::Invalid(e.to_string()))?;
            let pairs = d
                .senders
                .iter()
                .zip(&d.receivers)
                .map(|(&a, &b)| (Addr::new(a, 5000), Addr::new(b, 4433)));
            Ok(Net {
                pairs: pairs.collect(),
                bottleneck: d.bottleneck,
                sim: Simulator::new(d.topology, s.seed),
            })
        }
        TopologySpec::Chain { hops } => {
            let cfgs: Vec<LinkConfig> = hops
                .iter()
                .enumerate()
                .map(|(i, h)| link_config(h, &format!("topology.hops[{i}]")))
                .collect::<Result<_, _>>()?;
            let c = Chain::build(&cfgs).map_err(|e| Error::Invalid(e.to_string()))?;
            let (a, b) = (c.nodes[0], *c.nodes.last().expect("a chain has nodes"));
            let pairs = (0..flows).map(|i| (Addr::new(a, 5000 + i as u16), Addr::new(b, 4433 + i as u16)));
            Ok(Net {
                pairs: pairs.collect(),
                bottleneck: c.forward[0],
                sim: Simulator::new(c.topology, s.seed),
            })
        }
    }
}
