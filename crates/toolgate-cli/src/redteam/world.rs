//! What the red team knows of the operator's data: the static entities of
//! the config's `[authorization] entities` file, read as Cedar entity JSON.
//! Ownership is data, not policy: a resource is owned by the users its
//! attributes name, whatever the policies say, so a policy that lets a user
//! act on another user's resource is caught.

use std::path::Path;

use anyhow::Context as _;
use toolgate::authz::PRINCIPAL_TYPE;
use toolgate_json::Value;

/// One attribute value that matters here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attr {
    /// A reference to another entity: `(type, id)`.
    Ref(String, String),
    /// An integer.
    Int(i64),
}

/// One entity.
#[derive(Debug, Clone)]
pub struct Entity {
    /// Its type, such as `Order`.
    pub kind: String,
    /// Its id, such as `ord_1001`.
    pub id: String,
    /// Its attributes that are references or integers.
    pub attrs: Vec<(String, Attr)>,
}

impl Entity {
    /// Whether an attribute names `user` (a principal).
    pub fn owned_by(&self, user: &str) -> bool {
        self.attrs
            .iter()
            .any(|(_, a)| matches!(a, Attr::Ref(t, id) if t == PRINCIPAL_TYPE && id == user))
    }

    /// Whether any attribute names a principal.
    pub fn has_owner(&self) -> bool {
        self.attrs
            .iter()
            .any(|(_, a)| matches!(a, Attr::Ref(t, _) if t == PRINCIPAL_TYPE))
    }

    /// The integer attribute `name`.
    pub fn int(&self, name: &str) -> Option<i64> {
        self.attrs.iter().find_map(|(n, a)| match a {
            Attr::Int(v) if n == name => Some(*v),
            _ => None,
        })
    }
}

/// The static entities.
#[derive(Debug, Clone, Default)]
pub struct World {
    /// Every entity, in file order.
    pub entities: Vec<Entity>,
}

impl World {
    /// Reads the entities file (already accepted by the config's loader).
    pub fn load(path: Option<&Path>) -> anyhow::Result<Self> {
        let Some(path) = path else {
            return Ok(Self::default());
        };
        let bytes = std::fs::read(path)
            .with_context(|| format!("cannot read the entities `{}`", path.display()))?;
        let doc = toolgate_json::from_slice(&bytes).map_err(|e| {
            anyhow::anyhow!("the entities `{}` are not strict JSON: {e}", path.display())
        })?;
        let mut entities = Vec::new();
        for e in doc.as_array().unwrap_or_default() {
            let Some((kind, id)) = e.as_object().and_then(|o| o.get("uid")).and_then(uid) else {
                continue;
            };
            let attrs = e
                .as_object()
                .and_then(|o| o.get("attrs"))
                .and_then(Value::as_object)
                .map(|attrs| {
                    attrs
                        .iter()
                        .filter_map(|(name, v)| {
                            let a = match v {
                                Value::Number(n) => Attr::Int(n.as_i64()?),
                                other => {
                                    let (t, id) = uid(other)?;
                                    Attr::Ref(t, id)
                                }
                            };
                            Some((name.to_owned(), a))
                        })
                        .collect()
                })
                .unwrap_or_default();
            entities.push(Entity { kind, id, attrs });
        }
        Ok(Self { entities })
    }

    /// The users (principals) the entities define.
    pub fn users(&self) -> impl Iterator<Item = &str> {
        self.of_kind(PRINCIPAL_TYPE).map(|e| e.id.as_str())
    }

    /// The entities of one type.
    pub fn of_kind<'a>(&'a self, kind: &'a str) -> impl Iterator<Item = &'a Entity> + 'a {
        self.entities.iter().filter(move |e| e.kind == kind)
    }
}

/// `{"type": T, "id": I}` or `{"__entity": {…}}`.
fn uid(v: &Value<'_>) -> Option<(String, String)> {
    let o = v.as_object()?;
    if let Some(inner) = o.get("__entity") {
        return uid(inner);
    }
    Some((
        o.get("type")?.as_str()?.to_owned(),
        o.get("id")?.as_str()?.to_owned(),
    ))
}
