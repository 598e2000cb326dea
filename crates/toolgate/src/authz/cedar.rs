//! The Cedar authorizer; documented on [`CedarAuthorizer`].

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::path::Path;
use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use cedar_policy::{
    ActionConstraint, Authorizer as Engine, Context as CedarContext, Decision as CedarDecision,
    Effect, Entities, Entity, EntityId, EntityTypeName, EntityUid, Policy, PolicyId, PolicySet,
    RestrictedExpression, Schema, SchemaFragment, ValidationMode, Validator,
};
use miette::Diagnostic;
use toolgate_json::Value;

use super::declared::{self, Declared};
use super::error::{LoadError, LoadErrorCode};
use super::facts::{self, PolicyFacts};
use super::shapes::CheckedShapes;
use super::source::EntitySource;
use super::sourced::{Fetched, ENTITY_SOURCE};
use super::value::to_cedar_shaped;
use crate::authorize::{Authorization, Authorizer, AuthzRequest, DenyAll};
use crate::context::Context;
use crate::reason::Code;
use crate::registry::{Registry, Tool};

/// The entity type of the principal: the context's `user`.
pub const PRINCIPAL_TYPE: &str = "User";
/// The entity type of the context's `roles`, made parents of the principal.
pub const ROLE_TYPE: &str = "Role";
/// The entity type of actions: one action per tool, its id the tool's name.
pub const ACTION_TYPE: &str = "Action";
/// The entity type of the resource of a tool that maps none: the tool itself
/// (`Tool::"search"`).
pub const TOOL_TYPE: &str = "Tool";

/// The policy id reported when the resource a call names is not among the
/// entities (denied `not_owner`, like another user's resource).
pub const UNKNOWN_RESOURCE: &str = "toolgate:unknown_resource";

/// A file's name and contents, for [`CedarAuthorizer::from_sources`].
#[derive(Debug, Clone, Copy)]
pub struct Source<'a> {
    file: &'a Path,
    text: &'a str,
}

impl<'a> Source<'a> {
    /// `text`, as read from `file` (which only names it in errors).
    pub fn new(file: &'a Path, text: &'a str) -> Self {
        Self { file, text }
    }
}

