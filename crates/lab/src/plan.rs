//! Sweeps as data: a plan is a list of self-contained points (a whole
//! scenario with its seed), one JSON object per line, that any machine can
//! run one at a time and in any order; the results are merged afterwards.
//!
//! ```text
//! tputctl sweep plan scenarios/seed000-fig6-n30.toml \
//!     --vary 'flows[1].count=1,2,5,10' --seeds 1..3 > points.jsonl
//! parallel tputctl sweep run points.jsonl --index {} --out res ::: $(seq 0 11)
//! tputctl sweep collect res
//! ```
//!
//! A point's result depends only on the point: its scenario and seed fix
//! every random choice of the simulator, so neither the machine nor the
//! order nor the number of jobs changes a byte of it.
//!
//! ```
//! use tput_lab::plan::{Vary, plan};
//!
//! let base = r#"
//! duration = "2s"
//! [topology]
//! kind = "dumbbell"
//! bottleneck = { rate = "10Mbit/s", delay = "5ms", queue_packets = 30 }
//! access = { rate = "1Gbit/s", delay = "1ms", queue_packets = 1000 }
//! [[flows]]
//! cc = "newreno"
//! "#;
//! let vary = vec![Vary::parse("flows[0].cc=newreno,cubic")?];
//! let points = plan(base, &vary, &[1, 2])?;
//! assert_eq!(points.len(), 4);
//! assert_eq!(points[1].seed, 2);
//! assert_eq!(points[2].scenario.flows[0].cc.to_string(), "cubic");
//! # Ok::<(), tput_lab::Error>(())
//! ```

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::report::Summary;
use crate::scenario::{self, Scenario, ScenarioResult};
use tput_transport::IntervalStats;

/// One varied key and its values: `PATH=V1,V2,...`.
///
/// `PATH` names a key of the scenario file: table keys separated by dots,
/// array elements by `[N]` (`flows[1].count`, `topology.bottleneck.rate`,
/// `seed`). Each value is read as TOML if it is a TOML value (`2`, `1.5`,
/// `true`, `"text"`), else as a string (`10Mbit/s`, `newreno`). Values are
/// separated by commas, except that a comma followed by `name=` continues
/// the value before it, so controller specs keep their parameters:
/// `flows[0].cc=guarantee:target=10Mbit/s,eval=1s,newreno` has two values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Vary {
    /// The key's path.
    pub path: String,
    /// Its values, in order, as they were written.
    pub values: Vec<String>,
}

impl Vary {
    /// Parse `PATH=V1,V2,...`; the error names what is wrong.
    pub fn parse(text: &str) -> Result<Vary, Error> {
        let bad = |why: &str| Error::Invalid(format!("--vary `{text}`: {why}"));
        let (path, list) = text.split_once('=').ok_or_else(|| bad("expected PATH=V1,V2,..."))?;
        let path = path.trim();
        parse_path(path).map_err(|e| bad(&e))?;
        let mut values: Vec<String> = Vec::new();
        for part in list.split(',') {
            let continues = part
                .split_once('=')
                .is_some_and(|(k, _)| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
            match values.last_mut() {
                Some(last) if continues && last.contains(':') => {
                    last.push(',');
                    last.push_str(part);
                }
                _ => values.push(part.trim().to_string()),
            }
        }
        if values.iter().any(String::is_empty) {
            return Err(bad("an empty value"));
        }
        Ok(Vary {
            path: path.to_string(),
            values,
        })
    }
}

/// Parse `--seeds`: `A..B` (inclusive) or a comma-separated list.
pub fn parse_seeds(text: &str) -> Result<Vec<u64>, Error> {
    let bad = |why: &str| Error::Invalid(format!("--seeds `{text}`: {why}"));
    let num = |s: &str| {
        s.trim()
            .parse::<u64>()
            .map_err(|_| bad("expected A..B or a list of seeds"))
    };
    let seeds = if let Some((a, b)) = text.split_once("..") {
        let (a, b) = (num(a)?, num(b.trim_start_matches('='))?);
        if b < a {
            return Err(bad("the range is empty"));
        }
        if b - a >= 100_000 {
            return Err(bad("more than 100000 seeds"));
        }
        (a..=b).collect()
    } else {
        text.split(',').map(num).collect::<Result<Vec<_>, _>>()?
    };
    Ok(seeds)
}

/// One segment of a path: a table key or an array index.
#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

fn parse_path(path: &str) -> Result<Vec<Segment>, String> {
    let mut out = Vec::new();
    for part in path.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if key.is_empty() || !key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!("`{part}` is not a key"));
        }
        out.push(Segment::Key(key.to_string()));
        while !rest.is_empty() {
            let close = rest.find(']').ok_or_else(|| format!("`{part}`: missing `]`"))?;
            let n = rest[1..close]
                .parse::<usize>()
                .map_err(|_| format!("`{part}`: `{}` is not an index", &rest[1..close]))?;
            out.push(Segment::Index(n));
            rest = &rest[close + 1..];
            if !rest.is_empty() && !rest.starts_with('[') {
                return Err(format!("`{part}`: unexpected `{rest}`"));
            }
        }
    }
    Ok(out)
}

