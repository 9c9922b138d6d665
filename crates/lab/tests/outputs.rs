//! The output files of a run with controller traces: streamed to disk, the
//! same bytes as rendered in memory, from traces held at a few bytes a sample.

use std::time::Duration;

use tput_lab::report::{OUTPUT_FILES, Summary, render_outputs, write_outputs};
use tput_lab::scenario::{FlowGroup, LinkSpec, Scenario, TopologySpec, run};

#[test]
fn streamed_outputs_are_the_rendered_ones_and_traces_stay_compact() {
    let link = |rate: &str, delay_us: u64, queue: u32| {
        LinkSpec::new(rate.parse().unwrap(), Duration::from_micros(delay_us)).with_queue_packets(queue)
    };
    let topology = TopologySpec::dumbbell(link("100Mbit/s", 5000, 30), link("1Gbit/s", 2500, 1000));
    let guarantee = FlowGroup::new(
        "guarantee:target=10Mbit/s,eval=32rtt,slot=16rtt,mode=paper"
            .parse()
            .unwrap(),
    )
    .with_target("10Mbit/s".parse().unwrap());
    let flows = vec![
        guarantee,
        FlowGroup::new("newreno".parse().unwrap()).times(2),
        FlowGroup::new("bbr".parse().unwrap()),
    ];
    let s = Scenario::new(Duration::from_secs(3), topology, flows);
    let r = run(&s, |_| {}).unwrap();
    let summary = Summary::new(&s, &r);

    let dir = std::env::temp_dir().join(format!("tput-outputs-{}", std::process::id()));
    let paths = write_outputs(&dir, &s, &r, &summary).unwrap();
    let rendered = render_outputs(&s, &r, &summary).unwrap();
    assert_eq!(paths.len(), OUTPUT_FILES.len());
    for ((name, text), path) in rendered.iter().zip(&paths) {
        assert!(path.ends_with(name));
        assert!(std::fs::read_to_string(path).unwrap() == *text, "{name} differs");
    }

    // cc.csv has a row per sample, in flow order.
    let cc = &rendered.iter().find(|(n, _)| *n == "cc.csv").unwrap().1;
    let samples: usize = r.flows.iter().map(|f| f.cc_trace.len()).sum();
    assert_eq!(cc.lines().count(), samples + 1);
    assert!(r.flows.iter().all(|f| f.cc_trace.len() > 100), "every upload is traced");
    let first = cc.lines().nth(1).unwrap();
    let t0 = r.flows[0].cc_trace.iter().next().unwrap();
    assert!(
        first.starts_with(&format!("1,{},{},", t0.time_secs, t0.cwnd_bytes)),
        "{first}"
    );
    // Every field of the guarantee controller is traced, and BBR's state.
    assert!(
        r.flows[0]
            .cc_trace
            .iter()
            .all(|c| c.k.is_some() && c.goal_bytes_per_sec.is_some())
    );
    assert!(r.flows[3].cc_trace.iter().all(|c| c.bbr_mode.is_some()));

    // A sample in memory is 128 bytes as a `CcSample`; held, a few.
    for f in &r.flows {
        let per_sample = f.cc_trace.encoded_bytes() as f64 / f.cc_trace.len() as f64;
        eprintln!("flow {} ({}): {per_sample:.2} bytes a sample", f.flow, f.cc);
        // The guarantee controller's k, k_bw and goal change at most samples
        // (9 bytes each); a NewReno or BBR sample is a header, a time and a window.
        let limit = if f.flow == 1 { 40.0 } else { 8.0 };
        assert!(per_sample < limit, "flow {}: {per_sample:.1} bytes a sample", f.flow);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
