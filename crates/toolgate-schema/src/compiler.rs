//! Turns a schema document (and the documents registered with it) into a
//! [`Compiled`] validator: finds every schema resource, anchor and dynamic
//! anchor, resolves references, and compiles each reachable subschema once.

use std::collections::HashMap;
use std::sync::Arc;

use toolgate_json::{pointer, Object, Value};

use crate::error::{CompileError, CompileErrorCode};
use crate::keywords;
use crate::options::{Mode, Options};
use crate::uri;
use crate::validator::{Compiled, Keyword, Node, NodeId, NodeKind};

/// The base URI of the schema passed to `compile` when it has no `$id`.
pub(crate) const DEFAULT_BASE: &str = "urn:toolgate:schema";

/// The draft 2020-12 meta-schema URI.
pub(crate) const DRAFT_2020_12: &str = "https://json-schema.org/draft/2020-12/schema";

/// At most this many compiled nodes per schema.
const MAX_NODES: usize = 100_000;

/// A location in a document: (document index, JSON Pointer).
type Loc = (usize, String);

/// Which vocabularies apply to a schema resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Vocab {
    /// The vocabularies are known.
    Known {
        applicator: bool,
        unevaluated: bool,
        validation: bool,
        format_assertion: bool,
    },
    /// The resource's `$schema` cannot be honoured; compiling it fails.
    Refused(CompileErrorCode, String),
}

impl Vocab {
    fn default_2020_12() -> Self {
        Self::Known {
            applicator: true,
            unevaluated: true,
            validation: true,
            format_assertion: false,
        }
    }
}

/// The vocabulary a keyword belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Vocabulary {
    Core,
    Applicator,
    Unevaluated,
    Validation,
    Format,
}

#[derive(Debug, Clone)]
struct Scanned {
    base: String,
    resource: String,
    vocab: Arc<Vocab>,
}

/// The compiler's state.
pub(crate) struct Compiler {
    pub(crate) mode: Mode,
    pub(crate) format_option: bool,
    docs: Vec<Arc<Value<'static>>>,
    doc_uris: Vec<String>,
    resources: HashMap<String, Loc>,
    anchors: HashMap<String, Loc>,
    dynamic_anchors: HashMap<String, Vec<(String, Loc)>>,
    scanned: HashMap<Loc, Scanned>,
    resource_ids: HashMap<String, usize>,
    memo: HashMap<Loc, NodeId>,
    nodes: Vec<Node>,
    uses_dynamic_scope: bool,
    false_node: Option<NodeId>,
}

impl Compiler {
    /// Compiles `schema` with `options`.
    pub(crate) fn compile(schema: &Value, options: &Options) -> Result<Compiled, CompileError> {
        let mut c = Self {
            mode: options.mode,
            format_option: options.format_assertion,
            docs: Vec::new(),
            doc_uris: Vec::new(),
            resources: HashMap::new(),
            anchors: HashMap::new(),
            dynamic_anchors: HashMap::new(),
            scanned: HashMap::new(),
            resource_ids: HashMap::new(),
            memo: HashMap::new(),
            nodes: Vec::new(),
            uses_dynamic_scope: false,
            false_node: None,
        };
        c.add_document(DEFAULT_BASE, schema.clone().into_owned());
        for (u, doc) in &options.documents {
            let (base, frag) = uri::split_fragment(u);
            if !uri::has_scheme(base) || !frag.is_empty() {
                return Err(CompileError::new(
                    CompileErrorCode::InvalidUri,
                    "",
                    format!("registered document URI `{u}` must be absolute, without fragment"),
                ));
            }
            c.add_document(base, doc.clone());
        }
        if c.docs.iter().any(|d| crate::meta::mentions_meta(d)) {
            for (u, doc) in crate::meta::documents() {
                if !c.resources.contains_key(*u) {
                    c.add_document(u, doc.clone());
                }
            }
        }
        // Registered documents first, so that the root's `$schema` can name one.
        for index in (1..c.docs.len()).chain(std::iter::once(0)) {
            let (Some(doc), Some(base)) =
                (c.docs.get(index).cloned(), c.doc_uris.get(index).cloned())
            else {
                continue;
            };
            let vocab = Arc::new(Vocab::default_2020_12());
            c.scan(index, &doc, String::new(), base.clone(), base, vocab)?;
        }
        let root = c.compile_loc(0, String::new())?;
        c.finish(root, options)
    }

