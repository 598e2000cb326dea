//! Tool-definition pins: what a catalog does to the pins, which state a
//! human may move a pin to, and the records each step appends; the table
//! is on [`crate::ToolPin`].

use toolgate_json::Digest;

use crate::audit::{self, AppendReceipt, AuditEntry, AuditVerdict};
use crate::error::{Error, ErrorCode};
use crate::pin::{
    PinFirst, PinId, PinState, SeenTool, ToolPin, MAX_DEFINITION_BYTES,
    MAX_PENDING_PINS_PER_UPSTREAM,
};
use crate::rules::record::digest;
use crate::time::Timestamp;

/// Who decided a pin of a trusted first catalog.
pub(crate) const TRUST_ON_FIRST_USE: &str = "trust-on-first-use";

/// The most tools one catalog may pin at once (a server listing more is
/// refused: `invalid_input`).
pub(crate) const MAX_CATALOG_TOOLS: usize = 10_000;

/// [`MAX_PENDING_PINS_PER_UPSTREAM`] as the stores count.
const MAX_PENDING_PINS_PER_UPSTREAM_U64: u64 = MAX_PENDING_PINS_PER_UPSTREAM as u64;

/// The reads and writes the pin rules need, in one write transaction of a
/// backend.
pub(crate) trait PinTx {
    /// Serializes catalogs of `upstream` (PostgreSQL replicas); the write
    /// lock does it in SQLite.
    fn lock_upstream(&mut self, upstream: &str) -> Result<(), Error>;
    /// Whether the store holds any pin of `upstream`.
    fn has_pins(&mut self, upstream: &str) -> Result<bool, Error>;
    /// The pin of this exact definition.
    fn find_pin(
        &mut self,
        upstream: &str,
        tool: &str,
        digest: &Digest,
    ) -> Result<Option<(PinId, PinState)>, Error>;
    /// Stores a new pin.
    fn insert_pin(&mut self, row: NewPin<'_>) -> Result<PinId, Error>;
    /// Removes the pending pins of `tool` of `upstream` (a newer pending
    /// definition replaces them).
    fn drop_pending(&mut self, upstream: &str, tool: &str) -> Result<(), Error>;
    /// How many pending pins `upstream` has.
    fn count_pending(&mut self, upstream: &str) -> Result<u64, Error>;
    /// Marks a pin seen at `now`.
    fn touch_pin(&mut self, id: PinId, now: Timestamp) -> Result<(), Error>;
    /// Records the catalog `digest` of `upstream` seen at `now`.
    fn touch_catalog(
        &mut self,
        upstream: &str,
        digest: &Digest,
        tools: u64,
        now: Timestamp,
    ) -> Result<(), Error>;
    /// One pin, locked for the rest of the transaction where the backend
    /// locks rows.
    fn pin(&mut self, id: PinId) -> Result<Option<ToolPin>, Error>;
    /// Moves `pin` (as read) to `state`, decided by `actor`; whether it
    /// moved.
    fn set_pin_state(
        &mut self,
        pin: &ToolPin,
        state: PinState,
        actor: &str,
        now: Timestamp,
        note: Option<&str>,
    ) -> Result<bool, Error>;
    /// Appends an audit record in the transaction.
    fn append_pin_entry(&mut self, entry: AuditEntry) -> Result<AppendReceipt, Error>;
}

/// A pin to insert.
pub(crate) struct NewPin<'a> {
    pub(crate) upstream: &'a str,
    pub(crate) seen: &'a SeenTool,
    pub(crate) findings: String,
    pub(crate) state: PinState,
    pub(crate) now: Timestamp,
    pub(crate) decided_by: Option<&'a str>,
}

