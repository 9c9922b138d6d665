//! A small seeded PRNG and the samplers the traffic models need.
//!
//! The generator is xoshiro256** (Blackman & Vigna, "Scrambled linear
//! pseudorandom number generators", 2018) seeded through SplitMix64, written
//! here rather than taken from a crate so that a run's random stream never
//! changes with a dependency upgrade.
//!
//! Transcendental functions (`log`, `pow`) come from the `libm` crate, not `std`:
//! `std` calls the platform's C library, whose results may differ in the last
//! bits between machines; `libm` gives bit-identical results on every target,
//! so one scenario and seed give the same bytes on x86_64 and aarch64.

use crate::Error;

/// SplitMix64 finaliser (Steele, Lea & Flood 2014).
const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64, used only to expand a 64-bit seed into xoshiro's state.
#[derive(Clone, Debug)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(GOLDEN);
        mix64(self.0)
    }
}

/// Deterministic pseudo-random generator (xoshiro256**).
///
/// Not cryptographic. Every random decision of a run comes from generators
/// built with [`Rng::new`] or [`Rng::derive`] from the run's seed, so a run
/// is a pure function of its inputs and seed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator seeded with `seed` (expanded with SplitMix64).
    pub fn new(seed: u64) -> Self {
        let mut sm = SplitMix64(seed);
        let s = [sm.next(), sm.next(), sm.next(), sm.next()];
        // xoshiro's all-zero state is a fixed point; SplitMix64 cannot emit
        // four zeros in a row, but keep the guard explicit.
        debug_assert!(s.iter().any(|&w| w != 0));
        Rng { s }
    }

    /// An independent stream number `stream_id` of the run seeded `seed`.
    ///
    /// Each simulator component (a link's loss process, a host's start
    /// jitter, a traffic generator) takes its own stream, so adding a
    /// component does not shift the random numbers another one sees.
    pub fn derive(seed: u64, stream_id: u64) -> Self {
        Rng::new(mix64(seed) ^ mix64(stream_id ^ 0xD1B5_4A32_D192_ED03))
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform in `(0, 1]`: safe to take the logarithm of.
    #[inline]
    pub fn next_f64_open0(&mut self) -> f64 {
        ((self.next_u64() >> 11) + 1) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in `[0, n)` (Lemire's multiply-shift; `n == 0` gives 0).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// `true` with probability `p` (clamped to `[0, 1]`).
    #[inline]
    pub fn bernoulli(&mut self, p: f64) -> bool {
        self.next_f64() < p
    }
}

/// Exponentially distributed values with a given mean (e.g. file
/// inter-arrival gaps of background traffic).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Exponential {
    mean: f64,
}

impl Exponential {
    /// Mean `mean` (> 0, finite).
    pub fn new(mean: f64) -> Result<Self, Error> {
        if !(mean.is_finite() && mean > 0.0) {
            return Err(Error::BadMean(mean));
        }
        Ok(Exponential { mean })
    }

    /// The configured mean.
    pub fn mean(&self) -> f64 {
        self.mean
    }

    /// One sample (inverse transform).
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        -self.mean * libm::log(rng.next_f64_open0())
    }
}

/// Pareto (type I) distributed values given their mean and shape, e.g. file
/// sizes of web-like background traffic. Scale `x_m = mean * (shape - 1) / shape`.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Pareto {
    shape: f64,
    scale: f64,
}

impl Pareto {
    /// Mean `mean` (> 0) and shape `shape` (> 1, else the mean is infinite).
    pub fn new(mean: f64, shape: f64) -> Result<Self, Error> {
        if !(mean.is_finite() && mean > 0.0) {
            return Err(Error::BadMean(mean));
        }
        if !(shape.is_finite() && shape > 1.0) {
            return Err(Error::BadParetoShape(shape));
        }
        Ok(Pareto {
            shape,
            scale: mean * (shape - 1.0) / shape,
        })
    }

    /// The scale (minimum value) `x_m`.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// The shape `alpha`.
    pub fn shape(&self) -> f64 {
        self.shape
    }