    fn add_document(&mut self, base: &str, doc: Value<'static>) {
        let index = self.docs.len();
        self.docs.push(Arc::new(doc));
        self.doc_uris.push(base.to_owned());
        self.resources
            .entry(base.to_owned())
            .or_insert((index, String::new()));
    }

    /// Records resources, anchors and base URIs under a schema location.
    fn scan(
        &mut self,
        doc: usize,
        value: &Value,
        ptr: String,
        base: String,
        resource: String,
        vocab: Arc<Vocab>,
    ) -> Result<(), CompileError> {
        let Value::Object(o) = value else {
            self.scanned.insert(
                (doc, ptr),
                Scanned {
                    base,
                    resource,
                    vocab,
                },
            );
            return Ok(());
        };
        let mut base = base;
        let mut resource = resource;
        let mut vocab = vocab;
        if let Some(Value::String(id)) = o.get("$id") {
            let resolved = uri::resolve(&base, id);
            let (abs, frag) = uri::split_fragment(&resolved);
            if !frag.is_empty() {
                return Err(CompileError::new(
                    CompileErrorCode::InvalidUri,
                    self.display_location(doc, &ptr, "/$id"),
                    format!("`$id` `{id}` must not have a fragment"),
                ));
            }
            base = abs.to_owned();
            resource = base.clone();
            self.resources
                .entry(base.clone())
                .or_insert((doc, ptr.clone()));
        }
        if let Some(Value::String(s)) = o.get("$schema") {
            if ptr.is_empty() || o.contains_key("$id") {
                vocab = Arc::new(self.vocab_for(s));
            }
        }
        if let Some(Value::String(a)) = o.get("$anchor") {
            self.anchors
                .entry(format!("{resource}#{a}"))
                .or_insert((doc, ptr.clone()));
        }
        if let Some(Value::String(a)) = o.get("$dynamicAnchor") {
            self.anchors
                .entry(format!("{resource}#{a}"))
                .or_insert((doc, ptr.clone()));
            self.dynamic_anchors
                .entry(resource.clone())
                .or_default()
                .push((a.to_string(), (doc, ptr.clone())));
        }
        self.scanned.insert(
            (doc, ptr.clone()),
            Scanned {
                base: base.clone(),
                resource: resource.clone(),
                vocab: Arc::clone(&vocab),
            },
        );
        for (k, v) in o.iter() {
            match keywords::subschema_shape(k) {
                keywords::Shape::Single => {
                    let mut p = ptr.clone();
                    pointer::push_token(&mut p, k);
                    self.scan(
                        doc,
                        v,
                        p,
                        base.clone(),
                        resource.clone(),
                        Arc::clone(&vocab),
                    )?;
                }
                keywords::Shape::Map => {
                    if let Value::Object(m) = v {
                        for (name, sub) in m.iter() {
                            let mut p = ptr.clone();
                            pointer::push_token(&mut p, k);
                            pointer::push_token(&mut p, name);
                            self.scan(
                                doc,
                                sub,
                                p,
                                base.clone(),
                                resource.clone(),
                                Arc::clone(&vocab),
                            )?;
                        }
                    }
                }
                keywords::Shape::List => {
                    if let Value::Array(a) = v {
                        for (i, sub) in a.iter().enumerate() {
                            let mut p = ptr.clone();
                            pointer::push_token(&mut p, k);
                            pointer::push_index(&mut p, i);
                            self.scan(
                                doc,
                                sub,
                                p,
                                base.clone(),
                                resource.clone(),
                                Arc::clone(&vocab),
                            )?;
                        }
                    }
                }
                keywords::Shape::None => {}
            }
        }
        Ok(())
    }

