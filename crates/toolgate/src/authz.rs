//! Authorization by Cedar policies: is *this* user allowed to do *this* act
//! on *this* entity?
//!
//! - [`CedarAuthorizer`]: the [`crate::Authorizer`] over Cedar policies,
//!   validated against a Cedar schema at load, with static entities; each
//!   call is one Cedar request (see the type for the mapping and for how a
//!   denial's code is chosen).
//! - [`from_config`]: the authorizer a config's `[authorization]` table
//!   names, as a [`ConfiguredAuthorizer`].
//! - [`CedarAuthorizer::policy_facts`]: what each policy says ([`PolicyFacts`]:
//!   effect, the actions its scope matches, `@code`, and the comparisons of
//!   arguments with resource attributes or constants), for tools such as
//!   `toolgate lint`; [`CedarAuthorizer::entity_count`]: the static entities
//!   of a type.
//! - [`CedarAuthorizer::narrow`]: per-user tool declarations whose resource
//!   arguments are narrowed to the ids that user may touch
//!   ([`Narrowed::to_json`] in the OpenAI or Anthropic `tools` shape).
//!
//! A shop's policies, for `refund` and `get_order` on `Order` entities
//! (`examples/shop/policies.cedar` has the full set):
//!
//! ```cedar
//! @id("order-owner-refunds")
//! permit(principal, action == Action::"refund", resource)
//! when { resource.owner == principal };
//!
//! @id("order-of-another-user") @code("not_owner")
//! forbid(principal, action in [Action::"get_order", Action::"refund"], resource)
//! unless { resource.owner == principal || principal in Role::"support" };
//!
//! @id("refund-at-most-total") @code("not_authorized")
//! forbid(principal, action == Action::"refund", resource)
//! when { context.args.amount_cents > resource.total_cents };
//! ```

mod cedar;
mod checked;
mod declared;
mod error;
mod facts;
mod held;
mod http_source;
mod narrow;
mod shapes;
mod source;
mod sourced;
mod value;

use crate::authorize::{Authorization, Authorizer, AuthzRequest, DenyAll};
use std::sync::Arc;

use crate::config::{AuthorizationMode, Config, EntitySourceConfig, SourceKind};
use crate::danger::NoAuthorization;

pub use self::cedar::{
    CedarAuthorizer, Source, ACTION_TYPE, PRINCIPAL_TYPE, ROLE_TYPE, TOOL_TYPE, UNKNOWN_RESOURCE,
};
pub use self::checked::remember_validations;
pub use self::error::{LoadError, LoadErrorCode};
pub use self::facts::{
    ActionScope, ArgComparison, Clause, CompareOp, Operand, PolicyEffect, PolicyFacts,
};
pub use self::http_source::HttpSource;
pub use self::narrow::{NarrowError, Narrowed, NarrowedTool, ToolsFormat};
pub use self::source::{
    CachedSource, EntitySource, SourceClock, SourceError, SourceErrorKind,
    DEFAULT_SOURCE_MAX_BYTES, DEFAULT_SOURCE_MAX_ENTRIES, DEFAULT_SOURCE_TIMEOUT_MS,
    DEFAULT_SOURCE_TTL_SECONDS, MAX_SOURCE_MAX_BYTES, MAX_SOURCE_MAX_ENTRIES,
    MAX_SOURCE_TIMEOUT_MS, MAX_SOURCE_TTL_SECONDS,
};
pub use self::sourced::ENTITY_SOURCE;

/// The authorizer a config names.
#[derive(Debug)]
#[non_exhaustive]
pub enum ConfiguredAuthorizer {
    /// `mode = "cedar"` (or `policies` given).
    Cedar(Box<CedarAuthorizer>),
    /// DANGER: `mode = "none"`, written explicitly.
    None(NoAuthorization),
    /// No `[authorization]` mode: every call is denied `not_authorized`.
    DenyAll(DenyAll),
}

