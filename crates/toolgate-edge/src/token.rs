//! Tokens: how a request presents one, and how it is matched against the
//! configured SHA-256 hashes. One spelling rule and one comparison for
//! every front end.
//!
//! A token is presented either as `Authorization: Bearer TOKEN` (the
//! service, the MCP endpoint) or as the whole value of a named header (the
//! API proxy's `x-toolgate-token`, beside the application's own API key).
//! Either way the request must carry exactly one such header, and `TOKEN`
//! must be 1 to [`MAX_TOKEN_BYTES`] visible ASCII characters: no space, no
//! control character, nothing trimmed. The scheme `Bearer` is matched
//! without regard to case (RFC 9110 §11.1) and followed by exactly one
//! space. Anything else is [`Presented::Malformed`], never a guess.
//!
//! The presented token's SHA-256 is compared with every configured hash in
//! constant time, and with all of them (no early exit on a match).

use axum::http::{header, HeaderMap};
use sha2::{Digest as _, Sha256};

/// The longest token accepted, in bytes.
pub const MAX_TOKEN_BYTES: usize = 4096;

/// What a request presented.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Presented {
    /// No such header.
    Missing,
    /// More than one such header: which one counts would be up to each hop
    /// that reads them, so none does.
    Duplicate,
    /// A header that is not a token of the accepted spelling.
    Malformed,
    /// A token of the accepted spelling: its SHA-256.
    Token(TokenDigest),
}

/// The SHA-256 of a presented token (what configs hold).
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct TokenDigest([u8; 32]);

impl std::fmt::Debug for TokenDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // A digest of a secret: never printed whole.
        f.write_str("TokenDigest(…)")
    }
}

impl TokenDigest {
    /// The digest of `token`.
    pub fn of(token: &[u8]) -> Self {
        Self(Sha256::digest(token).into())
    }

    /// A digest kept from an earlier request (a login session's).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// Its 32 bytes.
    pub fn bytes(&self) -> &[u8; 32] {
        &self.0
    }

    /// Whether it equals `configured`, in time that does not depend on
    /// where they differ.
    pub fn matches(&self, configured: &[u8; 32]) -> bool {
        let mut diff = 0u8;
        for (x, y) in self.0.iter().zip(configured) {
            diff |= x ^ y;
        }
        diff == 0
    }

    /// The configured token whose hash (`sha256(token)`) equals this
    /// digest; every hash is compared.
    pub fn find<'t, T>(
        &self,
        tokens: impl IntoIterator<Item = &'t T>,
        sha256: impl Fn(&T) -> &[u8; 32],
    ) -> Option<&'t T>
    where
        T: 't,
    {
        let mut found = None;
        for t in tokens {
            if self.matches(sha256(t)) {
                found = Some(t);
            }
        }
        found
    }
}

/// Whether `token` is of the accepted spelling.
fn well_formed(token: &[u8]) -> bool {
    !token.is_empty()
        && token.len() <= MAX_TOKEN_BYTES
        && token.iter().all(|b| (0x21..=0x7e).contains(b))
}

/// The token of `Authorization: Bearer TOKEN`.
pub fn bearer(headers: &HeaderMap) -> Presented {
    presented(headers, header::AUTHORIZATION.as_str(), bearer_value)
}

/// The token that is the whole value of the header `name`.
pub fn in_header(headers: &HeaderMap, name: &str) -> Presented {
    presented(headers, name, |v| Some(v))
}

/// The text of the token [`bearer`] reads, when it reads one: what a JWT
/// is verified from.
pub fn bearer_text(headers: &HeaderMap) -> Option<&str> {
    text(headers, header::AUTHORIZATION.as_str(), bearer_value)
}

/// The text of the token [`in_header`] reads, when it reads one.
pub fn in_header_text<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    text(headers, name, |v| Some(v))
}

fn bearer_value(v: &[u8]) -> Option<&[u8]> {
    let (scheme, token) = v.split_at_checked(7)?;
    scheme.eq_ignore_ascii_case(b"bearer ").then_some(token)
}

