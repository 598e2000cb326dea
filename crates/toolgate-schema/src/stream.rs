//! The tree-free path: a schema's objects and arrays checked while the
//! [`toolgate_json::Reader`] reads, scalars checked by the same evaluator
//! as the tree path.
//!
//! Each compiled node gets a [`Plan`]: what an object or an array must be
//! to pass every keyword of the node, derived from the keywords' own
//! description of themselves ([`Part`]). The plan only ever *accepts*:
//! where a keyword cannot be checked member by member (`enum`, `anyOf`,
//! `unevaluatedProperties`, `patternProperties`, `uniqueItems`, …) the plan
//! refuses the container, and the caller runs the tree path, which decides
//! and explains. A scalar is evaluated with [`Compiled::eval`] itself, so
//! every scalar keyword has one implementation.
//!
//! Why the accept verdicts agree: a plan lists, for a node, exactly the
//! conditions its keywords put on an object (its type, each declared
//! member's schema, what undeclared members get, the required names, the
//! member count) or an array (its type, each item's schema by position, the
//! item count), and the walk checks all of them; a node whose keywords it
//! cannot describe is refused. Evaluation depth is counted as the tree
//! counts it, so the recursion limit falls where it does there.

use toolgate_json::{Name, Value, Visitor};

use crate::keywords::{ARRAY, OBJECT};
use crate::names::NameSet;
use crate::validator::{Ann, Compiled, Cx, Node, NodeId, NodeKind, Path, MAX_EVAL_DEPTH};

/// What one keyword does to an object or an array instance.
#[derive(Debug)]
pub(crate) enum Part<'k> {
    /// The keyword passes every object and array (it is about scalars).
    ScalarOnly,
    /// `type`: the mask of allowed types.
    Type(u8),
    /// `properties`, with the closure and `required` folded in.
    Properties {
        names: &'k NameSet,
        nodes: &'k [NodeId],
        closed: bool,
        /// Bits of the positions in `names` that must be present.
        required: u64,
    },
    /// `additionalProperties` without `patternProperties` beside it.
    Additional { deny: bool, node: NodeId },
    /// `required` (not folded into `properties`).
    Required(&'k NameSet),
    /// `minItems`, `maxItems`, `minProperties`, `maxProperties`.
    Size { limit: u64, max: bool, items: bool },
    /// `items`: every item from `skip` on.
    Items {
        skip: usize,
        node: NodeId,
        deny: bool,
    },
    /// `prefixItems`.
    PrefixItems(&'k [NodeId]),
    /// `$ref`: the target node, in place.
    Ref(NodeId),
    /// Anything else.
    Opaque,
}

/// What a member or an item must satisfy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    /// Anything.
    Any,
    /// Nothing: its presence fails.
    Deny,
    /// This node.
    Node(NodeId),
}

/// How an object or array instance is checked at one node.
#[derive(Debug)]
pub(crate) enum Check<P> {
    /// Not on this path: the tree decides.
    Refuse,
    /// Every such container passes, whatever it holds.
    Any,
    /// Member by member, item by item.
    Walk(P),
}

/// The conditions on an object.
#[derive(Debug)]
pub(crate) struct ObjectPlan {
    names: NameSet,
    nodes: Vec<NodeId>,
    /// What members not in `names` get.
    other: Target,
    /// Bits of the positions in `names` that must be present.
    required: u64,
    /// A `required` list not folded into `names` (at most 64 names).
    also_required: Option<NameSet>,
    min: u64,
    max: u64,
}

/// The conditions on an array.
#[derive(Debug)]
pub(crate) struct ArrayPlan {
    prefix: Vec<NodeId>,
    /// Where `items` starts (the `prefixItems` length beside it).
    skip: usize,
    /// What items from `skip` on get.
    rest: Target,
    min: u64,
    max: u64,
}

/// The plan of one node.
#[derive(Debug)]
#[expect(
    clippy::large_enum_variant,
    reason = "one plan per node, read for every member: kept inline, without an indirection"
)]
pub(crate) enum Plan {
    /// A schema object or boolean schema.
    Own {
        object: Check<ObjectPlan>,
        array: Check<ArrayPlan>,
    },
    /// A schema object whose only container keyword is `$ref`: the target's plan.
    Alias(NodeId),
}

/// The plans of every node, by node id.
pub(crate) fn plans(nodes: &[Node]) -> Vec<Plan> {
    nodes.iter().map(plan).collect()
}

