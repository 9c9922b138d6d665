//! Seed 002's analytic curves, the `rtt` and `ber` tables and their files.

use std::fmt::Write as _;

use tput_lab::plot::{Series, line_chart};

use super::{
    BOTTLENECK_BPS, BUFFER_BYTES, Options, PointResult, QUEUE_PACKETS, TCP_SEGMENT, TCP_WINDOW, Variant, WIRE_BYTES,
};
use crate::repro::Csv;
use tput_tcp::Profile;

/// The N-buffer bound (the paper's own arithmetic): a buffer of `b` bytes
/// is written in `b / R` and reusable one RTT after its last byte, so `n`
/// buffers carry `n b` bytes per `b / R + RTT`, at most `R`. Bits per second.
pub fn buffers_bound(n: u32, b: u64, plateau_bps: f64, rtt_secs: f64) -> f64 {
    let bits = b as f64 * 8.0;
    (f64::from(n) * bits / (bits / plateau_bps + rtt_secs)).min(plateau_bps)
}

/// The window bound of a window-limited TCP: `min(R, W / RTT)`, bits per second.
pub fn window_bound(window: u64, plateau_bps: f64, rtt_secs: f64) -> f64 {
    if rtt_secs <= 0.0 {
        return plateau_bps;
    }
    (window as f64 * 8.0 / rtt_secs).min(plateau_bps)
}

// ---- tables and files --------------------------------------------------------

pub(super) fn find<'a>(
    points: &'a [PointResult],
    figure: &str,
    v: Variant,
    rtt: u32,
    ber: f64,
) -> Option<&'a PointResult> {
    points
        .iter()
        .find(|p| p.point.figure == figure && p.point.variant == v && p.point.rtt_ms == rtt && p.point.ber == ber)
}

fn rtt_variants(o: &Options) -> Vec<Variant> {
    let mut v: Vec<Variant> = Vec::new();
    for cubic in [true, false] {
        for &n in &o.buffers {
            v.push(Variant::Quic { cubic, n });
        }
    }
    v.push(Variant::TcpWindowLimited);
    v
}

/// A curve's zero-RTT (smallest RTT) value, Mbit/s.
fn plateau(points: &[PointResult], o: &Options, v: Variant) -> Option<f64> {
    let rtt = *o.rtts_ms.iter().min()?;
    find(points, "rtt", v, rtt, 0.0).map(|p| p.mbps)
}

/// The QUIC plateau `R` of the analytic curves: the best zero-RTT value of
/// the controller's curves.
fn quic_plateau(points: &[PointResult], o: &Options, cubic: bool) -> Option<f64> {
    o.buffers
        .iter()
        .filter_map(|&n| plateau(points, o, Variant::Quic { cubic, n }))
        .fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.max(x))))
}

pub(super) fn cell(x: Option<f64>, prec: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.prec$}"),
        _ => "-".into(),
    }
}

