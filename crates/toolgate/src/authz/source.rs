//! Entity sources: server data the gate fetches itself, so that ownership
//! and totals are checked against the system of record rather than against
//! entities the caller supplies.
//!
//! An [`EntitySource`] answers "the entity of type `T` with id `I`" with
//! its Cedar entity JSON, "none", or an error. The gate puts a bounded
//! [`CachedSource`] in front of it (a time to live and a number of entries)
//! and fails closed: a source that errs, times out, or answers something
//! that is not the entity asked for (another type or id, not the schema's
//! shape, too large) denies the call `entity_source_unavailable`; an entry
//! past its time to live is never used, whatever the source answers next.
//!
//! The HTTP source ([`HttpSource`](super::HttpSource)) is here; a
//! PostgreSQL source lives in `toolgate-store` (the gate holds no database
//! code) and is given to the authorizer through this trait
//! ([`super::from_config_with`]).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The largest entity answer read, in bytes, when a source sets none.
pub const DEFAULT_SOURCE_MAX_BYTES: usize = 64 << 10;
/// The most bytes a source may be allowed to answer with.
pub const MAX_SOURCE_MAX_BYTES: usize = 1 << 20;
/// How long a source may take to answer, when its config sets no
/// `timeout_ms`.
pub const DEFAULT_SOURCE_TIMEOUT_MS: u64 = 1000;
/// The longest `timeout_ms` a source may be given.
pub const MAX_SOURCE_TIMEOUT_MS: u64 = 30_000;
/// How long an answer is cached when the config sets no `ttl_seconds`.
pub const DEFAULT_SOURCE_TTL_SECONDS: u64 = 5;
/// The longest `ttl_seconds`.
pub const MAX_SOURCE_TTL_SECONDS: u64 = 3600;
/// How many answers are cached when the config sets no `max_entries`.
pub const DEFAULT_SOURCE_MAX_ENTRIES: usize = 10_000;
/// The most `max_entries`.
pub const MAX_SOURCE_MAX_ENTRIES: usize = 1_000_000;

/// Fetches entities by type and id. Implementations bound what they read
/// and how long they wait, and return an error rather than block or panic.
pub trait EntitySource: Send + Sync + fmt::Debug {
    /// The Cedar entity JSON (`{"uid": …, "attrs": …, "parents": …}`) of
    /// the entity of type `entity_type` (such as `Order`) with id `id`, or
    /// `None` when the source holds no such entity.
    fn fetch(&self, entity_type: &str, id: &str) -> Result<Option<String>, SourceError>;
}

/// What went wrong fetching an entity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SourceErrorKind {
    /// The source did not answer in time.
    Timeout,
    /// The source could not be reached, or answered with an error.
    Unavailable,
    /// The answer is larger than the source's `max_bytes`.
    TooLarge,
    /// The answer is not one entity's JSON of the schema's shape.
    Malformed,
    /// The answer is an entity, but not the one asked for (another type or
    /// id).
    Mismatch,
}

impl SourceErrorKind {
    /// A stable name, for operators' messages: `timeout`, `unavailable`,
    /// `too_large`, `malformed`, `mismatch`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Timeout => "timeout",
            Self::Unavailable => "unavailable",
            Self::TooLarge => "too_large",
            Self::Malformed => "malformed",
            Self::Mismatch => "mismatch",
        }
    }
}

/// An entity source's error: its kind and a message for operators (never
/// shown to the model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceError {
    kind: SourceErrorKind,
    message: String,
}

impl SourceError {
    /// An error of `kind`.
    pub fn new(kind: SourceErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }

    /// What went wrong.
    pub fn kind(&self) -> SourceErrorKind {
        self.kind
    }
}

impl fmt::Display for SourceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "entity source {}: {}", self.kind.as_str(), self.message)
    }
}

impl std::error::Error for SourceError {}

/// The clock of a cache: the instant now.
pub type SourceClock = Arc<dyn Fn() -> Instant + Send + Sync>;

/// A source's answers cached for a time to live, at most `max_entries` of
/// them (the oldest evicted first). An answer, "none" included, is used
/// while it is younger than the TTL and never after; errors are not cached.
pub struct CachedSource {
    inner: Arc<dyn EntitySource>,
    ttl: Duration,
    max_entries: usize,
    clock: SourceClock,
    entries: Mutex<HashMap<EntityKey, Cached>>,
}

/// An entity's type and id.
type EntityKey = (String, String);
/// When an answer was fetched, and the answer.
type Cached = (Instant, Option<String>);

impl fmt::Debug for CachedSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CachedSource")
            .field("inner", &self.inner)
            .field("ttl", &self.ttl)
            .field("max_entries", &self.max_entries)
            .finish_non_exhaustive()
    }
}

