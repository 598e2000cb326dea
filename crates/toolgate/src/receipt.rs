//! Signed receipts: what the gate decided about one call, in a form the
//! service that executes the call can check without asking the gate.
//!
//! A gate given a [`ReceiptKey`] ([`GateBuilder::receipts`], or `[gate]
//! receipt_key` in the config) signs, for every call whose arguments parsed,
//! a short-lived receipt binding the call id, the tool, the SHA-256 digest of
//! the canonical arguments, the verdict and an expiry
//! ([`Decision::receipt`]). The executor checks it with [`verify`] against
//! the tool it is about to run, the exact argument text it is about to run
//! with, the gate's public key and its own clock: only a receipt the key
//! signed, for an *allow*, for that tool, for those arguments, not expired,
//! passes.
//!
//! The receipt's text is `tgr1.<payload>.<signature>`: the payload is the
//! canonical JSON object `{"args": "sha256:<hex>", "call_id": <string or
//! null>, "exp": <unix seconds>, "iat": <unix seconds>, "tool": <name>,
//! "v": 1, "verdict": "allow" | "needs_approval" | "deny"}`, both parts in
//! unpadded URL-safe base64; the Ed25519 signature covers
//! `toolgate receipt v1\n` followed by the payload's bytes.
//!
//! A receipt is valid until it expires, not once: an executor that must run
//! a call at most once remembers the call ids of the receipts it ran until
//! their expiry (`docs/src/receipts.md` describes the whole contract).
//!
//! [`GateBuilder::receipts`]: crate::GateBuilder::receipts
//! [`Decision::receipt`]: crate::Decision::receipt

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use ed25519_dalek::{Signature, Signer as _, SigningKey, VerifyingKey};
use toolgate_json::canonical::{self, Digest};
use toolgate_json::{Number, Object, Value};

use crate::decision::Verdict;

/// What a receipt's text starts with (its format's version).
pub const RECEIPT_PREFIX: &str = "tgr1";
/// The longest receipt text [`verify`] reads, in bytes.
pub const MAX_RECEIPT_BYTES: usize = 4096;
/// How long a receipt is valid when the config sets no `receipt_seconds`.
pub const DEFAULT_RECEIPT_SECONDS: u64 = 60;
/// The longest validity a config may give receipts (`receipt_seconds`).
pub const MAX_RECEIPT_SECONDS: u64 = 3600;

/// What the signature covers before the payload: no other toolgate
/// signature (an audit checkpoint) can be passed off as a receipt.
const DOMAIN: &[u8] = b"toolgate receipt v1\n";

/// The secret key that signs receipts (an Ed25519 seed), with the validity
/// of the receipts it signs.
pub struct ReceiptKey {
    key: SigningKey,
    seconds: u64,
    /// The clock receipts are issued by (unix seconds): the system's unless
    /// a test sets one. Never the caller's context, whose `now` the caller
    /// writes: a receipt's times are the gate's own.
    clock: Option<Arc<dyn Fn() -> u64 + Send + Sync>>,
}

impl fmt::Debug for ReceiptKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Never the secret.
        f.debug_struct("ReceiptKey")
            .field("public", &self.public_key().to_hex())
            .field("seconds", &self.seconds)
            .finish()
    }
}

impl ReceiptKey {
    /// The key with this seed; its receipts are valid
    /// [`DEFAULT_RECEIPT_SECONDS`].
    pub fn from_seed(seed: [u8; 32]) -> Self {
        Self {
            key: SigningKey::from_bytes(&seed),
            seconds: DEFAULT_RECEIPT_SECONDS,
            clock: None,
        }
    }

    /// The same key, issuing receipts at the time `clock` reads (unix
    /// seconds) instead of the system clock's: for tests.
    pub fn with_clock(mut self, clock: Arc<dyn Fn() -> u64 + Send + Sync>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// The time receipts are issued at now, unix seconds.
    pub(crate) fn now(&self) -> u64 {
        match &self.clock {
            Some(clock) => clock(),
            None => SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs()),
        }
    }

