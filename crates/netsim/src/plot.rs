//! A tiny, dependency-free SVG line chart for simulation results (`tputctl sim`
//! plots, the paper reproductions in `tput-benches`).
//!
//! [`line_chart`] draws any number of [`Series`] on one pair of linear axes:
//! an 800x450 `viewBox`, grid lines and tick labels at "nice" values (1, 2,
//! 2.5 or 5 times a power of ten), axis labels, a title and a legend of at
//! most 12 entries (then "+N more"). Non-finite points are skipped;
//! empty series, single points and constant values draw without panicking.
//! The y axis starts at 0 whenever no value is negative.
//!
//! Transcendental functions (`pow`, `log10`) come from the `libm` crate, not `std`:
//! `std` calls the platform's C library, whose results may differ in the last
//! bits between machines; `libm` gives bit-identical results on every target,
//! so one scenario and seed give the same bytes on x86_64 and aarch64.

use std::fmt::Write as _;

/// One line on a chart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// Name shown in the legend (and as the line's tooltip).
    pub name: String,
    /// `(x, y)` points, drawn in order; non-finite points are skipped.
    pub points: Vec<(f64, f64)>,
}

const WIDTH: f64 = 800.0;
const HEIGHT: f64 = 450.0;
/// Plot area: left, top, right, bottom edges in SVG units.
const PLOT_LEFT: f64 = 72.0;
const PLOT_TOP: f64 = 40.0;
const PLOT_RIGHT: f64 = 600.0;
const PLOT_BOTTOM: f64 = 395.0;
/// The legend's left edge.
const LEGEND_LEFT: f64 = 615.0;
/// Most legend entries; further series are summarised as "+N more".
const LEGEND_MAX: usize = 12;
/// Longest legend text, in characters, before it is shortened with "…".
const LEGEND_CHARS: usize = 22;
/// Ticks aimed for on each axis.
const TICKS: usize = 5;

/// Tableau 10: distinct, colour-blind-friendly line colours.
const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
];

