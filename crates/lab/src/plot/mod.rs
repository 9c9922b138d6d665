//! SVG charts for simulation results (`tputctl sim` plots, the paper
//! reproductions in `tput-benches`), drawn with `plotters`' SVG backend (no
//! font files: text is written as SVG `<text>` and laid out by the viewer).
//!
//! A [`Figure`] is one or more [`Panel`]s stacked over one shared x axis;
//! each panel holds [`Trace`]s: lines, step lines (a value holds until the
//! next point: controller state) and bands (a group's mean with a shaded
//! min-max range). [`line_chart`] is the one-panel shortcut for plain lines.
//!
//! Colours: every distinct trace name gets the next colour of [`PALETTE`]
//! (the same name in two panels, the same colour); names beyond the palette
//! are drawn in grey and summed up in the legend as "+N more (grey)", so
//! the legend never shows one colour twice. The legend sits right of the
//! plot, names wrapped over at most three lines. Non-finite points are
//! skipped; empty traces, single points and constant values draw without
//! panicking. A y axis starts at 0 whenever no value is negative. The output
//! holds no timestamp or random id: same input, same bytes.
//!
//! [`scenario_charts`] draws a scenario run: the tested flows (groups with a
//! `target`, or else the first group) one line each, every other group as
//! its mean with a min-max band, all on the scenario's absolute time axis.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::scenario::{FlowResult, Scenario, ScenarioResult};

/// One line on a chart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Series {
    /// Name shown in the legend.
    pub name: String,
    /// `(x, y)` points, drawn in order; non-finite points are skipped.
    pub points: Vec<(f64, f64)>,
}

/// One x position of a [`Band`].
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BandPoint {
    /// Position on the x axis.
    pub x: f64,
    /// Mean of the group's values at `x` (the line).
    pub mean: f64,
    /// Smallest value at `x` (lower edge of the band).
    pub min: f64,
    /// Largest value at `x` (upper edge of the band).
    pub max: f64,
}

/// A group of series drawn as its mean line over a shaded min-max band.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Band {
    /// Name shown in the legend.
    pub name: String,
    /// Points in x order; points with a non-finite field are skipped.
    pub points: Vec<BandPoint>,
}

/// Something drawn in a [`Panel`].
#[derive(Debug, Clone, PartialEq)]
pub enum Trace {
    /// A line through the points (width 2).
    Line(Series),
    /// A piecewise-constant line: each value holds until the next point's x.
    Steps(Series),
    /// A mean line (width 1.5) over a min-max band.
    Band(Band),
}

impl Trace {
    /// The name shown in the legend.
    pub fn name(&self) -> &str {
        match self {
            Trace::Line(s) | Trace::Steps(s) => &s.name,
            Trace::Band(b) => &b.name,
        }
    }
}

/// One plot area of a [`Figure`], with its own y axis.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Panel {
    /// Label of the y axis.
    pub y_label: String,
    /// What to draw: bands first, then lines on top, each group in order.
    pub traces: Vec<Trace>,
}

/// A chart: a title, panels stacked over one x axis, a legend on the right.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figure {
    /// Title above the panels.
    pub title: String,
    /// Label of the shared x axis (under the last panel).
    pub x_label: String,
    /// The x axis' range; `None`: from the data, widened to "nice" ticks.
    pub x_range: Option<(f64, f64)>,
    /// The panels, top to bottom.
    pub panels: Vec<Panel>,
}

/// Line colours: Tableau 10 with its grey replaced by black (grey marks
/// traces beyond the palette), colour-blind friendly and pairwise distinct.
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0x22, 0x22, 0x22),
];

/// The colour of traces beyond [`PALETTE`].
const OVERFLOW: RGBColor = RGBColor(0xb0, 0xb0, 0xb0);

const WIDTH: u32 = 1000;
/// Height of a one-panel figure, and of each panel of a taller one.
const SINGLE_HEIGHT: u32 = 500;
const PANEL_HEIGHT: u32 = 300;
const TITLE_HEIGHT: u32 = 40;
const LEGEND_WIDTH: u32 = 260;
/// Characters per legend line.
const LEGEND_CHARS: usize = 26;
/// Most lines of one legend entry.
const LEGEND_LINES: usize = 3;
/// Points of a line beyond which it is thinned to the extremes per pixel column.
const THIN_BUCKETS: usize = 1500;
const FONT: &str = "sans-serif";

/// An SVG document: a one-panel line chart of `series` with axes, axis
/// labels, a title and a legend (see the [module docs](self) for colours).
///
/// `series` may be empty, and a series may be empty or hold non-finite
/// points (they are skipped).
pub fn line_chart(title: &str, x_label: &str, y_label: &str, series: &[Series]) -> String {
    Figure {
        title: title.into(),
        x_label: x_label.into(),
        x_range: None,
        panels: vec![Panel {
            y_label: y_label.into(),
            traces: series.iter().cloned().map(Trace::Line).collect(),
        }],
    }
    .to_svg()
}

/// A trace's finite points, ready to draw: `(x, y)` for lines (steps
/// expanded), `(x, min, mean, max)` for bands.
enum Prepared {
    Line(Vec<(f64, f64)>),
    Band(Vec<(f64, f64, f64, f64)>),
}

impl Prepared {
    fn new(t: &Trace) -> Self {
        let finite = |s: &Series| -> Vec<(f64, f64)> {
            s.points
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect()
        };
        match t {
            Trace::Line(s) => Prepared::Line(finite(s)),
            Trace::Steps(s) => {
                let pts = finite(s);
                let mut out = Vec::with_capacity(pts.len() * 2);
                for (i, &(x, y)) in pts.iter().enumerate() {
                    if i > 0 {
                        out.push((x, pts[i - 1].1));
                    }
                    out.push((x, y));
                }
                Prepared::Line(out)
            }
            Trace::Band(b) => Prepared::Band(
                b.points
                    .iter()
                    .filter(|p| [p.x, p.mean, p.min, p.max].iter().all(|v| v.is_finite()))
                    .map(|p| (p.x, p.min, p.mean, p.max))
                    .collect(),
            ),
        }
    }

