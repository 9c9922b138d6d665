//! Link rates.

use std::fmt;

/// A link rate in bits per second, an exact integer (serialization times are
/// computed from it without rounding: [`serialization_ns`](crate::serialization_ns)).
///
/// The simulator's own unit type: it knows nothing of the controllers'
/// crate, and parsing text such as `10Mbit/s` is the scenario layer's job.
///
/// ```
/// use tput_netsim::Rate;
/// let r = Rate::from_mbit_per_sec(10);
/// assert_eq!(r.bits_per_sec(), 10_000_000);
/// assert_eq!(r.bytes_per_sec(), 1_250_000.0);
/// assert_eq!(r.to_string(), "10000000 bit/s");
/// assert!(Rate::from_bits_per_sec(0).is_zero());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(transparent))]
pub struct Rate(u64);

impl Rate {
    /// No rate at all (invalid for a link: [`LinkConfig::validate`](crate::LinkConfig::validate) refuses it).
    pub const ZERO: Rate = Rate(0);

    /// `bits` bits per second.
    pub const fn from_bits_per_sec(bits: u64) -> Self {
        Rate(bits)
    }

    /// `kbit` kilobits (10^3 bits) per second, saturating.
    pub const fn from_kbit_per_sec(kbit: u64) -> Self {
        Rate(kbit.saturating_mul(1_000))
    }

    /// `mbit` megabits (10^6 bits) per second, saturating.
    pub const fn from_mbit_per_sec(mbit: u64) -> Self {
        Rate(mbit.saturating_mul(1_000_000))
    }

    /// `gbit` gigabits (10^9 bits) per second, saturating.
    pub const fn from_gbit_per_sec(gbit: u64) -> Self {
        Rate(gbit.saturating_mul(1_000_000_000))
    }

    /// The rate in bits per second.
    pub const fn bits_per_sec(self) -> u64 {
        self.0
    }

    /// The rate in bytes per second.
    pub fn bytes_per_sec(self) -> f64 {
        self.0 as f64 / 8.0
    }

    /// Whether the rate is zero.
    pub const fn is_zero(self) -> bool {
        self.0 == 0
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} bit/s", self.0)
    }
}
