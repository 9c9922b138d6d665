//! One framework for reproductions: a [`Reproduction`] says which
//! simulations a figure needs, what each measured, and how the measurements
//! become tables and files; [`run`] and [`bench_main`] do the rest the same
//! way for every bench: a local run on `TPUT_BENCH_JOBS` threads, `--plan`
//! (print the simulations as `tputctl sweep` plan points), `--from DIR`
//! (build the figures from the results of `tputctl sweep run`), short mode.
//!
//! A local run goes through the same plan points and the same JSON as a run
//! elsewhere ([`crate::run_point`]), so `--from` gives the same tables and
//! files byte for byte, but for `cpu.csv` (the local run's CPU seconds per
//! simulation).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tput_lab::plan::{Keep, PointResult};
use tput_lab::scenario::Scenario;
use tput_lab::sweep::run_parallel;

use crate::{BenchEnv, Mode};

/// One simulation a reproduction asks for.
#[derive(Debug, Clone)]
pub struct Planned<P> {
    /// The bench's own description of the point (figure, variant, x, seed...).
    pub point: P,
    /// Labels written into the plan point (`tputctl sweep collect` columns).
    pub labels: BTreeMap<String, String>,
    /// What to simulate.
    pub scenario: Scenario,
    /// What the point's result keeps for [`Reproduction::measure`].
    pub keep: Keep,
}

impl<P> Planned<P> {
    /// `point`, simulating `scenario`, labelled with `labels` (key, value),
    /// its result keeping `keep`.
    pub fn new<const N: usize>(point: P, labels: [(&str, String); N], scenario: Scenario, keep: Keep) -> Self {
        Planned {
            point,
            labels: labels.map(|(k, v)| (k.to_string(), v)).into(),
            scenario,
            keep,
        }
    }
}

/// A one-line error naming the first of the `asked` figures that is not
/// one of the `known`, if any.
pub fn check_figures(asked: &[String], known: &[&str]) -> Result<(), String> {
    match asked.iter().find(|f| !known.contains(&f.as_str())) {
        Some(f) => Err(format!("unknown figure {f:?}; known: {}", known.join(", "))),
        None => Ok(()),
    }
}

/// The run's result a point kept (`Keep::result`), or a one-line error
/// saying that it kept none (a result of another bench's plan).
pub fn kept_result(r: &PointResult) -> Result<&tput_lab::scenario::ScenarioResult, String> {
    r.result
        .as_ref()
        .ok_or_else(|| "the point's result keeps no per-flow results (not from this bench's plan)".to_string())
}

/// Every point's measurement in plan order; a failed point carries its error.
pub type Measurements<P, M> = [(P, Result<M, String>)];

/// The points of `R` with their measurements, in plan order.
pub type Measured<R> = Vec<(
    <R as Reproduction>::Point,
    Result<<R as Reproduction>::Measured, String>,
)>;

/// What [`Reproduction::build`] made.
#[derive(Debug, Clone, Default)]
pub struct Built {
    /// The tables, as printed (also written to `tables.txt`).
    pub text: String,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// Whether something the figures need failed (the bench exits with 1).
    pub failed: bool,
    /// What failed in work the build did itself (live runs, say), one line
    /// each: listed under `FAILED points:` after the plan points' failures
    /// (and the bench exits with 1).
    pub failures: Vec<String>,
}

/// A paper's (or a question's) reproduction: its science, without the driver.
pub trait Reproduction: Sync {
    /// The bench's description of one simulation.
    type Point: Clone + Send + Sync;
    /// What one simulation measured.
    type Measured: Clone + Send;

    /// The bench's name: the prefix of its messages.
    fn name(&self) -> &'static str;
    /// Every simulation, in the order a local run runs and reports them.
    fn points(&self) -> Result<Vec<Planned<Self::Point>>, String>;
    /// The point's name in progress lines and errors.
    fn label(&self, p: &Self::Point) -> String;
    /// What `p` measured, from its result as a collector reads it.
    fn measure(&self, p: &Self::Point, r: &PointResult) -> Result<Self::Measured, String>;
    /// One progress line's text for a finished point (after its label).
    fn progress(&self, m: &Self::Measured) -> String;
    /// Tables and files from every point's measurement (in plan order; a
    /// failed point carries its error), written under `out`.
    fn build(&self, out: &Path, measured: &Measurements<Self::Point, Self::Measured>) -> Result<Built, String>;

    /// Whether the simulations come in rounds, each depending on the
    /// results of the rounds before (a search's next rate on its last):
    /// then [`next_round`](Self::next_round) says what each round runs,
    /// [`points`](Self::points) is the first round, every point carries an
    /// `id` label (a hash of its labels, scenario and what it keeps) by
    /// which results from elsewhere are matched, and `--plan --from DIR`
    /// prints the next round given the results in `DIR`.
    fn in_rounds(&self) -> bool {
        false
    }

