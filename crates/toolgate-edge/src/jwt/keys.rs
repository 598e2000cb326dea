//! The issuer's keys: a JWKS (RFC 7517) read within bounds, signature keys
//! only, looked up by `kid` and `alg`.

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};

use super::Refused;

/// The largest JWKS read, in bytes.
pub const MAX_JWKS_BYTES: usize = 64 * 1024;
/// The most keys one JWKS may hold.
pub const MAX_JWKS_KEYS: usize = 32;

/// One usable key.
struct Key {
    kid: Option<String>,
    /// The `alg` the key names, if any.
    alg: Option<Algorithm>,
    /// The algorithms the key's type and curve can verify.
    fits: &'static [Algorithm],
    key: DecodingKey,
}

/// The usable keys of one JWKS.
pub(super) struct KeySet {
    keys: Vec<Key>,
}

const RSA: &[Algorithm] = &[
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
];

fn key_alg(a: &KeyAlgorithm) -> Option<Algorithm> {
    Some(match a {
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    })
}

impl KeySet {
    /// Reads a JWKS: a JSON object whose `keys` lists at most
    /// [`MAX_JWKS_KEYS`] keys. Keys that are not for signatures, symmetric,
    /// of an unknown type or curve, or whose `alg` is not an asymmetric
    /// signature algorithm are left out; two keys with one `kid` make the
    /// whole set wrong. `Err` says what is wrong.
    pub(super) fn parse(bytes: &[u8]) -> Result<Self, String> {
        if bytes.len() > MAX_JWKS_BYTES {
            return Err(format!("the JWKS is larger than {MAX_JWKS_BYTES} bytes"));
        }
        let root: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|_| "the JWKS is not JSON".to_owned())?;
        let Some(list) = root.get("keys").and_then(serde_json::Value::as_array) else {
            return Err("the JWKS has no `keys` list".into());
        };
        if list.len() > MAX_JWKS_KEYS {
            return Err(format!("the JWKS holds more than {MAX_JWKS_KEYS} keys"));
        }
        let mut keys: Vec<Key> = Vec::new();
        for value in list {
            let Ok(jwk) = serde_json::from_value::<Jwk>(value.clone()) else {
                continue;
            };
            let Some(key) = usable(&jwk) else {
                continue;
            };
            if key.kid.is_some() && keys.iter().any(|k| k.kid == key.kid) {
                return Err("two keys of the JWKS have one `kid`".into());
            }
            keys.push(key);
        }
        if keys.is_empty() {
            return Err("the JWKS holds no asymmetric signature key".into());
        }
        Ok(Self { keys })
    }

    /// The key for a token's `kid` and `alg`. Without a `kid`, the only
    /// key; a key of another family, curve or `alg` is no key for it.
    pub(super) fn find(&self, kid: Option<&str>, alg: Algorithm) -> Result<DecodingKey, Refused> {
        let key = match kid {
            Some(kid) => self.keys.iter().find(|k| k.kid.as_deref() == Some(kid)),
            None => match self.keys.as_slice() {
                [only] => Some(only),
                _ => None,
            },
        };
        let key = key.ok_or(Refused::UnknownKey)?;
        if !key.fits.contains(&alg) || key.alg.is_some_and(|a| a != alg) {
            return Err(Refused::Algorithm);
        }
        Ok(key.key.clone())
    }
}

fn usable(jwk: &Jwk) -> Option<Key> {
    if jwk
        .common
        .public_key_use
        .as_ref()
        .is_some_and(|u| *u != PublicKeyUse::Signature)
    {
        return None;
    }
    let alg = match &jwk.common.key_algorithm {
        None => None,
        Some(a) => Some(key_alg(a)?),
    };
    let fits: &'static [Algorithm] = match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => RSA,
        AlgorithmParameters::EllipticCurve(p) => match p.curve {
            EllipticCurve::P256 => &[Algorithm::ES256],
            EllipticCurve::P384 => &[Algorithm::ES384],
            _ => return None,
        },
        AlgorithmParameters::OctetKeyPair(p) => match p.curve {
            EllipticCurve::Ed25519 => &[Algorithm::EdDSA],
            _ => return None,
        },
        // A symmetric key is a shared secret: never a verifier's key.
        AlgorithmParameters::OctetKey(_) => return None,
    };
    if alg.is_some_and(|a| !fits.contains(&a)) {
        return None;
    }
    let key = DecodingKey::from_jwk(jwk).ok()?;
    Some(Key {
        kid: jwk.common.key_id.clone(),
        alg,
        fits,
        key,
    })
}
