//! JSON Web Tokens from the organisation's identity provider: the one rule
//! every front end checks a JWT bearer token with (`[jwt]` in the config).
//!
//! # The contract
//!
//! A token is accepted only when all of these hold, checked in this order;
//! the first that fails is the [`Refused`] answer (a stable code, never an
//! echo of the token):
//!
//! 1. It is at most [`crate::token::MAX_TOKEN_BYTES`] bytes: three
//!    base64url parts, a header that is one JSON object without `crit`.
//! 2. Its `alg` is one of the configured asymmetric algorithms. `none` and
//!    the HMAC algorithms are never accepted, so a public key can never be
//!    used as a shared secret.
//! 3. Its `kid` names a key of the issuer's JWKS (a token without `kid` is
//!    accepted only when the JWKS holds one key), of the family of its
//!    `alg`, and of that `alg` when the key names one. An unknown `kid`
//!    makes a JWKS read from a URL be fetched again, at most once every
//!    [`UNKNOWN_KID_REFRESH`] (a stream of made-up `kid`s costs the
//!    identity provider one request per interval, not one per token).
//! 4. The signature verifies.
//! 5. `exp` is present and not past, `nbf` and `iat` (when present) not in
//!    the future, each with the configured leeway (default 30 seconds).
//! 6. `iss` is the configured issuer; `aud` (a string or a list) names one
//!    of the configured audiences.
//! 7. The user claim (default `sub`) is a string that is a valid user
//!    name (toolgate's one rule: no control characters, at most 256 bytes).
//! 8. A role follows from the roles claim (the highest configured role one
//!    of its values grants) or the default role.
//!
//! A JWKS is at most [`MAX_JWKS_BYTES`] and [`MAX_JWKS_KEYS`] keys; keys of
//! other uses (`use` other than `sig`) and symmetric keys (`kty: oct`) are
//! left out. A JWKS URL is fetched at start (a start that cannot read the
//! keys fails), then every `refresh_seconds`; a fetch that fails keeps the
//! keys already held. Each fetch has [`FETCH_TIMEOUT`], follows no
//! redirect, and needs a `200` answer.

mod claims;
mod fetch;
mod keys;
mod resource;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, Weak};
use std::time::Duration;

use crate::config::{JwksSource, JwtConfig, ServerRole};

pub use self::fetch::{get, post_form, post_form_with};
use self::keys::KeySet;
pub use self::keys::{MAX_JWKS_BYTES, MAX_JWKS_KEYS};
pub use self::resource::ProtectedResource;

/// How long one JWKS fetch may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The shortest interval between two fetches made because a token named
/// an unknown `kid`.
pub const UNKNOWN_KID_REFRESH: Duration = Duration::from_secs(10);

/// Who a verified token speaks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The user the gate decides for (the user claim).
    pub user: String,
    /// The role its claims grant.
    pub role: ServerRole,
}

/// Why a token was refused. [`Refused::code`] is stable; neither it nor
/// [`Refused::message`] repeats anything from the token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Refused {
    /// Not three base64url parts with a JSON header, too long, or a header
    /// with `crit`.
    Malformed,
    /// An `alg` that is not allowed (`none`, HMAC, or not configured).
    Algorithm,
    /// A `kid` the JWKS does not hold (or no `kid` with several keys).
    UnknownKey,
    /// The signature does not verify.
    Signature,
    /// Past `exp`, or no `exp`.
    Expired,
    /// Before `nbf` or `iat`.
    NotYetValid,
    /// Another `iss`, or none.
    Issuer,
    /// An `aud` naming none of the configured audiences, or none.
    Audience,
    /// The user claim is missing or is not a valid user name.
    User,
    /// No role follows from the claims.
    Role,
    /// An id_token whose `nonce` is not the login's.
    Nonce,
}

impl Refused {
    /// The stable code: `jwt_malformed`, `jwt_algorithm`, `jwt_unknown_key`,
    /// `jwt_signature`, `jwt_expired`, `jwt_not_yet_valid`, `jwt_issuer`,
    /// `jwt_audience`, `jwt_user`, `jwt_role` or `jwt_nonce`.
    pub const fn code(self) -> &'static str {
        match self {
            Self::Malformed => "jwt_malformed",
            Self::Algorithm => "jwt_algorithm",
            Self::UnknownKey => "jwt_unknown_key",
            Self::Signature => "jwt_signature",
            Self::Expired => "jwt_expired",
            Self::NotYetValid => "jwt_not_yet_valid",
            Self::Issuer => "jwt_issuer",
            Self::Audience => "jwt_audience",
            Self::User => "jwt_user",
            Self::Role => "jwt_role",
            Self::Nonce => "jwt_nonce",
        }
    }

    /// What is wrong, in words.
    pub const fn message(self) -> &'static str {
        match self {
            Self::Malformed => "the bearer token is not a well-formed JWT",
            Self::Algorithm => "the JWT's `alg` is not allowed",
            Self::UnknownKey => "the JWT's `kid` names no key of the issuer",
            Self::Signature => "the JWT's signature does not verify",
            Self::Expired => "the JWT has expired (or has no `exp`)",
            Self::NotYetValid => "the JWT is not valid yet",
            Self::Issuer => "the JWT's issuer is not the configured one",
            Self::Audience => "the JWT is not for this service (`aud`)",
            Self::User => "the JWT names no valid user",
            Self::Role => "the JWT's claims grant no role",
            Self::Nonce => "the id_token's nonce is not this login's",
        }
    }
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

