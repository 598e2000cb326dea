//! The webhook's signature: HMAC-SHA256, under the sink's key, over the
//! decimal Unix time in seconds, a full stop, and the body's bytes:
//!
//! ```text
//! X-Toolgate-Timestamp: 1767225600
//! X-Toolgate-Signature: v1=HEX(HMAC-SHA256(key, "1767225600" + "." + body))
//! ```
//!
//! A receiver recomputes it over the body exactly as received, compares in
//! constant time, and refuses a timestamp more than [`MAX_AGE_SECONDS`]
//! from its own clock: a body captured on the way cannot be replayed later,
//! and a body or timestamp changed on the way does not verify.
//! [`verify`] is that check, for receivers written in Rust.

use hmac::{Hmac, Mac};
use sha2::Sha256;

/// The header carrying the timestamp.
pub const TIMESTAMP_HEADER: &str = "x-toolgate-timestamp";
/// The header carrying the signature.
pub const SIGNATURE_HEADER: &str = "x-toolgate-signature";
/// How far a receiver should accept a timestamp from its own clock, either
/// way: five minutes.
pub const MAX_AGE_SECONDS: u64 = 300;

type HmacSha256 = Hmac<Sha256>;

/// The MAC over `timestamp`, a full stop and `body`; `None` only if the
/// HMAC refused the key (it takes keys of any length).
fn mac(key: &[u8], timestamp: &str, body: &[u8]) -> Option<HmacSha256> {
    let mut mac = <HmacSha256 as Mac>::new_from_slice(key).ok()?;
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    Some(mac)
}

/// The `X-Toolgate-Signature` value of `body` sent at `timestamp` (Unix
/// seconds); `None` if the key cannot key an HMAC.
pub fn signature(key: &[u8], timestamp: u64, body: &[u8]) -> Option<String> {
    let tag = mac(key, &timestamp.to_string(), body)?
        .finalize()
        .into_bytes();
    let hex: String = tag.iter().map(|b| format!("{b:02x}")).collect();
    Some(format!("v1={hex}"))
}

/// Why a notice did not verify.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum VerifyError {
    /// The timestamp is not a decimal number of seconds.
    MalformedTimestamp,
    /// The timestamp is more than [`MAX_AGE_SECONDS`] from now: a replay,
    /// or clocks too far apart.
    Stale,
    /// The signature is not `v1=` and 64 hexadecimal digits.
    MalformedSignature,
    /// The signature does not match the body and timestamp.
    Mismatch,
}

/// Checks a received notice: `timestamp` and `signature` as their headers
/// carried them, `body` as received, `now` the receiver's Unix time in
/// seconds.
///
/// # Errors
///
/// [`VerifyError`] says which check failed.
pub fn verify(
    key: &[u8],
    timestamp: &str,
    body: &[u8],
    signature: &str,
    now: u64,
) -> Result<(), VerifyError> {
    if timestamp.is_empty()
        || timestamp.len() > 20
        || !timestamp.bytes().all(|b| b.is_ascii_digit())
    {
        return Err(VerifyError::MalformedTimestamp);
    }
    let sent: u64 = timestamp
        .parse()
        .map_err(|_| VerifyError::MalformedTimestamp)?;
    if sent.abs_diff(now) > MAX_AGE_SECONDS {
        return Err(VerifyError::Stale);
    }
    let hex = signature
        .strip_prefix("v1=")
        .filter(|h| h.len() == 64)
        .ok_or(VerifyError::MalformedSignature)?;
    let mut tag = [0u8; 32];
    for (i, slot) in tag.iter_mut().enumerate() {
        let pair = hex
            .get(2 * i..2 * i + 2)
            .ok_or(VerifyError::MalformedSignature)?;
        *slot = u8::from_str_radix(pair, 16).map_err(|_| VerifyError::MalformedSignature)?;
    }
    // `verify_slice` compares in constant time.
    mac(key, timestamp, body)
        .ok_or(VerifyError::Mismatch)?
        .verify_slice(&tag)
        .map_err(|_| VerifyError::Mismatch)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]
    use super::*;

    const KEY: &[u8] = b"0123456789abcdef-key";

    #[test]
    fn a_signed_body_verifies_and_nothing_else_does() {
        let body = br#"{"id":"7"}"#;
        let sig = signature(KEY, 1_000_000, body).unwrap();
        assert!(verify(KEY, "1000000", body, &sig, 1_000_010).is_ok());
        // The body, the timestamp or the key changed on the way.
        let e = verify(KEY, "1000000", br#"{"id":"8"}"#, &sig, 1_000_010);
        assert_eq!(e, Err(VerifyError::Mismatch));
        assert_eq!(
            verify(KEY, "1000001", body, &sig, 1_000_010),
            Err(VerifyError::Mismatch)
        );
        assert_eq!(
            verify(b"another key of 16+", "1000000", body, &sig, 1_000_010),
            Err(VerifyError::Mismatch)
        );
        // Replayed after the window, or from the future.
        assert_eq!(
            verify(KEY, "1000000", body, &sig, 1_000_000 + MAX_AGE_SECONDS + 1),
            Err(VerifyError::Stale)
        );
        assert_eq!(
            verify(KEY, "1000000", body, &sig, 1_000_000 - MAX_AGE_SECONDS - 1),
            Err(VerifyError::Stale)
        );
        for bad in ["", "-1", "1e6", " 1000000", "99999999999999999999999"] {
            assert_eq!(
                verify(KEY, bad, body, &sig, 1_000_000),
                Err(VerifyError::MalformedTimestamp),
                "{bad:?}"
            );
        }
        let unprefixed = sig.get(3..).unwrap();
        for bad in ["", "v1=", "v2=00", unprefixed, &format!("{sig}0"), "v1=zz"] {
            assert_eq!(
                verify(KEY, "1000000", body, bad, 1_000_000),
                Err(VerifyError::MalformedSignature),
                "{bad:?}"
            );
        }
    }
}
