//! Seed 003 reproduced: R. Araki, on TCP variants (NewReno, CUBIC, Vegas,
//! Compound TCP) under power-saving link-rate control (see docs/papers.md):
//! the smallest bottleneck rate `W_min` at which file transfers take at most
//! 10% longer than at 100 Mbit/s, for the simulator's TCP model and for QUIC.
//!
//! # Set-up (the paper's, with the choices this reproduction makes)
//!
//! - Dumbbell S_n -> R1 -> R2 -> D_n; the R1-R2 bottleneck runs at the rate
//!   under test with delay 1, 5, 10, 20 or 100 ms and a DropTail queue of
//!   100 packets (the paper gives none: our choice; 400 in the buffer
//!   sensitivity). Access links 1 Gbit/s, 1 ms, 1000 packets (our choice).
//! - Traffic per sender node: files with exponential gaps and Pareto sizes
//!   (shape 2.5, our choice), a new connection per file, mean load 10 Mbit/s
//!   per node (gap = mean size / 10 Mbit/s: 0.5 s for 5 Mbit files). Arrivals
//!   and sizes come from the seed alone, so every rate of one search, and the
//!   TCP model and QUIC, see the same files (a paired comparison).
//! - Files arrive for a window ([`Options::window`], longer for large files so
//!   that every flow sees about [`Options::files_per_flow`] files), then the
//!   run goes on for up to [`Options::drain`] so running files finish; files
//!   still running then are counted (unfinished), as are files refused (the
//!   QUIC server's 64-connection limit) or failed.
//! - `D_e` = sum of the file times of all completed files of all flows /
//!   number of completed files. File time, as the paper measures it in ns-2
//!   (from the file's arrival at the sender to the last ACK): from the file's
//!   creation at the sender until the sender holds the confirmation that its
//!   last byte arrived (the TCP model: the ACK of the last byte; QUIC: the
//!   receiver's report), so the handshake, initial losses and their timeouts
//!   are in. We also report the transfer time, from the moment the receiver
//!   sees the transfer begin (QUIC: the request arrives; TCP model, which has
//!   no handshake: the first segment arrives) to the last byte.
//! - `W_min`: the smallest rate whose `D_e <= 1.1 * D_e(100 Mbit/s)` with no
//!   file lost (refused, failed, unfinished). Search ([`search`]): `D_e` at
//!   100 Mbit/s once, then the grid 90, 80, ... Mbit/s downwards until a rate
//!   fails, then bisection between the last pass and the first fail down to
//!   [`Options::resolution_mbps`]. Rates at or below the offered load are
//!   failed without running (the queue would grow without bound). The grid
//!   stops at 10 Mbit/s, the bottom of the paper's range. 3 seeds; mean and
//!   min-max over them.
//! - TCP model: ns-2-like defaults (1000-byte segments, min RTO 200 ms, no
//!   delayed ACKs) with SACK recovery (RFC 6675; ns-2's `Agent/TCP/Sack1`):
//!   the model does not pace, so slow start overshoots the 100-packet buffer
//!   by many packets, and NewReno's one retransmission per round trip
//!   doubled `D_e` at 100 Mbit/s in a probe (0.93 s against 0.41 s, 5 flows,
//!   10 ms), hiding the controllers behind loss recovery. QUIC: quinn-proto, 1200-byte packets.
//!   Both with the same controllers (`newreno`, `cubic`, `vegas`, `ctcp`) at
//!   their defaults, initial window 10 packets (RFC 9002 §7.2); the initial
//!   window sensitivity runs `newreno:iw=2` (ns-2's `windowInit_`).
//!
//! # Figures
//!
//! - `delay`: `W_min` vs bottleneck delay (1, 5, 10, 20, 100 ms), 5 flows,
//!   5 Mbit files, 10 Mbit/s per node, the four controllers.
//! - `flows`: `W_min` vs flows (1, 2, 5) at 10 and 100 ms.
//! - `size`: `W_min` vs mean file size (1, 5, 10, 50 Mbit) at the same mean
//!   load, 1 flow, 10 ms (the paper's NewReno claim).
//! - `buffer`: the `delay` figure with a 4x buffer (400 packets).
//! - `iw`: NewReno with initial window 2 against 10, over the delays.
//! - `D_e` vs rate: every rate each search ran, `D_e(r) / D_e(100)` against
//!   the 1.1 line, for one configuration per figure.

