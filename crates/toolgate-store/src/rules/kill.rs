//! The kill switch as both stores keep it: one row (mode, reason, actor,
//! time), read back into a [`KillSwitchState`], and the record of each
//! flip, appended in the flip's transaction.

use crate::audit::{AuditEntry, AuditVerdict};
use crate::error::{Error, ErrorCode};
use crate::kill::{KillMode, KillSwitchState};
use crate::time::Timestamp;

/// The state of the stored row; an unknown mode is `store_corrupt` (never
/// read as `off`).
pub(crate) fn state(
    mode: &str,
    reason: Option<String>,
    actor: Option<String>,
    changed_at: Option<i64>,
) -> Result<KillSwitchState, Error> {
    let mode = KillMode::parse(mode).ok_or_else(|| {
        Error::new(
            ErrorCode::Corrupt,
            format!("unknown kill switch mode `{mode}`"),
        )
    })?;
    Ok(KillSwitchState {
        mode,
        reason,
        actor,
        changed_at: changed_at.map(Timestamp::from_unix_millis),
    })
}

/// The record of `actor` flipping the switch to `mode` at `now`: the mode
/// as its reason code, the reason (if any) as its note.
pub(crate) fn flip_entry(
    now: Timestamp,
    mode: KillMode,
    reason: Option<&str>,
    actor: &str,
) -> AuditEntry {
    let mut entry = AuditEntry::new(now, AuditVerdict::KillSwitch)
        .reason(mode.as_str())
        .actor(actor);
    entry.note = reason.map(str::to_owned);
    entry
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;

    #[test]
    fn the_stored_row_is_read_strictly() {
        let s = state(
            "deny_all",
            Some("incident".into()),
            Some("bob".into()),
            Some(5),
        )
        .unwrap();
        assert_eq!(s.mode, KillMode::DenyAll);
        assert_eq!(s.changed_at, Some(Timestamp::from_unix_millis(5)));
        assert_eq!(state("off", None, None, None).unwrap().mode, KillMode::Off);
        for bad in ["", "OFF", "deny-all", "on"] {
            let e = state(bad, None, None, None).unwrap_err();
            assert_eq!(e.code(), ErrorCode::Corrupt);
            assert_eq!(e.message(), format!("unknown kill switch mode `{bad}`"));
        }
    }

    #[test]
    fn a_flip_is_recorded_with_its_mode_actor_and_reason() {
        let now = Timestamp::from_unix_millis(9);
        let e = flip_entry(now, KillMode::DenyWrites, Some("drill"), "bob");
        assert_eq!((e.verdict, e.time), (AuditVerdict::KillSwitch, now));
        assert_eq!(e.reasons, ["deny_writes"]);
        assert_eq!(
            (e.actor.as_deref(), e.note.as_deref()),
            (Some("bob"), Some("drill"))
        );
        assert_eq!(flip_entry(now, KillMode::Off, None, "bob").note, None);
    }
}
