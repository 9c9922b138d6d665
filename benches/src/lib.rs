//! Shared helpers for the benchmarks, and the paper reproductions.
//!
//! - [`seed000`]: Yamanegi, Hasegawa, Murata, "Congestion control for a
//!   guaranteed (predictable) throughput" — Figs. 4/5, 6 and 7, the aggregate
//!   controller and Fig. 6 with the inline estimator
//!   (`cargo bench -p tput-benches --bench seed000`).
//! - [`guarantee`]: does the throughput guarantee hold, and at what cost:
//!   the guarantee controller's default mode beside the paper's, NewReno and
//!   a fixed window, against QUIC NewReno, CUBIC and TCP Reno, Fig. 7's five
//!   flows, an overbooked link, the mechanism, and live through the relay
//!   (`cargo bench -p tput-benches --bench guarantee`).
//! - [`seed001`]: Morokoshi, Yakoh, periodic data-link cut-offs vs TCP
//!   throughput — throughput vs occupancy, the timeout mechanism, the two
//!   remedies (`cargo bench -p tput-benches --bench seed001`).
//! - [`seed002`]: Miyake, Kato, Suzuki, "Implementation of high speed
//!   transport protocol as user level library and its evaluation" — QUIC
//!   with N application buffers in flight against window-limited TCP, over
//!   RTT, with bit errors, simulated and live
//!   (`cargo bench -p tput-benches --bench seed002`).
//! - [`tcp_ns2`]: the simulator's TCP model against ns-2 2.35 on the seed-000
//!   dumbbell (`cargo bench -p tput-benches --bench tcp_ns2`), and its CPU
//!   time and memory against ns-2's (`--bench tcp_cpu`).
//! - [`live_faults`]: live, verified transfers through the relay's faults
//!   (loss, cut-offs, a rate drop, NAT rebinding, a long delay, a dead
//!   path; the list is `tput_lab::live::faults`, which the relay's tests run at
//!   toy size) (`cargo bench -p tput-benches --bench live_faults`); the
//!   timing figures the tests no longer judge: `--bench live_timing`.
//! - [`soak`]: one server under many clients, killed clients, impostors,
//!   garbage and spoofed Initials; memory and descriptors
//!   (`cargo bench -p tput-benches --bench soak`).
//! - [`hystart`]: HyStart++ (RFC 9406) beside plain slow start on a
//!   large-BDP, deep-buffer path (`cargo bench -p tput-benches --bench
//!   hystart`).
//! - [`bbr_compare`]: this project's BBRv3 against quinn-proto's BBR on a
//!   100 Mbit/s, 50 ms dumbbell, alone and beside CUBIC and NewReno
//!   (`cargo bench -p tput-benches --bench bbr_compare`).
//! - [`seed003`]: R. Araki, TCP variants under power-saving link-rate
//!   control — `W_min` of NewReno, CUBIC, Vegas and Compound TCP vs delay,
//!   flows and file size, for the TCP model and QUIC
//!   (`cargo bench -p tput-benches --bench seed003`).

pub mod aqm_check;
pub mod bbr_compare;
pub mod guarantee;
pub mod hystart;
pub mod live_faults;
pub mod repro;
pub mod seed000;
pub mod seed001;
/// Counting timeouts in simulated time: [`tput_lab::timeouts`], where a
/// plan point's run can count them too.
pub use tput_lab::timeouts as seed001_timeouts;
pub mod seed002;
pub mod seed003;
pub mod soak;
pub mod tcp_ns2;

use std::path::PathBuf;

/// CPU seconds used so far by this process, threads that have exited
/// included; `None` off Linux.
pub use tput_transport::usage::process_cpu_secs as cpu_secs;
/// CPU seconds used so far by the calling thread; `None` off Linux.
pub use tput_transport::usage::thread_cpu_secs;

/// What every reproduction bench reads from the environment (its
/// arguments: [`Mode`]):
/// `TPUT_BENCH_OUT` (default `target/repro/NAME`), `TPUT_BENCH_SHORT=1`,
/// `TPUT_BENCH_JOBS` and `TPUT_BENCH_FIGURES` (comma-separated).
#[derive(Debug, Clone)]
pub struct BenchEnv {
    /// Where the files go.
    pub out: PathBuf,
    /// The toy-size smoke run.
    pub short: bool,
    /// Worker threads, if given.
    pub jobs: Option<usize>,
    /// Only these figures, if given.
    pub figures: Option<Vec<String>>,
}