/// An SVG document: a line chart with axes, ticks at "nice" values, axis labels, a title and a legend.
///
/// `series` may be empty, and a series may be empty or hold non-finite
/// points (they are skipped). Text is XML-escaped.
pub fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    let finite: Vec<Vec<(f64, f64)>> = series
        .iter()
        .map(|s| {
            s.points
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect()
        })
        .collect();
    let all = || finite.iter().flatten();
    let (x_lo, x_hi) = bounds(all().map(|p| p.0), false);
    let (y_lo, y_hi) = bounds(all().map(|p| p.1), true);
    let x_ticks = nice_ticks(x_lo, x_hi, TICKS);
    let y_ticks = nice_ticks(y_lo, y_hi, TICKS);
    let (x0, x1) = axis_range(&x_ticks, x_lo, x_hi);
    let (y0, y1) = axis_range(&y_ticks, y_lo, y_hi);
    let px = |x: f64| coord(PLOT_LEFT + (x - x0) / (x1 - x0) * (PLOT_RIGHT - PLOT_LEFT));
    let py = |y: f64| coord(PLOT_BOTTOM - (y - y0) / (y1 - y0) * (PLOT_BOTTOM - PLOT_TOP));

    let mut svg = String::with_capacity(4096 + finite.iter().map(|p| p.len() * 16).sum::<usize>());
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {HEIGHT}" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="24" text-anchor="middle" font-size="16" font-weight="bold">{}</text>"#,
        (PLOT_LEFT + PLOT_RIGHT) / 2.0,
        escape(title)
    );

    // Grid lines and tick labels.
    let x_dec = decimals(&x_ticks);
    let y_dec = decimals(&y_ticks);
    svg.push_str("<g stroke=\"#e0e0e0\" stroke-width=\"1\">\n");
    for &t in &x_ticks {
        let x = px(t);
        let _ = writeln!(
            svg,
            r#"<line x1="{x:.1}" y1="{PLOT_TOP}" x2="{x:.1}" y2="{PLOT_BOTTOM}"/>"#
        );
    }
    for &t in &y_ticks {
        let y = py(t);
        let _ = writeln!(
            svg,
            r#"<line x1="{PLOT_LEFT}" y1="{y:.1}" x2="{PLOT_RIGHT}" y2="{y:.1}"/>"#
        );
    }
    svg.push_str("</g>\n<g fill=\"#333\">\n");
    for &t in &x_ticks {
        let _ = writeln!(
            svg,
            r#"<text x="{:.1}" y="{}" text-anchor="middle">{}</text>"#,
            px(t),
            PLOT_BOTTOM + 16.0,
            tick_label(t, x_dec)
        );
    }
    for &t in &y_ticks {
        let _ = writeln!(
            svg,
            r#"<text x="{}" y="{:.1}" text-anchor="end">{}</text>"#,
            PLOT_LEFT - 6.0,
            py(t) + 4.0,
            tick_label(t, y_dec)
        );
    }
    svg.push_str("</g>\n");

    // Axes and their labels.
    let _ = writeln!(
        svg,
        r##"<path d="M{PLOT_LEFT},{PLOT_TOP} V{PLOT_BOTTOM} H{PLOT_RIGHT}" fill="none" stroke="#333" stroke-width="1"/>"##
    );
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">{}</text>"#,
        (PLOT_LEFT + PLOT_RIGHT) / 2.0,
        HEIGHT - 14.0,
        escape(x_label)
    );
    let (lx, ly) = (18.0, (PLOT_TOP + PLOT_BOTTOM) / 2.0);
    let _ = writeln!(
        svg,
        r#"<text x="{lx}" y="{ly}" text-anchor="middle" transform="rotate(-90 {lx} {ly})">{}</text>"#,
        escape(y_label)
    );

    // The lines.
    for (i, (s, pts)) in series.iter().zip(&finite).enumerate() {
        if pts.is_empty() {
            continue;
        }
        let colour = PALETTE[i % PALETTE.len()];
        let _ = write!(
            svg,
            r#"<g><title>{}</title><polyline fill="none" stroke="{colour}" stroke-width="1.5" stroke-linejoin="round" points=""#,
            escape(&s.name)
        );
        for (j, &(x, y)) in pts.iter().enumerate() {
            let sep = if j == 0 { "" } else { " " };
            let _ = write!(svg, "{sep}{:.1},{:.1}", px(x), py(y));
        }
        svg.push_str("\"/>");
        if let [(x, y)] = pts[..] {
            // A lone point draws no line; mark it.
            let _ = write!(
                svg,
                r#"<circle cx="{:.1}" cy="{:.1}" r="3" fill="{colour}"/>"#,
                px(x),
                py(y)
            );
        }
        svg.push_str("</g>\n");
    }

    // The legend.
    for (i, s) in series.iter().take(LEGEND_MAX).enumerate() {
        let y = PLOT_TOP + 8.0 + 20.0 * i as f64;
        let colour = PALETTE[i % PALETTE.len()];
        let _ = writeln!(
            svg,
            r#"<line x1="{LEGEND_LEFT}" y1="{y}" x2="{}" y2="{y}" stroke="{colour}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            LEGEND_LEFT + 20.0,
            LEGEND_LEFT + 26.0,
            y + 4.0,
            escape(&shorten(&s.name, LEGEND_CHARS))
        );
    }
    if series.len() > LEGEND_MAX {
        let _ = writeln!(
            svg,
            r##"<text x="{LEGEND_LEFT}" y="{}" fill="#555">+{} more</text>"##,
            PLOT_TOP + 12.0 + 20.0 * LEGEND_MAX as f64,
            series.len() - LEGEND_MAX
        );
    }
    if finite.iter().all(Vec::is_empty) {
        let _ = writeln!(
            svg,
            r##"<text x="{}" y="{}" text-anchor="middle" fill="#888">no data</text>"##,
            (PLOT_LEFT + PLOT_RIGHT) / 2.0,
            (PLOT_TOP + PLOT_BOTTOM) / 2.0
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// The smallest and largest of `values` (all finite), widened so that the
/// range is never empty; from 0 if `from_zero` and nothing is negative.
fn bounds(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
    let (mut lo, mut hi) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| (lo.min(v), hi.max(v)));
    if lo > hi {
        return (0.0, 1.0);
    }
    if from_zero && lo >= 0.0 {
        lo = 0.0;
    }
    if hi - lo <= 0.0 || !(hi - lo).is_finite() {
        // Constant values (or a span too wide for f64): pad around them.
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        let (a, b) = (lo - pad, hi + pad);
        lo = if from_zero && lo >= 0.0 { 0.0 } else { a };
        hi = b;
        if !(hi - lo).is_finite() || hi <= lo {
            return (-1.0, 1.0);
        }
    }
    (lo, hi)
}

/// Ticks at multiples of a "nice" step (1, 2, 2.5 or 5 times a power of ten)
/// covering `lo..=hi`, about `target` of them; empty if the range is unusable.
fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) || target == 0 {
        return Vec::new();
    }
    let raw = span / target as f64;
    let mag = libm::pow(10.0, libm::log10(raw).floor());
    let norm = raw / mag;
    let step = mag
        * if norm <= 1.0 {
            1.0
        } else if norm <= 2.0 {
            2.0
        } else if norm <= 2.5 {
            2.5
        } else if norm <= 5.0 {
            5.0
        } else {
            10.0
        };
    let (first, last) = ((lo / step + 1e-9).floor(), (hi / step - 1e-9).ceil());
    if !(first.is_finite() && last.is_finite()) || last - first > 100.0 {
        return Vec::new();
    }
    let (first, last) = (first as i64, last as i64);
    (first..=last)
        .map(|k| {
            let t = k as f64 * step;
            if t == 0.0 { 0.0 } else { t }
        })
        .collect()
}