/// A value as TOML if it is one, else as a string.
fn toml_value(raw: &str) -> toml::Value {
    toml::from_str::<toml::Table>(&format!("v = {raw}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(raw.to_string()))
}

/// Set `path` in `doc` to `value`; a missing table key is created, a
/// missing array element is an error.
fn set(doc: &mut toml::Value, path: &str, value: toml::Value) -> Result<(), String> {
    let segments = parse_path(path)?;
    let mut at = doc;
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        at = match seg {
            Segment::Key(k) => {
                let table = at
                    .as_table_mut()
                    .ok_or_else(|| format!("`{path}`: `{k}` is inside something that is not a table"))?;
                if last {
                    table.insert(k.clone(), value);
                    return Ok(());
                }
                table
                    .entry(k.clone())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()))
            }
            Segment::Index(n) => {
                let array = at
                    .as_array_mut()
                    .ok_or_else(|| format!("`{path}`: `[{n}]` indexes something that is not an array"))?;
                let len = array.len();
                let slot = array
                    .get_mut(*n)
                    .ok_or_else(|| format!("`{path}`: index {n} is out of range (the array has {len})"))?;
                if last {
                    *slot = value;
                    return Ok(());
                }
                slot
            }
        };
    }
    Ok(())
}

/// One point of a plan: everything needed to run it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// The plan's identity (a hash of the base scenario, the varied keys and
    /// the seeds): results of different plans are never merged.
    pub plan: String,
    /// This point's index, from 0.
    pub index: usize,
    /// Points in the plan.
    pub points: usize,
    /// The value of each varied key at this point, in `--vary` order.
    pub vary: BTreeMap<String, String>,
    /// The seed.
    pub seed: u64,
    /// The whole scenario, seed included (written without the keys a
    /// scenario file would leave out, so it reads back as a file would).
    #[serde(serialize_with = "without_nulls")]
    pub scenario: Scenario,
    /// What the result keeps beyond the summary (absent in a line: nothing,
    /// as `tputctl sweep plan` writes; see [`Keep`]).
    #[serde(default, skip_serializing_if = "Keep::is_nothing")]
    pub keep: Keep,
}

/// What a point's result keeps beyond its [`Summary`]: a reproduction
/// builds its figures from per-flow detail (evaluation slots, TCP and file
/// statistics, interval records) that the summary leaves out. Every part is
/// as deterministic as the summary. Nothing is kept unless asked for, so a
/// plain sweep's result files stay small.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Keep {
    /// Keep the run's whole [`ScenarioResult`] in [`PointResult::result`]:
    /// every flow (slots, TCP statistics, file times), the bottleneck's and
    /// every link's counters, and the aggregates; without the three series
    /// below unless they are asked for too. Controller traces are never
    /// kept (a point runs without them).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub result: bool,
    /// Keep every flow's sender-side interval records ([`FlowResult::intervals`](crate::scenario::FlowResult::intervals)).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub intervals: bool,
    /// With `intervals`, keep them collapsed into runs of sending and of
    /// silence ([`collapse_intervals`]): what a figure of idle times needs,
    /// in a fraction of the space (a 10-s run's 1 000 records of 10 ms
    /// become a handful).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub interval_runs: bool,
    /// Keep the per-flow delivered-bytes samples ([`ScenarioResult::delivered`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub delivered: bool,
    /// Keep the bottleneck's queue samples ([`ScenarioResult::queue`]).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub queue: bool,
    /// Count the run's timeouts (QUIC senders' probe timeouts, the TCP
    /// model's retransmission timeouts; see [`crate::timeouts`]) into
    /// [`PointResult::timeouts`]. A measurement made while the point runs:
    /// quinn-proto reports its PTOs only as a trace event.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timeouts: bool,
}