impl BenchEnv {
    /// Read the environment for the bench `name`; a value that does not
    /// parse is a one-line error naming the variable.
    pub fn read(name: &str) -> Result<BenchEnv, String> {
        BenchEnv::read_from(name, |k| std::env::var(k).ok())
    }

    /// [`read`](Self::read) with `var` in place of the environment.
    pub fn read_from(name: &str, var: impl Fn(&str) -> Option<String>) -> Result<BenchEnv, String> {
        let short = match var("TPUT_BENCH_SHORT").as_deref().map(str::trim) {
            None | Some("" | "0") => false,
            Some("1") => true,
            Some(v) => return Err(format!("TPUT_BENCH_SHORT: `{v}` is neither 1 (short) nor 0")),
        };
        let jobs = match var("TPUT_BENCH_JOBS") {
            None => None,
            Some(j) => match j.trim().parse::<usize>() {
                Ok(n) if n > 0 => Some(n),
                _ => return Err(format!("TPUT_BENCH_JOBS: `{j}` is not a positive number of threads")),
            },
        };
        Ok(BenchEnv {
            out: var("TPUT_BENCH_OUT")
                .map(PathBuf::from)
                .unwrap_or_else(|| repro_dir().join(name)),
            short,
            jobs,
            figures: var("TPUT_BENCH_FIGURES").map(|f| {
                f.split(',')
                    .map(|f| f.trim().to_string())
                    .filter(|f| !f.is_empty())
                    .collect()
            }),
        })
    }
}

impl BenchEnv {
    /// A one-line error if `TPUT_BENCH_FIGURES` is set for a bench that
    /// has no figures to choose from; `instead` says what it has.
    pub fn no_figures(&self, instead: &str) -> Result<(), String> {
        match &self.figures {
            Some(_) => Err(format!(
                "TPUT_BENCH_FIGURES: this bench has no figures to choose ({instead})"
            )),
            None => Ok(()),
        }
    }
}

/// What a reproduction bench is asked to do by its arguments (after `--`
/// in `cargo bench -p tput-benches --bench NAME -- ARGS`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// No argument: run the simulations here and build the figures.
    Run,
    /// `--plan`: print the plan of every simulation (one JSON object per
    /// line, for `tputctl sweep run FILE --index N --out DIR`) and exit.
    Plan,
    /// `--from DIR`: build the figures from the point results in `DIR`
    /// (what `tputctl sweep run` wrote) instead of simulating.
    From(PathBuf),
    /// `--plan --from DIR`: print the plan of the simulations still needed
    /// given the results in `DIR` (seed 003, whose searches run in rounds).
    PlanFrom(PathBuf),
}

impl Mode {
    /// Read the arguments after the program's name. `--bench` (which `cargo
    /// bench` passes) and bare words (cargo's benchmark filters) are
    /// ignored; any other flag is an error naming it.
    pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Mode, String> {
        let mut mode = Mode::Run;
        let mut args = args.into_iter();
        while let Some(a) = args.next() {
            let next = match a.as_str() {
                "--bench" => continue,
                "--plan" => Mode::Plan,
                "--from" => Mode::From(
                    args.next()
                        .filter(|d| !d.starts_with("--"))
                        .ok_or("--from needs a directory (of `tputctl sweep run` results)")?
                        .into(),
                ),
                f if f.starts_with('-') => return Err(format!("unknown argument `{f}` (known: --plan, --from DIR)")),
                _ => continue,
            };
            mode = match (mode, next) {
                (Mode::Run, next) => next,
                (Mode::Plan, Mode::From(d)) | (Mode::From(d), Mode::Plan) => Mode::PlanFrom(d),
                _ => return Err("--plan and --from DIR may each be given once".into()),
            };
        }
        Ok(mode)
    }