/// An SVG coordinate kept finite and bounded (extreme data can overflow the scaling).
fn coord(v: f64) -> f64 {
    if v.is_nan() { 0.0 } else { v.clamp(-1e5, 1e5) }
}

/// The axis range: the outer ticks, or the data bounds if there are none.
fn axis_range(ticks: &[f64], lo: f64, hi: f64) -> (f64, f64) {
    match (ticks.first(), ticks.last()) {
        (Some(&a), Some(&b)) if b > a => (a, b),
        _ => (lo, hi),
    }
}

/// Decimal places that print every tick exactly (at most 6).
fn decimals(ticks: &[f64]) -> usize {
    (0..=6)
        .find(|&d| {
            let m = libm::pow(10.0, d as f64);
            ticks.iter().all(|t| {
                let v = t * m;
                (v - v.round()).abs() <= 1e-6 * v.abs().max(1.0)
            })
        })
        .unwrap_or(6)
}

/// A tick label: fixed-point with `dec` decimals, or an exponent for huge or tiny values.
fn tick_label(t: f64, dec: usize) -> String {
    let a = t.abs();
    if a != 0.0 && !(1e-4..1e7).contains(&a) {
        let s = format!("{t:e}");
        // Keep at most three significant digits.
        match s.split_once('e') {
            Some((m, e)) => {
                let m: f64 = m.parse().unwrap_or(0.0);
                let m = format!("{m:.2}");
                let m = m.trim_end_matches('0').trim_end_matches('.');
                format!("{m}e{e}")
            }
            None => s,
        }
    } else {
        format!("{t:.dec$}")
    }
}

/// `s` cut to `max` characters, with "…" when shortened.
fn shorten(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_owned()
    } else {
        let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
        out.push('…');
        out
    }
}

