//! CPU time and memory of the N = 30 all-TCP point against ns-2 2.35's.
//!
//! 31 TCP Reno flows (30 background + the tagged one of
//! `tput_benches::tcp_ns2`) on the seed-000 dumbbell for 120 s simulated,
//! 1000-byte segments, no delayed ACKs, ns-2's windows (`newreno:iw=2,lw=1`
//! on the model's side). ns-2 runs `benches/ns2/tcp_compare.tcl` under
//! `/usr/bin/time -v` (user + system CPU, maximum resident set); the model
//! runs in this process (CPU from `/proc/thread-self/schedstat`, peak memory
//! as this process's `VmHWM` from `/proc/self/status`, which includes the
//! bench binary itself). Runs alternate, ns-2 first, back to back. ns-2 runs
//! only if installed (`apt-get install ns2`); the bench says so when it is not.
//!
//! Goal: at most 0.5x ns-2's CPU time and at most ns-2's memory.
//!
//! Environment: `TPUT_BENCH_REPS` (default 2) runs of each side,
//! `TPUT_BENCH_DURATION` (seconds, default 120), `TPUT_BENCH_N` (background
//! flows, default 30).

use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use tput_benches::tcp_ns2::{Case, Model, Variant, ns2_available, run_model};

use tput_transport::usage::peak_rss_kib;

/// ns-2 once: (CPU seconds, maximum resident set KiB).
fn ns2_once(case: &Case, tcl: &PathBuf) -> Result<(f64, u64), String> {
    let out = Command::new("/usr/bin/time")
        .arg("-v")
        .arg("ns")
        .arg(tcl)
        .arg(case.n_background.to_string())
        .arg(case.seed.to_string())
        .arg("reno")
        .arg(case.duration.as_secs_f64().to_string())
        .output()
        .map_err(|e| format!("running /usr/bin/time -v ns: {e}"))?;
    if !out.status.success() {
        return Err(format!("ns failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let field = |name: &str| -> Result<f64, String> {
        err.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .ok_or_else(|| format!("no {name:?} in /usr/bin/time's output"))
    };
    let cpu = field("User time (seconds):")? + field("System time (seconds):")?;
    let rss = field("Maximum resident set size (kbytes):")? as u64;
    Ok((cpu, rss))
}

fn main() {
    let env = |k: &str, d: u64| std::env::var(k).ok().and_then(|v| v.parse().ok()).unwrap_or(d);
    let reps = env("TPUT_BENCH_REPS", 2);
    let case = Case {
        n_background: env("TPUT_BENCH_N", 30) as u32,
        seed: 1,
        variant: Variant::Reno,
        duration: Duration::from_secs(env("TPUT_BENCH_DURATION", 120)),
    };
    let tcl = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ns2/tcp_compare.tcl");
    let have_ns2 = ns2_available();
    if !have_ns2 {
        println!("ns-2 is not installed (no `ns` on the PATH; apt-get install ns2): the model's side only");
    }
    println!(
        "{} TCP Reno flows, {} s simulated, seed-000 dumbbell; {reps} run(s) per side, alternating",
        case.n_background + 1,
        case.duration.as_secs()
    );
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let mut ns2_rss = 0;
    for rep in 1..=reps {
        if have_ns2 {
            match ns2_once(&case, &tcl) {
                Ok((cpu, rss)) => {
                    println!("run {rep} ns-2 2.35: CPU {cpu:.2} s, max RSS {rss} KiB");
                    theirs.push(cpu);
                    ns2_rss = ns2_rss.max(rss);
                }
                Err(e) => println!("run {rep} ns-2 2.35: FAILED: {e}"),
            }
        }
        let cpu0 = tput_benches::thread_cpu_secs();
        let m = run_model(&case, Model::Ns2);
        let cpu = cpu0.zip(tput_benches::thread_cpu_secs()).map(|(a, b)| b - a);
        match (m, cpu) {
            (Ok(m), Some(cpu)) => {
                println!(
                    "run {rep} model:      CPU {cpu:.2} s, peak RSS so far {} KiB (utilisation {:.3}, {:.2} timeouts/flow/min)",
                    peak_rss_kib().unwrap_or(0),
                    m.utilisation,
                    m.timeouts_per_flow_min
                );
                ours.push(cpu);
            }
            (Err(e), _) => println!("run {rep} model: FAILED: {e}"),
            (_, None) => println!("run {rep} model: no CPU clock (not Linux)"),
        }
    }
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let our_rss = peak_rss_kib().unwrap_or(0);
    if ours.is_empty() {
        std::process::exit(1);
    }
    println!(
        "model: best CPU {:.2} s, peak RSS {our_rss} KiB (the whole bench process)",
        min(&ours)
    );
    if !theirs.is_empty() {
        let ratio = min(&ours) / min(&theirs);
        let mem = our_rss as f64 / ns2_rss.max(1) as f64;
        println!(
            "ns-2:  best CPU {:.2} s, max RSS {ns2_rss} KiB\nCPU ratio model/ns-2 {ratio:.2} (goal <= 0.5: {}); memory ratio {mem:.2} (goal <= 1: {})",
            min(&theirs),
            if ratio <= 0.5 { "met" } else { "NOT met" },
            if mem <= 1.0 { "met" } else { "NOT met" },
        );
    }
}
