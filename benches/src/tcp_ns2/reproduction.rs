//! The cross-check as a reproduction ([`crate::repro`]): the model's runs
//! are plan points (`--plan`, `--from DIR`); ns-2's runs, which `tputctl
//! sweep run` cannot make, and the `window` part's model runs, which need
//! the controller's trace that a plan point never keeps, are made by the
//! build, here, on the same threads.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tput_lab::plan::{Keep, PointResult};
use tput_lab::sweep::run_parallel;

use super::{
    BerCase, BerMetrics, CUT_STARTS, Case, CutCase, CutMetrics, Metrics, Model, Variant, ber_metrics, ber_scenario,
    cut_metrics, cut_scenario, metrics, ns2_available, run_ber_ns2, run_cut_ns2, run_ns2, scenario,
};
use crate::repro::{Built, Measurements, Planned, Reproduction, kept_result};

/// The parts, in the order they run and print.
pub const PARTS: [&str; 4] = ["dumbbell", "window", "cutoff", "ber"];

/// Who ran a dumbbell or cut-off case: ns-2 or the model in one of its
/// settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// ns-2 2.35.
    Ns2,
    /// The TCP model.
    Model(Model),
}

impl Side {
    /// The name tables print.
    pub fn label(self) -> String {
        match self {
            Side::Ns2 => "ns-2 2.35".into(),
            Side::Model(m) => m.name().into(),
        }
    }
}

/// Who ran a bit-error case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BerSide {
    /// ns-2's `Agent/TCP/Sack1`.
    Ns2,
    /// The model with SACK recovery.
    Sack,
    /// The model with go-back-N recovery.
    Gbn,
}

impl BerSide {
    /// The name tables print.
    pub fn label(self) -> &'static str {
        match self {
            BerSide::Ns2 => "ns-2 Sack1",
            BerSide::Sack => "model SACK",
            BerSide::Gbn => "model go-back-N",
        }
    }
}

/// One simulation of the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Point {
    /// A dumbbell case in one of the model's settings.
    Dumbbell(Case, Model),
    /// A cut-off case in one of the model's settings.
    Cutoff(CutCase, Model),
    /// A bit-error case, SACK or go-back-N.
    Ber(BerCase, BerSide),
}

/// What one simulation (or ns-2 run) measured.
#[derive(Debug, Clone, PartialEq)]
pub enum Measured {
    /// A dumbbell case.
    Dumbbell(Metrics),
    /// A cut-off case.
    Cutoff(CutMetrics),
    /// A bit-error case.
    Ber(BerMetrics),
}

/// What the cross-check runs.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// The parts (of [`PARTS`]).
    pub parts: Vec<String>,
    /// The dumbbell's numbers of background flows.
    pub ns: Vec<u32>,
    /// The dumbbell's seeds: 1 to this.
    pub seeds: u64,
    /// The dumbbell's variants.
    pub variants: Vec<Variant>,
    /// Simulated time of a dumbbell case.
    pub duration: Duration,
    /// The window, cut-off and bit-error parts at their smoke-test size.
    pub short: bool,
    /// Run ns-2's side (if `ns` is installed).
    pub ns2: bool,
    /// Threads for the runs the build makes (ns-2's, the window part's).
    pub jobs: usize,
}

impl Options {
    /// The full size: every part, N = 1 to 40, 3 seeds, 120 s.
    pub fn full() -> Options {
        Options {
            parts: PARTS.map(String::from).to_vec(),
            ns: vec![1, 2, 5, 10, 20, 30, 40],
            seeds: 3,
            variants: Variant::ALL.to_vec(),
            duration: Duration::from_secs(120),
            short: false,
            ns2: true,
            jobs: 1,
        }
    }

    /// The smoke test: every part, N = 1 and 5, one seed, 10 s; the other
    /// parts at their short size.
    pub fn short() -> Options {
        Options {
            ns: vec![1, 5],
            seeds: 1,
            duration: Duration::from_secs(10),
            short: true,
            ..Options::full()
        }
    }