    /// [`Mode::parse`] of this process's arguments; a bad argument prints a
    /// one-line error and exits with status 2.
    pub fn from_env(bench: &str) -> Mode {
        Mode::parse(std::env::args().skip(1)).unwrap_or_else(|e| {
            eprintln!("{bench}: {e}");
            std::process::exit(2)
        })
    }
}

/// Print `plan` (one JSON object per line) on stdout and a count on stderr,
/// then exit: what a reproduction bench does with `--plan`.
pub fn print_plan(bench: &str, plan: Result<Vec<tput_lab::plan::Point>, String>) -> ! {
    use std::io::Write as _;
    let (points, text) = match plan.and_then(|p| {
        let text = tput_lab::plan::plan_text(&p).map_err(|e| e.to_string())?;
        Ok((p, text))
    }) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{bench}: {e}");
            std::process::exit(2)
        }
    };
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        eprintln!("{bench}: writing the plan: {e}");
        std::process::exit(1)
    }
    eprintln!(
        "{bench}: {} point(s), plan {}",
        points.len(),
        points.first().map_or("-", |p| p.plan.as_str())
    );
    std::process::exit(0)
}

/// A plan point's result, read back as a collector reads it, and the CPU
/// seconds its simulation took (0 when unknown: results from elsewhere).
pub type Ran = Result<(tput_lab::plan::PointResult, f64), String>;

/// Run one plan point as `tputctl sweep run` does and read its result back
/// as a collector does (a local run then builds its figures from the very
/// numbers a run elsewhere would leave in its file); with the CPU seconds
/// of the calling thread (wall seconds off Linux).
pub fn run_point(p: &tput_lab::plan::Point) -> Ran {
    let (cpu0, wall0) = (thread_cpu_secs(), std::time::Instant::now());
    let r = p.run().map_err(|e| e.to_string())?;
    let cpu = cpu0
        .zip(thread_cpu_secs())
        .map_or(wall0.elapsed().as_secs_f64(), |(a, b)| b - a);
    Ok((r.as_collected().map_err(|e| e.to_string())?, cpu))
}

/// The results in `dir` (written by `tputctl sweep run`) of every point of
/// `plan`, in plan order; `label(i)` names point `i` in errors. A missing
/// result, or one of another plan, is a one-line error naming the point.
pub fn plan_results(
    dir: &std::path::Path,
    plan: &[tput_lab::plan::Point],
    label: impl Fn(usize) -> String,
) -> Result<Vec<tput_lab::plan::PointResult>, String> {
    let Some(first) = plan.first() else {
        return Ok(Vec::new());
    };
    let c = tput_lab::plan::collect(dir).map_err(|e| e.to_string())?;
    if let Some(r) = c.results.iter().find(|r| r.plan != first.plan) {
        return Err(format!(
            "{}: point {} is a result of plan {}, not of this plan ({}): other options, figures or TPUT_BENCH_SHORT?",
            dir.display(),
            r.index,
            r.plan,
            first.plan
        ));
    }
    if let Some(&i) = c.missing.first() {
        return Err(format!(
            "{}: no result for point {i} ({}){}",
            dir.display(),
            label(i),
            match c.missing.len() {
                1 => String::new(),
                n => format!(" (and {} more of the {} points)", n - 1, plan.len()),
            }
        ));
    }
    Ok(c.results)
}

/// Print the files a bench wrote and exit: status 1 if `failed`, else 0.
pub fn finish(files: &[PathBuf], failed: bool) -> ! {
    for f in files {
        println!("wrote {}", f.display());
    }
    std::process::exit(i32::from(failed))
}

/// A current-thread tokio runtime with I/O and timers, as `tputctl` runs
/// its live loops.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

pub use tput_lab::live::spawn_server;

/// The relay of `tputctl relay` on a thread of its own, between a client
/// and the server at `to`, with the link model `links`; [`finish`](Self::finish)
/// stops it and returns its counters.
pub struct LiveRelay {
    /// The address clients send to.
    pub addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: std::sync::mpsc::Receiver<Result<tput_lab::live::relay::RelayStats, String>>,
}

