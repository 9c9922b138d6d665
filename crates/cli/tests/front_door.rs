//! What a new user meets first: errors that name their cause (and print
//! nothing else), iperf3's conventions, and the server's greeting.

mod common;

use std::process::{Child, Command, Stdio};
use std::sync::mpsc::Receiver;
use std::time::Duration;

use common::{assert_input_error, lines_of, stderr, stdout, tputctl};

fn next(rx: &Receiver<String>) -> String {
    rx.recv_timeout(Duration::from_secs(30))
        .expect("the server prints its greeting")
}

/// `tputctl serve ARGS` with the greeting read from stdout; returns the
/// child, its three greeting lines and the rest of its stdout.
fn serve(args: &[&str]) -> (Child, [String; 3], Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tputctl"))
        .arg("serve")
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let rx = lines_of(child.stdout.take().unwrap());
    let greeting = [next(&rx), next(&rx), next(&rx)];
    (child, greeting, rx)
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_zero_duration_is_refused_in_one_line_not_a_hang() {
    for t in ["0s", "0"] {
        assert_input_error(&["loopback", "--time", t], "-t 0");
    }
}

#[test]
fn input_errors_come_alone_without_the_header() {
    assert_input_error(&["loopback", "-n", "1M", "-R", "--cc", "quinn-bbr"], "uploads only");
    // An unknown controller: every name --cc takes, aliases and quinn-proto's included.
    let err = assert_input_error(&["loopback", "--cc", "renoo"], "renoo");
    for name in ["newreno (reno)", "guarantee (tput)", "quinn-newreno", "quinn-bbr-paced"] {
        assert!(err.contains(name), "{err}");
    }
}

#[test]
fn rates_take_iperf3_suffixes_everywhere() {
    let o = tputctl(&["loopback", "-n", "200k", "--target", "15M", "-b", "200M", "-J"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(v["target_bps"], 15_000_000);
    let o = tputctl(&[
        "relay",
        "--listen",
        "127.0.0.1:0",
        "--to",
        "127.0.0.1:9",
        "--forward",
        "rate=10M,delay=5ms",
        "--time",
        "0.2",
        "-J",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["stats"]["forward"]["link_rate_bps"], 10_000_000);
    assert_input_error(&["loopback", "--target", "15X"], "15X");
}

#[test]
fn diagnostics_into_a_file_carry_no_colour_codes() {
    // --no-ecn: quinn-proto then always logs a DEBUG event (its ECN
    // fallback); with ECN on a clean loopback path may log nothing.
    let o = tputctl(&["-vv", "loopback", "-n", "100kB", "--no-ecn"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!o.stderr.is_empty(), "-vv logs something");
    assert!(!o.stderr.contains(&0x1b), "ANSI escape in a redirected stderr");
}

#[test]
fn serve_checks_every_input_before_binding_or_printing() {
    let err = assert_input_error(
        &["serve", "--listen", "127.0.0.1:0", "--client-ca", "/nonexistent/ca.pem"],
        "--client-ca",
    );
    assert!(err.contains("/nonexistent/ca.pem"), "{err}");
    // With the port taken, the bad file is still what is named.
    let busy = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    assert_input_error(
        &["serve", "--listen", &addr, "--client-ca", "/nonexistent/ca.pem"],
        "/nonexistent/ca.pem",
    );
}

#[test]
fn the_suggested_client_command_works_from_another_host() {
    let (child, greeting, _) = serve(&["--listen", "0.0.0.0:0"]);
    stop(child);
    assert!(greeting[2].starts_with("clients: tputctl send HOST:"), "{greeting:?}");
    assert!(!greeting[2].contains("0.0.0.0"), "{greeting:?}");
    let pin = "00".repeat(32);
    let (child, greeting, _) = serve(&["--listen", "127.0.0.1:0", "--allow-client", &pin]);
    stop(child);
    assert!(
        greeting[2].starts_with("clients: tputctl send 127.0.0.1:"),
        "{greeting:?}"
    );
    assert!(
        greeting[2].contains("--cert") && greeting[2].contains("--key"),
        "{greeting:?}"
    );
}

#[test]
fn serve_json_writes_only_json_on_stdout() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tputctl"))
        .args(["serve", "--listen", "127.0.0.1:0", "-J"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = lines_of(child.stdout.take().unwrap());
    let err = lines_of(child.stderr.take().unwrap());
    let addr = next(&err).trim_start_matches("listening on ").to_string();
    let pin = next(&err).trim_start_matches("certificate SHA-256 ").to_string();
    let o = tputctl(&["send", &addr, "--pin", &pin, "-n", "100k"]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let line = next(&out);
    stop(child);
    let v: serde_json::Value = serde_json::from_str(&line).expect("the first stdout line is JSON");
    assert_eq!(v["bytes"], 102_400, "{v}");
}

#[test]
fn a_self_signed_ca_certificate_says_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    // What `openssl req -x509` makes: a self-signed certificate with CA:TRUE.
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap();
    let mut params = rcgen::CertificateParams::new(vec!["localhost".to_string()]).unwrap();
    params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    let cert = params.self_signed(&key).unwrap();
    let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
    std::fs::write(&cert_path, cert.pem()).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    let (c, k) = (cert_path.to_str().unwrap(), key_path.to_str().unwrap());
    let (child, greeting, _) = serve(&["--listen", "127.0.0.1:0", "--cert", c, "--key", k]);
    let addr = greeting[0].trim_start_matches("listening on ").to_string();
    let o = tputctl(&[
        "send",
        &addr,
        "--ca",
        c,
        "--server-name",
        "localhost",
        "-n",
        "10k",
        "--idle-timeout",
        "5s",
    ]);
    stop(child);
    let all = stdout(&o) + &stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{all}");
    assert!(all.contains("CA certificate") && all.contains("--pin"), "{all}");
}

#[test]
fn a_send_to_a_silent_port_says_nothing_answered_there() {
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap().to_string();
    let o = tputctl(&["send", &addr, "--insecure", "-n", "10k", "--idle-timeout", "1s"]);
    let all = stdout(&o) + &stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{all}");
    assert!(all.contains(&format!("nothing answered at {addr}")), "{all}");
    // A failed transfer prints no rate.
    let sum: Vec<&str> = all.lines().filter(|l| l.starts_with("[SUM]")).collect();
    assert!(sum.iter().all(|l| !l.contains("bit/s")), "{sum:?}");
}
