//! The keyword table: one file per keyword (or per tight family of keywords)
//! under `keywords/`, dispatched by name from [`lookup`].

use toolgate_json::Value;

use crate::compiler::{Compiler, Kw, SchemaCtx, Vocabulary};
use crate::error::{CompileError, CompileErrorCode};
use crate::options::Mode;
use crate::validator::Keyword;

mod additional_properties;
mod all_of;
mod any_of;
mod const_;
mod contains;
mod dependent_required;
mod dependent_schemas;
mod dynamic_ref;
mod enum_;
mod format;
mod if_then_else;
mod items;
mod length;
mod multiple_of;
mod not;
mod one_of;
mod pattern;
mod pattern_properties;
mod prefix_items;
mod properties;
mod property_names;
mod range;
mod ref_;
mod required;
mod size;
mod type_;
mod unevaluated_items;
mod unevaluated_properties;
mod unique_items;

pub(crate) use pattern::{compile_regex, Simple};
pub(crate) use type_::{bit as type_bit, ARRAY, BOOLEAN, INTEGER, NULL, NUMBER, OBJECT, STRING};

/// What a keyword compiler returns: a keyword to run, or nothing (the keyword
/// needs no run-time check, for example `maxContains` without `contains`).
pub(crate) type Compiled = Result<Option<Box<dyn Keyword>>, CompileError>;

/// A schema object's compiled keywords; the flag marks the `unevaluated*` ones.
pub(crate) type KeywordList = Vec<(bool, Box<dyn Keyword>)>;

type CompileFn = fn(&mut Kw<'_, '_>, &Value) -> Compiled;

/// The table: keyword name → (vocabulary, compiler).
fn lookup(name: &str) -> Option<(&'static str, Vocabulary, CompileFn)> {
    use Vocabulary::{Applicator, Core, Format, Unevaluated, Validation};
    let entry: (&'static str, Vocabulary, CompileFn) = match name {
        "$ref" => ("$ref", Core, ref_::compile),
        "$dynamicRef" => ("$dynamicRef", Core, dynamic_ref::compile),
        "type" => ("type", Validation, type_::compile),
        "enum" => ("enum", Validation, enum_::compile),
        "const" => ("const", Validation, const_::compile),
        "multipleOf" => ("multipleOf", Validation, multiple_of::compile),
        "minimum" => ("minimum", Validation, range::compile_minimum),
        "maximum" => ("maximum", Validation, range::compile_maximum),
        "exclusiveMinimum" => (
            "exclusiveMinimum",
            Validation,
            range::compile_exclusive_minimum,
        ),
        "exclusiveMaximum" => (
            "exclusiveMaximum",
            Validation,
            range::compile_exclusive_maximum,
        ),
        "minLength" => ("minLength", Validation, length::compile_min),
        "maxLength" => ("maxLength", Validation, length::compile_max),
        "pattern" => ("pattern", Validation, pattern::compile),
        "minItems" => ("minItems", Validation, size::compile_min_items),
        "maxItems" => ("maxItems", Validation, size::compile_max_items),
        "minProperties" => ("minProperties", Validation, size::compile_min_properties),
        "maxProperties" => ("maxProperties", Validation, size::compile_max_properties),
        "uniqueItems" => ("uniqueItems", Validation, unique_items::compile),
        "minContains" => ("minContains", Validation, contains::compile_bound),
        "maxContains" => ("maxContains", Validation, contains::compile_bound),
        "required" => ("required", Validation, required::compile),
        "dependentRequired" => ("dependentRequired", Validation, dependent_required::compile),
        "properties" => ("properties", Applicator, properties::compile),
        "patternProperties" => ("patternProperties", Applicator, pattern_properties::compile),
        "additionalProperties" => (
            "additionalProperties",
            Applicator,
            additional_properties::compile,
        ),
        "propertyNames" => ("propertyNames", Applicator, property_names::compile),
        "dependentSchemas" => ("dependentSchemas", Applicator, dependent_schemas::compile),
        "prefixItems" => ("prefixItems", Applicator, prefix_items::compile),
        "items" => ("items", Applicator, items::compile),
        "contains" => ("contains", Applicator, contains::compile),
        "allOf" => ("allOf", Applicator, all_of::compile),
        "anyOf" => ("anyOf", Applicator, any_of::compile),
        "oneOf" => ("oneOf", Applicator, one_of::compile),
        "not" => ("not", Applicator, not::compile),
        "if" => ("if", Applicator, if_then_else::compile),
        "then" => ("then", Applicator, if_then_else::compile_branch),
        "else" => ("else", Applicator, if_then_else::compile_branch),
        "unevaluatedProperties" => (
            "unevaluatedProperties",
            Unevaluated,
            unevaluated_properties::compile,
        ),
        "unevaluatedItems" => ("unevaluatedItems", Unevaluated, unevaluated_items::compile),
        "format" => ("format", Format, format::compile),
        _ => return None,
    };
    Some(entry)
}