    /// `self` with what the environment sets: `TPUT_BENCH_PARTS`,
    /// `TPUT_BENCH_N`, `TPUT_BENCH_SEEDS`, `TPUT_BENCH_VARIANTS` and
    /// `TPUT_BENCH_DURATION` (seconds); a value that does not parse is a
    /// one-line error naming the variable and the value.
    pub fn with_env(self, var: impl Fn(&str) -> Option<String>) -> Result<Options, String> {
        let mut o = self;
        if let Some(v) = var("TPUT_BENCH_PARTS") {
            o.parts = list(&v, "TPUT_BENCH_PARTS", |p| {
                PARTS
                    .contains(&p)
                    .then(|| p.to_string())
                    .ok_or_else(|| format!("unknown part `{p}` (known: {})", PARTS.join(", ")))
            })?;
        }
        if let Some(v) = var("TPUT_BENCH_N") {
            o.ns = list(&v, "TPUT_BENCH_N", |n| {
                n.parse().map_err(|_| format!("`{n}` is not a number of flows"))
            })?;
        }
        if let Some(v) = var("TPUT_BENCH_SEEDS") {
            o.seeds = match v.trim().parse() {
                Ok(n) if n > 0 => n,
                _ => return Err(format!("TPUT_BENCH_SEEDS: `{v}` is not a positive number of seeds")),
            };
        }
        if let Some(v) = var("TPUT_BENCH_VARIANTS") {
            o.variants = list(&v, "TPUT_BENCH_VARIANTS", |x| {
                Variant::parse(x).ok_or_else(|| {
                    let known: Vec<&str> = Variant::ALL.iter().map(|v| v.name()).collect();
                    format!("unknown variant `{x}` (known: {})", known.join(", "))
                })
            })?;
        }
        if let Some(v) = var("TPUT_BENCH_DURATION") {
            o.duration = match v.trim().parse::<u64>() {
                Ok(s) if s > 0 => Duration::from_secs(s),
                _ => {
                    return Err(format!(
                        "TPUT_BENCH_DURATION: `{v}` is not a positive number of seconds"
                    ));
                }
            };
        }
        Ok(o)
    }

    /// The cut-off part's cases, every start instant of every point.
    pub fn cut_cases(&self) -> Vec<CutCase> {
        let mut out = Vec::new();
        for min_rto in self.min_rtos() {
            for period in self.periods() {
                for occupancy in self.occupancies() {
                    for f in CUT_STARTS {
                        out.push(CutCase {
                            period,
                            occupancy,
                            min_rto,
                            start: period.mul_f64(f),
                            duration: Duration::from_secs(if self.short { 2 } else { 10 }),
                        });
                    }
                }
            }
        }
        out
    }

    fn min_rtos(&self) -> [Duration; 2] {
        [Duration::from_millis(200), Duration::from_micros(206_180)]
    }

    fn periods(&self) -> Vec<Duration> {
        if self.short {
            vec![Duration::from_millis(1)]
        } else {
            vec![
                Duration::from_micros(100),
                Duration::from_millis(1),
                Duration::from_millis(10),
            ]
        }
    }

    fn occupancies(&self) -> Vec<f64> {
        if self.short {
            vec![0.9, 0.97, 1.0]
        } else {
            vec![0.5, 0.7, 0.85, 0.9, 0.95, 0.97, 0.98, 0.99, 1.0]
        }
    }

    /// The bit-error part's cases: BER 1e-8, every RTT and seed.
    pub fn ber_cases(&self) -> Vec<BerCase> {
        let rtts: &[u32] = if self.short { &[200] } else { &[50, 100, 150, 200] };
        let seeds = if self.short { 2 } else { 10 };
        let (duration, warmup) = if self.short { (20, 5) } else { (60, 10) };
        let mut out = Vec::new();
        for &rtt_ms in rtts {
            for seed in 1..=seeds {
                out.push(BerCase {
                    rtt_ms,
                    ber: 1e-8,
                    seed,
                    duration: Duration::from_secs(duration),
                    warmup: Duration::from_secs(warmup),
                });
            }
        }
        out
    }