//!
//! # As plans, in rounds
//!
//! Every simulation is a point of a `tput_lab::plan` plan that keeps its
//! flows' file statistics, labelled with its configuration, rate and an
//! identity (a hash of its scenario, so of every option that shapes it).
//! A search's next rate depends on the results before it, so the
//! simulations come in rounds ([`Reproduction::in_rounds`]): the first holds every reference
//! run at 100 Mbit/s with every grid rate above the offered load (tried
//! together rather than one by one until the first failure; a rate below
//! the first failure is run needlessly) and the `D_e`-vs-rate curves; each
//! next round holds one bisection step of every unfinished search.
//! [`Seed003`] is that [`Reproduction`]: [`crate::repro`] runs the rounds
//! here, each in parallel, and builds the figures from the results as read
//! back from JSON, or builds the same tables and files from results that
//! `tputctl sweep run` wrote anywhere, one directory per round. The bench's
//! flags: `--plan`, `--plan --from DIR`, `--from DIR` (see
//! `benches/benches/seed003.rs`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use tput_cc::units::Rate;
use tput_lab::files::{FileStats, pooled};
use tput_lab::plan::Keep;
use tput_lab::scenario::{FilesSpec, FlowGroup, LinkSpec, Scenario, TcpSpec, TopologySpec, Transport, run_with};
use tput_tcp::Recovery;

use crate::repro::{Built, Measurements, Planned, Reproduction};

mod tables;

use tables::{figure_xs, pick_x};

/// The four controllers of the paper, as `tput-cc` specs.
pub const CONTROLLERS: [&str; 4] = ["newreno", "cubic", "vegas", "ctcp"];

/// Every figure, by name.
pub const FIGURES: [&str; 5] = ["delay", "flows", "size", "buffer", "iw"];

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Seeds per configuration.
    pub seeds: Vec<u64>,
    /// Shortest arrival window.
    pub window: Duration,
    /// The window is lengthened so that each flow expects at least this many files.
    pub files_per_flow: f64,
    /// After the window, running files get up to this long to finish.
    pub drain: Duration,
    /// Resolution of the bisection, Mbit/s.
    pub resolution_mbps: f64,
    /// Bottleneck delays of the `delay`, `buffer` and `iw` figures, ms.
    pub delays_ms: Vec<f64>,
    /// Flow counts of the `flows` figure.
    pub flows: Vec<u32>,
    /// Delays of the `flows` figure, ms.
    pub flows_delays_ms: Vec<f64>,
    /// Mean file sizes of the `size` figure, Mbit.
    pub sizes_mbit: Vec<f64>,
    /// Transports.
    pub transports: Vec<Transport>,
    /// Figures to make (names in [`FIGURES`]).
    pub figures: Vec<String>,
    /// Controllers.
    pub controllers: Vec<String>,
}