/// Seconds since the Unix epoch, from the clock the verifier reads.
pub type Clock = Arc<dyn Fn() -> u64 + Send + Sync>;

fn system_clock() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Verifies JWT bearer tokens with one `[jwt]` table. Cheap to clone.
#[derive(Clone)]
pub struct Verifier {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier")
            .field("issuer", &self.inner.config.issuer())
            .finish_non_exhaustive()
    }
}

struct Inner {
    config: JwtConfig,
    keys: RwLock<Arc<KeySet>>,
    fetcher: Option<fetch::Fetcher>,
    /// When (clock seconds) a fetch for an unknown `kid` was last made.
    last_kid_fetch: AtomicU64,
    /// Serialises fetches: one at a time.
    fetching: tokio::sync::Mutex<()>,
    clock: Clock,
}

/// Why a verifier could not start: the keys could not be read.
#[derive(Debug)]
pub struct StartError(String);

impl std::fmt::Display for StartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for StartError {}

impl Verifier {
    /// The verifier of `config`'s `[jwt]` table, if it has one (the one
    /// way every front end starts it).
    pub async fn from_config(
        config: &toolgate::config::Config,
    ) -> Result<Option<Self>, StartError> {
        match JwtConfig::from_config(config).map_err(|e| StartError(e.to_string()))? {
            None => Ok(None),
            Some(jwt) => Self::start(&jwt).await.map(Some),
        }
    }

    /// Reads the keys (the file, or the URL's first fetch) and, for a URL,
    /// starts refreshing them every `refresh_seconds`. Must run inside a
    /// Tokio runtime.
    pub async fn start(config: &JwtConfig) -> Result<Self, StartError> {
        Self::start_with_clock(config, Arc::new(system_clock)).await
    }

    /// [`Verifier::start`] with another clock (tests move time by hand).
    pub async fn start_with_clock(config: &JwtConfig, clock: Clock) -> Result<Self, StartError> {
        let (keys, fetcher) = match config.jwks() {
            JwksSource::File(path) => {
                let bytes = read_bounded(path)
                    .map_err(|e| StartError(format!("[jwt] jwks_file {}: {e}", path.display())))?;
                let keys = KeySet::parse(&bytes)
                    .map_err(|e| StartError(format!("[jwt] jwks_file {}: {e}", path.display())))?;
                (keys, None)
            }
            JwksSource::Url(url) => {
                let fetcher = fetch::Fetcher::new(url)
                    .map_err(|e| StartError(format!("[jwt] jwks_url: {e}")))?;
                let keys = fetcher
                    .fetch()
                    .await
                    .map_err(|e| StartError(format!("[jwt] jwks_url: {e}")))?;
                (keys, Some(fetcher))
            }
        };
        let inner = Arc::new(Inner {
            config: config.clone(),
            keys: RwLock::new(Arc::new(keys)),
            fetcher,
            last_kid_fetch: AtomicU64::new(0),
            fetching: tokio::sync::Mutex::new(()),
            clock,
        });
        if inner.fetcher.is_some() {
            tokio::spawn(refresh_every(Arc::downgrade(&inner), config.refresh()));
        }
        Ok(Self { inner })
    }

    /// Whether `token` has the shape of a JWT (three base64url parts): the
    /// front ends try a JWT only for such a token that matched no static
    /// token.
    pub fn looks_like_jwt(token: &str) -> bool {
        let mut parts = token.split('.');
        let ok = |p: Option<&str>| {
            p.is_some_and(|p| {
                !p.is_empty()
                    && p.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
            })
        };
        ok(parts.next()) && ok(parts.next()) && ok(parts.next()) && parts.next().is_none()
    }

    /// Verifies `token` (the contract above), for one of the configured
    /// audiences.
    pub async fn verify(&self, token: &str) -> Result<Identity, Refused> {
        self.verify_for(token, self.inner.config.audiences()).await
    }

