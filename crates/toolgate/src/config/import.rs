//! Tool lists as users already have them: an OpenAI `tools` array, Anthropic
//! `tools`, an MCP `tools/list` result. Each file is read with the strict
//! parser; extra members of a tool (`strict`, `cache_control`, `title`, …)
//! are ignored, the members toolgate reads must have the right shape.

use std::fmt;
use std::path::Path;

use serde::Deserialize;
use toolgate_json::{Object, Value};

use super::error::{Cause, Error, ErrorCode};
use crate::registry::Risk;

/// The format of an imported tool list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize)]
#[non_exhaustive]
pub enum ImportFormat {
    /// An OpenAI `tools` array: Chat Completions
    /// (`{"type":"function","function":{"name","parameters"}}`) or Responses
    /// (`{"type":"function","name","parameters"}`) items, or a request body
    /// holding one.
    #[serde(rename = "openai")]
    OpenAi,
    /// Anthropic `tools` (`name`, `input_schema`), or a request body holding them.
    #[serde(rename = "anthropic")]
    Anthropic,
    /// An MCP `tools/list` result (`{"tools":[…]}`) or the whole JSON-RPC
    /// response. `annotations` give the default risk tier.
    #[serde(rename = "mcp")]
    Mcp,
}

impl ImportFormat {
    /// The name used in the config: `openai`, `anthropic` or `mcp`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::Mcp => "mcp",
        }
    }
}

impl fmt::Display for ImportFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One tool read from a list, not yet compiled.
pub(crate) struct Imported {
    pub(crate) name: String,
    pub(crate) description: Option<String>,
    pub(crate) schema: Value<'static>,
    /// From MCP annotations; the most guarded tier when there are none.
    pub(crate) risk: Risk,
    /// The JSON Pointer of the tool in the file.
    pub(crate) pointer: String,
}

pub(crate) fn read(
    format: ImportFormat,
    bytes: &[u8],
    file: &Path,
) -> Result<Vec<Imported>, Error> {
    let doc = toolgate_json::from_slice(bytes).map_err(|e| {
        Error::new(
            ErrorCode::InvalidJson,
            file,
            format!("invalid JSON: {}", json_summary(&e)),
        )
        .at_line_column(e.line(), e.column())
        .cause(Cause::Json(e))
    })?;
    let bad = |pointer: &str, message: String| {
        Error::new(ErrorCode::InvalidImport, file, message).at_pointer(pointer)
    };
    let (list, base) = match format {
        ImportFormat::OpenAi | ImportFormat::Anthropic => match &doc {
            Value::Array(a) => (a.as_slice(), String::new()),
            Value::Object(o) => match o.get("tools") {
                Some(Value::Array(a)) => (a.as_slice(), "/tools".to_owned()),
                _ => {
                    return Err(bad(
                        "",
                        format!("expected a {format} `tools` array, or an object with one"),
                    ))
                }
            },
            _ => return Err(bad("", format!("expected a {format} `tools` array"))),
        },
        ImportFormat::Mcp => mcp_tools(&doc).map_err(|(p, m)| bad(p, m.to_owned()))?,
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, item) in list.iter().enumerate() {
        let pointer = format!("{base}/{i}");
        let tool = match format {
            ImportFormat::OpenAi => openai(item),
            ImportFormat::Anthropic => anthropic(item),
            ImportFormat::Mcp => mcp(item),
        };
        let mut tool = tool.map_err(|(p, m)| bad(&format!("{pointer}{p}"), m))?;
        tool.pointer = pointer;
        out.push(tool);
    }
    Ok(out)
}

type Failure = (String, String);

fn fail(pointer: &str, message: impl Into<String>) -> Failure {
    (pointer.to_owned(), message.into())
}

fn object<'v, 'a>(v: &'v Value<'a>, pointer: &str, what: &str) -> Result<&'v Object<'a>, Failure> {
    v.as_object()
        .ok_or_else(|| fail(pointer, format!("{what} must be an object")))
}

fn string(o: &Object, key: &str, pointer: &str) -> Result<String, Failure> {
    match o.get(key) {
        Some(Value::String(s)) => Ok(s.to_string()),
        Some(_) => Err(fail(
            &format!("{pointer}/{key}"),
            format!("`{key}` must be a string"),
        )),
        None => Err(fail(pointer, format!("missing `{key}`"))),
    }
}

fn optional_string(o: &Object, key: &str, pointer: &str) -> Result<Option<String>, Failure> {
    match o.get(key) {
        None => Ok(None),
        Some(_) => string(o, key, pointer).map(Some),
    }
}

fn schema(o: &Object, key: &str, pointer: &str, required: bool) -> Result<Value<'static>, Failure> {
    match o.get(key) {
        Some(v @ Value::Object(_)) => Ok(v.clone().into_owned()),
        Some(_) => Err(fail(
            &format!("{pointer}/{key}"),
            format!("`{key}` must be an object"),
        )),
        None if required => Err(fail(pointer, format!("missing `{key}`"))),
        // OpenAI: no `parameters` means the tool takes none.
        None => Ok(no_parameters()),
    }
}

