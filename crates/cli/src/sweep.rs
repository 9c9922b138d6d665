//! `tputctl sweep`: plan, run and collect sweeps.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::Subcommand;
use tput_lab::report;

use crate::{Failure, outln};

pub(crate) const SWEEP_AFTER_HELP: &str = "\
A plan is JSON lines, one self-contained point (scenario + seed) per line; a point's
result depends only on the point, never on the machine, the order or the job count.
  tputctl sweep plan S.toml --vary 'flows[1].count=1,2,5,10' --seeds 1..3 > points.jsonl
  tputctl sweep run points.jsonl --jobs 2 --out res                # all points here
  parallel tputctl sweep run points.jsonl --index {} --out res ::: $(seq 0 11)
  sbatch --array=0-11 --wrap 'tputctl sweep run points.jsonl --index $SLURM_ARRAY_TASK_ID --out res'
  tputctl sweep collect res                                        # res/sweep.csv, res/sweep.json
--vary PATH=V1,V2: PATH as flows[1].count, topology.bottleneck.rate, flows[0].cc; a comma
followed by name= continues the value before it (controller parameters):
  --vary 'flows[0].cc=guarantee:target=10Mbit/s,eval=1s,newreno' is two values.";

#[derive(Subcommand)]
pub(crate) enum SweepCmd {
    /// Write the points of a sweep over a scenario file, one JSON object per line, on stdout.
    Plan {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// A varied key and its values, PATH=V1,V2,... (repeatable; the first is outermost).
        #[arg(long, value_name = "PATH=V1,V2", value_parser = parse_vary)]
        vary: Vec<tput_lab::plan::Vary>,
        /// Seeds: A..B (inclusive) or A,B,C [default: the scenario's seed].
        #[arg(long, value_parser = parse_seed_list)]
        seeds: Option<SeedList>,
    },
    /// Run one point (--index) or all of them (on --jobs threads, by default
    /// one per core) and write point-NNNNNN.json files into --out.
    Run {
        /// The plan (JSON lines from `sweep plan`).
        plan: PathBuf,
        /// Run only this point (0-based), as a job array or GNU parallel would.
        #[arg(long, conflicts_with = "jobs")]
        index: Option<usize>,
        /// Run every point on this many threads [default: the available cores].
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
        jobs: Option<u32>,
        /// Where the results go.
        #[arg(long)]
        out: PathBuf,
        /// Skip points whose result file already exists (resume an interrupted run).
        #[arg(long)]
        resume: bool,
    },
    /// Merge a directory's point results into sweep.csv and sweep.json (refuses mixed plans).
    Collect {
        /// The results directory.
        dir: PathBuf,
        /// Collect even if some points have no result yet.
        #[arg(long)]
        partial: bool,
    },
}

pub(crate) fn parse_vary(s: &str) -> Result<tput_lab::plan::Vary, String> {
    tput_lab::plan::Vary::parse(s).map_err(|e| e.to_string())
}

/// The seeds of `sweep plan --seeds`.
#[derive(Clone, Debug)]
pub(crate) struct SeedList(Vec<u64>);

pub(crate) fn parse_seed_list(s: &str) -> Result<SeedList, String> {
    tput_lab::plan::parse_seeds(s).map(SeedList).map_err(|e| e.to_string())
}

pub(crate) fn run(cmd: SweepCmd) -> Result<bool, Failure> {
    use tput_lab::plan;
    let input = |e: tput_lab::Error| {
        if e.is_invalid() {
            Failure::Input(e.to_string())
        } else {
            Failure::Run(e.into())
        }
    };
    match cmd {
        SweepCmd::Plan { scenario, vary, seeds } => {
            let text = std::fs::read_to_string(&scenario)
                .map_err(|e| Failure::Input(format!("cannot read {}: {e}", scenario.display())))?;
            let seeds = seeds.as_ref().map_or(&[][..], |s| &s.0[..]);
            let points = plan::plan_in(&text, scenario.parent(), &vary, seeds)
                .map_err(|e| Failure::Input(format!("{}: {e}", scenario.display())))?;
            for p in &points {
                let line = serde_json::to_string(p).map_err(|e| Failure::Run(e.into()))?;
                outln!("{line}");
            }
            eprintln!(
                "{} point(s), plan {}",
                points.len(),
                points.first().map_or("-", |p| p.plan.as_str())
            );
            Ok(true)
        }
        SweepCmd::Run {
            plan: file,
            index,
            jobs,
            out,
            resume,
        } => {
            let points = plan::read_points(&file).map_err(input)?;
            let todo: Vec<&plan::Point> =
                match index {
                    Some(i) => vec![points.get(i).ok_or_else(|| {
                        Failure::Input(format!("--index {i}: the plan has {} point(s)", points.len()))
                    })?],
                    None => points.iter().collect(),
                };
            let todo: Vec<&plan::Point> = todo
                .into_iter()
                .filter(|p| !(resume && plan::result_path(&out, p.index).exists()))
                .collect();
            let jobs = jobs.map_or_else(tput_lab::sweep::default_jobs, |j| j as usize);
            let show = std::io::stderr().is_terminal() && todo.len() > 1;
            let started = std::time::Instant::now();
            let total = todo.len();
            let results = tput_lab::sweep::run_parallel(
                &todo,
                jobs,
                |p| p.run().and_then(|r| plan::write_result(&out, &r).map(|_| r)),
                |done, _, _| {
                    if show {
                        let el = started.elapsed().as_secs_f64();
                        let eta = el / done as f64 * (total - done) as f64;
                        eprint!("\r{done}/{total} points, {el:.0} s elapsed, ETA {eta:.0} s   ");
                        let _ = std::io::stderr().flush();
                    }
                },
            );
            if show {
                eprintln!();
            }
            let mut ok = true;
            for (p, r) in todo.iter().zip(results) {
                match r {
                    Ok(r) if r.summary.ok() => {}
                    Ok(r) => {
                        ok = false;
                        let errs: Vec<String> = r.summary.flows.iter().flat_map(|f| f.errors.clone()).collect();
                        eprintln!("tputctl: point {}: a flow failed: {}", p.index, errs.join("; "));
                    }
                    Err(e) => {
                        ok = false;
                        eprintln!("tputctl: point {}: {e}", p.index);
                    }
                }
            }
            Ok(ok)
        }
        SweepCmd::Collect { dir, partial } => {
            let c = plan::collect(&dir).map_err(input)?;
            if !c.missing.is_empty() && !partial {
                let shown: Vec<String> = c.missing.iter().take(10).map(usize::to_string).collect();
                return Err(Failure::Input(format!(
                    "{}: {} point(s) have no result (e.g. {}): run them, or pass --partial",
                    dir.display(),
                    c.missing.len(),
                    shown.join(", ")
                )));
            }
            let csv = c.csv().map_err(input)?;
            let json = report::to_json(&c.results, true).map_err(input)?;
            let files = report::write_files(&dir, &[("sweep.csv", csv), ("sweep.json", json)]).map_err(input)?;
            for f in files {
                outln!("wrote {}", f.display());
            }
            outln!("{} point(s), {} missing", c.results.len(), c.missing.len());
            Ok(true)
        }
    }
}