    fn xs(&self) -> Box<dyn Iterator<Item = f64> + '_> {
        match self {
            Prepared::Line(p) => Box::new(p.iter().map(|p| p.0)),
            Prepared::Band(p) => Box::new(p.iter().map(|p| p.0)),
        }
    }

    fn ys(&self) -> Box<dyn Iterator<Item = f64> + '_> {
        match self {
            Prepared::Line(p) => Box::new(p.iter().map(|p| p.1)),
            Prepared::Band(p) => Box::new(p.iter().flat_map(|p| [p.1, p.2, p.3])),
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            Prepared::Line(p) => p.is_empty(),
            Prepared::Band(p) => p.is_empty(),
        }
    }
}

/// `lo..hi` widened to "nice" ticks.
fn nice_range(lo: f64, hi: f64) -> (f64, f64) {
    axis_range(&nice_ticks(lo, hi, 8), lo, hi)
}

/// `points` (in x order) thinned to the first, lowest, highest and last point
/// of each of `buckets` columns of `x0..x1`, so the drawn shape is unchanged
/// at pixel scale; short inputs are returned as they are.
fn thin(points: &[(f64, f64)], x0: f64, x1: f64, buckets: usize) -> Vec<(f64, f64)> {
    if points.len() <= 4 * buckets || (x1 - x0).partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return points.to_vec();
    }
    let bucket = |x: f64| (((x - x0) / (x1 - x0) * buckets as f64).floor()).clamp(0.0, buckets as f64) as usize;
    let mut out = Vec::with_capacity(4 * buckets + 4);
    let mut i = 0;
    while i < points.len() {
        let b = bucket(points[i].0);
        let mut j = i;
        let (mut lo, mut hi) = (i, i);
        while j < points.len() && bucket(points[j].0) == b {
            if points[j].1 < points[lo].1 {
                lo = j;
            }
            if points[j].1 > points[hi].1 {
                hi = j;
            }
            j += 1;
        }
        let mut keep = [i, lo, hi, j - 1];
        keep.sort_unstable();
        let mut last = usize::MAX;
        for k in keep {
            if k != last {
                out.push(points[k]);
                last = k;
            }
        }
        i = j;
    }
    out
}

