//! Signed checkpoints of the audit chain.
//!
//! The hash chain proves that no record was changed, removed or inserted
//! *below* its head; it cannot prove that the head itself is where it was:
//! someone with write access to the database can delete the newest records
//! and rewrite the head rows (`audit_head`, a segment's head), and the
//! chain that is left verifies as intact. A checkpoint closes that hole
//! from outside: it signs, with an Ed25519 key from the config, how many
//! records the log held and every segment's head (its number in the
//! segment and its hash) at a time, and is written both to the log (a
//! `checkpoint` record with its digest) and to a sink the operator keeps
//! elsewhere (a file, one JSON line per checkpoint, appended and synced).
//! [`verify_checkpoints`] then fails for every checkpoint whose heads the
//! log no longer holds with the same hashes.
//!
//! The line, canonical JSON: `{"heads": [[segment, sseq, "hex hash"], …],
//! "key": "hex public key", "records": N, "signature": "hex", "time": unix
//! ms, "v": 1}`. The signature covers the text `toolgate checkpoint v1`,
//! then the time, the count and one `segment sseq hash` line per head. A
//! SQLite log is one segment (`0`).

use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;
use std::path::Path;

use ed25519_dalek::{Signature, Signer as _, SigningKey, Verifier as _, VerifyingKey};
use toolgate_json::{canonical, Digest, Number, Object, Value};

use crate::audit::{AuditEntry, AuditFilter, AuditVerdict};
use crate::error::{Error, ErrorCode};
use crate::store::Store;
use crate::time::Timestamp;

/// The secret key that signs checkpoints: a 32-byte Ed25519 seed.
pub struct CheckpointKey(SigningKey);

impl std::fmt::Debug for CheckpointKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the secret.
        f.debug_tuple("CheckpointKey")
            .field(&self.verifying().to_hex())
            .finish()
    }
}

impl CheckpointKey {
    /// The key with this seed.
    pub fn from_seed(seed: [u8; 32]) -> Self {
        Self(SigningKey::from_bytes(&seed))
    }

    /// The key in the file at `path`: its seed as 64 hex digits (spaces
    /// and a final newline allowed). The message never repeats the file's
    /// content.
    pub fn from_file(path: &Path) -> Result<Self, Error> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            Error::new(
                ErrorCode::Unavailable,
                format!("cannot read the checkpoint key `{}`", path.display()),
            )
            .with_source(e)
        })?;
        let seed = hex32(text.trim()).ok_or_else(|| {
            Error::new(
                ErrorCode::InvalidInput,
                format!(
                    "the checkpoint key `{}` is not 64 hex digits",
                    path.display()
                ),
            )
        })?;
        Ok(Self::from_seed(seed))
    }

    /// The public key that verifies this key's checkpoints.
    pub fn verifying(&self) -> CheckpointPublicKey {
        CheckpointPublicKey(self.0.verifying_key())
    }
}

/// The public key that verifies checkpoints.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointPublicKey(VerifyingKey);

impl CheckpointPublicKey {
    /// The key as 64 hex digits.
    pub fn to_hex(&self) -> String {
        hex(self.0.as_bytes())
    }

    /// The key written as 64 hex digits.
    pub fn from_hex(text: &str) -> Option<Self> {
        VerifyingKey::from_bytes(&hex32(text)?).ok().map(Self)
    }
}

/// A segment's head as a checkpoint signs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ChainHead {
    /// The segment (`0` for a SQLite log).
    pub segment: u64,
    /// The head's number in its segment.
    pub sseq: u64,
    /// The head's hash.
    pub hash: Digest,
}

/// What a checkpoint signed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Checkpoint {
    /// When it was taken.
    pub time: Timestamp,
    /// How many records the log held.
    pub records: u64,
    /// Every segment's head, by segment.
    pub heads: Vec<ChainHead>,
}