    /// The vocabularies a `$schema` URI enables.
    fn vocab_for(&self, meta: &str) -> Vocab {
        let (meta_abs, frag) = uri::split_fragment(meta);
        if !frag.is_empty() {
            return Vocab::Refused(
                CompileErrorCode::UnsupportedDraft,
                format!("`$schema` `{meta}` must not have a fragment"),
            );
        }
        if meta_abs == DRAFT_2020_12 {
            return Vocab::default_2020_12();
        }
        for (draft, name) in [
            ("http://json-schema.org/draft-04/schema", "draft-04"),
            ("http://json-schema.org/draft-06/schema", "draft-06"),
            ("http://json-schema.org/draft-07/schema", "draft-07"),
            (
                "https://json-schema.org/draft/2019-09/schema",
                "draft 2019-09",
            ),
        ] {
            if meta_abs == draft {
                return Vocab::Refused(
                    CompileErrorCode::UnsupportedDraft,
                    format!(
                        "`$schema` declares {name}; only draft 2020-12 is supported: \
                         rewrite `items` arrays as `prefixItems`, `definitions` as `$defs`, \
                         `dependencies` as `dependentRequired`/`dependentSchemas`"
                    ),
                );
            }
        }
        // A registered meta-schema: read its `$vocabulary`.
        let Some((doc, ptr)) = self.resources.get(meta_abs) else {
            return Vocab::Refused(
                CompileErrorCode::UnsupportedDraft,
                format!("`$schema` `{meta}` is not draft 2020-12 nor a registered meta-schema"),
            );
        };
        let Some(Value::Object(m)) = self.docs.get(*doc).and_then(|d| d.pointer(ptr)) else {
            return Vocab::Refused(
                CompileErrorCode::UnsupportedDraft,
                format!("meta-schema `{meta}` is not an object"),
            );
        };
        let Some(Value::Object(vocabs)) = m.get("$vocabulary") else {
            return Vocab::default_2020_12();
        };
        let base = "https://json-schema.org/draft/2020-12/vocab/";
        let mut applicator = false;
        let mut unevaluated = false;
        let mut validation = false;
        let mut format_assertion = false;
        for (name, required) in vocabs.iter() {
            match name.strip_prefix(base) {
                Some("applicator") => applicator = true,
                Some("unevaluated") => unevaluated = true,
                Some("validation") => validation = true,
                Some("format-assertion") => format_assertion = true,
                Some("core" | "meta-data" | "format-annotation" | "content") => {}
                _ => {
                    if matches!(required, Value::Bool(true)) {
                        return Vocab::Refused(
                            CompileErrorCode::UnsupportedDraft,
                            format!("meta-schema `{meta}` requires unknown vocabulary `{name}`"),
                        );
                    }
                }
            }
        }
        Vocab::Known {
            applicator,
            unevaluated,
            validation,
            format_assertion,
        }
    }

    /// The location of `suffix` under `ptr` in `doc`, as shown to people.
    pub(crate) fn display_location(&self, doc: usize, ptr: &str, suffix: &str) -> String {
        if doc == 0 {
            format!("{ptr}{suffix}")
        } else {
            let u = self.doc_uris.get(doc).map_or("", String::as_str);
            format!("{u}#{ptr}{suffix}")
        }
    }

    /// The URI of a document.
    pub(crate) fn doc_uri(&self, doc: usize) -> &str {
        self.doc_uris.get(doc).map_or("", String::as_str)
    }

    /// The scan record of a location, or of its nearest scanned ancestor.
    fn scanned_at(&self, doc: usize, ptr: &str) -> Option<Scanned> {
        let mut p = ptr.to_owned();
        loop {
            if let Some(s) = self.scanned.get(&(doc, p.clone())) {
                return Some(s.clone());
            }
            let cut = p.rfind('/')?;
            p.truncate(cut);
        }
    }

    fn resource_id(&mut self, uri: &str) -> usize {
        if let Some(id) = self.resource_ids.get(uri) {
            return *id;
        }
        let id = self.resource_ids.len();
        self.resource_ids.insert(uri.to_owned(), id);
        id
    }

