//! A controller parameter out of its range.

/// A controller's configuration that a `validate` method refuses: which
/// controller, which parameter (its key in spec strings, as
/// [`registry`](crate::registry) lists it) and why.
///
/// It prints as one line, `key: reason`, e.g. `beta: 1.5 must be in (0, 1)`.
///
/// ```
/// use tput_cc::CubicConfig;
/// let mut bad = CubicConfig::default();
/// bad.beta = 1.5;
/// let e = bad.validate().unwrap_err();
/// assert_eq!((e.controller(), e.key()), ("cubic", "beta"));
/// assert_eq!(e.to_string(), "beta: 1.5 must be in (0, 1)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {reason}")]
pub struct ConfigError {
    controller: &'static str,
    key: &'static str,
    reason: String,
}

impl ConfigError {
    pub(crate) fn new(controller: &'static str, key: &'static str, reason: impl Into<String>) -> Self {
        Self {
            controller,
            key,
            reason: reason.into(),
        }
    }

    /// The controller's name in spec strings (`newreno`, `cubic`, ...).
    pub fn controller(&self) -> &'static str {
        self.controller
    }

    /// The parameter's key in spec strings (`beta`, `iw`, ...).
    pub fn key(&self) -> &'static str {
        self.key
    }

    /// What is wrong with its value, e.g. `1.5 must be in (0, 1)`.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}
