//! Tool pins in SQLite: the SQL under [`crate::rules::pins`].

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension, Row};
use toolgate_json::Digest;

use super::{filter, SqliteStore, Tx};
use crate::audit::{AppendReceipt, AuditEntry};
use crate::error::Error;
use crate::pin::{CatalogPin, PinFilter, PinFirst, PinId, PinState, SeenTool, ToolPin};
use crate::rules::pins::{self, id_sql, NewPin, PinDecision, PinTx, RawPin, PIN_COLUMNS};
use crate::rules::record::digest;
use crate::rules::{to_i64, to_u64};
use crate::time::Timestamp;

fn db(e: rusqlite::Error) -> Error {
    Error::db("writing tool pins", e)
}

fn reading(e: rusqlite::Error) -> Error {
    Error::db("reading tool pins", e)
}

fn raw(row: &Row<'_>) -> rusqlite::Result<RawPin> {
    Ok(RawPin {
        id: row.get(0)?,
        upstream: row.get(1)?,
        tool: row.get(2)?,
        digest: row.get(3)?,
        definition: row.get(4)?,
        state: row.get(5)?,
        findings: row.get(6)?,
        first_seen: row.get(7)?,
        last_seen: row.get(8)?,
        decided_by: row.get(9)?,
        decided_at: row.get(10)?,
        note: row.get(11)?,
    })
}

fn get_pin(conn: &Connection, id: PinId) -> Result<Option<ToolPin>, Error> {
    let Some(id) = id_sql(id) else {
        return Ok(None);
    };
    conn.prepare_cached(&format!(
        "SELECT {PIN_COLUMNS} FROM tool_pins WHERE id = ?1"
    ))
    .and_then(|mut s| s.query_row([id], raw).optional())
    .map_err(reading)?
    .map(RawPin::into_pin)
    .transpose()
}