impl Checkpoint {
    /// The text the signature covers.
    fn signed_text(&self) -> String {
        let mut text = format!(
            "toolgate checkpoint v1\n{}\n{}\n",
            self.time.unix_millis(),
            self.records
        );
        for h in &self.heads {
            text.push_str(&format!("{} {} {}\n", h.segment, h.sseq, h.hash.to_hex()));
        }
        text
    }

    /// The digest of the signed text (what the log's record names).
    pub fn digest(&self) -> Digest {
        Digest::of(self.signed_text().as_bytes())
    }

    fn line(&self, key: &CheckpointKey) -> String {
        let signature = key.0.sign(self.signed_text().as_bytes());
        let mut o = Object::new();
        o.insert("v", Value::Number(Number::from(1u64)));
        o.insert("time", Value::Number(Number::from(self.time.unix_millis())));
        o.insert("records", Value::Number(Number::from(self.records)));
        o.insert(
            "heads",
            Value::Array(
                self.heads
                    .iter()
                    .map(|h| {
                        Value::Array(vec![
                            Value::Number(Number::from(h.segment)),
                            Value::Number(Number::from(h.sseq)),
                            Value::String(h.hash.to_hex().into()),
                        ])
                    })
                    .collect(),
            ),
        );
        o.insert("key", Value::String(key.verifying().to_hex().into()));
        o.insert(
            "signature",
            Value::String(hex(&signature.to_bytes()).into()),
        );
        canonical::to_string(&Value::Object(o))
    }
}

/// Takes a checkpoint of `store` at `now`, signed with `key`: appends it
/// to the file `sink` (synced) and records it in the log (`checkpoint`,
/// its digest in the note). The checkpoint covers the records before its
/// own.
pub fn write_checkpoint(
    store: &dyn Store,
    key: &CheckpointKey,
    sink: &Path,
    now: Timestamp,
) -> Result<Checkpoint, Error> {
    let log = Log::read(store, false)?;
    let checkpoint = Checkpoint {
        time: now,
        records: log.records,
        heads: log
            .heads
            .iter()
            .map(|(&segment, &(sseq, hash))| ChainHead {
                segment,
                sseq,
                hash,
            })
            .collect(),
    };
    let mut line = checkpoint.line(key);
    line.push('\n');
    let sink_error = |e: std::io::Error| {
        Error::new(
            ErrorCode::Unavailable,
            format!("cannot write the checkpoint sink `{}`", sink.display()),
        )
        .with_source(e)
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(sink)
        .map_err(sink_error)?;
    file.write_all(line.as_bytes()).map_err(sink_error)?;
    file.sync_all().map_err(sink_error)?;
    store.append(
        AuditEntry::new(now, AuditVerdict::Checkpoint)
            .actor("toolgate")
            .note(format!(
                "checkpoint {} of {} records",
                checkpoint.digest(),
                checkpoint.records
            )),
    )?;
    Ok(checkpoint)
}

/// What [`verify_checkpoints`] found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct CheckpointReport {
    /// How many checkpoints were read.
    pub checked: u64,
    /// One line per checkpoint that does not hold, naming it (`checkpoint
    /// N`, from 1) and why.
    pub failures: Vec<String>,
}

/// Checks the log of `store` against every checkpoint in `text` (the
/// sink's lines): each must be signed by `key`, and the log must still
/// hold as many records and, in every segment, the signed head with the
/// signed hash. A log cut short (and its head rows rewritten) fails every
/// checkpoint taken after the cut.
pub fn verify_checkpoints(
    store: &dyn Store,
    key: &CheckpointPublicKey,
    text: &str,
) -> Result<CheckpointReport, Error> {
    let log = Log::read(store, true)?;
    let mut report = CheckpointReport::default();
    for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        report.checked += 1;
        let n = i + 1;
        if let Err(why) = check_one(&log, key, line) {
            report.failures.push(format!("checkpoint {n}: {why}"));
        }
    }
    Ok(report)
}

