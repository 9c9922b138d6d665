//! Live transfers through faults, the bench's side: the list of faults, the
//! runner and the table are [`tput_lab::live::faults`], shared with the relay's
//! tests (which run the same list at toy size, `Options::toy`); this bench
//! runs it at full size ([`Options::full`]), selects faults and repeats
//! them, and counts how many runs of each ended as expected.

use std::collections::BTreeMap;

pub use tput_lab::live::faults::{DEAD_PATH_SLACK, Evidence, Fault, Options, Row, faults, run, table};

/// The faults whose name contains one of the `;`-separated parts of
/// `filter` (case-insensitive), in table order; all of them without one.
pub fn select(all: Vec<Fault>, filter: Option<&str>) -> Vec<Fault> {
    let Some(filter) = filter else { return all };
    let parts: Vec<String> = filter
        .split(';')
        .map(|p| p.trim().to_lowercase())
        .filter(|p| !p.is_empty())
        .collect();
    all.into_iter()
        .filter(|f| parts.iter().any(|p| f.name.to_lowercase().contains(p)))
        .collect()
}

/// One line per fault and direction: how many of its runs ended as
/// expected, and the range of their times.
pub fn summary(rows: &[Row]) -> String {
    let mut by: BTreeMap<(String, String), (usize, usize, f64, f64)> = BTreeMap::new();
    let mut order = Vec::new();
    for r in rows {
        let key = (r.fault.clone(), format!("{:?}", r.direction));
        if !by.contains_key(&key) {
            order.push(key.clone());
        }
        let e = by.entry(key).or_insert((0, 0, f64::INFINITY, 0.0));
        e.0 += usize::from(r.as_expected());
        e.1 += 1;
        e.2 = e.2.min(r.secs);
        e.3 = e.3.max(r.secs);
    }
    let mut s = String::from("| fault | direction | as expected | time (s), min-max |\n|---|---|---|---|\n");
    for key in order {
        let (ok, n, lo, hi) = by[&key];
        s += &format!("| {} | {} | {ok} of {n} | {lo:.1}-{hi:.1} |\n", key.0, key.1);
    }
    s
}