    /// Verifies `token` for one of `audiences` instead (the MCP endpoint's
    /// resource, RFC 8707).
    pub async fn verify_for(&self, token: &str, audiences: &[String]) -> Result<Identity, Refused> {
        self.verified(token, audiences).await.map(|(id, _)| id)
    }

    /// Verifies an OpenID Connect id_token (the same rule, for the
    /// audience `client_id`) and its `nonce`, which must equal `nonce`.
    pub async fn verify_id_token(
        &self,
        token: &str,
        client_id: &str,
        nonce: &str,
    ) -> Result<Identity, Refused> {
        let (id, claims) = self.verified(token, &[client_id.to_owned()]).await?;
        match claims.get("nonce").and_then(serde_json::Value::as_str) {
            Some(n) if n.len() == nonce.len() && constant_eq(n.as_bytes(), nonce.as_bytes()) => {
                Ok(id)
            }
            _ => Err(Refused::Nonce),
        }
    }

    async fn verified(
        &self,
        token: &str,
        audiences: &[String],
    ) -> Result<(Identity, serde_json::Map<String, serde_json::Value>), Refused> {
        let inner = &self.inner;
        if token.len() > crate::token::MAX_TOKEN_BYTES || !Self::looks_like_jwt(token) {
            return Err(Refused::Malformed);
        }
        let header = claims::header(token)?;
        let alg = claims::allowed_alg(&header.alg, inner.config.algorithms())?;
        let keys = self.keys();
        let key = match keys.find(header.kid.as_deref(), alg) {
            Ok(k) => k,
            Err(Refused::UnknownKey) if header.kid.is_some() => {
                let fresh = self.refresh_for_unknown_kid(&keys).await;
                fresh.find(header.kid.as_deref(), alg)?
            }
            Err(e) => return Err(e),
        };
        let claims = claims::verified(token, &key, alg)?;
        let id = claims::check(&claims, &inner.config, audiences, (inner.clock)())?;
        Ok((id, claims))
    }

    fn keys(&self) -> Arc<KeySet> {
        Arc::clone(
            &self
                .inner
                .keys
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
    }

    /// Fetches the JWKS again for a token whose `kid` is unknown, unless a
    /// fetch for that reason was made within [`UNKNOWN_KID_REFRESH`];
    /// the keys held afterwards.
    async fn refresh_for_unknown_kid(&self, seen: &Arc<KeySet>) -> Arc<KeySet> {
        let inner = &self.inner;
        let Some(fetcher) = &inner.fetcher else {
            return Arc::clone(seen);
        };
        let _one = inner.fetching.lock().await;
        // Another request may have fetched while this one waited.
        let now_keys = self.keys();
        if !Arc::ptr_eq(&now_keys, seen) {
            return now_keys;
        }
        let now = (inner.clock)();
        let last = inner.last_kid_fetch.load(Ordering::Relaxed);
        if last != 0 && now < last.saturating_add(UNKNOWN_KID_REFRESH.as_secs()) {
            return now_keys;
        }
        inner.last_kid_fetch.store(now.max(1), Ordering::Relaxed);
        match fetcher.fetch().await {
            Ok(keys) => {
                let keys = Arc::new(keys);
                *inner.keys.write().unwrap_or_else(PoisonError::into_inner) = Arc::clone(&keys);
                keys
            }
            Err(e) => {
                crate::log::line(
                    crate::log::Level::Warn,
                    "jwt",
                    "jwks_failed",
                    &format!("[jwt] jwks_url: {e}; the keys already held stay"),
                );
                now_keys
            }
        }
    }
}

/// Fetches the JWKS every `every` while the verifier lives.
async fn refresh_every(inner: Weak<Inner>, every: Duration) {
    loop {
        tokio::time::sleep(every).await;
        let Some(inner) = inner.upgrade() else {
            return;
        };
        let Some(fetcher) = &inner.fetcher else {
            return;
        };
        let _one = inner.fetching.lock().await;
        match fetcher.fetch().await {
            Ok(keys) => {
                *inner.keys.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(keys);
            }
            Err(e) => crate::log::line(
                crate::log::Level::Warn,
                "jwt",
                "jwks_failed",
                &format!("[jwt] jwks_url: {e}; the keys already held stay"),
            ),
        }
    }
}

fn constant_eq(a: &[u8], b: &[u8]) -> bool {
    a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// A file of at most [`MAX_JWKS_BYTES`].
fn read_bounded(path: &std::path::Path) -> Result<Vec<u8>, String> {
    use std::io::Read as _;
    let file = std::fs::File::open(path).map_err(|e| format!("cannot read it: {e}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_JWKS_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read it: {e}"))?;
    if bytes.len() > MAX_JWKS_BYTES {
        return Err(format!("larger than {MAX_JWKS_BYTES} bytes"));
    }
    Ok(bytes)
}
