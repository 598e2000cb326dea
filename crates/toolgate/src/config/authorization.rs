//! The `[authorization]` table: how calls are authorized per user, and the
//! Cedar files that say so.

use std::path::{Path, PathBuf};

use toml::Spanned;

use super::error::{Error, ErrorCode};
use super::load::Loader;
use super::raw::{RawAuthorizationMode, RawConfig};

/// How calls are authorized: `[authorization] mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AuthorizationMode {
    /// Cedar policies (`mode = "cedar"`, the default when `policies` is given).
    Cedar,
    /// DANGER: no per-user check ([`crate::danger::NoAuthorization`]); only
    /// when written explicitly, `mode = "none"`.
    None,
}

/// The `[authorization]` table. Paths are resolved against the config file's
/// folder; the files are read by the authorization stage
/// ([`crate::authz::from_config`]). Without a mode (no `mode`, no
/// `policies`) the gate denies every call `not_authorized`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthorizationConfig {
    mode: Option<AuthorizationMode>,
    policies: Option<PathBuf>,
    entities: Option<PathBuf>,
    schema: Option<PathBuf>,
    context_entities: Vec<String>,
    sources: Vec<super::sources::EntitySourceConfig>,
}

impl AuthorizationConfig {
    /// The entity types a decision context may add entities of
    /// (`context_entities`; empty by default: the context adds nothing).
    pub fn context_entities(&self) -> &[String] {
        &self.context_entities
    }

    /// The entity sources the gate queries itself
    /// (`[[authorization.sources]]`), in the order written.
    pub fn sources(&self) -> &[super::sources::EntitySourceConfig] {
        &self.sources
    }

    /// The mode, or `None` when the config names none (every call denied).
    pub fn mode(&self) -> Option<AuthorizationMode> {
        self.mode
    }

    /// The Cedar policies file.
    pub fn policies(&self) -> Option<&Path> {
        self.policies.as_deref()
    }

    /// The static entities file (Cedar entity JSON).
    pub fn entities(&self) -> Option<&Path> {
        self.entities.as_deref()
    }

    /// The Cedar schema file the policies are validated against.
    pub fn schema(&self) -> Option<&Path> {
        self.schema.as_deref()
    }
}

impl Loader<'_> {
    /// `[authorization]`: the mode and the keys it needs, paths resolved
    /// against the config's folder.
    pub(super) fn authorization(&self, raw: &RawConfig) -> Result<AuthorizationConfig, Error> {
        let path_of = |p: &Option<Spanned<String>>| p.as_ref().map(|p| self.resolve(p.get_ref()));
        Ok(AuthorizationConfig {
            mode: self.authorization_mode(raw)?,
            policies: path_of(&raw.authorization.policies),
            entities: path_of(&raw.authorization.entities),
            schema: path_of(&raw.authorization.schema),
            context_entities: self.context_entities(raw)?,
            sources: self.sources(raw)?,
        })
    }

    /// `context_entities`: entity type names, each once.
    fn context_entities(&self, raw: &RawConfig) -> Result<Vec<String>, Error> {
        let Some(list) = &raw.authorization.context_entities else {
            return Ok(Vec::new());
        };
        let mut out: Vec<String> = Vec::new();
        for t in list.get_ref() {
            let name = t.get_ref();
            let problem = if !is_entity_type(name) {
                Some("is not an entity type name (such as `Order` or `Shop::Order`)")
            } else if out.contains(name) {
                Some("is listed twice")
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(self.at_value(
                    ErrorCode::InvalidValue,
                    t.span().start,
                    "context_entities",
                    format!("`context_entities`: `{}` {problem}", name.escape_debug()),
                ));
            }
            out.push(name.clone());
        }
        Ok(out)
    }

    /// `mode`: `cedar` needs `policies` and `schema`; `none` takes neither.
    fn authorization_mode(&self, raw: &RawConfig) -> Result<Option<AuthorizationMode>, Error> {
        let a = &raw.authorization;
        let mode = match (&a.mode, &a.policies) {
            (None, None) => None,
            (None, Some(_)) => Some(AuthorizationMode::Cedar),
            (Some(m), _) => Some(match m.get_ref() {
                RawAuthorizationMode::Cedar => AuthorizationMode::Cedar,
                RawAuthorizationMode::None => AuthorizationMode::None,
            }),
        };
        match (mode, &a.mode) {
            (Some(AuthorizationMode::None), Some(_)) => {
                if let Some((key, at)) = [
                    ("policies", a.policies.as_ref().map(|v| v.span().start)),
                    ("schema", a.schema.as_ref().map(|v| v.span().start)),
                    ("entities", a.entities.as_ref().map(|v| v.span().start)),
                    (
                        "context_entities",
                        a.context_entities.as_ref().map(|v| v.span().start),
                    ),
                    ("sources", a.sources.first().map(|v| v.span().start)),
                ]
                .into_iter()
                .find_map(|(k, v)| v.map(|at| (k, at)))
                {
                    return Err(self.at_key(
                        ErrorCode::ConflictingKeys,
                        at,
                        key,
                        format!("`{key}` is given with `mode = \"none\"`, which reads no policies"),
                    ));
                }
            }
            (Some(AuthorizationMode::Cedar), _) => {
                let at = a
                    .mode
                    .as_ref()
                    .map(|m| m.span().start)
                    .or_else(|| a.policies.as_ref().map(|p| p.span().start))
                    .unwrap_or_default();
                for (key, value) in [("policies", &a.policies), ("schema", &a.schema)] {
                    if value.is_none() {
                        let key_of_at = if a.mode.is_some() { "mode" } else { "policies" };
                        return Err(self.at_key(
                            ErrorCode::MissingKey,
                            at,
                            key_of_at,
                            format!(
                                "`mode = \"cedar\"` needs `{key}` (the cedar {})",
                                if key == "schema" {
                                    "schema the policies are validated against"
                                } else {
                                    "policies file"
                                }
                            ),
                        ));
                    }
                }
            }
            _ => {}
        }
        Ok(mode)
    }
}

/// `Order`, `Shop::Order`: Cedar entity type names.
pub(super) fn is_entity_type(s: &str) -> bool {
    s.split("::").all(|part| {
        let mut chars = part.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}
