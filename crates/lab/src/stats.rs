//! Summary statistics shared by reports, reproductions and benches.
//!
//! One rule for empty input everywhere: a statistic of nothing is `None`.
//! A caller that prints a table cell for it chooses what the cell shows
//! (`f64::NAN`, a dash, 0) explicitly, at the call site.

/// The arithmetic mean of `values`, summed in order; `None` without values.
pub fn mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (mut n, mut sum) = (0usize, 0.0);
    for v in values {
        n += 1;
        sum += v;
    }
    (n > 0).then(|| sum / n as f64)
}

/// [`mean`] for a table cell or a CSV column, where "no values" shows as
/// `NaN`: the mean of `values` (owned or borrowed), `f64::NAN` without
/// values.
pub fn mean_or_nan<I>(values: I) -> f64
where
    I: IntoIterator,
    I::Item: std::borrow::Borrow<f64>,
{
    use std::borrow::Borrow as _;
    mean(values.into_iter().map(|v| *v.borrow())).unwrap_or(f64::NAN)
}

/// The mean, the minimum and the maximum of `values`, in that order;
/// `None` without values. A NaN value makes the mean NaN and is passed
/// over by the minimum and the maximum (as [`f64::min`] and [`f64::max`]
/// do).
pub fn mean_min_max(values: &[f64]) -> Option<(f64, f64, f64)> {
    let m = mean(values.iter().copied())?;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((m, min, max))
}

/// Jain's fairness index `(Σx)² / (n · Σx²)` (R. Jain, D. Chiu, W. Hawe,
/// "A quantitative measure of fairness and discrimination for resource
/// allocation in shared computer systems", DEC TR-301, 1984): 1 when all
/// values are equal, `1/n` when one value takes everything. `None` without
/// values or when every value is 0 (the index is undefined there).
pub fn jain(values: &[f64]) -> Option<f64> {
    let (sum, squares) = values.iter().fold((0.0, 0.0), |(s, q), &v| (s + v, q + v * v));
    (!values.is_empty() && squares > 0.0).then(|| sum * sum / (values.len() as f64 * squares))
}

/// The `q` quantile (0..=1) of `values` by the nearest-rank method: the
/// smallest value with at least `ceil(q · n)` values at or below it (rank
/// clamped to 1..=n, so `q = 0` gives the minimum and `q = 1` the maximum).
/// The relay's lateness histogram ranks its buckets by the same rule.
/// `None` without values or for a `q` outside 0..=1 or NaN; NaN values sort
/// last.
pub fn percentile(values: &[f64], q: f64) -> Option<f64> {
    if values.is_empty() || !(0.0..=1.0).contains(&q) {
        return None;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let rank = ((q * n as f64).ceil() as usize).clamp(1, n);
    Some(sorted[rank - 1])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_input_has_no_statistic() {
        assert_eq!(mean(std::iter::empty()), None);
        assert_eq!(jain(&[]), None);
        assert_eq!(jain(&[0.0, 0.0]), None);
        assert_eq!(percentile(&[], 0.5), None);
        assert_eq!(mean_min_max(&[]), None);
        assert!(mean_or_nan(Vec::<f64>::new()).is_nan());
    }

    #[test]
    fn mean_min_max_and_the_table_cell_mean() {
        assert_eq!(mean_min_max(&[4.0, 1.0, 7.0]), Some((4.0, 1.0, 7.0)));
        assert_eq!(mean_min_max(&[2.5]), Some((2.5, 2.5, 2.5)));
        let (m, lo, hi) = mean_min_max(&[1.0, f64::NAN, 3.0]).unwrap();
        assert!(m.is_nan());
        assert_eq!((lo, hi), (1.0, 3.0));
        let v = [1.0, 2.0, 6.0];
        assert_eq!(mean_or_nan(v), 3.0);
        assert_eq!(mean_or_nan(v.iter().map(|x| x * 2.0)), 6.0);
    }

    #[test]
    fn mean_and_jain_of_known_values() {
        assert_eq!(mean([1.0, 2.0, 6.0]), Some(3.0));
        assert_eq!(jain(&[5.0, 5.0, 5.0, 5.0]), Some(1.0));
        // One of four takes everything: 1/n.
        assert_eq!(jain(&[8.0, 0.0, 0.0, 0.0]), Some(0.25));
        // (1+3)² / (2 · (1+9)) = 0.8.
        assert!((jain(&[1.0, 3.0]).unwrap() - 0.8).abs() < 1e-12);
    }

    #[test]
    fn percentiles_by_nearest_rank() {
        let v = [15.0, 20.0, 35.0, 40.0, 50.0];
        // The classic nearest-rank example: p30 = 20, p40 = 20, p50 = 35, p100 = 50.
        assert_eq!(percentile(&v, 0.3), Some(20.0));
        assert_eq!(percentile(&v, 0.4), Some(20.0));
        assert_eq!(percentile(&v, 0.5), Some(35.0));
        assert_eq!(percentile(&v, 1.0), Some(50.0));
        assert_eq!(percentile(&v, 0.0), Some(15.0));
        assert_eq!(percentile(&[3.0, 1.0, 2.0], 0.5), Some(2.0), "unsorted input");
        assert_eq!(percentile(&v, 1.5), None);
        assert_eq!(percentile(&v, f64::NAN), None);
    }
}
