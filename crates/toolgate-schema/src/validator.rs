//! The compiled, immutable validator and the machinery its keywords share:
//! the node table, the evaluation context, instance paths and annotations.

use std::fmt;

use toolgate_json::{pointer, Value};

use crate::error::{ErrorCode, ValidationError};
use crate::options::Mode;

/// Index of a compiled node.
pub(crate) type NodeId = usize;

/// How deep node evaluations may nest before validation fails closed.
pub(crate) const MAX_EVAL_DEPTH: usize = 256;

/// One keyword of a compiled schema object.
pub(crate) trait Keyword: Send + Sync + fmt::Debug {
    /// Applies the keyword to `v`. Returns whether `v` passes. When the context
    /// collects errors, records each violation; otherwise it may stop at the
    /// first. Marks evaluated members and items in `ann` when `ann` is on.
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool;

    /// What the keyword does to an object or array, for the tree-free path
    /// ([`crate::stream`]). [`Part::Opaque`] (the default) leaves every
    /// object and array under a schema with this keyword to the tree.
    fn part(&self) -> crate::stream::Part<'_> {
        crate::stream::Part::Opaque
    }
}

/// A compiled subschema.
#[derive(Debug)]
pub(crate) enum NodeKind {
    /// `true` or `false`.
    Bool(bool),
    /// A schema object: its keywords, in evaluation order (the `unevaluated*`
    /// keywords last).
    Keywords {
        list: Vec<Box<dyn Keyword>>,
        has_unevaluated: bool,
        /// A fast acceptance check when the schema is a leaf.
        leaf: Option<crate::leaf::Leaf>,
    },
}

/// A compiled subschema and where it came from.
#[derive(Debug)]
pub(crate) struct Node {
    pub(crate) kind: NodeKind,
    /// The schema resource the node belongs to (for `$dynamicRef`).
    pub(crate) resource: usize,
    /// The node's location, for the `false` schema's errors.
    pub(crate) location: Box<str>,
}

/// Everything the validator needs, shared by all clones of a `Schema`.
#[derive(Debug)]
pub(crate) struct Compiled {
    pub(crate) nodes: Vec<Node>,
    pub(crate) root: NodeId,
    pub(crate) mode: Mode,
    pub(crate) max_errors: usize,
    /// Per resource: its dynamic anchors and their nodes.
    pub(crate) dynamic_anchors: Vec<Vec<(Box<str>, NodeId)>>,
    /// Whether any `$dynamicRef` needs the dynamic scope at run time.
    pub(crate) uses_dynamic_scope: bool,
    /// Per node: how objects and arrays are checked on the tree-free path.
    pub(crate) plans: Vec<crate::stream::Plan>,
}

impl Compiled {
    /// Evaluates node `id` against `v`.
    pub(crate) fn eval(
        &self,
        id: NodeId,
        v: &Value,
        at: &Path<'_>,
        cx: &mut Cx<'_>,
        ann: &mut Ann,
    ) -> bool {
        let Some(node) = self.nodes.get(id) else {
            // INVARIANT: node ids come from the compiler; fail closed regardless.
            return false;
        };
        match &node.kind {
            NodeKind::Bool(true) => true,
            NodeKind::Bool(false) => {
                cx.fail(ErrorCode::FalseSchema, at, &node.location, v, || {
                    "no value is allowed here".to_owned()
                });
                false
            }
            NodeKind::Keywords {
                list,
                has_unevaluated,
                leaf,
            } => {
                // A leaf evaluates no member or item, so accepting here adds
                // no annotation either.
                if leaf.as_ref().is_some_and(|l| l.accepts(v)) {
                    return true;
                }
                if cx.depth >= MAX_EVAL_DEPTH {
                    cx.fail(ErrorCode::RecursionLimit, at, &node.location, v, || {
                        "schema recursion is too deep".to_owned()
                    });
                    return false;
                }
                cx.depth += 1;
                let pushed = self.uses_dynamic_scope && cx.enter(node.resource);
                let mut local = if ann.on || *has_unevaluated {
                    Ann::for_value(v)
                } else {
                    Ann::off()
                };
                let mut ok = true;
                for kw in list {
                    if !kw.apply(v, at, cx, &mut local) {
                        ok = false;
                        if !cx.collect {
                            break;
                        }
                    }
                }
                if pushed {
                    cx.scope.pop();
                }
                cx.depth -= 1;
                if ok && ann.on {
                    ann.merge(&local);
                }
                ok
            }
        }
    }

    /// Whether node `id` is a leaf whose fast check accepts `v`.
    #[inline]
    pub(crate) fn leaf_accepts(&self, id: NodeId, v: &Value) -> bool {
        match self.nodes.get(id).map(|n| &n.kind) {
            Some(NodeKind::Keywords {
                leaf: Some(leaf), ..
            }) => leaf.accepts(v),
            Some(NodeKind::Bool(true)) => true,
            _ => false,
        }
    }

    /// Whether node `id` is a leaf whose fast check accepts the string `s`.
    #[inline]
    pub(crate) fn leaf_accepts_str(&self, id: NodeId, s: &str) -> bool {
        match self.nodes.get(id).map(|n| &n.kind) {
            Some(NodeKind::Keywords {
                leaf: Some(leaf), ..
            }) => leaf.accepts_str(s),
            Some(NodeKind::Bool(true)) => true,
            _ => false,
        }
    }

    /// The node a `$dynamicRef` to anchor `name` lands on: the outermost
    /// resource in the dynamic scope that declares the anchor.
    pub(crate) fn dynamic_target(&self, name: &str, cx: &Cx<'_>) -> Option<NodeId> {
        for r in &cx.scope {
            if let Some(anchors) = self.dynamic_anchors.get(*r) {
                if let Some((_, id)) = anchors.iter().find(|(n, _)| n.as_ref() == name) {
                    return Some(*id);
                }
            }
        }
        None
    }
}