impl ConfiguredAuthorizer {
    /// The Cedar authorizer, if the config names one.
    pub fn cedar(&self) -> Option<&CedarAuthorizer> {
        match self {
            Self::Cedar(c) => Some(c),
            Self::None(_) | Self::DenyAll(_) => None,
        }
    }
}

impl Authorizer for ConfiguredAuthorizer {
    fn authorize(&self, request: &AuthzRequest<'_>) -> Authorization {
        match self {
            Self::Cedar(c) => c.authorize(request),
            Self::None(n) => n.authorize(request),
            Self::DenyAll(d) => d.authorize(request),
        }
    }

    fn reads_session_labels(&self) -> bool {
        match self {
            Self::Cedar(c) => c.reads_session_labels(),
            Self::None(_) | Self::DenyAll(_) => false,
        }
    }
}

/// Builds the authorizer `config`'s `[authorization]` table names: Cedar
/// (policies, schema and static entities read and checked, and every
/// registered tool checked to have an action in the schema), the explicit
/// `none`, or, with no mode, [`DenyAll`].
pub fn from_config(config: &Config) -> Result<ConfiguredAuthorizer, LoadError> {
    from_config_with(config, &|_| Ok(None))
}

/// Builds an entity source the gate itself does not (a PostgreSQL query:
/// `toolgate-store` builds it, so that the gate holds no database code):
/// `Ok(None)` when it builds no source of this kind.
pub type SourceConnector<'a> =
    &'a dyn Fn(&EntitySourceConfig) -> Result<Option<Arc<dyn EntitySource>>, String>;

/// [`from_config`], with the `[[authorization.sources]]` the config names:
/// HTTP sources built here, other kinds by `connect`; each behind a
/// [`CachedSource`] with its TTL and size. A source no one builds is a load
/// error (`entity_source`), never a gate that silently lacks its data.
pub fn from_config_with(
    config: &Config,
    connect: SourceConnector<'_>,
) -> Result<ConfiguredAuthorizer, LoadError> {
    let a = config.authorization();
    match a.mode() {
        None => Ok(ConfiguredAuthorizer::DenyAll(DenyAll)),
        Some(AuthorizationMode::None) => Ok(ConfiguredAuthorizer::None(NoAuthorization)),
        Some(AuthorizationMode::Cedar) => {
            let (Some(policies), Some(schema)) = (a.policies(), a.schema()) else {
                return Err(LoadError::new(
                    LoadErrorCode::NotConfigured,
                    config.path(),
                    "`[authorization]` needs `policies` and `schema`",
                ));
            };
            let cedar = CedarAuthorizer::load(policies, schema, a.entities())?
                .with_context_entities(a.context_entities(), config.path())?;
            let mut cedar = cedar;
            for source in a.sources() {
                let built = build_source(source, connect)
                    .map_err(|e| LoadError::new(LoadErrorCode::EntitySource, config.path(), e))?;
                let cached: Arc<dyn EntitySource> =
                    Arc::new(CachedSource::new(built, source.ttl(), source.max_entries()));
                cedar = cedar.with_entity_source(source.types(), cached, config.path())?;
            }
            cedar.check_registry(config.registry(), schema)?;
            Ok(ConfiguredAuthorizer::Cedar(Box::new(cedar)))
        }
    }
}

/// The source one `[[authorization.sources]]` entry names.
fn build_source(
    source: &EntitySourceConfig,
    connect: SourceConnector<'_>,
) -> Result<Arc<dyn EntitySource>, String> {
    if let Some(built) = connect(source)? {
        return Ok(built);
    }
    match source.kind() {
        SourceKind::Http { url } => Ok(Arc::new(HttpSource::new(
            url,
            source.timeout(),
            source.max_bytes(),
        )?)),
        SourceKind::Postgres { .. } => Err(
            "a `postgres` entity source is built by toolgate-store (the CLI, the HTTP service and the store-backed gates build it); this gate was built without it"
                .to_owned(),
        ),
    }
}
