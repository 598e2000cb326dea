//! Tool pins in PostgreSQL: the SQL under [`crate::rules::pins`].

use postgres::types::ToSql;
use postgres::Row;
use toolgate_json::Digest;

use super::{PgStore, Tx};
use crate::audit::{AppendReceipt, AuditEntry};
use crate::error::{Error, ErrorCode};
use crate::pin::{CatalogPin, PinFilter, PinFirst, PinId, PinState, SeenTool, ToolPin};
use crate::rules::pins::{self, id_sql, NewPin, PinDecision, PinTx, RawPin, PIN_COLUMNS};
use crate::rules::record::digest;
use crate::rules::{to_i64, to_u64};
use crate::time::Timestamp;

/// The advisory lock class that serializes the catalogs of one upstream
/// across replicas ("tgpn" in ASCII).
const PIN_LOCK: i32 = 0x7467_706e;

fn db(e: postgres::Error) -> Error {
    Error::pg("writing tool pins", e)
}

fn reading(e: postgres::Error) -> Error {
    Error::pg("reading tool pins", e)
}

fn corrupt() -> Error {
    Error::new(ErrorCode::Corrupt, "a tool pin cannot be read")
}

fn raw(row: &Row) -> Result<RawPin, Error> {
    let c = |_| corrupt();
    Ok(RawPin {
        id: row.try_get(0).map_err(c)?,
        upstream: row.try_get(1).map_err(c)?,
        tool: row.try_get(2).map_err(c)?,
        digest: row.try_get(3).map_err(c)?,
        definition: row.try_get(4).map_err(c)?,
        state: row.try_get(5).map_err(c)?,
        findings: row.try_get(6).map_err(c)?,
        first_seen: row.try_get(7).map_err(c)?,
        last_seen: row.try_get(8).map_err(c)?,
        decided_by: row.try_get(9).map_err(c)?,
        decided_at: row.try_get(10).map_err(c)?,
        note: row.try_get(11).map_err(c)?,
    })
}

fn get_pin(
    client: &mut impl postgres::GenericClient,
    id: PinId,
    lock: bool,
) -> Result<Option<ToolPin>, Error> {
    let Some(id) = id_sql(id) else {
        return Ok(None);
    };
    let sql = format!(
        "SELECT {PIN_COLUMNS} FROM tool_pins WHERE id = $1{}",
        if lock { " FOR UPDATE" } else { "" }
    );
    client
        .query_opt(&sql, &[&id])
        .map_err(reading)?
        .map(|r| raw(&r).and_then(RawPin::into_pin))
        .transpose()
}

