//! Writes the seed corpus of the fuzz targets (`fuzz/corpus/TARGET/`): a few
//! valid inputs per target, from which libFuzzer mutates.
//!
//! ```sh
//! cargo run -p tput-lab --example fuzz_seeds -- fuzz/corpus
//! ```

use std::path::{Path, PathBuf};
use std::time::Duration;

use tput_transport::proto::{Frame, Request};
use tput_transport::{Direction, ReceiverReport, SenderReport};

fn write(dir: &Path, target: &str, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    let d = dir.join(target);
    std::fs::create_dir_all(&d)?;
    std::fs::write(d.join(name), bytes)
}

fn request(direction: Direction, cc: &str) -> Vec<u8> {
    Request {
        direction,
        bytes: Some(100_000),
        duration: None,
        key: 42,
        target: Some(tput_cc::units::Rate::from_bits_per_sec(10_000_000)),
        eval_slot: Duration::from_secs(1),
        interval: Duration::from_millis(100),
        rate_limit: None,
        cc: cc.into(),
        buffers: None,
    }
    .encode()
    .expect("a valid request")
}

fn main() -> std::io::Result<()> {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| "fuzz/corpus".into()));
    let up = request(Direction::Upload, "cubic");
    let down = request(Direction::Download, "guarantee:target=10Mbit/s,eval=32rtt");
    write(&dir, "request", "upload", &up)?;
    write(&dir, "request", "download", &down)?;
    write(&dir, "request", "truncated", &up[..40])?;

    let mut report = ReceiverReport::default();
    report.bytes = 1000;
    report.duration_secs = 1.5;
    report.interval_bytes = vec![600, 400];
    report.cpu_secs = Some(0.25);
    let mut sender = SenderReport::default();
    sender.cc = "vegas".into();
    sender.written_bytes = 1000;
    let mut frames = Frame::Delivered { index: 3, bytes: 1200 }.encode();
    frames.extend(Frame::Report(report).encode());
    frames.extend(Frame::Sender(sender).encode());
    write(&dir, "frame", "three_frames", &frames)?;

    for (i, s) in [
        "cubic",
        "newreno",
        "vegas:alpha=2,beta=4",
        "ctcp:k=0.75",
        "fixed:rate=20Mbit/s",
        "guarantee:target=20Mbit/s,eval=32rtt,slot=16rtt,kmax_cwnd=1,abw=inline",
    ]
    .iter()
    .enumerate()
    {
        write(&dir, "spec", &format!("spec{i}"), s.as_bytes())?;
    }
    for (i, s) in [
        "100Mbit/s",
        "12.5MB/s",
        "250us",
        "1.5min",
        "64KiB",
        "5Mbit",
        "32rtt",
        "1s",
    ]
    .iter()
    .enumerate()
    {
        write(&dir, "units", &format!("unit{i}"), s.as_bytes())?;
    }
    for entry in std::fs::read_dir("scenarios")? {
        let path = entry?.path();
        if path.extension().is_some_and(|x| x == "toml") {
            let name = path.file_stem().expect("a file name").to_string_lossy().into_owned();
            write(&dir, "scenario", &name, &std::fs::read(&path)?)?;
        }
    }
    for (i, s) in [
        "rate=36.864Mbit/s,delay=50ms,queue_bytes=64KiB,ber=1e-8",
        "rate=1Gbit/s,delay=1ms,cutoff.period=1ms,cutoff.connected=0.89,cutoff.mode=drop",
        "rate=100Mbit/s,delay=5ms,queue_packets=30,rate_schedule=1s:10Mbit/s;2s:100Mbit/s,loss=0.01",
    ]
    .iter()
    .enumerate()
    {
        write(&dir, "link", &format!("link{i}"), s.as_bytes())?;
    }
    write(&dir, "server_datagrams", "zeros", &[8; 80])?;
    let mut stream = up.clone();
    stream.extend(std::iter::repeat_n(0u8, 300));
    write(&dir, "server_stream", "upload_request", &stream)?;
    write(&dir, "server_stream", "download_request", &down)?;
    Ok(())
}
