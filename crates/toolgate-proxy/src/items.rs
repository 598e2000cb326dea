//! The pass list: every output item type of each API and what the proxy
//! does with it. One table per API, read by the JSON rewriter and the
//! stream rewriter alike, so that a response and its stream can never be
//! treated differently.
//!
//! | API | gated (decided, released rewritten) | passed as they came | built in (refused unless `pass_through` names them) |
//! |---|---|---|---|
//! | Chat Completions (`tool_calls[].type`) | `function`, `custom`; the legacy `function_call` | the message's text members | none |
//! | Responses (`output[].type`) | `function_call`, `custom_tool_call` | `message`, `reasoning` | [`RESPONSES_BUILT_IN`] |
//! | Messages (`content[].type`) | `tool_use` | `text`, `thinking`, `redacted_thinking` | [`MESSAGES_BUILT_IN`] |
//!
//! Every other type (Responses `program`, a type added to an API after this
//! table, a misspelt one) is refused: the whole response is answered with
//! an error in the provider's shape and its calls are audited as denied.

use crate::api::Api;

pub use toolgate_edge::config::{MESSAGES_BUILT_IN, RESPONSES_BUILT_IN};

/// The members of a Chat Completions message (and of a stream's delta)
/// the proxy hands on: the role, the text it passes (`content`, `refusal`,
/// `reasoning_content`) and the calls the gate decides (`tool_calls`, the
/// legacy `function_call`). A member off this list that holds anything
/// refuses the response as an item off the pass list does; one holding
/// nothing (`null`, `[]`, `{}`: OpenAI's empty `annotations`) passes.
pub const CHAT_MESSAGE_MEMBERS: [&str; 6] = [
    "role",
    "content",
    "refusal",
    "reasoning_content",
    "tool_calls",
    "function_call",
];

/// The first member of a Chat Completions message or delta `m` that is
/// off [`CHAT_MESSAGE_MEMBERS`] and holds something (toolgate's own
/// member aside: it is removed from whatever the upstream sends).
pub(crate) fn chat_member_off_list<'m>(m: &'m toolgate_json::Object<'_>) -> Option<&'m str> {
    use toolgate_json::Value;
    m.iter()
        .find(|(k, v)| {
            let empty = match v {
                Value::Null => true,
                Value::Array(a) => a.is_empty(),
                Value::Object(o) => o.is_empty(),
                _ => false,
            };
            !empty && *k != TOOLGATE && !CHAT_MESSAGE_MEMBERS.contains(k)
        })
        .map(|(k, _)| k)
}

/// Why a message member is refused, in words safe to show.
pub(crate) fn refused_member_message(member: &str) -> String {
    let shown: String = member
        .chars()
        .filter(|c| c.is_ascii_graphic())
        .take(64)
        .collect();
    format!("toolgate refused the model's response: a message member `{shown}` is not on the proxy's pass list")
}

/// What an output item type is to the proxy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ItemRole {
    /// A call the application runs: decided by the gate, released rewritten
    /// from the decision or withheld.
    Call,
    /// Text, reasoning: passed on as it came.
    Passed,
    /// A built-in or server-side tool's item: refused unless `pass_through`
    /// names its type.
    BuiltIn,
    /// Anything else: refused.
    Unknown,
}

/// What the proxy does with one item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Disposition {
    /// Decided by the gate.
    Gate,
    /// Handed on as it came.
    Pass,
    /// The whole response is refused.
    Refuse,
}