fn plan(node: &Node) -> Plan {
    let list = match &node.kind {
        NodeKind::Bool(true) => {
            return Plan::Own {
                object: Check::Any,
                array: Check::Any,
            }
        }
        NodeKind::Bool(false) => return refuse(),
        NodeKind::Keywords {
            has_unevaluated: true,
            ..
        } => return refuse(),
        NodeKind::Keywords { list, leaf, .. } => {
            if let Some(leaf) = leaf {
                // A leaf holds no container keyword: a container passes
                // when the leaf check says so, and is left to the tree
                // otherwise.
                let object = leaf.accepts(&Value::Object(toolgate_json::Object::new()));
                let array = leaf.accepts(&Value::Array(Vec::new()));
                return Plan::Own {
                    object: if object { Check::Any } else { Check::Refuse },
                    array: if array { Check::Any } else { Check::Refuse },
                };
            }
            list
        }
    };
    let mut object = Some(ObjectPlan {
        names: NameSet::default(),
        nodes: Vec::new(),
        other: Target::Any,
        required: 0,
        also_required: None,
        min: 0,
        max: u64::MAX,
    });
    let mut array = Some(ArrayPlan {
        prefix: Vec::new(),
        skip: 0,
        rest: Target::Any,
        min: 0,
        max: u64::MAX,
    });
    let mut reference = None;
    let mut others = 0usize;
    for kw in list {
        let part = kw.part();
        if !matches!(part, Part::ScalarOnly | Part::Ref(_)) {
            others += 1;
        }
        match part {
            Part::ScalarOnly => {}
            Part::Type(mask) => {
                if mask & OBJECT == 0 {
                    object = None;
                }
                if mask & ARRAY == 0 {
                    array = None;
                }
            }
            Part::Properties {
                names,
                nodes,
                closed,
                required,
            } => {
                if let Some(o) = &mut object {
                    o.names = names.clone();
                    o.nodes = nodes.to_vec();
                    o.required = required;
                    if closed {
                        o.other = Target::Deny;
                    }
                }
            }
            Part::Additional { deny, node } => {
                if let Some(o) = &mut object {
                    o.other = if deny {
                        Target::Deny
                    } else {
                        Target::Node(node)
                    };
                }
            }
            Part::Required(set) => {
                if set.len() > 64 {
                    object = None;
                } else if let Some(o) = &mut object {
                    o.also_required = Some(set.clone());
                }
            }
            Part::Size { limit, max, items } => {
                let (min_slot, max_slot) = match (items, &mut object, &mut array) {
                    (true, _, Some(a)) => (&mut a.min, &mut a.max),
                    (false, Some(o), _) => (&mut o.min, &mut o.max),
                    _ => continue,
                };
                if max {
                    *max_slot = (*max_slot).min(limit);
                } else {
                    *min_slot = (*min_slot).max(limit);
                }
            }
            Part::Items { skip, node, deny } => {
                if let Some(a) = &mut array {
                    a.skip = skip;
                    a.rest = if deny {
                        Target::Deny
                    } else {
                        Target::Node(node)
                    };
                }
            }
            Part::PrefixItems(nodes) => {
                if let Some(a) = &mut array {
                    a.prefix = nodes.to_vec();
                }
            }
            Part::Ref(node) => reference = Some(node),
            Part::Opaque => return refuse(),
        }
    }
    if let Some(node) = reference {
        // `$ref` beside other container keywords would need both plans at once.
        return if others == 0 {
            Plan::Alias(node)
        } else {
            refuse()
        };
    }
    // `items` covers what `prefixItems` leaves; the two come from one schema.
    let array = array.filter(|a| a.rest == Target::Any || a.skip == a.prefix.len());
    Plan::Own {
        object: object.map_or(Check::Refuse, Check::Walk),
        array: array.map_or(Check::Refuse, Check::Walk),
    }
}

fn refuse() -> Plan {
    Plan::Own {
        object: Check::Refuse,
        array: Check::Refuse,
    }
}

/// `$ref` hops followed for one container before giving up.
const MAX_HOPS: usize = 16;

/// An open container on the walk.
#[derive(Debug)]
pub(crate) enum Frame {
    Object {
        node: NodeId,
        seen: u64,
        also_seen: u64,
        count: u64,
        /// The declared position after the last member's: where the next
        /// member's name is looked for first.
        guess: usize,
        /// Evaluation depth inside this object, as the tree counts it.
        depth: usize,
    },
    Array {
        node: NodeId,
        index: usize,
        depth: usize,
    },
}

