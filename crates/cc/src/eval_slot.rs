//! The length of an evaluation slot, shared by the guarantee controller and
//! the transfers that report per-slot throughput.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::units::{format_duration, parse_duration};

/// How long an evaluation slot is: a fixed duration, or a number of RTTs.
///
/// Written `1s`, `500ms` (any duration [`parse_duration`] accepts) or `32rtt`;
/// zero is refused. [`Display`](fmt::Display) writes the same forms back.
///
/// ```
/// use std::time::Duration;
/// use tput_cc::EvalSlot;
///
/// assert_eq!("32rtt".parse::<EvalSlot>().unwrap(), EvalSlot::Rtts(32));
/// assert_eq!("500ms".parse::<EvalSlot>().unwrap(), EvalSlot::Time(Duration::from_millis(500)));
/// assert_eq!(EvalSlot::Time(Duration::from_secs(1)).to_string(), "1s");
/// assert!("0rtt".parse::<EvalSlot>().is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum EvalSlot {
    /// A fixed duration.
    Time(Duration),
    /// `n` round-trip times.
    Rtts(u32),
}

/// Text that is not an [`EvalSlot`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("evaluation slot `{text}`: expected a duration such as 1s or RTTs such as 32rtt")]
pub struct EvalSlotError {
    text: String,
}

impl FromStr for EvalSlot {
    type Err = EvalSlotError;

    fn from_str(text: &str) -> Result<Self, EvalSlotError> {
        let bad = || EvalSlotError { text: text.to_owned() };
        if let Some(n) = text.strip_suffix("rtt") {
            return n
                .parse::<u32>()
                .ok()
                .filter(|&n| n > 0)
                .map(EvalSlot::Rtts)
                .ok_or_else(bad);
        }
        parse_duration(text)
            .ok()
            .filter(|d| !d.is_zero())
            .map(EvalSlot::Time)
            .ok_or_else(bad)
    }
}

impl fmt::Display for EvalSlot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalSlot::Time(d) => f.write_str(&format_duration(*d)),
            EvalSlot::Rtts(n) => write!(f, "{n}rtt"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_durations_and_rtts_and_prints_them_back() {
        for (text, slot) in [
            ("1s", EvalSlot::Time(Duration::from_secs(1))),
            ("500ms", EvalSlot::Time(Duration::from_millis(500))),
            ("640ms", EvalSlot::Time(Duration::from_millis(640))),
            ("32rtt", EvalSlot::Rtts(32)),
            ("1rtt", EvalSlot::Rtts(1)),
        ] {
            assert_eq!(text.parse::<EvalSlot>(), Ok(slot), "{text}");
            assert_eq!(slot.to_string(), text);
        }
    }

    #[test]
    fn refuses_zero_and_other_text() {
        for text in [
            "0rtt", "0s", "0ms", "rtt", "-1rtt", "1.5rtt", "1", "soon", "", "32 rtts",
        ] {
            let err = text.parse::<EvalSlot>().unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("evaluation slot `{text}`: expected a duration such as 1s or RTTs such as 32rtt")
            );
        }
    }
}