/// XML-escape text for element content and attribute values.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') => {}
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, points: &[(f64, f64)]) -> Series {
        Series {
            name: name.into(),
            points: points.to_vec(),
        }
    }

    fn well_formed(svg: &str) {
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
        assert!(svg.contains(r#"viewBox="0 0 800 450""#), "{svg}");
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        // Every tag opened is closed or self-closing, in order.
        let mut stack = Vec::new();
        let mut rest = svg;
        while let Some(i) = rest.find('<') {
            rest = &rest[i + 1..];
            let end = rest.find('>').expect("unterminated tag");
            let tag = &rest[..end];
            let name = tag
                .trim_start_matches('/')
                .split(|c: char| c.is_whitespace() || c == '/')
                .next()
                .unwrap();
            if let Some(closing) = tag.strip_prefix('/') {
                assert_eq!(stack.pop(), Some(closing), "mismatched </{closing}>");
            } else if !tag.ends_with('/') {
                stack.push(name);
            }
            rest = &rest[end + 1..];
        }
        assert!(stack.is_empty(), "unclosed {stack:?}");
    }

    #[test]
    fn draws_every_series() {
        let s = [
            series("guarantee <20Mbit/s>", &[(0.0, 1.0), (1.0, 19.5), (2.0, 21.0)]),
            series("reno & co", &[(0.0, 50.0), (1.0, 40.0), (2.0, 35.0)]),
            series("empty", &[]),
        ];
        let svg = line_chart("Fig. 4 \"throughput\"", "time (s)", "rate <Mbit/s>", &s);
        well_formed(&svg);
        assert!(svg.contains("guarantee &lt;20Mbit/s&gt;"));
        assert!(svg.contains("reno &amp; co"));
        assert!(svg.contains(">empty<"));
        assert!(svg.contains("Fig. 4 &quot;throughput&quot;"));
        assert!(svg.contains("rate &lt;Mbit/s&gt;"));
        assert!(svg.contains("time (s)"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(svg.matches(PALETTE[0]).count(), 2, "line and legend");
        assert!(!svg.contains("more<"));
    }

    #[test]
    fn degenerate_inputs_do_not_panic() {
        let cases: Vec<Vec<Series>> = vec![
            vec![],
            vec![series("empty", &[])],
            vec![series("one", &[(3.0, 7.0)])],
            vec![series("zero", &[(0.0, 0.0)])],
            vec![series("flat", &[(1.0, 5.0), (2.0, 5.0), (3.0, 5.0)])],
            vec![series("vertical", &[(2.0, 1.0), (2.0, 3.0)])],
            vec![series("negative flat", &[(0.0, -4.0), (1.0, -4.0)])],
            vec![series(
                "nan",
                &[
                    (f64::NAN, 1.0),
                    (1.0, f64::INFINITY),
                    (2.0, 3.0),
                    (f64::NEG_INFINITY, 0.0),
                    (3.0, 4.0),
                ],
            )],
            vec![series("only nan", &[(f64::NAN, f64::NAN)])],
            vec![series("huge", &[(0.0, -f64::MAX), (1.0, f64::MAX)])],
            vec![series("tiny", &[(0.0, 1e-300), (1e-300, 2e-300)])],
            vec![series("big", &[(0.0, 1e12), (1.0, 3e12)])],
            vec![series("offset", &[(1e15, 1.0), (1e15 + 1.0, 2.0)])],
        ];
        for s in &cases {
            let svg = line_chart("t", "x", "y", s);
            well_formed(&svg);
            let drawn = s
                .iter()
                .filter(|s| s.points.iter().any(|(x, y)| x.is_finite() && y.is_finite()))
                .count();
            assert_eq!(svg.matches("<polyline").count(), drawn, "{svg}");
        }
        let svg = line_chart("t", "x", "y", &cases[2]);
        assert!(svg.contains("<circle"), "a lone point is marked");
    }

    #[test]
    fn legend_is_capped_and_colours_cycle() {
        let s: Vec<Series> = (0..15)
            .map(|i| series(&format!("flow {i}"), &[(0.0, i as f64), (1.0, i as f64 + 1.0)]))
            .collect();
        let svg = line_chart("many", "x", "y", &s);
        well_formed(&svg);
        assert_eq!(svg.matches("<polyline").count(), 15);
        assert!(svg.contains(">+3 more</text>"));
        assert!(svg.contains(">flow 11</text>"));
        assert!(!svg.contains(">flow 12</text>"), "not in the legend");
        assert!(svg.contains("<title>flow 14</title>"), "but named on its line");
        for (i, c) in PALETTE.iter().enumerate() {
            assert!(svg.contains(&format!("stroke=\"{c}\"")), "colour {i}");
        }
    }

    #[test]
    fn long_names_are_shortened_in_the_legend() {
        let name = "guarantee:target=20Mbit/s,eval=32rtt,slot=16rtt";
        let svg = line_chart("t", "x", "y", &[series(name, &[(0.0, 1.0), (1.0, 2.0)])]);
        assert!(svg.contains(&format!("<title>{name}</title>")));
        assert!(svg.contains(&format!(">{}</text>", shorten(name, LEGEND_CHARS))));
        assert_eq!(shorten(name, LEGEND_CHARS).chars().count(), LEGEND_CHARS);
        assert_eq!(shorten("short", LEGEND_CHARS), "short");
    }

    #[test]
    fn ticks_are_nice() {
        assert_eq!(nice_ticks(0.0, 97.0, 5), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(
            nice_ticks(0.0, 1.0, 5),
            vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
        assert_eq!(nice_ticks(0.0, 15.0, 5), vec![0.0, 5.0, 10.0, 15.0]);
        assert_eq!(nice_ticks(0.0, 120.0, 5), vec![0.0, 25.0, 50.0, 75.0, 100.0, 125.0]);
        assert_eq!(nice_ticks(-3.0, 7.0, 5), vec![-4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0]);
        assert_eq!(
            nice_ticks(2.0, 3.0, 5),
            vec![2.0, 2.2, 2.4000000000000004, 2.6, 2.8000000000000003, 3.0]
        );
        let t = nice_ticks(0.0, 1.2e8, 5);
        assert_eq!(t.first(), Some(&0.0));
        assert_eq!(t.last(), Some(&1.25e8));
        assert!(nice_ticks(1.0, 1.0, 5).is_empty());
        assert!(nice_ticks(0.0, f64::INFINITY, 5).is_empty());
        assert!(nice_ticks(f64::NAN, 1.0, 5).is_empty());
        for (lo, hi) in [(0.0, 97.0), (-0.37, 0.91), (1e-6, 3e-6), (5.0, 5000.0), (-1e9, 1e9)] {
            let t = nice_ticks(lo, hi, 5);
            assert!(t.len() >= 3 && t.len() <= 12, "{lo}..{hi}: {t:?}");
            assert!(t[0] <= lo && *t.last().unwrap() >= hi, "{lo}..{hi}: {t:?}");
            let step = t[1] - t[0];
            let mag = 10f64.powf(step.log10().floor());
            let norm = step / mag;
            assert!(
                [1.0, 2.0, 2.5, 5.0, 10.0].iter().any(|n| (norm - n).abs() < 1e-9),
                "{lo}..{hi}: step {step}"
            );
        }
    }

    #[test]
    fn y_axis_starts_at_zero_for_non_negative_data() {
        assert_eq!(bounds([40.0, 97.0].into_iter(), true), (0.0, 97.0));
        assert_eq!(bounds([40.0, 97.0].into_iter(), false), (40.0, 97.0));
        assert_eq!(bounds([-5.0, 97.0].into_iter(), true), (-5.0, 97.0));
        assert_eq!(bounds([5.0, 5.0].into_iter(), true), (0.0, 5.0));
        assert_eq!(bounds([5.0, 5.0].into_iter(), false), (4.5, 5.5));
        assert_eq!(bounds([0.0].into_iter(), true), (0.0, 1.0));
        assert_eq!(bounds(std::iter::empty(), true), (0.0, 1.0));
        let svg = line_chart("t", "x", "y", &[series("s", &[(0.0, 40.0), (1.0, 97.0)])]);
        assert!(svg.contains(">0</text>") && svg.contains(">100</text>"), "{svg}");
    }

    #[test]
    fn labels_and_escaping() {
        assert_eq!(decimals(&[0.0, 0.5, 1.0]), 1);
        assert_eq!(decimals(&[0.0, 25.0, 50.0]), 0);
        assert_eq!(decimals(&[0.0, 0.25]), 2);
        assert_eq!(tick_label(0.6000000000000001, 1), "0.6");
        assert_eq!(tick_label(0.0, 0), "0");
        assert_eq!(tick_label(1.25e8, 0), "1.25e8");
        assert_eq!(tick_label(2e-6, 0), "2e-6");
        assert_eq!(escape(r#"a<b>&"c"'d'"#), "a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos;");
        assert_eq!(escape("bell\u{7}"), "bell");
    }
}