/// The role of an output item of type `kind` in `api`'s responses (for
/// Chat Completions, the `type` of a `tool_calls` entry).
pub fn item_role(api: Api, kind: &str) -> ItemRole {
    let (calls, passed, built_in): (&[&str], &[&str], &[&str]) = match api {
        Api::ChatCompletions => (&["function", "custom"], &[], &[]),
        Api::Responses => (
            &["function_call", "custom_tool_call"],
            &["message", "reasoning"],
            &RESPONSES_BUILT_IN,
        ),
        Api::Messages => (
            &["tool_use"],
            &["text", "thinking", "redacted_thinking"],
            &MESSAGES_BUILT_IN,
        ),
    };
    if calls.contains(&kind) {
        ItemRole::Call
    } else if passed.contains(&kind) {
        ItemRole::Passed
    } else if built_in.contains(&kind) {
        ItemRole::BuiltIn
    } else {
        ItemRole::Unknown
    }
}

/// What happens to an item of type `kind`, with `pass_through`.
pub(crate) fn disposition(api: Api, kind: &str, pass_through: &[String]) -> Disposition {
    match item_role(api, kind) {
        ItemRole::Call => Disposition::Gate,
        ItemRole::Passed => Disposition::Pass,
        ItemRole::BuiltIn if pass_through.iter().any(|p| p == kind) => Disposition::Pass,
        ItemRole::BuiltIn | ItemRole::Unknown => Disposition::Refuse,
    }
}

/// The part types a passed Responses item may hold, by its list: a
/// `message`'s `content` holds answer text and refusals, a `reasoning`
/// item's `summary` and `content` hold reasoning text. A part of any other
/// type refuses the response, as an unknown item would: the gate reads
/// only these parts' text.
const RESPONSES_PARTS: [(&str, &str, &[&str]); 3] = [
    ("message", "content", &["output_text", "refusal"]),
    ("reasoning", "summary", &["summary_text"]),
    ("reasoning", "content", &["reasoning_text"]),
];

/// The first part of a passed Responses `item` whose type is not on
/// [`RESPONSES_PARTS`] (its type; `""` for a part without one), or `None`
/// when every part is known. Items of other APIs and types hold no parts
/// to check.
pub(crate) fn unknown_part<'v>(api: Api, item: &'v toolgate_json::Value<'_>) -> Option<&'v str> {
    use toolgate_json::Value;
    if api != Api::Responses {
        return None;
    }
    let o = item.as_object()?;
    let kind = o.get("type").and_then(Value::as_str)?;
    RESPONSES_PARTS
        .iter()
        .filter(|(k, _, _)| *k == kind)
        .find_map(|(_, list, known)| {
            o.get(list)
                .and_then(Value::as_array)
                .unwrap_or_default()
                .iter()
                .map(part_kind)
                .find(|t| !known.contains(t))
        })
}

/// The type of a part of `kind`'s item as a Responses stream names it in
/// `response.content_part.*` and `response.reasoning_summary_part.*`
/// events: whether `part` is on the pass list for an item of type `item`.
pub(crate) fn part_known(item: &str, part: &toolgate_json::Value<'_>) -> bool {
    let t = part_kind(part);
    RESPONSES_PARTS
        .iter()
        .any(|(k, _, known)| *k == item && known.contains(&t))
}

fn part_kind<'v>(part: &'v toolgate_json::Value<'_>) -> &'v str {
    part.as_object()
        .and_then(|p| p.get("type"))
        .and_then(toolgate_json::Value::as_str)
        .unwrap_or("")
}

/// Why an item of type `kind` is refused, in words safe to show (the type
/// reduced to printable ASCII and capped).
pub(crate) fn refused_message(kind: &str) -> String {
    let shown: String = kind
        .chars()
        .filter(|c| c.is_ascii_graphic())
        .take(64)
        .collect();
    format!("toolgate refused the model's response: an item of type `{shown}` is not on the proxy's pass list")
}

/// The member toolgate writes its verdicts in.
pub(crate) const TOOLGATE: &str = "toolgate";

