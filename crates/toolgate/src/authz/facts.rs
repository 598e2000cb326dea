//! What the loaded policies say, for tools that reason about them (`toolgate
//! lint`, red-team generation); documented on
//! [`CedarAuthorizer::policy_facts`].

use std::collections::HashMap;

use cedar_policy::{ActionConstraint, Effect, Policy, PolicySet};
use toolgate_json::Value;

use super::cedar::CedarAuthorizer;

/// Whether a policy permits or forbids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum PolicyEffect {
    /// `permit(…)`.
    Permit,
    /// `forbid(…)`.
    Forbid,
}

impl PolicyEffect {
    /// `permit` or `forbid`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Permit => "permit",
            Self::Forbid => "forbid",
        }
    }
}

/// The actions a policy's scope can match.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ActionScope {
    /// `action` unconstrained: every action.
    Any,
    /// The ids of the schema's actions (`Action::"<id>"`, a tool's name) the
    /// scope matches, sorted: `action == …`, or `action in […]` resolved
    /// through the schema's action groups (a group itself is listed too).
    /// Empty when it matches none.
    Actions(Vec<String>),
}

impl ActionScope {
    /// Whether the scope matches the action of the tool `name`.
    pub fn matches(&self, name: &str) -> bool {
        match self {
            Self::Any => true,
            Self::Actions(list) => list.iter().any(|a| a == name),
        }
    }
}

/// A comparison operator found in a policy's condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum CompareOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
}

impl CompareOp {
    /// The operator as Cedar writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lt => "<",
            Self::Le => "<=",
            Self::Gt => ">",
            Self::Ge => ">=",
            Self::Eq => "==",
        }
    }

    fn from_est(key: &str) -> Option<Self> {
        Some(match key {
            "<" => Self::Lt,
            "<=" => Self::Le,
            ">" => Self::Gt,
            ">=" => Self::Ge,
            "==" => Self::Eq,
            _ => return None,
        })
    }

    /// The operator with its operands swapped (`a < b` is `b > a`).
    fn flipped(self) -> Self {
        match self {
            Self::Lt => Self::Gt,
            Self::Le => Self::Ge,
            Self::Gt => Self::Lt,
            Self::Ge => Self::Le,
            Self::Eq => Self::Eq,
        }
    }
}

/// What an argument is compared with.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Operand {
    /// `resource.<attr>`: an attribute of the call's resource entity.
    ResourceAttr(String),
    /// An integer constant (a Cedar `Long`).
    Integer(i64),
    /// A string constant (only with `==`).
    String(String),
}

/// The clause a comparison was found in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Clause {
    /// `when { … }`: the policy applies if the condition holds.
    When,
    /// `unless { … }`: the policy applies if the condition does not hold.
    Unless,
}

/// `context.args.<arg> <op> <operand>`, found in a policy's condition
/// (written either way round; reported with the argument on the left).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ArgComparison {
    /// The argument, as a JSON Pointer into the call's arguments
    /// (`context.args.amount_cents` is `/amount_cents`).
    pub arg: String,
    /// The operator, with the argument on its left.
    pub op: CompareOp,
    /// What the argument is compared with.
    pub operand: Operand,
    /// The clause the comparison is in.
    pub clause: Clause,
    /// Whether it sits under an odd number of `!`s inside that clause.
    pub negated: bool,
}

/// What one loaded policy says, from its own form (Cedar's JSON policy
/// format), without evaluating it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct PolicyFacts {
    /// Its id: the `@id` annotation (or Cedar's `policyN`).
    pub id: String,
    /// Permit or forbid.
    pub effect: PolicyEffect,
    /// The actions its scope can match.
    pub actions: ActionScope,
    /// Whether it has a `@code` annotation (the reason code of a denying
    /// forbid).
    pub has_code: bool,
    /// Every comparison of an argument with a resource attribute or a
    /// constant in its conditions, in the order written.
    pub comparisons: Vec<ArgComparison>,
}

impl CedarAuthorizer {
    /// What each loaded policy says, sorted by id: its effect, the actions
    /// its scope can match, whether it has a `@code`, and the comparisons of
    /// arguments with resource attributes or constants in its conditions.
    ///
    /// The comparisons are found syntactically, anywhere in a `when` or
    /// `unless` body (also under `&&`, `||`, `!`, `if`); a comparison
    /// Cedar's JSON form does not show as `context.args.… op …` (arithmetic,
    /// a `has` guard, a record literal) is not listed. This is a description
    /// for tools, never an authorization answer.
    pub fn policy_facts(&self) -> &[PolicyFacts] {
        self.facts()
    }
}