impl PinTx for Tx<'_> {
    /// The write lock, taken first, serializes catalogs already.
    fn lock_upstream(&mut self, _upstream: &str) -> Result<(), Error> {
        Ok(())
    }

    fn has_pins(&mut self, upstream: &str) -> Result<bool, Error> {
        self.conn
            .prepare_cached("SELECT EXISTS (SELECT 1 FROM tool_pins WHERE upstream = ?1)")
            .and_then(|mut s| s.query_row([upstream], |r| r.get(0)))
            .map_err(db)
    }

    fn find_pin(
        &mut self,
        upstream: &str,
        tool: &str,
        digest: &Digest,
    ) -> Result<Option<(PinId, PinState)>, Error> {
        let row: Option<(i64, String)> = self
            .conn
            .prepare_cached(
                "SELECT id, state FROM tool_pins WHERE upstream = ?1 AND tool = ?2 AND digest = ?3",
            )
            .and_then(|mut s| {
                s.query_row(
                    rusqlite::params![upstream, tool, digest.as_bytes().as_slice()],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .optional()
            })
            .map_err(db)?;
        row.map(|(id, state)| {
            let corrupt = || {
                Error::new(
                    crate::error::ErrorCode::Corrupt,
                    "a tool pin cannot be read",
                )
            };
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
        self.conn
            .prepare_cached(
                "INSERT INTO tool_pins (upstream, tool, digest, definition, state, findings, \
                 first_seen, last_seen, decided_by, decided_at) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?9)",
            )
            .and_then(|mut s| {
                s.execute(rusqlite::params![
                    row.upstream,
                    row.seen.tool,
                    row.seen.digest.as_bytes().as_slice(),
                    row.seen.definition,
                    row.state.as_str(),
                    row.findings,
                    now,
                    row.decided_by,
                    decided_at,
                ])
            })
            .map_err(db)?;
        let id = self.conn.last_insert_rowid();
        Ok(PinId::new(to_u64(id)?))
    }

    fn drop_pending(&mut self, upstream: &str, tool: &str) -> Result<(), Error> {
        self.conn
            .prepare_cached(
                "DELETE FROM tool_pins WHERE upstream = ?1 AND tool = ?2 AND state = 'pending'",
            )
            .and_then(|mut s| s.execute([upstream, tool]))
            .map_err(db)?;
        Ok(())
    }

    fn count_pending(&mut self, upstream: &str) -> Result<u64, Error> {
        let n: i64 = self
            .conn
            .prepare_cached(
                "SELECT COUNT(*) FROM tool_pins WHERE upstream = ?1 AND state = 'pending'",
            )
            .and_then(|mut s| s.query_row([upstream], |r| r.get(0)))
            .map_err(db)?;
        to_u64(n)
    }

    fn touch_pin(&mut self, id: PinId, now: Timestamp) -> Result<(), Error> {
        let id = to_i64(id.get(), "pin id")?;
        self.conn
            .prepare_cached("UPDATE tool_pins SET last_seen = ?1 WHERE id = ?2")
            .and_then(|mut s| s.execute([now.unix_millis(), id]))
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
        self.conn
            .prepare_cached(
                "INSERT INTO tool_catalogs (upstream, digest, tools, first_seen, last_seen, seen_seq) \
                 VALUES (?1, ?2, ?3, ?4, ?4, \
                   (SELECT COALESCE(MAX(seen_seq), 0) + 1 FROM tool_catalogs WHERE upstream = ?1)) \
                 ON CONFLICT (upstream, digest) DO UPDATE \
                 SET last_seen = excluded.last_seen, seen_seq = excluded.seen_seq",
            )
            .and_then(|mut s| {
                s.execute(rusqlite::params![
                    upstream,
                    digest.as_bytes().as_slice(),
                    to_i64(tools, "tools").unwrap_or(i64::MAX),
                    now.unix_millis()
                ])
            })
            .map_err(db)?;
        Ok(())
    }

    fn pin(&mut self, id: PinId) -> Result<Option<ToolPin>, Error> {
        get_pin(self.conn, id)
    }

    /// The write lock is held; the condition on the state read makes the
    /// move exact even without it.
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
            .conn
            .execute(
                "UPDATE tool_pins SET state = ?1, decided_by = ?2, decided_at = ?3, note = ?4 \
                 WHERE id = ?5 AND state = ?6",
                rusqlite::params![
                    state.as_str(),
                    actor,
                    now.unix_millis(),
                    note,
                    id,
                    pin.state.as_str()
                ],
            )
            .map_err(db)?;
        Ok(n == 1)
    }

    fn append_pin_entry(&mut self, entry: AuditEntry) -> Result<AppendReceipt, Error> {
        self.append(&entry)
    }
}

impl SqliteStore {
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
        let conn = self.hot_conn()?;
        let state: Option<String> = conn
            .prepare_cached(
                "SELECT state FROM tool_pins WHERE upstream = ?1 AND tool = ?2 AND digest = ?3",
            )
            .and_then(|mut s| {
                s.query_row(
                    rusqlite::params![upstream, tool, digest.as_bytes().as_slice()],
                    |r| r.get(0),
                )
                .optional()
            })
            .map_err(reading)?;
        state
            .map(|s| {
                PinState::parse(&s).ok_or_else(|| {
                    Error::new(
                        crate::error::ErrorCode::Corrupt,
                        "a tool pin cannot be read",
                    )
                })
            })
            .transpose()
    }

    pub(super) fn pins_get(&self, id: PinId) -> Result<Option<ToolPin>, Error> {
        let conn = self.read_conn()?;
        get_pin(&conn, id)
    }

    pub(super) fn pins_list(&self, f: &PinFilter) -> Result<Vec<ToolPin>, Error> {
        let mut sql = format!("SELECT {PIN_COLUMNS} FROM tool_pins");
        let mut params: Vec<SqlValue> = Vec::new();
        if let Some(after) = f.after {
            let id = SqlValue::Integer(to_i64(after.get(), "cursor")?);
            filter(&mut sql, &mut params, "id > ?", id);
        }
        for (clause, value) in [
            ("upstream = ?", &f.upstream),
            ("tool = ?", &f.tool),
            ("state = ?", &f.state.map(|s| s.as_str().to_owned())),
        ] {
            if let Some(v) = value {
                filter(&mut sql, &mut params, clause, SqlValue::Text(v.clone()));
            }
        }
        sql.push_str(&format!(" ORDER BY id LIMIT {}", f.limit.min(1000)));
        let conn = self.read_conn()?;
        let mut stmt = conn.prepare_cached(&sql).map_err(reading)?;
        let rows = stmt
            .query_map(rusqlite::params_from_iter(params.iter()), raw)
            .map_err(reading)?;
        let mut out = Vec::new();
        for r in rows {
            out.push(r.map_err(reading)?.into_pin()?);
        }
        Ok(out)
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
        let conn = self.read_conn()?;
        let row: Option<(Vec<u8>, i64, i64, i64)> = conn
            .prepare_cached(
                "SELECT digest, tools, first_seen, last_seen FROM tool_catalogs \
                 WHERE upstream = ?1 ORDER BY seen_seq DESC LIMIT 1",
            )
            .and_then(|mut s| {
                s.query_row([upstream], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })
                .optional()
            })
            .map_err(reading)?;
        row.map(|(d, tools, first, last)| {
            Ok(CatalogPin {
                upstream: upstream.to_owned(),
                digest: digest(&d).ok_or_else(|| {
                    Error::new(
                        crate::error::ErrorCode::Corrupt,
                        "a catalog pin cannot be read",
                    )
                })?,
                tools: to_u64(tools)?,
                first_seen: Timestamp::from_unix_millis(first),
                last_seen: Timestamp::from_unix_millis(last),
            })
        })
        .transpose()
    }
}
