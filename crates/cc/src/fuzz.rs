//! Fuzz harnesses of this crate's parsers: each takes arbitrary bytes, must
//! not panic, and must keep its round-trip invariant. The cargo-fuzz targets
//! in the workspace's `fuzz/` directory call these, and the corpus replay
//! test feeds them every committed input. Built with the `fuzzing` feature
//! only; no part of the API.

use crate::{ControllerSpec, EvalSlot, units as parse};

/// A harness: takes arbitrary bytes, panics only on a bug.
pub type Harness = fn(&[u8]);

/// The harnesses by name: (name, function), as the fuzz targets and the
/// corpus directories are named.
pub const TARGETS: [(&str, Harness); 2] = [("spec", spec), ("units", units)];

/// Controller spec strings: what parses prints back to a spec that parses
/// to the same value.
pub fn spec(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(spec) = text.parse::<ControllerSpec>() {
        let printed = spec.to_string();
        let again: ControllerSpec = printed.parse().expect("a printed spec parses");
        assert_eq!(again, spec, "`{text}` printed as `{printed}`");
    }
}

/// Rates, durations, sizes and evaluation slots: parsing never panics;
/// evaluation slots print back exactly.
pub fn units(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = text.parse::<parse::Rate>();
    let _ = parse::parse_duration(text);
    let _ = parse::parse_size(text);
    if let Ok(slot) = text.parse::<EvalSlot>() {
        assert_eq!(
            slot.to_string().parse::<EvalSlot>().expect("a printed slot parses"),
            slot
        );
    }
}
