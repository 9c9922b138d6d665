//! Live transfers through faults (`tput_lab::live::faults`, the list the relay's
//! tests run at toy size): a server, the relay and a client on 127.0.0.1,
//! each fault as an upload and a download, every byte verified.
//!
//! `cargo bench -p tput-benches --bench live_faults` (several minutes: the
//! 80 % cut-off and 5 % loss are slow).
//! `TPUT_BENCH_SHORT=1`: 2 MB transfers instead of 10 MB.
//! `TPUT_BENCH_FAULTS='80%;dead'`: only the faults whose name contains one
//! of the `;`-separated parts. `TPUT_BENCH_REPEAT=5`: run the list 5 times
//! and count, per fault and direction, the runs that ended as expected.
//!
//! Exit status 1 if any transfer did not end as its fault should (complete
//! and verified with the fault visible in the relay's counters, or a clear
//! error in bounded time for a dead path).

use tput_benches::live_faults::{Options, faults, run, select, summary, table};

fn main() {
    let mut o = Options::full();
    if std::env::var_os("TPUT_BENCH_SHORT").is_some_and(|v| v == "1") {
        o.bytes = 2_000_000;
        o.step = std::time::Duration::from_millis(100);
    }
    let filter = std::env::var("TPUT_BENCH_FAULTS").ok();
    let repeat: usize = match std::env::var("TPUT_BENCH_REPEAT") {
        Ok(v) => v.parse().unwrap_or_else(|_| {
            eprintln!("live_faults: TPUT_BENCH_REPEAT={v} is not a whole number");
            std::process::exit(2)
        }),
        Err(_) => 1,
    };
    let list = select(faults(&o), filter.as_deref());
    if list.is_empty() {
        eprintln!("live_faults: no fault matches TPUT_BENCH_FAULTS={filter:?}");
        std::process::exit(2);
    }
    println!(
        "Live faults: {} B per transfer, CUBIC, {} Mbit/s links with {} ms each way, idle timeout {} s, {} fault(s) x {repeat}",
        o.bytes,
        o.rate_mbps,
        o.delay_ms,
        o.idle_timeout.as_secs(),
        list.len()
    );
    let t = std::time::Instant::now();
    let mut rows = Vec::new();
    for i in 0..repeat {
        match run(&o, &list, |l| eprintln!("[{}/{repeat}] {l}", i + 1)) {
            Ok(r) => rows.extend(r),
            Err(e) => {
                eprintln!("live_faults: {e}");
                std::process::exit(2);
            }
        }
    }
    print!("{}", table(&rows));
    if repeat > 1 {
        print!("\n{}", summary(&rows));
    }
    println!("{} transfers in {:.1} s", rows.len(), t.elapsed().as_secs_f64());
    if rows.iter().any(|r| !r.as_expected()) {
        std::process::exit(1);
    }
}
