//! A live QUIC transfer over UDP on 127.0.0.1: server and client in one process.
//!
//! ```sh
//! cargo run --release -p tput-transport --example loopback -- [CC_SPEC] [SIZE]
//! cargo run --release -p tput-transport --example loopback -- cubic 200MB
//! cargo run --release -p tput-transport --example loopback -- guarantee:target=500Mbit/s 1GB
//! ```
//!
//! Prints one line per 0.5 s interval (sender side) and a summary; every byte
//! is verified by the receiver. Exits 2 on a bad argument, 1 if the transfer fails.

use std::ops::ControlFlow;
use std::process::ExitCode;
use std::time::Duration;

use tput_cc::ControllerSpec;
use tput_cc::units::parse_size;
use tput_transport::{Identity, NodeConfig, ServerTrust, TransferSpec, udp};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let cc: ControllerSpec = match args.first().map_or(Ok("cubic".parse().expect("valid")), |s| s.parse()) {
        Ok(cc) => cc,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let bytes = match args.get(1).map_or(Ok(100_000_000), |s| parse_size(s)) {
        Ok(b) if b > 0 => b,
        Ok(_) => {
            eprintln!("error: the size must be positive");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match rt.block_on(run(cc, bytes)) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cc: ControllerSpec, bytes: u64) -> Result<bool, tput_transport::Error> {
    let identity = Identity::self_signed(&["localhost"])?;
    let socket = udp::bind_server("127.0.0.1:0".parse().expect("valid address")).await?;
    let addr = socket.local_addr().map_err(|e| tput_transport::Error::Io {
        context: "local address".into(),
        source: e,
    })?;
    let served = identity.clone();
    let server = tokio::spawn(async move {
        udp::serve(
            &socket,
            &served,
            NodeConfig::default(),
            |_, _| ControlFlow::Continue(()),
        )
        .await
    });
    println!("server on {addr}, certificate SHA-256 {}", identity.fingerprint());
    println!("sending {bytes} bytes with {cc}");
    println!(
        "{:>12} {:>12} {:>12} {:>10} {:>8}",
        "interval", "goodput", "cwnd", "srtt", "lost"
    );
    let mut spec = TransferSpec::upload(bytes, cc);
    spec.interval = Duration::from_millis(500);
    let trust = ServerTrust::Pinned(identity.fingerprint());
    let outcomes = udp::transfer(addr, "localhost", &trust, NodeConfig::default(), vec![spec], |_, s| {
        println!(
            "{:>5.1}-{:<5.1}s {:>7.1} Mbit/s {:>9} B {:>7.2} ms {:>8}",
            s.start_secs,
            s.end_secs,
            s.goodput_bps / 1e6,
            s.cwnd_bytes,
            s.srtt_ms,
            s.lost_packets
        );
    })
    .await?;
    server.abort();
    let o = &outcomes[0];
    match &o.error {
        None => {
            let verified = o.receiver.as_ref().map_or(0, |r| r.bytes);
            println!(
                "done: {} bytes in {:.2} s = {:.1} Mbit/s; receiver verified {verified} bytes",
                o.bytes,
                o.elapsed_secs,
                o.bytes as f64 * 8.0 / o.elapsed_secs / 1e6
            );
            Ok(true)
        }
        Some(e) => {
            eprintln!("transfer failed: {e}");
            Ok(false)
        }
    }
}