impl Keep {
    /// The whole result without its series (intervals, delivered, queue).
    pub fn result() -> Keep {
        Keep {
            result: true,
            ..Keep::default()
        }
    }

    /// The whole result with every series.
    pub fn everything() -> Keep {
        Keep {
            result: true,
            intervals: true,
            delivered: true,
            queue: true,
            timeouts: true,
            interval_runs: false,
        }
    }

    /// Whether nothing beyond the summary is kept.
    pub fn is_nothing(&self) -> bool {
        *self == Keep::default()
    }

    /// `r` cut down to what `self` keeps (`None` if nothing is).
    fn apply(&self, mut r: ScenarioResult) -> Option<ScenarioResult> {
        if !self.result {
            return None;
        }
        for f in &mut r.flows {
            f.cc_trace = Default::default();
            if !self.intervals {
                f.intervals = Vec::new();
            } else if self.interval_runs {
                f.intervals = collapse_intervals(&f.intervals);
            }
        }
        if !self.delivered {
            r.delivered = Vec::new();
        }
        if !self.queue {
            r.queue = Vec::new();
        }
        Some(r)
    }
}

/// `records` collapsed into alternating runs: each run of consecutive
/// records that delivered bytes, and each run of records that delivered
/// none, becomes one record from the first one's start to the last one's
/// end, with the run's bytes, written bytes, losses and congestion events,
/// its goodput over the whole run, and the last record's window, RTTs and
/// controller state. Collapsing collapsed records changes nothing, so a
/// measurement made on collapsed records gives the same figures whether the
/// records were collapsed before they were kept ([`Keep::interval_runs`])
/// or not.
pub fn collapse_intervals(records: &[IntervalStats]) -> Vec<IntervalStats> {
    let mut out: Vec<IntervalStats> = Vec::new();
    for r in records {
        match out.last_mut() {
            Some(run) if (run.bytes == 0) == (r.bytes == 0) => {
                run.end_secs = r.end_secs;
                run.bytes += r.bytes;
                run.written_bytes += r.written_bytes;
                run.lost_packets += r.lost_packets;
                run.congestion_events += r.congestion_events;
                run.cwnd_bytes = r.cwnd_bytes;
                run.srtt_ms = r.srtt_ms;
                run.min_rtt_ms = r.min_rtt_ms;
                run.controller = r.controller.clone();
                let secs = run.end_secs - run.start_secs;
                run.goodput_bps = if secs > 0.0 { run.bytes as f64 * 8.0 / secs } else { 0.0 };
            }
            _ => out.push(r.clone()),
        }
    }
    out
}

/// `s` as JSON without `null` members: a scenario file has no nulls (TOML
/// cannot say null), and its optional keys read an absent key as unset.
fn without_nulls<S: serde::Serializer>(s: &Scenario, ser: S) -> Result<S::Ok, S::Error> {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(m) => {
                m.retain(|_, x| !x.is_null());
                m.values_mut().for_each(strip);
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(strip),
            _ => {}
        }
    }
    let mut v = serde_json::to_value(s).map_err(serde::ser::Error::custom)?;
    strip(&mut v);
    v.serialize(ser)
}

/// The points of a sweep over `base` (the text of a scenario file): every
/// combination of the varied values (the first `--vary` outermost), each
/// with every seed (innermost). Every point is validated here, so a plan
/// that is written runs.
pub fn plan(base: &str, vary: &[Vary], seeds: &[u64]) -> Result<Vec<Point>, Error> {
    plan_in(base, None, vary, seeds)
}