    /// The dumbbell part's cases.
    pub fn dumbbell_cases(&self) -> Vec<Case> {
        let mut out = Vec::new();
        for &variant in &self.variants {
            for &n in &self.ns {
                for seed in 1..=self.seeds {
                    out.push(Case {
                        n_background: n,
                        seed,
                        variant,
                        duration: self.duration,
                    });
                }
            }
        }
        out
    }

    /// The window part's case: NewReno, N = 40 (5 short), seed 1, 120 s
    /// (10 s short); its statistics from `from_secs` on; its plot over one
    /// second in the middle.
    pub fn window_case(&self) -> (Case, f64, (f64, f64)) {
        let case = Case {
            n_background: if self.short { 5 } else { 40 },
            seed: 1,
            variant: Variant::NewReno,
            duration: Duration::from_secs(if self.short { 10 } else { 120 }),
        };
        let (from, plot) = if self.short {
            (2.0, (6.0, 7.0))
        } else {
            (5.0, (60.0, 61.0))
        };
        (case, from, plot)
    }

    fn has(&self, part: &str) -> bool {
        self.parts.iter().any(|p| p == part)
    }
}

/// The items of a comma-separated list, each read by `item`; an error
/// names the variable.
fn list<T>(v: &str, var: &str, item: impl Fn(&str) -> Result<T, String>) -> Result<Vec<T>, String> {
    let items: Vec<T> = v
        .split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| item(x).map_err(|e| format!("{var}: {e}")))
        .collect::<Result<_, _>>()?;
    if items.is_empty() {
        return Err(format!("{var} is empty"));
    }
    Ok(items)
}

/// The model's settings each case runs in.
const MODELS: [Model; 2] = [Model::Ns2, Model::Before];

/// The TCP model against ns-2 2.35 as a reproduction.
#[derive(Debug, Clone)]
pub struct TcpNs2 {
    /// What to run.
    pub options: Options,
    /// Where ns-2's scripts are (`benches/ns2`).
    pub scripts: PathBuf,
}

impl TcpNs2 {
    /// The cross-check with `options`, ns-2's scripts from this source tree.
    pub fn new(options: Options) -> TcpNs2 {
        TcpNs2 {
            options,
            scripts: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ns2"),
        }
    }

    /// Whether ns-2's side runs: asked for and installed.
    fn with_ns2(&self) -> bool {
        self.options.ns2 && ns2_available()
    }
}