/// Removes every `toolgate` member, at any depth: that member is
/// toolgate's alone, whatever the upstream put there.
pub(crate) fn strip_toolgate(v: &mut toolgate_json::Value<'_>) {
    use toolgate_json::Value;
    match v {
        Value::Object(o) => {
            o.remove(TOOLGATE);
            let names: Vec<String> = o.keys().map(str::to_owned).collect();
            for name in names {
                if let Some(child) = o.get_mut(&name) {
                    strip_toolgate(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strip_toolgate),
        _ => {}
    }
}

/// Removes the `toolgate` member that an SDK's accumulator keeps on an
/// assistant message (`get_final_completion()` in a Chat Completions
/// stream) from the messages of a request's history: toolgate's verdicts
/// are for the application, not for the upstream or the model. Whether
/// anything was removed.
#[cfg(feature = "server")]
pub(crate) fn strip_history_verdicts(api: Api, root: &mut toolgate_json::Value<'_>) -> bool {
    use toolgate_json::Value;
    if api != Api::ChatCompletions {
        return false;
    }
    let Some(Value::Array(messages)) = root.pointer_mut("/messages") else {
        return false;
    };
    let mut removed = false;
    for m in messages.iter_mut() {
        if let Value::Object(m) = m {
            removed |= m.remove(TOOLGATE).is_some();
        }
    }
    removed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_api_knows_its_calls_text_and_built_in_items() {
        assert_eq!(item_role(Api::Responses, "function_call"), ItemRole::Call);
        assert_eq!(item_role(Api::Responses, "reasoning"), ItemRole::Passed);
        assert_eq!(
            item_role(Api::Responses, "local_shell_call"),
            ItemRole::BuiltIn
        );
        assert_eq!(item_role(Api::Responses, "program"), ItemRole::Unknown);
        assert_eq!(item_role(Api::Messages, "tool_use"), ItemRole::Call);
        assert_eq!(item_role(Api::Messages, "function_call"), ItemRole::Unknown);
        assert_eq!(item_role(Api::ChatCompletions, "custom"), ItemRole::Call);
        assert_eq!(
            item_role(Api::ChatCompletions, "local_shell"),
            ItemRole::Unknown
        );
    }

    #[test]
    fn pass_through_opens_built_in_items_only() {
        let pass = vec!["web_search_call".to_owned(), "program".to_owned()];
        assert_eq!(
            disposition(Api::Responses, "web_search_call", &pass),
            Disposition::Pass
        );
        assert_eq!(
            disposition(Api::Responses, "web_search_call", &[]),
            Disposition::Refuse
        );
        assert_eq!(
            disposition(Api::Responses, "program", &pass),
            Disposition::Refuse,
            "an unknown type stays refused whatever the config says"
        );
    }

    #[cfg(feature = "server")]
    #[test]
    fn verdicts_kept_on_history_messages_are_not_sent_upstream() {
        let mut v = toolgate_json::from_slice(
            br#"{"messages":[{"role":"assistant","content":"x","toolgate":{"verdict":"deny"}}],"tools":[{"type":"function","function":{"name":"t","parameters":{"type":"object","properties":{"toolgate":{"type":"string"}}}}}]}"#,
        )
        .unwrap()
        .into_owned();
        assert!(strip_history_verdicts(Api::ChatCompletions, &mut v));
        assert_eq!(
            toolgate_json::canonical::to_string(&v),
            r#"{"messages":[{"content":"x","role":"assistant"}],"tools":[{"function":{"name":"t","parameters":{"properties":{"toolgate":{"type":"string"}},"type":"object"}},"type":"function"}]}"#,
            "a tool's own `toolgate` parameter stays"
        );
        assert!(!strip_history_verdicts(Api::ChatCompletions, &mut v));
    }

    #[test]
    fn toolgate_members_are_removed_at_any_depth() {
        let mut v = toolgate_json::from_slice(
            br#"{"toolgate":1,"a":[{"toolgate":{"x":1},"b":{"toolgate":true,"c":2}}]}"#,
        )
        .unwrap()
        .into_owned();
        strip_toolgate(&mut v);
        assert_eq!(
            toolgate_json::canonical::to_string(&v),
            r#"{"a":[{"b":{"c":2}}]}"#
        );
    }
}