/// The facts of every policy of `set`; `applies` lists, per policy id, the
/// schema actions its scope matches (as the index found them).
pub(crate) fn collect(set: &PolicySet, applies: &HashMap<String, Vec<String>>) -> Vec<PolicyFacts> {
    let mut facts: Vec<PolicyFacts> = set
        .policies()
        .map(|policy| {
            let id = policy.id().to_string();
            let actions = match policy.action_constraint() {
                ActionConstraint::Any => ActionScope::Any,
                ActionConstraint::Eq(_) | ActionConstraint::In(_) => {
                    let mut list = applies.get(&id).cloned().unwrap_or_default();
                    list.sort_unstable();
                    list.dedup();
                    ActionScope::Actions(list)
                }
            };
            PolicyFacts {
                effect: match policy.effect() {
                    Effect::Permit => PolicyEffect::Permit,
                    Effect::Forbid => PolicyEffect::Forbid,
                },
                actions,
                // A forbid that asks for a human (`@approval`) reports
                // `approval_required`, never a fallback code.
                has_code: annotation(policy, "code").is_some()
                    || annotation(policy, "approval").is_some(),
                comparisons: comparisons(policy),
                id,
            }
        })
        .collect();
    facts.sort_by(|a, b| a.id.cmp(&b.id));
    facts
}

