//! Every scenario file shipped in `scenarios/`, and the complete example in
//! `docs/scenarios.md`, parses and validates; bad files fail with an error
//! that names the bad key or value.

use std::path::{Path, PathBuf};

use tput_lab::scenario::{Scenario, TopologySpec, validate};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Parse and validate, or say why not.
fn load(text: &str) -> Result<Scenario, String> {
    let s = Scenario::from_toml_str(text).map_err(|e| e.to_string())?;
    validate(&s).map_err(|e| e.to_string())?;
    Ok(s)
}

#[test]
fn every_scenario_file_parses_and_validates() {
    let dir = repo().join("scenarios");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no scenarios in {}", dir.display());
    for path in &files {
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // Relative paths (a link's `trace`) are relative to the file.
        let s = Scenario::from_toml_file(path).unwrap_or_else(|e| panic!("{e}"));
        validate(&s).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let stem = path.file_stem().and_then(|s| s.to_str()).expect("utf-8 file name");
        assert_eq!(
            s.name.as_deref(),
            Some(stem),
            "{}: name should match the file",
            path.display()
        );
        assert!(
            text.contains(&format!("sim scenarios/{stem}.toml --out out/{stem}")),
            "{}: the header should say how to run it",
            path.display()
        );
    }
}

#[test]
fn shipped_scenarios_match_the_papers() {
    let load_file = |name: &str| {
        let path = repo().join("scenarios").join(name);
        load(&std::fs::read_to_string(&path).expect("readable")).expect("valid")
    };
    let fig4 = load_file("seed000-fig4.toml");
    let counts: Vec<u32> = fig4.flows.iter().map(|g| g.count).collect();
    assert_eq!(counts, [1, 1, 4, 25]);
    assert_eq!(fig4.flows[0].target.map(|r| r.bits_per_sec()), Some(20_000_000));
    match &fig4.topology {
        TopologySpec::Dumbbell { bottleneck, access, .. } => {
            assert_eq!(bottleneck.rate.bits_per_sec(), 100_000_000);
            assert_eq!(bottleneck.queue_packets, Some(30));
            assert_eq!(access.delay, std::time::Duration::from_micros(2500));
        }
        other => panic!("fig4 should be a dumbbell: {other:?}"),
    }
    let cut = load_file("seed001-cutoff.toml");
    match &cut.topology {
        TopologySpec::Chain { hops, .. } => {
            assert_eq!(hops.len(), 2);
            // The paper's cut is in the switch, on what it forwards.
            assert!(hops[0].cutoff.is_none());
            let c = hops[1].cutoff.as_ref().expect("cut on the switch's output");
            assert_eq!(c.connected, 0.89);
            assert_eq!(cut.mtu, 1472, "1500-byte IP packets");
        }
        other => panic!("seed001 should be a chain: {other:?}"),
    }
    let files = load_file("seed003-files.toml");
    let f = files.flows[0].files.as_ref().expect("file workload");
    assert_eq!(f.mean_size, 625_000);
    // The paper's load: 10 Mbit/s per node (5 Mbit every 0.5 s), 5 nodes,
    // at the 100 Mbit/s reference rate.
    assert_eq!(f.mean_gap, std::time::Duration::from_millis(500));
    assert_eq!(files.flows[0].count, 5);
    assert_eq!(f.drain, Some(std::time::Duration::from_secs(30)));
}

/// A small valid scenario with `line` appended to the `[topology.bottleneck]` table.
fn with_bottleneck_line(line: &str) -> String {
    format!(
        r#"
duration = "1s"

[topology]
kind = "dumbbell"

[topology.bottleneck]
rate = "10Mbit/s"
delay = "5ms"
{line}

[topology.access]
rate = "1Gbit/s"
delay = "1ms"

[[flows]]
cc = "newreno"
"#
    )
}

#[test]
fn the_template_of_the_error_tests_is_valid() {
    load(&with_bottleneck_line("")).expect("valid");
}

#[test]
fn unknown_keys_are_errors() {
    let e = load(&with_bottleneck_line("queue_pakets = 30")).unwrap_err();
    assert!(e.contains("queue_pakets"), "{e}");
    let e = load(&format!("colour = \"blue\"\n{}", with_bottleneck_line(""))).unwrap_err();
    assert!(e.contains("colour"), "{e}");
    let e =
        load(&with_bottleneck_line("").replace("cc = \"newreno\"", "cc = \"newreno\"\nstart_at = \"1s\"")).unwrap_err();
    assert!(e.contains("start_at"), "{e}");
    let e = load(&with_bottleneck_line("").replace("kind = \"dumbbell\"", "kind = \"star\"")).unwrap_err();
    assert!(e.contains("star"), "{e}");
    let e =
        load(&with_bottleneck_line("").replace("kind = \"dumbbell\"", "kind = \"dumbbell\"\nhops = []")).unwrap_err();
    assert!(e.contains("hops"), "{e}");
    let e = load(&with_bottleneck_line("files = { mean_gap = \"1s\" }")).unwrap_err();
    assert!(e.contains("files"), "{e}");
}