impl Options {
    /// The full reproduction.
    pub fn full() -> Self {
        Self {
            seeds: vec![1, 2, 3],
            window: Duration::from_secs(20),
            files_per_flow: 30.0,
            drain: Duration::from_secs(30),
            resolution_mbps: 1.0,
            delays_ms: vec![1.0, 5.0, 10.0, 20.0, 100.0],
            flows: vec![1, 2, 5],
            flows_delays_ms: vec![10.0, 100.0],
            sizes_mbit: vec![1.0, 5.0, 10.0, 50.0],
            transports: vec![Transport::Tcp, Transport::Quic],
            figures: FIGURES.iter().map(|s| s.to_string()).collect(),
            controllers: CONTROLLERS.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// A smoke test of every figure: one seed, short windows, coarse resolution.
    pub fn short() -> Self {
        Self {
            seeds: vec![1],
            window: Duration::from_secs(4),
            files_per_flow: 4.0,
            drain: Duration::from_secs(10),
            resolution_mbps: 10.0,
            delays_ms: vec![10.0, 100.0],
            flows: vec![1, 5],
            flows_delays_ms: vec![10.0],
            sizes_mbit: vec![1.0, 10.0],
            ..Self::full()
        }
    }
}

/// One configuration whose `W_min` is searched.
#[derive(Debug, Clone, PartialEq)]
pub struct Setup {
    /// Transport.
    pub transport: Transport,
    /// Controller spec.
    pub cc: String,
    /// Sender/receiver pairs.
    pub flows: u32,
    /// Bottleneck delay, ms.
    pub delay_ms: f64,
    /// Mean file size, Mbit.
    pub size_mbit: f64,
    /// Mean offered load per node, Mbit/s.
    pub load_mbps: f64,
    /// Bottleneck queue, packets.
    pub buffer: u32,
}

impl Setup {
    /// The paper's point: 5 flows, 5 Mbit files, 10 Mbit/s per node, 100-packet buffer.
    pub fn paper(transport: Transport, cc: &str, delay_ms: f64) -> Self {
        Self {
            transport,
            cc: cc.into(),
            flows: 5,
            delay_ms,
            size_mbit: 5.0,
            load_mbps: 10.0,
            buffer: 100,
        }
    }

    /// A short name for progress lines and CSV.
    pub fn key(&self) -> String {
        format!(
            "{}/{}/n{}/d{}ms/f{}Mbit/q{}",
            transport_name(self.transport),
            self.cc,
            self.flows,
            self.delay_ms,
            self.size_mbit,
            self.buffer
        )
    }

    /// Offered load of all flows, Mbit/s.
    pub fn offered_mbps(&self) -> f64 {
        self.load_mbps * f64::from(self.flows)
    }

    /// The arrival window for options `o`.
    pub fn window(&self, o: &Options) -> Duration {
        let gap = self.size_mbit / self.load_mbps;
        o.window.max(Duration::from_secs_f64(gap * o.files_per_flow))
    }

    /// The scenario at bottleneck `rate_mbps` for `seed`.
    pub fn scenario(&self, o: &Options, rate_mbps: f64, seed: u64) -> Result<Scenario, String> {
        let rate: Rate = format!("{}bit/s", (rate_mbps * 1e6).round() as u64)
            .parse()
            .map_err(|e| format!("{e}"))?;
        let delay = Duration::from_secs_f64(self.delay_ms / 1e3);
        let bottleneck = LinkSpec::new(rate, delay).with_queue_packets(self.buffer);
        let access = LinkSpec::new("1Gbit/s".parse().map_err(|e| format!("{e}"))?, Duration::from_millis(1))
            .with_queue_packets(1000);
        let mut g = FlowGroup::new(self.cc.parse().map_err(|e| format!("{}: {e}", self.cc))?).times(self.flows);
        let mean_size = (self.size_mbit * 1e6 / 8.0).round() as u64;
        g.files = Some(FilesSpec {
            mean_gap: Duration::from_secs_f64(self.size_mbit / self.load_mbps),
            mean_size,
            shape: SHAPE,
            drain: Some(o.drain),
        });
        if self.transport == Transport::Tcp {
            g = g.over_tcp(TcpSpec {
                recovery: Some(Recovery::Sack),
                ..TcpSpec::default()
            });
        }
        let mut s = Scenario::new(self.window(o), TopologySpec::dumbbell(bottleneck, access), vec![g]);
        s.seed = seed;
        s.interval = Duration::from_secs(1);
        s.name = Some(format!("seed003 {} {rate_mbps} Mbit/s", self.key()));
        Ok(s)
    }
}

/// Pareto shape of the file sizes (the paper gives none).
pub const SHAPE: f64 = 2.5;

fn transport_name(t: Transport) -> &'static str {
    match t {
        Transport::Tcp => "tcp",
        Transport::Quic => "quic",
    }
}

/// One run of a search.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RatePoint {
    /// Bottleneck rate, Mbit/s.
    pub rate_mbps: f64,
    /// Every file of every flow, pooled.
    pub files: FileStats,
    /// Whether the rate passed the 1.1 x test with no file lost.
    pub pass: bool,
    /// Whether it was failed without a run (rate <= offered load).
    pub overloaded: bool,
}