    /// The simulations still needed, given those done so far (in the order
    /// done, with their measurements); none when finished. The default:
    /// every point in one round.
    fn next_round(
        &self,
        done: &Measurements<Self::Point, Self::Measured>,
    ) -> Result<Vec<Planned<Self::Point>>, String> {
        if done.is_empty() { self.points() } else { Ok(Vec::new()) }
    }
}

/// `planned` with each point's `id` label: the identity of the point on its
/// own (a one-point plan's id), which a reproduction in rounds matches
/// results by.
fn identified<P>(mut planned: Vec<Planned<P>>) -> Result<Vec<Planned<P>>, String> {
    for p in &mut planned {
        let one = vec![(p.labels.clone(), p.scenario.clone(), p.keep.clone())];
        let id = tput_lab::plan::plan_scenarios(one)
            .map_err(|e| e.to_string())?
            .remove(0)
            .plan;
        p.labels.insert("id".into(), id);
    }
    Ok(planned)
}

/// The plan of `planned`, in order, and its points.
fn plan_of<P>(planned: Vec<Planned<P>>) -> Result<(Vec<P>, Vec<tput_lab::plan::Point>), String> {
    let mut points = Vec::with_capacity(planned.len());
    let mut items = Vec::with_capacity(planned.len());
    for p in planned {
        points.push(p.point);
        items.push((p.labels, p.scenario, p.keep));
    }
    let plan = tput_lab::plan::plan_scenarios(items).map_err(|e| e.to_string())?;
    Ok((points, plan))
}

/// The plan of `r`'s simulations, in the order a local run runs them (of
/// its first round, for a reproduction in rounds).
pub fn plan<R: Reproduction>(r: &R) -> Result<(Vec<R::Point>, Vec<tput_lab::plan::Point>), String> {
    let planned = r.points()?;
    plan_of(if r.in_rounds() { identified(planned)? } else { planned })
}

/// The results under `dir` (in it and in its subdirectories, one per
/// round: what `tputctl sweep run` wrote), by their points' `id` label.
fn results_by_id(name: &str, dir: &Path) -> Result<BTreeMap<String, PointResult>, String> {
    let mut dirs = vec![dir.to_path_buf()];
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut subdirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    dirs.extend(subdirs);
    let mut known = BTreeMap::new();
    for d in dirs {
        let has_points = std::fs::read_dir(&d)
            .map_err(|e| format!("cannot read {}: {e}", d.display()))?
            .filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().starts_with("point-"));
        if !has_points {
            continue;
        }
        let c = tput_lab::plan::collect(&d).map_err(|e| e.to_string())?;
        for x in c.results {
            let Some(id) = x.vary.get("id").cloned() else {
                return Err(format!(
                    "{}: point {} is not a result of a {name} plan",
                    d.display(),
                    x.index
                ));
            };
            known.insert(id, x);
        }
    }
    Ok(known)
}