fn text<'h>(
    headers: &'h HeaderMap,
    name: &str,
    token: impl Fn(&[u8]) -> Option<&[u8]>,
) -> Option<&'h str> {
    let mut all = headers.get_all(name).iter();
    let (Some(value), None) = (all.next(), all.next()) else {
        return None;
    };
    let t = token(value.as_bytes()).filter(|t| well_formed(t))?;
    // Visible ASCII: the tail of the header value, as text.
    let start = value.len() - t.len();
    value.to_str().ok()?.get(start..)
}

fn presented(headers: &HeaderMap, name: &str, token: impl Fn(&[u8]) -> Option<&[u8]>) -> Presented {
    let mut all = headers.get_all(name).iter();
    let Some(value) = all.next() else {
        return Presented::Missing;
    };
    if all.next().is_some() {
        return Presented::Duplicate;
    }
    match token(value.as_bytes()) {
        Some(t) if well_formed(t) => Presented::Token(TokenDigest::of(t)),
        _ => Presented::Malformed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn with(values: &[&[u8]]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::AUTHORIZATION, HeaderValue::from_bytes(v).unwrap());
        }
        h
    }

    #[test]
    fn one_spelling_is_a_token() {
        let d = TokenDigest::of(b"tok-1");
        for ok in [&b"Bearer tok-1"[..], b"bearer tok-1", b"BEARER tok-1"] {
            assert_eq!(bearer(&with(&[ok])), Presented::Token(d), "{ok:?}");
        }
        for bad in [
            &b"Bearer"[..],
            b"Bearer ",
            b"Bearer  tok-1",
            b"Bearer tok-1 ",
            b"Bearer\ttok-1",
            b"Bearer tok\t1",
            b"Basic tok-1",
            b"tok-1",
            b"Bearer t\xc3\xa9",
        ] {
            assert_eq!(bearer(&with(&[bad])), Presented::Malformed, "{bad:?}");
        }
        assert_eq!(bearer_text(&with(&[b"bEaReR tok-1"])), Some("tok-1"));
        assert_eq!(bearer_text(&with(&[b"Bearer tok-1 "])), None);
        assert_eq!(bearer_text(&with(&[b"Bearer a", b"Bearer a"])), None);
        assert_eq!(bearer(&HeaderMap::new()), Presented::Missing);
        assert_eq!(
            bearer(&with(&[b"Bearer tok-1", b"Bearer tok-1"])),
            Presented::Duplicate
        );
        let long = format!("Bearer {}", "a".repeat(MAX_TOKEN_BYTES + 1));
        assert_eq!(bearer(&with(&[long.as_bytes()])), Presented::Malformed);
    }

    #[test]
    fn a_named_header_holds_the_token_alone() {
        let mut h = HeaderMap::new();
        h.append("x-token", HeaderValue::from_static("tok-1"));
        assert_eq!(
            in_header(&h, "x-token"),
            Presented::Token(TokenDigest::of(b"tok-1"))
        );
        h.insert("x-token", HeaderValue::from_static("Bearer tok-1"));
        assert_eq!(in_header(&h, "x-token"), Presented::Malformed);
    }

    #[test]
    fn every_hash_is_compared_and_the_match_found() {
        let tokens = [
            (TokenDigest::of(b"a").0, "alice"),
            (TokenDigest::of(b"b").0, "bob"),
        ];
        let d = TokenDigest::of(b"b");
        assert_eq!(d.find(&tokens, |t| &t.0).map(|t| t.1), Some("bob"));
        assert!(TokenDigest::of(b"c").find(&tokens, |t| &t.0).is_none());
        let mut near = *d.bytes();
        near[31] ^= 1;
        assert!(!d.matches(&near));
        assert!(d.matches(d.bytes()));
        assert_eq!(format!("{d:?}"), "TokenDigest(…)");
    }
}