impl RatePoint {
    /// `D_e`, seconds: file times from creation at the sender (see the module docs).
    pub fn de(&self) -> f64 {
        self.files.mean_total_secs().unwrap_or(f64::NAN)
    }
    /// Mean transfer time, seconds (first arrival at the receiver to the last byte).
    pub fn de_transfer(&self) -> f64 {
        self.files.mean_transfer_secs().unwrap_or(f64::NAN)
    }
}

/// The result of one search.
#[derive(Debug, Clone, Default)]
pub struct Search {
    /// The configuration's key.
    pub key: String,
    /// Seed.
    pub seed: u64,
    /// `W_min`, Mbit/s (100 when no lower rate passed; NaN after an error).
    pub wmin_mbps: f64,
    /// The reference run at 100 Mbit/s.
    pub reference: RatePoint,
    /// Every rate tried, in the order tried (the reference first).
    pub points: Vec<RatePoint>,
    /// CPU seconds of the search's thread ([`search`]; 0 when replayed from
    /// plan points, whose CPU seconds are in the framework's `cpu.csv`).
    pub cpu_secs: f64,
    /// An error, if a run failed.
    pub error: Option<String>,
}

impl Search {
    /// The record of a finished search: its `W_min`, reference and points,
    /// or the error that ended it.
    fn of(setup: &Setup, seed: u64, r: Result<(f64, RatePoint, Vec<RatePoint>), String>, cpu_secs: f64) -> Search {
        match r {
            Ok((wmin, reference, points)) => Search {
                key: setup.key(),
                seed,
                wmin_mbps: wmin,
                reference,
                points,
                cpu_secs,
                error: None,
            },
            Err(e) => Search {
                key: setup.key(),
                seed,
                wmin_mbps: f64::NAN,
                cpu_secs,
                error: Some(e),
                ..Search::default()
            },
        }
    }
}

/// Run one scenario of `setup` at `rate_mbps`.
fn measure(setup: &Setup, o: &Options, rate_mbps: f64, seed: u64) -> Result<RatePoint, String> {
    let s = setup.scenario(o, rate_mbps, seed)?;
    let opts = tput_lab::scenario::RunOptions {
        no_cc_trace: true,
        ..Default::default()
    };
    let r = run_with(&s, &opts, |_| {}).map_err(|e| format!("{}: {e}", setup.key()))?;
    let files = pooled(r.flows.iter().filter_map(|f| f.files.as_ref()));
    Ok(RatePoint {
        rate_mbps,
        files,
        ..RatePoint::default()
    })
}

/// Whether `p` passes against `reference`: `D_e <= 1.1 * D_e(100)`, no file
/// lost, and at least one file completed.
pub fn passes(p: &RatePoint, reference: &RatePoint) -> bool {
    let (de, de0) = (p.de(), reference.de());
    de.is_finite() && de0.is_finite() && de <= 1.1 * de0 && p.files.lost() == 0
}

/// The `W_min` search of `setup` for `seed` (see the module docs), with
/// `run` measuring one rate: the grid 90, 80, ... 10 Mbit/s downwards until
/// the first failure, then bisection to `resolution_mbps`.
pub fn search_with(
    offered_mbps: f64,
    resolution_mbps: f64,
    mut run: impl FnMut(f64) -> Result<RatePoint, String>,
) -> Result<(f64, RatePoint, Vec<RatePoint>), String> {
    let reference = run(100.0)?;
    let mut points = vec![RatePoint {
        pass: true,
        ..reference.clone()
    }];
    let mut try_rate = |r: f64, points: &mut Vec<RatePoint>| -> Result<bool, String> {
        if r <= offered_mbps {
            points.push(RatePoint {
                rate_mbps: r,
                overloaded: true,
                ..RatePoint::default()
            });
            return Ok(false);
        }
        let mut p = run(r)?;
        p.pass = passes(&p, &reference);
        let pass = p.pass;
        points.push(p);
        Ok(pass)
    };
    let (mut pass, mut fail) = (100.0, None);
    for r in [90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 20.0, 10.0] {
        if try_rate(r, &mut points)? {
            pass = r;
        } else {
            fail = Some(r);
            break;
        }
    }
    if let Some(mut fail) = fail {
        let res = resolution_mbps.max(0.1);
        while pass - fail > res + 1e-9 {
            // The midpoint on the resolution's grid, strictly between the two.
            let mid = ((pass + fail) / 2.0 / res).round() * res;
            let mid = if mid >= pass || mid <= fail {
                (pass + fail) / 2.0
            } else {
                mid
            };
            if try_rate(mid, &mut points)? {
                pass = mid;
            } else {
                fail = mid;
            }
        }
    }
    Ok((pass, reference, points))
}

