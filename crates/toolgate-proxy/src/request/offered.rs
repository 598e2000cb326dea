//! The request's `tools` array against the registry, and DeepSeek's
//! thinking-mode request pitfalls.
//!
//! **Offered tools.** A function tool offered under a registered name
//! whose schema (`function.parameters`, `parameters`, `input_schema`)
//! differs from the registered one (compared as canonical JSON) is a
//! finding, `offered_schema_differs`: the model would decode against one
//! schema while the gate checks its calls against another. By
//! `[proxy] offered_tools` it is reported only, replaced by the registered
//! schema, or the request is refused (`offered_tool_mismatch`). Tools the
//! config does not register are left alone (their calls are denied
//! `unknown_tool`), and so are provider tools without a schema.
//!
//! **DeepSeek** (a chat request whose `model` names DeepSeek). In thinking
//! mode (`deepseek-reasoner`, `thinking: {"type": "enabled"}`, or a model
//! other than `deepseek-chat` without `thinking` disabled: thinking is on
//! by default) DeepSeek answers 400 to a forced `tool_choice` (`required`
//! or a named function) and to an assistant turn with `tool_calls` but no
//! `reasoning_content`; an assistant's `content: null` is refused by
//! several DeepSeek-compatible servers. Each is reported
//! (`deepseek_forced_tool_choice`, `deepseek_reasoning_missing`,
//! `deepseek_content_null`, with the JSON Pointer), and with
//! `[proxy] deepseek = "normalize"` normalized: the forced `tool_choice`
//! removed (the model chooses; the gate checks every call), the missing
//! `reasoning_content` set to `""`, the `null` content to `""`.

use std::borrow::Cow;

use toolgate::registry::Registry;
use toolgate_edge::config::{DeepSeek, OfferedTools};
use toolgate_json::canonical::Digest;
use toolgate_json::{canonical, Value};

use super::{OfferedTool, RequestNote, RequestRefused, RequestReport};
use crate::api::Api;

/// Where a tool's name and schema are, for the tools whose calls the gate
/// decides: `None` for a tool of another kind (custom, server-side).
fn slots(api: Api, tool: &Value<'_>) -> Option<(&'static str, &'static str)> {
    let kind = tool.pointer("/type").and_then(Value::as_str);
    match api {
        Api::ChatCompletions => {
            (kind == Some("function")).then_some(("/function/name", "/function/parameters"))
        }
        Api::Responses => (kind == Some("function")).then_some(("/name", "/parameters")),
        Api::Messages => {
            matches!(kind, None | Some("custom")).then_some(("/name", "/input_schema"))
        }
    }
}

/// Checks the offered tools against `registry` (see the module docs).
pub(super) fn check_offered(
    api: Api,
    root: &mut Value<'static>,
    registry: &Registry,
    mode: OfferedTools,
    report: &mut RequestReport,
) -> Result<bool, RequestRefused> {
    let Some(Value::Array(tools)) = root.pointer_mut("/tools") else {
        return Ok(false);
    };
    let mut changed = false;
    let mut differing = Vec::new();
    for t in tools.iter_mut() {
        let Some((name_at, schema_at)) = slots(api, t) else {
            continue;
        };
        let Some(name) = t.pointer(name_at).and_then(Value::as_str) else {
            continue;
        };
        let Some(registered) = registry.get(name) else {
            continue;
        };
        let name = name.to_owned();
        let want = canonical::to_string(registered.raw_schema());
        let offered = t.pointer(schema_at);
        let offered_text = offered.map(canonical::to_string);
        if offered_text.as_deref() == Some(want.as_str()) {
            continue;
        }
        let digest = Digest::of(offered_text.unwrap_or_default().as_bytes());
        differing.push(name.clone());
        report.offered.push(OfferedTool {
            tool: name,
            digest,
            action: mode,
        });
        if mode == OfferedTools::Replace {
            let (parent, member) = schema_at.rsplit_once('/').unwrap_or(("", schema_at));
            let target = if parent.is_empty() {
                Some(&mut *t)
            } else {
                t.pointer_mut(parent)
            };
            if let Some(Value::Object(o)) = target {
                o.insert(member.to_owned(), registered.raw_schema().clone());
                changed = true;
            }
        }
    }
    if mode == OfferedTools::Refuse && !differing.is_empty() {
        return Err(RequestRefused {
            code: "offered_tool_mismatch",
            message: format!(
                "the request offers registered tools with another schema than the registered one: {}",
                differing.join(", ")
            ),
            offered: std::mem::take(&mut report.offered),
        });
    }
    Ok(changed)
}

fn is_deepseek_thinking(root: &Value<'_>) -> Option<bool> {
    let model = root.pointer("/model").and_then(Value::as_str)?;
    let model = model.to_ascii_lowercase();
    if !model.contains("deepseek") {
        return None;
    }
    let thinking = root.pointer("/thinking/type").and_then(Value::as_str);
    Some(match thinking {
        Some("enabled") => true,
        Some("disabled") => false,
        _ => !model.ends_with("deepseek-chat"),
    })
}

/// Reports (and with `normalize` normalizes) DeepSeek's request pitfalls
/// (see the module docs); whether the request changed.
pub(super) fn check_deepseek(
    root: &mut Value<'static>,
    mode: DeepSeek,
    report: &mut RequestReport,
) -> bool {
    let Some(thinking) = is_deepseek_thinking(root) else {
        return false;
    };
    let normalize = mode == DeepSeek::Normalize;
    let mut changed = false;
    let Value::Object(o) = root else {
        return false;
    };
    if thinking {
        let forced = match o.get("tool_choice") {
            Some(Value::String(c)) => c == "required",
            Some(Value::Object(_)) => true,
            _ => false,
        };
        if forced {
            report.notes.push(RequestNote {
                code: "deepseek_forced_tool_choice",
                at: "/tool_choice".to_owned(),
            });
            if normalize {
                o.remove("tool_choice");
                changed = true;
            }
        }
    }
    let Some(Value::Array(messages)) = o.get_mut("messages") else {
        return changed;
    };
    for (i, m) in messages.iter_mut().enumerate() {
        let Value::Object(m) = m else { continue };
        if m.get("role").and_then(Value::as_str) != Some("assistant") {
            continue;
        }
        let has_calls = m
            .get("tool_calls")
            .and_then(Value::as_array)
            .is_some_and(|c| !c.is_empty());
        let reasoning = m.get("reasoning_content").is_some_and(|r| !r.is_null());
        if thinking && has_calls && !reasoning {
            report.notes.push(RequestNote {
                code: "deepseek_reasoning_missing",
                at: format!("/messages/{i}"),
            });
            if normalize {
                m.insert("reasoning_content", Value::String(Cow::Borrowed("")));
                changed = true;
            }
        }
        if m.get("content").is_some_and(Value::is_null) {
            report.notes.push(RequestNote {
                code: "deepseek_content_null",
                at: format!("/messages/{i}/content"),
            });
            if normalize {
                m.insert("content", Value::String(Cow::Borrowed("")));
                changed = true;
            }
        }
    }
    changed
}