impl CachedSource {
    /// `inner`'s answers cached `ttl` long, at most `max_entries` (at least
    /// one) of them, on the monotonic clock.
    pub fn new(inner: Arc<dyn EntitySource>, ttl: Duration, max_entries: usize) -> Self {
        Self {
            inner,
            ttl,
            max_entries: max_entries.max(1),
            clock: Arc::new(Instant::now),
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// The same cache on `clock` (tests move it by hand).
    pub fn with_clock(mut self, clock: SourceClock) -> Self {
        self.clock = clock;
        self
    }

    /// How many answers are cached now (expired ones included until they
    /// are replaced or evicted).
    pub fn len(&self) -> usize {
        self.entries.lock().map_or(0, |e| e.len())
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl EntitySource for CachedSource {
    fn fetch(&self, entity_type: &str, id: &str) -> Result<Option<String>, SourceError> {
        let key = (entity_type.to_owned(), id.to_owned());
        let now = (self.clock)();
        {
            let entries = self
                .entries
                .lock()
                .map_err(|_| SourceError::new(SourceErrorKind::Unavailable, "cache poisoned"))?;
            if let Some((at, answer)) = entries.get(&key) {
                if now.saturating_duration_since(*at) < self.ttl {
                    return Ok(answer.clone());
                }
            }
        }
        // Not cached, or past its time: only the source's answer now counts.
        let answer = self.inner.fetch(entity_type, id);
        let mut entries = self
            .entries
            .lock()
            .map_err(|_| SourceError::new(SourceErrorKind::Unavailable, "cache poisoned"))?;
        match &answer {
            Ok(found) => {
                if !entries.contains_key(&key) && entries.len() >= self.max_entries {
                    let ttl = self.ttl;
                    entries.retain(|_, (at, _)| now.saturating_duration_since(*at) < ttl);
                    while entries.len() >= self.max_entries {
                        let oldest = entries
                            .iter()
                            .min_by_key(|(_, (at, _))| *at)
                            .map(|(k, _)| k.clone());
                        match oldest {
                            Some(k) => entries.remove(&k),
                            None => break,
                        };
                    }
                }
                entries.insert(key, (now, found.clone()));
            }
            Err(_) => {
                // A stale answer is never served after a failure.
                entries.remove(&key);
            }
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[derive(Debug, Default)]
    struct Counting {
        calls: AtomicUsize,
        fail: std::sync::atomic::AtomicBool,
    }

    impl EntitySource for Counting {
        fn fetch(&self, _t: &str, id: &str) -> Result<Option<String>, SourceError> {
            self.calls.fetch_add(1, Ordering::SeqCst);
            if self.fail.load(Ordering::SeqCst) {
                return Err(SourceError::new(SourceErrorKind::Timeout, "slow"));
            }
            Ok(Some(id.to_owned()))
        }
    }

    fn cache(inner: &Arc<Counting>, max: usize) -> (CachedSource, Arc<Mutex<Instant>>) {
        let at = Arc::new(Mutex::new(Instant::now()));
        let clock = Arc::clone(&at);
        let source = Arc::clone(inner) as Arc<dyn EntitySource>;
        let c = CachedSource::new(source, Duration::from_secs(5), max)
            .with_clock(Arc::new(move || *clock.lock().unwrap()));
        (c, at)
    }

    #[test]
    fn answers_are_kept_for_the_ttl_and_never_after() {
        let inner = Arc::new(Counting::default());
        let (c, at) = cache(&inner, 10);
        assert_eq!(c.fetch("Order", "a").unwrap().as_deref(), Some("a"));
        assert_eq!(c.fetch("Order", "a").unwrap().as_deref(), Some("a"));
        assert_eq!(inner.calls.load(Ordering::SeqCst), 1);
        *at.lock().unwrap() += Duration::from_secs(5);
        // Past its TTL, with the source failing: an error, not the old answer.
        inner.fail.store(true, Ordering::SeqCst);
        assert_eq!(
            c.fetch("Order", "a").unwrap_err().kind(),
            SourceErrorKind::Timeout
        );
        assert_eq!(inner.calls.load(Ordering::SeqCst), 2);
        // Errors are not cached either.
        assert!(c.fetch("Order", "a").is_err());
        assert_eq!(inner.calls.load(Ordering::SeqCst), 3);
        inner.fail.store(false, Ordering::SeqCst);
        assert!(c.fetch("Order", "a").is_ok());
    }

    #[test]
    fn the_cache_holds_at_most_max_entries() {
        let inner = Arc::new(Counting::default());
        let (c, at) = cache(&inner, 3);
        for id in ["a", "b", "c", "d", "e"] {
            *at.lock().unwrap() += Duration::from_millis(10);
            c.fetch("Order", id).unwrap();
            assert!(c.len() <= 3);
        }
        assert_eq!(c.len(), 3);
        // The oldest (`a`) went: asking again reaches the source.
        let before = inner.calls.load(Ordering::SeqCst);
        c.fetch("Order", "e").unwrap();
        assert_eq!(inner.calls.load(Ordering::SeqCst), before);
        c.fetch("Order", "a").unwrap();
        assert_eq!(inner.calls.load(Ordering::SeqCst), before + 1);
    }
}