/// The `W_min` search of `setup` for `seed` in the simulator.
pub fn search(setup: &Setup, o: &Options, seed: u64) -> Search {
    let cpu0 = crate::thread_cpu_secs();
    let r = search_with(setup.offered_mbps(), o.resolution_mbps, |rate| {
        measure(setup, o, rate, seed)
    });
    let cpu_secs = cpu0.zip(crate::thread_cpu_secs()).map_or(0.0, |(a, b)| b - a);
    Search::of(setup, seed, r, cpu_secs)
}

/// Every search and curve run of a reproduction, replayed from its plan
/// points' measurements.
#[derive(Debug, Default)]
pub struct Report {
    /// Every search.
    pub searches: Vec<(Setup, Search)>,
    /// Searches and curve runs that failed, with the reason.
    pub failures: Vec<String>,
    /// The extra rates of the `D_e`-vs-rate curves (first seed).
    pub curves: Vec<(Setup, RatePoint)>,
}

/// One curve of a figure: a controller (or variant) over x values.
struct Curve {
    name: String,
    setups: Vec<(f64, Setup)>,
}

/// The points of one curve: (x, configuration) for a transport and a controller.
type CurveOf<'a> = dyn Fn(Transport, &str) -> Vec<(f64, Setup)> + 'a;

/// A figure: for each transport, curves over an x axis.
struct FigureSpec {
    name: &'static str,
    title: String,
    x_label: &'static str,
    curves: Vec<(Transport, Curve)>,
}