/// The state of one validation run.
pub(crate) struct Cx<'s> {
    pub(crate) schema: &'s Compiled,
    /// Whether violations are being recorded (else the first failure may end a branch).
    pub(crate) collect: bool,
    pub(crate) errors: Vec<ValidationError>,
    pub(crate) truncated: bool,
    pub(crate) scope: Vec<usize>,
    pub(crate) depth: usize,
}

impl<'s> Cx<'s> {
    pub(crate) fn new(schema: &'s Compiled, collect: bool) -> Self {
        Self {
            schema,
            collect,
            errors: Vec::new(),
            truncated: false,
            scope: Vec::new(),
            depth: 0,
        }
    }

    fn enter(&mut self, resource: usize) -> bool {
        if self.scope.last() == Some(&resource) {
            return false;
        }
        self.scope.push(resource);
        true
    }

    /// Records a violation if errors are being collected.
    pub(crate) fn fail(
        &mut self,
        code: ErrorCode,
        at: &Path<'_>,
        location: &str,
        v: &Value,
        message: impl FnOnce() -> String,
    ) {
        if !self.collect {
            return;
        }
        if self.errors.len() >= self.schema.max_errors {
            self.truncated = true;
            // Stop recording: the verdict is already known to be "invalid".
            self.collect = false;
            return;
        }
        self.errors.push(ValidationError::new(
            code,
            at.to_pointer(),
            location,
            message(),
            v.type_name(),
        ));
    }

    /// Runs `f` without recording errors (for branches whose failures are
    /// reported as one combinator error).
    pub(crate) fn quietly<R>(&mut self, f: impl FnOnce(&mut Self) -> R) -> R {
        let was = self.collect;
        self.collect = false;
        let r = f(self);
        self.collect = was;
        r
    }

    /// Evaluates a subschema at a child location, with annotations off.
    pub(crate) fn eval(&mut self, id: NodeId, v: &Value, at: &Path<'_>) -> bool {
        let schema = self.schema;
        schema.eval(id, v, at, self, &mut Ann::off())
    }

    /// Evaluates an in-place subschema, merging its annotations into `ann`.
    pub(crate) fn eval_in_place(
        &mut self,
        id: NodeId,
        v: &Value,
        at: &Path<'_>,
        ann: &mut Ann,
    ) -> bool {
        let schema = self.schema;
        schema.eval(id, v, at, self, ann)
    }

    /// The mode of the schema.
    pub(crate) fn mode(&self) -> Mode {
        self.schema.mode
    }
}

/// Where in the instance: a chain on the stack, turned into a JSON Pointer only
/// when an error is recorded.
#[derive(Debug)]
pub(crate) enum Path<'a> {
    Root,
    Key(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
}

impl Path<'_> {
    /// The JSON Pointer of this place.
    pub(crate) fn to_pointer(&self) -> String {
        let mut segs: Vec<&Path<'_>> = Vec::new();
        let mut cur = self;
        loop {
            match cur {
                Path::Root => break,
                Path::Key(p, _) | Path::Index(p, _) => {
                    segs.push(cur);
                    cur = p;
                }
            }
        }
        let mut out = String::new();
        for s in segs.iter().rev() {
            match s {
                Path::Key(_, k) => pointer::push_token(&mut out, k),
                Path::Index(_, i) => pointer::push_index(&mut out, *i),
                Path::Root => {}
            }
        }
        out
    }
}

/// Annotations: which object members and array items were evaluated by a
/// successful subschema, for `unevaluatedProperties` and `unevaluatedItems`.
/// Indices are positions in the instance.
#[derive(Debug, Default)]
pub(crate) struct Ann {
    pub(crate) on: bool,
    props: Vec<bool>,
    items: Vec<bool>,
}

impl Ann {
    /// Annotations that are not collected.
    pub(crate) fn off() -> Self {
        Self::default()
    }

    /// Empty annotations sized for `v`.
    pub(crate) fn for_value(v: &Value) -> Self {
        match v {
            Value::Object(o) => Self {
                on: true,
                props: vec![false; o.len()],
                items: Vec::new(),
            },
            Value::Array(a) => Self {
                on: true,
                props: Vec::new(),
                items: vec![false; a.len()],
            },
            _ => Self {
                on: true,
                ..Self::default()
            },
        }
    }

    /// Marks member `i` as evaluated.
    pub(crate) fn mark_prop(&mut self, i: usize) {
        if let Some(p) = self.props.get_mut(i) {
            *p = true;
        }
    }

    /// Whether member `i` was evaluated.
    pub(crate) fn prop(&self, i: usize) -> bool {
        self.props.get(i).copied().unwrap_or(false)
    }

    /// Marks item `i` as evaluated.
    pub(crate) fn mark_item(&mut self, i: usize) {
        if let Some(p) = self.items.get_mut(i) {
            *p = true;
        }
    }

    /// Marks items `from..` as evaluated.
    pub(crate) fn mark_items_from(&mut self, from: usize) {
        for p in self.items.iter_mut().skip(from) {
            *p = true;
        }
    }

    /// Whether item `i` was evaluated.
    pub(crate) fn item(&self, i: usize) -> bool {
        self.items.get(i).copied().unwrap_or(false)
    }

    /// Adds `other`'s marks (annotations of the same instance).
    pub(crate) fn merge(&mut self, other: &Ann) {
        for (a, b) in self.props.iter_mut().zip(&other.props) {
            *a |= *b;
        }
        for (a, b) in self.items.iter_mut().zip(&other.items) {
            *a |= *b;
        }
    }
}