fn check_one(log: &Log, key: &CheckpointPublicKey, line: &str) -> Result<(), String> {
    let (checkpoint, signer, signature) =
        parse_line(line).ok_or_else(|| "not a checkpoint line".to_owned())?;
    if signer != *key {
        return Err("the signature is not by the configured key".to_owned());
    }
    signer
        .0
        .verify(checkpoint.signed_text().as_bytes(), &signature)
        .map_err(|_| "the signature does not match what the line says".to_owned())?;
    if log.records < checkpoint.records {
        return Err(format!(
            "the log holds {} records, fewer than the {} signed",
            log.records, checkpoint.records
        ));
    }
    for h in &checkpoint.heads {
        if log.hashes.get(&(h.segment, h.sseq)) != Some(&h.hash) {
            return Err(format!(
                "segment {} holds no record {} with the signed hash: cut or rewritten",
                h.segment, h.sseq
            ));
        }
    }
    Ok(())
}

fn parse_line(line: &str) -> Option<(Checkpoint, CheckpointPublicKey, Signature)> {
    let v = toolgate_json::from_str(line).ok()?;
    let o = v.as_object()?;
    let u = |name: &str| o.get(name)?.as_number()?.as_u64();
    let s = |name: &str| o.get(name)?.as_str();
    if u("v")? != 1 {
        return None;
    }
    let time = Timestamp::from_unix_millis(i64::try_from(u("time")?).ok()?);
    let records = u("records")?;
    let mut heads = Vec::new();
    for h in o.get("heads")?.as_array()? {
        let [segment, sseq, hash] = h.as_array()? else {
            return None;
        };
        heads.push(ChainHead {
            segment: segment.as_number()?.as_u64()?,
            sseq: sseq.as_number()?.as_u64()?,
            hash: Digest::from_bytes(hex32(hash.as_str()?)?),
        });
    }
    let key = CheckpointPublicKey::from_hex(s("key")?)?;
    let signature = Signature::from_bytes(&hex64(s("signature")?)?);
    Some((
        Checkpoint {
            time,
            records,
            heads,
        },
        key,
        signature,
    ))
}

/// The log as checkpoints see it: how many records, every record's hash
/// by (segment, number in segment), and each segment's last.
struct Log {
    records: u64,
    hashes: HashMap<(u64, u64), Digest>,
    heads: BTreeMap<u64, (u64, Digest)>,
}

impl Log {
    /// Reads every record, a page at a time, by ascending `seq`; keeps
    /// every record's hash only when `hashes` (to verify: a checkpoint
    /// being written needs the heads alone).
    fn read(store: &dyn Store, hashes: bool) -> Result<Self, Error> {
        const PAGE: u32 = 1000;
        let mut log = Self {
            records: 0,
            hashes: HashMap::new(),
            heads: BTreeMap::new(),
        };
        let mut after = None;
        loop {
            let mut filter = AuditFilter::new().limit(PAGE);
            filter.after = after;
            let page = store.list(&filter)?;
            for r in &page {
                log.records += 1;
                if hashes {
                    log.hashes.insert((r.segment, r.sseq), r.hash);
                }
                let head = log.heads.entry(r.segment).or_insert((r.sseq, r.hash));
                if r.sseq >= head.0 {
                    *head = (r.sseq, r.hash);
                }
            }
            match page.last() {
                Some(last) if page.len() == PAGE as usize => after = Some(last.seq),
                _ => return Ok(log),
            }
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hex_bytes<const N: usize>(text: &str) -> Option<[u8; N]> {
    if text.len() != 2 * N || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; N];
    for (i, slot) in out.iter_mut().enumerate() {
        *slot = u8::from_str_radix(text.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(out)
}

fn hex32(text: &str) -> Option<[u8; 32]> {
    hex_bytes::<32>(text)
}

fn hex64(text: &str) -> Option<[u8; 64]> {
    hex_bytes::<64>(text)
}