    /// Compiles the subschema at `(doc, ptr)` once.
    pub(crate) fn compile_loc(&mut self, doc: usize, ptr: String) -> Result<NodeId, CompileError> {
        if let Some(id) = self.memo.get(&(doc, ptr.clone())) {
            return Ok(*id);
        }
        if self.nodes.len() >= MAX_NODES {
            return Err(CompileError::new(
                CompileErrorCode::TooLarge,
                self.display_location(doc, &ptr, ""),
                "the schema compiles to too many nodes",
            ));
        }
        let Some(document) = self.docs.get(doc).cloned() else {
            return Err(CompileError::new(
                CompileErrorCode::UnresolvableRef,
                "",
                "reference to a missing document",
            ));
        };
        let Some(value) = document.pointer(&ptr) else {
            return Err(CompileError::new(
                CompileErrorCode::UnresolvableRef,
                self.display_location(doc, &ptr, ""),
                "reference to a missing location",
            ));
        };
        let scanned = self.scanned_at(doc, &ptr).unwrap_or(Scanned {
            base: DEFAULT_BASE.to_owned(),
            resource: DEFAULT_BASE.to_owned(),
            vocab: Arc::new(Vocab::default_2020_12()),
        });
        // A location reached only through a JSON Pointer (not scanned) may still declare `$id`.
        let (base, resource) = match (value, self.scanned.contains_key(&(doc, ptr.clone()))) {
            (Value::Object(o), false) => match o.get("$id") {
                Some(Value::String(id)) => {
                    let r = uri::resolve(&scanned.base, id);
                    let (abs, _) = uri::split_fragment(&r);
                    (abs.to_owned(), abs.to_owned())
                }
                _ => (scanned.base.clone(), scanned.resource.clone()),
            },
            _ => (scanned.base.clone(), scanned.resource.clone()),
        };
        let resource_index = self.resource_id(&resource);
        let location: Box<str> = self.display_location(doc, &ptr, "").into();
        let id = self.nodes.len();
        self.nodes.push(Node {
            kind: NodeKind::Bool(true),
            resource: resource_index,
            location: location.clone(),
        });
        self.memo.insert((doc, ptr.clone()), id);
        let kind = match value {
            Value::Bool(b) => NodeKind::Bool(*b),
            Value::Object(o) => {
                let vocab = match scanned.vocab.as_ref() {
                    Vocab::Refused(code, msg) => {
                        return Err(CompileError::new(
                            *code,
                            self.display_location(doc, &ptr, "/$schema"),
                            msg.clone(),
                        ))
                    }
                    Vocab::Known { .. } => Arc::clone(&scanned.vocab),
                };
                let mut ctx = SchemaCtx {
                    doc,
                    ptr: ptr.clone(),
                    base,
                    obj: o,
                    vocab,
                };
                let list = keywords::compile_object(self, &mut ctx)?;
                let has_unevaluated = list.iter().any(|(is_uneval, _)| *is_uneval);
                NodeKind::Keywords {
                    list: list.into_iter().map(|(_, k)| k).collect(),
                    has_unevaluated,
                    leaf: crate::leaf::Leaf::compile(o),
                }
            }
            _ => {
                return Err(CompileError::new(
                    CompileErrorCode::InvalidKeyword,
                    location.to_string(),
                    "a schema must be an object or a boolean",
                ))
            }
        };
        if let Some(n) = self.nodes.get_mut(id) {
            n.kind = kind;
        }
        Ok(id)
    }

    /// The shared `false` node, used to close objects in strict mode.
    pub(crate) fn false_node(&mut self, location: &str) -> NodeId {
        if let Some(id) = self.false_node {
            return id;
        }
        let id = self.nodes.len();
        self.nodes.push(Node {
            kind: NodeKind::Bool(false),
            resource: 0,
            location: location.into(),
        });
        self.false_node = Some(id);
        id
    }

    /// Resolves a reference against `base` to a location.
    pub(crate) fn resolve_ref(&self, base: &str, reference: &str) -> Option<(Loc, String)> {
        let full = uri::resolve(base, reference);
        let (abs, frag) = uri::split_fragment(&full);
        let frag = uri::percent_decode(frag)?;
        if frag.is_empty() || frag.starts_with('/') {
            let (doc, ptr) = self.resources.get(abs)?;
            let p = format!("{ptr}{frag}");
            self.docs.get(*doc)?.pointer(&p)?;
            Some(((*doc, p), full.clone()))
        } else {
            let loc = self.anchors.get(&format!("{abs}#{frag}"))?;
            Some((loc.clone(), full.clone()))
        }
    }

    /// Whether the location declares `$dynamicAnchor` `name`.
    pub(crate) fn has_dynamic_anchor(&self, loc: &Loc, name: &str) -> bool {
        self.docs
            .get(loc.0)
            .and_then(|d| d.pointer(&loc.1))
            .and_then(Value::as_object)
            .and_then(|o| o.get("$dynamicAnchor"))
            .and_then(Value::as_str)
            == Some(name)
    }

    /// Notes that the dynamic scope is needed at run time.
    pub(crate) fn need_dynamic_scope(&mut self) {
        self.uses_dynamic_scope = true;
    }