/// The visitor that checks a document against a compiled schema as it is
/// read. `frames` is the caller's reusable stack.
pub(crate) struct Walk<'s> {
    pub(crate) schema: &'s Compiled,
    pub(crate) frames: &'s mut Vec<Frame>,
    /// The target of the next value in an object (set by its name), or of
    /// the document.
    pub(crate) next: Target,
    /// Open containers inside one that passes whatever it holds.
    pub(crate) skip: usize,
    /// The plan of the innermost open object, for its member names: set
    /// when an object opens and whenever a container closes, so it is
    /// fetched by node id once per object instead of once per member.
    pub(crate) object: Option<&'s ObjectPlan>,
}

impl<'s> Walk<'s> {
    /// A walk of one document against `schema`, on the caller's stack.
    pub(crate) fn new(schema: &'s Compiled, frames: &'s mut Vec<Frame>) -> Self {
        frames.clear();
        Walk {
            schema,
            frames,
            next: Target::Node(schema.root),
            skip: 0,
            object: None,
        }
    }

    /// What the value starting now must satisfy, and the evaluation depth
    /// it starts at.
    fn target(&mut self) -> (Target, usize) {
        match self.frames.last_mut() {
            None => (self.next, 0),
            Some(Frame::Object { depth, .. }) => (self.next, *depth),
            Some(Frame::Array { node, index, depth }) => {
                let i = *index;
                *index += 1;
                let depth = *depth;
                let target = match self.schema.plans.get(*node) {
                    Some(Plan::Own {
                        array: Check::Walk(a),
                        ..
                    }) => match a.prefix.get(i) {
                        Some(id) => Target::Node(*id),
                        None if i >= a.skip => a.rest,
                        None => Target::Any,
                    },
                    _ => Target::Deny,
                };
                (target, depth)
            }
        }
    }

    /// The node whose own plan applies to a container at `id`, and the
    /// evaluation depth inside it; `None` when the tree must decide.
    fn resolve(&self, mut id: NodeId, mut depth: usize) -> Option<(NodeId, &'s Plan, usize)> {
        let plans = &self.schema.plans;
        for _ in 0..MAX_HOPS {
            // Entering a schema object's keywords is one level deeper.
            if depth >= MAX_EVAL_DEPTH {
                return None;
            }
            depth += 1;
            let plan = plans.get(id)?;
            match plan {
                Plan::Alias(target) => id = *target,
                Plan::Own { .. } => return Some((id, plan, depth)),
            }
        }
        None
    }

    /// Opens a container of the given kind at the current place.
    fn open(&mut self, object: bool) -> bool {
        if self.skip > 0 {
            self.skip += 1;
            return true;
        }
        let (target, depth) = self.target();
        let id = match target {
            Target::Any => {
                self.skip = 1;
                return true;
            }
            Target::Deny => return false,
            Target::Node(id) => id,
        };
        let Some((
            id,
            Plan::Own {
                object: o,
                array: a,
            },
            depth,
        )) = self.resolve(id, depth)
        else {
            return false;
        };
        let walk = match (object, o, a) {
            (true, Check::Walk(_), _) | (false, _, Check::Walk(_)) => true,
            (true, Check::Any, _) | (false, _, Check::Any) => false,
            _ => return false,
        };
        if !walk {
            self.skip = 1;
            return true;
        }
        if let (true, Check::Walk(plan)) = (object, o) {
            self.object = Some(plan);
        }
        self.frames.push(if object {
            Frame::Object {
                node: id,
                seen: 0,
                also_seen: 0,
                count: 0,
                guess: 0,
                depth,
            }
        } else {
            Frame::Array {
                node: id,
                index: 0,
                depth,
            }
        });
        true
    }

    /// Sets the cached object plan for the container now innermost.
    fn reenter(&mut self) {
        self.object = match self.frames.last() {
            Some(Frame::Object { node, .. }) => self.object_plan(*node),
            _ => None,
        };
    }

    fn object_plan(&self, node: NodeId) -> Option<&'s ObjectPlan> {
        match self.schema.plans.get(node) {
            Some(Plan::Own {
                object: Check::Walk(o),
                ..
            }) => Some(o),
            _ => None,
        }
    }
}