impl Reproduction for TcpNs2 {
    type Point = Point;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "tcp_ns2"
    }

    fn points(&self) -> Result<Vec<Planned<Point>>, String> {
        let o = &self.options;
        let mut out = Vec::new();
        let mut with_intervals = Keep::result();
        with_intervals.intervals = true;
        if o.has("dumbbell") {
            for case in o.dumbbell_cases() {
                for m in MODELS {
                    let labels = [
                        ("part", "dumbbell".to_string()),
                        ("variant", case.variant.to_string()),
                        ("n", case.n_background.to_string()),
                        ("seed", case.seed.to_string()),
                        ("side", m.name().to_string()),
                    ];
                    let s = scenario(&case, m);
                    out.push(Planned::new(
                        Point::Dumbbell(case, m),
                        labels,
                        s,
                        with_intervals.clone(),
                    ));
                }
            }
        }
        if o.has("cutoff") {
            for c in o.cut_cases() {
                for m in MODELS {
                    let labels = [
                        ("part", "cutoff".to_string()),
                        ("min_rto_us", c.min_rto.as_micros().to_string()),
                        ("period_us", c.period.as_micros().to_string()),
                        ("occupancy", c.occupancy.to_string()),
                        ("start_us", c.start.as_micros().to_string()),
                        ("side", m.name().to_string()),
                    ];
                    out.push(Planned::new(
                        Point::Cutoff(c, m),
                        labels,
                        cut_scenario(&c, m),
                        Keep::result(),
                    ));
                }
            }
        }
        if o.has("ber") {
            for c in o.ber_cases() {
                for side in [BerSide::Sack, BerSide::Gbn] {
                    let labels = [
                        ("part", "ber".to_string()),
                        ("rtt_ms", c.rtt_ms.to_string()),
                        ("seed", c.seed.to_string()),
                        ("side", side.label().to_string()),
                    ];
                    let s = ber_scenario(&c, side == BerSide::Gbn);
                    out.push(Planned::new(Point::Ber(c, side), labels, s, with_intervals.clone()));
                }
            }
        }
        Ok(out)
    }

    fn label(&self, p: &Point) -> String {
        match p {
            Point::Dumbbell(c, m) => format!("{} N={} seed {} {}", c.variant, c.n_background, c.seed, m.name()),
            Point::Cutoff(c, m) => format!(
                "cut-off {:?} occ {} min RTO {:?} start {:?} {}",
                c.period,
                c.occupancy,
                c.min_rto,
                c.start,
                m.name()
            ),
            Point::Ber(c, side) => format!("ber rtt {} ms seed {} {}", c.rtt_ms, c.seed, side.label()),
        }
    }

    fn measure(&self, p: &Point, r: &PointResult) -> Result<Measured, String> {
        let r = kept_result(r)?;
        match p {
            Point::Dumbbell(c, _) => metrics(c, r).map(Measured::Dumbbell),
            Point::Cutoff(c, _) => cut_metrics(c, r).map(Measured::Cutoff),
            Point::Ber(c, _) => ber_metrics(c, r).map(Measured::Ber),
        }
    }

    fn progress(&self, m: &Measured) -> String {
        progress(m)
    }

    fn build(&self, out: &Path, measured: &Measurements<Point, Measured>) -> Result<Built, String> {
        let o = &self.options;
        let with_ns2 = self.with_ns2();
        let mut built = Built::default();
        if o.ns2 && !with_ns2 {
            built.text += "ns-2 is not installed (no `ns` on the PATH; apt-get install ns2): the model's side only\n";
        }
        let mut runs = Runs::default();
        for (p, m) in measured {
            match (p, m) {
                (Point::Dumbbell(c, model), m) => runs.dumbbell.push((*c, Side::Model(*model), pick(m, dumbbell_of))),
                (Point::Cutoff(c, model), m) => runs.cutoff.push((*c, Side::Model(*model), pick(m, cutoff_of))),
                (Point::Ber(c, side), m) => runs.ber.push((*c, *side, pick(m, ber_of))),
            }
        }
        if with_ns2 {
            self.run_ns2(&mut runs, &mut built.failures);
        }
        let sides: Vec<Side> = with_ns2
            .then_some(Side::Ns2)
            .into_iter()
            .chain(MODELS.map(Side::Model))
            .collect();
        for part in &o.parts {
            let (text, mut files) = match part.as_str() {
                "dumbbell" => super::tables::dumbbell(o, &sides, &runs.dumbbell, out)?,
                "window" => {
                    let (case, ..) = o.window_case();
                    let traces = super::tables::window_traces(&case, with_ns2, &self.scripts, out, o.jobs);
                    super::tables::window(o, traces, &mut built.failures, out)?
                }
                "cutoff" => super::tables::cutoff(o, &sides, &runs.cutoff, out)?,
                "ber" => {
                    let who: Vec<BerSide> = with_ns2
                        .then_some(BerSide::Ns2)
                        .into_iter()
                        .chain([BerSide::Sack, BerSide::Gbn])
                        .collect();
                    super::tables::ber(o, &who, &runs.ber, out)?
                }
                other => return Err(format!("unknown part `{other}` (known: {})", PARTS.join(", "))),
            };
            built.text += &text;
            built.files.append(&mut files);
        }
        Ok(built)
    }
}

