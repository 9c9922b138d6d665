//! Every input in the committed fuzz corpus (`fuzz/corpus/TARGET/`), fed to
//! its harness: what the fuzzer found interesting, and every crash it ever
//! found (kept there as a regression input), replayed on stable Rust.

use std::path::PathBuf;

use tput_lab::fuzz::TARGETS;

#[test]
fn the_fuzz_corpus_replays_without_a_panic() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus");
    for (name, harness) in TARGETS {
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