/// A catalog of `upstream` seen at `now`: each definition's state, in the
/// order given. A definition seen before keeps its state; a new one is
/// pending (audited `pin_pending` with its findings), or approved on trust
/// (audited `pin_approved`, `trust_on_first_use`) when the store holds no
/// pin of the upstream yet and `first` trusts.
pub(crate) fn observe_in(
    tx: &mut impl PinTx,
    upstream: &str,
    catalog: &Digest,
    tools: &[SeenTool],
    first: PinFirst,
    now: Timestamp,
) -> Result<Vec<PinState>, Error> {
    if tools.len() > MAX_CATALOG_TOOLS {
        return Err(Error::new(
            ErrorCode::InvalidInput,
            format!("a catalog of more than {MAX_CATALOG_TOOLS} tools is refused"),
        ));
    }
    if let Some(big) = tools
        .iter()
        .find(|t| t.definition.len() > MAX_DEFINITION_BYTES)
    {
        return Err(Error::new(
            ErrorCode::InvalidInput,
            format!(
                "the definition of tool `{}` is longer than {MAX_DEFINITION_BYTES} bytes: the catalog is refused",
                toolgate::identifier::bounded(&big.tool).escape_debug()
            ),
        ));
    }
    tx.lock_upstream(upstream)?;
    let trusting = first == PinFirst::Trust && !tx.has_pins(upstream)?;
    let count = u64::try_from(tools.len()).unwrap_or(u64::MAX);
    tx.touch_catalog(upstream, catalog, count, now)?;
    let mut out = Vec::with_capacity(tools.len());
    // The records are appended last: the chain's head is the last lock a
    // transaction takes (PostgreSQL), so writers never deadlock.
    let mut entries = Vec::new();
    for seen in tools {
        if let Some((id, state)) = tx.find_pin(upstream, &seen.tool, &seen.digest)? {
            tx.touch_pin(id, now)?;
            out.push(state);
            continue;
        }
        let state = if trusting {
            PinState::Approved
        } else {
            PinState::Pending
        };
        let mut findings = String::new();
        audit::str_array(&mut findings, &seen.findings);
        // The newest pending definition of a tool replaces older pending
        // ones (a human is asked about what the server shows now), and an
        // upstream's pending pins are capped: past the cap a definition
        // stays hidden, pending, without a row, and its record says so.
        let mut full = false;
        if !trusting {
            tx.drop_pending(upstream, &seen.tool)?;
            full = tx.count_pending(upstream)? >= MAX_PENDING_PINS_PER_UPSTREAM_U64;
        }
        if !full {
            tx.insert_pin(NewPin {
                upstream,
                seen,
                findings,
                state,
                now,
                decided_by: trusting.then_some(TRUST_ON_FIRST_USE),
            })?;
        }
        let mut e = AuditEntry::new(
            now,
            if trusting {
                AuditVerdict::PinApproved
            } else {
                AuditVerdict::PinPending
            },
        )
        .tool(seen.tool.as_str())
        .digest(seen.digest)
        .note(format!("upstream {upstream}"));
        if trusting {
            e = e.actor(TRUST_ON_FIRST_USE).reason("trust_on_first_use");
        }
        if full {
            e = e.reason("pin_queue_full");
        }
        for f in &seen.findings {
            e = e.reason(f.as_str());
        }
        entries.push(e);
        out.push(state);
    }
    for e in entries {
        tx.append_pin_entry(e)?;
    }
    Ok(out)
}

/// What a human does to a pin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PinDecision {
    /// Approve a pending or rejected definition.
    Approve,
    /// Reject a pending definition, or revoke an approved one.
    Reject,
}

/// The state `decision` moves `pin` to, or the `conflict` that refuses it.
pub(crate) fn decide(pin: &ToolPin, decision: PinDecision) -> Result<PinState, Error> {
    let to = match decision {
        PinDecision::Approve => PinState::Approved,
        PinDecision::Reject => PinState::Rejected,
    };
    if pin.state == to {
        return Err(Error::new(
            ErrorCode::Conflict,
            format!("pin `{}` is already {}", pin.id, pin.state),
        ));
    }
    Ok(to)
}