/// Keywords that carry no assertion: identifiers, meta-data, content annotations.
pub(crate) fn is_annotation(name: &str) -> bool {
    matches!(
        name,
        "$id"
            | "$anchor"
            | "$dynamicAnchor"
            | "$defs"
            | "$schema"
            | "$vocabulary"
            | "$comment"
            | "title"
            | "description"
            | "default"
            | "examples"
            | "deprecated"
            | "readOnly"
            | "writeOnly"
            | "contentMediaType"
            | "contentEncoding"
            | "contentSchema"
    ) || name.starts_with("x-")
}

/// Keywords of older drafts that 2020-12 replaced: refused in strict mode
/// with a hint, ignored (as unknown) in standard mode.
fn legacy_hint(name: &str) -> Option<&'static str> {
    Some(match name {
        "definitions" => "`definitions` is draft-07; use `$defs`",
        "dependencies" => "`dependencies` is draft-07; use `dependentRequired` or `dependentSchemas`",
        "additionalItems" => "`additionalItems` is draft-07; use `prefixItems` with `items`",
        "$recursiveRef" | "$recursiveAnchor" => {
            "`$recursiveRef`/`$recursiveAnchor` are draft 2019-09; use `$dynamicRef`/`$dynamicAnchor`"
        }
        "id" => "`id` is draft-04; use `$id`",
        _ => return None,
    })
}

/// How a keyword holds subschemas (for finding resources and anchors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    None,
    Single,
    Map,
    List,
}

/// The subschema shape of a keyword.
pub(crate) fn subschema_shape(name: &str) -> Shape {
    match name {
        "additionalProperties"
        | "propertyNames"
        | "items"
        | "contains"
        | "not"
        | "if"
        | "then"
        | "else"
        | "unevaluatedProperties"
        | "unevaluatedItems"
        | "contentSchema" => Shape::Single,
        "properties" | "patternProperties" | "$defs" | "dependentSchemas" => Shape::Map,
        "allOf" | "anyOf" | "oneOf" | "prefixItems" => Shape::List,
        _ => Shape::None,
    }
}

/// Whether a schema location is an in-place branch (`allOf`/`anyOf`/`oneOf`
/// item, `not`, `if`, `then`, `else`, `dependentSchemas` member), whose
/// enclosing schema decides whether the object is closed.
fn is_in_place_branch(ptr: &str) -> bool {
    let mut it = ptr.rsplit('/');
    let last = it.next().unwrap_or("");
    let parent = it.next().unwrap_or("");
    matches!(last, "not" | "if" | "then" | "else")
        || matches!(parent, "allOf" | "anyOf" | "oneOf" | "dependentSchemas")
}

/// Compiles every keyword of a schema object. The flag marks the
/// `unevaluated*` keywords, which run last.
pub(crate) fn compile_object(
    c: &mut Compiler,
    s: &mut SchemaCtx<'_>,
) -> Result<KeywordList, CompileError> {
    let strict = c.mode == Mode::Strict;
    let mut first = Vec::new();
    let mut last = Vec::new();
    let s: &SchemaCtx<'_> = s;
    let closure = strict_closure(c, s);
    let fold = fold_plan(c, s, closure);
    for (k, v) in s.obj.iter() {
        if let Some((name, vocabulary, f)) = lookup(k) {
            if let Some(plan) = &fold {
                match name {
                    "additionalProperties" if plan.closed.is_some() => continue,
                    "required" if plan.required.is_some() => continue,
                    "properties" if s.vocab_on(vocabulary) => {
                        let mut kw = Kw { c, s, name };
                        let plan = properties::Fold {
                            closed: plan.closed.clone(),
                            required: plan.required.clone(),
                        };
                        if let Some(compiled) = properties::compile_folded(&mut kw, v, plan)? {
                            first.push((false, compiled));
                        }
                        continue;
                    }
                    _ => {}
                }
            }
            if !s.vocab_on(vocabulary) {
                if strict {
                    return Err(CompileError::new(
                        CompileErrorCode::UnsupportedKeyword,
                        c.display_location(s.doc, &s.ptr_of(k, &[]), ""),
                        format!("`{k}` is outside the vocabularies the schema's dialect enables"),
                    ));
                }
                continue;
            }
            let mut kw = Kw { c, s, name };
            if let Some(compiled) = f(&mut kw, v)? {
                if name.starts_with("unevaluated") {
                    last.push((true, compiled));
                } else {
                    first.push((false, compiled));
                }
            }
        } else if is_annotation(k) {
            continue;
        } else if let Some(hint) = legacy_hint(k) {
            if strict {
                return Err(CompileError::new(
                    CompileErrorCode::UnsupportedKeyword,
                    c.display_location(s.doc, &s.ptr_of(k, &[]), ""),
                    hint,
                ));
            }
        } else if strict {
            return Err(CompileError::new(
                CompileErrorCode::UnknownKeyword,
                c.display_location(s.doc, &s.ptr_of(k, &[]), ""),
                format!("unknown keyword `{k}`: toolgate refuses what it cannot enforce"),
            ));
        }
    }
    let folded_closure = fold.as_ref().is_some_and(|f| f.closed.is_some());
    if let Some(has_in_place) = closure.filter(|_| !folded_closure) {
        let location: Box<str> = c
            .display_location(s.doc, &s.ptr, "/properties")
            .into_boxed_str();
        let false_node = c.false_node(&location);
        if has_in_place {
            last.push((true, unevaluated_properties::closed(false_node, location)));
        } else {
            first.push((
                false,
                additional_properties::closed(s.obj, false_node, location)?,
            ));
        }
    }
    first.extend(last);
    Ok(first)
}