/// Where a run's results come from.
enum Source<'a> {
    /// Simulated here on this many threads.
    Here(usize),
    /// Read from the results `tputctl sweep run` wrote in this directory,
    /// matched by plan and index (a reproduction in one round).
    Plan(&'a Path),
    /// Read from these results by their points' `id` label (a reproduction
    /// in rounds), those of the directory named.
    Ids(&'a Path, BTreeMap<String, PointResult>),
}

/// One simulation done: its point, what it measured (or why not), and the
/// CPU seconds it took when it ran here.
struct Done<P, M> {
    point: P,
    measured: Result<M, String>,
    cpu_secs: Option<f64>,
}

/// The one run path: round after round (one round for a reproduction not
/// in rounds) the points still needed, their results from `source`, each
/// measured once. Stops at the first round of which `source` lacks a point
/// (results from elsewhere only): the points done and that round's points
/// missing (none: every round is there).
#[allow(clippy::type_complexity)]
fn drive<R: Reproduction>(
    r: &R,
    source: &Source<'_>,
) -> Result<(Vec<Done<R::Point, R::Measured>>, Vec<Planned<R::Point>>), String> {
    let mut done: Vec<Done<R::Point, R::Measured>> = Vec::new();
    let mut so_far: Measured<R> = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    for round in 1.. {
        let mut need = r.next_round(&so_far)?;
        if r.in_rounds() {
            need = identified(need)?;
            need.retain(|p| !ids.contains(&p.labels["id"]));
            ids.extend(need.iter().map(|p| p.labels["id"].clone()));
        }
        if need.is_empty() {
            break;
        }
        let this_round: Vec<Done<R::Point, R::Measured>> = match source {
            Source::Here(jobs) => {
                let (points, plan) = plan_of(need)?;
                let total = plan.len();
                let count = |n: usize| match r.in_rounds() {
                    true => format!("round {round}: {n}/{total}"),
                    false => format!("{n}/{total}"),
                };
                let ran = run_parallel(
                    &plan,
                    *jobs,
                    |p| match crate::run_point(p) {
                        Ok((x, cpu)) => (r.measure(&points[p.index], &x), Some(cpu)),
                        Err(e) => (Err(e), None),
                    },
                    |n, p, (m, cpu)| progress_line(r, &count(n), &points[p.index], m, *cpu),
                );
                points
                    .into_iter()
                    .zip(ran)
                    .map(|(point, (measured, cpu_secs))| Done {
                        point,
                        measured,
                        cpu_secs,
                    })
                    .collect()
            }
            Source::Plan(dir) => {
                let (points, plan) = plan_of(need)?;
                let results = crate::plan_results(dir, &plan, |i| r.label(&points[i]))?;
                points
                    .into_iter()
                    .zip(results)
                    .map(|(point, x)| Done {
                        measured: r.measure(&point, &x),
                        point,
                        cpu_secs: None,
                    })
                    .collect()
            }
            Source::Ids(_, known) => {
                let missing: Vec<_> = need
                    .iter()
                    .filter(|p| !known.contains_key(&p.labels["id"]))
                    .cloned()
                    .collect();
                if !missing.is_empty() {
                    return Ok((done, missing));
                }
                need.into_iter()
                    .map(|p| Done {
                        measured: r.measure(&p.point, &known[&p.labels["id"]]),
                        point: p.point,
                        cpu_secs: None,
                    })
                    .collect()
            }
        };
        so_far.extend(this_round.iter().map(|d| (d.point.clone(), d.measured.clone())));
        done.extend(this_round);
    }
    Ok((done, Vec::new()))
}

/// Where the results of `r` come from: here on `jobs` threads, or the
/// directory `from`.
fn source<'a, R: Reproduction>(r: &R, jobs: usize, from: Option<&'a Path>) -> Result<Source<'a>, String> {
    Ok(match from {
        None => Source::Here(jobs),
        Some(dir) if r.in_rounds() => Source::Ids(dir, results_by_id(r.name(), dir)?),
        Some(dir) => Source::Plan(dir),
    })
}

/// The plan of the next round of `r` (a reproduction in rounds) given the
/// results under `dir`: what `--plan --from DIR` prints (empty: every round
/// is there, build with `--from DIR`).
pub fn plan_from<R: Reproduction>(r: &R, dir: &Path) -> Result<Vec<tput_lab::plan::Point>, String> {
    let (_, missing) = drive(r, &source(r, 1, Some(dir))?)?;
    plan_of(missing).map(|(_, plan)| plan)
}

/// One progress line to stderr for a finished point.
fn progress_line<R: Reproduction>(
    r: &R,
    count: &str,
    point: &R::Point,
    measured: &Result<R::Measured, String>,
    cpu_secs: Option<f64>,
) {
    let line = match measured {
        Ok(m) => r.progress(m),
        Err(e) => format!("FAILED: {e}"),
    };
    eprintln!(
        "[{count}] {}: {line} ({:.1} CPU-s)",
        r.label(point),
        cpu_secs.unwrap_or(0.0)
    );
}

/// Run `r`'s simulations here on `jobs` threads (`from: None`, with one
/// progress line per point to stderr) or read their results from `from`
/// (what `tputctl sweep run` wrote), then build its tables and files in
/// `out` (`cpu.csv` only for a local run).
pub fn run<R: Reproduction>(r: &R, out: &Path, jobs: usize, from: Option<&Path>) -> Result<Built, String> {
    run_measured(r, out, jobs, from).map(|(built, _)| built)
}