impl PinTx for Tx<'_> {
    fn lock_upstream(&mut self, upstream: &str) -> Result<(), Error> {
        self.tx
            .execute(
                "SELECT pg_advisory_xact_lock($1, hashtext($2))",
                &[&PIN_LOCK, &upstream],
            )
            .map_err(db)?;
        Ok(())
    }

    fn has_pins(&mut self, upstream: &str) -> Result<bool, Error> {
        self.tx
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM tool_pins WHERE upstream = $1)",
                &[&upstream],
            )
            .map_err(db)?
            .try_get(0)
            .map_err(|_| corrupt())
    }

    fn find_pin(
        &mut self,
        upstream: &str,
        tool: &str,
        digest: &Digest,
    ) -> Result<Option<(PinId, PinState)>, Error> {
        let row = self
            .tx
            .query_opt(
                "SELECT id, state FROM tool_pins WHERE upstream = $1 AND tool = $2 AND digest = $3",
                &[&upstream, &tool, &digest.as_bytes().as_slice()],
            )
            .map_err(db)?;
        row.map(|r| {
            let id: i64 = r.try_get(0).map_err(|_| corrupt())?;
            let state: String = r.try_get(1).map_err(|_| corrupt())?;
            Ok((
                PinId::new(u64::try_from(id).map_err(|_| corrupt())?),
                PinState::parse(&state).ok_or_else(corrupt)?,
            ))
        })
        .transpose()
    }

    fn insert_pin(&mut self, row: NewPin<'_>) -> Result<PinId, Error> {
        let now = row.now.unix_millis();
        let decided_at = row.decided_by.map(|_| now);
        let r = self
            .tx
            .query_one(
                "INSERT INTO tool_pins (upstream, tool, digest, definition, state, findings, \
                 first_seen, last_seen, decided_by, decided_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8, $9) RETURNING id",
                &[
                    &row.upstream,
                    &row.seen.tool,
                    &row.seen.digest.as_bytes().as_slice(),
                    &row.seen.definition,
                    &row.state.as_str(),
                    &row.findings,
                    &now,
                    &row.decided_by,
                    &decided_at,
                ],
            )
            .map_err(db)?;
        let id: i64 = r.try_get(0).map_err(|_| corrupt())?;
        Ok(PinId::new(to_u64(id)?))
    }

    fn drop_pending(&mut self, upstream: &str, tool: &str) -> Result<(), Error> {
        self.tx
            .execute(
                "DELETE FROM tool_pins WHERE upstream = $1 AND tool = $2 AND state = 'pending'",
                &[&upstream, &tool],
            )
            .map_err(db)?;
        Ok(())
    }

    fn count_pending(&mut self, upstream: &str) -> Result<u64, Error> {
        let n: i64 = self
            .tx
            .query_one(
                "SELECT COUNT(*) FROM tool_pins WHERE upstream = $1 AND state = 'pending'",
                &[&upstream],
            )
            .map_err(db)?
            .try_get(0)
            .map_err(|_| corrupt())?;
        to_u64(n)
    }

    fn touch_pin(&mut self, id: PinId, now: Timestamp) -> Result<(), Error> {
        let id = to_i64(id.get(), "pin id")?;
        self.tx
            .execute(
                "UPDATE tool_pins SET last_seen = GREATEST(last_seen, $1) WHERE id = $2",
                &[&now.unix_millis(), &id],
            )
            .map_err(db)?;
        Ok(())
    }

    fn touch_catalog(
        &mut self,
        upstream: &str,
        digest: &Digest,
        tools: u64,
        now: Timestamp,
    ) -> Result<(), Error> {
        let tools = to_i64(tools, "tools")?;
        self.tx
            .execute(
                "INSERT INTO tool_catalogs (upstream, digest, tools, first_seen, last_seen, seen_seq) \
                 VALUES ($1, $2, $3, $4, $4, \
                   (SELECT COALESCE(MAX(seen_seq), 0) + 1 FROM tool_catalogs WHERE upstream = $1)) \
                 ON CONFLICT (upstream, digest) DO UPDATE \
                 SET last_seen = GREATEST(tool_catalogs.last_seen, excluded.last_seen), \
                     seen_seq = excluded.seen_seq",
                &[
                    &upstream,
                    &digest.as_bytes().as_slice(),
                    &tools,
                    &now.unix_millis(),
                ],
            )
            .map_err(db)?;
        Ok(())
    }

    /// Locks the pin's row for the rest of the transaction.
    fn pin(&mut self, id: PinId) -> Result<Option<ToolPin>, Error> {
        get_pin(&mut self.tx, id, true)
    }

    /// The row is locked since it was read; the condition on the state
    /// keeps the move exact anyway.
    fn set_pin_state(
        &mut self,
        pin: &ToolPin,
        state: PinState,
        actor: &str,
        now: Timestamp,
        note: Option<&str>,
    ) -> Result<bool, Error> {
        let id = to_i64(pin.id.get(), "pin id")?;
        let n = self
            .tx
            .execute(
                "UPDATE tool_pins SET state = $1, decided_by = $2, decided_at = $3, note = $4 \
                 WHERE id = $5 AND state = $6",
                &[
                    &state.as_str(),
                    &actor,
                    &now.unix_millis(),
                    &note,
                    &id,
                    &pin.state.as_str(),
                ],
            )
            .map_err(db)?;
        Ok(n == 1)
    }

    fn append_pin_entry(&mut self, entry: AuditEntry) -> Result<AppendReceipt, Error> {
        self.append(entry)
    }
}

