//! A sender writes only a few congestion windows of payload ahead of the
//! network (`tput_transport::NodeConfig::write_ahead_to_credit` off, the
//! default). Where the receiver's flow-control credit never binds, writing
//! ahead up to that credit must give the very same packets: the limit keeps
//! memory per flow small without changing what goes on the wire.

use tput_lab::scenario::{RunOptions, Scenario, ScenarioResult, run_with};

fn run(text: &str, to_credit: bool) -> ScenarioResult {
    let s = Scenario::from_toml_str(text).expect("scenario parses");
    let options = RunOptions {
        no_cc_trace: true,
        write_ahead_to_credit: to_credit,
        ..RunOptions::default()
    };
    let r = run_with(&s, &options, |_| {}).expect("scenario runs");
    for f in &r.flows {
        assert!(f.errors.is_empty(), "flow {}: {:?}", f.flow, f.errors);
        assert!(f.bytes > 0, "flow {} delivered nothing", f.flow);
    }
    r
}

/// Runs `text` both ways and compares everything on the wire: the trace
/// hash (every event's time, place and size), the links, the queue, the
/// bytes each flow delivered and when. (What differs by design is when the
/// sender wrote: `written_bytes` per interval.)
fn same_on_the_wire(name: &str, text: &str) {
    let window = run(text, false);
    let credit = run(text, true);
    assert!(window.link_packets > 1000, "{name}: {} packets", window.link_packets);
    assert_eq!(window.links, credit.links, "{name}: link counters");
    assert_eq!(window.queue, credit.queue, "{name}: queue samples");
    assert_eq!(window.delivered, credit.delivered, "{name}: delivery samples");
    for (a, b) in window.flows.iter().zip(&credit.flows) {
        assert_eq!(
            (a.bytes, a.active_secs, &a.file_times),
            (b.bytes, b.active_secs, &b.file_times),
            "{name}: flow {}",
            a.flow
        );
    }
    assert_eq!(
        format!("{:016x}", window.trace_hash),
        format!("{:016x}", credit.trace_hash),
        "{name}: trace hash"
    );
}

const DUMBBELL: &str = r#"
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "100Mbit/s"
delay = "5ms"
queue_packets = 30
[topology.access]
rate = "1Gbit/s"
delay = "2.5ms"
queue_packets = 1000
"#;

/// The guarantee controller (window jumps at slot ends) against NewReno and
/// CUBIC on a 30-packet queue, plus 1 % random loss on the bottleneck.
#[test]
fn write_ahead_stays_off_the_wire_with_loss_and_window_jumps() {
    let lossy = DUMBBELL.replace("queue_packets = 30", "queue_packets = 30\nloss = 0.01");
    for (name, topology) in [("droptail", DUMBBELL), ("random loss", lossy.as_str())] {
        let text = format!(
            r#"
duration = "4s"
seed = 3
interval = "500ms"
{topology}
[[flows]]
cc = "guarantee:target=20Mbit/s,eval=32rtt,slot=16rtt"
target = "20Mbit/s"
eval_slot = "1s"
bytes = "3MB"
receive_window = "16MB"
[[flows]]
cc = "newreno"
count = 3
bytes = "3MB"
receive_window = "16MB"
[[flows]]
cc = "cubic"
bytes = "3MB"
receive_window = "16MB"
"#
        );
        same_on_the_wire(name, &text);
    }
}

/// Periodic cut-offs (seed 001's mechanism) on a fast link, and a files
/// workload (seed 003's: a new connection per file, each starting from the
/// initial window).
#[test]
fn write_ahead_stays_off_the_wire_with_cutoffs_and_files() {
    let cutoff = r#"
duration = "2s"
seed = 1
[topology]
kind = "dumbbell"
[topology.bottleneck]
rate = "1Gbit/s"
delay = "100us"
queue_packets = 200
cutoff = { period = "1ms", connected = 0.95, mode = "drop" }
[topology.access]
rate = "10Gbit/s"
delay = "10us"
queue_packets = 1000
[[flows]]
cc = "newreno"
bytes = "2MB"
receive_window = "16MB"
[[flows]]
cc = "cubic"
bytes = "2MB"
receive_window = "16MB"
"#;
    same_on_the_wire("cut-off", cutoff);
    let files = format!(
        r#"
duration = "5s"
seed = 2
{}
[[flows]]
cc = "newreno"
count = 3
receive_window = "64MB"
files = {{ mean_gap = "300ms", mean_size = "8Mbit", shape = 2.5, drain = "10s" }}
"#,
        DUMBBELL.replace("delay = \"5ms\"", "delay = \"10ms\"")
    );
    same_on_the_wire("files", &files);
}

/// With a receive window of 1 GB a sender used to write a gigabyte of
/// payload in its first interval; now it stays within a few windows of what
/// the receiver got.
#[test]
fn a_sender_writes_little_ahead_of_delivery() {
    let text = format!(
        r#"
duration = "3s"
seed = 1
interval = "100ms"
{DUMBBELL}
[[flows]]
cc = "cubic"
receive_window = "1GB"
"#
    );
    let r = run(&text, false);
    let f = &r.flows[0];
    assert!(f.bytes > 10_000_000, "{} bytes delivered", f.bytes);
    let (mut written, mut delivered, mut ahead_max) = (0u64, 0u64, 0u64);
    for i in &f.intervals {
        written += i.written_bytes;
        delivered += i.bytes;
        ahead_max = ahead_max.max(written.saturating_sub(delivered));
    }
    eprintln!(
        "at most {ahead_max} bytes written ahead of delivery, {} delivered",
        f.bytes
    );
    // A 100 Mbit/s path with ~15 ms of RTT and a 30-packet queue holds
    // ~230 kB; three windows and some slack stay under 2 MB.
    assert!(ahead_max < 2_000_000, "written {ahead_max} bytes ahead of delivery");
    assert!(ahead_max > 0);
}