impl Visitor for Walk<'_> {
    fn begin_object(&mut self) -> bool {
        self.open(true)
    }

    fn member(&mut self, name: &str) -> bool {
        self.member_name(name) != Name::Stop
    }

    /// A declared name (among the first 64) is vouched for by its bit in
    /// `seen` and ranked by its place among the declared names in canonical
    /// order: a second one stops the walk (the tree path then refuses the
    /// duplicate); undeclared names are left to the reader's comparison.
    #[inline(always)]
    fn member_name(&mut self, name: &str) -> Name {
        self.declared(name, None)
    }

    /// The declared name after the previous member's, when it is plain.
    #[inline(always)]
    fn expected_name(&self) -> Option<&str> {
        if self.skip > 0 {
            return None;
        }
        match self.frames.last() {
            Some(Frame::Object { guess, .. }) => self.object?.names.plain(*guess),
            _ => None,
        }
    }

    /// The name [`Walk::expected_name`] offered: the declared one at `guess`.
    #[inline(always)]
    fn expected_member(&mut self, name: &str) -> Name {
        let guess = match self.frames.last() {
            Some(Frame::Object { guess, .. }) => Some(*guess),
            _ => None,
        };
        self.declared(name, guess)
    }

    fn end_object(&mut self) -> bool {
        if self.skip > 0 {
            self.skip -= 1;
            return true;
        }
        let Some(Frame::Object {
            node,
            seen,
            also_seen,
            count,
            ..
        }) = self.frames.pop()
        else {
            return false;
        };
        self.reenter();
        let Some(plan) = self.object_plan(node) else {
            return false;
        };
        let also_ok = plan.also_required.as_ref().is_none_or(|r| {
            let all = if r.len() >= 64 {
                u64::MAX
            } else {
                (1u64 << r.len()) - 1
            };
            also_seen == all
        });
        seen & plan.required == plan.required && also_ok && count >= plan.min && count <= plan.max
    }

    fn begin_array(&mut self) -> bool {
        self.open(false)
    }

    fn end_array(&mut self) -> bool {
        if self.skip > 0 {
            self.skip -= 1;
            return true;
        }
        let Some(Frame::Array { node, index, .. }) = self.frames.pop() else {
            return false;
        };
        self.reenter();
        let Some(Plan::Own {
            array: Check::Walk(plan),
            ..
        }) = self.schema.plans.get(node)
        else {
            return false;
        };
        let n = index as u64;
        n >= plan.min && n <= plan.max
    }

    fn scalar(&mut self, value: &Value<'_>) -> bool {
        if self.skip > 0 {
            return true;
        }
        match self.target() {
            (Target::Any, _) => true,
            (Target::Deny, _) => false,
            (Target::Node(id), depth) => {
                self.schema.leaf_accepts(id, value) || self.evaluate(id, depth, value)
            }
        }
    }

    /// A string by the leaf check alone when it accepts, with no `Value`
    /// built; by the full evaluation otherwise.
    #[inline]
    fn string(&mut self, s: &str) -> bool {
        if self.skip > 0 {
            return true;
        }
        match self.target() {
            (Target::Any, _) => true,
            (Target::Deny, _) => false,
            (Target::Node(id), depth) => {
                self.schema.leaf_accepts_str(id, s)
                    || self.evaluate(id, depth, &Value::String(s.into()))
            }
        }
    }
}

impl Walk<'_> {
    /// A member's name in the innermost object: its target, the bits it
    /// sets, whether it is vouched for. `known` is its declared position
    /// when the reader found it where [`Walk::expected_name`] said.
    #[inline(always)]
    fn declared(&mut self, name: &str, known: Option<usize>) -> Name {
        if self.skip > 0 {
            return Name::Go;
        }
        let Some(Frame::Object {
            seen,
            also_seen,
            count,
            guess,
            ..
        }) = self.frames.last_mut()
        else {
            return Name::Stop;
        };
        let Some(plan) = self.object else {
            return Name::Stop;
        };
        *count += 1;
        let mut said = Name::Go;
        let found = match known {
            Some(j) => Some(j),
            None => plan.names.find_from(name, *guess),
        };
        self.next = match found {
            Some(j) => {
                *guess = j + 1;
                if j < 64 {
                    let bit = 1u64 << j;
                    if *seen & bit != 0 {
                        return Name::Stop;
                    }
                    *seen |= bit;
                    said = plan.names.rank(j).map_or(Name::New, Name::Ranked);
                }
                match plan.nodes.get(j) {
                    Some(id) => Target::Node(*id),
                    None => Target::Any,
                }
            }
            None => match plan.other {
                Target::Deny => return Name::Stop,
                other => other,
            },
        };
        if let Some(k) = plan.also_required.as_ref().and_then(|r| r.find(name)) {
            *also_seen |= 1 << k;
        }
        said
    }

    /// Every keyword of node `id` on a scalar, at evaluation depth `depth`.
    #[inline(never)]
    fn evaluate(&self, id: NodeId, depth: usize, value: &Value<'_>) -> bool {
        let mut cx = Cx::new(self.schema, false);
        cx.depth = depth;
        self.schema
            .eval(id, value, &Path::Root, &mut cx, &mut Ann::off())
    }
}