pub(super) fn rtt_tables(o: &Options, points: &[PointResult]) -> String {
    let vars = rtt_variants(o);
    let mut t = String::new();
    let _ = writeln!(
        t,
        "\n== Throughput vs RTT (simulated): 36.864 Mbit/s bottleneck, {}-packet queue, {} KiB buffers, goodput after {} s of {} s, Mbit/s; TCP model profile {} ==",
        QUEUE_PACKETS,
        BUFFER_BYTES / 1024,
        o.warmup.as_secs(),
        o.duration.as_secs(),
        o.tcp_profile
    );
    for normalised in [false, true] {
        if normalised {
            let _ = writeln!(t, "\n-- the same, normalised to each curve's zero-RTT value --");
        }
        let _ = write!(t, "{:>7}", "RTT ms");
        for v in &vars {
            let l = v.label().replace("QUIC ", "").replace("NewReno", "NR");
            let _ = write!(t, " {:>12}", l);
        }
        if !normalised {
            let _ = write!(t, " {:>10} {:>10} {:>10}", "bound N=1", "bound N=2", "TCP bound");
        }
        let _ = writeln!(t);
        let r_cubic = quic_plateau(points, o, true);
        let r_tcp = plateau(points, o, Variant::TcpWindowLimited);
        for &rtt in &o.rtts_ms {
            let _ = write!(t, "{rtt:>7}");
            for &v in &vars {
                let x = find(points, "rtt", v, rtt, 0.0).map(|p| p.mbps);
                let x = if normalised {
                    x.zip(plateau(points, o, v)).map(|(a, b)| a / b)
                } else {
                    x
                };
                let _ = write!(t, " {:>12}", cell(x, if normalised { 3 } else { 2 }));
            }
            if !normalised {
                let s = f64::from(rtt) / 1e3;
                let b1 = r_cubic.map(|r| buffers_bound(1, BUFFER_BYTES, r * 1e6, s) / 1e6);
                let b2 = r_cubic.map(|r| buffers_bound(2, BUFFER_BYTES, r * 1e6, s) / 1e6);
                let bt = r_tcp.map(|r| window_bound(TCP_WINDOW, r * 1e6, s) / 1e6);
                let _ = write!(t, " {:>10} {:>10} {:>10}", cell(b1, 2), cell(b2, 2), cell(bt, 2));
            }
            let _ = writeln!(t);
        }
    }
    let _ = writeln!(
        t,
        "(bounds: R = the best zero-RTT CUBIC value for N buffers, min(R, N B/(B/R + RTT)); TCP: min(R_tcp, 53 KiB x 8 / RTT))"
    );
    t.push_str(&paper_comparison(o, points));
    t
}

/// The normalised value of `v` at `rtt`.
fn norm(points: &[PointResult], o: &Options, v: Variant, rtt: u32) -> Option<f64> {
    let x = find(points, "rtt", v, rtt, 0.0)?.mbps;
    Some(x / plateau(points, o, v)?)
}

/// The largest RTT up to which `v` stays at 95% of its plateau or more.
fn knee(points: &[PointResult], o: &Options, v: Variant) -> Option<u32> {
    let mut last = None;
    for &rtt in &o.rtts_ms {
        if norm(points, o, v, rtt)? >= 0.95 {
            last = Some(rtt);
        } else {
            break;
        }
    }
    last
}

fn paper_comparison(o: &Options, points: &[PointResult]) -> String {
    let mut t = String::new();
    let max_rtt = *o.rtts_ms.iter().max().unwrap_or(&0);
    let _ = writeln!(t, "\n-- beside the paper's claims (Miyake, Kato, Suzuki 1995) --");
    for cubic in [true, false] {
        let cc = if cubic { "CUBIC" } else { "NewReno" };
        let r = quic_plateau(points, o, cubic);
        for n in [4u32, 8] {
            let v = Variant::Quic { cubic, n };
            let lows: Vec<f64> = o.rtts_ms.iter().filter_map(|&x| norm(points, o, v, x)).collect();
            if lows.is_empty() {
                continue;
            }
            let min = lows.iter().copied().fold(f64::INFINITY, f64::min);
            let _ = writeln!(
                t,
                "{cc} N={n}: paper ~32 Mbit/s at every RTT 0-200 ms; ours {} Mbit/s at 0 ms, lowest {:.0}% of it over 0-{max_rtt} ms: {}",
                cell(plateau(points, o, v), 2),
                min * 100.0,
                if min >= 0.9 {
                    "flat, agrees"
                } else {
                    "not flat, differs"
                }
            );
        }
        let v1 = Variant::Quic { cubic, n: 1 };
        if let (Some(x), Some(r)) = (find(points, "rtt", v1, max_rtt, 0.0), r) {
            let _ = writeln!(
                t,
                "{cc} N=1: paper decays with RTT; ours {:.2} Mbit/s at {max_rtt} ms ({:.0}% of its 0-ms value), bound B/(B/R+RTT) = {:.2}",
                x.mbps,
                norm(points, o, v1, max_rtt).unwrap_or(f64::NAN) * 100.0,
                buffers_bound(1, BUFFER_BYTES, r * 1e6, f64::from(max_rtt) / 1e3) / 1e6
            );
        }
        let v2 = Variant::Quic { cubic, n: 2 };
        if let Some(r) = r
            && plateau(points, o, v2).is_some()
        {
            let _ = writeln!(
                t,
                "{cc} N=2: paper drops past ~125 ms; ours stays >= 95% up to {} ms, bound's knee B/R = {:.0} ms",
                knee(points, o, v2).map_or("-".into(), |k| k.to_string()),
                BUFFER_BYTES as f64 * 8.0 / (r * 1e6) * 1e3
            );
        }
    }
    let v = Variant::TcpWindowLimited;
    if let (Some(p0), Some(x)) = (plateau(points, o, v), find(points, "rtt", v, max_rtt, 0.0)) {
        let _ = writeln!(
            t,
            "TCP 53 KiB: paper 26.78 Mbit/s at 0 ms, falls steeply; ours {p0:.2} Mbit/s at 0 ms, {:.2} at {max_rtt} ms ({:.0}%), bound 53 KiB x 8 / RTT = {:.2}",
            x.mbps,
            x.mbps / p0 * 100.0,
            window_bound(TCP_WINDOW, p0 * 1e6, f64::from(max_rtt) / 1e3) / 1e6
        );
    }
    t
}

