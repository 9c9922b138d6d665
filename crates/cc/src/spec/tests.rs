//! Tests of spec strings: round trips, defaults, errors, the registry.

use super::*;
use crate::units::Rate;

#[test]
fn examples_parse_and_round_trip() {
    for s in [
        "newreno",
        "reno",
        "newreno:iw=2,lw=1",
        "newreno:lw=1",
        "newreno:iw=2,lw=1,count=acks",
        "newreno:count=bytes",
        "newreno:hystart=true",
        "cubic",
        "cubic:hystart=true",
        "cubic:beta=0.7",
        "cubic:beta=0.8,c=0.3,fast_convergence=false,reno_friendly=off",
        "vegas:alpha=2,beta=4",
        "vegas:alpha=1.5,beta=3,gamma=2",
        "ctcp",
        "compound:gamma=10,k=0.8",
        "fixed:rate=20Mbit/s",
        "guarantee:target=20Mbit/s,eval=32rtt,slot=16rtt",
        "guarantee:target=2.5MB/s,eval=1s",
        "tput:target=10Mbit/s,eval=64rtt,k_min=1,kmax_cwnd=1,physical=100Mbit/s",
        "guarantee:target=20Mbit/s,abw=inline",
        "guarantee:target=20Mbit/s,abw=auto",
        "guarantee:target=20Mbit/s,physical=100Mbit/s,abw=inline",
        "guarantee:target=20Mbit/s,mode=paper",
        "guarantee:target=20Mbit/s,mode=floor,margin=0.2,overhead=0",
        "bbr",
        "bbr:startup_gain=2.885,drain_gain=0.35,loss_thresh=0.05,beta=0.5",
        "bbr:probe_rtt_interval=10s,min_rtt_window=20s,probe_rtt_duration=100ms",
        "bbr:cwnd_gain=2.5,down_gain=0.85,up_gain=1.5,up_cwnd_gain=3,probe_rtt_gain=0.75",
        "bbr:headroom=0,margin=0,iw=32,seed=18446744073709551615",
    ] {
        let spec: ControllerSpec = s.parse().unwrap_or_else(|e| panic!("{s}: {e}"));
        let printed = spec.to_string();
        assert_eq!(printed.parse::<ControllerSpec>().unwrap(), spec, "{s} -> {printed}");
    }
    assert_eq!("cubic:beta=0.7".parse::<ControllerSpec>().unwrap().to_string(), "cubic");
    assert_eq!(
        "cubic:hystart=true".parse::<ControllerSpec>().unwrap().to_string(),
        "cubic:hystart=true"
    );
    assert_eq!(
        "bbr:beta=0.7,probe_rtt_interval=5000ms,seed=0"
            .parse::<ControllerSpec>()
            .unwrap()
            .to_string(),
        "bbr"
    );
    assert_eq!(
        "bbr:seed=3,probe_rtt_duration=0.25s,loss_thresh=0.05"
            .parse::<ControllerSpec>()
            .unwrap()
            .to_string(),
        "bbr:probe_rtt_duration=250ms,loss_thresh=0.05,seed=3"
    );
    match "bbr:probe_rtt_interval=2s,iw=4".parse::<ControllerSpec>().unwrap() {
        ControllerSpec::Bbr(c) => {
            assert_eq!(c.probe_rtt_interval, std::time::Duration::from_secs(2));
            assert_eq!(c.initial_window, Some(4));
            assert_eq!(c.beta, BbrConfig::default().beta);
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(
        "newreno:lw=2,iw=2".parse::<ControllerSpec>().unwrap().to_string(),
        "newreno:iw=2"
    );
    assert_eq!(
        "newreno:iw=2,lw=1".parse::<ControllerSpec>().unwrap(),
        ControllerSpec::NewReno(NewRenoConfig::ns2())
    );
    let guarantee = |s: &str| s.parse::<ControllerSpec>().unwrap().to_string();
    assert_eq!(
        guarantee("guarantee:target=20Mbit/s,abw=auto"),
        "guarantee:target=20Mbit/s"
    );
    assert_eq!(
        guarantee("guarantee:abw=inline,target=20Mbit/s"),
        "guarantee:target=20Mbit/s,abw=inline"
    );
    match "guarantee:target=1Mbit/s,abw=inline".parse::<ControllerSpec>().unwrap() {
        ControllerSpec::Guarantee(c) => assert_eq!(c.abw, AbwSource::Inline),
        other => panic!("{other:?}"),
    }
    assert_eq!(GuaranteeConfig::new(Rate::from_mbit_per_sec(1)).abw, AbwSource::Auto);
    assert_eq!(
        "vegas:alpha=1".parse::<ControllerSpec>().unwrap().to_string(),
        "vegas:alpha=1"
    );
}

#[test]
fn errors_name_the_bad_part() {
    let cases = [
        ("bbr2", "unknown controller `bbr2`"),
        ("bbr2", "newreno (reno), cubic"),
        ("bbr2", "guarantee (tput)"),
        ("bbr:gain=2", "unknown parameter `gain` for bbr (known: startup_gain,"),
        ("bbr:beta=0", "beta: 0 must be in (0, 1]"),
        ("bbr:beta=x", "beta: `x` is not a number"),
        ("bbr:loss_thresh=1", "loss_thresh: 1 must be in (0, 1)"),
        ("bbr:startup_gain=0.9", "startup_gain: 0.9 must be in [1, 100]"),
        ("bbr:up_gain=inf", "up_gain: `inf` is not finite"),
        ("bbr:drain_gain=2", "drain_gain: 2 must be in (0, 1]"),
        ("bbr:headroom=1", "headroom: 1 must be in [0, 1)"),
        ("bbr:margin=100", "margin: 100 must be in [0, 100) percent"),
        (
            "bbr:probe_rtt_interval=5",
            "probe_rtt_interval: invalid duration `5`: missing unit",
        ),
        ("bbr:probe_rtt_duration=0s", "probe_rtt_duration: must be positive"),
        (
            "bbr:probe_rtt_interval=20s",
            "min_rtt_window: 10s must not be shorter than probe_rtt_interval 20s",
        ),
        ("bbr:iw=0", "iw: 0 packets is not in"),
        ("bbr:seed=-1", "seed: `-1` is not a whole number"),
        (
            "newreno:x=1",
            "unknown parameter `x` for newreno (known: iw, lw, count, hystart)",
        ),
        ("newreno:count=segments", "count: `segments` is not bytes or acks"),
        ("newreno:iw=0", "iw: 0 packets is not in"),
        ("newreno:lw=1.5", "lw: `1.5` is not a whole number of packets"),
        ("cubic:gamma=1", "unknown parameter `gamma` for cubic"),
        ("cubic:beta", "`beta` is not key=value"),
        ("cubic:beta=1.5", "beta"),
        ("cubic:beta=0.5,beta=0.6", "given twice"),
        ("fixed", "fixed needs rate="),
        ("fixed:rate=20", "rate: invalid rate `20`"),
        ("guarantee:eval=32rtt", "guarantee needs target="),
        ("guarantee:target=1Mbit/s,slot=3rtt", "slot"),
        ("guarantee:target=1Mbit/s,eval=32rtt,slot=64rtt", "slot"),
        ("guarantee:target=1Mbit/s,eval=soon", "eval"),
        ("vegas:alpha=5,beta=4", "alpha"),
        ("ctcp:k=nan", "k:"),
        (
            "guarantee:target=1Mbit/s,abw=oracle",
            "abw: `oracle` is not a bandwidth source",
        ),
        ("guarantee:target=1Mbit/s,mode=strict", "mode: `strict` is not a mode"),
        ("guarantee:target=1Mbit/s,margin=2", "margin: 2 must be in [0, 1]"),
        (
            "guarantee:target=1Mbit/s,overhead=-1",
            "overhead: `-1` is not a whole number",
        ),
        (
            "guarantee:target=1Mbit/s,overhead=1500",
            "overhead: 1500 bytes must be below",
        ),
    ];
    for (s, want) in cases {
        let e = s.parse::<ControllerSpec>().unwrap_err().to_string();
        assert!(e.contains(want), "{s}: got `{e}`, want `{want}`");
        assert!(e.contains(&format!("`{s}`")), "{e}");
    }
}

#[test]
fn errors_are_typed() {
    let kind = |s: &str| s.parse::<ControllerSpec>().unwrap_err().kind().clone();
    assert_eq!(kind("hybla"), SpecErrorKind::UnknownController { name: "hybla".into() });
    assert_eq!(kind("cubic:beta"), SpecErrorKind::NotKeyValue { item: "beta".into() });
    assert_eq!(
        kind("cubic:gain=2"),
        SpecErrorKind::UnknownParameter {
            controller: "cubic",
            key: "gain".into()
        }
    );
    assert_eq!(
        kind("cubic:c=1,c=2"),
        SpecErrorKind::DuplicateParameter { key: "c".into() }
    );
    assert_eq!(
        kind("fixed"),
        SpecErrorKind::MissingParameter {
            controller: "fixed",
            key: "rate"
        }
    );
    match kind("vegas:gamma=x") {
        SpecErrorKind::BadValue { key, value, .. } => assert_eq!((key, value.as_str()), ("gamma", "x")),
        other => panic!("{other:?}"),
    }
    match kind("ctcp:k=2") {
        SpecErrorKind::Invalid(e) => assert_eq!((e.controller(), e.key()), ("ctcp", "k")),
        other => panic!("{other:?}"),
    }
}

#[test]
fn registry_names_every_spec() {
    for info in registry() {
        let needs: Vec<String> = info
            .params
            .iter()
            .filter(|p| p.default.is_none())
            .map(|p| format!("{}={}", p.name, if p.unit == "rate" { "1Mbit/s" } else { "1" }))
            .collect();
        let s = if needs.is_empty() {
            info.name.to_owned()
        } else {
            format!("{}:{}", info.name, needs.join(","))
        };
        let spec: ControllerSpec = s.parse().unwrap();
        assert_eq!(spec.name(), info.name);
        // What the registry (and so `tputctl cc list`) calls required is:
        // the spec fails without it.
        for (i, missing) in needs.iter().enumerate() {
            let rest: Vec<&str> = needs
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(_, n)| n.as_str())
                .collect();
            let s = if rest.is_empty() {
                info.name.to_owned()
            } else {
                format!("{}:{}", info.name, rest.join(","))
            };
            assert!(
                s.parse::<ControllerSpec>().is_err(),
                "{s} parses without {missing}, which the registry calls required"
            );
        }
    }
}