/// Authorization by Cedar policies, type-checked against a Cedar schema.
///
/// Built once ([`CedarAuthorizer::load`], [`CedarAuthorizer::from_sources`]
/// or [`super::from_config`]) and immutable afterwards. Each call becomes one
/// Cedar request, built with the schema (so an argument of the wrong Cedar
/// type is a request error, which denies):
///
/// | Cedar | from |
/// |---|---|
/// | principal | `User::"<context.user>"`: a user the static entities define has exactly their parents (roles); the context's `roles` become `Role::"<r>"` parents only of a user they do not define, and only if `User` is a trusted context type |
/// | action | `Action::"<tool name>"` |
/// | resource | the tool's `resource` mapping: `<type>::"<id>"`, the id read at the mapping's JSON Pointer (a string, or an integer's canonical text); `Tool::"<tool name>"` for a tool that maps none |
/// | context | `{ args: <the canonical arguments as a record>, turn: Long, risk: "read" \| "write" \| "destructive" }` |
/// | entities | the static entities file, plus the context's `entities` (Cedar entity JSON), validated against the schema: only of the types [`CedarAuthorizer::with_context_entities`] trusts, never one the static entities define |
///
/// # Who may assert what
///
/// The static entities are the operator's: the context (the calling
/// application's, whoever holds its token) can never change them, add a
/// parent (a role) to one of them, or redefine one. It may add entities of
/// the types the config trusts it with (`[authorization] context_entities`,
/// [`CedarAuthorizer::with_context_entities`]; none by default): an entity
/// of another type, or one the static entities define, denies the call
/// `authorization_error`; `roles` the context may not assert are ignored.
///
/// The answer fails closed:
/// - no permit → deny (default deny); any satisfied forbid → deny;
/// - any evaluation error → deny `authorization_error` (Cedar skips a policy
///   that errors, so a failing `forbid` would otherwise not forbid);
/// - a resource that is not among the entities → deny `not_owner`, exactly
///   like another user's resource (no existence oracle).
///
/// The decision names the policies that decided, by their `@id("…")`
/// annotation ([`Authorization::policies`]); they reach the decision and the
/// audit, never the model's feedback. The code of a denial is chosen
/// without telling the model more than it may know:
/// - a satisfied forbid annotated `@code("not_owner")` → `not_owner`;
/// - otherwise, if every satisfied forbid is annotated
///   `@code("not_authorized")` → `not_authorized`;
/// - otherwise (no permit, or unannotated forbids) → `not_owner` for a tool
///   that maps a resource, `not_authorized` for one that does not.
///
/// Write ownership as a `@code("not_owner")` forbid: then a `not_authorized`
/// forbid (such as "at most the order's total") cannot be probed on another
/// user's resource, because the ownership forbid is satisfied there too.
///
/// At load, policies are indexed by the actions their scope can match
/// (`action == …`, `action in […]` with the schema's action groups, or any
/// action), and each call is evaluated against its action's policies only.
pub struct CedarAuthorizer {
    pub(super) schema: Schema,
    engine: Engine,
    /// Per action id (the tool's name): its uid and the policies that can
    /// apply to it.
    actions: HashMap<String, ActionEntry>,
    /// Effect and `@code` of every policy, by id.
    meta: HashMap<PolicyId, PolicyMeta>,
    /// The static entities and the schema's action entities.
    entities: Entities,
    /// The schema's entity types, by name.
    pub(super) types: HashMap<String, EntityTypeName>,
    user_type: EntityTypeName,
    role_type: EntityTypeName,
    tool_type: EntityTypeName,
    /// The entity types a request context may add (by name).
    pub(super) context_types: HashSet<String>,
    /// The sources the resources of some types are fetched from, by type
    /// name ([`Self::with_entity_source`]).
    pub(super) sources: HashMap<String, Arc<dyn EntitySource>>,
    /// The declared type of each action's `context.args`, by action id.
    args: HashMap<String, Declared>,
    /// The session facts (`labels`, `egress`) each action's context
    /// declares, by action id.
    session_facts: HashMap<String, Vec<&'static str>>,
    policy_count: usize,
    /// Every policy, as loaded (renamed to its `@id`).
    set: PolicySet,
    /// What each policy says, sorted by id ([`Self::policy_facts`]): made
    /// from `set` when first asked for (lint and red-team generation ask;
    /// deciding never does, and reading each policy's JSON form costs
    /// about as much as parsing it).
    facts: OnceLock<Vec<PolicyFacts>>,
    /// The context shapes that passed the schema's check ([`super::shapes`]).
    pub(super) shapes: CheckedShapes,
}

struct ActionEntry {
    uid: EntityUid,
    policies: PolicySet,
    /// The policies without the `@approval("required")` forbids, when the
    /// action has any: a call those alone forbid is asked of a human when
    /// these permit it.
    without_holds: Option<PolicySet>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct PolicyMeta {
    pub(crate) effect: Effect,
    code: Option<Code>,
    /// A forbid annotated `@approval("required")`: what it forbids needs
    /// a human's approval instead of being denied.
    hold: bool,
}

impl CedarAuthorizer {
    /// Reads and checks the policies, the schema and the static entities
    /// (optional) from files.
    pub fn load(
        policies: &Path,
        schema: &Path,
        entities: Option<&Path>,
    ) -> Result<Self, LoadError> {
        let read = |path: &Path, what: &str| {
            crate::fsread::read_to_string(path).map_err(|e| {
                LoadError::new(
                    LoadErrorCode::Io,
                    path,
                    format!("cannot read the {what}: {e}"),
                )
                .source(e)
            })
        };
        let policies_text = read(policies, "policies")?;
        let schema_text = read(schema, "cedar schema")?;
        let entities_text = entities.map(|p| read(p, "entities")).transpose()?;
        Self::from_sources(
            Source::new(policies, &policies_text),
            Source::new(schema, &schema_text),
            entities
                .zip(entities_text.as_deref())
                .map(|(p, t)| Source::new(p, t)),
        )
    }