impl LiveRelay {
    /// Start the relay on 127.0.0.1 (an ephemeral port), seeded with `seed`.
    pub fn start(
        to: std::net::SocketAddr,
        links: tput_lab::live::relay::RelayLinks,
        seed: u64,
    ) -> Result<Self, String> {
        use tput_lab::live::relay::{Relay, RelayConfig};
        let (forward, reverse) = links.configs().map_err(|e| e.to_string())?;
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            runtime().block_on(async move {
                let relay = match Relay::bind(RelayConfig {
                    listen: "127.0.0.1:0".parse().expect("an address"),
                    to,
                    forward,
                    reverse,
                    seed,
                })
                .await
                {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = addr_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                let _ = addr_tx.send(relay.local_addr().map_err(|e| e.to_string()));
                let stop = async move {
                    let _ = stop_rx.await;
                };
                let stats = relay
                    .run(stop, std::time::Duration::ZERO, |_| {})
                    .await
                    .map_err(|e| e.to_string());
                let _ = done_tx.send(stats);
            });
        });
        let addr = addr_rx
            .recv_timeout(std::time::Duration::from_secs(10))
            .map_err(|_| "the relay did not start".to_string())??;
        Ok(Self {
            addr,
            stop: Some(stop_tx),
            done: done_rx,
        })
    }

    /// Stop the relay; its counters.
    pub fn finish(mut self) -> Result<tput_lab::live::relay::RelayStats, String> {
        drop(self.stop.take());
        self.done
            .recv_timeout(std::time::Duration::from_secs(10))
            .map_err(|_| "the relay did not stop".to_string())?
    }
}

/// `TPUT_BENCH_N`'s value as a list of flow counts (`10,30`); `what` names
/// a count in the one-line error (e.g. "a number of Reno flows").
pub fn env_counts(value: &str, what: &str) -> Result<Vec<u32>, String> {
    let counts = value
        .split(',')
        .map(str::trim)
        .filter(|n| !n.is_empty())
        .map(|n| {
            n.parse::<u32>()
                .map_err(|_| format!("TPUT_BENCH_N: `{n}` is not {what}"))
        })
        .collect::<Result<Vec<u32>, String>>()?;
    if counts.is_empty() {
        return Err("TPUT_BENCH_N: no count named".into());
    }
    Ok(counts)
}

/// `TPUT_BENCH_TCP_PROFILE`'s value: the TCP model's profile (`ns2` or
/// `linux`), or a one-line error naming the variable.
pub fn env_tcp_profile(value: &str) -> Result<tput_tcp::Profile, String> {
    value
        .trim()
        .parse()
        .map_err(|e: String| format!("TPUT_BENCH_TCP_PROFILE: {e}"))
}

/// Where reproductions write their files: `$CARGO_TARGET_DIR/repro`, else the
/// workspace's `target/repro`.
pub fn repro_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
        .join("repro")
}

#[cfg(test)]
mod tests {
    use super::BenchEnv;

    #[test]
    fn the_bench_environment_reads_or_names_a_bad_value() {
        let read = |pairs: &[(&str, &str)]| {
            BenchEnv::read_from("x", |k| pairs.iter().find(|(x, _)| *x == k).map(|(_, v)| v.to_string()))
        };
        let e = read(&[("TPUT_BENCH_SHORT", "1"), ("TPUT_BENCH_JOBS", "3")]).unwrap();
        assert!(e.short && e.jobs == Some(3) && e.figures.is_none());
        assert!(e.out.ends_with("repro/x"));
        let e = read(&[("TPUT_BENCH_FIGURES", "a, b"), ("TPUT_BENCH_OUT", "/o")]).unwrap();
        assert!(e.no_figures("parts").unwrap_err().contains("(parts)"));
        assert_eq!(e.figures, Some(vec!["a".to_string(), "b".into()]));
        assert_eq!((e.short, e.jobs, e.out), (false, None, "/o".into()));
        for (k, v) in [
            ("TPUT_BENCH_JOBS", "two"),
            ("TPUT_BENCH_JOBS", "0"),
            ("TPUT_BENCH_SHORT", "yes"),
        ] {
            let err = read(&[(k, v)]).unwrap_err();
            assert!(
                err.starts_with(k) && err.contains(&format!("`{v}`")) && !err.contains('\n'),
                "{err}"
            );
        }
    }
}
