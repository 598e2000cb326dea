//! The kill switch; documented on [`KillSwitchState`].

use std::fmt;

use crate::time::Timestamp;

/// What the kill switch stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum KillMode {
    /// `off`: calls are decided normally.
    #[default]
    Off,
    /// `deny_writes`: every non-read call is denied; reads run.
    DenyWrites,
    /// `deny_all`: every call is denied.
    DenyAll,
}

impl KillMode {
    /// The wire name: `off`, `deny_writes`, `deny_all`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::DenyWrites => "deny_writes",
            Self::DenyAll => "deny_all",
        }
    }

    /// The mode with this wire name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "off" => Self::Off,
            "deny_writes" => Self::DenyWrites,
            "deny_all" => Self::DenyAll,
            _ => return None,
        })
    }
}

impl fmt::Display for KillMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The kill switch as stored: one value shared by every process using the
/// store. [`crate::Store::kill_switch`] reads it afresh on every call, so a
/// flip by one process takes effect on the next decision of every other.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct KillSwitchState {
    /// The mode.
    pub mode: KillMode,
    /// Why it was last flipped.
    pub reason: Option<String>,
    /// Who flipped it.
    pub actor: Option<String>,
    /// When (`None`: never flipped).
    pub changed_at: Option<Timestamp>,
}
