//! `tputctl cc`: the controller registry.

use clap::Subcommand;
use tput_cc::registry;

use crate::{Failure, outln};

#[derive(Subcommand)]
pub(crate) enum CcCmd {
    /// Every controller with its parameters, units and defaults.
    List,
}

pub(crate) fn run() -> Result<bool, Failure> {
    for c in registry() {
        let aliases = if c.aliases.is_empty() {
            String::new()
        } else {
            format!(" (also: {})", c.aliases.join(", "))
        };
        outln!("{}{aliases}\n    {}", c.name, c.summary);
        for p in c.params {
            let default = p.default.map_or("required".to_string(), |d| format!("default {d}"));
            outln!("    {:<17} {:<17} {:<20} {}", p.name, p.unit, default, p.doc);
        }
        outln!();
    }
    outln!("Spec syntax: name[:key=value,...], e.g. vegas:alpha=2,beta=4 or guarantee:target=20Mbit/s,eval=32rtt");
    Ok(true)
}