    fn finish(mut self, root: NodeId, options: &Options) -> Result<Compiled, CompileError> {
        let mut dynamic: Vec<Vec<(Box<str>, NodeId)>> = Vec::new();
        if self.uses_dynamic_scope {
            // Compile the dynamic anchors of every resource a node belongs to,
            // until no new resource appears.
            let mut done = 0;
            loop {
                let mut by_id: Vec<(usize, String)> = self
                    .resource_ids
                    .iter()
                    .map(|(u, i)| (*i, u.clone()))
                    .collect();
                by_id.sort();
                if by_id.len() == done {
                    break;
                }
                done = by_id.len();
                dynamic.resize_with(done, Vec::new);
                for (rid, u) in by_id {
                    let anchors = self.dynamic_anchors.get(&u).cloned().unwrap_or_default();
                    let mut list = Vec::new();
                    for (name, loc) in anchors {
                        let id = self.compile_loc(loc.0, loc.1)?;
                        list.push((name.into_boxed_str(), id));
                    }
                    if let Some(slot) = dynamic.get_mut(rid) {
                        *slot = list;
                    }
                }
            }
        }
        let plans = if self.uses_dynamic_scope {
            Vec::new()
        } else {
            crate::stream::plans(&self.nodes)
        };
        Ok(Compiled {
            nodes: self.nodes,
            root,
            mode: options.mode,
            max_errors: options.max_errors,
            dynamic_anchors: dynamic,
            uses_dynamic_scope: self.uses_dynamic_scope,
            plans,
        })
    }
}

/// The schema object being compiled.
pub(crate) struct SchemaCtx<'a> {
    pub(crate) doc: usize,
    pub(crate) ptr: String,
    pub(crate) base: String,
    pub(crate) obj: &'a Object<'static>,
    pub(crate) vocab: Arc<Vocab>,
}

impl SchemaCtx<'_> {
    /// Whether a vocabulary is on for this schema.
    pub(crate) fn vocab_on(&self, v: Vocabulary) -> bool {
        match self.vocab.as_ref() {
            Vocab::Known {
                applicator,
                unevaluated,
                validation,
                ..
            } => match v {
                Vocabulary::Core | Vocabulary::Format => true,
                Vocabulary::Applicator => *applicator,
                Vocabulary::Unevaluated => *unevaluated,
                Vocabulary::Validation => *validation,
            },
            Vocab::Refused(..) => false,
        }
    }

    /// Whether the dialect makes `format` an assertion.
    pub(crate) fn format_vocab_asserts(&self) -> bool {
        matches!(
            self.vocab.as_ref(),
            Vocab::Known {
                format_assertion: true,
                ..
            }
        )
    }

    /// The pointer of keyword `kw` plus `more` tokens.
    pub(crate) fn ptr_of(&self, kw: &str, more: &[&str]) -> String {
        let mut p = self.ptr.clone();
        pointer::push_token(&mut p, kw);
        for m in more {
            pointer::push_token(&mut p, m);
        }
        p
    }
}

/// Convenience for keyword compilers: the compiler and the schema object.
pub(crate) struct Kw<'c, 'a> {
    pub(crate) c: &'c mut Compiler,
    pub(crate) s: &'c SchemaCtx<'a>,
    pub(crate) name: &'static str,
}

impl Kw<'_, '_> {
    /// Where the keyword is, as shown to people.
    pub(crate) fn location(&self) -> Box<str> {
        let p = self.s.ptr_of(self.name, &[]);
        self.c.display_location(self.s.doc, &p, "").into()
    }

    /// A compile error at this keyword.
    pub(crate) fn error(&self, code: CompileErrorCode, message: impl Into<String>) -> CompileError {
        CompileError::new(code, self.location().to_string(), message)
    }

    /// The usual "wrong type" error.
    pub(crate) fn invalid(&self, expected: &str) -> CompileError {
        self.error(
            CompileErrorCode::InvalidKeyword,
            format!("`{}` must be {expected}", self.name),
        )
    }

    /// Compiles the subschema at keyword/more.
    pub(crate) fn sub(&mut self, more: &[&str]) -> Result<NodeId, CompileError> {
        let p = self.s.ptr_of(self.name, more);
        self.c.compile_loc(self.s.doc, p)
    }

    /// The mode.
    pub(crate) fn mode(&self) -> Mode {
        self.c.mode
    }
}

/// Boxes a keyword.
pub(crate) fn boxed<K: Keyword + 'static>(k: K) -> Option<Box<dyn Keyword>> {
    Some(Box::new(k))
}
