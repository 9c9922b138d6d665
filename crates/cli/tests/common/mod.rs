//! Helpers shared by the `tputctl` integration tests: running the binary,
//! reading its output, and the shape of an input error.

// Each test file compiles this module on its own and uses part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::mpsc::Receiver;

/// Runs `tputctl ARGS` to the end.
pub fn tputctl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tputctl"))
        .args(args)
        .output()
        .expect("tputctl runs")
}

/// What a finished command printed on stdout.
pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// What a finished command printed on stderr.
pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A path in the repository, from its root.
pub fn repo(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(path)
        .to_string_lossy()
        .into_owned()
}

/// Bad input: exit code 2, one line on stderr naming `what`, nothing on
/// stdout. Returns the line.
pub fn assert_input_error(args: &[&str], what: &str) -> String {
    let o = tputctl(args);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line: {err}");
    assert!(err.contains(what), "{args:?}: error `{err}` lacks `{what}`");
    assert_eq!(stdout(&o), "", "{args:?}: nothing on stdout before an error");
    err
}

/// The lines a child writes to `out`, read on a thread as they come, so
/// that a test can wait for them with a timeout.
pub fn lines_of(out: impl Read + Send + 'static) -> Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}