fn no_parameters() -> Value<'static> {
    let mut o = Object::new();
    o.insert("type", Value::from("object"));
    o.insert("properties", Value::Object(Object::new()));
    o.insert("additionalProperties", Value::Bool(false));
    Value::Object(o)
}

fn imported(
    name: String,
    description: Option<String>,
    schema: Value<'static>,
    risk: Risk,
) -> Imported {
    Imported {
        name,
        description,
        schema,
        risk,
        pointer: String::new(),
    }
}

/// `{"type":"function","function":{"name",…,"parameters"}}` (Chat
/// Completions) or `{"type":"function","name",…,"parameters"}` (Responses).
fn openai(item: &Value) -> Result<Imported, Failure> {
    let o = object(item, "", "a tool")?;
    match string(o, "type", "")?.as_str() {
        "function" => {}
        other => {
            return Err(fail(
                "/type",
                format!(
                    "only `function` tools can be gated, not `{}`",
                    other.escape_debug()
                ),
            ))
        }
    }
    let (f, at) = match o.get("function") {
        Some(f) => (object(f, "/function", "`function`")?, "/function"),
        None => (o, ""),
    };
    Ok(imported(
        string(f, "name", at)?,
        optional_string(f, "description", at)?,
        schema(f, "parameters", at, false)?,
        Risk::Destructive,
    ))
}

/// `{"name","description","input_schema"}`; `type`, when present, is `custom`
/// (server tools run at the provider, not through the gate).
fn anthropic(item: &Value) -> Result<Imported, Failure> {
    let o = object(item, "", "a tool")?;
    if let Some(t) = optional_string(o, "type", "")? {
        if t != "custom" {
            return Err(fail(
                "/type",
                format!(
                    "only client (`custom`) tools can be gated, not `{}`",
                    t.escape_debug()
                ),
            ));
        }
    }
    Ok(imported(
        string(o, "name", "")?,
        optional_string(o, "description", "")?,
        schema(o, "input_schema", "", true)?,
        Risk::Destructive,
    ))
}

/// The `tools` of a `tools/list` result, or of a whole JSON-RPC response.
fn mcp_tools<'v, 'a>(
    doc: &'v Value<'a>,
) -> Result<(&'v [Value<'a>], String), (&'static str, &'static str)> {
    let o = doc
        .as_object()
        .ok_or(("", "expected an MCP `tools/list` result object"))?;
    let (result, base) = if o.contains_key("jsonrpc") {
        if o.contains_key("error") {
            return Err((
                "/error",
                "the JSON-RPC response is an error, not a tool list",
            ));
        }
        match o.get("result") {
            Some(Value::Object(r)) => (r, "/result"),
            _ => return Err(("", "the JSON-RPC response has no `result` object")),
        }
    } else {
        (o, "")
    };
    match result.get("tools") {
        Some(Value::Array(a)) => Ok((a.as_slice(), format!("{base}/tools"))),
        _ => Err(("", "expected a `tools` array in the `tools/list` result")),
    }
}

/// `{"name","inputSchema","annotations":{"readOnlyHint","destructiveHint"}}`.
///
/// The hints give the default tier with their MCP defaults (`readOnlyHint`
/// false, `destructiveHint` true): read-only is `read`, explicitly
/// non-destructive is `write`, anything else `destructive`. They come from
/// the server and are untrusted: a config entry for the tool always wins.
fn mcp(item: &Value) -> Result<Imported, Failure> {
    let o = object(item, "", "a tool")?;
    let name = string(o, "name", "")?;
    let description = optional_string(o, "description", "")?;
    let schema = schema(o, "inputSchema", "", true)?;
    let mut read_only = false;
    let mut destructive = true;
    if let Some(a) = o.get("annotations") {
        let a = object(a, "/annotations", "`annotations`")?;
        for (key, slot) in [
            ("readOnlyHint", &mut read_only),
            ("destructiveHint", &mut destructive),
        ] {
            match a.get(key) {
                None => {}
                Some(Value::Bool(b)) => *slot = *b,
                Some(_) => {
                    return Err(fail(
                        &format!("/annotations/{key}"),
                        format!("`{key}` must be a boolean"),
                    ))
                }
            }
        }
    }
    let risk = if read_only {
        Risk::Read
    } else if destructive {
        Risk::Destructive
    } else {
        Risk::Write
    };
    Ok(imported(name, description, schema, risk))
}

/// The strict parser's error without its own position (the caller renders it).
pub(crate) fn json_summary(e: &toolgate_json::Error) -> String {
    let p = e.pointer();
    let p = if p.is_empty() { "/" } else { p };
    match e.key() {
        // A config's own files are trusted text: naming the member helps.
        Some(k) => format!(
            "{}: {} `{}` in object at `{p}`",
            e.code().as_str(),
            e.code().description(),
            k.escape_debug()
        ),
        None => format!("{}: {} at `{p}`", e.code().as_str(), e.code().description()),
    }
}
