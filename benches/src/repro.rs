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

use crate::{BenchEnv, Mode, Ran};

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

/// Every point's measurement in plan order; a failed point carries its error.
pub type Measurements<P, M> = [(P, Result<M, String>)];

/// What [`Reproduction::build`] made.
#[derive(Debug, Clone, Default)]
pub struct Built {
    /// The tables, as printed (also written to `tables.txt`).
    pub text: String,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// Whether something the figures need failed (the bench exits with 1).
    pub failed: bool,
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
}

/// The plan of `r`'s simulations, in the order a local run runs them.
pub fn plan<R: Reproduction>(r: &R) -> Result<(Vec<R::Point>, Vec<tput_lab::plan::Point>), String> {
    let planned = r.points()?;
    let points = planned.iter().map(|p| p.point.clone()).collect();
    let items = planned.into_iter().map(|p| (p.labels, p.scenario, p.keep)).collect();
    let plan = tput_lab::plan::plan_scenarios(items).map_err(|e| e.to_string())?;
    Ok((points, plan))
}

/// Run `r`'s simulations here on `jobs` threads (`from: None`, with one
/// progress line per point to stderr) or read their results from `from`
/// (what `tputctl sweep run` wrote), then build its tables and files in
/// `out` (`cpu.csv` only for a local run).
pub fn run<R: Reproduction>(r: &R, out: &Path, jobs: usize, from: Option<&Path>) -> Result<Built, String> {
    let (points, plan) = plan(r)?;
    let ran: Vec<Ran> = match from {
        Some(dir) => crate::plan_results(dir, &plan, |i| r.label(&points[i]))?
            .into_iter()
            .map(|x| Ok((x, 0.0)))
            .collect(),
        None => {
            let total = plan.len();
            run_parallel(&plan, jobs, crate::run_point, |done, p, ran| {
                let point = &points[p.index];
                let line = match ran
                    .as_ref()
                    .map_err(Clone::clone)
                    .and_then(|(x, _)| r.measure(point, x))
                {
                    Ok(m) => r.progress(&m),
                    Err(e) => format!("FAILED: {e}"),
                };
                let cpu = ran.as_ref().map_or(0.0, |(_, c)| *c);
                eprintln!("[{done}/{total}] {}: {line} ({cpu:.1} CPU-s)", r.label(point));
            })
        }
    };
    std::fs::create_dir_all(out).map_err(|e| format!("creating {}: {e}", out.display()))?;
    let mut cpu = String::from("point,label,cpu_secs\n");
    let measured: Vec<_> = points
        .into_iter()
        .zip(ran)
        .enumerate()
        .map(|(i, (p, ran))| {
            if let Ok((_, secs)) = &ran {
                let _ = writeln!(cpu, "{i},\"{}\",{secs}", r.label(&p).replace('"', "'"));
            }
            let m = ran.and_then(|(x, _)| r.measure(&p, &x));
            (p, m)
        })
        .collect();
    let mut built = r.build(out, &measured)?;
    let failures: Vec<String> = measured
        .iter()
        .filter_map(|(p, m)| m.as_ref().err().map(|e| format!("{}: {e}", r.label(p))))
        .collect();
    if !failures.is_empty() {
        built.failed = true;
        let _ = writeln!(built.text, "\nFAILED points:");
        for f in &failures {
            let _ = writeln!(built.text, "  {f}");
        }
    }
    if from.is_none() {
        let path = out.join("cpu.csv");
        std::fs::write(&path, cpu).map_err(|e| format!("writing {}: {e}", path.display()))?;
        built.files.push(path);
    }
    let path = out.join("tables.txt");
    std::fs::write(&path, &built.text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    built.files.push(path);
    Ok(built)
}

/// The `main` of a reproduction bench: read [`Mode`] and [`BenchEnv`] for
/// `name`, build the reproduction with `make`, then print its plan
/// (`--plan`) or run it (locally or `--from DIR`), print its tables and the
/// files written, and exit (1 if a point failed, 2 on bad input).
pub fn bench_main<R: Reproduction>(name: &str, make: impl FnOnce(&BenchEnv) -> Result<R, String>) -> ! {
    let mode = Mode::from_env(name);
    let env = BenchEnv::read(name);
    let r = make(&env).unwrap_or_else(|e| {
        eprintln!("{name}: {e}");
        std::process::exit(2)
    });
    let from = match mode {
        Mode::Run => None,
        Mode::Plan => crate::print_plan(name, plan(&r).map(|(_, p)| p)),
        Mode::From(dir) => Some(dir),
        Mode::PlanFrom(_) => {
            eprintln!("{name}: --plan prints the whole plan in one round: give --plan or --from DIR");
            std::process::exit(2);
        }
    };
    let jobs = env.jobs.unwrap_or_else(tput_lab::sweep::default_jobs);
    let (cpu0, wall0) = (crate::cpu_secs(), std::time::Instant::now());
    match run(&r, &env.out, jobs, from.as_deref()) {
        Ok(built) => {
            print!("{}", built.text);
            if from.is_none() {
                let cpu = cpu0.zip(crate::cpu_secs()).map(|(a, b)| b - a);
                println!(
                    "{name}: {jobs} thread(s), wall {:.1} s, CPU {} s",
                    wall0.elapsed().as_secs_f64(),
                    cpu.map_or("?".into(), |c| format!("{c:.1}"))
                );
            }
            crate::finish(&built.files, built.failed)
        }
        Err(e) => {
            eprintln!("{name}: {e}");
            std::process::exit(2)
        }
    }
}
