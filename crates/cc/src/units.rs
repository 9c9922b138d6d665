//! Human-readable rates, durations and sizes: `20Mbit/s`, `250ms`, `64KiB`.
//!
//! Rates use SI prefixes (`k` = 1000) on bits (`bit/s`, `bps`) or bytes
//! (`B/s`); sizes accept SI (`kB`, `MB`) and binary (`KiB`, `MiB`) prefixes on
//! bytes (`B`) or bits (`bit`, `Mbit`). Every parser returns a
//! [`UnitError`] naming the bad text.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// A malformed rate, duration or size.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {what} `{text}`: {why}")]
pub struct UnitError {
    what: &'static str,
    text: String,
    why: &'static str,
}

impl UnitError {
    fn new(what: &'static str, text: &str, why: &'static str) -> Self {
        Self {
            what,
            text: text.to_owned(),
            why,
        }
    }
}

fn split_number(s: &str) -> (&str, &str) {
    let end = s
        .char_indices()
        .find(|&(_, c)| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .map_or(s.len(), |(i, _)| i);
    (&s[..end], s[end..].trim())
}

fn parse_number(what: &'static str, text: &str, num: &str) -> Result<f64, UnitError> {
    if num.is_empty() {
        return Err(UnitError::new(what, text, "expected a number first"));
    }
    let v: f64 = num
        .replace('_', "")
        .parse()
        .map_err(|_| UnitError::new(what, text, "not a number"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(UnitError::new(what, text, "must be a finite, non-negative number"));
    }
    Ok(v)
}

/// `num` (digits, at most one `.`, `_` separators) times `factor`, rounded
/// half up, computed exactly; `None` if it does not fit in 128 bits. Exact
/// decimal arithmetic makes every printed value parse back to itself,
/// where an `f64` product can be off by one in the last of 16 digits.
fn exact_scaled(num: &str, factor: u128) -> Option<u128> {
    let digits: String = num.chars().filter(|&c| c != '_').collect();
    let (int, frac) = digits.split_once('.').unwrap_or((&digits, ""));
    if frac.contains('.') || (int.is_empty() && frac.is_empty()) {
        return None;
    }
    let mut m: u128 = 0;
    for c in int.chars().chain(frac.chars()) {
        m = m.checked_mul(10)?.checked_add(u128::from(c.to_digit(10)?))?;
    }
    let scale = 10u128.checked_pow(u32::try_from(frac.len()).ok()?)?;
    Some(m.checked_mul(factor)?.checked_add(scale / 2)? / scale)
}

fn si_prefix(p: &str) -> Option<f64> {
    Some(match p {
        "" => 1.0,
        "k" | "K" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        _ => return None,
    })
}

fn bin_prefix(p: &str) -> Option<f64> {
    Some(match p {
        "Ki" => 1024.0,
        "Mi" => 1024.0 * 1024.0,
        "Gi" => 1024.0 * 1024.0 * 1024.0,
        "Ti" => 1024.0 * 1024.0 * 1024.0 * 1024.0,
        _ => return None,
    })
}

/// A data rate, stored exactly in bits per second.
///
/// Parsed from `100Mbit/s`, `100Mbps`, `12.5MB/s` (bytes), or iperf3's
/// form, bits per second with a k/K, M, G or T (1000^n) and no unit:
///
/// ```
/// use tput_cc::units::Rate;
/// assert_eq!("10M".parse::<Rate>().unwrap(), "10Mbit/s".parse().unwrap());
/// assert_eq!("1MB/s".parse::<Rate>().unwrap().bits_per_sec(), 8_000_000);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(try_from = "String", into = "String"))]
pub struct Rate {
    bits_per_sec: u64,
}

impl Rate {
    /// A rate of `bits_per_sec` bits per second.
    pub const fn from_bits_per_sec(bits_per_sec: u64) -> Self {
        Self { bits_per_sec }
    }
    /// A rate of `bytes_per_sec` bytes per second.
    pub const fn from_bytes_per_sec(bytes_per_sec: u64) -> Self {
        Self {
            bits_per_sec: bytes_per_sec * 8,
        }
    }
    /// Megabits per second (10^6 bit/s).
    pub const fn from_mbit_per_sec(mbit_per_sec: u64) -> Self {
        Self {
            bits_per_sec: mbit_per_sec * 1_000_000,
        }
    }
    /// Bits per second.
    pub const fn bits_per_sec(self) -> u64 {
        self.bits_per_sec
    }
    /// Bytes per second, as a float (exact for rates below 2^53 bit/s).
    pub fn bytes_per_sec(self) -> f64 {
        self.bits_per_sec as f64 / 8.0
    }
}

impl FromStr for Rate {
    type Err = UnitError;
    fn from_str(text: &str) -> Result<Self, UnitError> {
        const WHAT: &str = "rate";
        let s = text.trim();
        let (num, unit) = split_number(s);
        let v = parse_number(WHAT, text, num)?;
        let (prefix, per_bit) = if let Some(p) = unit.strip_suffix("bit/s") {
            (p, 1.0)
        } else if let Some(p) = unit.strip_suffix("bps") {
            (p, 1.0)
        } else if let Some(p) = unit.strip_suffix("B/s") {
            (p, 8.0)
        } else if !unit.is_empty() && si_prefix(unit).is_some() {
            // iperf3's form (`-b 10M`): bits per second, k/K, M, G, T = 1000^n.
            // A bare number stays an error: `rate=20` is too easily meant as Mbit/s.
            (unit, 1.0)
        } else {
            return Err(UnitError::new(
                WHAT,
                text,
                "expected a unit such as bit/s, kbit/s, Mbit/s, Gbit/s, B/s or MB/s, or iperf3's 10M",
            ));
        };
        let mult = si_prefix(prefix).ok_or_else(|| UnitError::new(WHAT, text, "unknown prefix (use k, M, G or T)"))?;
        let too_large = || UnitError::new(WHAT, text, "too large");
        let bits_per_sec = match exact_scaled(num, (mult * per_bit) as u128) {
            Some(b) => u64::try_from(b).map_err(|_| too_large())?,
            None => {
                let bps = (v * mult * per_bit).round();
                if bps > u64::MAX as f64 {
                    return Err(too_large());
                }
                bps as u64
            }
        };
        Ok(Rate { bits_per_sec })
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.bits_per_sec;
        for (div, unit) in [
            (1_000_000_000_000, "Tbit/s"),
            (1_000_000_000, "Gbit/s"),
            (1_000_000, "Mbit/s"),
            (1_000, "kbit/s"),
        ] {
            if b >= div && b.is_multiple_of(div / 1000) {
                let whole = b / div;
                let frac = b % div / (div / 1000);
                return if frac == 0 {
                    write!(f, "{whole}{unit}")
                } else {
                    let s = format!("{frac:03}");
                    write!(f, "{whole}.{}{unit}", s.trim_end_matches('0'))
                };
            }
        }
        write!(f, "{b}bit/s")
    }
}

impl TryFrom<String> for Rate {
    type Error = UnitError;
    fn try_from(s: String) -> Result<Self, UnitError> {
        s.parse()
    }
}

impl From<Rate> for String {
    fn from(r: Rate) -> String {
        r.to_string()
    }
}

/// Parse a duration: `250us`, `5ms`, `2s`, `1.5s`, `2min`, `100ns`.
pub fn parse_duration(text: &str) -> Result<Duration, UnitError> {
    const WHAT: &str = "duration";
    let s = text.trim();
    let (num, unit) = split_number(s);
    let v = parse_number(WHAT, text, num)?;
    let nanos_per = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        "h" => 3600e9,
        "" => {
            return Err(UnitError::new(WHAT, text, "missing unit (ns, us, ms, s, min, h)"));
        }
        _ => {
            return Err(UnitError::new(WHAT, text, "unknown unit (use ns, us, ms, s, min or h)"));
        }
    };
    let nanos = (v * nanos_per).round();
    if nanos > u64::MAX as f64 {
        return Err(UnitError::new(WHAT, text, "too large"));
    }
    Ok(Duration::from_nanos(nanos as u64))
}

/// Format a duration in the largest unit that keeps it exact: `250us`, `5ms`, `2s`.
pub fn format_duration(d: Duration) -> String {
    let n = d.as_nanos();
    for (div, unit) in [(1_000_000_000u128, "s"), (1_000_000, "ms"), (1_000, "us")] {
        if n >= div && n.is_multiple_of(div) {
            return format!("{}{unit}", n / div);
        }
    }
    format!("{n}ns")
}

/// Parse a size in bytes: `1000B`, `64KiB`, `5MB`, `5Mbit` (bits are converted
/// to bytes and must be a whole number of bytes).
pub fn parse_size(text: &str) -> Result<u64, UnitError> {
    const WHAT: &str = "size";
    let s = text.trim();
    let (num, unit) = split_number(s);
    let v = parse_number(WHAT, text, num)?;
    let (prefix, per) = if let Some(p) = unit.strip_suffix("bit") {
        (p, 1.0 / 8.0)
    } else if let Some(p) = unit.strip_suffix('B') {
        (p, 1.0)
    } else {
        return Err(UnitError::new(
            WHAT,
            text,
            "expected a unit such as B, kB, KiB, MB, MiB or Mbit",
        ));
    };
    let mult = si_prefix(prefix)
        .or_else(|| bin_prefix(prefix))
        .ok_or_else(|| UnitError::new(WHAT, text, "unknown prefix (use k, M, G, Ki, Mi or Gi)"))?;
    let bytes = v * mult * per;
    if bytes.fract() != 0.0 {
        return Err(UnitError::new(WHAT, text, "not a whole number of bytes"));
    }
    if bytes > u64::MAX as f64 {
        return Err(UnitError::new(WHAT, text, "too large"));
    }
    Ok(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_parse_and_print() {
        assert_eq!("20Mbit/s".parse::<Rate>().unwrap().bits_per_sec(), 20_000_000);
        assert_eq!("1.5Gbit/s".parse::<Rate>().unwrap().bits_per_sec(), 1_500_000_000);
        assert_eq!("12.5MB/s".parse::<Rate>().unwrap().bits_per_sec(), 100_000_000);
        assert_eq!("100kbps".parse::<Rate>().unwrap().bits_per_sec(), 100_000);
        assert_eq!(Rate::from_bits_per_sec(1_500_000_000).to_string(), "1.5Gbit/s");
        assert_eq!(Rate::from_bits_per_sec(20_000_000).to_string(), "20Mbit/s");
        assert_eq!(Rate::from_bits_per_sec(1234).to_string(), "1.234kbit/s");
        assert_eq!(Rate::from_bits_per_sec(1).to_string(), "1bit/s");
        // 4_444_444_444_444_440 printed as `4444444444444.44kbit/s`, which an
        // f64 product parsed back as ...441 (found by the `spec` fuzz target).
        for r in [
            1u64,
            999,
            1000,
            1001,
            123_456_789,
            2_500_000,
            10_000_000_000,
            4_444_444_444_444_440,
            u64::MAX - 615,
            u64::MAX,
        ] {
            let rate = Rate::from_bits_per_sec(r);
            assert_eq!(rate.to_string().parse::<Rate>().unwrap(), rate, "{r}");
        }
    }

    #[test]
    fn iperf3_rates_are_bits_per_second() {
        for (text, bps) in [
            ("10M", 10_000_000),
            ("1.5G", 1_500_000_000),
            ("64k", 64_000),
            ("64K", 64_000),
        ] {
            assert_eq!(text.parse::<Rate>().unwrap().bits_per_sec(), bps, "{text}");
        }
        assert!("10X".parse::<Rate>().is_err());
        assert!("10m".parse::<Rate>().is_err(), "m is not a prefix");
        assert!("100".parse::<Rate>().is_err(), "a bare number has no unit");
    }

    #[test]
    fn bad_rates_name_the_text() {
        let e = "20Mbits".parse::<Rate>().unwrap_err().to_string();
        assert!(e.contains("`20Mbits`"), "{e}");
        assert!("fast".parse::<Rate>().is_err());
        assert!("-5Mbit/s".parse::<Rate>().is_err());
        assert!("5Xbit/s".parse::<Rate>().is_err());
        assert!("1e999Mbit/s".parse::<Rate>().is_err());
        assert!(
            "18446744073709551616bit/s".parse::<Rate>().is_err(),
            "one past u64::MAX"
        );
        assert!("20000000Tbit/s".parse::<Rate>().is_err());
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert_eq!(parse_duration("5ms").unwrap(), Duration::from_millis(5));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("5").unwrap_err().to_string().contains("missing unit"));
        assert!(parse_duration("5 parsecs").is_err());
        for d in [
            Duration::from_micros(250),
            Duration::from_millis(5),
            Duration::from_secs(2),
            Duration::from_nanos(1_000_001),
        ] {
            assert_eq!(parse_duration(&format_duration(d)).unwrap(), d);
        }
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1000B").unwrap(), 1000);
        assert_eq!(parse_size("64KiB").unwrap(), 65536);
        assert_eq!(parse_size("5Mbit").unwrap(), 625_000);
        assert_eq!(parse_size("1.5MB").unwrap(), 1_500_000);
        assert!(parse_size("3bit").is_err());
        assert!(parse_size("12").is_err());
    }
}