fn figure_specs(o: &Options) -> Result<Vec<FigureSpec>, String> {
    crate::repro::check_figures(&o.figures, &FIGURES)?;
    let want = |n: &str| o.figures.iter().any(|f| f == n);
    let mut figs = Vec::new();
    let per_cc = |f: &CurveOf<'_>, suffix: &str| {
        let mut v = Vec::new();
        for &t in &o.transports {
            for cc in &o.controllers {
                v.push((
                    t,
                    Curve {
                        name: format!("{cc}{suffix}"),
                        setups: f(t, cc),
                    },
                ));
            }
        }
        v
    };
    if want("delay") {
        figs.push(FigureSpec {
            name: "delay",
            title: "W_min vs delay (5 flows, 5 Mbit files, 10 Mbit/s each)".into(),
            x_label: "bottleneck delay (ms)",
            curves: per_cc(
                &|t, cc| o.delays_ms.iter().map(|&d| (d, Setup::paper(t, cc, d))).collect(),
                "",
            ),
        });
    }
    if want("flows") {
        for &d in &o.flows_delays_ms {
            figs.push(FigureSpec {
                name: if d < 50.0 { "flows-short" } else { "flows-long" },
                title: format!("W_min vs flows ({d} ms, 5 Mbit files, 10 Mbit/s each)"),
                x_label: "flows",
                curves: per_cc(
                    &|t, cc| {
                        o.flows
                            .iter()
                            .map(|&n| {
                                (
                                    f64::from(n),
                                    Setup {
                                        flows: n,
                                        ..Setup::paper(t, cc, d)
                                    },
                                )
                            })
                            .collect()
                    },
                    "",
                ),
            });
        }
    }
    if want("size") {
        figs.push(FigureSpec {
            name: "size",
            title: "W_min vs mean file size (1 flow, 10 ms, 10 Mbit/s)".into(),
            x_label: "mean file size (Mbit)",
            curves: per_cc(
                &|t, cc| {
                    o.sizes_mbit
                        .iter()
                        .map(|&m| {
                            (
                                m,
                                Setup {
                                    flows: 1,
                                    size_mbit: m,
                                    ..Setup::paper(t, cc, 10.0)
                                },
                            )
                        })
                        .collect()
                },
                "",
            ),
        });
    }
    if want("buffer") {
        let mut curves = per_cc(
            &|t, cc| o.delays_ms.iter().map(|&d| (d, Setup::paper(t, cc, d))).collect(),
            " (100 pkt)",
        );
        curves.extend(per_cc(
            &|t, cc| {
                o.delays_ms
                    .iter()
                    .map(|&d| {
                        (
                            d,
                            Setup {
                                buffer: 400,
                                ..Setup::paper(t, cc, d)
                            },
                        )
                    })
                    .collect()
            },
            " (400 pkt)",
        ));
        curves.sort_by_key(|(t, c)| (transport_name(*t), c.name.clone()));
        figs.push(FigureSpec {
            name: "buffer",
            title: "W_min vs delay, buffer 100 vs 400 pkt (5 flows, 5 Mbit)".into(),
            x_label: "bottleneck delay (ms)",
            curves,
        });
    }
    if want("iw") {
        let mut curves = Vec::new();
        for &t in &o.transports {
            for cc in ["newreno", "newreno:iw=2"] {
                curves.push((
                    t,
                    Curve {
                        name: cc.to_string(),
                        setups: o.delays_ms.iter().map(|&d| (d, Setup::paper(t, cc, d))).collect(),
                    },
                ));
            }
        }
        figs.push(FigureSpec {
            name: "iw",
            title: "W_min vs delay, NewReno IW 10 vs 2 (5 flows, 5 Mbit)".into(),
            x_label: "bottleneck delay (ms)",
            curves,
        });
    }
    Ok(figs)
}

/// The searches and curve runs of `o`'s figures.
struct Work {
    figs: Vec<FigureSpec>,
    /// Every search: a distinct configuration and a seed, costly ones first.
    searches: Vec<(Setup, u64)>,
    /// The extra rates of the `D_e`-vs-rate curves (seed `o.seeds[0]`).
    curve_runs: Vec<(Setup, f64)>,
}

fn work(o: &Options) -> Result<Work, String> {
    let figs = figure_specs(o)?;
    if o.seeds.is_empty() {
        return Err("no seeds".into());
    }
    // Every distinct configuration once, whichever figures share it.
    let mut setups: Vec<Setup> = Vec::new();
    for f in &figs {
        for (_, c) in &f.curves {
            for (_, s) in &c.setups {
                if !setups.contains(s) {
                    setups.push(s.clone());
                }
            }
        }
    }
    // Costly configurations first, so that the last ones to finish are short.
    setups.sort_by(|a, b| {
        let cost = |s: &Setup| s.offered_mbps() * s.window(o).as_secs_f64();
        cost(b).total_cmp(&cost(a))
    });
    let searches: Vec<(Setup, u64)> = setups
        .iter()
        .flat_map(|s| o.seeds.iter().map(move |&seed| (s.clone(), seed)))
        .collect();
    // D_e vs rate: one configuration per figure and curve, seed 1, on a
    // 5 Mbit/s grid above the offered load (besides the search's own rates).
    let mut curve_runs: Vec<(Setup, f64)> = Vec::new();
    for f in &figs {
        let xs = figure_xs(f);
        for (_, c) in &f.curves {
            if let Some((_, s)) = c.setups.iter().find(|(x, _)| *x == pick_x(f.name, &xs)) {
                for k in 2..20 {
                    let r = f64::from(k) * 5.0;
                    if r > s.offered_mbps() && !curve_runs.contains(&(s.clone(), r)) {
                        curve_runs.push((s.clone(), r));
                    }
                }
            }
        }
    }
    Ok(Work {
        figs,
        searches,
        curve_runs,
    })
}

