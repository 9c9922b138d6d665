//! A soak of one server (`tput_benches::soak`): 2 rounds of 100 clients, a
//! third killed mid-transfer, some with a wrong pin or no client
//! certificate, 10 000 garbage datagrams and 500 spoofed Initials per round;
//! once without and once with Retry address validation.
//!
//! `cargo bench -p tput-benches --bench soak` (a few minutes).
//! `TPUT_BENCH_SHORT=1`: one round of 30 clients per mode.
//!
//! Exit status 1 if an impostor got through, the server failed, memory grew
//! from round to round by more than 8 MiB, or (with Retry) an honest
//! transfer was not verified. Without Retry the spoofed Initials hold
//! connection slots until the request timeout, so honest clients may be
//! refused: the table shows how many, and why `--retry` exists.

use tput_benches::soak::{Options, run};

fn main() {
    let short = std::env::var_os("TPUT_BENCH_SHORT").is_some_and(|v| v == "1");
    let mut healthy = true;
    for retry in [false, true] {
        let mut o = Options::full(retry);
        if short {
            o.rounds = 1;
            o.clients = 30;
            o.garbage = 2_000;
            o.spoofed_initials = 100;
        }
        match run(&o, |l| eprintln!("{l}")) {
            Ok(r) => {
                print!("{}", r.text(&o));
                println!();
                healthy &= r.healthy(8 * 1024, retry);
            }
            Err(e) => {
                eprintln!("soak: {e}");
                std::process::exit(2);
            }
        }
    }
    if !healthy {
        std::process::exit(1);
    }
}