/// [`plan`] of a scenario file's text, its relative paths (links' `trace`)
/// taken relative to the file's directory `dir` ([`Scenario::resolve_paths`]):
/// the points hold the resolved paths.
pub fn plan_in(base: &str, dir: Option<&std::path::Path>, vary: &[Vary], seeds: &[u64]) -> Result<Vec<Point>, Error> {
    let doc: toml::Value = toml::from_str::<toml::Table>(base)
        .map(toml::Value::Table)
        .map_err(|e| Error::Invalid(format!("the scenario: {}", e.message())))?;
    let base_scenario = Scenario::from_toml_str(base)?;
    let seeds: Vec<u64> = if seeds.is_empty() {
        vec![base_scenario.seed]
    } else {
        seeds.to_vec()
    };
    let id = {
        let text = serde_json::to_string(&(&doc, vary, &seeds)).map_err(|e| Error::Run(e.to_string()))?;
        format!("{:016x}", fnv1a(text.as_bytes()))
    };
    let combos: usize = vary.iter().map(|v| v.values.len()).product();
    let total = combos * seeds.len();
    if total > 1_000_000 {
        return Err(Error::Invalid(format!("{total} points: at most 1000000")));
    }
    let mut points = Vec::with_capacity(total);
    for combo in 0..combos {
        let mut doc = doc.clone();
        let mut values = BTreeMap::new();
        let mut rest = combo;
        let mut chosen = vec![0; vary.len()];
        for (i, v) in vary.iter().enumerate().rev() {
            chosen[i] = rest % v.values.len();
            rest /= v.values.len();
        }
        for (v, &c) in vary.iter().zip(&chosen) {
            let raw = &v.values[c];
            set(&mut doc, &v.path, toml_value(raw)).map_err(Error::Invalid)?;
            values.insert(v.path.clone(), raw.clone());
        }
        let mut scenario =
            Scenario::deserialize(doc).map_err(|e| Error::Invalid(format!("{values:?}: {}", e.message())))?;
        if let Some(dir) = dir {
            scenario.resolve_paths(dir);
        }
        for &seed in &seeds {
            let mut s = scenario.clone();
            s.seed = seed;
            scenario::validate(&s).map_err(|e| Error::Invalid(format!("{values:?}, seed {seed}: {e}")))?;
            points.push(Point {
                plan: id.clone(),
                index: points.len(),
                points: total,
                vary: values.clone(),
                seed,
                scenario: s,
                keep: Keep::default(),
            });
        }
    }
    Ok(points)
}

/// A plan of scenarios built in code (a reproduction's points), in order:
/// each with its labels (shown as [`Point::vary`], e.g. the figure and the
/// x value it belongs to) and what its result keeps. Every scenario is
/// validated here. The plan's identity is a hash of all of it, so two
/// builds of the same points (same options) have the same identity, and
/// results of a plan built with other options are never mistaken for them.
pub fn plan_scenarios(items: Vec<(BTreeMap<String, String>, Scenario, Keep)>) -> Result<Vec<Point>, Error> {
    let total = items.len();
    if total > 1_000_000 {
        return Err(Error::Invalid(format!("{total} points: at most 1000000")));
    }
    let mut hash = fnv1a(b"plan_scenarios");
    for (i, (labels, s, keep)) in items.iter().enumerate() {
        scenario::validate(s).map_err(|e| Error::Invalid(format!("point {i} {labels:?}: {e}")))?;
        let text = serde_json::to_string(&(labels, s, keep)).map_err(|e| Error::Run(e.to_string()))?;
        // Chain the points' hashes: order matters, and no separator is needed.
        hash = fnv1a(format!("{hash:016x}{text}").as_bytes());
    }
    let id = format!("{hash:016x}");
    Ok(items
        .into_iter()
        .enumerate()
        .map(|(index, (vary, scenario, keep))| Point {
            plan: id.clone(),
            index,
            points: total,
            vary,
            seed: scenario.seed,
            scenario,
            keep,
        })
        .collect())
}

/// `points` as a plan file's text: one JSON object per line, as `tputctl
/// sweep plan` writes and [`read_points`] reads.
pub fn plan_text(points: &[Point]) -> Result<String, Error> {
    let mut out = String::new();
    for p in points {
        out += &serde_json::to_string(p).map_err(|e| Error::Run(e.to_string()))?;
        out.push('\n');
    }
    Ok(out)
}

/// FNV-1a, 64 bits: a plan's identity (not a security property).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The points of a plan file (JSON lines, as `tputctl sweep plan` writes).
pub fn read_points(path: &Path) -> Result<Vec<Point>, Error> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Error::Invalid(format!("cannot read {}: {e}", path.display())))?;
    let mut points = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let p: Point = serde_json::from_str(line)
            .map_err(|e| Error::Invalid(format!("{}:{}: not a plan point: {e}", path.display(), i + 1)))?;
        points.push(p);
    }
    if let Some(p) = points
        .iter()
        .enumerate()
        .find(|(i, p)| p.index != *i || p.plan != points[0].plan)
    {
        return Err(Error::Invalid(format!(
            "{}: point {} is out of order or from another plan",
            path.display(),
            p.0
        )));
    }
    Ok(points)
}