/// One simulation: `setup` at `rate_mbps` for `seed`, for a search or a curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The configuration.
    pub setup: Setup,
    /// Its seed.
    pub seed: u64,
    /// The bottleneck's rate, Mbit/s.
    pub rate_mbps: f64,
}

impl Run {
    fn label(&self) -> String {
        format!("{} seed {} at {} Mbit/s", self.setup.key(), self.seed, self.rate_mbps)
    }

    /// The run's key in [`Known`]: every field, floats to the last bit.
    fn key(&self) -> String {
        format!("{self:?}")
    }

    /// The plan point: labelled with its configuration and rate (the
    /// framework adds its identity, a hash of its labels, scenario, so of
    /// every option that shapes it, and what it keeps).
    fn planned(&self, o: &Options) -> Result<Planned<Run>, String> {
        let labels = [("setup", self.setup.key()), ("rate_mbps", self.rate_mbps.to_string())];
        let scenario = self.setup.scenario(o, self.rate_mbps, self.seed)?;
        Ok(Planned::new(self.clone(), labels, scenario, Keep::result()))
    }
}

/// Rates measured so far, by [`Run::key`]: the rate point, or why the run
/// failed.
type Known = BTreeMap<String, Result<RatePoint, String>>;

/// What the runs `done` measured, by [`Run::key`].
fn known_of(done: &Measurements<Run, RatePoint>) -> Known {
    done.iter()
        .map(|(run, m)| {
            let m = m.clone().map_err(|e| format!("{}: {e}", run.setup.key()));
            (run.key(), m)
        })
        .collect()
}

/// A search replayed on what is known: done, or the rate it needs next.
enum Replay {
    Done(Search),
    Needs(Run),
}

/// Replay the search of `setup` for `seed` ([`search_with`]) on `known`:
/// the rates it tries are the rates a search run here would try, in the
/// same order, because each decision depends only on the results before it.
fn replay(o: &Options, setup: &Setup, seed: u64, known: &Known) -> Replay {
    let mut needs = None;
    let r = search_with(setup.offered_mbps(), o.resolution_mbps, |rate| {
        let run = Run {
            setup: setup.clone(),
            seed,
            rate_mbps: rate,
        };
        match known.get(&run.key()) {
            Some(Ok(p)) => Ok(p.clone()),
            Some(Err(e)) => Err(e.clone()),
            None => {
                needs = Some(run);
                Err(String::new())
            }
        }
    });
    match needs {
        Some(run) => Replay::Needs(run),
        None => Replay::Done(Search::of(setup, seed, r, 0.0)),
    }
}

/// The grid of the search (see [`search_with`]).
const GRID: [f64; 9] = [90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 20.0, 10.0];

/// The simulations still needed, given `known`: the next rate of every
/// unfinished search and every curve rate not yet run. A search that needs
/// its reference also gets every grid rate above its offered load at once
/// (it tries them in order until one fails, and most fail only near the
/// load), so that a round-by-round run takes a few rounds: one, then one
/// per bisection step.
fn needed(o: &Options, w: &Work, known: &Known) -> Vec<Run> {
    let mut need: Vec<Run> = Vec::new();
    let add = |run: Run, need: &mut Vec<Run>| {
        if !known.contains_key(&run.key()) && !need.contains(&run) {
            need.push(run);
        }
    };
    for (setup, seed) in &w.searches {
        if let Replay::Needs(run) = replay(o, setup, *seed, known) {
            let reference = run.rate_mbps == 100.0;
            add(run, &mut need);
            if reference {
                for r in GRID.into_iter().filter(|&r| r > setup.offered_mbps()) {
                    let run = Run {
                        setup: setup.clone(),
                        seed: *seed,
                        rate_mbps: r,
                    };
                    add(run, &mut need);
                }
            }
        }
    }
    for (setup, rate) in &w.curve_runs {
        let run = Run {
            setup: setup.clone(),
            seed: o.seeds[0],
            rate_mbps: *rate,
        };
        add(run, &mut need);
    }
    need
}