fn fine_rtts(o: &Options) -> Vec<f64> {
    let max = f64::from(*o.rtts_ms.iter().max().unwrap_or(&200));
    (0..=((max / 2.5) as u32)).map(|i| f64::from(i) * 2.5).collect()
}

pub(super) fn rtt_files(o: &Options, points: &[PointResult]) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut csv = Csv::new(&[
        "figure",
        "variant",
        "cc",
        "buffers",
        "rtt_ms",
        "ber",
        "goodput_mbps",
        "normalised",
        "bytes",
        "queue_drops",
        "random_drops",
    ]);
    for p in points {
        let (cc, n) = match p.point.variant {
            Variant::Quic { cubic, n } => (if cubic { "cubic" } else { "newreno" }, n.to_string()),
            _ => ("newreno", String::new()),
        };
        let nv = if p.point.figure == "rtt" {
            norm(points, o, p.point.variant, p.point.rtt_ms)
        } else {
            None
        };
        crate::csv_row!(
            csv,
            p.point.figure,
            p.point.variant.label(),
            cc,
            n,
            p.point.rtt_ms,
            format!("{:e}", p.point.ber),
            format!("{:.4}", p.mbps),
            nv.map_or(String::new(), |x| format!("{x:.4}")),
            p.bytes,
            p.queue_drops,
            p.random_drops
        );
    }
    files.push(("points.csv".into(), csv.finish()));
    for cubic in [true, false] {
        let cc = if cubic { "CUBIC" } else { "NewReno" };
        let mut series = Vec::new();
        for &n in &o.buffers {
            let v = Variant::Quic { cubic, n };
            series.push(measured(points, o, v, false, &v.label()));
        }
        series.push(measured(
            points,
            o,
            Variant::TcpWindowLimited,
            false,
            "TCP 53 KiB (model)",
        ));
        if let Some(r) = quic_plateau(points, o, cubic) {
            for n in [1u32, 2, 4] {
                series.push(Series {
                    name: format!("bound N={n}{}", if n == 4 { ",8" } else { "" }),
                    points: fine_rtts(o)
                        .into_iter()
                        .map(|x| (x, buffers_bound(n, BUFFER_BYTES, r * 1e6, x / 1e3) / 1e6))
                        .collect(),
                });
            }
        }
        if let Some(r) = plateau(points, o, Variant::TcpWindowLimited) {
            series.push(Series {
                name: "bound 53 KiB x 8 / RTT".into(),
                points: fine_rtts(o)
                    .into_iter()
                    .filter(|&x| x > 0.0)
                    .map(|x| (x, window_bound(TCP_WINDOW, r * 1e6, x / 1e3) / 1e6))
                    .collect(),
            });
        }
        files.push((
            format!("rtt_{}.svg", cc.to_lowercase()),
            line_chart(
                &format!("Goodput vs RTT: QUIC {cc}, N x 512 KiB; TCP 53 KiB (sim.)"),
                "RTT (ms)",
                "goodput (Mbit/s)",
                &series,
            ),
        ));
    }
    let series: Vec<Series> = rtt_variants(o)
        .into_iter()
        .map(|v| measured(points, o, v, true, &v.label()))
        .collect();
    files.push((
        "rtt_normalised.svg".into(),
        line_chart(
            "Goodput vs RTT, normalised to each curve's 0-ms value (sim.)",
            "RTT (ms)",
            "goodput / goodput at 0 ms",
            &series,
        ),
    ));
    files
}

