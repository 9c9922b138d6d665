//! Every input in the committed fuzz corpus (`fuzz/corpus/TARGET/`), fed to
//! its harness: what the fuzzer found interesting, and every crash it ever
//! found (kept there as a regression input), replayed on stable Rust. The
//! harnesses sit in the crates they fuzz (`tput_cc::fuzz`,
//! `tput_transport::fuzz`, `tput_lab::fuzz`); this one test replays them all.

use std::path::PathBuf;
use std::time::Duration;

type Harness = fn(&[u8]);

/// Every harness of the workspace, by target name.
fn targets() -> Vec<(&'static str, Harness)> {
    let mut all = Vec::new();
    all.extend(tput_cc::fuzz::TARGETS);
    all.extend(tput_transport::fuzz::TARGETS);
    all.extend(tput_lab::fuzz::TARGETS);
    all
}

#[test]
fn every_fuzz_target_has_a_harness_and_a_corpus() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut names: Vec<&str> = targets().iter().map(|(n, _)| *n).collect();
    names.sort();
    let mut files: Vec<String> = std::fs::read_dir(root.join("fuzz_targets"))
        .unwrap()
        .map(|e| e.unwrap().path().file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(names, files, "harnesses vs fuzz/fuzz_targets/");
}

#[test]
fn the_fuzz_corpus_replays_without_a_panic() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    for (name, harness) in targets() {
        let dir = root.join(name);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_file())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "no corpus for {name}");
        for path in &files {
            let data = std::fs::read(path).unwrap();
            // A panic names the file: re-run it with `cargo fuzz run TARGET FILE`.
            eprintln!("{name}: {}", path.display());
            harness(&data);
        }
    }
}

#[test]
fn every_harness_takes_empty_and_typical_input() {
    use tput_transport::proto::Request;
    let good_request = Request::decode(
        &Request {
            direction: tput_transport::Direction::Upload,
            bytes: Some(1000),
            duration: None,
            key: 1,
            target: None,
            eval_slot: Duration::from_secs(1),
            interval: Duration::from_millis(100),
            rate_limit: None,
            cc: "cubic".into(),
            buffers: None,
        }
        .encode()
        .unwrap(),
    )
    .unwrap()
    .encode()
    .unwrap();
    for (name, f) in targets() {
        f(&[]);
        f(b"rate=10Mbit/s,delay=5ms");
        f(&good_request);
        eprintln!("{name}: ok");
    }
}