/// The rate point of a run at `rate_mbps` from its result.
fn rate_point(rate_mbps: f64, r: &tput_lab::plan::PointResult) -> Result<RatePoint, String> {
    let result = r.result.as_ref().ok_or("the result keeps no per-flow results")?;
    Ok(RatePoint {
        rate_mbps,
        files: pooled(result.flows.iter().filter_map(|f| f.files.as_ref())),
        ..RatePoint::default()
    })
}

/// Seed 003's reproduction: the figures [`Options`] asks for, in rounds.
#[derive(Debug, Clone)]
pub struct Seed003 {
    /// What to run.
    pub options: Options,
}

impl Seed003 {
    /// Every search and curve run, replayed from the measurements of the
    /// plan points (every one the searches and curves need); one progress
    /// line per search to stderr.
    pub fn report(&self, measured: &Measurements<Run, RatePoint>) -> Result<Report, String> {
        let o = &self.options;
        let w = work(o)?;
        let known = known_of(measured);
        let seed0 = o.seeds[0];
        let mut report = Report::default();
        let total = w.searches.len();
        for (i, (s, seed)) in w.searches.iter().enumerate() {
            let Replay::Done(r) = replay(o, s, *seed, &known) else {
                return Err(format!("{} seed {seed}: a result is missing", s.key()));
            };
            match &r.error {
                Some(e) => {
                    eprintln!("[{}/{total}] {} seed {seed}: FAILED {e}", i + 1, s.key());
                    report.failures.push(format!("{} seed {}: {e}", s.key(), r.seed));
                }
                None => eprintln!(
                    "[{}/{total}] {} seed {seed}: W_min {:.1} Mbit/s, D_e(100) {:.3} s, {} runs",
                    i + 1,
                    s.key(),
                    r.wmin_mbps,
                    r.reference.de(),
                    r.points.iter().filter(|p| !p.overloaded).count(),
                ),
            }
            report.searches.push((s.clone(), r));
        }
        for (s, rate) in &w.curve_runs {
            let run = Run {
                setup: s.clone(),
                seed: seed0,
                rate_mbps: *rate,
            };
            match known.get(&run.key()) {
                Some(Ok(p)) => report.curves.push((s.clone(), p.clone())),
                Some(Err(e)) => report.failures.push(format!("{} at {rate} Mbit/s: {e}", s.key())),
                None => return Err(format!("{}: a result is missing", run.label())),
            }
        }
        Ok(report)
    }
}

impl Reproduction for Seed003 {
    type Point = Run;
    type Measured = RatePoint;

    fn name(&self) -> &'static str {
        "seed003"
    }

    fn in_rounds(&self) -> bool {
        true
    }

    fn points(&self) -> Result<Vec<Planned<Run>>, String> {
        self.next_round(&[])
    }

    /// The next rate of every unfinished search and every curve rate not
    /// yet run (a search that needs its reference also gets its grid rates
    /// above the offered load at once).
    fn next_round(&self, done: &Measurements<Run, RatePoint>) -> Result<Vec<Planned<Run>>, String> {
        let o = &self.options;
        let w = work(o)?;
        needed(o, &w, &known_of(done))
            .iter()
            .map(|run| run.planned(o))
            .collect()
    }

    fn label(&self, p: &Run) -> String {
        p.label()
    }

    fn measure(&self, p: &Run, r: &tput_lab::plan::PointResult) -> Result<RatePoint, String> {
        rate_point(p.rate_mbps, r)
    }

    fn progress(&self, m: &RatePoint) -> String {
        format!("D_e {:.3} s, {} files lost", m.de(), m.files.lost())
    }

    fn build(&self, out: &Path, measured: &Measurements<Run, RatePoint>) -> Result<Built, String> {
        let o = &self.options;
        let w = work(o)?;
        let report = self.report(measured)?;
        let (text, files) = tables::tables(o, &w, &report);
        Ok(Built {
            text,
            files: crate::repro::write_files(out, &files)?,
            failed: false,
            failures: report.failures,
        })
    }
}