/// The comparisons in `policy`'s conditions, read from its JSON form (a
/// policy whose JSON form cannot be made has none listed).
fn comparisons(policy: &Policy) -> Vec<ArgComparison> {
    let Ok(json) = policy.to_json() else {
        return Vec::new();
    };
    let text = json.to_string();
    let Ok(est) = toolgate_json::from_str(&text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let conditions = est
        .as_object()
        .and_then(|o| o.get("conditions"))
        .and_then(Value::as_array);
    for condition in conditions.into_iter().flatten() {
        let Some(c) = condition.as_object() else {
            continue;
        };
        let clause = match c.get("kind").and_then(Value::as_str) {
            Some("when") => Clause::When,
            Some("unless") => Clause::Unless,
            _ => continue,
        };
        if let Some(body) = c.get("body") {
            walk(body, clause, false, &mut out);
        }
    }
    out
}

/// Every comparison under `expr`, with the parity of the `!`s above it.
fn walk(expr: &Value<'_>, clause: Clause, negated: bool, out: &mut Vec<ArgComparison>) {
    match expr {
        Value::Array(items) => {
            for item in items {
                walk(item, clause, negated, out);
            }
        }
        Value::Object(o) => {
            for (key, inner) in o.iter() {
                if let Some(op) = CompareOp::from_est(key) {
                    if let Some(found) = comparison(inner, op, clause, negated) {
                        out.push(found);
                        continue;
                    }
                }
                // A literal's contents (`{"Value": …}`) hold no expression.
                if key == "Value" {
                    continue;
                }
                walk(inner, clause, negated ^ (key == "!"), out);
            }
        }
        _ => {}
    }
}

/// `{"left": …, "right": …}` as an argument compared with an operand.
fn comparison(
    operands: &Value<'_>,
    op: CompareOp,
    clause: Clause,
    negated: bool,
) -> Option<ArgComparison> {
    let o = operands.as_object()?;
    let (left, right) = (o.get("left")?, o.get("right")?);
    let (arg, operand, op) = match (arg_pointer(left), arg_pointer(right)) {
        (Some(arg), None) => (arg, operand(right, op)?, op),
        (None, Some(arg)) => (arg, operand(left, op)?, op.flipped()),
        _ => return None,
    };
    Some(ArgComparison {
        arg,
        op,
        operand,
        clause,
        negated,
    })
}

/// `context.args.a.b` as the pointer `/a/b`.
fn arg_pointer(expr: &Value<'_>) -> Option<String> {
    let mut path = Vec::new();
    let mut at = expr;
    loop {
        let o = at.as_object()?;
        if let Some(access) = o.get(".").and_then(Value::as_object) {
            path.push(access.get("attr")?.as_str()?);
            at = access.get("left")?;
            continue;
        }
        if o.get("Var").and_then(Value::as_str) != Some("context") {
            return None;
        }
        break;
    }
    // Innermost first: `args`, then the argument's path.
    path.reverse();
    let (first, rest) = path.split_first()?;
    if *first != "args" || rest.is_empty() {
        return None;
    }
    Some(rest.iter().fold(String::new(), |mut p, segment| {
        p.push('/');
        p.push_str(&segment.replace('~', "~0").replace('/', "~1"));
        p
    }))
}

/// A resource attribute, an integer, or (for `==`) a string.
fn operand(expr: &Value<'_>, op: CompareOp) -> Option<Operand> {
    let o = expr.as_object()?;
    if let Some(access) = o.get(".").and_then(Value::as_object) {
        let left = access.get("left")?.as_object()?;
        if left.get("Var").and_then(Value::as_str) == Some("resource") {
            return Some(Operand::ResourceAttr(
                access.get("attr")?.as_str()?.to_owned(),
            ));
        }
        return None;
    }
    if let Some(inner) = o.get("neg").and_then(Value::as_object) {
        return match operand(inner.get("arg")?, op)? {
            Operand::Integer(n) => n.checked_neg().map(Operand::Integer),
            Operand::ResourceAttr(_) | Operand::String(_) => None,
        };
    }
    match o.get("Value")? {
        Value::Number(n) => n.as_i64().map(Operand::Integer),
        Value::String(s) if op == CompareOp::Eq => Some(Operand::String(s.to_string())),
        _ => None,
    }
}

/// The value of the annotation `key` of `policy`: what
/// `Policy::annotation` answers for a valid key, without parsing the key
/// with Cedar's grammar on every call (most of its cost).
pub(super) fn annotation<'p>(policy: &'p Policy, key: &str) -> Option<&'p str> {
    policy
        .annotations()
        .find(|(name, _)| *name == key)
        .map(|(_, value)| value)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use std::str::FromStr;

    use super::*;

    fn facts(text: &str, actions: &[(&str, &[&str])]) -> Vec<PolicyFacts> {
        let set = PolicySet::from_str(text).unwrap();
        let applies = actions
            .iter()
            .map(|(id, a)| {
                (
                    (*id).to_owned(),
                    a.iter().map(|s| (*s).to_owned()).collect(),
                )
            })
            .collect();
        collect(&set, &applies)
    }

    #[test]
    fn comparisons_with_resource_attributes_and_constants() {
        let f = facts(
            r#"forbid(principal, action == Action::"refund", resource)
               when { context.args.amount_cents > resource.total_cents && 10 <= context.args.n }
               unless { !(context.args.reason == "late") || context.args.x.y < -3 };"#,
            &[("policy0", &["refund"])],
        );
        let p = f.first().unwrap();
        assert_eq!(p.effect, PolicyEffect::Forbid);
        assert_eq!(p.actions, ActionScope::Actions(vec!["refund".to_owned()]));
        assert!(!p.has_code);
        let got: Vec<_> = p
            .comparisons
            .iter()
            .map(|c| (c.arg.as_str(), c.op, c.operand.clone(), c.clause, c.negated))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "/amount_cents",
                    CompareOp::Gt,
                    Operand::ResourceAttr("total_cents".to_owned()),
                    Clause::When,
                    false
                ),
                (
                    "/n",
                    CompareOp::Ge,
                    Operand::Integer(10),
                    Clause::When,
                    false
                ),
                (
                    "/reason",
                    CompareOp::Eq,
                    Operand::String("late".to_owned()),
                    Clause::Unless,
                    true
                ),
                (
                    "/x/y",
                    CompareOp::Lt,
                    Operand::Integer(-3),
                    Clause::Unless,
                    false
                ),
            ]
        );
    }

    #[test]
    fn scope_any_and_annotations() {
        let f = facts(
            r#"@id("b") @code("not_owner") forbid(principal, action, resource);
               @id("a") permit(principal, action in [Action::"x"], resource)
               when { principal == resource.owner };"#,
            &[],
        );
        assert_eq!(f.len(), 2);
        // Ids as Cedar gives them here (`policy1`, `policy0`), sorted.
        let any = f.iter().find(|p| p.actions == ActionScope::Any).unwrap();
        assert!(any.has_code && any.comparisons.is_empty());
        let none = f.iter().find(|p| p.effect == PolicyEffect::Permit).unwrap();
        assert_eq!(none.actions, ActionScope::Actions(Vec::new()));
        assert!(!none.actions.matches("x"));
        assert!(none.comparisons.is_empty());
    }

    #[test]
    fn the_shops_policies() {
        let file = |f: &str| toolgate_testkit::shop_dir().join(f);
        let cedar = CedarAuthorizer::load(
            &file("policies.cedar"),
            &file("shop.cedarschema"),
            Some(&file("entities.json")),
        )
        .unwrap();
        assert_eq!(cedar.entity_count("Order"), 3);
        let facts = cedar.policy_facts();
        let ids: Vec<_> = facts.iter().map(|p| p.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "catalogue-and-site",
                "order-of-another-user",
                "owner-reads-order",
                "owner-refunds-order",
                "refund-at-most-total",
                "support-reads-order",
                "support-refund-limit",
                "support-refunds-order",
                "trifecta-egress",
            ]
        );
        let site = facts.first().unwrap();
        assert_eq!(
            site.actions,
            ActionScope::Actions(vec![
                "fetch_url".to_owned(),
                "run_tests".to_owned(),
                "search".to_owned()
            ])
        );
        let total = facts
            .iter()
            .find(|p| p.id == "refund-at-most-total")
            .unwrap();
        assert!(total.has_code && total.effect == PolicyEffect::Forbid);
        assert_eq!(
            total.comparisons,
            [ArgComparison {
                arg: "/amount_cents".to_owned(),
                op: CompareOp::Gt,
                operand: Operand::ResourceAttr("total_cents".to_owned()),
                clause: Clause::When,
                negated: false,
            }]
        );
        let limit = facts
            .iter()
            .find(|p| p.id == "support-refund-limit")
            .unwrap();
        assert_eq!(
            limit.comparisons.first().map(|c| (&c.operand, c.op)),
            Some((&Operand::Integer(5000), CompareOp::Gt))
        );
    }
}
