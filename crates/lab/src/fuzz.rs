//! Fuzz harnesses of this crate's parsers: scenario files and the relay's
//! link lists. Each takes arbitrary bytes and must not panic. The cargo-fuzz
//! targets in `fuzz/` call these (beside `tput_cc::fuzz` and
//! `tput_transport::fuzz`, the harnesses of what those crates parse), and
//! `tests/fuzz_corpus.rs` replays the committed corpus through all of them,
//! so stable CI checks every input the fuzzer kept. Built with the
//! `fuzzing` feature only; no part of the API.

/// A harness: takes arbitrary bytes, panics only on a bug.
pub type Harness = fn(&[u8]);

/// The harnesses by name: (name, function), as the fuzz targets and the
/// corpus directories are named.
pub const TARGETS: [(&str, Harness); 2] = [("scenario", scenario), ("link", link)];

/// Scenario files: parsing and validation never panic.
pub fn scenario(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(s) = crate::scenario::Scenario::from_toml_str(text) {
        let _ = crate::scenario::validate(&s);
    }
}

/// The relay's `--forward`/`--reverse` link lists: parsing never panics, and
/// a list that parses builds a link or says why not.
pub fn link(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(spec) = crate::live::relay::parse_link_list(text, "--forward") {
        let _ = crate::scenario::link_config(&spec, "--forward");
    }
}
