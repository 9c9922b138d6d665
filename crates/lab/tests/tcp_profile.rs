//! The TCP model's profiles (`tcp = { profile = "ns2" | "linux" }`): what
//! each sets, that the other keys override it, and that the effective
//! settings are in the run's summary.

use std::time::Duration;

use tput_cc::ControllerSpec;
use tput_lab::scenario::{Scenario, validate};
use tput_tcp::{Recovery, TcpConfig};

/// A one-flow TCP scenario whose flow is `cc` with the `tcp` table `tcp`.
fn scenario(cc: &str, tcp: &str) -> String {
    format!(
        r#"
        duration = "3s"
        [topology]
        kind = "dumbbell"
        bottleneck = {{ rate = "10Mbit/s", delay = "10ms", queue_packets = 30 }}
        access = {{ rate = "1Gbit/s", delay = "1ms" }}
        [[flows]]
        cc = "{cc}"
        transport = "tcp"
        tcp = {tcp}
        "#
    )
}

/// The flow's TCP settings and controller as the run builds them.
fn settings(cc: &str, tcp: &str) -> (TcpConfig, ControllerSpec) {
    let s = Scenario::from_toml_str(&scenario(cc, tcp)).unwrap();
    validate(&s).unwrap();
    let spec = s.flows[0].tcp.clone().unwrap();
    (spec.config().unwrap(), spec.controller(&s.flows[0].cc).unwrap())
}

#[test]
fn the_ns2_profile_is_the_default() {
    let (named, cc) = settings("cubic", "{ profile = \"ns2\" }");
    let (default, _) = settings("cubic", "{}");
    assert_eq!(named, TcpConfig::default());
    assert_eq!(default, TcpConfig::default());
    assert_eq!(cc, "cubic".parse().unwrap(), "no HyStart, the spec's window");
}

#[test]
fn the_linux_profile_reaches_the_config_and_the_controller() {
    let (c, cc) = settings("cubic", "{ profile = \"linux\" }");
    assert_eq!(c.recovery, Recovery::Rack);
    assert!(c.sack && c.prr && c.timestamps);
    assert_eq!(c.delayed_ack, Some(Duration::from_millis(40)));
    assert_eq!(
        (c.min_rto, c.initial_rto),
        (Duration::from_millis(200), Duration::from_secs(1))
    );
    assert_eq!(cc, "cubic:hystart=true".parse().unwrap());
    let (_, cc) = settings("newreno", "{ profile = \"linux\" }");
    assert_eq!(cc, "newreno:hystart=true,iw=10".parse().unwrap());
    // A controller without HyStart or a settable window keeps its spec.
    let (_, cc) = settings("bbr", "{ profile = \"linux\" }");
    assert_eq!(cc, "bbr".parse().unwrap());
}

#[test]
fn every_key_overrides_the_profile() {
    let (c, cc) = settings(
        "newreno:iw=4",
        "{ profile = \"linux\", recovery = \"sack\", timestamps = false, delayed_ack = false, \
         min_rto = \"1s\", hystart = false }",
    );
    assert_eq!(c.recovery, Recovery::Sack);
    assert!(c.prr, "PRR stays with a SACK recovery");
    assert!(!c.timestamps);
    assert_eq!(c.delayed_ack, None);
    assert_eq!(c.min_rto, Duration::from_secs(1));
    assert_eq!(cc, "newreno:iw=4".parse().unwrap(), "the spec's iw wins, HyStart off");
    // A recovery without SACK drops the profile's PRR rather than refusing.
    let (c, _) = settings("newreno", "{ profile = \"linux\", recovery = \"newreno\" }");
    assert!(!c.prr && c.recovery == Recovery::NewReno);
    // And the explicit window wins over the spec's.
    let (_, cc) = settings("newreno:iw=4", "{ profile = \"linux\", initial_window = 2 }");
    assert_eq!(cc, "newreno:hystart=true,iw=2".parse().unwrap());
}

#[test]
fn bad_profiles_are_one_line_errors() {
    let check = |cc: &str, tcp: &str, want: &str| {
        let s = Scenario::from_toml_str(&scenario(cc, tcp)).unwrap();
        let e = validate(&s).unwrap_err().to_string();
        assert!(!e.contains('\n'), "{e}");
        assert!(e.contains(want), "{e} lacks {want}");
    };
    check(
        "cubic",
        "{ profile = \"bsd\" }",
        "flows[0].tcp.profile: unknown profile \"bsd\" (ns2 or linux)",
    );
    check("cubic", "{ initial_window = 4 }", "flows[0].tcp.initial_window");
    check("cubic", "{ recovery = \"rack\", sack = false }", "flows[0].tcp.sack");
}

#[test]
fn the_summary_prints_the_effective_settings() {
    use tput_lab::report::Summary;
    let s = Scenario::from_toml_str(&scenario("cubic", "{ profile = \"linux\", min_rto = \"300ms\" }")).unwrap();
    let r = tput_lab::scenario::run(&s, |_| {}).unwrap();
    let summary = Summary::new(&s, &r);
    let line = "group 0 over TCP, profile linux: recovery=rack sack prr timestamps delayed_ack=40ms \
                min_rto=300ms initial_rto=1000ms segment=1000B receive_window=16777216B controller_recovery=tcp; \
                controller cubic:hystart=true";
    assert!(summary.table().contains(line), "{}", summary.table());
    let json = serde_json::to_value(&summary).unwrap();
    assert_eq!(json["tcp"][0]["profile"], "linux");
    assert_eq!(json["tcp"][0]["cc"], "cubic:hystart=true");
    assert!(r.flows[0].bytes > 0);
}