    /// The key in the file at `path`: its seed as 64 hex digits (spaces
    /// and a final newline allowed; the format of the audit checkpoint
    /// key). The error never repeats the file's content.
    pub fn from_file(path: &Path) -> Result<Self, ReceiptKeyError> {
        let text = crate::fsread::read_to_string(path).map_err(|e| ReceiptKeyError {
            message: format!("cannot read the receipt key `{}`: {e}", path.display()),
        })?;
        let seed = hex32(text.trim()).ok_or_else(|| ReceiptKeyError {
            message: format!("the receipt key `{}` is not 64 hex digits", path.display()),
        })?;
        Ok(Self::from_seed(seed))
    }

    /// The same key, its receipts valid `seconds` (at least 1).
    pub fn with_seconds(mut self, seconds: u64) -> Self {
        self.seconds = seconds.max(1);
        self
    }

    /// How long the receipts this key signs are valid, in seconds.
    pub fn seconds(&self) -> u64 {
        self.seconds
    }

    /// The public key that verifies this key's receipts.
    pub fn public_key(&self) -> ReceiptPublicKey {
        ReceiptPublicKey(self.key.verifying_key())
    }

    /// Signs `claims` as a receipt's text.
    pub(crate) fn sign(&self, claims: &Receipt) -> String {
        self.sign_payload(&claims.payload())
    }

    /// Signs a payload's text as a receipt's text.
    fn sign_payload(&self, payload: &str) -> String {
        let mut signed = Vec::with_capacity(DOMAIN.len() + payload.len());
        signed.extend_from_slice(DOMAIN);
        signed.extend_from_slice(payload.as_bytes());
        let signature = self.key.sign(&signed);
        format!(
            "{RECEIPT_PREFIX}.{}.{}",
            URL_SAFE_NO_PAD.encode(payload.as_bytes()),
            URL_SAFE_NO_PAD.encode(signature.to_bytes())
        )
    }

    /// A receipt of `verdict` on a call, issued now.
    pub(crate) fn issue(
        &self,
        call_id: Option<&str>,
        tool: &str,
        digest: &Digest,
        verdict: Verdict,
    ) -> IssuedReceipt {
        let now = self.now();
        let claims = Receipt {
            call_id: call_id.map(str::to_owned),
            tool: tool.to_owned(),
            args: digest.to_string(),
            verdict,
            issued: now,
            expires: now.saturating_add(self.seconds),
        };
        IssuedReceipt {
            text: self.sign(&claims),
            claims,
        }
    }
}

/// Why a receipt key could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptKeyError {
    message: String,
}

impl fmt::Display for ReceiptKeyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ReceiptKeyError {}

/// The public key that verifies receipts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReceiptPublicKey(VerifyingKey);

impl ReceiptPublicKey {
    /// The key written as 64 hex digits; `None` if it is not a valid
    /// Ed25519 public key in that form.
    pub fn from_hex(text: &str) -> Option<Self> {
        let bytes = hex32(text.trim())?;
        VerifyingKey::from_bytes(&bytes).ok().map(Self)
    }

    /// The key as 64 lower-case hex digits.
    pub fn to_hex(&self) -> String {
        hex(self.0.as_bytes())
    }
}

impl fmt::Display for ReceiptPublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// What a receipt says: the claims the gate signed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Receipt {
    /// The provider's call id, if the call had one.
    pub call_id: Option<String>,
    /// The tool's name.
    pub tool: String,
    /// The digest of the canonical arguments: `sha256:` and 64 hex digits.
    pub args: String,
    /// The verdict.
    pub verdict: Verdict,
    /// When it was issued, unix seconds.
    pub issued: u64,
    /// When it expires, unix seconds: valid while `now < expires`.
    pub expires: u64,
}

impl Receipt {
    /// The payload's canonical JSON text.
    fn payload(&self) -> String {
        let mut o = Object::new();
        o.insert("args", Value::String(self.args.clone().into()));
        o.insert(
            "call_id",
            self.call_id
                .clone()
                .map_or(Value::Null, |c| Value::String(c.into())),
        );
        o.insert("exp", Value::Number(Number::from(self.expires)));
        o.insert("iat", Value::Number(Number::from(self.issued)));
        o.insert("tool", Value::String(self.tool.clone().into()));
        o.insert("v", Value::Number(Number::from(1_u64)));
        o.insert("verdict", Value::String(self.verdict.as_str().into()));
        canonical::to_string(&Value::Object(o))
    }