/// [`run`], also returning every point's measurement in plan order (for
/// tests that judge the numbers, not only the files).
pub fn run_measured<R: Reproduction>(
    r: &R,
    out: &Path,
    jobs: usize,
    from: Option<&Path>,
) -> Result<(Built, Measured<R>), String> {
    let source = source(r, jobs, from)?;
    let (done, missing) = drive(r, &source)?;
    if let (Some(first), Source::Ids(dir, _)) = (missing.first(), &source) {
        return Err(format!(
            "{}: no result for {}{}: run the next round (--plan --from {})",
            dir.display(),
            r.label(&first.point),
            match missing.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            },
            dir.display()
        ));
    }
    std::fs::create_dir_all(out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let mut cpu = Csv::new(&["point", "label", "cpu_secs"]);
    for (i, d) in done.iter().enumerate() {
        if let Some(secs) = d.cpu_secs {
            crate::csv_row!(cpu, i, r.label(&d.point), secs);
        }
    }
    let measured: Measured<R> = done.into_iter().map(|d| (d.point, d.measured)).collect();
    let mut built = r.build(out, &measured)?;
    let mut failures: Vec<String> = measured
        .iter()
        .filter_map(|(p, m)| m.as_ref().err().map(|e| format!("{}: {e}", r.label(p))))
        .collect();
    failures.append(&mut built.failures);
    if !failures.is_empty() {
        built.failed = true;
        let _ = writeln!(built.text, "\nFAILED points:");
        for f in &failures {
            let _ = writeln!(built.text, "  {f}");
        }
    }
    if from.is_none() {
        let path = out.join("cpu.csv");
        std::fs::write(&path, cpu.finish()).map_err(|e| format!("writing {}: {e}", path.display()))?;
        built.files.push(path);
    }
    let path = out.join("tables.txt");
    std::fs::write(&path, &built.text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    built.files.push(path);
    Ok((built, measured))
}

/// The `main` of a reproduction bench: read [`Mode`] and [`BenchEnv`] for
/// `name`, build the reproduction with `make`, then print its plan
/// (`--plan`) or run it (locally or `--from DIR`), print its tables and the
/// files written, and exit (1 if a point failed, 2 on bad input).
pub fn bench_main<R: Reproduction>(name: &str, make: impl FnOnce(&BenchEnv) -> Result<R, String>) -> ! {
    let mode = Mode::from_env(name);
    let r = BenchEnv::read(name).and_then(|env| Ok((make(&env)?, env)));
    let (r, env) = r.unwrap_or_else(|e| {
        eprintln!("{name}: {e}");
        std::process::exit(2)
    });
    let from = match mode {
        Mode::Run => None,
        Mode::Plan => crate::print_plan(name, plan(&r).map(|(_, p)| p)),
        Mode::From(dir) => Some(dir),
        Mode::PlanFrom(dir) if r.in_rounds() => crate::print_plan(name, plan_from(&r, &dir)),
        Mode::PlanFrom(_) => {
            eprintln!("{name}: --plan prints the whole plan in one round: give --plan or --from DIR");
            std::process::exit(2);
        }
    };
    let jobs = env.jobs.unwrap_or_else(tput_lab::sweep::default_jobs);
    let (cpu0, wall0) = (crate::cpu_secs(), std::time::Instant::now());
    match run_measured(&r, &env.out, jobs, from.as_deref()) {
        Ok((built, measured)) => {
            print!("{}", built.text);
            let failed = measured.iter().filter(|(_, m)| m.is_err()).count();
            if from.is_none() {
                let cpu = cpu0.zip(crate::cpu_secs()).map(|(a, b)| b - a);
                println!(
                    "{name}: {} simulations ({failed} failed) on {jobs} thread(s): wall {:.1} s, CPU {} s",
                    measured.len(),
                    wall0.elapsed().as_secs_f64(),
                    cpu.map_or("?".into(), |c| format!("{c:.1}"))
                );
            } else {
                println!("{name}: {} simulation results read ({failed} failed)", measured.len());
            }
            crate::finish(&built.files, built.failed)
        }
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::exit(2)
        }
    }
}

/// A CSV file built row by row, its cells written with `Display` (so a
/// float reads as `{}` prints it: `1`, `0.25`, `NaN`) and quoted by the
/// `csv` crate only where a cell needs it (a comma, a quote, a line break).
#[derive(Debug)]
pub struct Csv {
    w: csv::Writer<Vec<u8>>,
}

impl Csv {
    /// A file whose first line is `header`.
    pub fn new(header: &[&str]) -> Csv {
        let mut c = Csv {
            w: csv::WriterBuilder::new().flexible(true).from_writer(Vec::new()),
        };
        c.row(header);
        c
    }

    /// Append one row.
    pub fn row<T: std::fmt::Display>(&mut self, cells: &[T]) {
        // Writing into a Vec cannot fail.
        let _ = self.w.write_record(cells.iter().map(|c| c.to_string()));
    }

    /// The file's text.
    pub fn finish(self) -> String {
        let bytes = self.w.into_inner().unwrap_or_default();
        String::from_utf8(bytes).unwrap_or_default()
    }
}

/// One CSV row of mixed cells: `csv_row!(c, a, b, c)` appends `a,b,c` to the [`Csv`] `c`.
#[macro_export]
macro_rules! csv_row {
    ($csv:expr, $($cell:expr),+ $(,)?) => {
        $csv.row(&[$(&$cell as &dyn ::std::fmt::Display),+])
    };
}

/// Write `files` (name, contents) into `dir`, creating it; the paths written.
pub fn write_files<N: AsRef<str>>(dir: &Path, files: &[(N, String)]) -> Result<Vec<PathBuf>, String> {
    let refs: Vec<(&str, String)> = files.iter().map(|(n, t)| (n.as_ref(), t.clone())).collect();
    tput_lab::report::write_files(dir, &refs).map_err(|e| e.to_string())
}