/// `actor` approves or rejects pin `id` at `now` (audited).
pub(crate) fn decide_in(
    tx: &mut impl PinTx,
    id: PinId,
    decision: PinDecision,
    actor: &str,
    note: &str,
    now: Timestamp,
) -> Result<ToolPin, Error> {
    let pin = tx
        .pin(id)?
        .ok_or_else(|| Error::new(ErrorCode::NotFound, format!("no pin `{id}`")))?;
    let to = decide(&pin, decision)?;
    let note = crate::rules::optional(note);
    if !tx.set_pin_state(&pin, to, actor, now, note)? {
        return Err(Error::new(
            ErrorCode::Conflict,
            format!("pin `{id}` was decided meanwhile"),
        ));
    }
    let verdict = match decision {
        PinDecision::Approve => AuditVerdict::PinApproved,
        PinDecision::Reject => AuditVerdict::PinRejected,
    };
    let mut e = AuditEntry::new(now, verdict)
        .tool(pin.tool.as_str())
        .digest(pin.digest)
        .actor(actor);
    e = e.note(match note {
        Some(n) => format!("upstream {}: {n}", pin.upstream),
        None => format!("upstream {}", pin.upstream),
    });
    tx.append_pin_entry(e)?;
    tx.pin(id)?
        .ok_or_else(|| Error::new(ErrorCode::NotFound, format!("no pin `{id}`")))
}

/// A pin's columns as a backend reads them.
pub(crate) struct RawPin {
    pub(crate) id: i64,
    pub(crate) upstream: String,
    pub(crate) tool: String,
    pub(crate) digest: Vec<u8>,
    pub(crate) definition: String,
    pub(crate) state: String,
    pub(crate) findings: String,
    pub(crate) first_seen: i64,
    pub(crate) last_seen: i64,
    pub(crate) decided_by: Option<String>,
    pub(crate) decided_at: Option<i64>,
    pub(crate) note: Option<String>,
}

/// The columns both backends select, in [`RawPin`]'s order.
pub(crate) const PIN_COLUMNS: &str = "id, upstream, tool, digest, definition, state, findings, \
     first_seen, last_seen, decided_by, decided_at, note";

impl RawPin {
    /// The pin; `store_corrupt` if a column is not what the store writes.
    pub(crate) fn into_pin(self) -> Result<ToolPin, Error> {
        let corrupt = || Error::new(ErrorCode::Corrupt, "a tool pin cannot be read");
        let findings = toolgate_json::from_str(&self.findings)
            .ok()
            .and_then(|v| {
                v.as_array().map(|items| {
                    items
                        .iter()
                        .map(|i| i.as_str().map(str::to_owned))
                        .collect::<Option<Vec<String>>>()
                })
            })
            .flatten()
            .ok_or_else(corrupt)?;
        Ok(ToolPin {
            id: PinId::new(u64::try_from(self.id).map_err(|_| corrupt())?),
            upstream: self.upstream,
            tool: self.tool,
            digest: digest(&self.digest).ok_or_else(corrupt)?,
            definition: self.definition,
            state: PinState::parse(&self.state).ok_or_else(corrupt)?,
            findings,
            first_seen: Timestamp::from_unix_millis(self.first_seen),
            last_seen: Timestamp::from_unix_millis(self.last_seen),
            decided_by: self.decided_by,
            decided_at: self.decided_at.map(Timestamp::from_unix_millis),
            note: self.note,
        })
    }
}

/// A pin id for a signed column; `None` if it cannot name a row.
pub(crate) fn id_sql(id: PinId) -> Option<i64> {
    i64::try_from(id.get()).ok()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;

    fn pin(state: PinState) -> ToolPin {
        ToolPin {
            id: PinId::new(7),
            upstream: "u".into(),
            tool: "t".into(),
            digest: Digest::of(b"d"),
            definition: "{}".into(),
            state,
            findings: vec![],
            first_seen: Timestamp::from_unix_millis(0),
            last_seen: Timestamp::from_unix_millis(0),
            decided_by: None,
            decided_at: None,
            note: None,
        }
    }

    #[test]
    fn the_transition_table_holds() {
        use PinDecision::{Approve, Reject};
        use PinState::{Approved, Pending, Rejected};
        assert_eq!(decide(&pin(Pending), Approve).unwrap(), Approved);
        assert_eq!(decide(&pin(Pending), Reject).unwrap(), Rejected);
        assert_eq!(decide(&pin(Rejected), Approve).unwrap(), Approved);
        assert_eq!(decide(&pin(Approved), Reject).unwrap(), Rejected);
        let e = decide(&pin(Approved), Approve).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Conflict);
        assert_eq!(e.message(), "pin `7` is already approved");
        let e = decide(&pin(Rejected), Reject).unwrap_err();
        assert_eq!(e.code(), ErrorCode::Conflict);
    }
}