impl PgStore {
    pub(super) fn pins_observe(
        &self,
        upstream: &str,
        catalog: &Digest,
        tools: &[SeenTool],
        first: PinFirst,
    ) -> Result<Vec<PinState>, Error> {
        let now = self.open.clock.now();
        self.write(|tx| pins::observe_in(tx, upstream, catalog, tools, first, now))
    }

    pub(super) fn pins_state(
        &self,
        upstream: &str,
        tool: &str,
        digest: &Digest,
    ) -> Result<Option<PinState>, Error> {
        let row = self.pool.with(|client, _| {
            client
                .query_opt(
                    "SELECT state FROM tool_pins WHERE upstream = $1 AND tool = $2 AND digest = $3",
                    &[&upstream, &tool, &digest.as_bytes().as_slice()],
                )
                .map_err(reading)
        })?;
        row.map(|r| {
            let s: String = r.try_get(0).map_err(|_| corrupt())?;
            PinState::parse(&s).ok_or_else(corrupt)
        })
        .transpose()
    }

    pub(super) fn pins_get(&self, id: PinId) -> Result<Option<ToolPin>, Error> {
        self.pool.with(|client, _| get_pin(client, id, false))
    }

    pub(super) fn pins_list(&self, f: &PinFilter) -> Result<Vec<ToolPin>, Error> {
        let mut clauses: Vec<String> = Vec::new();
        let mut params: Vec<Box<dyn ToSql + Sync>> = Vec::new();
        if let Some(after) = f.after {
            params.push(Box::new(to_i64(after.get(), "cursor")?));
            clauses.push(format!("id > ${}", params.len()));
        }
        for (column, value) in [
            ("upstream", &f.upstream),
            ("tool", &f.tool),
            ("state", &f.state.map(|s| s.as_str().to_owned())),
        ] {
            if let Some(v) = value {
                params.push(Box::new(v.clone()));
                clauses.push(format!("{column} = ${}", params.len()));
            }
        }
        let mut sql = format!("SELECT {PIN_COLUMNS} FROM tool_pins");
        if !clauses.is_empty() {
            sql.push_str(" WHERE ");
            sql.push_str(&clauses.join(" AND "));
        }
        sql.push_str(&format!(" ORDER BY id LIMIT {}", f.limit.min(1000)));
        let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| &**p).collect();
        self.pool.with(|client, _| {
            client
                .query(&sql, &refs)
                .map_err(reading)?
                .iter()
                .map(|r| raw(r).and_then(RawPin::into_pin))
                .collect()
        })
    }

    pub(super) fn pins_decide(
        &self,
        id: PinId,
        decision: PinDecision,
        actor: &str,
        note: &str,
    ) -> Result<ToolPin, Error> {
        let now = self.open.clock.now();
        self.write(|tx| pins::decide_in(tx, id, decision, actor, note, now))
    }

    pub(super) fn pins_latest_catalog(&self, upstream: &str) -> Result<Option<CatalogPin>, Error> {
        let row = self.pool.with(|client, _| {
            client
                .query_opt(
                    "SELECT digest, tools, first_seen, last_seen FROM tool_catalogs \
                     WHERE upstream = $1 ORDER BY seen_seq DESC LIMIT 1",
                    &[&upstream],
                )
                .map_err(reading)
        })?;
        row.map(|r| {
            let d: Vec<u8> = r.try_get(0).map_err(|_| corrupt())?;
            let tools: i64 = r.try_get(1).map_err(|_| corrupt())?;
            let first: i64 = r.try_get(2).map_err(|_| corrupt())?;
            let last: i64 = r.try_get(3).map_err(|_| corrupt())?;
            Ok(CatalogPin {
                upstream: upstream.to_owned(),
                digest: digest(&d).ok_or_else(corrupt)?,
                tools: to_u64(tools)?,
                first_seen: Timestamp::from_unix_millis(first),
                last_seen: Timestamp::from_unix_millis(last),
            })
        })
        .transpose()
    }
}
