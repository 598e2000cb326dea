//! Any bytes as MCP stdio input: split into lines under a cap, each line
//! decoded by the frame layer (strict parse, message kind, the lenient id
//! of a refused request), a response's result checked as a tool result and
//! its tools pinned. Never a panic; no frame over the cap; every answer is
//! one line of JSON the strict parser accepts. What is handed on is built
//! from the pass lists (issue 28): a checked result holds only `content`,
//! `structuredContent`, `isError` and `resultType`, its blocks only the
//! known types; a shown tool definition holds only pass-list members and
//! no hidden character but in its (registered) name.
#![no_main]

use libfuzzer_sys::fuzz_target;
use toolgate_json::Value;
use toolgate_mcp::frame::{self, Line, Message};
use toolgate_mcp::{pins, results};

const CAP: usize = 1024;

fuzz_target!(|data: &[u8]| {
    let options = frame::parse_options(CAP);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let lines = runtime.block_on(async {
        let mut reader = data;
        let mut lines = Vec::new();
        while let Ok(Some(line)) = frame::read_line(&mut reader, CAP).await {
            lines.push(line);
        }
        lines
    });
    for line in lines {
        let Line::Frame(bytes) = line else { continue };
        assert!(bytes.len() <= CAP);
        assert!(!bytes.contains(&b'\n'));
        match frame::decode(&bytes, &options) {
            Err(e) => {
                let answer = e.answer();
                assert!(!answer.contains('\n'));
                assert!(toolgate_json::from_str(&answer).is_ok());
            }
            Ok(Message::Response { id, value }) => {
                assert!(toolgate_json::from_str(id.as_json()).is_ok());
                if let Some(result) = value.pointer("/result") {
                    let (checked, _) = results::check_result(result, None, 64);
                    assert_built_from_the_pass_list(&checked);
                    let answer = frame::result_answer(&id, checked);
                    assert!(toolgate_json::from_str(&answer).is_ok());
                    for tool in result
                        .pointer("/tools")
                        .and_then(Value::as_array)
                        .unwrap_or_default()
                    {
                        if let Some(o) = tool.as_object() {
                            let _ = pins::definition_digest(o);
                            let schema = Value::Object(toolgate_json::Object::new());
                            let shown = pins::shown_definition(o, &schema, None);
                            for (k, v) in shown.iter() {
                                assert!(SHOWN.contains(&k.as_ref()), "{k}");
                                // The name is the registered one, matched
                                // byte for byte: shown as it is.
                                if k != "name" {
                                    assert_no_hidden(v);
                                }
                            }
                        }
                        if let Some(d) = tool.pointer("/description").and_then(Value::as_str) {
                            let _ = pins::hidden_characters(d);
                        }
                    }
                }
            }
            Ok(_) => {}
        }
    }
});

/// The members a shown tool definition may have (hidden characters are
/// removed from all but the name).
const SHOWN: [&str; 6] = [
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
];

/// A checked result: the pass list's members, known block types.
fn assert_built_from_the_pass_list(checked: &Value<'_>) {
    let o = checked.as_object().expect("a result object");
    for (k, _) in o.iter() {
        assert!(
            ["content", "structuredContent", "isError", "resultType"].contains(&k.as_ref()),
            "{k}"
        );
    }
    for block in o
        .get("content")
        .and_then(Value::as_array)
        .expect("content")
    {
        let kind = block.pointer("/type").and_then(Value::as_str).expect("a type");
        assert!(
            ["text", "image", "audio", "resource_link", "resource"].contains(&kind),
            "{kind}"
        );
    }
}

/// No hidden character in any string (keys included).
fn assert_no_hidden(v: &Value<'_>) {
    match v {
        Value::String(s) => assert!(s.chars().all(|c| pins::hidden_kind(c).is_none())),
        Value::Array(a) => a.iter().for_each(assert_no_hidden),
        Value::Object(o) => {
            for (k, v) in o.iter() {
                assert!(k.chars().all(|c| pins::hidden_kind(c).is_none()));
                assert_no_hidden(v);
            }
        }
        _ => {}
    }
}
