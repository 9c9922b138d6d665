//! Live transfers through faults (`tput_benches::live_faults`): a server, the
//! relay and a client on 127.0.0.1, each fault as an upload and a download,
//! every byte verified.
//!
//! `cargo bench -p tput-benches --bench live_faults` (several minutes: the 80 % cut-off and 5 % loss are slow).
//! `TPUT_BENCH_SHORT=1`: 2 MB transfers instead of 10 MB.
//!
//! Exit status 1 if any transfer did not end as its fault should (complete
//! and verified, or a clear error in bounded time for a dead path).

use tput_benches::live_faults::{Options, faults, run, table};

fn main() {
    let mut o = Options::full();
    if std::env::var_os("TPUT_BENCH_SHORT").is_some_and(|v| v == "1") {
        o.bytes = 2_000_000;
        o.step = std::time::Duration::from_millis(100);
    }
    println!(
        "Live faults: {} B per transfer, CUBIC, {} Mbit/s links with {} ms each way, idle timeout {} s",
        o.bytes,
        o.rate_mbps,
        o.delay_ms,
        o.idle_timeout.as_secs()
    );
    let t = std::time::Instant::now();
    match run(&o, &faults(o.rate_mbps, o.delay_ms, o.step), |l| eprintln!("{l}")) {
        Ok(rows) => {
            print!("{}", table(&rows));
            println!("{} transfers in {:.1} s", rows.len(), t.elapsed().as_secs_f64());
            if rows.iter().any(|r| !r.as_expected) {
                std::process::exit(1);
            }
        }
        Err(e) => {
            eprintln!("live_faults: {e}");
            std::process::exit(2);
        }
    }
}
