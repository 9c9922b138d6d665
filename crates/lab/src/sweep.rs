//! Sweeps: many independent points (a scenario and a seed each), run on all
//! cores, reported in a fixed order so the output does not depend on which
//! thread finished first. Each point's result depends only on the point.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads to use by default: the machine's available parallelism.
pub fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Run `measure` on every point with `jobs` threads; results come back in the
/// order of `points`. After each point, `progress` is called (from the worker
/// thread, one call at a time) with the number of points done so far, the
/// point and its result.
///
/// ```
/// use tput_lab::sweep::run_parallel;
///
/// let squares = run_parallel(&[1u64, 2, 3, 4], 2, |&x| x * x, |_, _, _| {});
/// assert_eq!(squares, [1, 4, 9, 16]);
/// ```
pub fn run_parallel<P, R, F, G>(points: &[P], jobs: usize, measure: F, progress: G) -> Vec<R>
where
    P: Sync,
    R: Send,
    F: Fn(&P) -> R + Sync,
    G: FnMut(usize, &P, &R) + Send,
{
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<R>>> = Mutex::new((0..points.len()).map(|_| None).collect());
    let log = Mutex::new((0usize, progress));
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1).min(points.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(p) = points.get(i) else { break };
                    let r = measure(p);
                    {
                        let mut l = log.lock().unwrap_or_else(|e| e.into_inner());
                        l.0 += 1;
                        let done = l.0;
                        (l.1)(done, p, &r);
                    }
                    results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
                }
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every point is measured once"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_keep_the_order_of_the_points_whatever_the_threads() {
        let points: Vec<u64> = (0..50).collect();
        // Later points finish first: a naive collector would reverse them.
        let slow_first = |&x: &u64| {
            std::thread::sleep(std::time::Duration::from_micros(50 * (50 - x)));
            x * 10
        };
        let mut seen = Vec::new();
        let r = run_parallel(&points, 4, slow_first, |done, p, r| seen.push((done, *p, *r)));
        assert_eq!(r, points.iter().map(|x| x * 10).collect::<Vec<_>>());
        // Progress saw every point once, counting 1..=50.
        seen.sort();
        assert_eq!(
            seen.iter().map(|s| s.0).collect::<Vec<_>>(),
            (1..=50).collect::<Vec<_>>()
        );
        let mut ps: Vec<u64> = seen.iter().map(|s| s.1).collect();
        ps.sort();
        assert_eq!(ps, points);
        assert!(seen.iter().all(|&(_, p, r)| r == p * 10));
        // One job, no points.
        assert_eq!(run_parallel(&points[..3], 1, |&x| x + 1, |_, _, _| {}), [1, 2, 3]);
        assert!(run_parallel(&[] as &[u64], 3, |&x| x, |_, _, _| {}).is_empty());
    }
}
