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
//! simulations come in rounds ([`plan`]): the first holds every reference
//! run at 100 Mbit/s with every grid rate above the offered load (tried
//! together rather than one by one until the first failure; a rate below
//! the first failure is run needlessly) and the `D_e`-vs-rate curves; each
//! next round holds one bisection step of every unfinished search. A local
//! run ([`reproduce`]) runs those rounds, each in parallel, and builds the
//! figures from the results as read back from JSON; [`reproduce_from`]
//! builds the same tables and files from results that `tputctl sweep run`
//! wrote anywhere, one directory per round. The bench's flags: `--plan`,
//! `--plan --from DIR`, `--from DIR` (see `benches/benches/seed003.rs`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tput_cc::units::Rate;
use tput_lab::files::{FileStats, pooled};
use tput_lab::plan::Keep;
use tput_lab::plot::{Band, BandPoint, Figure, Panel, Series, Trace};
use tput_lab::scenario::{FilesSpec, FlowGroup, LinkSpec, Scenario, TcpSpec, TopologySpec, Transport, run_with};
use tput_lab::tcp::Recovery;

/// The four controllers of the paper, as `tput-cc` specs.
pub const CONTROLLERS: [&str; 4] = ["newreno", "cubic", "vegas", "ctcp"];

/// Every figure, by name.
pub const FIGURES: [&str; 5] = ["delay", "flows", "size", "buffer", "iw"];

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Where to write tables, CSV and SVG.
    pub out_dir: PathBuf,
    /// Worker threads.
    pub jobs: usize,
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
    pub fn full(out_dir: PathBuf) -> Self {
        Self {
            out_dir,
            jobs: tput_lab::sweep::default_jobs(),
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
    pub fn short(out_dir: PathBuf) -> Self {
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
            ..Self::full(out_dir)
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
    /// CPU seconds of the search's thread.
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

/// What [`reproduce`] made.
#[derive(Debug, Default)]
pub struct Report {
    /// The tables (also in `tables.txt`).
    pub text: String,
    /// Every search.
    pub searches: Vec<(Setup, Search)>,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// Searches that failed, with the reason.
    pub failures: Vec<String>,
    /// Distinct simulations behind the report (a rate shared by a search and a curve counts once).
    pub runs: usize,
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
    for f in &o.figures {
        if !FIGURES.contains(&f.as_str()) {
            return Err(format!("unknown figure `{f}` (known: {})", FIGURES.join(", ")));
        }
    }
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
struct Run {
    setup: Setup,
    seed: u64,
    rate_mbps: f64,
}

impl Run {
    fn label(&self) -> String {
        format!("{} seed {} at {} Mbit/s", self.setup.key(), self.seed, self.rate_mbps)
    }

    /// The plan point's labels, and its identity: a hash of its labels,
    /// scenario (so of every option that shapes it) and what it keeps.
    fn point(&self, o: &Options) -> Result<(BTreeMap<String, String>, Scenario), String> {
        let s = self.setup.scenario(o, self.rate_mbps, self.seed)?;
        let mut labels: BTreeMap<String, String> =
            [("setup", self.setup.key()), ("rate_mbps", self.rate_mbps.to_string())]
                .map(|(k, v)| (k.to_string(), v))
                .into();
        let id = tput_lab::plan::plan_scenarios(vec![(labels.clone(), s.clone(), Keep::result())])
            .map_err(|e| format!("{}: {e}", self.label()))?
            .remove(0)
            .plan;
        labels.insert("id".into(), id);
        Ok((labels, s))
    }
}

/// Rates measured so far, by point identity ([`Run::point`]'s `id`): the
/// rate point and its simulation's CPU seconds (0 when read from a file),
/// or why the run failed.
type Known = BTreeMap<String, Result<(RatePoint, f64), String>>;

/// A search replayed on what is known: done, or the rate it needs next.
enum Replay {
    Done(Search),
    Needs(Run),
}

/// Replay the search of `setup` for `seed` ([`search_with`]) on `known`:
/// the rates it tries are the rates a search run here would try, in the
/// same order, because each decision depends only on the results before it.
fn replay(o: &Options, setup: &Setup, seed: u64, known: &Known) -> Result<Replay, String> {
    let mut needs = None;
    let mut cpu_secs = 0.0;
    let mut fatal = None;
    let r = search_with(setup.offered_mbps(), o.resolution_mbps, |rate| {
        let run = Run {
            setup: setup.clone(),
            seed,
            rate_mbps: rate,
        };
        let id = match run.point(o) {
            Ok((labels, _)) => labels["id"].clone(),
            Err(e) => {
                fatal = Some(e.clone());
                return Err(e);
            }
        };
        match known.get(&id) {
            Some(Ok((p, cpu))) => {
                cpu_secs += cpu;
                Ok(p.clone())
            }
            Some(Err(e)) => Err(e.clone()),
            None => {
                needs = Some(run);
                Err(String::new())
            }
        }
    });
    if let Some(e) = fatal {
        return Err(e);
    }
    if let Some(run) = needs {
        return Ok(Replay::Needs(run));
    }
    Ok(Replay::Done(Search::of(setup, seed, r, cpu_secs)))
}

/// The grid of the search (see [`search_with`]).
const GRID: [f64; 9] = [90.0, 80.0, 70.0, 60.0, 50.0, 40.0, 30.0, 20.0, 10.0];

/// The simulations still needed, given `known`: the next rate of every
/// unfinished search and every curve rate not yet run. A search that needs
/// its reference also gets every grid rate above its offered load at once
/// (it tries them in order until one fails, and most fail only near the
/// load), so that a round-by-round run takes a few rounds: one, then one
/// per bisection step.
fn needed(o: &Options, w: &Work, known: &Known) -> Result<Vec<Run>, String> {
    let mut need: Vec<Run> = Vec::new();
    let add = |run: Run, need: &mut Vec<Run>| -> Result<(), String> {
        let id = run.point(o)?.0["id"].clone();
        if !known.contains_key(&id) && !need.contains(&run) {
            need.push(run);
        }
        Ok(())
    };
    for (setup, seed) in &w.searches {
        if let Replay::Needs(run) = replay(o, setup, *seed, known)? {
            let reference = run.rate_mbps == 100.0;
            add(run, &mut need)?;
            if reference {
                for r in GRID.into_iter().filter(|&r| r > setup.offered_mbps()) {
                    let run = Run {
                        setup: setup.clone(),
                        seed: *seed,
                        rate_mbps: r,
                    };
                    add(run, &mut need)?;
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
        add(run, &mut need)?;
    }
    Ok(need)
}

/// `runs` as a plan: each point keeps its whole result (the flows' file
/// statistics).
fn plan_of(o: &Options, runs: &[Run]) -> Result<Vec<tput_lab::plan::Point>, String> {
    let items = runs
        .iter()
        .map(|r| r.point(o).map(|(labels, s)| (labels, s, Keep::result())))
        .collect::<Result<Vec<_>, String>>()?;
    tput_lab::plan::plan_scenarios(items).map_err(|e| e.to_string())
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

/// The plan of the next round of simulations, given the results in `dir`
/// (`None`: none yet): what `--plan` (first round) and `--plan --from DIR`
/// (the rounds after) print. A search's rates depend on its earlier
/// results, so a reproduction elsewhere runs in rounds: plan, run, plan
/// again from the results, until the plan is empty (see the module docs).
/// The rounds are the same simulations a local run makes, in the same
/// rounds.
pub fn plan(o: &Options, dir: Option<&Path>) -> Result<Vec<tput_lab::plan::Point>, String> {
    let w = work(o)?;
    let known = match dir {
        Some(d) => known_from(d)?,
        None => Known::new(),
    };
    plan_of(o, &needed(o, &w, &known)?)
}

/// Every result under `dir` (in it and in its subdirectories, one per
/// round), by identity.
fn known_from(dir: &Path) -> Result<Known, String> {
    let mut dirs = vec![dir.to_path_buf()];
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut subdirs: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    dirs.extend(subdirs);
    let mut known = Known::new();
    for d in dirs {
        let has_points = std::fs::read_dir(&d)
            .map_err(|e| format!("cannot read {}: {e}", d.display()))?
            .filter_map(|e| e.ok())
            .any(|e| e.file_name().to_string_lossy().starts_with("point-"));
        if !has_points {
            continue;
        }
        let c = tput_lab::plan::collect(&d).map_err(|e| e.to_string())?;
        for r in c.results {
            let (Some(id), Some(rate)) = (
                r.vary.get("id"),
                r.vary.get("rate_mbps").and_then(|x| x.parse::<f64>().ok()),
            ) else {
                return Err(format!(
                    "{}: point {} is not a result of a seed003 plan",
                    d.display(),
                    r.index
                ));
            };
            let p = rate_point(rate, &r).map_err(|e| format!("{}: point {}: {e}", d.display(), r.index))?;
            known.insert(id.clone(), Ok((p, 0.0)));
        }
    }
    Ok(known)
}

/// Run every figure of `o`; `progress` gets one line per simulation and
/// one per finished search. The simulations run in the rounds of [`plan`]
/// (each round's points on [`Options::jobs`] threads, read back as a
/// collector reads a file of `tputctl sweep run`), so a local run and
/// [`reproduce_from`] build the figures from the same numbers.
pub fn reproduce(o: &Options, mut progress: impl FnMut(&str) + Send) -> Result<Report, String> {
    let w = work(o)?;
    let mut known = Known::new();
    for round in 1.. {
        let need = needed(o, &w, &known)?;
        if need.is_empty() {
            break;
        }
        let plan = plan_of(o, &need)?;
        let total = plan.len();
        let ran = tput_lab::sweep::run_parallel(&plan, o.jobs, crate::run_point, |done, p, r| {
            let line = match r {
                Ok(_) => "done".to_string(),
                Err(e) => format!("FAILED {e}"),
            };
            progress(&format!(
                "[round {round}: {done}/{total}] {}: {line}",
                need[p.index].label()
            ));
        });
        for ((run, p), r) in need.iter().zip(&plan).zip(ran) {
            let r = r
                .and_then(|(r, cpu)| Ok((rate_point(run.rate_mbps, &r)?, cpu)))
                .map_err(|e| format!("{}: {e}", run.setup.key()));
            known.insert(p.vary["id"].clone(), r);
        }
    }
    build(o, &w, &known, progress)
}

/// Build the tables and figures of `o` from the results under `dir` (in it
/// and its subdirectories: what `tputctl sweep run` wrote for every round
/// of [`plan`] with the same options), without simulating: the same files
/// as [`reproduce`]. A simulation the figures need and `dir` lacks is a
/// one-line error naming it.
pub fn reproduce_from(o: &Options, dir: &Path) -> Result<Report, String> {
    let w = work(o)?;
    let known = known_from(dir)?;
    let need = needed(o, &w, &known)?;
    if let Some(first) = need.first() {
        return Err(format!(
            "{}: no result for {}{}: run the next round (--plan --from {})",
            dir.display(),
            first.label(),
            match need.len() {
                1 => String::new(),
                n => format!(" (and {} more)", n - 1),
            },
            dir.display()
        ));
    }
    build(o, &w, &known, |_| {})
}

/// The report, tables and files from the known results (every one the
/// searches and curves need).
fn build(o: &Options, w: &Work, known: &Known, mut progress: impl FnMut(&str)) -> Result<Report, String> {
    let figs = &w.figs;
    let seed0 = o.seeds[0];
    let mut report = Report::default();
    let total = w.searches.len();
    for (i, (s, seed)) in w.searches.iter().enumerate() {
        let Replay::Done(r) = replay(o, s, *seed, known)? else {
            return Err(format!("{} seed {seed}: a result is missing", s.key()));
        };
        let line = match &r.error {
            Some(e) => format!("[{}/{total}] {} seed {seed}: FAILED {e}", i + 1, s.key()),
            None => format!(
                "[{}/{total}] {} seed {seed}: W_min {:.1} Mbit/s, D_e(100) {:.3} s, {} runs, {:.1} s CPU",
                i + 1,
                s.key(),
                r.wmin_mbps,
                r.reference.de(),
                r.points.iter().filter(|p| !p.overloaded).count(),
                r.cpu_secs
            ),
        };
        progress(&line);
        if let Some(e) = &r.error {
            report.failures.push(format!("{} seed {}: {e}", s.key(), r.seed));
        }
        report.searches.push((s.clone(), r));
    }
    for (s, rate) in &w.curve_runs {
        let run = Run {
            setup: s.clone(),
            seed: seed0,
            rate_mbps: *rate,
        };
        match known.get(&run.point(o)?.0["id"]) {
            Some(Ok((p, _))) => report.curves.push((s.clone(), p.clone())),
            Some(Err(e)) => report.failures.push(format!("{} at {rate} Mbit/s: {e}", s.key())),
            None => return Err(format!("{}: a result is missing", run.label())),
        }
    }
    report.runs = known.len();
    let find = |s: &Setup| -> Vec<&Search> {
        report
            .searches
            .iter()
            .filter(|(x, _)| x == s)
            .map(|(_, r)| r)
            .filter(|r| r.error.is_none())
            .collect()
    };

    let mut text = String::new();
    let _ = writeln!(
        text,
        "Seed 003 (R. Araki, TCP variants under power-saving link-rate control): W_min = smallest rate with \
         D_e <= 1.1 x D_e(100 Mbit/s), no file lost; resolution {} Mbit/s; {} seed(s); mean [min-max]",
        o.resolution_mbps,
        o.seeds.len()
    );
    let mut files: Vec<(String, String)> = Vec::new();
    let mut csv =
        String::from("figure,transport,curve,x,setup,seed,wmin_mbps,de100_s,de100_transfer_s,files100,lost100\n");
    let mut pts_csv = String::from(
        "source,setup,seed,rate_mbps,overloaded,pass,de_s,de_transfer_s,de_ratio,started,completed,refused,failed,unfinished\n",
    );
    let search_points = report
        .searches
        .iter()
        .flat_map(|(s, r)| r.points.iter().map(move |p| ("search", s, r, p)));
    let curve_points = report.curves.iter().filter_map(|(s, p)| {
        let r = find(s).into_iter().find(|r| r.seed == seed0)?;
        Some(("curve", s, r, p))
    });
    for (source, s, r, p) in search_points.chain(curve_points) {
        let _ = writeln!(
            pts_csv,
            "{source},{},{},{},{},{},{:.6},{:.6},{:.4},{},{},{},{},{}",
            s.key(),
            r.seed,
            p.rate_mbps,
            p.overloaded,
            p.pass || (source == "curve" && passes(p, &r.reference)),
            p.de(),
            p.de_transfer(),
            p.de() / r.reference.de(),
            p.files.started,
            p.files.completed(),
            p.files.refused,
            p.files.failed,
            p.files.unfinished
        );
    }
    for f in figs {
        let _ = writeln!(text, "\n== {} ==", f.title);
        let xs = figure_xs(f);
        let mut panels = Vec::new();
        for &t in &o.transports {
            let _ = write!(
                text,
                "{:<6} {:<22}",
                transport_name(t),
                match f.x_label {
                    "flows" => "flows",
                    "mean file size (Mbit)" => "size (Mbit)",
                    _ => "delay (ms)",
                }
            );
            for x in &xs {
                let _ = write!(text, " {:>17}", format!("{x}"));
            }
            text.push('\n');
            let mut traces = Vec::new();
            for (_, c) in f.curves.iter().filter(|(ct, _)| *ct == t) {
                let _ = write!(text, "{:<6} {:<22}", "", c.name);
                let mut band = Band {
                    name: c.name.clone(),
                    points: Vec::new(),
                };
                for x in &xs {
                    let Some((_, s)) = c.setups.iter().find(|(sx, _)| sx == x) else {
                        let _ = write!(text, " {:>17}", "-");
                        continue;
                    };
                    let rs = find(s);
                    for r in &rs {
                        let _ = writeln!(
                            csv,
                            "{},{},{},{},{},{},{},{:.6},{:.6},{},{}",
                            f.name,
                            transport_name(t),
                            c.name,
                            x,
                            s.key(),
                            r.seed,
                            r.wmin_mbps,
                            r.reference.de(),
                            r.reference.de_transfer(),
                            r.reference.files.completed(),
                            r.reference.files.lost()
                        );
                    }
                    let w: Vec<f64> = rs.iter().map(|r| r.wmin_mbps).collect();
                    if w.is_empty() {
                        let _ = write!(text, " {:>17}", "failed");
                        continue;
                    }
                    let (mean, min, max) = stats(&w);
                    let _ = write!(text, " {:>17}", format!("{mean:.0} [{min:.0}-{max:.0}]"));
                    band.points.push(BandPoint { x: *x, mean, min, max });
                }
                text.push('\n');
                traces.push(Trace::Band(band));
            }
            panels.push(Panel {
                y_label: format!("W_min (Mbit/s), {}", transport_label(t)),
                traces,
            });
        }
        let fig = Figure {
            title: format!("Seed 003: {}", f.title),
            x_label: f.x_label.into(),
            x_range: None,
            panels,
        };
        files.push((format!("{}.svg", f.name), fig.to_svg()));
        // D_e vs rate for one configuration of the figure: the first x's
        // setups of each curve, seed of the first search.
        let mut panels = Vec::new();
        let mut which = String::new();
        for &t in &o.transports {
            let mut traces = Vec::new();
            for (_, c) in f.curves.iter().filter(|(ct, _)| *ct == t) {
                let Some((x, s)) = c.setups.iter().find(|(x, _)| *x == pick_x(f.name, &xs)) else {
                    continue;
                };
                which = match f.x_label {
                    "flows" => format!("{x} flows"),
                    "mean file size (Mbit)" => format!("{x} Mbit files"),
                    _ => format!("{x} ms"),
                };
                let Some(r) = find(s).into_iter().find(|r| r.seed == seed0) else {
                    continue;
                };
                let extra = report.curves.iter().filter(|(x, _)| x == s).map(|(_, p)| p);
                let mut pts: Vec<(f64, f64)> = r
                    .points
                    .iter()
                    .filter(|p| !p.overloaded)
                    .chain(extra)
                    .map(|p| (p.rate_mbps, p.de() / r.reference.de()))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                pts.dedup_by(|a, b| a.0 == b.0);
                traces.push(Trace::Line(Series {
                    name: c.name.clone(),
                    points: pts,
                }));
            }
            traces.push(Trace::Line(Series {
                name: "1.1 x D_e(100)".into(),
                points: vec![(10.0, 1.1), (100.0, 1.1)],
            }));
            panels.push(Panel {
                y_label: format!("D_e / D_e(100), {}", transport_label(t)),
                traces,
            });
        }
        let fig = Figure {
            title: format!("Seed 003: D_e vs rate, {} ({which}, seed {seed0})", f.name),
            x_label: "bottleneck rate (Mbit/s)".into(),
            x_range: Some((10.0, 100.0)),
            panels,
        };
        files.push((format!("{}-de.svg", f.name), fig.to_svg()));
    }
    text.push_str(&reference_table(&report, o));
    text.push_str(&claims(&report, o));
    files.push(("wmin.csv".into(), csv));
    files.push(("points.csv".into(), pts_csv));
    files.push(("tables.txt".into(), text.clone()));
    std::fs::create_dir_all(&o.out_dir).map_err(|e| format!("{}: {e}", o.out_dir.display()))?;
    for (name, body) in &files {
        let p = o.out_dir.join(name);
        std::fs::write(&p, body).map_err(|e| format!("{}: {e}", p.display()))?;
        report.files.push(p);
    }
    report.text = text;
    Ok(report)
}

/// Every x of a figure, in order.
fn figure_xs(f: &FigureSpec) -> Vec<f64> {
    let mut v: Vec<f64> = f
        .curves
        .iter()
        .flat_map(|(_, c)| c.setups.iter().map(|(x, _)| *x))
        .collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// The x of a figure whose `D_e`-vs-rate curves are drawn.
fn pick_x(fig: &str, xs: &[f64]) -> f64 {
    let prefer = match fig {
        "size" => 10.0,
        "flows-short" | "flows-long" => 5.0,
        _ => 10.0,
    };
    if xs.contains(&prefer) { prefer } else { xs[0] }
}

fn transport_label(t: Transport) -> &'static str {
    match t {
        Transport::Tcp => "TCP model",
        Transport::Quic => "QUIC",
    }
}

/// Mean, min and max.
pub fn stats(v: &[f64]) -> (f64, f64, f64) {
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (mean, min, max)
}

/// The reference runs: D_e at 100 Mbit/s (from creation) and the transfer
/// time, and the files, per configuration of the paper's point (5 flows, 5 Mbit).
fn reference_table(report: &Report, o: &Options) -> String {
    let mut t = String::from(
        "\n== D_e at 100 Mbit/s (mean over seeds): file time from creation at the sender (D_e) / transfer time from the \
         first arrival; files completed, lost (refused+failed+unfinished) at the reference and, over all runs of the search ==\n",
    );
    let mut by: BTreeMap<String, Vec<&Search>> = BTreeMap::new();
    for (s, r) in &report.searches {
        if r.error.is_none() {
            by.entry(s.key()).or_default().push(r);
        }
    }
    let _ = writeln!(
        t,
        "{:<44} {:>9} {:>11} {:>8} {:>6} {:>11} {:>10}",
        "configuration", "D_e (s)", "transfer(s)", "files", "lost", "lost(all)", "wmin"
    );
    for (k, rs) in by {
        let n = rs.len() as f64;
        let de = rs.iter().map(|r| r.reference.de()).sum::<f64>() / n;
        let tot = rs.iter().map(|r| r.reference.de_transfer()).sum::<f64>() / n;
        let files: usize = rs.iter().map(|r| r.reference.files.completed()).sum();
        let lost: u64 = rs.iter().map(|r| r.reference.files.lost()).sum();
        let lost_all: u64 = rs.iter().flat_map(|r| r.points.iter()).map(|p| p.files.lost()).sum();
        let w: Vec<f64> = rs.iter().map(|r| r.wmin_mbps).collect();
        let (m, lo, hi) = stats(&w);
        let _ = writeln!(
            t,
            "{k:<44} {de:>9.3} {tot:>11.3} {files:>8} {lost:>6} {lost_all:>11} {:>10}",
            format!("{m:.0} [{lo:.0}-{hi:.0}]")
        );
    }
    let _ = o;
    t
}

/// Mean W_min of `setup` over its seeds.
fn wmin_of(report: &Report, s: &Setup) -> Option<f64> {
    let w: Vec<f64> = report
        .searches
        .iter()
        .filter(|(x, r)| x == s && r.error.is_none())
        .map(|(_, r)| r.wmin_mbps)
        .collect();
    (!w.is_empty()).then(|| stats(&w).0)
}

/// The paper's claims beside what we measured.
fn claims(report: &Report, o: &Options) -> String {
    let mut t = String::from("\n== The paper's claims beside the measurements (mean W_min over seeds, Mbit/s) ==\n");
    for &tr in &o.transports {
        let name = transport_label(tr);
        let w = |cc: &str, flows: u32, delay: f64, size: f64| {
            wmin_of(
                report,
                &Setup {
                    flows,
                    size_mbit: size,
                    ..Setup::paper(tr, cc, delay)
                },
            )
        };
        let fmt = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0}"));
        let _ = writeln!(t, "-- {name} --");
        let _ = writeln!(
            t,
            "NewReno, 1 flow, 10 ms, 10 Mbit files at 1 s (10 Mbit/s): paper 60; measured {}",
            fmt(w("newreno", 1, 10.0, 10.0))
        );
        let sizes: Vec<String> = o
            .sizes_mbit
            .iter()
            .map(|&m| format!("{m} Mbit: {}", fmt(w("newreno", 1, 10.0, m))))
            .collect();
        let _ = writeln!(
            t,
            "NewReno, 1 flow, 10 ms: W_min independent of the file size at equal load: {}",
            sizes.join(", ")
        );
        for &d in &o.delays_ms {
            let mut row: Vec<(String, f64)> = o
                .controllers
                .iter()
                .filter_map(|cc| w(cc, 5, d, 5.0).map(|v| (cc.clone(), v)))
                .collect();
            row.sort_by(|a, b| a.1.total_cmp(&b.1));
            let expect = if d <= 10.0 { "vegas, ctcp" } else { "cubic, ctcp" };
            let _ = writeln!(
                t,
                "5 flows, 5 Mbit, {d} ms: paper's least-rate pair {expect}; measured order {}",
                row.iter()
                    .map(|(c, v)| format!("{c} {v:.0}"))
                    .collect::<Vec<_>>()
                    .join(" < ")
            );
        }
        for &n in &o.flows {
            if n < 2 || !o.flows_delays_ms.contains(&100.0) {
                continue;
            }
            let mut row: Vec<(String, f64)> = o
                .controllers
                .iter()
                .filter_map(|cc| w(cc, n, 100.0, 5.0).map(|v| (cc.clone(), v)))
                .collect();
            row.sort_by(|a, b| a.1.total_cmp(&b.1));
            let _ = writeln!(
                t,
                "{n} flows, 100 ms: paper's best cubic, ctcp; measured order {}",
                row.iter()
                    .map(|(c, v)| format!("{c} {v:.0}"))
                    .collect::<Vec<_>>()
                    .join(" < ")
            );
        }
        for &m in &o.sizes_mbit {
            let mut row: Vec<(String, f64)> = o
                .controllers
                .iter()
                .filter_map(|cc| w(cc, 1, 10.0, m).map(|v| (cc.clone(), v)))
                .collect();
            row.sort_by(|a, b| a.1.total_cmp(&b.1));
            let _ = writeln!(
                t,
                "{m} Mbit files (1 flow, 10 ms): paper: small files favour cubic, large ctcp; measured order {}",
                row.iter()
                    .map(|(c, v)| format!("{c} {v:.0}"))
                    .collect::<Vec<_>>()
                    .join(" < ")
            );
        }
    }
    t
}