    /// Reads a payload's text: exactly the members above, each of its type.
    fn from_payload(text: &str) -> Option<Self> {
        let value = toolgate_json::from_str(text).ok()?;
        let o = value.as_object()?;
        if o.len() != 7 || o.get("v")?.as_number()?.as_u64()? != 1 {
            return None;
        }
        let string = |k: &str| o.get(k).and_then(Value::as_str).map(str::to_owned);
        let seconds = |k: &str| o.get(k).and_then(Value::as_number).and_then(|n| n.as_u64());
        let verdict = match o.get("verdict")?.as_str()? {
            "allow" => Verdict::Allow,
            "needs_approval" => Verdict::NeedsApproval,
            "deny" => Verdict::Deny,
            _ => return None,
        };
        let call_id = match o.get("call_id")? {
            Value::Null => None,
            Value::String(s) => Some(s.to_string()),
            _ => return None,
        };
        Some(Self {
            call_id,
            tool: string("tool")?,
            args: string("args")?,
            verdict,
            issued: seconds("iat")?,
            expires: seconds("exp")?,
        })
    }
}

/// A receipt as the gate issued it: its text and what it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IssuedReceipt {
    pub(crate) text: String,
    pub(crate) claims: Receipt,
}

/// Why [`verify`] refused a receipt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ReceiptError {
    /// `receipt_malformed`: not a receipt's text (wrong prefix, not three
    /// parts, not base64, too long, a payload that is not the signed
    /// object).
    Malformed,
    /// `receipt_bad_signature`: the signature is not by this key over this
    /// payload (forged, altered, or signed by another gate's key).
    BadSignature,
    /// `receipt_not_allowed`: the gate did not allow the call (a deny, or a
    /// call held for approval).
    NotAllowed,
    /// `receipt_other_tool`: the receipt is for another tool.
    OtherTool,
    /// `receipt_other_arguments`: the receipt is for other arguments (their
    /// canonical text's digest differs).
    OtherArguments,
    /// `receipt_expired`: the receipt's time has passed.
    Expired,
}

impl ReceiptError {
    /// The stable code, such as `receipt_expired`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Malformed => "receipt_malformed",
            Self::BadSignature => "receipt_bad_signature",
            Self::NotAllowed => "receipt_not_allowed",
            Self::OtherTool => "receipt_other_tool",
            Self::OtherArguments => "receipt_other_arguments",
            Self::Expired => "receipt_expired",
        }
    }
}

impl fmt::Display for ReceiptError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let what = match self {
            Self::Malformed => "not a toolgate receipt",
            Self::BadSignature => "the signature is not the gate's over this receipt",
            Self::NotAllowed => "the gate did not allow this call",
            Self::OtherTool => "the receipt is for another tool",
            Self::OtherArguments => "the receipt is for other arguments",
            Self::Expired => "the receipt has expired",
        };
        write!(f, "{}: {what}", self.as_str())
    }
}

impl std::error::Error for ReceiptError {}

