//! `[[authorization.sources]]`: entity sources the gate queries itself
//! (see [`crate::authz::EntitySource`]).

use std::time::Duration;

use toml::Spanned;

use super::authorization::is_entity_type;
use super::error::{Error, ErrorCode};
use super::load::Loader;
use super::raw::{RawConfig, RawEntitySource, RawSourceKind};
use crate::authz::{
    DEFAULT_SOURCE_MAX_BYTES, DEFAULT_SOURCE_MAX_ENTRIES, DEFAULT_SOURCE_TIMEOUT_MS,
    DEFAULT_SOURCE_TTL_SECONDS, MAX_SOURCE_MAX_BYTES, MAX_SOURCE_MAX_ENTRIES,
    MAX_SOURCE_TIMEOUT_MS, MAX_SOURCE_TTL_SECONDS,
};

/// Where an entity source's data comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SourceKind {
    /// `kind = "http"`: `GET <url>/<type>/<id>` ([`crate::authz::HttpSource`]).
    Http {
        /// The base URL.
        url: String,
    },
    /// `kind = "postgres"`: `query` run with the type as `$1` and the id as
    /// `$2` on the database at `url`, built by `toolgate-store`.
    Postgres {
        /// The connection URL (`postgres://…`).
        url: String,
        /// The query: one row, one `text`/`json`/`jsonb` column holding the
        /// entity's Cedar JSON, or no row.
        query: String,
    },
}

/// One `[[authorization.sources]]` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EntitySourceConfig {
    kind: SourceKind,
    types: Vec<String>,
    timeout: Duration,
    ttl: Duration,
    max_entries: usize,
    max_bytes: usize,
}

impl EntitySourceConfig {
    /// Where the data comes from.
    pub fn kind(&self) -> &SourceKind {
        &self.kind
    }

    /// The entity types whose resources are fetched from it.
    pub fn types(&self) -> &[String] {
        &self.types
    }

    /// How long one fetch may take (`timeout_ms`).
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// How long an answer is cached (`ttl_seconds`; `0` caches nothing).
    pub fn ttl(&self) -> Duration {
        self.ttl
    }

    /// How many answers are cached at most (`max_entries`).
    pub fn max_entries(&self) -> usize {
        self.max_entries
    }

    /// The largest answer read, in bytes (`max_bytes`).
    pub fn max_bytes(&self) -> usize {
        self.max_bytes
    }
}

impl Loader<'_> {
    /// Every `[[authorization.sources]]` entry, its bounds within range and
    /// each type named by one source only.
    pub(super) fn sources(&self, raw: &RawConfig) -> Result<Vec<EntitySourceConfig>, Error> {
        let mut out: Vec<EntitySourceConfig> = Vec::new();
        for entry in &raw.authorization.sources {
            let source = self.source(entry.get_ref())?;
            for (t, name) in entry.get_ref().types.get_ref().iter().zip(&source.types) {
                if out.iter().any(|o| o.types.contains(name)) {
                    return Err(self.at_value(
                        ErrorCode::InvalidValue,
                        t.span().start,
                        "types",
                        format!("`{}` has two entity sources", name.escape_debug()),
                    ));
                }
            }
            out.push(source);
        }
        Ok(out)
    }

    fn source(&self, raw: &RawEntitySource) -> Result<EntitySourceConfig, Error> {
        let mut types: Vec<String> = Vec::new();
        for t in raw.types.get_ref() {
            let name = t.get_ref();
            if !is_entity_type(name) || types.contains(name) {
                return Err(self.at_value(
                    ErrorCode::InvalidValue,
                    t.span().start,
                    "types",
                    format!(
                        "`types`: `{}` is not an entity type name, or is listed twice",
                        name.escape_debug()
                    ),
                ));
            }
            types.push(name.clone());
        }
        if types.is_empty() {
            return Err(self.at_key(
                ErrorCode::InvalidValue,
                raw.types.span().start,
                "types",
                "`types` names no entity type",
            ));
        }
        let at = raw.kind.span().start;
        let url = raw
            .url
            .as_ref()
            .map(|u| u.get_ref().clone())
            .ok_or_else(|| {
                self.at_key(
                    ErrorCode::MissingKey,
                    at,
                    "kind",
                    "an entity source needs `url`",
                )
            })?;
        let kind = match raw.kind.get_ref() {
            RawSourceKind::Http => {
                if let Some(q) = &raw.query {
                    return Err(self.at_key(
                        ErrorCode::ConflictingKeys,
                        q.span().start,
                        "query",
                        "`query` is for `kind = \"postgres\"`",
                    ));
                }
                if let Err(e) = crate::authz::HttpSource::new(&url, Duration::ZERO, 0) {
                    let start = raw.url.as_ref().map_or(at, |u| u.span().start);
                    return Err(self.at_value(ErrorCode::InvalidValue, start, "url", e));
                }
                SourceKind::Http { url }
            }
            RawSourceKind::Postgres => {
                let query = raw
                    .query
                    .as_ref()
                    .map(|q| q.get_ref().clone())
                    .ok_or_else(|| {
                        self.at_key(
                            ErrorCode::MissingKey,
                            at,
                            "kind",
                            "`kind = \"postgres\"` needs `query` (with `$1` the type, `$2` the id)",
                        )
                    })?;
                SourceKind::Postgres { url, query }
            }
        };
        let bounded =
            |v: &Option<Spanned<u64>>, key: &str, min: u64, max: u64, default: u64| match v {
                None => Ok(default),
                Some(v) if (min..=max).contains(v.get_ref()) => Ok(*v.get_ref()),
                Some(v) => Err(self.at_key(
                    ErrorCode::InvalidLimit,
                    v.span().start,
                    key,
                    format!("`{key}` must be between {min} and {max}"),
                )),
            };
        let as_u64 = |n: usize| u64::try_from(n).unwrap_or(u64::MAX);
        let timeout = bounded(
            &raw.timeout_ms,
            "timeout_ms",
            1,
            MAX_SOURCE_TIMEOUT_MS,
            DEFAULT_SOURCE_TIMEOUT_MS,
        )?;
        let ttl = bounded(
            &raw.ttl_seconds,
            "ttl_seconds",
            0,
            MAX_SOURCE_TTL_SECONDS,
            DEFAULT_SOURCE_TTL_SECONDS,
        )?;
        let max_entries = bounded(
            &raw.max_entries,
            "max_entries",
            1,
            as_u64(MAX_SOURCE_MAX_ENTRIES),
            as_u64(DEFAULT_SOURCE_MAX_ENTRIES),
        )?;
        let max_bytes = bounded(
            &raw.max_bytes,
            "max_bytes",
            2,
            as_u64(MAX_SOURCE_MAX_BYTES),
            as_u64(DEFAULT_SOURCE_MAX_BYTES),
        )?;
        Ok(EntitySourceConfig {
            kind,
            types,
            timeout: Duration::from_millis(timeout),
            ttl: Duration::from_secs(ttl),
            max_entries: usize::try_from(max_entries).unwrap_or(usize::MAX),
            max_bytes: usize::try_from(max_bytes).unwrap_or(usize::MAX),
        })
    }
}
