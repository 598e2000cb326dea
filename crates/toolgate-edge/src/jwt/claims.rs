//! A token's header, its signature, and its claims against the config.

use crate::config::{JwtConfig, ServerRole};
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::{Map, Value};

use super::{Identity, Refused};

/// The header fields read before the signature is checked.
pub(super) struct Header {
    pub(super) alg: String,
    pub(super) kid: Option<String>,
}

/// The token's header: one JSON object with a string `alg`, an optional
/// string `kid`, and no `crit` (no extension is understood, so none may be
/// critical).
pub(super) fn header(token: &str) -> Result<Header, Refused> {
    let first = token.split('.').next().ok_or(Refused::Malformed)?;
    let bytes = URL_SAFE_NO_PAD
        .decode(first)
        .map_err(|_| Refused::Malformed)?;
    let value: Value = serde_json::from_slice(&bytes).map_err(|_| Refused::Malformed)?;
    let object = value.as_object().ok_or(Refused::Malformed)?;
    if object.contains_key("crit") {
        return Err(Refused::Malformed);
    }
    let alg = object
        .get("alg")
        .and_then(Value::as_str)
        .ok_or(Refused::Malformed)?
        .to_owned();
    let kid = match object.get("kid") {
        None => None,
        Some(Value::String(k)) => Some(k.clone()),
        Some(_) => return Err(Refused::Malformed),
    };
    Ok(Header { alg, kid })
}

/// The `alg`, if the config allows it. The config allows asymmetric
/// algorithms only; `none` and HMAC are refused here whatever it says.
pub(super) fn allowed_alg(alg: &str, allowed: &[String]) -> Result<Algorithm, Refused> {
    if !allowed.iter().any(|a| a == alg) {
        return Err(Refused::Algorithm);
    }
    let alg = match alg {
        "RS256" => Algorithm::RS256,
        "RS384" => Algorithm::RS384,
        "RS512" => Algorithm::RS512,
        "PS256" => Algorithm::PS256,
        "PS384" => Algorithm::PS384,
        "PS512" => Algorithm::PS512,
        "ES256" => Algorithm::ES256,
        "ES384" => Algorithm::ES384,
        "EdDSA" => Algorithm::EdDSA,
        _ => return Err(Refused::Algorithm),
    };
    Ok(alg)
}

/// The claims, once the signature verifies with `key` under `alg` (and
/// nothing else: every claim is checked by [`check`]).
pub(super) fn verified(
    token: &str,
    key: &DecodingKey,
    alg: Algorithm,
) -> Result<Map<String, Value>, Refused> {
    let mut v = Validation::new(alg);
    v.validate_exp = false;
    v.validate_nbf = false;
    v.validate_aud = false;
    v.required_spec_claims.clear();
    match jsonwebtoken::decode::<Map<String, Value>>(token, key, &v) {
        Ok(data) => Ok(data.claims),
        Err(e) => Err(match e.kind() {
            jsonwebtoken::errors::ErrorKind::InvalidSignature => Refused::Signature,
            jsonwebtoken::errors::ErrorKind::InvalidAlgorithm
            | jsonwebtoken::errors::ErrorKind::InvalidAlgorithmName => Refused::Algorithm,
            // A key that cannot verify (a bad modulus) or a signature that
            // is not even of the key's size: no valid signature.
            jsonwebtoken::errors::ErrorKind::InvalidEcdsaKey
            | jsonwebtoken::errors::ErrorKind::InvalidRsaKey(_)
            | jsonwebtoken::errors::ErrorKind::Crypto(_) => Refused::Signature,
            _ => Refused::Malformed,
        }),
    }
}

/// A NumericDate claim: a non-negative number of seconds.
fn seconds(claims: &Map<String, Value>, name: &str) -> Result<Option<u64>, Refused> {
    match claims.get(name) {
        None => Ok(None),
        Some(v) => {
            if let Some(n) = v.as_u64() {
                Ok(Some(n))
            } else if let Some(f) = v.as_f64().filter(|f| f.is_finite() && *f >= 0.0) {
                // Fractions of a second are allowed (RFC 7519 §2);
                // truncation is within the leeway (`as` saturates).
                Ok(Some(f as u64))
            } else {
                Err(Refused::Malformed)
            }
        }
    }
}

/// A claim that is a string or a list of strings, as a list; anything else
/// (a number, an object, a list with a non-string) is `None`.
fn strings(v: &Value) -> Option<Vec<&str>> {
    match v {
        Value::String(s) => Some(vec![s.as_str()]),
        Value::Array(items) => items.iter().map(Value::as_str).collect(),
        _ => None,
    }
}

/// The claims against the config at clock time `now`, `aud` against
/// `audiences` (the contract's steps 5 to 8).
pub(super) fn check(
    claims: &Map<String, Value>,
    config: &JwtConfig,
    audiences: &[String],
    now: u64,
) -> Result<Identity, Refused> {
    let leeway = config.leeway().as_secs();
    let exp = seconds(claims, "exp")
        .map_err(|_| Refused::Expired)?
        .ok_or(Refused::Expired)?;
    if now >= exp.saturating_add(leeway) {
        return Err(Refused::Expired);
    }
    for name in ["nbf", "iat"] {
        if let Some(t) = seconds(claims, name).map_err(|_| Refused::NotYetValid)? {
            if t > now.saturating_add(leeway) {
                return Err(Refused::NotYetValid);
            }
        }
    }
    if claims.get("iss").and_then(Value::as_str) != Some(config.issuer()) {
        return Err(Refused::Issuer);
    }
    let aud = claims
        .get("aud")
        .and_then(strings)
        .ok_or(Refused::Audience)?;
    if !aud.iter().any(|a| audiences.iter().any(|c| c == a)) {
        return Err(Refused::Audience);
    }
    let user = claims
        .get(config.user_claim())
        .and_then(Value::as_str)
        .ok_or(Refused::User)?;
    crate::config::check_user_name(user).map_err(|_| Refused::User)?;
    let role = role(claims, config)?;
    Ok(Identity {
        user: user.to_owned(),
        role,
    })
}

/// The highest role a value of the roles claim grants, else the default.
fn role(claims: &Map<String, Value>, config: &JwtConfig) -> Result<ServerRole, Refused> {
    let mut best: Option<ServerRole> = None;
    if let Some(name) = config.roles_claim() {
        let values = match claims.get(name) {
            None => Vec::new(),
            Some(v) => strings(v).ok_or(Refused::Role)?,
        };
        for (role, grants) in config.roles() {
            if values.iter().any(|v| grants.iter().any(|g| g == v)) {
                best = best.max(Some(*role));
            }
        }
    }
    best.or(config.default_role()).ok_or(Refused::Role)
}