pub(super) fn measured(points: &[PointResult], o: &Options, v: Variant, normalised: bool, name: &str) -> Series {
    Series {
        name: name.into(),
        points: o
            .rtts_ms
            .iter()
            .filter_map(|&rtt| {
                let y = if normalised {
                    norm(points, o, v, rtt)?
                } else {
                    find(points, "rtt", v, rtt, 0.0)?.mbps
                };
                Some((f64::from(rtt), y))
            })
            .collect(),
    }
}

/// What the controller's reaction to random loss allows, bits per second:
/// the NewReno/Reno steady state `1.22 MSS / (RTT sqrt(p))` (M. Mathis,
/// J. Semke, J. Mahdavi, T. Ott, "The macroscopic behavior of the TCP
/// congestion avoidance algorithm", CCR 27(3), 1997, eq. 3), with the TCP
/// model's segment as MSS and the propagation RTT, at most the bottleneck
/// rate. A recovery scheme cannot beat it; it can only lose more.
pub fn loss_bound(ber: f64, rtt_secs: f64) -> f64 {
    let r = BOTTLENECK_BPS as f64;
    if rtt_secs <= 0.0 {
        return r;
    }
    (1.22 * TCP_SEGMENT as f64 * 8.0 / (rtt_secs * packet_loss(ber).sqrt())).min(r)
}

/// Packet loss probability of a `WIRE_BYTES` packet at bit error rate `ber`.
pub fn packet_loss(ber: f64) -> f64 {
    1.0 - (1.0 - ber).powf(WIRE_BYTES as f64 * 8.0)
}

const BER_VARIANTS: [Variant; 3] = [Variant::Quic { cubic: false, n: 4 }, Variant::TcpSack, Variant::TcpGbn];

