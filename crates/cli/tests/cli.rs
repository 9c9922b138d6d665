//! The `tputctl` binary, end to end: every subcommand and its error paths.

mod common;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use common::{assert_input_error, lines_of, repo, stderr, stdout, tputctl};

#[test]
fn a_default_server_takes_ten_parallel_connections_and_refusals_name_their_limit() {
    let serve = |extra: &[&str]| {
        let mut args = vec!["serve", "--listen", "127.0.0.1:0"];
        args.extend_from_slice(extra);
        let mut child = Command::new(env!("CARGO_BIN_EXE_tputctl"))
            .args(&args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let lines = lines_of(child.stdout.take().expect("stdout is piped"));
        let next = || {
            lines
                .recv_timeout(Duration::from_secs(20))
                .expect("the server prints a line within 20 s")
        };
        let addr = next().trim_start_matches("listening on ").to_string();
        let pin = next().trim_start_matches("certificate SHA-256 ").to_string();
        // `lines` goes along: the server must have somewhere to print.
        (child, addr, pin, lines)
    };
    let errors = |o: &Output| -> Vec<String> {
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
        v["transfers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["error"].as_str().unwrap_or("").to_string())
            .collect()
    };

    // iperf3's habit: one client, ten connections, a server with defaults.
    let (mut server, addr, pin, _lines) = serve(&[]);
    let ten = tputctl(&["send", &addr, "--pin", &pin, "-P", "10", "-n", "200KB", "-J"]);
    let _ = server.kill();
    let _ = server.wait();
    assert!(ten.status.success(), "{}{}", stdout(&ten), stderr(&ten));
    assert_eq!(errors(&ten), vec![String::new(); 10]);

    // Past the limits: two from one address, three in all. The third
    // connection is refused by the per-address limit (after its handshake,
    // with a reason); the fourth finds the server full (refused at once).
    let (mut server, addr, pin, _lines) = serve(&["--max-per-address", "2", "--max-clients", "3"]);
    let four = tputctl(&["send", &addr, "--pin", &pin, "-P", "4", "-n", "200KB", "-J"]);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(four.status.code(), Some(1), "{}", stderr(&four));
    let e = errors(&four);
    assert_eq!(e.iter().filter(|e| e.is_empty()).count(), 2, "{e:?}");
    assert!(
        e.iter()
            .any(|e| e.contains("at most 2 connections at once from one address") && e.contains("--max-per-address")),
        "{e:?}"
    );
    assert!(
        e.iter().any(|e| e.contains("refused") && e.contains("--max-clients")),
        "{e:?}"
    );
}

#[test]
fn cc_list_names_every_controller_with_defaults() {
    let o = tputctl(&["cc", "list"]);
    assert!(o.status.success());
    let text = stdout(&o);
    for c in tput_cc::registry() {
        assert!(text.contains(c.name), "{} missing", c.name);
        for p in c.params {
            assert!(
                text.contains(p.name) && text.contains(p.unit),
                "{}.{} missing",
                c.name,
                p.name
            );
        }
    }
    assert!(text.contains("default 0.7") && text.contains("required"));
}

#[test]
fn help_explains_units() {
    let o = tputctl(&["send", "--help"]);
    assert!(o.status.success());
    let text = stdout(&o);
    for word in [
        "--time",
        "--bytes",
        "--cc",
        "--target",
        "--eval-slot",
        "--pin",
        "--insecure",
        "Mbit/s",
    ] {
        assert!(text.contains(word), "send --help lacks {word}");
    }
}

#[test]
fn bad_values_are_one_line_errors_with_exit_code_2() {
    assert_input_error(&["send", "127.0.0.1:4433", "--cc", "cubic:beta=2"], "beta");
    assert_input_error(&["send", "127.0.0.1:4433", "--time", "5parsecs"], "5parsecs");
    assert_input_error(&["send", "127.0.0.1:4433", "--target", "fast"], "fast");
    assert_input_error(&["send", "127.0.0.1:4433", "--bytes", "0B"], "0B");
    assert_input_error(&["send", "127.0.0.1:4433", "--eval-slot", "0rtt"], "0rtt");
    assert_input_error(&["send", "127.0.0.1:4433", "--pin", "abcd"], "abcd");
    assert_input_error(
        &["send", "no.such.host.invalid:4433", "--insecure"],
        "no.such.host.invalid",
    );
    assert_input_error(&["send", "127.0.0.1:4433"], "--pin");
    assert_input_error(&["serve", "--listen", "here"], "here");
    assert_input_error(&["sim", "/nonexistent/scenario.toml"], "/nonexistent/scenario.toml");
    assert_input_error(&["frobnicate"], "frobnicate");
}

#[test]
fn bad_scenario_files_name_the_line() {
    let tmp_dir = tempfile::tempdir().unwrap();
    let dir = tmp_dir.path().to_path_buf();
    let good = std::fs::read_to_string(repo("scenarios/seed003-files.toml")).unwrap();
    let cases = [
        (good.replacen("\nduration =", "\ndurration =", 1), "durration"),
        (
            good.replacen("rate = \"100Mbit/s\"", "rate = \"100Mbits\"", 1),
            "100Mbits",
        ),
        ("this is not toml".to_string(), "expected `=`"),
        (
            good.replacen("\n[[flows]]\n", "\n[[flows]]\neval_slot = \"0rtt\"\n", 1),
            "0rtt",
        ),
    ];
    for (i, (text, what)) in cases.iter().enumerate() {
        let path = dir.join(format!("bad{i}.toml"));
        std::fs::write(&path, text).unwrap();
        let p = path.to_string_lossy().into_owned();
        let o = tputctl(&["sim", &p]);
        assert_eq!(o.status.code(), Some(2), "case {i}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
        assert!(err.contains(&p), "names the file: {err}");
        assert!(err.contains(what), "names `{what}`: {err}");
        assert!(err.contains(&format!("{p}:")), "a line number: {err}");
    }
}

#[test]
fn loopback_verifies_its_bytes() {
    let o = tputctl(&[
        "loopback",
        "--time",
        "2s",
        "--target",
        "10Mbit/s",
        "--interval",
        "500ms",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("receiver verified"), "{text}");
    assert!(text.contains("evaluation slots met"), "{text}");
    let intervals: Vec<&str> = text
        .lines()
        .filter(|l| l.starts_with("[ 0]") && l.contains(" s "))
        .collect();
    assert!(intervals.len() >= 4, "{text}");
    // With a target every interval line ends with its verdict, and the
    // summary gives the success ratio.
    assert!(
        text.lines().any(|l| l.starts_with("[id]") && l.ends_with("target")),
        "{text}"
    );
    for l in &intervals {
        assert!(l.ends_with("  met") || l.ends_with("  MISS"), "{l}");
    }
    assert!(
        text.lines()
            .any(|l| l.starts_with("[SUM]") && l.contains("success ratio")),
        "{text}"
    );
}

/// A guarantee controller asked for more than the path can carry (a
/// sender rate limit of 2 Mbit/s against a 50 Mbit/s target) trips its
/// breaker: the interval lines and the summary say the target is infeasible.
#[test]
fn an_infeasible_target_is_reported() {
    let o = tputctl(&[
        "loopback",
        "--time",
        "4s",
        "--cc",
        "guarantee:target=50Mbit/s,eval=100ms",
        "--target",
        "50Mbit/s",
        "--rate-limit",
        "2M",
        "--interval",
        "500ms",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.lines().any(|l| l.contains("MISS  infeasible")), "{text}");
    assert!(
        text.lines()
            .any(|l| l.starts_with("[SUM]") && l.contains("declared its target infeasible")),
        "{text}"
    );
}

#[test]
fn loopback_json_reverse_parallel() {
    let o = tputctl(&[
        "loopback",
        "--bytes",
        "5MB",
        "--parallel",
        "2",
        "--reverse",
        "--json",
        "--cc",
        "vegas",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(v["command"], "loopback");
    assert_eq!(v["direction"], "download");
    assert_eq!(v["cc"], "vegas");
    assert_eq!(v["summary"]["ok"], true);
    assert_eq!(v["summary"]["bytes"], 10_000_000);
    let transfers = v["transfers"].as_array().unwrap();
    assert_eq!(transfers.len(), 2);
    for t in transfers {
        assert_eq!(t["receiver"]["bytes"], 5_000_000);
        assert_eq!(t["local_sender"], false);
    }
}

#[test]
fn serve_and_send_with_a_pinned_certificate() {
    let mut server = Command::new(env!("CARGO_BIN_EXE_tputctl"))
        .args(["serve", "--listen", "127.0.0.1:0", "--max-clients", "4"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = lines_of(server.stdout.take().expect("stdout is piped"));
    // A silent server fails the test instead of hanging it.
    let next = || {
        lines
            .recv_timeout(Duration::from_secs(20))
            .expect("the server prints a line within 20 s")
    };
    let addr = next().trim_start_matches("listening on ").to_string();
    let pin = next().trim_start_matches("certificate SHA-256 ").to_string();
    let sent = tputctl(&["send", &addr, "--pin", &pin, "--bytes", "3MB", "--cc", "newreno"]);
    let wrong = tputctl(&["send", &addr, "--pin", &"0".repeat(64), "--bytes", "1MB"]);
    let insecure = tputctl(&["send", &addr, "--insecure", "--time", "300ms", "--reverse"]);
    let _clients_hint = next();
    // One line per finished transfer (the wrong pin never got that far).
    let served: Vec<String> = (0..2)
        .filter_map(|_| lines.recv_timeout(Duration::from_secs(20)).ok())
        .collect();
    let _ = server.kill();
    let _ = server.wait();
    assert!(sent.status.success(), "{}{}", stdout(&sent), stderr(&sent));
    assert!(
        stdout(&sent).contains("receiver verified 3000000 bytes"),
        "{}",
        stdout(&sent)
    );
    assert_eq!(wrong.status.code(), Some(1), "a pin mismatch fails the transfer");
    assert!(stdout(&wrong).contains("fingerprint"), "{}", stdout(&wrong));
    assert!(insecure.status.success(), "{}", stderr(&insecure));
    assert!(stderr(&insecure).contains("warning"), "--insecure warns");
    assert!(
        served
            .iter()
            .any(|l| l.contains("received 3.0 MB") || l.contains("received 3000")),
        "{served:?}"
    );
}

#[test]
fn sim_writes_results_and_is_reproducible() {
    let tmp_out = tempfile::tempdir().unwrap();
    let out = tmp_out.path().to_path_buf();
    let o = tputctl(&[
        "sim",
        &repo("scenarios/seed003-files.toml"),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for f in [
        "summary.json",
        "flows.csv",
        "intervals.csv",
        "slots.csv",
        "queue.csv",
        "delivered.csv",
        "cc.csv",
        "throughput.svg",
        "cwnd.svg",
        "k.svg",
        "queue.svg",
    ] {
        let meta = std::fs::metadata(out.join(f)).unwrap_or_else(|_| panic!("{f} written"));
        assert!(meta.len() > 0, "{f} empty");
    }
    let flows = std::fs::read_to_string(out.join("flows.csv")).unwrap();
    assert_eq!(flows.lines().count(), 6, "header + 5 flows: {flows}");
    // A second run writes the same files, byte for byte.
    let tmp_again = tempfile::tempdir().unwrap();
    let again = tmp_again.path().to_path_buf();
    let o = tputctl(&[
        "sim",
        &repo("scenarios/seed003-files.toml"),
        "--out",
        again.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    for entry in std::fs::read_dir(&out).unwrap() {
        let name = entry.unwrap().file_name();
        let (a, b) = (
            std::fs::read(out.join(&name)).unwrap(),
            std::fs::read(again.join(&name)).unwrap(),
        );
        assert!(a == b, "{name:?} differs between two runs");
    }
}

#[test]
fn fig6_n30_json_is_identical_twice() {
    let file = repo("scenarios/seed000-fig6-n30.toml");
    let a = tputctl(&["sim", &file, "--json"]);
    let b = tputctl(&["sim", &file, "--json"]);
    assert!(a.status.success(), "{}", stderr(&a));
    assert_eq!(a.stdout, b.stdout, "same scenario and seed, same summary");
    let v: serde_json::Value = serde_json::from_slice(&a.stdout).unwrap();
    assert_eq!(v["flows"].as_array().unwrap().len(), 31);
}

/// `--cc quinn-bbr` runs quinn-proto's own BBR on an upload and names it in
/// the report; a download with it, or a misspelt name, is a one-line error.
#[test]
fn quinn_s_own_controllers_from_the_command_line() {
    let o = tputctl(&["loopback", "-n", "1M", "-J", "--cc", "quinn-bbr"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(v["cc"], "quinn-bbr", "{v}");
    assert_eq!(v["transfers"][0]["cc"], "quinn-bbr", "{}", v["transfers"][0]);
    assert_eq!(v["summary"]["bytes"], 1_048_576);
    assert_input_error(&["loopback", "-n", "1M", "-R", "--cc", "quinn-bbr"], "uploads only");
    assert_input_error(&["loopback", "-n", "1M", "--cc", "quinn-bbrr"], "quinn-bbrr");
}

#[test]
fn iperf3_short_flags_and_bare_numbers() {
    // -n 1M is iperf3's MiB; -P 2 two connections; -J one JSON document.
    let o = tputctl(&["loopback", "-n", "1M", "-P", "2", "-J", "--cc", "newreno"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(v["summary"]["bytes"], 2 * 1_048_576);
    assert_eq!(v["transfers"].as_array().unwrap().len(), 2);
    // -t 1 is one second, -i 0.25 a quarter of a second, -b 20M 20 Mbit/s.
    let o = tputctl(&["loopback", "-t", "1", "-i", "0.25", "-b", "20M", "-J"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let t = &v["transfers"][0];
    let intervals = t["intervals"].as_array().unwrap();
    assert!(intervals.len() >= 4, "{} intervals of 0.25 s in 1 s", intervals.len());
    assert!(
        (intervals[0]["end_secs"].as_f64().unwrap() - 0.25).abs() < 1e-6,
        "{}",
        intervals[0]
    );
    let goodput = v["summary"]["goodput_bps"].as_f64().unwrap();
    assert!(goodput < 22e6, "-b 20M caps the sender: {goodput} bit/s");
    // Bad bare values are one-line input errors.
    assert_input_error(&["loopback", "-b", "20X"], "20X");
    assert_input_error(&["loopback", "-t", "-3"], "-3");
    assert_input_error(&["loopback", "-n", "0"], "0");
}

#[test]
fn the_text_summary_reports_rtt_losses_and_cpu() {
    let o = tputctl(&["loopback", "-t", "1"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("[SUM]") && text.contains("RTT min/mean/max"), "{text}");
    assert!(text.contains("congestion events"), "{text}");
    assert!(text.contains("CPU: this end"), "{text}");
}

#[test]
fn verbose_logging_goes_to_stderr() {
    // With --no-ecn quinn-proto always logs a DEBUG event (the peer's ACKs
    // carry no ECN counts, so it stops sending ECT); a transfer with ECN on
    // may log none on a clean loopback path.
    let quiet = tputctl(&["loopback", "-n", "100kB", "--no-ecn"]);
    let loud = tputctl(&["-vv", "loopback", "-n", "100kB", "--no-ecn"]);
    assert!(quiet.status.success() && loud.status.success());
    assert!(!stderr(&quiet).contains("DEBUG"), "{}", stderr(&quiet));
    assert!(
        stderr(&loud).contains("DEBUG"),
        "-vv logs debug events: {}",
        stderr(&loud)
    );
}

#[test]
fn reverse_uses_the_clients_controller_and_rate_limit_at_the_server() {
    let o = tputctl(&[
        "loopback", "-R", "-t", "2", "-b", "30M", "--cc", "vegas", "-i", "0.5", "-J",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    let t = &v["transfers"][0];
    assert_eq!(t["local_sender"], false, "the server sent");
    assert_eq!(t["cc"], "vegas", "the controller that sent: {t}");
    let intervals = t["intervals"].as_array().unwrap();
    assert!(
        intervals.len() >= 3,
        "the server's records reach the client: {intervals:?}"
    );
    assert!(
        intervals
            .iter()
            .all(|i| i["cwnd_bytes"].as_u64().unwrap() > 0 && i["srtt_ms"].as_f64().unwrap() > 0.0),
        "{intervals:?}"
    );
    assert!(
        intervals
            .iter()
            .all(|i| i["controller"]["state"]["algorithm"] == "vegas"),
        "Vegas state in the records: {}",
        intervals[0]["controller"]
    );
    // The server applied -b: no faster than 30 Mbit/s over the transfer
    // (without it, loopback carries Gbit/s). How close to 30 Mbit/s a
    // loaded machine comes is no test's business: the rate limiter's
    // figures are `cargo bench -p tput-benches --bench live_timing`'s.
    let bytes = t["receiver"]["bytes"].as_f64().unwrap();
    let secs = t["receiver"]["duration_secs"].as_f64().unwrap();
    let rate = bytes * 8.0 / secs;
    assert!(rate > 0.0 && rate < 30e6 * 1.05, "{rate} bit/s against -b 30M");
}

#[test]
fn sim_writes_a_qlog_trace_per_connection() {
    let tmp_dir = tempfile::tempdir().unwrap();
    let dir = tmp_dir.path().to_path_buf();
    let o = tputctl(&[
        "sim",
        &repo("scenarios/seed003-files.toml"),
        "--qlog",
        dir.to_str().unwrap(),
        "-J",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Five flows, each with its folder; each connection a JSON-SEQ file whose
    // records parse.
    let mut files = 0;
    for flow in 1..=5 {
        let sub = dir.join(format!("flow-{flow}"));
        for entry in std::fs::read_dir(&sub).unwrap_or_else(|e| panic!("{}: {e}", sub.display())) {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let records: Vec<&str> = text.split('\u{1e}').filter(|r| !r.trim().is_empty()).collect();
            assert!(records.len() > 2, "{} has {} records", path.display(), records.len());
            for r in records {
                serde_json::from_str::<serde_json::Value>(r).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            }
            files += 1;
        }
    }
    assert!(files >= 10, "a client and a server file per connection: {files}");
}

#[test]
fn a_request_beyond_the_servers_limits_is_refused_with_its_reason() {
    let mut server = Command::new(env!("CARGO_BIN_EXE_tputctl"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--max-time",
            "1s",
            "--max-rate",
            "50M",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = lines_of(server.stdout.take().expect("stdout is piped"));
    let next = || {
        lines
            .recv_timeout(Duration::from_secs(20))
            .expect("the server prints its banner")
    };
    let addr = next().trim_start_matches("listening on ").to_string();
    let pin = next().trim_start_matches("certificate SHA-256 ").to_string();
    let long = tputctl(&["send", &addr, "--pin", &pin, "-t", "5"]);
    let fast = tputctl(&["send", &addr, "--pin", &pin, "-t", "1", "-R"]);
    let fine = tputctl(&["send", &addr, "--pin", &pin, "-t", "1", "-R", "-b", "20M"]);
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(long.status.code(), Some(1), "{}", stdout(&long));
    assert!(
        stdout(&long).contains("duration 5s exceeds this server's limit of 1s"),
        "{}",
        stdout(&long)
    );
    // A refused transfer prints no rate in its summary.
    let long_out = stdout(&long);
    let sum: Vec<&str> = long_out.lines().filter(|l| l.starts_with("[SUM]")).collect();
    assert!(!sum.is_empty() && sum.iter().all(|l| !l.contains("bit/s")), "{sum:?}");
    assert_eq!(fast.status.code(), Some(1), "{}", stdout(&fast));
    // No -b: the refusal says that is what is missing.
    assert!(
        stdout(&fast).contains("asked for no rate limit") && stdout(&fast).contains("-b/--rate-limit 50Mbit/s or less"),
        "{}",
        stdout(&fast)
    );
    assert!(fine.status.success(), "{}{}", stdout(&fine), stderr(&fine));
}

#[test]
fn a_server_with_client_authentication_lets_in_only_allowed_clients() {
    let tmp_dir = tempfile::tempdir().unwrap();
    let dir = tmp_dir.path().to_path_buf();
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ED25519).unwrap();
    let cert = rcgen::CertificateParams::new(vec!["client".to_string()])
        .unwrap()
        .self_signed(&key)
        .unwrap();
    let (cert_path, key_path) = (dir.join("client.pem"), dir.join("client.key"));
    std::fs::write(&cert_path, cert.pem()).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    let fp = tput_transport::Fingerprint::of(cert.der()).to_string();

    let mut server = Command::new(env!("CARGO_BIN_EXE_tputctl"))
        .args(["serve", "--listen", "127.0.0.1:0", "--allow-client", &fp])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = lines_of(server.stdout.take().expect("stdout is piped"));
    let next = || {
        lines
            .recv_timeout(Duration::from_secs(20))
            .expect("the server prints its banner")
    };
    let addr = next().trim_start_matches("listening on ").to_string();
    let pin = next().trim_start_matches("certificate SHA-256 ").to_string();
    let (c, k) = (cert_path.to_str().unwrap(), key_path.to_str().unwrap());
    let allowed = tputctl(&["send", &addr, "--pin", &pin, "-n", "1MB", "--cert", c, "--key", k]);
    let anonymous = tputctl(&["send", &addr, "--pin", &pin, "-n", "1MB"]);
    let _ = server.kill();
    let _ = server.wait();
    assert!(allowed.status.success(), "{}{}", stdout(&allowed), stderr(&allowed));
    assert!(
        stdout(&allowed).contains("receiver verified 1000000 bytes"),
        "{}",
        stdout(&allowed)
    );
    assert_eq!(anonymous.status.code(), Some(1), "{}", stdout(&anonymous));
    assert!(stdout(&anonymous).contains("certificate"), "{}", stdout(&anonymous));
    // --cert needs --key, and a missing file is named.
    assert_input_error(&["send", &addr, "--pin", &pin, "--cert", c], "--key");
    assert_input_error(&["serve", "--client-ca", "/nonexistent/ca.pem"], "/nonexistent/ca.pem");
}

#[test]
fn relay_help_explains_the_link_keys_and_units() {
    let o = tputctl(&["relay", "--help"]);
    assert!(o.status.success());
    let text = stdout(&o);
    for needle in [
        "--listen",
        "--to",
        "--forward",
        "--reverse",
        "--config",
        "rate=RATE",
        "delay=DUR",
        "queue_bytes=SIZE",
        "ber=P",
        "cutoff.mode=drop|hold|hold_abort|pause",
        "rate_schedule=AT:RATE",
        "overload",
        "Mbit/s",
    ] {
        assert!(text.contains(needle), "`{needle}` missing from:\n{text}");
    }
}

#[test]
fn relay_rejects_a_bad_forward_link_in_one_line() {
    for (list, named) in [
        ("rate=10Mbit/s,delay=5ms,qeue_bytes=64KiB", "qeue_bytes"),
        ("rate=10Mbits,delay=5ms", "10Mbits"),
        ("rate=10Mbit/s,delay=5ms,loss=1.5", "1.5"),
    ] {
        let o = tputctl(&[
            "relay",
            "--listen",
            "127.0.0.1:0",
            "--to",
            "127.0.0.1:9",
            "--forward",
            list,
        ]);
        assert_eq!(o.status.code(), Some(2), "{list}");
        let err = String::from_utf8_lossy(&o.stderr).into_owned();
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        assert!(err.starts_with("tputctl: error: "), "{err}");
        assert!(err.contains(named), "{list}: {err}");
    }
}

#[test]
fn relay_runs_for_its_time_and_prints_json() {
    let o = tputctl(&[
        "relay",
        "--listen",
        "127.0.0.1:0",
        "--to",
        "127.0.0.1:9",
        "--forward",
        "rate=10Mbit/s,delay=5ms",
        "--time",
        "0.3",
        "--json",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["command"], "relay");
    // The configured rate is named as such; nothing was carried, so the
    // delivered rate is 0, not the link's rate.
    assert_eq!(v["stats"]["forward"]["link_rate_bps"], 10_000_000);
    assert_eq!(v["stats"]["forward"]["delivered_bps"], 0.0);
    assert_eq!(v["stats"]["forward"]["active_secs"], 0.0);
    assert!(v["stats"]["forward"].get("rate_bps").is_none());
    assert!(v["stats"]["elapsed_secs"].as_f64().unwrap() >= 0.3);
}

/// A small scenario file for sweeps: 1 s of two flows.
fn sweep_scenario(dir: &std::path::Path) -> PathBuf {
    let path = dir.join("s.toml");
    std::fs::write(
        &path,
        "duration = \"1s\"\nseed = 1\n[topology]\nkind = \"dumbbell\"\n\
         bottleneck = { rate = \"10Mbit/s\", delay = \"2ms\", queue_packets = 20 }\n\
         access = { rate = \"100Mbit/s\", delay = \"1ms\", queue_packets = 100 }\n\
         [[flows]]\ncc = \"newreno\"\n[[flows]]\ncc = \"cubic\"\n",
    )
    .unwrap();
    path
}

#[test]
fn sweeps_plan_run_anywhere_and_collect_identically() {
    let tmp_dir = tempfile::tempdir().unwrap();
    let dir = tmp_dir.path().to_path_buf();
    let s = sweep_scenario(&dir);
    let o = tputctl(&[
        "sweep",
        "plan",
        s.to_str().unwrap(),
        "--vary",
        "flows[1].cc=cubic,guarantee:target=2Mbit/s,eval=1s",
        "--seeds",
        "1..2",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let lines: Vec<&str> = std::str::from_utf8(&o.stdout).unwrap().lines().collect();
    assert_eq!(lines.len(), 4, "2 controllers x 2 seeds");
    let plan = dir.join("points.jsonl");
    std::fs::write(&plan, &o.stdout).unwrap();
    let p = plan.to_str().unwrap();
    // One point at a time, in reverse order; then all on 2 jobs; then on 1.
    let (a, b, c) = (dir.join("a"), dir.join("b"), dir.join("c"));
    for i in (0..4).rev() {
        let o = tputctl(&[
            "sweep",
            "run",
            p,
            "--index",
            &i.to_string(),
            "--out",
            a.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    for (out, jobs) in [(&b, "2"), (&c, "1")] {
        let o = tputctl(&["sweep", "run", p, "--jobs", jobs, "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    for out in [&a, &b, &c] {
        let o = tputctl(&["sweep", "collect", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", stderr(&o));
    }
    let read = |d: &PathBuf, f: &str| std::fs::read(d.join(f)).unwrap();
    for f in ["sweep.csv", "sweep.json", "point-000003.json"] {
        assert_eq!(read(&a, f), read(&b, f), "{f}: order and jobs change nothing");
        assert_eq!(read(&b, f), read(&c, f), "{f}");
    }
    let csv = String::from_utf8(read(&a, "sweep.csv")).unwrap();
    assert!(csv.starts_with("point,seed,flows[1].cc,flow,"), "{csv}");
    assert_eq!(csv.lines().count(), 1 + 4 * 2, "a row per point and flow: {csv}");
    assert!(
        csv.contains("guarantee:target=2Mbit/s,eval=1s") || csv.contains("\"guarantee"),
        "{csv}"
    );

    // A result of another plan in the same directory is refused.
    let other = tputctl(&["sweep", "plan", s.to_str().unwrap(), "--seeds", "7"]);
    let other_plan = dir.join("other.jsonl");
    std::fs::write(&other_plan, &other.stdout).unwrap();
    let o = tputctl(&[
        "sweep",
        "run",
        other_plan.to_str().unwrap(),
        "--index",
        "0",
        "--out",
        dir.join("d").to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    std::fs::copy(dir.join("d/point-000000.json"), a.join("point-000000.json")).unwrap();
    let o = tputctl(&["sweep", "collect", a.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("two plans"), "{}", stderr(&o));
    // Missing points are named unless --partial.
    let e = dir.join("e");
    let o = tputctl(&["sweep", "run", p, "--index", "1", "--out", e.to_str().unwrap()]);
    assert!(o.status.success());
    let o = tputctl(&["sweep", "collect", e.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("3 point(s) have no result"), "{}", stderr(&o));
    assert!(
        tputctl(&["sweep", "collect", e.to_str().unwrap(), "--partial"])
            .status
            .success()
    );
    // Bad input: one line naming it, exit 2.
    for (args, needle) in [
        (
            vec!["sweep", "plan", s.to_str().unwrap(), "--vary", "flows[5].cc=newreno"],
            "out of range",
        ),
        (
            vec!["sweep", "plan", s.to_str().unwrap(), "--vary", "flows[0].cc=warp"],
            "warp",
        ),
        (vec!["sweep", "plan", s.to_str().unwrap(), "--seeds", "3..1"], "empty"),
        (
            vec!["sweep", "run", p, "--index", "9", "--out", e.to_str().unwrap()],
            "4 point(s)",
        ),
        (
            vec![
                "sweep",
                "run",
                s.to_str().unwrap(),
                "--index",
                "0",
                "--out",
                e.to_str().unwrap(),
            ],
            "not a plan point",
        ),
    ] {
        let o = tputctl(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o).trim().lines().count(), 1, "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn application_buffers_deliver_every_byte_and_bad_ones_are_refused() {
    // 3 MiB as buffers of 256 KiB, at most 2 unacknowledged (seed 002's model).
    let o = tputctl(&[
        "loopback",
        "-n",
        "3M",
        "--buffers",
        "2",
        "--buffer-size",
        "256KiB",
        "-J",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("one JSON document");
    assert_eq!(v["summary"]["bytes"], 3 * 1_048_576);
    assert_eq!(v["transfers"][0]["receiver"]["bytes"], 3 * 1_048_576);
    assert_input_error(&["loopback", "--buffers", "65"], "65");
    assert_input_error(&["loopback", "--buffers", "2", "-R"], "--reverse");
    assert_input_error(&["loopback", "--buffer-size", "1M"], "--buffers");
    assert_input_error(&["loopback", "-w", "0"], "0");
}

/// `tputctl ... | head -1`: a reader that has gone ends the command quietly
/// (exit code 0, nothing on stderr), never with a panic or an error message.
/// The pipe's read end is closed before the command starts, so its first
/// write fails with EPIPE every time.
#[test]
fn a_closed_stdout_ends_a_command_quietly() {
    let tmp_dir = tempfile::tempdir().unwrap();
    let dir = tmp_dir.path().to_path_buf();
    let scenario = dir.join("s.toml");
    std::fs::write(
        &scenario,
        "duration = \"1s\"\n\
         [topology]\nkind = \"dumbbell\"\n\
         bottleneck = { rate = \"10Mbit/s\", delay = \"5ms\" }\n\
         access = { rate = \"1Gbit/s\", delay = \"1ms\" }\n\
         [[flows]]\ncc = \"newreno\"\n",
    )
    .unwrap();
    let scenario = scenario.to_str().unwrap();
    for args in [
        &["cc", "list"][..],
        &["sweep", "plan", scenario, "--seeds", "1..50"],
        &["sim", scenario],
        &["sim", scenario, "--json"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = Command::new(env!("CARGO_BIN_EXE_tputctl"))
            .args(args)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .expect("tputctl runs");
        let err = stderr(&o);
        assert!(
            o.status.success() && !err.contains("panicked") && !err.contains("Broken pipe"),
            "tputctl {}: {:?}, stderr: {err}",
            args.join(" "),
            o.status
        );
    }
}

/// `sim --harm` runs the NewReno twin and prints the harm table (and
/// harm.json with --out); a scenario without a guarantee group is bad input.
#[test]
fn sim_harm_compares_against_newreno_in_the_seat() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario = |first: &str| {
        format!(
            "duration = \"3s\"\n[topology]\nkind = \"dumbbell\"\n\
             bottleneck = {{ rate = \"20Mbit/s\", delay = \"5ms\", queue_packets = 30 }}\n\
             access = {{ rate = \"1Gbit/s\", delay = \"1ms\" }}\n\
             [[flows]]\ncc = \"{first}\"\ntarget = \"8Mbit/s\"\n[[flows]]\ncc = \"newreno\"\ncount = 2\n"
        )
    };
    let good = tmp.path().join("harm.toml");
    std::fs::write(&good, scenario("guarantee:target=8Mbit/s")).unwrap();
    let out = tmp.path().join("out");
    let o = tputctl(&[
        "sim",
        &good.to_string_lossy(),
        "--harm",
        "--out",
        &out.to_string_lossy(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("harm (RFC 9743 §3") && text.contains("2 competitor(s)"),
        "{text}"
    );
    assert!(text.contains("competitors' worst 2-s window"), "{text}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("harm.json")).unwrap()).unwrap();
    assert_eq!(json["competitors"], 2);
    let bad = tmp.path().join("noseat.toml");
    std::fs::write(&bad, scenario("newreno")).unwrap();
    let o = tputctl(&["sim", &bad.to_string_lossy(), "--harm"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("no flow group runs the guarantee controller"),
        "{}",
        stderr(&o)
    );
}

/// The columns of `sim`'s flow table and of `cc list` are as wide as their
/// longest entry: a long spec does not push the figures out of line.
#[test]
fn tables_keep_their_columns_with_long_specs() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("long.toml");
    let long = "guarantee:target=2Mbit/s,eval=32rtt,slot=16rtt,mode=paper,kmax_cwnd=1,physical=20Mbit/s";
    std::fs::write(
        &file,
        format!(
            "duration = \"500ms\"\n[topology]\nkind = \"dumbbell\"\n\
             bottleneck = {{ rate = \"20Mbit/s\", delay = \"5ms\", queue_packets = 30 }}\n\
             access = {{ rate = \"1Gbit/s\", delay = \"1ms\" }}\n\
             [[flows]]\ncc = \"{long}\"\n[[flows]]\ncc = \"newreno\"\n"
        ),
    )
    .unwrap();
    let o = tputctl(&["sim", file.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let header = out
        .lines()
        .find(|l| l.contains("controller") && l.contains("goodput"))
        .unwrap();
    let edge = header.find("goodput").unwrap() + "goodput".len();
    let rows: Vec<&str> = out
        .lines()
        .filter(|l| l.contains("Mbit/s") && l.contains(" s "))
        .collect();
    assert_eq!(rows.len(), 2, "{out}");
    for row in rows {
        // The goodput, "8.5 Mbit/s": a space before its unit, unlike the spec's rates.
        let end = row.find(" Mbit/s").unwrap() + " Mbit/s".len();
        assert_eq!(end, edge, "goodput out of its column:\n{header}\n{row}");
    }
    let list = stdout(&tputctl(&["cc", "list"]));
    // Every parameter line's doc starts in the same column.
    let starts: std::collections::BTreeSet<usize> = list
        .lines()
        .filter(|l| l.starts_with("    ") && (l.contains("default ") || l.contains("required")))
        .map(|l| {
            [l.find(" default "), l.find(" required")]
                .into_iter()
                .flatten()
                .min()
                .unwrap()
        })
        .collect();
    assert_eq!(starts.len(), 1, "default column not aligned: {starts:?}");
}