    /// One sample: `x_m / U^(1/alpha)` with `U` uniform in `(0, 1]`.
    pub fn sample(&self, rng: &mut Rng) -> f64 {
        self.scale * libm::pow(rng.next_f64_open0(), -1.0 / self.shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix_reference_value() {
        // First output of SplitMix64 seeded with 0 (reference implementation).
        assert_eq!(SplitMix64(0).next(), 0xE220_A839_7B1D_CDAF);
    }

    #[test]
    fn deterministic_and_streams_differ() {
        let a: Vec<u64> = (0..8).scan(Rng::new(42), |r, _| Some(r.next_u64())).collect();
        let b: Vec<u64> = (0..8).scan(Rng::new(42), |r, _| Some(r.next_u64())).collect();
        assert_eq!(a, b);
        let mut s1 = Rng::derive(42, 1);
        let mut s1b = Rng::derive(42, 1);
        let mut s2 = Rng::derive(42, 2);
        let mut other_seed = Rng::derive(43, 1);
        let x: Vec<u64> = (0..4).map(|_| s1.next_u64()).collect();
        let y: Vec<u64> = (0..4).map(|_| s1b.next_u64()).collect();
        let z: Vec<u64> = (0..4).map(|_| s2.next_u64()).collect();
        let w: Vec<u64> = (0..4).map(|_| other_seed.next_u64()).collect();
        assert_eq!(x, y);
        assert_ne!(x, z);
        assert_ne!(x, w);
        assert_ne!(x, a[..4]);
    }

    #[test]
    fn uniform_moments_and_range() {
        let mut r = Rng::new(7);
        let n = 200_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let u = r.next_f64();
            assert!((0.0..1.0).contains(&u));
            sum += u;
        }
        // sd of the mean of n U(0,1) = sqrt(1/12/n) ~ 6.5e-4; allow 5 sigma.
        assert!((sum / n as f64 - 0.5).abs() < 5.0 * (1.0 / 12.0 / n as f64).sqrt());
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            counts[r.below(10) as usize] += 1;
        }
        // binomial(1e5, 0.1): sd = sqrt(9000) ~ 95; 5 sigma.
        assert!(counts.iter().all(|&c| (c as i64 - 10_000).abs() < 475));
    }

    #[test]
    fn exponential_mean_within_bounds() {
        let e = Exponential::new(2.5).unwrap();
        let mut r = Rng::derive(1, 9);
        let n = 200_000;
        let mean = (0..n).map(|_| e.sample(&mut r)).sum::<f64>() / n as f64;
        // sd of an exponential = its mean; standard error = mean / sqrt(n).
        let se = 2.5 / (n as f64).sqrt();
        assert!((mean - 2.5).abs() < 5.0 * se, "mean {mean}");
    }

    #[test]
    fn pareto_mean_within_bounds() {
        let mean = 1000.0;
        let shape = 3.0;
        let p = Pareto::new(mean, shape).unwrap();
        assert!((p.scale() - 2000.0 / 3.0).abs() < 1e-9);
        let mut r = Rng::derive(2, 9);
        let n = 200_000;
        let mut sum = 0.0;
        for _ in 0..n {
            let x = p.sample(&mut r);
            assert!(x >= p.scale());
            sum += x;
        }
        let m = sum / n as f64;
        // Var = x_m^2 a / ((a-1)^2 (a-2)) for a > 2.
        let var = p.scale().powi(2) * shape / ((shape - 1.0).powi(2) * (shape - 2.0));
        let se = (var / n as f64).sqrt();
        assert!((m - mean).abs() < 5.0 * se, "mean {m}, se {se}");
    }

    #[test]
    fn sampler_validation() {
        assert!(matches!(Pareto::new(1.0, 1.0), Err(Error::BadParetoShape(_))));
        assert!(matches!(Pareto::new(-1.0, 2.0), Err(Error::BadMean(_))));
        assert!(matches!(Exponential::new(0.0), Err(Error::BadMean(_))));
        assert!(matches!(Exponential::new(f64::NAN), Err(Error::BadMean(_))));
    }
}
