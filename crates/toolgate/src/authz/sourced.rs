//! Resources fetched from entity sources by the Cedar authorizer
//! ([`CedarAuthorizer::with_entity_source`]).

use std::path::Path;
use std::sync::Arc;

use cedar_policy::{Entity, EntityUid};

use super::cedar::CedarAuthorizer;
use super::error::{LoadError, LoadErrorCode};
use super::source::{EntitySource, SourceErrorKind};

/// The policy id a denial for an entity source names, followed by `:` and
/// the error's kind (`toolgate:entity_source:timeout`).
pub const ENTITY_SOURCE: &str = "toolgate:entity_source";

/// What fetching a call's resource came to.
pub(super) enum Fetched {
    /// Its type has no source.
    NoSource,
    /// The source holds no such entity.
    Absent,
    /// The source failed, or answered what is not the entity asked for.
    Failed(SourceErrorKind),
    /// The entity, checked against the schema.
    Found(Box<Entity>),
}

impl CedarAuthorizer {
    /// Fetches the resources of the entity types `types` from `source`
    /// when the static entities do not define them: a call whose resource
    /// the source answers is decided with that entity (its attributes and
    /// parents); one the source holds none of is denied `not_owner`, like
    /// an unknown resource; and when the source fails (times out, errs,
    /// answers too much, or answers an entity of another type or id, or not
    /// of the schema's shape) the call is denied `entity_source_unavailable`.
    ///
    /// Give the source its bounds (a [`super::CachedSource`] in front of it
    /// for a time to live and a number of entries). Each type must be in
    /// the schema, have one source, and not be a type the context may add
    /// ([`Self::with_context_entities`]): the server's data is then never
    /// the caller's to supply. `file` names the config in errors.
    pub fn with_entity_source<S: AsRef<str>>(
        mut self,
        types: impl IntoIterator<Item = S>,
        source: Arc<dyn EntitySource>,
        file: &Path,
    ) -> Result<Self, LoadError> {
        for t in types {
            let t = t.as_ref();
            let problem = if !self.types.contains_key(t) {
                Some("is not an entity type of the cedar schema")
            } else if self.context_types.contains(t) {
                Some("is also in `context_entities`: server data is not the caller's to supply")
            } else if self.sources.contains_key(t) {
                Some("has two entity sources")
            } else {
                None
            };
            if let Some(problem) = problem {
                return Err(LoadError::new(
                    LoadErrorCode::EntitySource,
                    file,
                    format!("entity source type `{}` {problem}", t.escape_debug()),
                ));
            }
            self.sources.insert(t.to_owned(), Arc::clone(&source));
        }
        Ok(self)
    }

    /// The entity types fetched from a source, sorted.
    pub fn sourced_types(&self) -> Vec<&str> {
        let mut types: Vec<&str> = self.sources.keys().map(String::as_str).collect();
        types.sort_unstable();
        types
    }

    /// The resource `uid` from its type's source, if it has one.
    pub(super) fn fetch_resource(&self, uid: &EntityUid) -> Fetched {
        let ty = uid.type_name().to_string();
        let Some(source) = self.sources.get(&ty) else {
            return Fetched::NoSource;
        };
        let id = uid.id().unescaped();
        let text = match source.fetch(&ty, id) {
            Ok(None) => return Fetched::Absent,
            Ok(Some(text)) => text,
            Err(e) => return Fetched::Failed(e.kind()),
        };
        // Read strictly first (no duplicate keys, no lone surrogates), then
        // as a Cedar entity of the schema's shape.
        let Ok(value) = toolgate_json::from_str(&text) else {
            return Fetched::Failed(SourceErrorKind::Malformed);
        };
        let canonical = toolgate_json::canonical::to_string(&value);
        let Ok(entity) = Entity::from_json_str(&canonical, Some(&self.schema)) else {
            return Fetched::Failed(SourceErrorKind::Malformed);
        };
        if &entity.uid() != uid {
            return Fetched::Failed(SourceErrorKind::Mismatch);
        }
        Fetched::Found(Box::new(entity))
    }
}
