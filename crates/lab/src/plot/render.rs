//! Drawing a [`Figure`] or a [`line_chart`] into SVG: ranges, ticks,
//! thinning, the legend and its colours.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Figure, PALETTE, Panel, Series, Trace};

/// The colour of traces beyond [`PALETTE`].
pub(super) const OVERFLOW: RGBColor = RGBColor(0xb0, 0xb0, 0xb0);

const WIDTH: u32 = 1000;
/// Height of a one-panel figure, and of each panel of a taller one.
const SINGLE_HEIGHT: u32 = 500;
const PANEL_HEIGHT: u32 = 300;
const TITLE_HEIGHT: u32 = 40;
const LEGEND_WIDTH: u32 = 260;
/// Characters per legend line.
pub(super) const LEGEND_CHARS: usize = 26;
/// Most lines of one legend entry.
pub(super) const LEGEND_LINES: usize = 3;
/// Points of a line beyond which it is thinned to the extremes per pixel column.
const THIN_BUCKETS: usize = 1500;
const FONT: &str = "sans-serif";

/// An SVG document: a one-panel line chart of `series` with axes, axis
/// labels, a title and a legend (see the [module docs](super) for colours).
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
pub(super) fn nice_range(lo: f64, hi: f64) -> (f64, f64) {
    axis_range(&nice_ticks(lo, hi, 8), lo, hi)
}

/// `points` (in x order) thinned to the first, lowest, highest and last point
/// of each of `buckets` columns of `x0..x1`, so the drawn shape is unchanged
/// at pixel scale; short inputs are returned as they are.
pub(super) fn thin(points: &[(f64, f64)], x0: f64, x1: f64, buckets: usize) -> Vec<(f64, f64)> {
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
pub(super) fn tick_label(v: &f64) -> String {
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
pub(super) fn wrap(name: &str) -> Vec<String> {
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
pub(super) fn bounds(values: impl Iterator<Item = f64>, from_zero: bool) -> (f64, f64) {
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
pub(super) fn nice_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
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