/// What one point produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PointResult {
    /// The plan it belongs to.
    pub plan: String,
    /// The point's index.
    pub index: usize,
    /// Points in the plan.
    pub points: usize,
    /// The varied values.
    pub vary: BTreeMap<String, String>,
    /// The seed.
    pub seed: u64,
    /// The run's deterministic summary.
    pub summary: Summary,
    /// The run's result, cut down to what the point's [`Keep`] asks for
    /// (absent unless it asks for it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<ScenarioResult>,
    /// The run's timeouts in time order, if [`Keep::timeouts`] asked for them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeouts: Option<Vec<crate::timeouts::Timeout>>,
}

impl PointResult {
    /// A result as [`write_result`] writes it (JSON); the error names `what`.
    pub fn from_json(text: &str, what: &str) -> Result<PointResult, Error> {
        serde_json::from_str(text).map_err(|e| Error::Invalid(format!("{what}: not a point result: {e}")))
    }

    /// This result as [`write_result`] writes it, read back: what a
    /// collector would see. A local run that goes through this sees exactly
    /// the numbers a run elsewhere leaves in its file (JSON keeps every
    /// float to the last bit only up to the parser's rounding, so both
    /// paths must parse the same text).
    pub fn as_collected(&self) -> Result<PointResult, Error> {
        PointResult::from_json(&self.file_text()?, "a point result")
    }

    /// The text of this result's file: indented JSON, but one line when it
    /// keeps a run's result or timeouts (half the size of indented: a
    /// reproduction's point files run to megabytes).
    fn file_text(&self) -> Result<String, Error> {
        crate::report::to_json(self, self.result.is_none() && self.timeouts.is_none())
    }
}

impl Point {
    /// Run the point in the simulator.
    pub fn run(&self) -> Result<PointResult, Error> {
        let opts = scenario::RunOptions {
            no_cc_trace: true,
            ..scenario::RunOptions::default()
        };
        let (r, timeouts) = if self.keep.timeouts {
            let (r, t) = crate::timeouts::TimeoutCounter::run(|| scenario::run_with(&self.scenario, &opts, |_| {}));
            (r?, Some(t))
        } else {
            (scenario::run_with(&self.scenario, &opts, |_| {})?, None)
        };
        Ok(PointResult {
            plan: self.plan.clone(),
            index: self.index,
            points: self.points,
            vary: self.vary.clone(),
            seed: self.seed,
            summary: Summary::new(&self.scenario, &r),
            result: self.keep.apply(r),
            timeouts,
        })
    }
}

/// The file a point's result goes to in `dir`.
pub fn result_path(dir: &Path, index: usize) -> PathBuf {
    dir.join(format!("point-{index:06}.json"))
}

/// Write `r` into `dir` (created if needed) atomically: a collector never
/// sees half a file. Indented JSON, or one line for a result that keeps a
/// run's result or timeouts ([`Keep`]).
pub fn write_result(dir: &Path, r: &PointResult) -> Result<PathBuf, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::Run(format!("cannot create {}: {e}", dir.display())))?;
    let path = result_path(dir, r.index);
    let tmp = dir.join(format!(".point-{:06}.json.tmp", r.index));
    let text = r.file_text()?;
    std::fs::write(&tmp, text).map_err(|e| Error::Run(format!("cannot write {}: {e}", tmp.display())))?;
    std::fs::rename(&tmp, &path).map_err(|e| Error::Run(format!("cannot write {}: {e}", path.display())))?;
    Ok(path)
}

/// The merged results of a directory.
#[derive(Debug, Clone, PartialEq)]
pub struct Collected {
    /// Results in point order.
    pub results: Vec<PointResult>,
    /// Indices of the plan's points that have no result.
    pub missing: Vec<usize>,
}

