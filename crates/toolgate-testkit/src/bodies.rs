//! Model responses for tests, as a provider sends them.

use std::fmt::Write as _;

/// One OpenAI chat completion whose message proposes these tool calls,
/// each `(call id, tool name, arguments text)`; the arguments go in as the
/// JSON string the provider sends. The turn ended with `tool_calls`.
pub fn openai_tool_calls(calls: &[(&str, &str, &str)]) -> String {
    let calls: Vec<String> = calls
        .iter()
        .map(|(id, name, args)| {
            format!(
                r#"{{"id":{},"type":"function","function":{{"name":{},"arguments":{}}}}}"#,
                json_string(id),
                json_string(name),
                json_string(args)
            )
        })
        .collect();
    format!(
        r#"{{"object":"chat.completion","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{}]}}}}]}}"#,
        calls.join(",")
    )
}

/// `s` as a JSON string literal.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_quoted_as_a_json_string() {
        let body = openai_tool_calls(&[("c1", "t", "{\"a\":\"x\\y\"}\n")]);
        assert!(
            body.contains(r#""arguments":"{\"a\":\"x\\y\"}\n""#),
            "{body}"
        );
        assert!(body.contains(r#""id":"c1","type":"function""#), "{body}");
    }
}
