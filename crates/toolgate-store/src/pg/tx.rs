//! A write transaction on PostgreSQL: the chain's head, the segment and
//! the append.

use super::*;

impl Tx<'_> {
    /// Locks the head of this store's segment (opening one first if it has
    /// none) and draws numbers for at least `n` more records.
    pub(super) fn reserve(&mut self, n: usize) -> Result<(), Error> {
        if self.head.is_none() {
            self.head = Some(match self.known {
                Some(id) => {
                    let row = self
                        .tx
                        .query_opt(
                            &self.prepared.segment_for_update,
                            &[&to_i64(id, "segment")?],
                        )
                        .map_err(|e| Error::pg("locking the audit segment's head", e))?
                        .ok_or_else(|| {
                            Error::new(ErrorCode::Corrupt, "the audit segment's head is missing")
                        })?;
                    let (sseq, hash) = stored_head(&row)?;
                    (id, sseq, hash)
                }
                None => self.open_segment()?,
            });
        }
        if self.seqs.len() < n {
            let more = i32::try_from(n - self.seqs.len())
                .map_err(|_| Error::new(ErrorCode::InvalidInput, "too many records at once"))?;
            for row in self
                .tx
                .query(&self.prepared.next_seqs, &[&more])
                .map_err(|e| Error::pg("numbering audit records", e))?
            {
                let seq: i64 = row
                    .try_get(0)
                    .map_err(|e| Error::pg("numbering audit records", e))?;
                self.seqs.push_back(to_u64(seq)?);
            }
        }
        Ok(())
    }

    /// Opens a segment: locks the root chain's head (the only lock replicas
    /// share, taken once per store), draws the first record's `seq`, which
    /// is the segment's id, and links the segment to the root's head.
    pub(super) fn open_segment(&mut self) -> Result<(u64, u64, Digest), Error> {
        let db = |e| Error::pg("opening an audit segment", e);
        let row = self
            .tx
            .query_opt(statements::ROOT_FOR_UPDATE, &[])
            .map_err(db)?
            .ok_or_else(|| Error::new(ErrorCode::Corrupt, "the audit chain's head is missing"))?;
        let (root_seq, root_hash) = stored_head(&row)?;
        // Records written around the sequence (never by a store) must not
        // be numbered again.
        if root_seq > 0 {
            self.tx
                .execute(
                    "SELECT setval('audit_seq', $1) WHERE (SELECT CASE WHEN is_called \
                     THEN last_value ELSE last_value - 1 END FROM audit_seq) < $1",
                    &[&to_i64(root_seq, "seq")?],
                )
                .map_err(db)?;
        }
        let row = self
            .tx
            .query_one("SELECT nextval('audit_seq')", &[])
            .map_err(db)?;
        let id = to_u64(row.try_get::<_, i64>(0).map_err(db)?)?;
        self.tx
            .execute(
                "INSERT INTO audit_segments (id, opened_at, sseq, hash) VALUES ($1, $2, 0, $3)",
                &[
                    &to_i64(id, "seq")?,
                    &self.now,
                    &root_hash.as_bytes().as_slice(),
                ],
            )
            .map_err(db)?;
        self.seqs.push_front(id);
        self.opened = Some((id, None));
        Ok((id, 0, root_hash))
    }

    /// Places `entry` after its segment's head (locking the head first).
    pub(super) fn append(&mut self, entry: AuditEntry) -> Result<AppendReceipt, Error> {
        self.reserve(1)?;
        let (Some((segment, sseq, prev)), Some(seq)) = (self.head, self.seqs.pop_front()) else {
            return Err(Error::new(
                ErrorCode::Corrupt,
                "no audit segment to append to",
            ));
        };
        let sseq = sseq
            .checked_add(1)
            .filter(|s| i64::try_from(*s).is_ok())
            .ok_or_else(|| Error::new(ErrorCode::Full, "the audit chain is full"))?;
        if entry.claims_call {
            if let (Some(session), Some(call_id)) = (&entry.session, &entry.call_id) {
                let n = self
                    .tx
                    .execute(
                        "INSERT INTO allowed_calls (session, call_id, allowed_at) VALUES ($1, $2, $3) \
                         ON CONFLICT (session, call_id) DO NOTHING",
                        &[session, call_id, &entry.time.unix_millis()],
                    )
                    .map_err(|e| Error::pg("claiming a call id", e))?;
                if n != 1 {
                    return Err(crate::rules::record::call_claimed());
                }
            }
        }
        if entry.counts_response {
            if let Some(session) = &entry.session {
                let n: i64 = self
                    .tx
                    .query_one(
                        "INSERT INTO session_responses (session, responses) VALUES ($1, 1) \
                         ON CONFLICT (session) DO UPDATE \
                         SET responses = session_responses.responses + 1 \
                         RETURNING responses",
                        &[session],
                    )
                    .and_then(|row| row.try_get(0))
                    .map_err(|e| Error::pg("counting a response", e))?;
                crate::rules::record::check_responses(&entry, u64::try_from(n).unwrap_or(0))?;
            }
        }
        // The keys were locked first (`commit_batch`): judged one replica
        // after the other.
        let (entry, refused) =
            match rules::limits::apply(&mut limits::PgLimits(&mut self.tx), &entry)? {
                Some(code) => (rules::limits::refused_entry(&entry, code), Some(code)),
                None => (entry, None),
            };
        let at = Place { seq, segment, sseq };
        let hash = audit::chain_hash(&prev, at, audit::SEGMENT_RECORD_VERSION, &entry);
        if sseq == 1 {
            // The segment's first record: the root chain's new head.
            if let Some((_, root)) = &mut self.opened {
                *root = Some((seq, hash));
            }
        }
        self.head = Some((segment, sseq, hash));
        self.pending.push((at, prev, hash, entry));
        Ok(AppendReceipt { seq, hash, refused })
    }

    /// Writes the appended records and the new heads.
    pub(super) fn flush(&mut self) -> Result<(), Error> {
        let Some((segment, head_sseq, head_hash)) = self.head else {
            return Ok(());
        };
        if self.pending.is_empty() {
            return Ok(());
        }
        let n = self.pending.len();
        let mut seq = Vec::with_capacity(n);
        let mut sseq = Vec::with_capacity(n);
        let mut time = Vec::with_capacity(n);
        let mut verdict = Vec::with_capacity(n);
        let mut user = Vec::with_capacity(n);
        let mut session = Vec::with_capacity(n);
        let mut tool = Vec::with_capacity(n);
        let mut call_id = Vec::with_capacity(n);
        let mut reasons = Vec::with_capacity(n);
        let mut policies = Vec::with_capacity(n);
        let mut dig: Vec<Option<Vec<u8>>> = Vec::with_capacity(n);
        let mut arguments = Vec::with_capacity(n);
        let mut approval = Vec::with_capacity(n);
        let mut actor = Vec::with_capacity(n);
        let mut note = Vec::with_capacity(n);
        let mut prev = Vec::with_capacity(n);
        let mut hash = Vec::with_capacity(n);
        let mut refused = Vec::with_capacity(n);
        let mut risk = Vec::with_capacity(n);
        let version = i32::try_from(audit::SEGMENT_RECORD_VERSION).unwrap_or(i32::MAX);
        let mut v = Vec::with_capacity(n);
        for (at, p, h, e) in self.pending.drain(..) {
            seq.push(to_i64(at.seq, "seq")?);
            sseq.push(to_i64(at.sseq, "seq")?);
            time.push(e.time.unix_millis());
            verdict.push(e.verdict.as_str().to_owned());
            let columns = EntryColumns::of(&e)?;
            reasons.push(columns.reasons);
            policies.push(columns.policies);
            dig.push(e.digest.map(|d| d.as_bytes().to_vec()));
            approval.push(columns.approval);
            user.push(e.user);
            session.push(e.session);
            tool.push(e.tool);
            call_id.push(e.call_id);
            arguments.push(e.arguments);
            actor.push(e.actor);
            note.push(e.note);
            prev.push(p.as_bytes().to_vec());
            hash.push(h.as_bytes().to_vec());
            refused.push(e.refused_arguments);
            risk.push(e.risk);
            v.push(version);
        }
        let segment = to_i64(segment, "segment")?;
        let head_sseq = to_i64(head_sseq, "seq")?;
        let head_hash = head_hash.as_bytes().as_slice();
        self.tx
            .execute(
                &self.prepared.append,
                &[
                    &seq, &time, &verdict, &user, &session, &tool, &call_id, &reasons, &policies,
                    &dig, &arguments, &approval, &actor, &note, &prev, &hash, &refused, &risk, &v,
                    &segment, &sseq, &head_sseq, &head_hash,
                ],
            )
            .map_err(|e| Error::pg("appending audit records", e))?;
        if let Some((_, Some((root_seq, root_hash)))) = self.opened {
            self.tx
                .execute(
                    "UPDATE audit_head SET seq = $1, hash = $2 WHERE id = 1",
                    &[&to_i64(root_seq, "seq")?, &root_hash.as_bytes().as_slice()],
                )
                .map_err(|e| Error::pg("opening an audit segment", e))?;
        }
        Ok(())
    }
}