/// Every run of each part, the model's and ns-2's, with its side.
#[derive(Debug, Default)]
pub(super) struct Runs {
    pub(super) dumbbell: Vec<(Case, Side, Result<Metrics, String>)>,
    pub(super) cutoff: Vec<(CutCase, Side, Result<CutMetrics, String>)>,
    pub(super) ber: Vec<(BerCase, BerSide, Result<BerMetrics, String>)>,
}

/// A point's measurement as the part's own type (`of` picks it).
fn pick<T>(m: &Result<Measured, String>, of: fn(&Measured) -> Option<&T>) -> Result<T, String>
where
    T: Clone,
{
    match m {
        Ok(m) => of(m).cloned().ok_or_else(|| "measured another part".to_string()),
        Err(e) => Err(e.clone()),
    }
}

fn dumbbell_of(m: &Measured) -> Option<&Metrics> {
    match m {
        Measured::Dumbbell(x) => Some(x),
        _ => None,
    }
}

fn cutoff_of(m: &Measured) -> Option<&CutMetrics> {
    match m {
        Measured::Cutoff(x) => Some(x),
        _ => None,
    }
}

fn ber_of(m: &Measured) -> Option<&BerMetrics> {
    match m {
        Measured::Ber(x) => Some(x),
        _ => None,
    }
}

/// Run `cases` on ns-2 with `run` on `jobs` threads, a progress line each
/// (`label`, then the measurement's `line`); a failed run is listed in
/// `failures`.
fn ns2_runs<C, M>(
    cases: Vec<C>,
    jobs: usize,
    label: impl Fn(&C) -> String + Sync,
    run: impl Fn(&C) -> Result<M, String> + Sync,
    line: impl Fn(&M) -> String + Sync,
    failures: &mut Vec<String>,
) -> Vec<(C, Result<M, String>)>
where
    C: Sync,
    M: Send,
{
    let total = cases.len();
    let results = run_parallel(&cases, jobs, run, |done, c, m| {
        let what = match m {
            Ok(m) => line(m),
            Err(e) => format!("FAILED: {e}"),
        };
        eprintln!("[ns-2 {done}/{total}] {}: {what}", label(c));
    });
    for (c, m) in cases.iter().zip(&results) {
        if let Err(e) = m {
            failures.push(format!("{}: {e}", label(c)));
        }
    }
    cases.into_iter().zip(results).collect()
}

impl TcpNs2 {
    /// ns-2's side of the dumbbell, cut-off and bit-error parts asked for,
    /// added to `runs`.
    fn run_ns2(&self, runs: &mut Runs, failures: &mut Vec<String>) {
        let o = &self.options;
        let tcl = |name: &str| self.scripts.join(name);
        let ns2 = Side::Ns2.label();
        if o.has("dumbbell") {
            let tcl = tcl("tcp_compare.tcl");
            let done = ns2_runs(
                o.dumbbell_cases(),
                o.jobs,
                |c| format!("{} N={} seed {} {ns2}", c.variant, c.n_background, c.seed),
                |c| run_ns2(c, &tcl),
                |m| progress(&Measured::Dumbbell(m.clone())),
                failures,
            );
            runs.dumbbell.extend(done.into_iter().map(|(c, m)| (c, Side::Ns2, m)));
        }
        if o.has("cutoff") {
            let tcl = tcl("cutoff_compare.tcl");
            let done = ns2_runs(
                o.cut_cases(),
                o.jobs,
                |c| {
                    format!(
                        "cut-off {:?} occ {} min RTO {:?} start {:?} {ns2}",
                        c.period, c.occupancy, c.min_rto, c.start
                    )
                },
                |c| run_cut_ns2(c, &tcl),
                |m| progress(&Measured::Cutoff(m.clone())),
                failures,
            );
            runs.cutoff.extend(done.into_iter().map(|(c, m)| (c, Side::Ns2, m)));
        }
        if o.has("ber") {
            let tcl = tcl("ber_compare.tcl");
            let done = ns2_runs(
                o.ber_cases(),
                o.jobs,
                |c| self.label(&Point::Ber(*c, BerSide::Ns2)),
                |c| run_ber_ns2(c, &tcl),
                |m| progress(&Measured::Ber(m.clone())),
                failures,
            );
            runs.ber.extend(done.into_iter().map(|(c, m)| (c, BerSide::Ns2, m)));
        }
    }
}

