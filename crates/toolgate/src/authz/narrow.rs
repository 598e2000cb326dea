//! Per-user narrowed tool declarations; documented on
//! [`CedarAuthorizer::narrow`].

use std::borrow::Cow;
use std::fmt;

use cedar_policy::{Decision as CedarDecision, Effect, EntityUid, Request, RestrictedExpression};
use toolgate_json::{Number, Object, Value};

use super::cedar::CedarAuthorizer;
use crate::context::Context;
use crate::registry::{Registry, Tool};

/// The shape of an emitted tools array.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ToolsFormat {
    /// OpenAI Chat Completions `tools`:
    /// `[{"type":"function","function":{"name","description","parameters"}}]`.
    OpenAi,
    /// Anthropic Messages `tools`: `[{"name","description","input_schema"}]`.
    Anthropic,
}

/// One tool as one user may call it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct NarrowedTool {
    /// The tool's name.
    pub name: String,
    /// Its description, if any.
    pub description: Option<String>,
    /// Its argument schema, with the resource argument narrowed to an `enum`.
    pub schema: Value<'static>,
    /// The resource ids the user may touch (sorted), or `None` for a tool
    /// that maps no resource.
    pub ids: Option<Vec<String>>,
}

/// The tools one user may call, each resource argument narrowed to the ids
/// of the entities that user may touch.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Narrowed {
    /// The tools, in the registry's order; tools the user cannot call at
    /// all are left out.
    pub tools: Vec<NarrowedTool>,
}

impl Narrowed {
    /// The tools array in `format`.
    pub fn to_json(&self, format: ToolsFormat) -> Value<'static> {
        Value::Array(
            self.tools
                .iter()
                .map(|t| {
                    let mut o = Object::new();
                    let description = t.description.clone().map(|d| Value::String(Cow::Owned(d)));
                    match format {
                        ToolsFormat::OpenAi => {
                            let mut f = Object::new();
                            f.insert("name", Value::String(Cow::Owned(t.name.clone())));
                            if let Some(d) = description {
                                f.insert("description", d);
                            }
                            f.insert("parameters", t.schema.clone());
                            o.insert("type", Value::String(Cow::Borrowed("function")));
                            o.insert("function", Value::Object(f));
                        }
                        ToolsFormat::Anthropic => {
                            o.insert("name", Value::String(Cow::Owned(t.name.clone())));
                            if let Some(d) = description {
                                o.insert("description", d);
                            }
                            o.insert("input_schema", t.schema.clone());
                        }
                    }
                    Value::Object(o)
                })
                .collect(),
        )
    }
}

/// The entities given for narrowing could not be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NarrowError {
    message: String,
}

impl fmt::Display for NarrowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for NarrowError {}