/// Checks that `receipt` lets the executor run `tool` with exactly
/// `arguments` (the canonical argument text the decision carried, byte for
/// byte) at `now` (unix seconds): signed by `key`, verdict allow, for that
/// tool, for the SHA-256 of those bytes, and `now` before its expiry.
/// Returns what the receipt says (its call id, to refuse a second run of
/// one call).
///
/// The signature is checked before anything in the payload is believed;
/// arguments written differently (members reordered, spaces, another
/// spelling of a number) are other arguments: run the canonical text.
pub fn verify(
    receipt: &str,
    tool: &str,
    arguments: &str,
    key: &ReceiptPublicKey,
    now: u64,
) -> Result<Receipt, ReceiptError> {
    if receipt.len() > MAX_RECEIPT_BYTES {
        return Err(ReceiptError::Malformed);
    }
    let mut parts = receipt.split('.');
    let (Some(RECEIPT_PREFIX), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(ReceiptError::Malformed);
    };
    let payload = URL_SAFE_NO_PAD
        .decode(payload)
        .map_err(|_| ReceiptError::Malformed)?;
    let signature: [u8; 64] = URL_SAFE_NO_PAD
        .decode(signature)
        .ok()
        .and_then(|s| s.try_into().ok())
        .ok_or(ReceiptError::Malformed)?;
    let mut signed = Vec::with_capacity(DOMAIN.len() + payload.len());
    signed.extend_from_slice(DOMAIN);
    signed.extend_from_slice(&payload);
    key.0
        .verify_strict(&signed, &Signature::from_bytes(&signature))
        .map_err(|_| ReceiptError::BadSignature)?;
    let claims = std::str::from_utf8(&payload)
        .ok()
        .and_then(Receipt::from_payload)
        .ok_or(ReceiptError::Malformed)?;
    if claims.verdict != Verdict::Allow {
        return Err(ReceiptError::NotAllowed);
    }
    if claims.tool != tool {
        return Err(ReceiptError::OtherTool);
    }
    if claims.args != Digest::of(arguments.as_bytes()).to_string() {
        return Err(ReceiptError::OtherArguments);
    }
    if now >= claims.expires {
        return Err(ReceiptError::Expired);
    }
    Ok(claims)
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        for nibble in [b >> 4, b & 0x0f] {
            out.push(char::from_digit(u32::from(nibble), 16).unwrap_or('0'));
        }
    }
    out
}

/// 64 hex digits (spaces between them ignored) as 32 bytes.
fn hex32(text: &str) -> Option<[u8; 32]> {
    let digits: Vec<u8> = text
        .bytes()
        .filter(|b| !b.is_ascii_whitespace())
        .map(|b| {
            char::from(b)
                .to_digit(16)
                .and_then(|d| u8::try_from(d).ok())
        })
        .collect::<Option<_>>()?;
    if digits.len() != 64 {
        return None;
    }
    let mut out = [0_u8; 32];
    for (slot, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        if let [high, low] = pair {
            *slot = (high << 4) | low;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    #[test]
    fn a_payload_reads_back_as_written() {
        let key = ReceiptKey::from_seed([7; 32]).with_clock(Arc::new(|| 100));
        let issued = key.issue(Some("call_1"), "refund", &Digest::of(b"{}"), Verdict::Allow);
        let back = Receipt::from_payload(&issued.claims.payload()).unwrap();
        assert_eq!(back, issued.claims);
        assert_eq!(back.expires, 100 + DEFAULT_RECEIPT_SECONDS);
        assert!(issued.text.starts_with("tgr1."));
    }

    #[test]
    fn a_signed_payload_that_is_not_a_receipts_object_is_malformed() {
        let key = ReceiptKey::from_seed([7; 32]);
        let public = key.public_key();
        let good = key
            .issue(None, "t", &Digest::of(b"{}"), Verdict::Allow)
            .claims
            .payload();
        let extra = good.replacen('{', r#"{"admin":true,"#, 1);
        for payload in [
            "",
            "[]",
            "not json",
            r#"{"v":1}"#,
            good.replace(r#""v":1"#, r#""v":2"#).as_str(),
            good.replace(r#""verdict":"allow""#, r#""verdict":"yes""#)
                .as_str(),
            good.replace(r#""call_id":null"#, r#""call_id":7"#).as_str(),
            extra.as_str(),
        ] {
            let text = key.sign_payload(payload);
            assert_eq!(
                verify(&text, "t", "{}", &public, 0),
                Err(ReceiptError::Malformed),
                "{payload}"
            );
        }
        // The well-formed one passes.
        assert!(verify(&key.sign_payload(&good), "t", "{}", &public, 0).is_ok());
    }

    #[test]
    fn hex_keys_round_trip() {
        let key = ReceiptKey::from_seed([9; 32]).public_key();
        assert_eq!(ReceiptPublicKey::from_hex(&key.to_hex()), Some(key));
        assert_eq!(ReceiptPublicKey::from_hex("00"), None);
        assert_eq!(hex32(&"zz".repeat(32)), None);
    }
}
