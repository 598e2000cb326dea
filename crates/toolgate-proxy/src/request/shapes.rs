//! The history's items, as a table: for each API, every item type a
//! request may carry is either known and passed (the caller's own
//! messages, the model's earlier calls and reasoning), or a **tool result**
//! whose text sits in named slots that the sanitizer reads, or unknown and
//! refused. Inside a result, every part is looked up the same way: a part
//! type the table does not know is refused, never passed unread, so the
//! next result shape a provider adds is refused until it is added here.

use std::borrow::Cow;

use toolgate::sanitize::{sanitize_str, SanitizeOptions};
use toolgate_json::{canonical, Value};

use super::{RequestRefused, RequestReport, ResultFindings};
use crate::api::Api;

/// Where text sits in an item or part of a result.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// A member holding text, sanitized. Absent or `null` is fine; any
    /// other type is refused.
    Text(&'static str),
    /// A member holding an array of texts, each sanitized.
    Texts(&'static str),
    /// A member holding text, one part, or an array of parts: each part an
    /// object whose `type` the table names.
    Content(&'static str, &'static [Part]),
    /// A member holding an array of untyped records whose named members
    /// are texts (a shell call's output entries, file search results).
    Records(&'static str, &'static [&'static str]),
    /// A member whose shape the provider leaves open (an MCP error's
    /// content): every string in it is sanitized.
    Deep(&'static str),
}

/// One part type of a result and its slots.
#[derive(Debug)]
struct Part {
    kind: &'static str,
    slots: &'static [Slot],
}

const fn part(kind: &'static str, slots: &'static [Slot]) -> Part {
    Part { kind, slots }
}

/// What an item of the history is.
#[derive(Debug, Clone, Copy)]
enum Item {
    /// Passed as it is: not a tool result.
    Pass,
    /// A tool result: `call_id` names the member with the call it answers,
    /// `tool` the member naming the tool (else the history's own call
    /// names it), `slots` where its text is.
    Result {
        call_id: Option<&'static str>,
        tool: Option<&'static str>,
        slots: &'static [Slot],
    },
}

const TEXT: &[Part] = &[part("text", &[Slot::Text("text")])];
const TEXT_OR_IMAGE: &[Part] = &[part("text", &[Slot::Text("text")]), part("image", &[])];

/// Anthropic: a document's `source`.
const DOCUMENT_SOURCES: &[Part] = &[
    part("base64", &[]),
    part("text", &[Slot::Text("data")]),
    part("content", &[Slot::Content("content", TEXT_OR_IMAGE)]),
    part("url", &[]),
    part("file", &[]),
];
const DOCUMENT: Part = part(
    "document",
    &[
        Slot::Text("title"),
        Slot::Text("context"),
        Slot::Content("source", DOCUMENT_SOURCES),
    ],
);
const SEARCH_RESULT: Part = part(
    "search_result",
    &[Slot::Text("title"), Slot::Content("content", TEXT)],
);

/// Anthropic: what a `tool_result` block may hold.
const TOOL_RESULT_PARTS: &[Part] = &[
    part("text", &[Slot::Text("text")]),
    part("image", &[]),
    SEARCH_RESULT,
    DOCUMENT,
    part("tool_reference", &[]),
    part(
        "browser_state",
        &[
            Slot::Records("tabs", &["title"]),
            Slot::Deep("state_changes"),
        ],
    ),
];

/// Anthropic: the server tools' results, as a history carries them back.
const WEB_SEARCH_PARTS: &[Part] = &[
    part("web_search_result", &[Slot::Text("title")]),
    part("web_search_tool_result_error", &[]),
];
const WEB_FETCH_PARTS: &[Part] = &[
    part("web_fetch_result", &[Slot::Content("content", &[DOCUMENT])]),
    part("web_fetch_tool_result_error", &[]),
];
const CODE_EXECUTION_PARTS: &[Part] = &[
    part(
        "code_execution_result",
        &[Slot::Text("stdout"), Slot::Text("stderr")],
    ),
    part("encrypted_code_execution_result", &[Slot::Text("stderr")]),
    part("code_execution_tool_result_error", &[]),
];
const BASH_PARTS: &[Part] = &[
    part(
        "bash_code_execution_result",
        &[Slot::Text("stdout"), Slot::Text("stderr")],
    ),
    part("bash_code_execution_tool_result_error", &[]),
];
const TEXT_EDITOR_PARTS: &[Part] = &[
    part(
        "text_editor_code_execution_view_result",
        &[Slot::Text("content")],
    ),
    part("text_editor_code_execution_create_result", &[]),
    part(
        "text_editor_code_execution_str_replace_result",
        &[Slot::Texts("lines")],
    ),
    part(
        "text_editor_code_execution_tool_result_error",
        &[Slot::Text("error_message")],
    ),
];
const TOOL_SEARCH_PARTS: &[Part] = &[
    part(
        "tool_search_tool_search_result",
        &[Slot::Content(
            "tool_references",
            &[part("tool_reference", &[])],
        )],
    ),
    part("tool_search_tool_result_error", &[]),
];

const ADVISOR_PARTS: &[Part] = &[
    part("advisor_result", &[Slot::Text("text")]),
    part("advisor_redacted_result", &[]),
    part("advisor_tool_result_error", &[]),
];

/// Anthropic: every content block type of a message (the beta ones too).
const MESSAGES_BLOCKS: &[(&str, Item)] = &[
    ("text", Item::Pass),
    ("image", Item::Pass),
    ("document", Item::Pass),
    ("search_result", Item::Pass),
    ("thinking", Item::Pass),
    ("redacted_thinking", Item::Pass),
    ("tool_use", Item::Pass),
    ("server_tool_use", Item::Pass),
    ("mcp_tool_use", Item::Pass),
    ("container_upload", Item::Pass),
    // Beta blocks that are no tool result.
    ("compaction", Item::Pass),
    ("tool_addition", Item::Pass),
    ("tool_removal", Item::Pass),
    ("mcp_tool_listing", Item::Pass),
    ("fallback", Item::Pass),
    (
        "tool_result",
        result(
            "tool_use_id",
            &[Slot::Content("content", TOOL_RESULT_PARTS)],
        ),
    ),
    (
        "mcp_tool_result",
        result("tool_use_id", &[Slot::Content("content", TEXT)]),
    ),
    (
        "web_search_tool_result",
        result("tool_use_id", &[Slot::Content("content", WEB_SEARCH_PARTS)]),
    ),
    (
        "web_fetch_tool_result",
        result("tool_use_id", &[Slot::Content("content", WEB_FETCH_PARTS)]),
    ),
    (
        "code_execution_tool_result",
        result(
            "tool_use_id",
            &[Slot::Content("content", CODE_EXECUTION_PARTS)],
        ),
    ),
    (
        "bash_code_execution_tool_result",
        result("tool_use_id", &[Slot::Content("content", BASH_PARTS)]),
    ),
    (
        "text_editor_code_execution_tool_result",
        result(
            "tool_use_id",
            &[Slot::Content("content", TEXT_EDITOR_PARTS)],
        ),
    ),
    (
        "tool_search_tool_result",
        result(
            "tool_use_id",
            &[Slot::Content("content", TOOL_SEARCH_PARTS)],
        ),
    ),
    (
        "advisor_tool_result",
        result("tool_use_id", &[Slot::Content("content", ADVISOR_PARTS)]),
    ),
];

const fn result(call_id: &'static str, slots: &'static [Slot]) -> Item {
    Item::Result {
        call_id: Some(call_id),
        tool: None,
        slots,
    }
}

/// Chat: every message role.
const CHAT_ROLES: &[(&str, Item)] = &[
    ("system", Item::Pass),
    ("developer", Item::Pass),
    ("user", Item::Pass),
    ("assistant", Item::Pass),
    (
        "tool",
        result("tool_call_id", &[Slot::Content("content", TEXT)]),
    ),
    // The legacy function result: named by its tool, not by a call id.
    (
        "function",
        Item::Result {
            call_id: None,
            tool: Some("name"),
            slots: &[Slot::Content("content", TEXT)],
        },
    ),
];

/// Responses: what a function or custom tool's output may hold.
const OUTPUT_PARTS: &[Part] = &[
    part("input_text", &[Slot::Text("text")]),
    part("input_image", &[]),
    part("input_file", &[]),
];

/// Responses: every input item type.
const RESPONSES_ITEMS: &[(&str, Item)] = &[
    ("message", Item::Pass),
    ("reasoning", Item::Pass),
    ("function_call", Item::Pass),
    ("custom_tool_call", Item::Pass),
    ("computer_call", Item::Pass),
    ("web_search_call", Item::Pass),
    ("local_shell_call", Item::Pass),
    ("shell_call", Item::Pass),
    ("apply_patch_call", Item::Pass),
    ("image_generation_call", Item::Pass),
    ("mcp_list_tools", Item::Pass),
    ("mcp_approval_request", Item::Pass),
    ("mcp_approval_response", Item::Pass),
    ("tool_search_call", Item::Pass),
    ("tool_search_output", Item::Pass),
    ("additional_tools", Item::Pass),
    ("configuration_update", Item::Pass),
    ("compaction", Item::Pass),
    ("compaction_trigger", Item::Pass),
    ("item_reference", Item::Pass),
    ("program", Item::Pass),
    (
        "function_call_output",
        result("call_id", &[Slot::Content("output", OUTPUT_PARTS)]),
    ),
    (
        "custom_tool_call_output",
        result("call_id", &[Slot::Content("output", OUTPUT_PARTS)]),
    ),
    // The local shell call's id is its `id`.
    (
        "local_shell_call_output",
        result("id", &[Slot::Text("output")]),
    ),
    (
        "shell_call_output",
        result("call_id", &[Slot::Records("output", &["stdout", "stderr"])]),
    ),
    (
        "apply_patch_call_output",
        result("call_id", &[Slot::Text("output")]),
    ),
    (
        "computer_call_output",
        result(
            "call_id",
            &[Slot::Content("output", &[part("computer_screenshot", &[])])],
        ),
    ),
    (
        "mcp_call",
        result(
            "id",
            &[
                Slot::Text("output"),
                Slot::Content(
                    "error",
                    &[
                        part("mcp_protocol_error", &[Slot::Text("message")]),
                        part("http_error", &[Slot::Text("message")]),
                        part("mcp_tool_execution_error", &[Slot::Deep("content")]),
                    ],
                ),
            ],
        ),
    ),
    (
        "file_search_call",
        result("id", &[Slot::Records("results", &["text"])]),
    ),
    (
        "code_interpreter_call",
        result(
            "id",
            &[Slot::Content(
                "outputs",
                &[part("logs", &[Slot::Text("logs")]), part("image", &[])],
            )],
        ),
    ),
    ("program_output", result("call_id", &[Slot::Text("result")])),
];

/// The item types of `api`'s history table.
#[cfg(test)]
fn known_items(api: Api) -> Vec<&'static str> {
    table(api).iter().map(|(k, _)| *k).collect()
}

fn table(api: Api) -> &'static [(&'static str, Item)] {
    match api {
        Api::ChatCompletions => CHAT_ROLES,
        Api::Responses => RESPONSES_ITEMS,
        Api::Messages => MESSAGES_BLOCKS,
    }
}

/// One result being cleaned: what it found so far.
struct Cleaning<'r> {
    wrap: bool,
    report: &'r mut RequestReport,
    found: Vec<&'static str>,
    changed: bool,
}