pub(super) fn ber_table(o: &Options, points: &[PointResult]) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "\n== Throughput vs RTT with random bit errors (simulated), NewReno everywhere, Mbit/s ==\n\
         (1228-byte packets; errors on the data direction only, ACKs see none; QUIC with 4 x 512 KiB buffers,\n\
         TCP model with a 2 MiB window = 4 x 512 KiB; a 2000-packet queue, more than the window (queue drops in\n\
         points.csv: QUIC and TCP SACK none; TCP go-back-N below 113 ms, its resends joining their queued originals); GBN/SACK = go-back-N over selective repeat in the same model; drops = bit errors per flow;\n\
         NR bound = 1.22 MSS / (RTT sqrt(p)), Mathis et al. 1997: what NewReno's halving per loss allows;\n\
         TCP model profile {}{})",
        o.tcp_profile,
        match o.tcp_profile {
            Profile::Linux =>
                ": TCP SACK = RACK-TLP with PRR, timestamps and 40 ms delayed ACKs; GBN with timestamps and delayed ACKs",
            _ => "",
        }
    );
    for &ber in &o.bers {
        let _ = writeln!(t, "\nBER {ber:e}: packet loss p = {:.2e}", packet_loss(ber));
        let mut table = tput_lab::report::Table::new()
            .right("RTT ms", 7)
            .right("QUIC SR", 12)
            .right("TCP SACK", 12)
            .right("TCP GBN", 12)
            .right("GBN/SACK", 9)
            .right("QUIC/SACK", 9)
            .right("drops Q/S/G", 14)
            .right("NR bound", 9);
        for &rtt in &o.rtts_ms {
            let get = |v| find(points, "ber", v, rtt, ber);
            let [q, s, g] = BER_VARIANTS.map(get);
            let ratio = |a: Option<&PointResult>, b: Option<&PointResult>| a.zip(b).map(|(a, b)| a.mbps / b.mbps);
            let drops = [q, s, g].map(|x| x.map_or("-".into(), |p| p.random_drops.to_string()));
            table.row([
                rtt.to_string(),
                cell(q.map(|p| p.mbps), 2),
                cell(s.map(|p| p.mbps), 2),
                cell(g.map(|p| p.mbps), 2),
                cell(ratio(g, s), 3),
                cell(ratio(q, s), 3),
                drops.join("/"),
                cell(Some(loss_bound(ber, f64::from(rtt) / 1e3) / 1e6), 2),
            ]);
        }
        t += &table.text();
        let lo = *o.rtts_ms.iter().min().unwrap_or(&0);
        let hi = *o.rtts_ms.iter().max().unwrap_or(&0);
        let r = |rtt| {
            find(points, "ber", Variant::TcpGbn, rtt, ber)
                .zip(find(points, "ber", Variant::TcpSack, rtt, ber))
                .map(|(g, s)| g.mbps / s.mbps)
        };
        if let (Some(a), Some(b)) = (r(lo), r(hi)) {
            let _ = writeln!(
                t,
                "paper (at BER 1e-8): selective beats go-back-N as the delay grows, alike at small delay; ours GBN/SACK {a:.2} at {lo} ms, {b:.2} at {hi} ms: {}",
                if b < a - 0.05 && a > 0.9 {
                    "agrees"
                } else if b > a + 0.05 {
                    "differs (go-back-N does better at long delay)"
                } else {
                    "differs (no difference here)"
                }
            );
        }
    }
    t
}

pub(super) fn ber_files(o: &Options, points: &[PointResult]) -> Vec<(String, String)> {
    let mut series = Vec::new();
    for &ber in &o.bers {
        for v in BER_VARIANTS {
            series.push(Series {
                name: format!("{} BER {ber:e}", v.label().replace("QUIC NewReno N=4", "QUIC SR 4 buf")),
                points: o
                    .rtts_ms
                    .iter()
                    .filter_map(|&rtt| Some((f64::from(rtt), find(points, "ber", v, rtt, ber)?.mbps)))
                    .collect(),
            });
        }
    }
    for &ber in &o.bers {
        series.push(Series {
            name: format!("NewReno loss bound BER {ber:e}"),
            points: fine_rtts(o)
                .into_iter()
                .map(|x| (x, loss_bound(ber, x / 1e3) / 1e6))
                .collect(),
        });
    }
    vec![(
        "ber.svg".into(),
        line_chart(
            "Bit errors: selective repeat vs go-back-N (NewReno, sim.)",
            "RTT (ms)",
            "goodput (Mbit/s)",
            &series,
        ),
    )]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_follow_the_papers_arithmetic() {
        let r = 32e6;
        // One buffer at 200 ms: B / (B/R + RTT), about 12.7 Mbit/s.
        let one = buffers_bound(1, BUFFER_BYTES, r, 0.2) / 1e6;
        assert!((one - 12.7).abs() < 0.1, "{one}");
        // Two buffers stay at R up to RTT = B/R (131 ms at 32 Mbit/s).
        assert_eq!(buffers_bound(2, BUFFER_BYTES, r, 0.130), r);
        assert!(buffers_bound(2, BUFFER_BYTES, r, 0.135) < r);
        assert_eq!(buffers_bound(4, BUFFER_BYTES, r, 0.2), r);
        assert_eq!(window_bound(TCP_WINDOW, r, 0.0), r);
        let tcp = window_bound(TCP_WINDOW, r, 0.1) / 1e6;
        assert!((tcp - 4.342).abs() < 0.01, "{tcp}");
        let p = packet_loss(1e-8);
        assert!((p - 9.8e-5).abs() < 0.1e-5, "{p}");
    }
}