impl CedarAuthorizer {
    /// The tools of `registry` as the user of `context` may call them: for a
    /// tool that maps a resource, its resource argument becomes an `enum` of
    /// the ids of the entities of that type (static and the context's) the
    /// policies let this user touch; a tool that ends with no id, or whose
    /// call the policies deny whatever the arguments, is left out. So a model
    /// with constrained decoding cannot even name another user's order. The
    /// gate still checks every call.
    ///
    /// Each candidate is evaluated without arguments (only the resource id
    /// is in `context.args`): a forbid satisfied without reading the
    /// arguments leaves the candidate out; a permit that needs the arguments
    /// (it errors here) keeps it in. Narrowing may so keep an id that some
    /// calls on it are denied, never drop one a call on it would be allowed.
    pub fn narrow(&self, registry: &Registry, context: &Context) -> Result<Narrowed, NarrowError> {
        let principal = self.principal(&context.user);
        let entities = self
            .entities_for(context, &principal)
            .map_err(|message| NarrowError { message })?;
        let mut tools = Vec::new();
        for tool in registry {
            let Some((action, policies)) = self.action(tool.name()) else {
                continue;
            };
            let candidates: Vec<EntityUid> = match tool.resource() {
                None => self.resource(tool, None).into_iter().collect(),
                Some(mapping) => {
                    let mut found: Vec<EntityUid> = entities
                        .iter()
                        .map(cedar_policy::Entity::uid)
                        .filter(|uid| uid.type_name().to_string() == mapping.entity_type())
                        .collect();
                    found.sort_unstable_by(|a, b| a.id().unescaped().cmp(b.id().unescaped()));
                    found
                }
            };
            let mut ids = Vec::new();
            for resource in candidates {
                let args = match tool.resource() {
                    None => RestrictedExpression::new_record([]).map_err(|_| ()),
                    Some(mapping) => id_record(mapping.id_pointer(), resource.id().unescaped()),
                };
                let Ok(args) = args else { continue };
                let Ok(cedar_context) = self.context(args, context.turn, tool, &context.labels)
                else {
                    continue;
                };
                let Ok(request) = Request::new(
                    principal.clone(),
                    action.clone(),
                    resource.clone(),
                    cedar_context,
                    None,
                ) else {
                    continue;
                };
                let response = self.engine().is_authorized(&request, policies, &entities);
                let keep = match response.decision() {
                    CedarDecision::Allow => true,
                    CedarDecision::Deny => {
                        response.diagnostics().reason().next().is_none()
                            && response.diagnostics().errors().any(|e| {
                                let cedar_policy::AuthorizationError::PolicyEvaluationError(e) = e;
                                self.meta(e.policy_id())
                                    .is_some_and(|m| m.effect == Effect::Permit)
                            })
                    }
                };
                if keep {
                    ids.push(resource.id().unescaped().to_owned());
                }
            }
            if ids.is_empty() {
                continue;
            }
            let (schema, ids) = match tool.resource() {
                None => (tool.raw_schema().clone(), None),
                Some(mapping) => (narrow_schema(tool, mapping.id_pointer(), &ids), Some(ids)),
            };
            tools.push(NarrowedTool {
                name: tool.name().to_owned(),
                description: tool.description().map(str::to_owned),
                schema,
                ids,
            });
        }
        Ok(Narrowed { tools })
    }
}

/// `{ a: { b: id } }` for the pointer `/a/b`.
fn id_record(pointer: &str, id: &str) -> Result<RestrictedExpression, ()> {
    let tokens: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|t| toolgate_json::pointer::unescape_token(t).into_owned())
        .collect();
    let mut value = RestrictedExpression::new_string(id.to_owned());
    for token in tokens.into_iter().rev() {
        value = RestrictedExpression::new_record([(token, value)]).map_err(|_| ())?;
    }
    Ok(value)
}

/// The tool's schema with the property at `pointer` narrowed to `ids`
/// (numbers where the property is an integer; an existing `enum` is
/// intersected).
fn narrow_schema(tool: &Tool, pointer: &str, ids: &[String]) -> Value<'static> {
    let tokens: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(|t| toolgate_json::pointer::unescape_token(t).into_owned())
        .collect();
    narrow_at(tool.raw_schema(), &tokens, ids)
}

fn narrow_at(schema: &Value<'static>, tokens: &[String], ids: &[String]) -> Value<'static> {
    let Some(object) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = Object::new();
    match tokens.split_first() {
        None => {
            let integer = object.get("type").and_then(Value::as_str) == Some("integer");
            let mut allowed: Vec<Value<'static>> = ids
                .iter()
                .filter_map(|id| {
                    if integer {
                        id.parse::<i64>()
                            .ok()
                            .map(|n| Value::Number(Number::from(n)))
                    } else {
                        Some(Value::String(Cow::Owned(id.clone())))
                    }
                })
                .collect();
            if let Some(existing) = object.get("enum").and_then(Value::as_array) {
                allowed.retain(|v| existing.contains(v));
            }
            for (name, member) in object.iter() {
                if name != "enum" {
                    out.insert(name.to_owned(), member.clone());
                }
            }
            out.insert("enum", Value::Array(allowed));
        }
        Some((head, rest)) => {
            for (name, member) in object.iter() {
                let member = match (name, member.as_object()) {
                    ("properties", Some(props)) => {
                        let mut p = Object::new();
                        for (prop, schema) in props.iter() {
                            if prop == head.as_str() {
                                p.insert(prop.to_owned(), narrow_at(schema, rest, ids));
                            } else {
                                p.insert(prop.to_owned(), schema.clone());
                            }
                        }
                        Value::Object(p)
                    }
                    _ => member.clone(),
                };
                out.insert(name.to_owned(), member);
            }
        }
    }
    Value::Object(out)
}