impl Cleaning<'_> {
    fn text(&mut self, slot: &mut Value<'static>, at: &str) -> Result<(), Shape> {
        match slot {
            Value::Null => Ok(()),
            Value::String(t) => {
                let s = sanitize_str(t, &SanitizeOptions::new());
                for f in &s.findings {
                    let code = f.code.as_str();
                    if !self.report.findings.contains(&code) {
                        self.report.findings.push(code);
                    }
                    if !self.found.contains(&code) {
                        self.found.push(code);
                    }
                }
                let out = if self.wrap { s.wrapped } else { s.text };
                if out != **t {
                    *t = Cow::Owned(out);
                    self.changed = true;
                }
                Ok(())
            }
            _ => Err(Shape::malformed(at)),
        }
    }

    fn deep(&mut self, v: &mut Value<'static>, at: &str) -> Result<(), Shape> {
        match v {
            Value::String(_) => self.text(v, at),
            Value::Array(items) => {
                for (i, item) in items.iter_mut().enumerate() {
                    self.deep(item, &format!("{at}/{i}"))?;
                }
                Ok(())
            }
            Value::Object(o) => {
                let keys: Vec<String> = o.keys().map(str::to_owned).collect();
                for k in keys {
                    if let Some(item) = o.get_mut(&k) {
                        self.deep(item, &format!("{at}/{}", escape(&k)))?;
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn slots(&mut self, v: &mut Value<'static>, slots: &[Slot], at: &str) -> Result<(), Shape> {
        let Value::Object(o) = v else {
            return Err(Shape::malformed(at));
        };
        for slot in slots {
            let (Slot::Text(name)
            | Slot::Texts(name)
            | Slot::Content(name, _)
            | Slot::Records(name, _)
            | Slot::Deep(name)) = *slot;
            let Some(member) = o.get_mut(name) else {
                continue;
            };
            let here = format!("{at}/{name}");
            match *slot {
                Slot::Text(_) => self.text(member, &here)?,
                Slot::Deep(_) => self.deep(member, &here)?,
                Slot::Texts(_) => match member {
                    Value::Null => {}
                    Value::Array(items) => {
                        for (i, t) in items.iter_mut().enumerate() {
                            self.text(t, &format!("{here}/{i}"))?;
                        }
                    }
                    _ => return Err(Shape::malformed(&here)),
                },
                Slot::Records(_, texts) => match member {
                    Value::Null => {}
                    Value::Array(items) => {
                        for (i, r) in items.iter_mut().enumerate() {
                            let slots: Vec<Slot> = texts.iter().map(|t| Slot::Text(t)).collect();
                            self.slots(r, &slots, &format!("{here}/{i}"))?;
                        }
                    }
                    _ => return Err(Shape::malformed(&here)),
                },
                Slot::Content(_, parts) => self.content(member, parts, &here)?,
            }
        }
        Ok(())
    }

    fn content(&mut self, v: &mut Value<'static>, parts: &[Part], at: &str) -> Result<(), Shape> {
        match v {
            Value::Null | Value::String(_) => self.text(v, at),
            Value::Array(items) => {
                for (i, p) in items.iter_mut().enumerate() {
                    self.part(p, parts, &format!("{at}/{i}"))?;
                }
                Ok(())
            }
            Value::Object(_) => self.part(v, parts, at),
            _ => Err(Shape::malformed(at)),
        }
    }

    fn part(&mut self, v: &mut Value<'static>, parts: &[Part], at: &str) -> Result<(), Shape> {
        let kind = type_of(v).ok_or_else(|| Shape::malformed(at))?;
        let Some(p) = parts.iter().find(|p| p.kind == kind) else {
            return Err(Shape {
                code: "unknown_result_part",
                message: format!(
                    "a tool result at {at} holds a part of type `{}`, which toolgate does not read",
                    safe(&kind)
                ),
            });
        };
        self.slots(v, p.slots, at)
    }
}

/// A history that does not fit the table.
struct Shape {
    code: &'static str,
    message: String,
}

impl Shape {
    fn malformed(at: &str) -> Self {
        Self {
            code: "malformed_result",
            message: format!("a tool result at {at} does not have the shape its type has"),
        }
    }
}

fn type_of(v: &Value<'_>) -> Option<String> {
    v.as_object()?.get("type")?.as_str().map(str::to_owned)
}

fn member<'v>(v: &'v Value<'_>, name: &str) -> Option<&'v str> {
    v.as_object()?.get(name)?.as_str()
}

/// A JSON Pointer token.
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Text from the request, shown in an error: printable ASCII only, capped.
fn safe(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_graphic())
        .take(64)
        .collect()
}

/// Sanitizes every tool result of the history in place (see the module
/// docs); whether anything changed. `names` are the history's own calls,
/// `(call id, tool)`.
pub(super) fn clean_history(
    api: Api,
    root: &mut Value<'static>,
    names: &[(String, String)],
    wrap: bool,
    report: &mut RequestReport,
) -> Result<bool, RequestRefused> {
    let mut changed = false;
    let refuse = |s: Shape| RequestRefused {
        code: s.code,
        message: s.message,
        offered: Vec::new(),
    };
    match api {
        Api::ChatCompletions => {
            let Some(Value::Array(messages)) = root.pointer_mut("/messages") else {
                return Ok(false);
            };
            for (i, m) in messages.iter_mut().enumerate() {
                let at = format!("/messages/{i}");
                let role = member(m, "role").map(str::to_owned);
                let Some(role) = role else {
                    return Err(refuse(Shape::malformed(&at)));
                };
                changed |= clean_item(api, m, &role, &at, names, wrap, report).map_err(refuse)?;
            }
        }
        Api::Messages => {
            let Some(Value::Array(messages)) = root.pointer_mut("/messages") else {
                return Ok(false);
            };
            for (i, m) in messages.iter_mut().enumerate() {
                let Some(Value::Array(blocks)) = m.pointer_mut("/content") else {
                    continue;
                };
                for (j, b) in blocks.iter_mut().enumerate() {
                    let at = format!("/messages/{i}/content/{j}");
                    let kind = type_of(b).ok_or_else(|| refuse(Shape::malformed(&at)))?;
                    changed |=
                        clean_item(api, b, &kind, &at, names, wrap, report).map_err(refuse)?;
                }
            }
        }
        Api::Responses => {
            let Some(Value::Array(items)) = root.pointer_mut("/input") else {
                return Ok(false);
            };
            for (i, item) in items.iter_mut().enumerate() {
                let at = format!("/input/{i}");
                // An item without a type is a message (`EasyInputMessage`)
                // when it has a role, else an `item_reference` by its id.
                let kind = match type_of(item) {
                    Some(k) => k,
                    None if member(item, "role").is_some() => "message".to_owned(),
                    None if member(item, "id").is_some() => "item_reference".to_owned(),
                    None => return Err(refuse(Shape::malformed(&at))),
                };
                changed |=
                    clean_item(api, item, &kind, &at, names, wrap, report).map_err(refuse)?;
            }
        }
    }
    Ok(changed)
}

fn clean_item(
    api: Api,
    item: &mut Value<'static>,
    kind: &str,
    at: &str,
    names: &[(String, String)],
    wrap: bool,
    report: &mut RequestReport,
) -> Result<bool, Shape> {
    let Some((_, shape)) = table(api).iter().find(|(k, _)| *k == kind) else {
        return Err(Shape {
            code: "unknown_history_item",
            message: format!(
                "the history at {at} holds an item of type `{}`, which toolgate does not read",
                safe(kind)
            ),
        });
    };
    let Item::Result {
        call_id,
        tool,
        slots,
    } = *shape
    else {
        return Ok(false);
    };
    let digest = canonical::digest(item);
    let call_id = call_id.and_then(|m| member(item, m)).map(str::to_owned);
    let tool = match tool {
        Some(m) => member(item, m).map(str::to_owned),
        None => call_id.as_deref().and_then(|id| {
            names
                .iter()
                .find(|(i, _)| i == id)
                .map(|(_, name)| name.clone())
        }),
    };
    let mut c = Cleaning {
        wrap,
        report,
        found: Vec::new(),
        changed: false,
    };
    c.slots(item, slots, at)?;
    let changed = c.changed;
    if changed {
        c.report.results_changed += 1;
    }
    if !c.found.is_empty() {
        c.report.results.push(ResultFindings {
            call_id,
            tool,
            findings: c.found,
            digest,
        });
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_names_each_type_once() {
        for api in [Api::ChatCompletions, Api::Responses, Api::Messages] {
            let mut kinds = known_items(api);
            let n = kinds.len();
            kinds.sort_unstable();
            kinds.dedup();
            assert_eq!(kinds.len(), n, "{api:?}");
        }
    }
}
