//! serde helpers of the scenario schema: human-readable durations, sizes,
//! evaluation slots and controller specs.

use serde::Deserialize;
use tput_cc::ControllerSpec;

/// Human-readable durations (`250us`, `5ms`, `2s`) in serde.
pub(super) mod human_duration {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};
    use tput_cc::units::{format_duration, parse_duration};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        parse_duration(&text).map_err(serde::de::Error::custom)
    }

    pub mod option {
        use super::*;

        pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
            match d {
                Some(d) => super::serialize(d, s),
                None => s.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
            super::deserialize(d).map(Some)
        }
    }
}

/// Human-readable sizes (`1000B`, `64KiB`, `5Mbit`) in serde.
pub(super) mod human_size {
    use serde::{Deserialize, Deserializer, Serializer};
    use tput_cc::units::parse_size;

    pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(b) => s.serialize_str(&format!("{b}B")),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        let text = String::deserialize(d)?;
        parse_size(&text).map(Some).map_err(serde::de::Error::custom)
    }

    pub mod required {
        use serde::{Deserializer, Serializer};

        pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
            super::serialize(&Some(*v), s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
            super::deserialize(d).map(|v| v.unwrap_or_default())
        }
    }
}

/// `Option<EvalSlot>` as `"1s"` / `"32rtt"` in serde.
pub(super) mod eval_slot_serde {
    use serde::{Deserialize, Deserializer, Serializer};

    use tput_cc::EvalSlot;

    pub fn serialize<S: Serializer>(v: &Option<EvalSlot>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(e) => s.serialize_str(&e.to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<EvalSlot>, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map(Some).map_err(serde::de::Error::custom)
    }
}

pub(super) fn spec_from_str<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ControllerSpec, D::Error> {
    let text = String::deserialize(d)?;
    text.parse().map_err(serde::de::Error::custom)
}

pub(super) fn spec_to_str<S: serde::Serializer>(spec: &ControllerSpec, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&spec.to_string())
}
