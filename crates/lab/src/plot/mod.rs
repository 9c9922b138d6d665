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

use plotters::prelude::*;

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

mod render;
mod scenario;
#[cfg(test)]
mod tests;

pub use render::line_chart;
pub use scenario::{MAX_TESTED_LINES, ScenarioCharts, band, group_traces, scenario_charts, tested_groups};
