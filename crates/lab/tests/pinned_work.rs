//! The simulator's work, pinned: every scenario shipped in `scenarios/`,
//! cut to its first seconds, gives the same trace hash, the same number of
//! link packets and the same number of simulator events as when the pins
//! below were taken.
//!
//! Speed work on the event loop, the hosts or the node must leave all three
//! unchanged: the hash says the packets took the same path at the same
//! nanoseconds, the event count says the simulator did the same amount of
//! work for them (an extra event per packet, say a timer re-armed once too
//! often, fails here deterministically where a timing test would only be
//! noisy). A change that is *meant* to alter behaviour updates the pins: the
//! failure message prints the new rows.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tput_lab::scenario::{RunOptions, Scenario, run_with};

/// Simulated seconds of each shipped scenario that are run (past the
/// latest start of a flow group, so that every group takes part).
const SECS: u64 = 3;

/// (scenario file stem, trace hash, link packets, events processed).
const PINS: &[(&str, &str, u64, u64)] = &[
    ("fq-codel-ecn", "24a873d755a8db74", 135840, 184664),
    ("guarantee-fq-codel", "68cd26af09a7b04a", 137710, 198911),
    ("guarantee-n30", "319e7b7ba61c0f89", 138364, 203911),
    ("lte-trace", "59d7383e27a26528", 12710, 18136),
    ("parking-lot", "8a7a2ba4327f2a49", 79999, 108394),
    ("rtt-fairness", "8ec33dd93496c189", 27275, 36934),
    ("seed000-fig4", "bcd32ec0703e734a", 538080, 750870),
    ("seed000-fig6-n30", "39f99c7d78df4fea", 136816, 198571),
    ("seed001-cutoff", "1ea333d754245242", 14684, 33791),
    ("seed002-buffers", "6b68673770c84e62", 36981, 52168),
    ("seed003-files", "607d37fe0c165d96", 65973, 91556),
];

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(stem: &str) -> (String, u64, u64) {
    let path = repo().join("scenarios").join(format!("{stem}.toml"));
    let mut s = Scenario::from_toml_file(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let last_start = s.flows.iter().filter_map(|g| g.start).max().unwrap_or_default();
    s.duration = s.duration.min(last_start + Duration::from_secs(SECS));
    for g in &mut s.flows {
        g.stop = g.stop.map(|t| t.min(s.duration));
    }
    let options = RunOptions {
        no_cc_trace: true,
        ..RunOptions::default()
    };
    let r = run_with(&s, &options, |_| {}).unwrap_or_else(|e| panic!("{stem}: {e}"));
    (format!("{:016x}", r.trace_hash), r.link_packets, r.events_processed)
}

#[test]
fn shipped_scenarios_do_the_pinned_work() {
    let dir = repo().join("scenarios");
    let mut stems: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| {
            let p = e.expect("directory entry").path();
            (p.extension()? == "toml").then(|| p.file_stem()?.to_str().map(str::to_owned))?
        })
        .collect();
    stems.sort();
    let pinned: Vec<&str> = PINS.iter().map(|p| p.0).collect();
    assert_eq!(stems, pinned, "every shipped scenario has a pin, and only those");
    let mut got = Vec::new();
    let mut wrong = Vec::new();
    for &(stem, hash, packets, events) in PINS {
        let (h, p, e) = run(stem);
        if (h.as_str(), p, e) != (hash, packets, events) {
            wrong.push(format!(
                "{stem}: hash {h} (pinned {hash}), link packets {p} (pinned {packets}), events {e} (pinned {events}){}",
                if p > 0 {
                    format!(
                        ", {:.3} events per packet (pinned {:.3})",
                        e as f64 / p as f64,
                        events as f64 / packets.max(1) as f64
                    )
                } else {
                    String::new()
                }
            ));
        }
        got.push(format!("    (\"{stem}\", \"{h}\", {p}, {e}),"));
    }
    assert!(
        wrong.is_empty(),
        "the simulator's work changed:\n{}\nIf the change is meant, the new pins are:\n{}",
        wrong.join("\n"),
        got.join("\n")
    );
}
