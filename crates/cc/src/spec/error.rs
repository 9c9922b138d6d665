//! What is wrong with a spec string: [`SpecError`] and its [`SpecErrorKind`].

use crate::error::ConfigError;

use super::registry::{REGISTRY, info};

/// A malformed spec string: the string and what is wrong with it
/// ([`SpecErrorKind`]). It prints as one line,
/// ``bad controller spec `SPEC`: WHY``.
///
/// ```
/// use tput_cc::{ControllerSpec, SpecErrorKind};
/// let e = "cubic:beta=2".parse::<ControllerSpec>().unwrap_err();
/// assert_eq!(e.spec(), "cubic:beta=2");
/// match e.kind() {
///     SpecErrorKind::Invalid(c) => assert_eq!(c.key(), "beta"),
///     other => panic!("unexpected {other}"),
/// }
/// assert_eq!(e.to_string(), "bad controller spec `cubic:beta=2`: beta: 2 must be in (0, 1)");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad controller spec `{spec}`: {kind}")]
pub struct SpecError {
    pub(super) spec: String,
    pub(super) kind: SpecErrorKind,
}

impl SpecError {
    /// The spec string as given.
    pub fn spec(&self) -> &str {
        &self.spec
    }

    /// What is wrong with it.
    pub fn kind(&self) -> &SpecErrorKind {
        &self.kind
    }
}

/// What is wrong with a spec string (see [`SpecError`]). New variants may
/// come in a minor release: match with a wildcard arm.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SpecErrorKind {
    /// The name before `:` is no controller of the [`registry`](crate::registry()).
    #[error("unknown controller `{name}` (known: {})", known_controllers())]
    UnknownController {
        /// The name given.
        name: String,
    },
    /// An item of the parameter list has no `=`.
    #[error("`{item}` is not key=value")]
    NotKeyValue {
        /// The item given.
        item: String,
    },
    /// A key the controller does not take.
    #[error("{}", unknown_parameter(controller, key))]
    UnknownParameter {
        /// The controller's name.
        controller: &'static str,
        /// The key given.
        key: String,
    },
    /// A key given twice.
    #[error("parameter `{key}` given twice")]
    DuplicateParameter {
        /// The key.
        key: String,
    },
    /// A required key is missing.
    #[error("{controller} needs {key}=")]
    MissingParameter {
        /// The controller's name.
        controller: &'static str,
        /// The key it needs.
        key: &'static str,
    },
    /// A value that does not parse as the key's type.
    #[error("{key}: {reason}")]
    BadValue {
        /// The key.
        key: &'static str,
        /// The value given.
        value: String,
        /// What is wrong with it (it quotes the value).
        reason: String,
    },
    /// Values that parse but that the controller refuses (its `validate`).
    #[error(transparent)]
    Invalid(#[from] ConfigError),
}

/// Every name a spec may start with, aliases in parentheses:
/// `newreno (reno), cubic, ...`.
fn known_controllers() -> String {
    REGISTRY
        .iter()
        .map(|c| {
            if c.aliases.is_empty() {
                c.name.to_string()
            } else {
                format!("{} ({})", c.name, c.aliases.join(", "))
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn unknown_parameter(controller: &str, key: &str) -> String {
    let keys: Vec<_> = info(controller).map_or(Vec::new(), |i| i.params.iter().map(|p| p.name).collect());
    if keys.is_empty() {
        format!("{controller} takes no parameters, got `{key}`")
    } else {
        format!(
            "unknown parameter `{key}` for {controller} (known: {})",
            keys.join(", ")
        )
    }
}