/// Read every `point-*.json` in `dir`. Results of more than one plan, or
/// two results for one point, are an error; missing points are listed.
pub fn collect(dir: &Path) -> Result<Collected, Error> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::Invalid(format!("cannot read {}: {e}", dir.display())))?;
    let mut results: Vec<PointResult> = Vec::new();
    for e in entries {
        let path = e.map_err(|e| Error::Run(e.to_string()))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if !(name.starts_with("point-") && name.ends_with(".json")) {
            continue;
        }
        let text =
            std::fs::read_to_string(&path).map_err(|e| Error::Run(format!("cannot read {}: {e}", path.display())))?;
        let r = PointResult::from_json(&text, &path.display().to_string())?;
        results.push(r);
    }
    let Some(first) = results.first() else {
        return Err(Error::Invalid(format!(
            "{}: no point-*.json results in it",
            dir.display()
        )));
    };
    let (plan, total) = (first.plan.clone(), first.points);
    if let Some(other) = results.iter().find(|r| r.plan != plan || r.points != total) {
        return Err(Error::Invalid(format!(
            "{}: results of two plans ({plan} and {}): collect them separately",
            dir.display(),
            other.plan
        )));
    }
    results.sort_by_key(|r| r.index);
    if let Some(w) = results.windows(2).find(|w| w[0].index == w[1].index) {
        return Err(Error::Invalid(format!("{}: point {} twice", dir.display(), w[0].index)));
    }
    if let Some(r) = results.iter().find(|r| r.index >= total) {
        return Err(Error::Invalid(format!(
            "{}: point {} of a {total}-point plan",
            dir.display(),
            r.index
        )));
    }
    let have: std::collections::BTreeSet<usize> = results.iter().map(|r| r.index).collect();
    let missing = (0..total).filter(|i| !have.contains(i)).collect();
    Ok(Collected { results, missing })
}

