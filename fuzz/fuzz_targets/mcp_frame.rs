//! Any bytes as MCP stdio input: split into lines under a cap, each line
//! decoded by the frame layer (strict parse, message kind, the lenient id
//! of a refused request), a response's result checked as a tool result and
//! its tools pinned. Never a panic; no frame over the cap; every answer is
//! one line of JSON the strict parser accepts.
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
                    let answer = frame::result_answer(&id, checked);
                    assert!(toolgate_json::from_str(&answer).is_ok());
                    for tool in result
                        .pointer("/tools")
                        .and_then(Value::as_array)
                        .unwrap_or_default()
                    {
                        if let Some(o) = tool.as_object() {
                            let _ = pins::definition_digest(o);
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