    /// Checks policies, a schema (Cedar's human-readable format) and static
    /// entities (Cedar entity JSON, read by the strict parser first) given as
    /// text.
    pub fn from_sources(
        policies: Source<'_>,
        schema: Source<'_>,
        entities: Option<Source<'_>>,
    ) -> Result<Self, LoadError> {
        let schema_file = schema.file;
        let schema_source = schema;
        let (schema, schema_json) = load_schema(schema)?;
        let (set, meta) = load_policies(policies, schema_source, &schema)?;
        let action_entities = schema.action_entities().map_err(|e| {
            LoadError::new(
                LoadErrorCode::Schema,
                schema_file,
                format!("the schema's actions: {e}"),
            )
            .source(e)
        })?;
        let mut actions = index(&set, &schema, &action_entities, schema_file)?;
        let entities = match entities {
            Some(source) => load_entities(source, &schema)?,
            None => action_entities,
        };
        for entry in actions.values_mut() {
            entry.without_holds = without_holds(&entry.policies, &meta, schema_file)?;
        }
        let types = schema
            .entity_types()
            .map(|t| (t.to_string(), t.clone()))
            .collect();
        Ok(Self {
            types,
            schema,
            engine: Engine::new(),
            actions,
            policy_count: meta.len(),
            meta,
            entities,
            user_type: type_name(PRINCIPAL_TYPE, schema_file)?,
            role_type: type_name(ROLE_TYPE, schema_file)?,
            tool_type: type_name(TOOL_TYPE, schema_file)?,
            context_types: HashSet::new(),
            sources: HashMap::new(),
            args: declared::args_by_action(&schema_json),
            session_facts: declared::facts_by_action(&schema_json),
            set,
            facts: OnceLock::new(),
            shapes: CheckedShapes::default(),
        })
    }

    /// Trusts request contexts to add entities of these types (none by
    /// default): entities of other types, or that the static entities
    /// define, deny. Naming the principal's type ([`PRINCIPAL_TYPE`]) also
    /// lets the context's `roles` make a user the static entities do not
    /// define a member of those roles. Each type must be in the schema;
    /// `file` names the config in the error.
    pub fn with_context_entities<S: AsRef<str>>(
        mut self,
        types: impl IntoIterator<Item = S>,
        file: &Path,
    ) -> Result<Self, LoadError> {
        for t in types {
            let t = t.as_ref();
            if !self.types.contains_key(t) {
                return Err(LoadError::new(
                    LoadErrorCode::Schema,
                    file,
                    format!(
                        "`context_entities`: `{}` is not an entity type of the cedar schema",
                        t.escape_debug()
                    ),
                ));
            }
            self.context_types.insert(t.to_owned());
        }
        Ok(self)
    }

    /// How many policies are loaded.
    pub fn policy_count(&self) -> usize {
        self.policy_count
    }

    /// How many static entities (the entities file's) are of the entity
    /// type `name` (`Order`): the most ids narrowing can put into the `enum`
    /// of a resource argument of that type, before the context adds any.
    pub fn entity_count(&self, name: &str) -> usize {
        self.entities
            .iter()
            .filter(|e| e.uid().type_name().to_string() == name)
            .count()
    }

    /// How many policies can apply to the action of the tool `name` (the
    /// ones each of its calls is evaluated against).
    pub fn policies_for(&self, name: &str) -> usize {
        self.actions
            .get(name)
            .map_or(0, |a| a.policies.policies().count())
    }

