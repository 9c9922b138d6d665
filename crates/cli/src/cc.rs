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
    let default_of = |d: Option<&str>| d.map_or("required".to_string(), |d| format!("default {d}"));
    // Columns as wide as their longest entry over the whole registry.
    let params = || registry().iter().flat_map(|c| c.params.iter());
    let name_w = params().map(|p| p.name.len()).max().unwrap_or(0);
    let unit_w = params().map(|p| p.unit.len()).max().unwrap_or(0);
    let default_w = params().map(|p| default_of(p.default).len()).max().unwrap_or(0);
    for c in registry() {
        let aliases = if c.aliases.is_empty() {
            String::new()
        } else {
            format!(" (also: {})", c.aliases.join(", "))
        };
        outln!("{}{aliases}\n    {}", c.name, c.summary);
        for p in c.params {
            let default = default_of(p.default);
            outln!(
                "    {:<name_w$} {:<unit_w$} {:<default_w$} {}",
                p.name,
                p.unit,
                default,
                p.doc
            );
        }
        outln!();
    }
    outln!("Spec syntax: name[:key=value,...], e.g. vegas:alpha=2,beta=4 or guarantee:target=20Mbit/s,eval=32rtt");
    Ok(true)
}