#[test]
fn bad_values_are_named() {
    let e = load(&with_bottleneck_line("").replace("rate = \"10Mbit/s\"", "rate = \"10Mbits\"")).unwrap_err();
    assert!(e.contains("invalid rate `10Mbits`"), "{e}");
    // Inside `[topology]` (an internally tagged enum) the parser reports the
    // table, not the line; the message still names the value.
    let e = load(&with_bottleneck_line("").replace("delay = \"5ms\"", "delay = \"5\"")).unwrap_err();
    assert!(e.contains("invalid duration `5`") && e.contains("missing unit"), "{e}");
    // Elsewhere the error points at the key's line.
    let text = with_bottleneck_line("").replace("cc = \"newreno\"", "cc = \"newreno\"\ntarget = \"fast\"");
    let line = 1 + text.lines().position(|l| l == "target = \"fast\"").unwrap();
    let e = load(&text).unwrap_err();
    assert!(
        e.starts_with(&format!("line {line}: ")) && e.contains("invalid rate `fast`"),
        "{e}"
    );
    let e = load(&with_bottleneck_line("").replace("\"newreno\"", "\"cubic:beta=1.5\"")).unwrap_err();
    assert!(e.contains("cubic:beta=1.5"), "{e}");
    // Caught by `validate`, not the parser.
    let e = load(&with_bottleneck_line("queue_packets = 30\nqueue_bytes = \"64KiB\"")).unwrap_err();
    assert!(e.contains("topology.bottleneck") && e.contains("queue_bytes"), "{e}");
    let e = load(&with_bottleneck_line("").replace("cc = \"newreno\"", "cc = \"newreno\"\nstop = \"2s\"")).unwrap_err();
    assert!(e.contains("flows[0]") && e.contains("stop"), "{e}");
    let e = load(&with_bottleneck_line("").replace("cc = \"newreno\"", "cc = \"newreno\"\neval_slot = \"32rtts\""))
        .unwrap_err();
    assert!(e.contains("32rtts"), "{e}");
}

/// The first ```toml fenced block of `markdown`.
fn first_toml_block(markdown: &str) -> Option<String> {
    let mut lines = markdown.lines();
    lines.by_ref().find(|l| l.trim_start().starts_with("```toml"))?;
    let mut block = String::new();
    for l in lines {
        if l.trim_start().starts_with("```") {
            return Some(block);
        }
        block.push_str(l);
        block.push('\n');
    }
    None
}

#[test]
fn the_documented_example_is_valid() {
    let path = repo().join("docs/scenarios.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let example = first_toml_block(&doc).expect("a ```toml block in docs/scenarios.md");
    let s = load(&example).unwrap_or_else(|e| panic!("the example in {}: {e}", path.display()));
    assert!(!s.flows.is_empty());
}

#[test]
fn every_documented_key_exists() {
    // Every field of the structs the example uses (serialized with `None`
    // as null, so unset fields count too) is named in the documentation.
    let path = repo().join("docs/scenarios.md");
    let doc = std::fs::read_to_string(&path).expect("readable");
    let example = first_toml_block(&doc).expect("example");
    let s = load(&example).expect("valid");
    let value = serde_json::to_value(&s).expect("serializable");
    let mut keys = Vec::new();
    collect_keys(&value, &mut keys);
    for k in keys {
        assert!(doc.contains(&format!("`{k}`")), "key `{k}` is not documented");
    }
}

fn collect_keys(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(t) => {
            for (k, v) in t {
                out.push(k.clone());
                collect_keys(v, out);
            }
        }
        serde_json::Value::Array(a) => a.iter().for_each(|v| collect_keys(v, out)),
        _ => {}
    }
}

#[test]
fn queue_tables_parse_and_bad_parameters_name_the_key() {
    let s = load(&with_bottleneck_line(
        "queue = { kind = \"fq_codel\", target = \"2ms\", interval = \"50ms\", ecn = false, quantum = 300 }",
    ))
    .expect("valid");
    let TopologySpec::Dumbbell { bottleneck, .. } = &s.topology else {
        panic!("a dumbbell")
    };
    let cfg = tput_lab::scenario::link_config(bottleneck, "b").expect("valid link");
    match cfg.discipline {
        tput_netsim::QueueDiscipline::FqCodel(c) => {
            assert_eq!(
                (c.target, c.interval, c.ecn, c.quantum, c.flows),
                (
                    std::time::Duration::from_millis(2),
                    std::time::Duration::from_millis(50),
                    false,
                    300,
                    1024
                )
            );
        }
        other => panic!("{other:?}"),
    }
    let e = load(&with_bottleneck_line("queue = { kind = \"codel\", quantum = 300 }")).unwrap_err();
    assert_eq!(
        e,
        "topology.bottleneck.queue.quantum: not a parameter of kind = \"codel\""
    );
    let e = load(&with_bottleneck_line(
        "queue = { kind = \"red\", min_th = 20, max_th = 10 }",
    ))
    .unwrap_err();
    assert_eq!(
        e,
        "topology.bottleneck.queue.max_th: must be greater than min_th (20), got 10"
    );
    let e = load(&with_bottleneck_line("queue = { kind = \"codel\", target = \"0s\" }")).unwrap_err();
    assert_eq!(e, "topology.bottleneck.queue.target: must be greater than 0");
    let e = load(&with_bottleneck_line("queue = { kind = \"pie\" }")).unwrap_err();
    assert!(e.contains("pie"), "{e}");
    let e = load(&with_bottleneck_line("queue = { kind = \"red\", colour = 1 }")).unwrap_err();
    assert!(e.contains("colour"), "{e}");
    let e = load(
        &with_bottleneck_line("").replace("cc = \"newreno\"", "cc = \"newreno\"\ntransport = \"tcp\"\necn = true"),
    )
    .unwrap_err();
    assert!(e.starts_with("flows[0].ecn: QUIC only"), "{e}");
}