/// One progress line's text for a run.
fn progress(m: &Measured) -> String {
    match m {
        Measured::Dumbbell(m) => format!(
            "util {:.3} Jain {:.3} >=10M {:.2} >=20M {:.2} TO/flow/min {:.2}",
            m.utilisation, m.jain, m.tagged_10, m.tagged_20, m.timeouts_per_flow_min
        ),
        Measured::Cutoff(m) => format!("{:.1} Mbit/s, {} timeouts", m.goodput_mbps, m.timeouts),
        Measured::Ber(m) => format!(
            "{:.2} Mbit/s, {} timeouts, {} retransmits, {} errors",
            m.goodput_mbps, m.timeouts, m.retransmits, m.errors
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k| pairs.iter().find(|(x, _)| x == k).map(|(_, v)| v.clone())
    }

    #[test]
    fn the_default_runs_all_four_parts_and_the_environment_narrows_it() {
        assert_eq!(Options::full().parts, ["dumbbell", "window", "cutoff", "ber"]);
        assert_eq!(Options::short().parts, Options::full().parts);
        let o = Options::short()
            .with_env(env(&[
                ("TPUT_BENCH_PARTS", "ber, cutoff"),
                ("TPUT_BENCH_N", "1,30"),
                ("TPUT_BENCH_SEEDS", "2"),
                ("TPUT_BENCH_VARIANTS", "sack"),
                ("TPUT_BENCH_DURATION", "7"),
            ]))
            .unwrap();
        assert_eq!(o.parts, ["ber", "cutoff"]);
        assert_eq!(
            (o.ns.clone(), o.seeds, o.variants.clone()),
            (vec![1, 30], 2, vec![Variant::Sack])
        );
        assert_eq!(o.duration, Duration::from_secs(7));
        assert_eq!(Options::short().with_env(env(&[])).unwrap(), Options::short());
    }

    #[test]
    fn a_bad_environment_value_is_a_one_line_error_naming_it() {
        for (k, v, says) in [
            ("TPUT_BENCH_PARTS", "dumbbell,windows", "unknown part `windows`"),
            ("TPUT_BENCH_N", "1,x", "`x` is not a number of flows"),
            ("TPUT_BENCH_N", " , ", "TPUT_BENCH_N is empty"),
            ("TPUT_BENCH_SEEDS", "0", "`0` is not a positive number of seeds"),
            ("TPUT_BENCH_VARIANTS", "vegas", "unknown variant `vegas`"),
            (
                "TPUT_BENCH_DURATION",
                "2.5",
                "`2.5` is not a positive number of seconds",
            ),
        ] {
            let e = Options::full().with_env(env(&[(k, v)])).unwrap_err();
            assert!(
                e.starts_with(k) && e.contains(says) && !e.contains('\n'),
                "{k}={v}: {e}"
            );
        }
    }

    #[test]
    fn the_plan_holds_the_model_s_runs_of_the_three_simulated_parts() {
        let t = TcpNs2::new(Options::short());
        let points = t.points().unwrap();
        // Dumbbell: 4 variants x 2 N x 1 seed; cut-off: 2 min RTOs x 1
        // period x 3 occupancies x 5 starts; both in 2 settings. Bit
        // errors: 1 RTT x 2 seeds, SACK and go-back-N.
        assert_eq!(points.len(), (8 + 30) * 2 + 2 * 2);
        assert!(matches!(points[0].point, Point::Dumbbell(_, Model::Ns2)));
        assert!(matches!(points[points.len() - 1].point, Point::Ber(_, BerSide::Gbn)));
        assert_eq!(points[0].labels["part"], "dumbbell");
        let mut window_only = Options::short();
        window_only.parts = vec!["window".into()];
        assert!(TcpNs2::new(window_only).points().unwrap().is_empty());
    }
}