/// A tick label: the shortest of up to six decimals that shows `v`, or an
/// exponent for huge or tiny values.
fn tick_label(v: &f64) -> String {
    let v = if *v == 0.0 { 0.0 } else { *v };
    let a = v.abs();
    if a != 0.0 && !(1e-4..1e7).contains(&a) {
        let s = format!("{v:.2e}");
        match s.split_once('e') {
            Some((m, e)) => format!("{}e{e}", m.trim_end_matches('0').trim_end_matches('.')),
            None => s,
        }
    } else {
        let s = format!("{v:.6}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

/// Text safe for SVG: no control characters.
fn clean(s: &str) -> String {
    s.chars().filter(|c| !c.is_control()).collect()
}

/// A legend name wrapped into lines of at most [`LEGEND_CHARS`], at most
/// [`LEGEND_LINES`] (the last shortened with "…"): lines break after a
/// space, `,` or `:` when there is one, else anywhere.
fn wrap(name: &str) -> Vec<String> {
    let mut rest: Vec<char> = name.trim().chars().collect();
    let mut out = Vec::new();
    while !rest.is_empty() {
        if out.len() + 1 == LEGEND_LINES || rest.len() <= LEGEND_CHARS {
            out.push(shorten(&rest.iter().collect::<String>(), LEGEND_CHARS));
            break;
        }
        let cut = (1..=LEGEND_CHARS)
            .rev()
            .find(|&i| matches!(rest[i - 1], ' ' | ',' | ':'))
            .unwrap_or(LEGEND_CHARS);
        out.push(rest[..cut].iter().collect::<String>().trim_end().to_string());
        rest.drain(..cut);
        while rest.first() == Some(&' ') {
            rest.remove(0);
        }
    }
    out
}

impl Figure {
    /// The figure as an SVG document.
    pub fn to_svg(&self) -> String {
        let n = self.panels.len().max(1);
        let height = TITLE_HEIGHT
            + if n == 1 {
                SINGLE_HEIGHT - TITLE_HEIGHT
            } else {
                PANEL_HEIGHT * n as u32
            };
        let mut svg = String::new();
        let drawn = {
            let root = SVGBackend::with_string(&mut svg, (WIDTH, height)).into_drawing_area();
            self.draw(&root)
                .and_then(|()| root.present().map_err(|e| e.to_string()))
        };
        match drawn {
            Ok(()) => svg,
            Err(e) => format!(
                "<svg width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" xmlns=\"http://www.w3.org/2000/svg\"><text x=\"20\" y=\"40\">{}</text></svg>\n",
                escape(&format!("chart could not be drawn: {e}"))
            ),
        }
    }

    fn draw(&self, root: &DrawingArea<SVGBackend<'_>, Shift>) -> Result<(), String> {
        let err = |e: &dyn std::fmt::Display| e.to_string();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (_, height) = root.dim_in_pixel();
        let (title_area, body) = root.split_vertically(TITLE_HEIGHT);
        title_area
            .draw(&Text::new(
                clean(&self.title),
                ((WIDTH - LEGEND_WIDTH) as i32 / 2, 12),
                TextStyle::from((FONT, 24).into_font().style(FontStyle::Bold)).pos(Pos::new(HPos::Center, VPos::Top)),
            ))
            .map_err(|e| err(&e))?;
        let (plots, legend) = body.split_horizontally(WIDTH - LEGEND_WIDTH);

        // Colours by first appearance of each name.
        let mut names: Vec<(&str, &Trace)> = Vec::new();
        for t in self.panels.iter().flat_map(|p| &p.traces) {
            if !names.iter().any(|(n, _)| *n == t.name()) {
                names.push((t.name(), t));
            }
        }
        let colour = |name: &str| {
            let i = names.iter().position(|(n, _)| *n == name).unwrap_or(usize::MAX);
            PALETTE.get(i).copied().unwrap_or(OVERFLOW)
        };

        let prepared: Vec<Vec<Prepared>> = self
            .panels
            .iter()
            .map(|p| p.traces.iter().map(Prepared::new).collect())
            .collect();
        let (x0, x1) = match self.x_range {
            Some((a, b)) if a.is_finite() && b.is_finite() && b > a => (a, b),
            _ => {
                let (lo, hi) = bounds(prepared.iter().flatten().flat_map(|p| p.xs()), false);
                nice_range(lo, hi)
            }
        };
        let areas = if self.panels.len() > 1 {
            plots.split_evenly((self.panels.len(), 1))
        } else {
            vec![plots]
        };
        let last = areas.len().saturating_sub(1);
        for (i, area) in areas.iter().enumerate() {
            let empty = Panel::default();
            let panel = self.panels.get(i).unwrap_or(&empty);
            let prep = prepared.get(i).map(Vec::as_slice).unwrap_or(&[]);
            let (lo, hi) = bounds(prep.iter().flat_map(|p| p.ys()).filter(|_| true), true);
            let (y0, y1) = nice_range(lo, hi);
            let mut chart = ChartBuilder::on(area)
                .margin_top(6)
                .margin_right(16)
                .margin_left(6)
                .margin_bottom(if i == last { 4 } else { 0 })
                .x_label_area_size(if i == last { 50 } else { 26 })
                .y_label_area_size(72)
                .build_cartesian_2d(x0..x1, y0..y1)
                .map_err(|e| err(&e))?;
            let mut mesh = chart.configure_mesh();
            mesh.x_labels(10)
                .x_label_formatter(&tick_label)
                .y_label_formatter(&tick_label)
                .y_labels(if self.panels.len() > 1 { 5 } else { 8 })
                .max_light_lines(0)
                .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4))
                .axis_style(RGBColor(0x44, 0x44, 0x44))
                .label_style((FONT, 17))
                .axis_desc_style((FONT, 18))
                .y_desc(clean(&panel.y_label));
            if i == last {
                mesh.x_desc(clean(&self.x_label));
            }
            mesh.draw().map_err(|e| err(&e))?;

            // Keep coordinates a bounded distance outside the plot (extreme data).
            let (xs, ys) = ((x1 - x0).abs(), (y1 - y0).abs());
            let cx = |x: f64| x.clamp(x0 - xs, x1 + xs);
            let cy = |y: f64| y.clamp(y0 - ys, y1 + ys);
            let columns = THIN_BUCKETS;
            // Bands first, then their means, then lines: lines stay on top.
            for (t, p) in panel.traces.iter().zip(prep) {
                if let Prepared::Band(pts) = p
                    && pts.len() > 1
                {
                    let c = colour(t.name());
                    let mut poly: Vec<(f64, f64)> = pts.iter().map(|p| (cx(p.0), cy(p.3))).collect();
                    poly.extend(pts.iter().rev().map(|p| (cx(p.0), cy(p.1))));
                    chart
                        .draw_series(std::iter::once(Polygon::new(poly, c.mix(0.22).filled())))
                        .map_err(|e| err(&e))?;
                }
            }
            for (t, p) in panel.traces.iter().zip(prep) {
                let c = colour(t.name());
                let (pts, width): (Vec<(f64, f64)>, u32) = match p {
                    Prepared::Band(b) => (b.iter().map(|p| (p.0, p.2)).collect(), 1),
                    Prepared::Line(_) => continue,
                };
                draw_line(&mut chart, &thin(&pts, x0, x1, columns), c, width, &cx, &cy)?;
            }
            for (t, p) in panel.traces.iter().zip(prep) {
                if let Prepared::Line(pts) = p {
                    let c = colour(t.name());
                    draw_line(&mut chart, &thin(pts, x0, x1, columns), c, 2, &cx, &cy)?;
                }
            }
            if prep.iter().all(Prepared::is_empty) {
                let (w, h) = area.dim_in_pixel();
                area.draw(&Text::new(
                    "no data",
                    (w as i32 / 2, h as i32 / 2),
                    (FONT, 18)
                        .into_font()
                        .color(&RGBColor(0x88, 0x88, 0x88))
                        .pos(Pos::new(HPos::Center, VPos::Center)),
                ))
                .map_err(|e| err(&e))?;
            }
        }

        // The legend: one entry per colour, then the grey rest.
        let mut y = 16;
        let line_height = 17;
        let style = (FONT, 17).into_font().color(&RGBColor(0x22, 0x22, 0x22));
        let shown = names.len().min(PALETTE.len());
        for (i, (name, trace)) in names.iter().take(shown).enumerate() {
            let c = PALETTE[i];
            let lines = wrap(name);
            let needed = line_height * lines.len() as i32 + 8;
            if y + needed > height as i32 - TITLE_HEIGHT as i32 {
                break;
            }
            let mid = y + 6;
            if let Trace::Band(_) = trace {
                legend
                    .draw(&Rectangle::new([(8, mid - 7), (36, mid + 7)], c.mix(0.22).filled()))
                    .map_err(|e| err(&e))?;
            }
            let width = if matches!(trace, Trace::Band(_)) { 2 } else { 3 };
            legend
                .draw(&PathElement::new(vec![(8, mid), (36, mid)], c.stroke_width(width)))
                .map_err(|e| err(&e))?;
            for (j, l) in lines.iter().enumerate() {
                legend
                    .draw(&Text::new(l.clone(), (44, y + j as i32 * line_height), style.clone()))
                    .map_err(|e| err(&e))?;
            }
            y += needed;
        }
        if names.len() > shown {
            legend
                .draw(&PathElement::new(
                    vec![(8, y + 6), (36, y + 6)],
                    OVERFLOW.stroke_width(3),
                ))
                .map_err(|e| err(&e))?;
            legend
                .draw(&Text::new(
                    format!("+{} more (grey)", names.len() - shown),
                    (44, y),
                    style,
                ))
                .map_err(|e| err(&e))?;
        }
        Ok(())
    }
}

type Chart<'a, 'b> = ChartContext<
    'a,
    SVGBackend<'b>,
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>,
>;

fn draw_line(
    chart: &mut Chart<'_, '_>,
    pts: &[(f64, f64)],
    c: RGBColor,
    width: u32,
    cx: &dyn Fn(f64) -> f64,
    cy: &dyn Fn(f64) -> f64,
) -> Result<(), String> {
    match pts {
        [] => Ok(()),
        [(x, y)] => chart
            .draw_series(std::iter::once(Circle::new((cx(*x), cy(*y)), 3, c.filled())))
            .map(|_| ())
            .map_err(|e| e.to_string()),
        _ => chart
            .draw_series(LineSeries::new(
                pts.iter().map(|&(x, y)| (cx(x), cy(y))),
                c.stroke_width(width),
            ))
            .map(|_| ())
            .map_err(|e| e.to_string()),
    }
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
    let mag = 10f64.powf(raw.log10().floor());
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

/// The axis range: the outer ticks, or the data bounds if there are none.
fn axis_range(ticks: &[f64], lo: f64, hi: f64) -> (f64, f64) {
    match (ticks.first(), ticks.last()) {
        (Some(&a), Some(&b)) if b > a => (a, b),
        _ => (lo, hi),
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

/// The charts of a simulated run.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioCharts {
    /// Delivered throughput over time: tested flows, other groups' means and ranges.
    pub throughput: String,
    /// Congestion window over time (from the controller traces), grouped likewise.
    pub cwnd: String,
    /// The guarantee controllers' `k` and `s` over time (two panels).
    pub k: String,
    /// Bottleneck queue length over time.
    pub queue: String,
}

/// Most flows drawn one by one; tested groups with more flows in all are drawn as bands too.
pub const MAX_TESTED_LINES: usize = 6;

/// Points of a [`Band`] over step-wise series: this many x positions.
const BAND_GRID: usize = 1000;

/// Which groups of `s` are tested: those with a `target`, or else the first.
pub fn tested_groups(s: &Scenario) -> Vec<bool> {
    let any = s.flows.iter().any(|g| g.target.is_some());
    s.flows
        .iter()
        .enumerate()
        .map(|(i, g)| if any { g.target.is_some() } else { i == 0 })
        .collect()
}

/// A group's mean, smallest and largest value at each x.
///
/// Without `hold`, the x positions are those the members share (each x
/// where at least one member has a point; members without a point exactly
/// there do not count). With `hold` (step-wise series such as a window),
/// 1000 evenly spaced positions span the members' points, and a member counts
/// at x from its first point to its last, with the value of its last point
/// at or before x. Non-finite points are skipped.
pub fn band(members: &[Vec<(f64, f64)>], hold: bool) -> Vec<BandPoint> {
    let members: Vec<Vec<(f64, f64)>> = members
        .iter()
        .map(|m| {
            let mut m: Vec<(f64, f64)> = m
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect();
            m.sort_by(|a, b| a.0.total_cmp(&b.0));
            m
        })
        .filter(|m| !m.is_empty())
        .collect();
    let xs: Vec<f64> = if hold {
        let lo = members.iter().map(|m| m[0].0).fold(f64::INFINITY, f64::min);
        let hi = members
            .iter()
            .map(|m| m[m.len() - 1].0)
            .fold(f64::NEG_INFINITY, f64::max);
        if lo.partial_cmp(&hi).is_none_or(|o| o == std::cmp::Ordering::Greater) {
            return Vec::new();
        }
        if hi == lo {
            vec![lo]
        } else {
            (0..=BAND_GRID)
                .map(|i| lo + (hi - lo) * i as f64 / BAND_GRID as f64)
                .collect()
        }
    } else {
        let mut xs: Vec<f64> = members.iter().flatten().map(|p| p.0).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        xs
    };
    let mut out = Vec::with_capacity(xs.len());
    for x in xs {
        let values = members.iter().filter_map(|m| {
            let i = m.partition_point(|p| p.0 <= x);
            if hold {
                (i > 0 && x <= m[m.len() - 1].0).then(|| m[i - 1].1)
            } else {
                (i > 0 && m[i - 1].0 == x).then(|| m[i - 1].1)
            }
        });
        let (mut n, mut sum, mut min, mut max) = (0usize, 0.0, f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            n += 1;
            sum += v;
            min = min.min(v);
            max = max.max(v);
        }
        if n > 0 {
            out.push(BandPoint {
                x,
                mean: sum / n as f64,
                min,
                max,
            });
        }
    }
    out
}

/// The traces of a scenario chart: `values` gives each flow's points
/// (absolute time); tested flows (see [`tested_groups`]) become lines (steps
/// with `hold`), every other group a [`Band`] (a group of one flow: its line).
/// When the tested groups hold more than [`MAX_TESTED_LINES`] flows, those
/// groups are banded too. Flows and groups without points are left out.
pub fn group_traces(
    s: &Scenario,
    r: &ScenarioResult,
    hold: bool,
    values: impl Fn(&FlowResult) -> Vec<(f64, f64)>,
) -> Vec<Trace> {
    let tested = tested_groups(s);
    let tested_flows = r.flows.iter().filter(|f| tested.get(f.group) == Some(&true)).count();
    let line = |series: Series| {
        if hold {
            Trace::Steps(series)
        } else {
            Trace::Line(series)
        }
    };
    let mut traces = Vec::new();
    for (g, group) in s.flows.iter().enumerate() {
        let members: Vec<(&FlowResult, Vec<(f64, f64)>)> = r
            .flows
            .iter()
            .filter(|f| f.group == g)
            .map(|f| (f, values(f)))
            .filter(|(_, p)| !p.is_empty())
            .collect();
        let is_tested = tested[g];
        if members.is_empty() {
            continue;
        }
        let one_by_one = (is_tested && tested_flows <= MAX_TESTED_LINES) || members.len() == 1;
        if one_by_one {
            for (f, points) in members {
                let name = if is_tested {
                    format!("flow {}: {}", f.flow, f.cc)
                } else {
                    format!("group {g}: flow {}, {}", f.flow, f.cc)
                };
                traces.push((is_tested, line(Series { name, points })));
            }
        } else {
            let pts: Vec<Vec<(f64, f64)>> = members.iter().map(|(_, p)| p.clone()).collect();
            traces.push((
                is_tested,
                Trace::Band(Band {
                    name: format!("group {g}: {} x {} (mean, min-max)", members.len(), group.cc),
                    points: band(&pts, hold),
                }),
            ));
        }
    }
    // Tested flows first: they take the first colours and lead the legend.
    traces.sort_by_key(|(tested, _)| !tested);
    traces.into_iter().map(|(_, t)| t).collect()
}

/// When `f`'s sending ends, seconds: its group's `stop` (or the scenario's
/// end); for byte-count transfers, the end of the simulation.
fn flow_end(s: &Scenario, r: &ScenarioResult, f: &FlowResult) -> f64 {
    match s.flows.get(f.group) {
        Some(g) if g.bytes.is_none() => g.stop.unwrap_or(s.duration).as_secs_f64(),
        _ => r.simulated_secs,
    }
}

/// The charts `tputctl sim` draws for a run, on the scenario's absolute time
/// axis (from 0 to its duration, or to the end of the simulation when a
/// byte-count flow ran longer). Throughput is each flow's delivered bytes per
/// interval from its start to its end; the window and `k`/`s` come from the
/// controller traces ([`FlowResult::cc_trace`]; the interval records for a
/// flow without one); see [`group_traces`] for what is a line and what a band.
pub fn scenario_charts(s: &Scenario, r: &ScenarioResult) -> ScenarioCharts {
    let interval = s.interval.as_secs_f64();
    let mtu = f64::from(s.mtu);
    let end = r
        .flows
        .iter()
        .map(|f| flow_end(s, r, f))
        .fold(s.duration.as_secs_f64(), f64::max);
    let x_range = Some((0.0, end));
    let time = "time (s)";
    let throughput = group_traces(s, r, false, |f| {
        let stop = flow_end(s, r, f) + 1e-9;
        let mut pts: Vec<(f64, f64)> = r
            .delivered
            .iter()
            .filter(|x| x.flow == f.flow)
            .map(|x| (x.time_ns as f64 / 1e9, x.interval_bytes as f64 * 8.0 / interval / 1e6))
            .filter(|&(t, _)| t > f.start_secs && t <= stop)
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        pts
    });
    let cwnd = group_traces(s, r, true, |f| {
        let stop = flow_end(s, r, f);
        if f.cc_trace.is_empty() {
            f.intervals
                .iter()
                .map(|i| (f.start_secs + i.end_secs, i.cwnd_bytes as f64 / mtu))
                .filter(|&(t, _)| t <= stop)
                .collect()
        } else {
            f.cc_trace
                .iter()
                .filter(|c| c.time_secs <= stop)
                .map(|c| (c.time_secs, c.cwnd_bytes as f64 / mtu))
                .collect()
        }
    });
    let state = |field: fn(&crate::host::CcSample) -> Option<f64>| {
        group_traces(s, r, true, move |f| {
            let stop = flow_end(s, r, f);
            f.cc_trace
                .iter()
                .filter(|c| c.time_secs <= stop)
                .filter_map(|c| Some((c.time_secs, field(c)?)))
                .collect()
        })
    };
    let k_traces = state(|c| c.k);
    let s_traces = state(|c| c.slot_rtts.map(f64::from));
    let queue = vec![Trace::Line(Series {
        name: "bottleneck queue".into(),
        points: r
            .queue
            .iter()
            .map(|x| (x.time_ns as f64 / 1e9, x.packets as f64))
            .filter(|&(t, _)| t <= end + 1e-9)
            .collect(),
    })];
    let figure = |title: &str, panels: Vec<Panel>| {
        Figure {
            title: title.into(),
            x_label: time.into(),
            x_range,
            panels,
        }
        .to_svg()
    };
    let panel = |y_label: &str, traces: Vec<Trace>| Panel {
        y_label: y_label.into(),
        traces,
    };
    ScenarioCharts {
        throughput: figure("Delivered throughput", vec![panel("Mbit/s", throughput)]),
        cwnd: figure(
            "Congestion window",
            vec![panel(&format!("packets of {} B", s.mtu), cwnd)],
        ),
        k: figure(
            "Guarantee controller: slope k and control slot s",
            vec![panel("k (packets per RTT)", k_traces), panel("s (RTTs)", s_traces)],
        ),
        queue: figure(
            "Bottleneck queue",
            vec![panel(
                &format!(
                    "packets (sampled every {})",
                    tput_cc::units::format_duration(s.interval)
                ),
                queue,
            )],
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tput_netsim::{FlowSample, LinkStats};

    use super::*;
    use crate::host::CcSample;
    use crate::scenario::{FlowGroup, LinkSpec, TopologySpec};

    fn series(name: &str, points: &[(f64, f64)]) -> Series {
        Series {
            name: name.into(),
            points: points.to_vec(),
        }
    }

    /// Data lines drawn (width 2).
    fn lines(svg: &str) -> usize {
        svg.matches("stroke-width=\"2\" points=").count()
    }

    /// Legend swatches of lines (width 3).
    fn swatches(svg: &str) -> usize {
        svg.matches("stroke-width=\"3\" points=").count()
    }

    fn hex(c: RGBColor) -> String {
        format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
    }

    fn well_formed(svg: &str) {
        assert!(svg.starts_with("<svg"), "{svg}");
        assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
        assert!(svg.contains("viewBox=\"0 0 1000 "), "{svg}");
        assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
        assert!(!svg.contains("could not be drawn"), "{svg}");
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
    fn draws_every_series_with_escaped_text() {
        let s = [
            series("guarantee <20Mbit/s>", &[(0.0, 1.0), (1.0, 19.5), (2.0, 21.0)]),
            series("reno & co", &[(0.0, 50.0), (1.0, 40.0), (2.0, 35.0)]),
            series("empty", &[]),
        ];
        let svg = line_chart("Fig. 4 throughput", "time (s)", "rate <Mbit/s>", &s);
        well_formed(&svg);
        assert!(svg.contains("guarantee &lt;20Mbit/s&gt;"), "{svg}");
        assert!(svg.contains("reno &amp; co"));
        assert!(svg.contains(">empty<") || svg.contains(">\nempty\n<"), "{svg}");
        assert!(svg.contains("Fig. 4 throughput"));
        assert!(svg.contains("rate &lt;Mbit/s&gt;"));
        assert!(svg.contains("time (s)"));
        assert_eq!(lines(&svg), 2);
        assert_eq!(swatches(&svg), 3);
        assert!(svg.contains(&hex(PALETTE[0])) && svg.contains(&hex(PALETTE[1])));
        assert!(!svg.contains("more (grey)"));
        assert_eq!(
            line_chart("Fig. 4 throughput", "time (s)", "rate <Mbit/s>", &s),
            svg,
            "deterministic"
        );
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
            vec![series("bell\u{7}", &[(0.0, 1.0), (1.0, 2.0)])],
        ];
        for s in &cases {
            let svg = line_chart("t", "x", "y", s);
            well_formed(&svg);
            let drawn = s
                .iter()
                .filter(|s| s.points.iter().filter(|(x, y)| x.is_finite() && y.is_finite()).count() > 1)
                .count();
            assert_eq!(lines(&svg), drawn, "{svg}");
            assert_eq!(swatches(&svg), s.len(), "{svg}");
        }
        assert!(
            line_chart("t", "x", "y", &cases[2]).contains("<circle"),
            "a lone point is marked"
        );
        assert!(line_chart("t", "x", "y", &cases[0]).contains("no data"));
        assert!(line_chart("t", "x", "y", &cases[8]).contains("no data"));
        // Steps and bands with degenerate input.
        for pts in [vec![], vec![(1.0, 2.0)], vec![(f64::NAN, 1.0), (1.0, 1.0), (2.0, 1.0)]] {
            let svg = Figure {
                title: "t".into(),
                x_label: "x".into(),
                x_range: Some((0.0, 3.0)),
                panels: vec![
                    Panel {
                        y_label: "a".into(),
                        traces: vec![Trace::Steps(series("s", &pts))],
                    },
                    Panel {
                        y_label: "b".into(),
                        traces: vec![Trace::Band(Band {
                            name: "b".into(),
                            points: pts
                                .iter()
                                .map(|&(x, y)| BandPoint {
                                    x,
                                    mean: y,
                                    min: y,
                                    max: f64::NAN,
                                })
                                .collect(),
                        })],
                    },
                ],
            }
            .to_svg();
            well_formed(&svg);
        }
    }

    #[test]
    fn the_legend_never_repeats_a_colour() {
        let s: Vec<Series> = (0..15)
            .map(|i| series(&format!("flow {i}"), &[(0.0, i as f64), (1.0, i as f64 + 1.0)]))
            .collect();
        let svg = line_chart("many", "x", "y", &s);
        well_formed(&svg);
        assert_eq!(lines(&svg), 15);
        assert_eq!(swatches(&svg), PALETTE.len() + 1);
        assert!(svg.contains("+5 more (grey)"), "{svg}");
        assert!(svg.contains("flow 9") && !svg.contains("flow 10<") && !svg.contains(">flow 10"));
        for c in PALETTE {
            // Once on its line, once in the legend: no colour serves two names.
            assert_eq!(svg.matches(&format!("stroke=\"{}\"", hex(c))).count(), 2, "{}", hex(c));
        }
        let distinct: std::collections::BTreeSet<String> = PALETTE.iter().map(|&c| hex(c)).collect();
        assert_eq!(distinct.len(), PALETTE.len());
        assert!(!distinct.contains(&hex(OVERFLOW)));
        assert_eq!(svg.matches(&format!("stroke=\"{}\"", hex(OVERFLOW))).count(), 5 + 1);
    }

    #[test]
    fn one_name_one_colour_across_panels() {
        let f = Figure {
            title: "t".into(),
            x_label: "x".into(),
            x_range: None,
            panels: vec![
                Panel {
                    y_label: "a".into(),
                    traces: vec![Trace::Line(series("g", &[(0.0, 1.0), (1.0, 2.0)]))],
                },
                Panel {
                    y_label: "b".into(),
                    traces: vec![
                        Trace::Line(series("h", &[(0.0, 1.0), (1.0, 2.0)])),
                        Trace::Line(series("g", &[(0.0, 3.0), (1.0, 2.0)])),
                    ],
                },
            ],
        };
        let svg = f.to_svg();
        well_formed(&svg);
        assert_eq!(svg.matches(&format!("stroke=\"{}\"", hex(PALETTE[0]))).count(), 3);
        assert_eq!(svg.matches(&format!("stroke=\"{}\"", hex(PALETTE[1]))).count(), 2);
    }

    #[test]
    fn long_names_wrap_over_three_lines_at_most() {
        assert_eq!(wrap("short"), ["short"]);
        assert_eq!(
            wrap("flow 1: guarantee:target=20Mbit/s,eval=32rtt,slot=16rtt"),
            ["flow 1: guarantee:", "target=20Mbit/s,", "eval=32rtt,slot=16rtt"]
        );
        let w = wrap("group 2: 30 x guarantee:target=20Mbit/s,eval=32rtt,slot=16rtt (mean, min-max)");
        assert_eq!(w.len(), LEGEND_LINES);
        assert_eq!(w[0], "group 2: 30 x guarantee:");
        assert!(w.iter().all(|l| l.chars().count() <= LEGEND_CHARS), "{w:?}");
        assert!(w[2].ends_with('…'));
        assert_eq!(wrap("x".repeat(30).as_str())[0].len(), LEGEND_CHARS);
    }

    #[test]
    fn thinning_keeps_the_extremes_of_each_column() {
        let pts: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64 / 100.0, (i % 7) as f64)).collect();
        let t = thin(&pts, 0.0, 100.0, 100);
        assert!(t.len() <= 400, "{}", t.len());
        assert_eq!(t.first(), pts.first());
        assert_eq!(t.last(), pts.last());
        assert!(t.windows(2).all(|w| w[0].0 <= w[1].0));
        let (lo, hi) = t
            .iter()
            .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));
        assert_eq!((lo, hi), (0.0, 6.0));
        let short = &pts[..10];
        assert_eq!(thin(short, 0.0, 100.0, 100), short);
    }

    #[test]
    fn ticks_are_nice() {
        assert_eq!(nice_ticks(0.0, 97.0, 5), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(nice_ticks(0.0, 15.0, 5), vec![0.0, 5.0, 10.0, 15.0]);
        assert_eq!(nice_ticks(-3.0, 7.0, 5), vec![-4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0]);
        assert!(nice_ticks(1.0, 1.0, 5).is_empty());
        assert!(nice_ticks(0.0, f64::INFINITY, 5).is_empty());
        assert!(nice_ticks(f64::NAN, 1.0, 5).is_empty());
        assert_eq!(nice_range(0.0, 97.0), (0.0, 100.0));
        assert_eq!(bounds([40.0, 97.0].into_iter(), true), (0.0, 97.0));
        assert_eq!(bounds([5.0, 5.0].into_iter(), false), (4.5, 5.5));
        assert_eq!(bounds(std::iter::empty(), true), (0.0, 1.0));
        assert_eq!(tick_label(&0.6000000000000001), "0.6");
        assert_eq!(tick_label(&-0.0), "0");
        assert_eq!(tick_label(&20.0), "20");
        assert_eq!(tick_label(&1.25e8), "1.25e8");
        assert_eq!(tick_label(&2e-6), "2e-6");
    }

    #[test]
    fn bands_are_the_mean_min_and_max_of_the_members() {
        let a = vec![(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)];
        let b = vec![(1.0, 2.0), (2.0, 4.0), (f64::NAN, 9.0)];
        let c = vec![(2.0, 60.0)];
        let got = band(&[a.clone(), b.clone(), c, Vec::new()], false);
        let p = |x, mean, min, max| BandPoint { x, mean, min, max };
        assert_eq!(
            got,
            [
                p(1.0, 6.0, 2.0, 10.0),
                p(2.0, 28.0, 4.0, 60.0),
                p(3.0, 30.0, 30.0, 30.0)
            ]
        );
        assert!(band(&[], false).is_empty());
        // Held values: a member counts from its first point to its last.
        let steps = band(&[vec![(0.0, 4.0), (10.0, 8.0)], vec![(5.0, 2.0), (10.0, 2.0)]], true);
        assert_eq!(steps.len(), BAND_GRID + 1);
        assert_eq!(steps[0], p(0.0, 4.0, 4.0, 4.0));
        let mid = steps.iter().find(|q| q.x == 6.0).unwrap();
        assert_eq!(*mid, p(6.0, 3.0, 2.0, 4.0));
        assert_eq!(*steps.last().unwrap(), p(10.0, 5.0, 2.0, 8.0));
        assert_eq!(band(&[vec![(3.0, 1.0)]], true), [p(3.0, 1.0, 1.0, 1.0)]);
    }

    fn flow(flow: u32, group: usize, cc: &str, start_secs: f64, trace: &[(f64, u64)]) -> FlowResult {
        FlowResult {
            flow,
            group,
            cc: cc.into(),
            bytes: 0,
            start_secs,
            active_secs: 0.0,
            intervals: Vec::new(),
            cc_trace: trace
                .iter()
                .map(|&(t, cwnd)| CcSample {
                    time_secs: t,
                    cwnd_bytes: cwnd,
                    ssthresh_bytes: None,
                    k: cc.starts_with("guarantee").then_some(cwnd as f64 / 1000.0),
                    slot_rtts: cc.starts_with("guarantee").then_some(16),
                    ..CcSample::default()
                })
                .collect(),
            slots: Vec::new(),
            success_ratio: None,
            file_times: Vec::new(),
            files: None,
            errors: Vec::new(),
            tcp: None,
        }
    }

    /// A scenario of 10 s: one guarantee flow with a target, one lone NewReno
    /// flow, three NewReno flows from 2 s; and a result made by hand.
    fn hand_made() -> (Scenario, ScenarioResult) {
        let link = LinkSpec::new("10Mbit/s".parse().unwrap(), Duration::from_millis(5));
        let mut s = Scenario::new(
            Duration::from_secs(10),
            TopologySpec::dumbbell(link.clone(), link),
            vec![
                FlowGroup::new("guarantee:target=2Mbit/s".parse().unwrap()).with_target("2Mbit/s".parse().unwrap()),
                FlowGroup::new("newreno".parse().unwrap()),
                FlowGroup::new("newreno".parse().unwrap())
                    .times(3)
                    .starting(Duration::from_secs(2)),
            ],
        );
        s.interval = Duration::from_secs(1);
        let flows = vec![
            flow(1, 0, "guarantee:target=2Mbit/s", 0.0, &[(0.1, 12_000), (5.0, 24_000)]),
            flow(2, 1, "newreno", 0.0, &[(0.1, 12_000)]),
            flow(3, 2, "newreno", 2.0, &[(2.1, 12_000), (4.0, 36_000)]),
            flow(4, 2, "newreno", 2.0, &[(2.1, 24_000)]),
            flow(5, 2, "newreno", 2.0, &[]),
        ];
        // Delivered: flow f moves f * 125 kB per second (f Mbit/s), sampled
        // every second over the whole run (zeros before a start count not).
        let mut delivered = Vec::new();
        for t in 1..=10u64 {
            for f in 1..=5u32 {
                let bytes = if f >= 3 && t <= 2 { 0 } else { u64::from(f) * 125_000 };
                delivered.push(FlowSample {
                    time_ns: t * 1_000_000_000,
                    flow: f,
                    delivered_bytes: 0,
                    interval_bytes: bytes,
                });
            }
        }
        let r = ScenarioResult {
            name: None,
            flows,
            bottleneck: LinkStats::default(),
            links: Vec::new(),
            queue: Vec::new(),
            delivered,
            trace_hash: 0,
            link_packets: 0,
            simulated_secs: 15.0,
            aggregates: Vec::new(),
            window: Default::default(),
        };
        (s, r)
    }

    #[test]
    fn tested_flows_are_lines_and_other_groups_bands() {
        let (s, r) = hand_made();
        assert_eq!(tested_groups(&s), [true, false, false]);
        let mbps = |f: &FlowResult| -> Vec<(f64, f64)> {
            r.delivered
                .iter()
                .filter(|x| x.flow == f.flow && x.time_ns as f64 / 1e9 > f.start_secs)
                .map(|x| (x.time_ns as f64 / 1e9, x.interval_bytes as f64 * 8.0 / 1e6))
                .collect()
        };
        let t = group_traces(&s, &r, false, mbps);
        let names: Vec<&str> = t.iter().map(Trace::name).collect();
        assert_eq!(
            names,
            [
                "flow 1: guarantee:target=2Mbit/s",
                "group 1: flow 2, newreno",
                "group 2: 3 x newreno (mean, min-max)"
            ]
        );
        assert!(matches!(&t[0], Trace::Line(l) if l.points.len() == 10 && l.points[0] == (1.0, 1.0)));
        let Trace::Band(b) = &t[2] else { panic!("{t:?}") };
        // From 3 s on (the first interval after the start): 3, 4, 5 Mbit/s.
        assert_eq!(b.points.len(), 8);
        assert_eq!(
            b.points[0],
            BandPoint {
                x: 3.0,
                mean: 4.0,
                min: 3.0,
                max: 5.0
            }
        );

        // Without a target the first group is the tested one; a flow without points is left out.
        let mut s2 = s.clone();
        s2.flows[0].target = None;
        assert_eq!(tested_groups(&s2), [true, false, false]);
        let cw = group_traces(&s2, &r, true, |f| {
            f.cc_trace.iter().map(|c| (c.time_secs, c.cwnd_bytes as f64)).collect()
        });
        assert!(matches!(&cw[0], Trace::Steps(_)));
        let Trace::Band(b) = &cw[2] else { panic!("{cw:?}") };
        let at = |x: f64| b.points.iter().find(|p| (p.x - x).abs() < 1e-9).copied().unwrap();
        // Flow 3 holds 12 kB until 4 s; flow 4 has one point: it counts only at 2.1 s.
        assert_eq!(
            at(2.1),
            BandPoint {
                x: 2.1,
                mean: 18_000.0,
                min: 12_000.0,
                max: 24_000.0
            }
        );
        assert_eq!(at(4.0).mean, 36_000.0);

        // Too many tested flows: the tested group is banded too.
        let mut s3 = s.clone();
        s3.flows[2].target = s3.flows[0].target;
        s3.flows[2].count = MAX_TESTED_LINES as u32;
        let mut r3 = r.clone();
        for i in 0..(MAX_TESTED_LINES as u32 - 3) {
            r3.flows.push(flow(6 + i, 2, "newreno", 2.0, &[(3.0, 1)]));
        }
        let t3 = group_traces(&s3, &r3, false, mbps);
        assert!(t3.iter().any(|t| matches!(t, Trace::Band(_))));
    }

    #[test]
    fn scenario_charts_draw_on_absolute_time() {
        let (s, r) = hand_made();
        let c = scenario_charts(&s, &r);
        for svg in [&c.throughput, &c.cwnd, &c.k, &c.queue] {
            well_formed(svg);
        }
        assert!(c.throughput.contains("group 2: 3 x newreno"));
        assert!(c.cwnd.contains("packets of 1200 B"));
        assert!(c.k.contains("k (packets per RTT)") && c.k.contains("s (RTTs)"));
        assert!(c.k.contains("flow 1: guarantee:") && c.k.contains("target=2Mbit/s"));
        assert!(!c.k.contains("newreno"), "only guarantee flows have k");
        assert!(c.queue.contains("no data"));
        assert_eq!(scenario_charts(&s, &r), c, "deterministic");
    }
}
