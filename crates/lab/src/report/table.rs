//! Aligned text tables that also write themselves as CSV: one helper for
//! every table the lab and the benches print.

/// How a [`Table`] column lines up its cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    /// Flush left (names, labels).
    Left,
    /// Flush right (numbers).
    Right,
}

/// A table of text cells, printed with its columns lined up ([`text`](Self::text))
/// or written as CSV ([`csv`](Self::csv)): the one table helper of the
/// reports, the reproductions and the benches.
///
/// Cells are formatted by the caller (`format!("{x:.3}")`), so the text and
/// the CSV show the same digits. A column is as wide as its widest cell,
/// header included, or its minimum width if that is wider; columns are
/// separated by one space, and a line has no trailing spaces.
///
/// ```
/// use tput_lab::report::{Align, Table};
///
/// let mut t = Table::new().left("case", 0).right("util", 6);
/// t.row(["1 x bbr", "0.951"]);
/// t.row(["10 x cubic", "0.990"]);
/// assert_eq!(t.text(), "case         util\n1 x bbr     0.951\n10 x cubic  0.990\n");
/// assert_eq!(t.csv(), "case,util\n1 x bbr,0.951\n10 x cubic,0.990\n");
/// ```
#[derive(Debug, Clone, Default)]
pub struct Table {
    columns: Vec<(String, Align, usize)>,
    units: Option<Vec<String>>,
    /// Rows of cells and notes (`Err`: a line of its own, text only).
    rows: Vec<Result<Vec<String>, String>>,
}

impl Table {
    /// A table without columns yet.
    pub fn new() -> Table {
        Table::default()
    }

    /// Add a left-aligned column headed `header`, at least `width` wide.
    pub fn left(self, header: &str, width: usize) -> Table {
        self.column(header, Align::Left, width)
    }

    /// Add a right-aligned column headed `header`, at least `width` wide.
    pub fn right(self, header: &str, width: usize) -> Table {
        self.column(header, Align::Right, width)
    }

    /// Add a column headed `header`, aligned by `align`, at least `width` wide.
    pub fn column(mut self, header: &str, align: Align, width: usize) -> Table {
        self.columns.push((header.to_string(), align, width));
        self
    }

    /// A second header line of units, one per column ("" for none); the
    /// CSV header joins each to its column's name (`goodput (Mbit/s)`).
    pub fn units<S: AsRef<str>>(mut self, units: impl IntoIterator<Item = S>) -> Table {
        self.units = Some(units.into_iter().map(|u| u.as_ref().to_string()).collect());
        self
    }

    /// Append one row of cells, one per column (missing cells are empty,
    /// extra cells are printed after the last column).
    pub fn row<S: ToString>(&mut self, cells: impl IntoIterator<Item = S>) {
        self.rows.push(Ok(cells.into_iter().map(|c| c.to_string()).collect()));
    }

    /// Append a line of its own below the last row (an error, a remark):
    /// printed as it is by [`text`](Self::text), left out of the CSV and of
    /// the columns' widths.
    pub fn note(&mut self, line: impl Into<String>) {
        self.rows.push(Err(line.into()));
    }

    /// Whether the table has no rows (nor notes).
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The header line(s) and one line per row, columns lined up.
    pub fn text(&self) -> String {
        let headers: Vec<String> = self.columns.iter().map(|c| c.0.clone()).collect();
        let lines: Vec<Result<&Vec<String>, &String>> = std::iter::once(&headers)
            .chain(self.units.as_ref())
            .map(Ok)
            .chain(self.rows.iter().map(Result::as_ref))
            .collect();
        let cells = || lines.iter().filter_map(|l| l.ok());
        let n = cells().map(|l| l.len()).max().unwrap_or(0);
        let widths: Vec<usize> = (0..n)
            .map(|i| {
                let widest = cells()
                    .filter_map(|l| l.get(i))
                    .map(|c| c.chars().count())
                    .max()
                    .unwrap_or(0);
                widest.max(self.columns.get(i).map_or(0, |c| c.2))
            })
            .collect();
        let mut out = String::new();
        for l in lines {
            let l = match l {
                Ok(cells) => cells,
                Err(note) => {
                    out += note;
                    out.push('\n');
                    continue;
                }
            };
            let mut line = String::new();
            for (i, w) in widths.iter().enumerate() {
                let cell = l.get(i).map_or("", String::as_str);
                if i > 0 {
                    line.push(' ');
                }
                match self.columns.get(i).map_or(Align::Left, |c| c.1) {
                    Align::Left => line += &format!("{cell:<w$}"),
                    Align::Right => line += &format!("{cell:>w$}"),
                }
            }
            out += line.trim_end();
            out.push('\n');
        }
        out
    }

    /// The table as CSV: one header line (a column's unit, if any, in
    /// parentheses after its name), then the rows; cells are quoted only
    /// where they need it (a comma, a quote, a line break).
    pub fn csv(&self) -> String {
        let mut w = csv::WriterBuilder::new().flexible(true).from_writer(Vec::new());
        let header = self.columns.iter().enumerate().map(|(i, c)| {
            match self.units.as_ref().and_then(|u| u.get(i)).filter(|u| !u.is_empty()) {
                Some(u) => format!("{} ({u})", c.0),
                None => c.0.clone(),
            }
        });
        // Writing into a Vec cannot fail.
        let _ = w.write_record(header);
        for r in self.rows.iter().flatten() {
            let _ = w.write_record(r);
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}
