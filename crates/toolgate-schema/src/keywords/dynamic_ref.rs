//! `$dynamicRef`: like `$ref`, except that when the target declares the
//! matching `$dynamicAnchor`, the outermost schema resource in the dynamic
//! scope that declares it wins.

use toolgate_json::Value;

use crate::compiler::{boxed, Kw};
use crate::error::CompileErrorCode;
use crate::uri;
use crate::validator::{Ann, Cx, Keyword, NodeId, Path};

/// The compiled `$dynamicRef` keyword.
#[derive(Debug)]
pub(crate) struct DynamicRef {
    default: NodeId,
    anchor: Option<Box<str>>,
}

/// Compiles `$dynamicRef`: a URI reference.
pub(crate) fn compile(kw: &mut Kw<'_, '_>, v: &Value) -> super::Compiled {
    let r = v.as_str().ok_or_else(|| kw.invalid("a URI reference"))?;
    let (loc, full) = kw.c.resolve_ref(&kw.s.base, r).ok_or_else(|| {
        kw.error(
            CompileErrorCode::UnresolvableRef,
            format!("`{r}` does not resolve to a schema in the registered documents"),
        )
    })?;
    let (_, frag) = uri::split_fragment(&full);
    let anchor =
        if !frag.is_empty() && !frag.starts_with('/') && kw.c.has_dynamic_anchor(&loc, frag) {
            kw.c.need_dynamic_scope();
            Some(frag.into())
        } else {
            None
        };
    let default = kw.c.compile_loc(loc.0, loc.1)?;
    Ok(boxed(DynamicRef { default, anchor }))
}

impl Keyword for DynamicRef {
    fn apply(&self, v: &Value, at: &Path<'_>, cx: &mut Cx<'_>, ann: &mut Ann) -> bool {
        let target = self
            .anchor
            .as_deref()
            .and_then(|a| cx.schema.dynamic_target(a, cx))
            .unwrap_or(self.default);
        cx.eval_in_place(target, v, at, ann)
    }
}