/// Whether strict mode closes this schema object: `Some(has_in_place)` when
/// it does (an object with `properties` or `patternProperties` that says
/// nothing of `additionalProperties`/`unevaluatedProperties`, and is not an
/// in-place branch). With in-place applicators the closure must see their
/// annotations, so it runs as `unevaluatedProperties: false`.
fn strict_closure(c: &Compiler, s: &SchemaCtx<'_>) -> Option<bool> {
    let closes = c.mode == Mode::Strict
        && (s.obj.contains_key("properties") || s.obj.contains_key("patternProperties"))
        && !s.obj.contains_key("additionalProperties")
        && !s.obj.contains_key("unevaluatedProperties")
        && !is_in_place_branch(&s.ptr)
        && !crate::meta::is_meta(c.doc_uri(s.doc));
    closes.then(|| {
        [
            "allOf",
            "anyOf",
            "oneOf",
            "not",
            "if",
            "$ref",
            "$dynamicRef",
            "dependentSchemas",
        ]
        .iter()
        .any(|k| s.obj.contains_key(k))
    })
}

/// What can be folded into `properties`: the closure (explicit
/// `additionalProperties: false`, or the strict closure without in-place
/// applicators) when there is no `patternProperties`, and a `required` whose
/// names are all declared. `None` when nothing folds.
fn fold_plan(c: &Compiler, s: &SchemaCtx<'_>, closure: Option<bool>) -> Option<properties::Fold> {
    if !s.vocab_on(Vocabulary::Applicator) {
        return None;
    }
    let props = s.obj.get("properties")?;
    props.as_object()?;
    let no_patterns = !s.obj.contains_key("patternProperties");
    let explicit_false = matches!(s.obj.get("additionalProperties"), Some(Value::Bool(false)));
    let closed = if no_patterns && explicit_false {
        Some(
            c.display_location(s.doc, &s.ptr_of("additionalProperties", &[]), "")
                .into(),
        )
    } else if no_patterns && closure == Some(false) {
        Some(c.display_location(s.doc, &s.ptr, "/properties").into())
    } else {
        None
    };
    let required = s
        .obj
        .get("required")
        .filter(|r| {
            s.vocab_on(Vocabulary::Validation) && properties::Fold::can_fold_required(props, r)
        })
        .and_then(Value::as_array)
        .map(|r| {
            let names = r.iter().filter_map(Value::as_str).map(Into::into).collect();
            let location = c
                .display_location(s.doc, &s.ptr_of("required", &[]), "")
                .into();
            (names, location)
        });
    (closed.is_some() || required.is_some()).then_some(properties::Fold { closed, required })
}

/// Reads a non-negative integer keyword value (`3`, or `3.0` in standard mode).
pub(crate) fn non_negative(kw: &Kw<'_, '_>, v: &Value) -> Result<u64, CompileError> {
    let n = v
        .as_number()
        .ok_or_else(|| kw.invalid("a non-negative integer"))?;
    if let Some(u) = n.as_u64() {
        return Ok(u);
    }
    if n.is_integer_lexeme() && !n.is_negative() {
        // Larger than any count: saturate.
        return Ok(u64::MAX);
    }
    if kw.mode() == Mode::Standard {
        if let Some(f) = n.as_f64() {
            if f >= 0.0 && f.fract() == 0.0 {
                #[expect(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    reason = "checked non-negative and integral; saturating cast is the intent"
                )]
                return Ok(f as u64);
            }
        }
    }
    Err(kw.invalid("a non-negative integer"))
}