    /// Fails if a tool of `registry` has no action in the schema, maps a
    /// resource type the schema does not declare, or lets through a number
    /// its argument's declared Cedar type cannot hold exactly (a `decimal`
    /// holds four fraction digits; see `value`): its calls could only be
    /// denied.
    pub fn check_registry(&self, registry: &Registry, file: &Path) -> Result<(), LoadError> {
        for tool in registry {
            if let Some(mapping) = tool.resource() {
                if !self.types.contains_key(mapping.entity_type()) {
                    return Err(LoadError::new(
                        LoadErrorCode::UnknownAction,
                        file,
                        format!(
                            "tool `{}`: the resource type `{}` is not in the cedar schema",
                            tool.name().escape_debug(),
                            mapping.entity_type().escape_debug()
                        ),
                    ));
                }
            }
            if let Some(problem) = self
                .args
                .get(tool.name())
                .and_then(|args| declared::number_problem(tool.raw_schema(), args))
            {
                return Err(LoadError::new(
                    LoadErrorCode::UnrepresentableNumber,
                    file,
                    format!("tool `{}`: {problem}", tool.name().escape_debug()),
                ));
            }
            if !self.actions.contains_key(tool.name()) {
                return Err(LoadError::new(
                    LoadErrorCode::UnknownAction,
                    file,
                    format!(
                        "tool `{}` has no `action \"{}\"` in the cedar schema",
                        tool.name().escape_debug(),
                        tool.name().escape_debug()
                    ),
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    pub(crate) fn facts(&self) -> &[PolicyFacts] {
        self.facts.get_or_init(|| {
            let mut applies: HashMap<String, Vec<String>> = HashMap::new();
            for (name, entry) in &self.actions {
                for policy in entry.policies.policies() {
                    applies
                        .entry(policy.id().to_string())
                        .or_default()
                        .push(name.clone());
                }
            }
            facts::collect(&self.set, &applies)
        })
    }

    pub(crate) fn meta(&self, id: &PolicyId) -> Option<PolicyMeta> {
        self.meta.get(id).copied()
    }

    /// The action uid and policies of a tool.
    pub(crate) fn action(&self, name: &str) -> Option<(&EntityUid, &PolicySet)> {
        self.actions.get(name).map(|a| (&a.uid, &a.policies))
    }

    /// The principal's uid.
    pub(crate) fn principal(&self, user: &str) -> EntityUid {
        EntityUid::from_type_name_and_id(self.user_type.clone(), EntityId::new(user))
    }

    /// The resource of a call to `tool`: the mapped entity, or the tool.
    pub(crate) fn resource(
        &self,
        tool: &Tool,
        id: Option<&Value<'_>>,
    ) -> Result<EntityUid, &'static str> {
        match tool.resource() {
            None => Ok(EntityUid::from_type_name_and_id(
                self.tool_type.clone(),
                EntityId::new(tool.name()),
            )),
            Some(mapping) => {
                let ty = self
                    .types
                    .get(mapping.entity_type())
                    .ok_or("the resource type is not in the cedar schema")?;
                resource_uid(ty, id)
            }
        }
    }

    /// The entities of one request: the static ones, the context's (of
    /// trusted types), and, for a principal the static entities do not
    /// define, the context's roles as its parents if the principal's type is
    /// trusted. Borrows the static entities when nothing is added.
    pub(crate) fn entities_for(
        &self,
        context: &Context,
        principal: &EntityUid,
    ) -> Result<Cow<'_, Entities>, String> {
        let mut extra = match &context.entities {
            None => Vec::new(),
            Some(value) => self.parse_entities(value)?,
        };
        // Roles are the static entities' for a user they define; the context
        // may assert them only for another user, and only if trusted to.
        let roles_trusted = self.entities.get(principal).is_none()
            && self.context_types.contains(&self.user_type.to_string());
        let roles: Vec<EntityUid> = if roles_trusted {
            context
                .roles
                .iter()
                .map(|r| EntityUid::from_type_name_and_id(self.role_type.clone(), EntityId::new(r)))
                .collect()
        } else {
            Vec::new()
        };
        let in_extra = extra.iter().position(|e| &e.uid() == principal);
        let missing_roles = match in_extra {
            Some(_) => !roles.is_empty(),
            None => roles
                .iter()
                .any(|r| !self.entities.is_ancestor_of(r, principal)),
        };
        if extra.is_empty() && !missing_roles {
            return Ok(Cow::Borrowed(&self.entities));
        }
        if missing_roles {
            let base = match in_extra {
                Some(i) => Some(extra.swap_remove(i)),
                None => self.entities.get(principal).cloned(),
            };
            let entity = match base {
                Some(entity) => {
                    let (uid, attrs, mut parents) = entity.into_inner();
                    parents.extend(roles);
                    Entity::new(uid, attrs, parents).map_err(|e| format!("principal: {e}"))?
                }
                None => Entity::new_no_attrs(principal.clone(), roles.into_iter().collect()),
            };
            extra.push(entity);
        }
        self.entities
            .clone()
            .upsert_entities(extra, Some(&self.schema))
            .map(Cow::Owned)
            .map_err(|e| format!("entities: {e}"))
    }

    /// The context's Cedar entity JSON (an array), each entity checked
    /// against the schema; an entity that is also a static one, or given
    /// twice, is an error.
    fn parse_entities(&self, value: &Value<'_>) -> Result<Vec<Entity>, String> {
        let items = value
            .as_array()
            .ok_or("context entities: not an array of cedar entities")?;
        let mut seen = HashSet::with_capacity(items.len());
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let text = toolgate_json::canonical::to_string(item);
            let entity = Entity::from_json_str(&text, Some(&self.schema))
                .map_err(|e| format!("context entity `/entities/{i}`: {e}"))?;
            let uid = entity.uid();
            let ty = uid.type_name().to_string();
            if !self.context_types.contains(&ty) {
                return Err(format!(
                    "context entity `/entities/{i}`: the config does not trust the context with `{}` entities (`[authorization] context_entities`)",
                    ty.escape_debug()
                ));
            }
            if self.entities.get(&uid).is_some() || !seen.insert(uid) {
                return Err(format!(
                    "context entity `/entities/{i}`: already given (statically or earlier)"
                ));
            }
            out.push(entity);
        }
        Ok(out)
    }

    /// Whether some action's context declares `labels`: the gate then
    /// reads the session's labels for every call.
    pub fn reads_session_labels(&self) -> bool {
        self.session_facts.values().any(|f| f.contains(&"labels"))
    }

    /// The Cedar context of a call: `args`, `turn`, `risk`, and the session
    /// facts the action's context declares (`labels`: the session's labels
    /// as a set of strings; `egress`: whether the tool sends data out).
    pub(crate) fn context(
        &self,
        args: RestrictedExpression,
        turn: u32,
        tool: &Tool,
        labels: &[String],
    ) -> Result<CedarContext, String> {
        let declared = self.session_facts.get(tool.name());
        let has = |f: &str| declared.is_some_and(|d| d.contains(&f));
        let mut facts = Vec::new();
        if has("labels") {
            facts.push((
                "labels".to_owned(),
                RestrictedExpression::new_set(
                    labels
                        .iter()
                        .map(|l| RestrictedExpression::new_string(l.clone())),
                ),
            ));
        }
        if has("egress") {
            facts.push((
                "egress".to_owned(),
                RestrictedExpression::new_bool(tool.egress()),
            ));
        }
        CedarContext::from_pairs(facts.into_iter().chain([
            ("args".to_owned(), args),
            (
                "turn".to_owned(),
                RestrictedExpression::new_long(turn.into()),
            ),
            (
                "risk".to_owned(),
                RestrictedExpression::new_string(tool.risk().as_str().to_owned()),
            ),
        ]))
        .map_err(|e| format!("context: {e}"))
    }

    /// The code of a denial decided by the forbids in `reason` (see the type
    /// documentation).
    fn deny_code(&self, reason: &[PolicyId], has_resource: bool) -> Code {
        let default = if has_resource {
            Code::NotOwner
        } else {
            Code::NotAuthorized
        };
        if reason.is_empty() {
            return default;
        }
        let codes: Vec<Option<Code>> = reason
            .iter()
            .map(|id| self.meta.get(id).and_then(|m| m.code))
            .collect();
        if codes.contains(&Some(Code::NotOwner)) {
            Code::NotOwner
        } else if codes.iter().all(|c| *c == Some(Code::NotAuthorized)) {
            Code::NotAuthorized
        } else {
            default
        }
    }

    fn decide(&self, request: &AuthzRequest<'_>) -> Result<Authorization, String> {
        let tool = request.tool;
        let (action, policies) = self
            .action(tool.name())
            .ok_or("the tool has no action in the cedar schema")?;
        let principal = self.principal(&request.context.user);
        let has_resource = tool.resource().is_some();
        if let Some(mapping) = tool.resource() {
            if !self.types.contains_key(mapping.entity_type()) {
                return Err("the resource type is not in the cedar schema".to_owned());
            }
        }
        let resource = match self.resource(tool, request.resource_id) {
            Ok(uid) => uid,
            // No id to look up: no entity is named, as for an unknown one.
            Err(_) => {
                return Ok(Authorization::deny(
                    Code::NotOwner,
                    vec![UNKNOWN_RESOURCE.to_owned()],
                ))
            }
        };
        let mut entities = self.entities_for(request.context, &principal)?;
        if has_resource && entities.get(&resource).is_none() {
            match self.fetch_resource(&resource) {
                Fetched::NoSource | Fetched::Absent => {
                    return Ok(Authorization::deny(
                        Code::NotOwner,
                        vec![UNKNOWN_RESOURCE.to_owned()],
                    ))
                }
                Fetched::Failed(kind) => {
                    return Ok(Authorization::deny(
                        Code::EntitySourceUnavailable,
                        vec![format!("{ENTITY_SOURCE}:{}", kind.as_str())],
                    ))
                }
                Fetched::Found(entity) => {
                    entities = Cow::Owned(
                        entities
                            .into_owned()
                            .add_entities([*entity], Some(&self.schema))
                            .map_err(|e| format!("fetched entity: {e}"))?,
                    );
                }
            }
        }
        let mut shape = String::new();
        let declared = self.args.get(tool.name());
        let args = to_cedar_shaped(request.arguments, declared, &mut String::new(), &mut shape)
            .map_err(|e| e.to_string())?;
        let context = self.context(args, request.context.turn, tool, request.labels)?;
        let shape = (tool.name(), !request.labels.is_empty(), shape.as_str());
        let (uids, schema) = ((principal, action.clone(), resource), &self.schema);
        let cedar_request = self.shapes.request(uids, context, schema, shape)?;
        let response = self
            .engine
            .is_authorized(&cedar_request, policies, &entities);
        let mut reason: Vec<PolicyId> = response.diagnostics().reason().cloned().collect();
        reason.sort_unstable_by_key(ToString::to_string);
        let ids = reason.iter().map(ToString::to_string).collect();
        let held = response.decision() == CedarDecision::Deny
            && !reason.is_empty()
            && response.diagnostics().errors().next().is_none()
            && reason
                .iter()
                .all(|id| self.meta.get(id).is_some_and(|m| m.hold));
        if held {
            // Only `@approval("required")` forbids deny: the call is a
            // human's to approve when the other policies permit it.
            if let Some(rest) = self
                .actions
                .get(tool.name())
                .and_then(|a| a.without_holds.as_ref())
            {
                let again = self.engine.is_authorized(&cedar_request, rest, &entities);
                if again.decision() == CedarDecision::Allow
                    && again.diagnostics().errors().next().is_none()
                {
                    let facts = super::held::read(policies, &reason, &cedar_request, &entities);
                    return Ok(Authorization::hold(ids).with_facts(facts));
                }
            }
        }
        let mut answer = match response.decision() {
            CedarDecision::Allow => Authorization::permit(ids),
            CedarDecision::Deny if reason.is_empty() => Authorization::deny(
                self.deny_code(&reason, has_resource),
                vec![DenyAll::POLICY_ID.to_owned()],
            ),
            CedarDecision::Deny => Authorization::deny(self.deny_code(&reason, has_resource), ids),
        };
        for error in response.diagnostics().errors() {
            answer = answer.with_error(error.to_string());
        }
        Ok(answer)
    }
}

impl Authorizer for CedarAuthorizer {
    fn authorize(&self, request: &AuthzRequest<'_>) -> Authorization {
        self.decide(request).unwrap_or_else(|error| {
            Authorization::deny(Code::AuthorizationError, Vec::new()).with_error(error)
        })
    }
}

impl fmt::Debug for CedarAuthorizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CedarAuthorizer")
            .field("policies", &self.policy_count)
            .field("actions", &self.actions.len())
            .field("entities", &self.entities.len())
            .finish_non_exhaustive()
    }
}

/// The uid a resource mapping names, from the argument at its pointer.
fn resource_uid(ty: &EntityTypeName, id: Option<&Value<'_>>) -> Result<EntityUid, &'static str> {
    let id: Cow<'_, str> = match id {
        Some(Value::String(s)) => Cow::Borrowed(s.as_ref()),
        Some(Value::Number(n)) if n.as_i64().is_some() => n.canonical(),
        Some(_) => return Err("the resource id is neither a string nor an integer"),
        None => return Err("the call names no resource id"),
    };
    Ok(EntityUid::from_type_name_and_id(
        ty.clone(),
        EntityId::new(id.as_ref()),
    ))
}

fn type_name(name: &'static str, file: &Path) -> Result<EntityTypeName, LoadError> {
    EntityTypeName::from_str(name).map_err(|e| {
        LoadError::new(
            LoadErrorCode::Schema,
            file,
            format!("`{name}` is not a cedar type name"),
        )
        .source(e)
    })
}

/// The byte offset of the first labelled span of a Cedar diagnostic.
fn offset(diagnostic: &dyn Diagnostic) -> Option<usize> {
    diagnostic
        .labels()
        .and_then(|mut labels| labels.next())
        .map(|label| label.offset())
}

/// The schema, and its JSON form for the declared-type readers: the text
/// parsed once (a fragment), or the JSON form kept from an earlier parse of
/// this very text where the process remembers ([`super::checked`]).
fn load_schema(source: Source<'_>) -> Result<(Schema, Value<'static>), LoadError> {
    fn invalid<E>(source: Source<'_>, e: E) -> LoadError
    where
        E: Diagnostic + std::error::Error + Send + Sync + 'static,
    {
        let err = LoadError::new(
            LoadErrorCode::Schema,
            source.file,
            format!("invalid cedar schema: {}", one_line(&e)),
        );
        let err = match offset(&e) {
            Some(at) => err.at_offset(source.text, at),
            None => err,
        };
        err.source(e)
    }
    if let Some(kept) = super::checked::kept_schema(source.text) {
        return Ok(kept);
    }
    let (fragment, _warnings) =
        SchemaFragment::from_cedarschema_str(source.text).map_err(|e| invalid(source, e))?;
    let json = fragment.to_json_string().ok();
    let schema = Schema::from_schema_fragments([fragment]).map_err(|e| invalid(source, e))?;
    super::checked::keep_schema(source.text, json.as_deref());
    Ok((schema, declared::json_root(json.as_deref())))
}

fn load_policies(
    source: Source<'_>,
    schema_source: Source<'_>,
    schema: &Schema,
) -> Result<(PolicySet, HashMap<PolicyId, PolicyMeta>), LoadError> {
    let parsed = PolicySet::from_str(source.text).map_err(|e| {
        let err = LoadError::new(
            LoadErrorCode::PolicySyntax,
            source.file,
            format!("invalid policy: {}", one_line(&e)),
        );
        let err = match offset(&e) {
            Some(at) => err.at_offset(source.text, at),
            None => err,
        };
        err.source(e)
    })?;
    let at_policy = |err: LoadError, policy: &Policy| match source.text.find(&policy.to_string()) {
        Some(at) => err.at_offset(source.text, at),
        None => err,
    };
    if let Some(template) = parsed.templates().next() {
        let err = LoadError::new(
            LoadErrorCode::Template,
            source.file,
            "policy templates are not supported: write static policies",
        );
        let err = match source.text.find(&template.to_string()) {
            Some(at) => err.at_offset(source.text, at),
            None => err,
        };
        return Err(err);
    }
    let mut set = PolicySet::new();
    let mut meta = HashMap::new();
    for policy in parsed.policies() {
        let id = super::facts::annotation(policy, "id")
            .map_or_else(|| policy.id().to_string(), str::to_owned);
        if id.is_empty() || meta.contains_key(&PolicyId::new(&id)) {
            return Err(at_policy(
                LoadError::new(
                    LoadErrorCode::DuplicatePolicyId,
                    source.file,
                    "the `@id` is empty or already used by another policy",
                ),
                policy,
            )
            .policy(id));
        }
        let code = match super::facts::annotation(policy, "code") {
            None => None,
            Some("not_owner") => Some(Code::NotOwner),
            Some("not_authorized") => Some(Code::NotAuthorized),
            Some(other) => {
                return Err(at_policy(
                    LoadError::new(
                        LoadErrorCode::InvalidAnnotation,
                        source.file,
                        format!(
                            "`@code(\"{}\")`: the code must be `not_owner` or `not_authorized`",
                            other.escape_debug()
                        ),
                    ),
                    policy,
                )
                .policy(id));
            }
        };
        let hold = match super::facts::annotation(policy, "approval") {
            None => false,
            Some("required") if policy.effect() == Effect::Forbid => true,
            Some(other) => {
                let message = if other == "required" {
                    "`@approval(\"required\")` is for a forbid: it turns what the forbid denies into a request for a human's approval".to_owned()
                } else {
                    format!(
                        "`@approval(\"{}\")`: the value must be `required`",
                        other.escape_debug()
                    )
                };
                return Err(at_policy(
                    LoadError::new(LoadErrorCode::InvalidAnnotation, source.file, message),
                    policy,
                )
                .policy(id));
            }
        };
        let renamed = policy.new_id(PolicyId::new(&id));
        meta.insert(
            PolicyId::new(&id),
            PolicyMeta {
                effect: policy.effect(),
                code,
                hold,
            },
        );
        set.add(renamed).map_err(|e| {
            at_policy(
                LoadError::new(
                    LoadErrorCode::DuplicatePolicyId,
                    source.file,
                    format!("cannot add the policy: {e}"),
                ),
                policy,
            )
            .policy(id.clone())
            .source(e)
        })?;
    }
    // Type-checked once per text where the process remembers validations
    // (`remember_validations`: the hook, started per call).
    let key = super::checked::key(schema_source.text, source.text);
    if key.as_deref().is_some_and(super::checked::known) {
        return Ok((set, meta));
    }
    let result = Validator::new(schema.clone()).validate(&set, ValidationMode::Strict);
    if let Some(e) = result.validation_errors().next() {
        let id = e.policy_id().to_string();
        let mut err = LoadError::new(
            LoadErrorCode::PolicyValidation,
            source.file,
            format!("does not type-check against the schema: {}", one_line(e)),
        )
        .policy(id);
        if let Some(at) = offset(e) {
            err = err.at_offset(source.text, at);
        } else if let Some(policy) = set.policy(e.policy_id()) {
            err = at_policy(err, policy);
        }
        return Err(err);
    }
    if let Some(key) = key {
        super::checked::remember(&key);
    }
    Ok((set, meta))
}

fn load_entities(source: Source<'_>, schema: &Schema) -> Result<Entities, LoadError> {
    let value = toolgate_json::from_str(source.text).map_err(|e| {
        let mut err = LoadError::new(
            LoadErrorCode::Entities,
            source.file,
            format!("not strict json: {}", e.code()),
        );
        err = err.at_offset(
            source.text,
            byte_of_line_column(source.text, e.line(), e.column()),
        );
        err.source(e)
    })?;
    let text = toolgate_json::canonical::to_string(&value);
    Entities::from_json_str(&text, Some(schema)).map_err(|e| {
        LoadError::new(
            LoadErrorCode::Entities,
            source.file,
            format!("entities do not conform to the schema: {}", one_line(&e)),
        )
        .source(e)
    })
}

/// The byte offset of a one-based line and column (in characters).
fn byte_of_line_column(text: &str, line: usize, column: usize) -> usize {
    let mut offset = 0;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line {
            return offset
                + l.char_indices()
                    .nth(column.saturating_sub(1))
                    .map_or(l.len(), |(b, _)| b);
        }
        offset += l.len();
    }
    text.len()
}

/// Indexes the policies by the actions of the schema their scope can match.
fn index(
    set: &PolicySet,
    schema: &Schema,
    action_entities: &Entities,
    file: &Path,
) -> Result<HashMap<String, ActionEntry>, LoadError> {
    let mut actions = HashMap::new();
    for uid in schema.actions() {
        if uid.type_name().to_string() != ACTION_TYPE {
            continue;
        }
        let ancestors: HashSet<&EntityUid> = action_entities
            .ancestors(uid)
            .map(Iterator::collect)
            .unwrap_or_default();
        let mut policies = PolicySet::new();
        for policy in set.policies() {
            let applies = match policy.action_constraint() {
                ActionConstraint::Any => true,
                ActionConstraint::Eq(a) => &a == uid,
                ActionConstraint::In(list) => {
                    list.iter().any(|a| a == uid || ancestors.contains(a))
                }
            };
            if applies {
                policies.add(policy.clone()).map_err(|e| {
                    LoadError::new(
                        LoadErrorCode::DuplicatePolicyId,
                        file,
                        format!("cannot index the policy: {e}"),
                    )
                    .policy(policy.id().to_string())
                    .source(e)
                })?;
            }
        }
        actions.insert(
            uid.id().unescaped().to_owned(),
            ActionEntry {
                uid: uid.clone(),
                policies,
                without_holds: None,
            },
        );
    }
    Ok(actions)
}

/// `policies` without its `@approval("required")` forbids, or `None` when it
/// has none.
fn without_holds(
    policies: &PolicySet,
    meta: &HashMap<PolicyId, PolicyMeta>,
    file: &Path,
) -> Result<Option<PolicySet>, LoadError> {
    let held = |p: &Policy| meta.get(p.id()).is_some_and(|m| m.hold);
    if !policies.policies().any(held) {
        return Ok(None);
    }
    let mut rest = PolicySet::new();
    for policy in policies.policies().filter(|p| !held(p)) {
        rest.add(policy.clone()).map_err(|e| {
            LoadError::new(
                LoadErrorCode::DuplicatePolicyId,
                file,
                format!("cannot index the policy: {e}"),
            )
            .policy(policy.id().to_string())
            .source(e)
        })?;
    }
    Ok(Some(rest))
}

/// An error's message on one line.
fn one_line(e: &dyn std::fmt::Display) -> String {
    e.to_string()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}