impl Collected {
    /// One CSV row per point and flow: the point, its varied values, the
    /// flow's figures and the bottleneck's utilisation over the measured
    /// window `[0, utilisation_window_secs]` (the scenario's duration, the
    /// drain left out).
    pub fn csv(&self) -> Result<String, Error> {
        let keys: Vec<String> = self
            .results
            .first()
            .map(|r| r.vary.keys().cloned().collect())
            .unwrap_or_default();
        let mut w = csv::Writer::from_writer(Vec::new());
        let mut header: Vec<String> = vec!["point".into(), "seed".into()];
        header.extend(keys.iter().cloned());
        header.extend(
            [
                "flow",
                "group",
                "cc",
                "bytes",
                "goodput_mbps",
                "success_ratio",
                "files",
                "mean_file_secs",
                "utilisation",
                "utilisation_window_secs",
                "trace_hash",
                "errors",
            ]
            .map(String::from),
        );
        let err = |e: csv::Error| Error::Run(e.to_string());
        w.write_record(&header).map_err(err)?;
        for r in &self.results {
            for f in &r.summary.flows {
                let mut row: Vec<String> = vec![r.index.to_string(), r.seed.to_string()];
                row.extend(keys.iter().map(|k| r.vary.get(k).cloned().unwrap_or_default()));
                row.extend([
                    f.flow.to_string(),
                    f.group.to_string(),
                    f.cc.clone(),
                    f.bytes.to_string(),
                    format!("{:.6}", f.goodput_bps / 1e6),
                    f.success_ratio.map_or(String::new(), |x| format!("{x:.6}")),
                    f.files.to_string(),
                    f.mean_file_secs.map_or(String::new(), |x| format!("{x:.6}")),
                    format!("{:.6}", r.summary.bottleneck.utilisation),
                    r.summary.bottleneck.window_secs.to_string(),
                    r.summary.trace_hash.clone(),
                    f.errors.join("; "),
                ]);
                w.write_record(&row).map_err(err)?;
            }
        }
        let bytes = w.into_inner().map_err(|e| Error::Run(e.to_string()))?;
        String::from_utf8(bytes).map_err(|e| Error::Run(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(start: f64, bytes: u64) -> IntervalStats {
        let mut r = IntervalStats::default();
        r.start_secs = start;
        r.end_secs = start + 0.01;
        r.bytes = bytes;
        r.goodput_bps = bytes as f64 * 8.0 / 0.01;
        r.written_bytes = bytes;
        r.cwnd_bytes = 1000 + bytes;
        r.srtt_ms = 10.0;
        r.min_rtt_ms = 5.0;
        r.lost_packets = 1;
        r.congestion_events = u64::from(bytes == 0);
        r
    }

    #[test]
    fn interval_records_collapse_into_runs_of_sending_and_silence() {
        let bytes = [5, 7, 0, 0, 0, 3, 0];
        let records: Vec<IntervalStats> = bytes
            .iter()
            .enumerate()
            .map(|(i, &b)| record(i as f64 * 0.01, b))
            .collect();
        let runs = collapse_intervals(&records);
        let shape: Vec<(u64, f64, f64)> = runs.iter().map(|r| (r.bytes, r.start_secs, r.end_secs)).collect();
        assert_eq!(
            shape,
            [
                (12, records[0].start_secs, records[1].end_secs),
                (0, records[2].start_secs, records[4].end_secs),
                (3, records[5].start_secs, records[5].end_secs),
                (0, records[6].start_secs, records[6].end_secs),
            ]
        );
        // Sums over the run, the last record's state, goodput over the run.
        assert_eq!(
            (runs[0].written_bytes, runs[0].lost_packets, runs[0].cwnd_bytes),
            (12, 2, 1007)
        );
        assert_eq!(runs[1].congestion_events, 3);
        assert!((runs[0].goodput_bps - 12.0 * 8.0 / 0.02).abs() < 1e-6);
        assert_eq!(runs[2], records[5], "a run of one record is that record");
        // Collapsing is idempotent, so figures from collapsed records do not
        // depend on whether they were collapsed before being kept.
        assert_eq!(collapse_intervals(&runs), runs);
        assert!(collapse_intervals(&[]).is_empty());
    }

    #[test]
    fn vary_keeps_controller_parameters_together() {
        let v = Vary::parse("flows[0].cc=guarantee:target=10Mbit/s,eval=1s,newreno,cubic").unwrap();
        assert_eq!(v.values, ["guarantee:target=10Mbit/s,eval=1s", "newreno", "cubic"]);
        let v = Vary::parse("flows[1].count=1,2,5,10").unwrap();
        assert_eq!(v.values, ["1", "2", "5", "10"]);
        for bad in [
            "flows[1].count",
            "flows[x].count=1",
            "=1",
            "a..b=1",
            "flows[1.count=1",
            "a=1,,2",
        ] {
            let e = Vary::parse(bad).unwrap_err().to_string();
            assert!(e.starts_with("--vary"), "{bad}: {e}");
        }
    }

    #[test]
    fn every_shipped_scenario_survives_a_plan_line() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let mut n = 0;
        for e in std::fs::read_dir(dir).unwrap() {
            let path = e.unwrap().path();
            if path.extension().is_none_or(|x| x != "toml") {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let points = plan_in(&text, path.parent(), &[], &[5]).unwrap();
            let line = serde_json::to_string(&points[0]).unwrap();
            let back: Point = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(back, points[0], "{}", path.display());
            assert_eq!(back.scenario.seed, 5);
            n += 1;
        }
        assert!(n >= 3, "{n} scenario files");
    }

    #[test]
    fn kept_results_round_trip_and_plans_of_scenarios_have_an_identity() {
        let s = Scenario::from_toml_str(
            r#"
            duration = "2s"
            interval = "500ms"
            [topology]
            kind = "dumbbell"
            bottleneck = { rate = "10Mbit/s", delay = "5ms", queue_packets = 30 }
            access = { rate = "1Gbit/s", delay = "1ms", queue_packets = 1000 }
            [[flows]]
            cc = "guarantee:target=2Mbit/s"
            target = "2Mbit/s"
            eval_slot = "500ms"
            [[flows]]
            cc = "newreno"
            transport = "tcp"
            "#,
        )
        .unwrap();
        let labels = |x: &str| BTreeMap::from([("figure".to_string(), x.to_string())]);
        let items = vec![
            (labels("a"), s.clone(), Keep::default()),
            (labels("b"), s.clone(), Keep::result()),
            (labels("c"), s.clone(), Keep::everything()),
        ];
        let points = plan_scenarios(items.clone()).unwrap();
        assert_eq!(points.len(), 3);
        assert_eq!(plan_scenarios(items.clone()).unwrap(), points, "same points, same plan");
        let mut other = items.clone();
        other[2].2 = Keep::result();
        assert_ne!(plan_scenarios(other).unwrap()[0].plan, points[0].plan);
        // The plan's text reads back as a plan file, keep included.
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("plan.jsonl");
        std::fs::write(&path, plan_text(&points).unwrap()).unwrap();
        let back = read_points(&path).unwrap();
        assert_eq!(back, points);
        assert!(
            !plan_text(&points[..1]).unwrap().contains("keep"),
            "nothing kept, nothing said"
        );

        let plain = points[0].run().unwrap();
        assert_eq!(plain.result, None);
        let some = points[1].run().unwrap();
        let r = some.result.as_ref().expect("kept");
        assert!(r.flows.iter().all(|f| f.intervals.is_empty()) && r.delivered.is_empty());
        assert!(!r.flows[0].slots.is_empty() && r.flows[1].tcp.is_some());
        assert_eq!(some.summary, plain.summary);
        let all = points[2].run().unwrap();
        let r = all.result.as_ref().expect("kept");
        assert!(!r.flows[0].intervals.is_empty() && !r.delivered.is_empty() && !r.queue.is_empty());
        assert_eq!(all.as_collected().unwrap(), all, "a kept result survives its file");
        let tmp_dir = tempfile::tempdir().unwrap();
        let dir = tmp_dir.path().to_path_buf();
        let lines = |r: &PointResult| {
            let path = write_result(&dir, r).unwrap();
            std::fs::read_to_string(path).unwrap().lines().count()
        };
        assert_eq!(lines(&all), 1, "kept results are written on one line");
        assert!(lines(&plain) > 10, "a summary alone is indented");
        assert_eq!(some.timeouts, None);

        // Timeouts are counted while the point runs: a TCP flow cut off for
        // 400 ms at a time times out (min RTO 200 ms, RFC 6298).
        let mut cut = Scenario::from_toml_str(
            r#"
            duration = "2s"
            [topology]
            kind = "dumbbell"
            bottleneck = { rate = "10Mbit/s", delay = "5ms", queue_packets = 30, cutoff = { period = "800ms", connected = 0.5, mode = "drop" } }
            access = { rate = "1Gbit/s", delay = "1ms", queue_packets = 1000 }
            [[flows]]
            cc = "newreno"
            transport = "tcp"
            "#,
        )
        .unwrap();
        cut.seed = 3;
        let keep = Keep {
            timeouts: true,
            ..Keep::default()
        };
        let p = plan_scenarios(vec![(labels("d"), cut, keep)]).unwrap();
        let r = p[0].run().unwrap();
        assert_eq!(r.result, None);
        let t = r.timeouts.as_ref().expect("counted");
        assert!(!t.is_empty(), "a 400 ms cut times a TCP sender out");
        assert!(t.windows(2).all(|w| w[0].at_secs <= w[1].at_secs), "{t:?}");
        assert_eq!(r.as_collected().unwrap(), r);
        let e = PointResult::from_json("{}", "x.json").unwrap_err().to_string();
        assert!(e.starts_with("x.json: not a point result"), "{e}");
    }

    #[test]
    fn seeds_are_ranges_or_lists() {
        assert_eq!(parse_seeds("1..3").unwrap(), [1, 2, 3]);
        assert_eq!(parse_seeds("4,9").unwrap(), [4, 9]);
        assert!(parse_seeds("3..1").is_err());
        assert!(parse_seeds("a").is_err());
        assert!(parse_seeds("0..1000000").is_err());
    }

    #[test]
    fn values_become_toml_where_they_are_toml() {
        assert_eq!(toml_value("2"), toml::Value::Integer(2));
        assert_eq!(toml_value("0.5"), toml::Value::Float(0.5));
        assert_eq!(toml_value("10Mbit/s"), toml::Value::String("10Mbit/s".into()));
        assert_eq!(toml_value("\"x\""), toml::Value::String("x".into()));
    }

    #[test]
    fn paths_set_nested_keys_and_refuse_missing_elements() {
        let mut doc: toml::Value = toml::from_str::<toml::Table>("[[flows]]\ncc = \"newreno\"\n")
            .unwrap()
            .into();
        set(&mut doc, "flows[0].count", toml::Value::Integer(3)).unwrap();
        set(
            &mut doc,
            "topology.bottleneck.rate",
            toml::Value::String("1Mbit/s".into()),
        )
        .unwrap();
        assert_eq!(doc["flows"][0]["count"].as_integer(), Some(3));
        assert_eq!(doc["topology"]["bottleneck"]["rate"].as_str(), Some("1Mbit/s"));
        let e = set(&mut doc, "flows[3].count", toml::Value::Integer(1)).unwrap_err();
        assert!(e.contains("out of range"), "{e}");
        let e = set(&mut doc, "flows[0].cc[1]", toml::Value::Integer(1)).unwrap_err();
        assert!(e.contains("not an array"), "{e}");
    }
}
