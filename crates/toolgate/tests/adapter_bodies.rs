//! Every sample body of PROVIDERS.md §10, and hostile variants, through the
//! adapters: once with the format detected, once with it given.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use toolgate::adapter::{self, Arguments, Envelope, Format};
use toolgate_json::{canonical, ParseOptions};

fn bodies() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bodies")
}

fn format_of_dir(dir: &str) -> Format {
    match dir {
        "openai-chat" | "deepseek" => Format::OpenAiChat,
        "openai-responses" => Format::OpenAiResponses,
        "anthropic" => Format::Anthropic,
        "gemini" => Format::Gemini,
        "mcp" => Format::Mcp,
        other => panic!("no format for {other}"),
    }
}

/// One line per envelope or error: stable, readable, diffable.
fn summary(result: &Result<Envelope, adapter::Error>) -> String {
    match result {
        Err(e) => {
            let inner = e
                .json_error()
                .map(|j| format!("/{}", j.code().as_str()))
                .unwrap_or_default();
            format!("error {}{} @{}", e.code().as_str(), inner, e.pointer())
        }
        Ok(env) => {
            let mut s = format!(
                "{}{} {}({})",
                env.format,
                if env.streamed { " stream" } else { "" },
                env.finish.kind(),
                env.finish.reason()
            );
            for call in &env.calls {
                let args = match &call.arguments {
                    Arguments::Value(v) => format!("value {}", canonical::to_string(v)),
                    Arguments::Text(t) => format!("text {t}"),
                    Arguments::EmptyText => "empty".to_owned(),
                    Arguments::Absent => "absent".to_owned(),
                    Arguments::FreeText(t) => format!("free {t}"),
                    _ => "other".to_owned(),
                };
                write!(
                    s,
                    " | #{} c{} {} {:?} {} @{}",
                    call.index,
                    call.choice,
                    call.call_id.as_deref().unwrap_or("-"),
                    call.name,
                    args,
                    call.arguments_pointer
                )
                .unwrap();
            }
            for f in &env.findings {
                write!(s, " | !{} @{}", f.code, f.pointer).unwrap();
            }
            s
        }
    }
}

fn read_file(rel: &str) -> Vec<u8> {
    std::fs::read(bodies().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Reads `rel` with `Format::Auto` and with its directory's format; both
/// must give `expected`.
fn check(rel: &str, expected: &str) {
    let body = read_file(rel);
    let dir = rel.split('/').next().unwrap();
    let auto = summary(&adapter::read(&body, Format::Auto));
    let given = summary(&adapter::read(&body, format_of_dir(dir)));
    assert_eq!(auto, expected, "{rel} (auto)");
    assert_eq!(given, expected, "{rel} (given format)");
}

/// Like [`check`], for bodies whose detection differs from the given format.
fn check_two(rel: &str, auto_expected: &str, given_expected: &str) {
    let body = read_file(rel);
    let dir = rel.split('/').next().unwrap();
    assert_eq!(
        summary(&adapter::read(&body, Format::Auto)),
        auto_expected,
        "{rel} (auto)"
    );
    assert_eq!(
        summary(&adapter::read(&body, format_of_dir(dir))),
        given_expected,
        "{rel} (given format)"
    );
}

/// Prints every body's summary: `DUMP=1 cargo test -p toolgate --test adapter_bodies dump -- --nocapture`.
#[test]
fn dump() {
    if std::env::var_os("DUMP").is_none() {
        return;
    }
    let mut dirs: Vec<_> = std::fs::read_dir(bodies())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dirs.sort();
    for dir in dirs {
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        let d = dir.file_name().unwrap().to_str().unwrap().to_owned();
        for f in files {
            let body = std::fs::read(&f).unwrap();
            let name = f.file_name().unwrap().to_str().unwrap();
            println!(
                "{d}/{name}\n  auto:  {}\n  given: {}",
                summary(&adapter::read(&body, Format::Auto)),
                summary(&adapter::read(&body, format_of_dir(&d)))
            );
        }
    }
}

/// Every file under `tests/bodies` is read without panicking, in every
/// format, and a body the adapter accepts gives calls whose `Text`
/// arguments resolve or fail with a parser code.
#[test]
fn every_body_in_every_format() {
    for dir in std::fs::read_dir(bodies()).unwrap() {
        for file in std::fs::read_dir(dir.unwrap().path()).unwrap() {
            let body = std::fs::read(file.unwrap().path()).unwrap();
            for format in Format::ALL {
                if let Ok(env) = adapter::read(&body, format) {
                    assert_ne!(env.format, Format::Auto);
                    for (i, call) in env.calls.iter().enumerate() {
                        assert_eq!(call.index, i);
                        let _ = call.arguments.resolve(&ParseOptions::new());
                    }
                }
            }
        }
    }
}
#[test]
fn bodies_anthropic() {
    check(
        "anthropic/an-01.json",
        "anthropic complete(tool_use) | #0 c0 toolu_01 \"get_weather\" value {\"city\":\"Paris\"} @/content/1/input | #1 c0 toolu_02 \"get_time\" value {\"tz\":\"Europe/Paris\"} @/content/2/input",
    );
    check(
        "anthropic/an-02.json",
        "error body_invalid_json/duplicate_key @/content/0/input",
    );
    check(
        "anthropic/an-03.json",
        "anthropic truncated(max_tokens) | #0 c0 toolu_04 \"write_file\" value {\"path\":\"/tmp/x\"} @/content/0/input",
    );
    check("anthropic/an-04.json", "anthropic refused(cyber)");
    check(
        "anthropic/an-05.sse",
        "anthropic stream complete(tool_use) | #0 c0 toolu_05 \"get_weather\" text {\"city\": \"Paris\"} @/1/content_block/input",
    );
    check(
        "anthropic/an-06.sse",
        "anthropic stream truncated(max_tokens) | #0 c0 toolu_05 \"get_weather\" text {\"city\": \"Par @/1/content_block/input",
    );
    check("anthropic/an-07.json", "error not_a_response @/messages");
    check(
        "anthropic/x-dup-envelope.json",
        "error body_invalid_json/duplicate_key @",
    );
    check(
        "anthropic/x-dup-escaped-input.json",
        "error body_invalid_json/duplicate_key @/content/0/input",
    );
    check(
        "anthropic/x-input-not-object.json",
        "anthropic complete(tool_use) | #0 c0 toolu_a \"a\" value null @/content/0/input | #1 c0 toolu_b \"b\" value [1,2] @/content/1/input | #2 c0 toolu_c \"c\" value \"{\\\"x\\\":1}\" @/content/2/input | !server_side_call @/content/3",
    );
    check(
        "anthropic/x-stream-dup-partial.sse",
        "anthropic stream complete(tool_use) | #0 c0 toolu_s8 \"transfer\" text {\"amount\":10,\"amount\":10000} @/5/content_block/input | !dsml_markup @/2/delta/text",
    );
    check(
        "anthropic/x-stream-no-params.sse",
        "anthropic stream complete(tool_use) | #0 c0 toolu_s7 \"list_orders\" value {} @/1/content_block/input",
    );
    check(
        "anthropic/x-stream-no-stop.sse",
        "anthropic stream truncated(stream_truncated) | #0 c0 toolu_s9 \"pay\" text {\"amount\": 300} @/1/content_block/input",
    );
    check(
        "anthropic/x-text-markup.json",
        "anthropic complete(end_turn) | !tool_call_markup @/content/0/thinking | !dsml_markup @/content/1/text",
    );
}

#[test]
fn bodies_deepseek() {
    check(
        "deepseek/ds-01.json",
        "openai complete(tool_calls) | #0 c0 call_00_ds1 \"get_weather\" text {\"location\":\"Hangzhou\"} @/choices/0/message/tool_calls/0/function/arguments",
    );
    check("deepseek/ds-02.json", "error not_a_response @/messages");
    check(
        "deepseek/ds-03.json",
        "openai complete(stop) | !dsml_markup @/choices/0/message/content",
    );
    check(
        "deepseek/ds-04.sse",
        "openai stream complete(stop) | !dsml_markup @/0/choices/0/delta/content",
    );
    check_two(
        "deepseek/ds-05.json",
        "error unknown_format @",
        "error missing_field @/choices",
    );
    check(
        "deepseek/ds-06.json",
        "openai truncated(insufficient_system_resource) | #0 c0 call_00_ds6 \"pay\" text {\"amount\":1 @/choices/0/message/tool_calls/0/function/arguments",
    );
    check(
        "deepseek/x-special-tokens.json",
        "openai complete(stop) | !special_token @/choices/0/message/reasoning_content",
    );
    check(
        "deepseek/x-stream-reasoning-tool.sse",
        "openai stream complete(tool_calls) | #0 c0 call_00_s1 \"get_weather\" text {\"location\":\"Hangzhou\"} @/1/choices/0/delta/tool_calls/0/function/arguments",
    );
}

#[test]
fn bodies_gemini() {
    check(
        "gemini/gm-01.json",
        "gemini complete(STOP) | #0 c0 fc-g1 \"get_weather\" value {\"city\":\"Zurich\"} @/candidates/0/content/parts/0/functionCall/args | #1 c0 fc-g2 \"get_time\" value {\"tz\":\"Europe/Zurich\"} @/candidates/0/content/parts/1/functionCall/args",
    );
    check(
        "gemini/gm-02.json",
        "gemini malformed_call(MALFORMED_FUNCTION_CALL)",
    );
    check(
        "gemini/gm-03.json",
        "gemini truncated(MAX_TOKENS) | #0 c0 - \"write_file\" value {\"path\":\"/tmp/y\"} @/candidates/0/content/parts/0/functionCall/args",
    );
    check(
        "gemini/gm-04.json",
        "gemini malformed_call(UNEXPECTED_TOOL_CALL)",
    );
    check("gemini/gm-05.json", "error not_a_response @/contents");
    check(
        "gemini/gm-06.sse",
        "error unsupported @/0/candidates/0/content/parts/0/functionCall",
    );
    check(
        "gemini/x-array.json",
        "gemini complete(STOP) | #0 c0 - \"get_time\" absent @/1/candidates/0/content/parts/0/functionCall/args",
    );
    check("gemini/x-blocked.json", "gemini content_filtered(SAFETY)");
    check(
        "gemini/x-dup-args.json",
        "error body_invalid_json/duplicate_key @/candidates/0/content/parts/0/functionCall/args",
    );
    check(
        "gemini/x-stream-no-finish.sse",
        "gemini stream truncated(stream_truncated) | #0 c0 - \"delete_all\" value {} @/0/candidates/0/content/parts/0/functionCall/args",
    );
    check(
        "gemini/x-stream.sse",
        "gemini stream complete(STOP) | #0 c0 fc-s1 \"get_weather\" value {\"city\":\"Bern\"} @/1/candidates/0/content/parts/0/functionCall/args",
    );
    check(
        "gemini/x-text-json-call.json",
        "gemini complete(STOP) | !json_call_in_text @/candidates/0/content/parts/0/text",
    );
}

#[test]
fn bodies_mcp() {
    check("mcp/mcp-01.json", "mcp complete(request)");
    check(
        "mcp/mcp-02.json",
        "mcp complete(request) | #0 c0 7 \"execute_sql\" value {\"query\":\"SELECT 1\",\"region\":\"us-west1\"} @/params/arguments",
    );
    check("mcp/mcp-03-error.json", "mcp complete(request)");
    check(
        "mcp/mcp-04.json",
        "error body_invalid_json/duplicate_key @/params/arguments",
    );
    check("mcp/mcp-05.json", "mcp complete(request)");
    check("mcp/mcp-06a.json", "mcp complete(request)");
    check("mcp/mcp-06b.json", "mcp complete(request)");
    check("mcp/mcp-07a.json", "mcp complete(request)");
    check(
        "mcp/mcp-07b.json",
        "mcp complete(request) | #0 c0 10 \"delete_files\" value {\"glob\":\"/tmp/*.log\"} @/params/arguments",
    );
    check("mcp/mcp-08.json", "mcp complete(request)");
    check("mcp/mcp-09a.json", "mcp complete(request)");
    check(
        "mcp/mcp-09b.json",
        "mcp complete(request) | #0 c0 1 \"read_file\" value {\"path\":\"/tmp/ok\"} @/params/arguments",
    );
    check_two(
        "mcp/mcp-10.json",
        "error unknown_format @",
        "error missing_field @/jsonrpc",
    );
    check(
        "mcp/x-batch.json",
        "mcp complete(request) | #0 c0 1 \"read_file\" value {\"path\":\"/tmp/a\"} @/0/params/arguments | #1 c0 2 \"refund\" value {\"amount\":1} @/2/params/arguments",
    );
    check(
        "mcp/x-dup-params.json",
        "error body_invalid_json/duplicate_key @/params",
    );
    check("mcp/x-jsonrpc-1.json", "error invalid_value @/jsonrpc");
    check(
        "mcp/x-no-arguments.json",
        "mcp complete(request) | #0 c0 a-1 \"list_orders\" absent @/params/arguments",
    );
    check("mcp/x-notification-call.json", "error missing_field @/id");
    check("mcp/x-notification.json", "mcp complete(request)");
    check(
        "mcp/x-null-arguments.json",
        "mcp complete(request) | #0 c0 2 \"list_orders\" value null @/params/arguments",
    );
    check("mcp/x-tools-list.json", "mcp complete(request)");
}

#[test]
fn bodies_openai_chat() {
    check(
        "openai-chat/oa-chat-01.json",
        "openai complete(tool_calls) | #0 c0 call_A1 \"get_weather\" text {\"city\":\"Paris\",\"unit\":\"C\"} @/choices/0/message/tool_calls/0/function/arguments | #1 c0 call_B2 \"get_time\" text {\"tz\":\"Europe/Paris\"} @/choices/0/message/tool_calls/1/function/arguments",
    );
    check(
        "openai-chat/oa-chat-02.json",
        "openai complete(tool_calls) | #0 c0 call_D1 \"read_file\" text {\"path\":\"/tmp/notes.txt\",\"path\":\"/etc/passwd\"} @/choices/0/message/tool_calls/0/function/arguments",
    );
    check(
        "openai-chat/oa-chat-03.json",
        "openai truncated(length) | #0 c0 call_T1 \"write_file\" text {\"path\":\"/tmp/a.txt\",\"content\":\"hello wor @/choices/0/message/tool_calls/0/function/arguments",
    );
    check(
        "openai-chat/oa-chat-04.json",
        "openai complete(stop) | #0 c0 call_F1 \"delete_user\" text {\"user_id\":42} @/choices/0/message/tool_calls/0/function/arguments",
    );
    check("openai-chat/oa-chat-05.json", "openai refused(refusal)");
    check(
        "openai-chat/oa-chat-06.sse",
        "openai stream complete(tool_calls) | #0 c0 call_S1 \"get_weather\" text {\"city\":\"Paris\"} @/0/choices/0/delta/tool_calls/0/function/arguments | #1 c0 call_S2 \"get_time\" text {\"tz\":\"UTC\"} @/3/choices/0/delta/tool_calls/0/function/arguments",
    );
    check(
        "openai-chat/oa-chat-07.sse",
        "openai stream truncated(length) | #0 c0 call_S1 \"get_weather\" text {\"ci @/0/choices/0/delta/tool_calls/0/function/arguments",
    );
    check(
        "openai-chat/oa-chat-08.sse",
        "error stream_protocol @/1/choices/0/delta/tool_calls/0/id",
    );
    check(
        "openai-chat/oa-chat-09.sse",
        "openai stream truncated(stream_truncated) | #0 c0 call_X \"rm\" text {\"path\":\"/\"} @/0/choices/0/delta/tool_calls/0/function/arguments",
    );
    check(
        "openai-chat/oa-chat-10.json",
        "error not_a_response @/messages",
    );
    check(
        "openai-chat/oa-chat-11.json",
        "error not_a_response @/messages",
    );
    check(
        "openai-chat/x-args-not-string.json",
        "openai complete(tool_calls) | #0 c0 call_V1 \"a\" value null @/choices/0/message/tool_calls/0/function/arguments | #1 c0 call_V2 \"b\" text [1,2] @/choices/0/message/tool_calls/1/function/arguments | #2 c0 call_V3 \"c\" text \"text\" @/choices/0/message/tool_calls/2/function/arguments | #3 c0 call_V4 \"d\" value {\"x\":1} @/choices/0/message/tool_calls/3/function/arguments",
    );
    check(
        "openai-chat/x-calls-in-text.json",
        "openai complete(tool_calls) | !tool_call_markup @/choices/0/message/content | !json_call_in_text @/choices/0/message/content | !calls_expected @/choices/0/finish_reason",
    );
    check(
        "openai-chat/x-custom-tool.json",
        "openai complete(tool_calls) | #0 c0 call_K1 \"run_sql\" free SELECT 1 @/choices/0/message/tool_calls/0/custom/input",
    );
    check(
        "openai-chat/x-dup-envelope.json",
        "error body_invalid_json/duplicate_key @/choices/0",
    );
    check(
        "openai-chat/x-dup-escaped-envelope.json",
        "error body_invalid_json/duplicate_key @/choices/0/message/tool_calls/0/function",
    );
    check(
        "openai-chat/x-empty-args.json",
        "openai complete(tool_calls) | #0 c0 call_E1 \"list_orders\" empty @/choices/0/message/tool_calls/0/function/arguments",
    );
    check(
        "openai-chat/x-legacy-function-call.json",
        "openai complete(function_call) | #0 c0 - \"refund\" text {\"amount\":2} @/choices/0/message/function_call/arguments",
    );
    check(
        "openai-chat/x-n2.json",
        "openai truncated(length) | #0 c0 call_C0 \"get_time\" text {} @/choices/0/message/tool_calls/0/function/arguments | #1 c1 call_C1 \"refund\" text {\"amount\":1 @/choices/1/message/tool_calls/0/function/arguments",
    );
    check(
        "openai-chat/x-name-escape.json",
        "openai complete(tool_calls) | #0 c0 call_N1 \"refund\" text {\"order_id\":\"A1\"} @/choices/0/message/tool_calls/0/function/arguments | #1 c0 call_N2 \" Refund\\t\" text {} @/choices/0/message/tool_calls/1/function/arguments | #2 c0 call_N3 \"refund\\u{200b}\" text {} @/choices/0/message/tool_calls/2/function/arguments",
    );
    check(
        "openai-chat/x-stream-after-done.sse",
        "error stream_protocol @/2",
    );
    check(
        "openai-chat/x-stream-cut-event.sse",
        "openai stream truncated(stream_truncated) | #0 c0 call_C \"pay\" text {\"amount\":30 @/0/choices/0/delta/tool_calls/0/function/arguments",
    );
    check(
        "openai-chat/x-stream-dup-key.sse",
        "error body_invalid_json/duplicate_key @/1/choices/0/delta/tool_calls/0/function",
    );
    check(
        "openai-chat/x-stream-second-name.sse",
        "error stream_protocol @/1/choices/0/delta/tool_calls/0/function/name",
    );
    check(
        "openai-chat/x-stream-text-leak.sse",
        "openai stream complete(stop) | !tool_call_markup @/0/choices/0/delta/content | !json_call_in_text @/1/choices/0/delta/content",
    );
}

#[test]
fn bodies_openai_responses() {
    check(
        "openai-responses/oa-resp-01.json",
        "responses complete(completed) | #0 c0 call_R1 \"get_weather\" text {\"city\":\"Oslo\"} @/output/0/arguments",
    );
    check(
        "openai-responses/oa-resp-02.json",
        "responses truncated(max_output_tokens) | #0 c0 call_R2 \"send_email\" text {\"to\":\"a@b.c\",\"body\":\"Hi @/output/0/arguments",
    );
    check(
        "openai-responses/oa-resp-03.sse",
        "responses stream complete(completed) | #0 c0 call_R3 \"get_weather\" text {\"city\":\"Oslo\"} @/0/item/arguments",
    );
    check(
        "openai-responses/oa-resp-04.sse",
        "error stream_mismatch @/3/arguments",
    );
    check(
        "openai-responses/oa-resp-05.json",
        "error not_a_response @/input",
    );
    check(
        "openai-responses/x-dup-in-item.json",
        "error body_invalid_json/duplicate_key @/output/0",
    );
    check(
        "openai-responses/x-empty-args.json",
        "responses complete(completed) | #0 c0 call_R4 \"list_orders\" empty @/output/0/arguments",
    );
    check(
        "openai-responses/x-refusal.json",
        "responses refused(refusal)",
    );
    check(
        "openai-responses/x-server-side.json",
        "responses complete(completed) | !server_side_call @/output/0 | !unsupported_call_item @/output/1 | !tool_call_markup @/output/2/summary/0/text",
    );
}

/// The arguments of the samples resolve as the gate will read them: the
/// string forms are parsed strictly on their own, `""` is `{}`.
#[test]
fn arguments_resolve_strictly() {
    let strict = ParseOptions::new();
    let resolve = |rel: &str, call: usize| {
        let env = adapter::read(&read_file(rel), Format::Auto).unwrap();
        env.calls[call]
            .arguments
            .resolve(&strict)
            .map(|v| canonical::to_string(&v))
            .map_err(|e| (e.code().as_str(), e.pointer().to_owned()))
    };
    assert_eq!(
        resolve("openai-chat/oa-chat-01.json", 0),
        Ok(r#"{"city":"Paris","unit":"C"}"#.to_owned())
    );
    assert_eq!(
        resolve("openai-chat/oa-chat-02.json", 0),
        Err(("duplicate_key", String::new()))
    );
    assert_eq!(
        resolve("openai-chat/oa-chat-03.json", 0).unwrap_err().0,
        "truncated"
    );
    assert_eq!(
        resolve("openai-chat/x-empty-args.json", 0),
        Ok("{}".to_owned())
    );
    assert_eq!(
        resolve("openai-chat/x-args-not-string.json", 1),
        Ok("[1,2]".to_owned())
    );
    assert_eq!(
        resolve("openai-chat/oa-chat-06.sse", 1),
        Ok(r#"{"tz":"UTC"}"#.to_owned())
    );
    assert_eq!(
        resolve("anthropic/an-05.sse", 0),
        Ok(r#"{"city":"Paris"}"#.to_owned())
    );
    assert_eq!(
        resolve("anthropic/x-stream-dup-partial.sse", 0)
            .unwrap_err()
            .0,
        "duplicate_key"
    );
    assert_eq!(resolve("mcp/x-no-arguments.json", 0), Ok("{}".to_owned()));
    assert_eq!(
        resolve("mcp/x-null-arguments.json", 0),
        Ok("null".to_owned())
    );
    assert_eq!(
        resolve("openai-chat/x-custom-tool.json", 0),
        Ok(r#""SELECT 1""#.to_owned())
    );
}

/// Names are the unescaped JSON string, byte for byte.
#[test]
fn names_are_exact() {
    let env = adapter::read(&read_file("openai-chat/x-name-escape.json"), Format::Auto).unwrap();
    let names: Vec<&[u8]> = env.calls.iter().map(|c| c.name.as_bytes()).collect();
    assert_eq!(
        names,
        [&b"refund"[..], b" Refund\t", "refund\u{200b}".as_bytes()]
    );
    let env = adapter::read(&read_file("mcp/x-batch.json"), Format::Mcp).unwrap();
    assert_eq!(env.calls[1].name, "refund");
}

/// Error and finding renderings, and the envelope's `Debug`, never carry an
/// argument value.
#[test]
fn renderings_do_not_echo_values() {
    for (rel, secret) in [
        ("anthropic/an-02.json", "10000"),
        ("gemini/x-dup-args.json", "mallory"),
        ("mcp/mcp-04.json", "/etc/shadow"),
        ("openai-chat/x-stream-dup-key.sse", "\"x\""),
    ] {
        let e = adapter::read(&read_file(rel), Format::Auto).unwrap_err();
        assert!(!e.to_string().contains(secret), "{rel}: {e}");
        assert!(!format!("{e:?}").contains(secret), "{rel}: {e:?}");
    }
    for (rel, secret) in [
        ("openai-chat/oa-chat-02.json", "passwd"),
        ("mcp/mcp-02.json", "SELECT"),
    ] {
        let env = adapter::read(&read_file(rel), Format::Auto).unwrap();
        assert!(!format!("{env:?}").contains(secret), "{rel}");
    }
    let e = adapter::read(br#"{"choices":"x"}"#, Format::Auto).unwrap_err();
    assert_eq!(
        e.to_string(),
        "wrong_type: member has the wrong type: expected array, found string at `/choices`"
    );
    assert_eq!(e.expected_type(), Some("array"));
}

#[test]
fn detection_errors() {
    let cases: [(&[u8], &str); 10] = [
        (br#"{"hello":1}"#, "error unknown_format @"),
        (b"[]", "error unknown_format @"),
        (b"42", "error unknown_format @"),
        (
            br#"{"choices":[],"candidates":[]}"#,
            "error ambiguous_format @",
        ),
        (
            br#"{"jsonrpc":"2.0","choices":[]}"#,
            "error ambiguous_format @",
        ),
        (
            br#"{"error":{"message":"rate limited","type":"rate_limit"}}"#,
            "error provider_error @/error",
        ),
        (
            br#"{"type":"error","error":{"type":"overloaded_error","message":"x"}}"#,
            "error provider_error @/error",
        ),
        (b"not json", "error body_invalid_json/invalid_syntax @"),
        (
            b"\xEF\xBB\xBF{}",
            "error body_invalid_json/byte_order_mark @",
        ),
        (b"data: {\"hello\":1}\n\n", "error unknown_format @"),
    ];
    for (body, expected) in cases {
        assert_eq!(
            summary(&adapter::read(body, Format::Auto)),
            expected,
            "{}",
            String::from_utf8_lossy(body)
        );
    }
    let sse = b"event: message_start\ndata: {\"choices\":[]}\n\n";
    assert_eq!(
        summary(&adapter::read(sse, Format::Auto)),
        "error ambiguous_format @/0"
    );
}

#[test]
fn bounds() {
    use toolgate::AdapterOptions;
    // Calls: exactly at the bound is fine, one more is refused, in every form.
    let one = AdapterOptions::new().with_max_calls(1);
    let two = AdapterOptions::new().with_max_calls(2);
    for rel in [
        "openai-chat/oa-chat-01.json",
        "openai-chat/oa-chat-06.sse",
        "anthropic/an-01.json",
        "gemini/gm-01.json",
        "mcp/x-batch.json",
    ] {
        let body = read_file(rel);
        assert!(two.read(&body, Format::Auto).is_ok(), "{rel}");
        let e = one.read(&body, Format::Auto).unwrap_err();
        assert_eq!(e.code().as_str(), "too_many_calls", "{rel}");
    }
    // Events.
    let body = read_file("openai-chat/oa-chat-06.sse");
    assert!(AdapterOptions::new()
        .with_max_events(8)
        .read(&body, Format::Auto)
        .is_ok());
    let e = AdapterOptions::new()
        .with_max_events(7)
        .read(&body, Format::Auto)
        .unwrap_err();
    assert_eq!((e.code().as_str(), e.pointer()), ("too_many_events", "/7"));
    // Stream bytes.
    assert!(AdapterOptions::new()
        .with_max_stream_bytes(body.len())
        .read(&body, Format::Auto)
        .is_ok());
    let e = AdapterOptions::new()
        .with_max_stream_bytes(body.len() - 1)
        .read(&body, Format::Auto)
        .unwrap_err();
    assert_eq!(e.code().as_str(), "too_large");
    // The parser's limits apply to the body and to each event.
    let tight = ParseOptions::new().with_limits(
        toolgate_json::Limits::new()
            .set(toolgate_json::Limit::Depth, 3)
            .unwrap(),
    );
    let e = AdapterOptions::new()
        .with_parse_options(tight)
        .read(&read_file("anthropic/an-01.json"), Format::Auto)
        .unwrap_err();
    assert_eq!(e.json_error().unwrap().code().as_str(), "too_deep");
    let tighter = ParseOptions::new().with_limits(
        toolgate_json::Limits::new()
            .set(toolgate_json::Limit::Depth, 2)
            .unwrap(),
    );
    let e = AdapterOptions::new()
        .with_parse_options(tighter)
        .read(&read_file("anthropic/an-05.sse"), Format::Anthropic)
        .unwrap_err();
    assert_eq!(
        (e.json_error().unwrap().code().as_str(), e.pointer()),
        ("too_deep", "/0/message/content")
    );
    // Findings.
    let env = AdapterOptions::new()
        .with_max_findings(1)
        .read(&read_file("openai-chat/x-calls-in-text.json"), Format::Auto)
        .unwrap();
    assert_eq!(env.findings.len(), 1);
}

#[test]
fn formats_parse_by_name() {
    for f in Format::ALL {
        assert_eq!(f.as_str().parse::<Format>(), Ok(f));
    }
    assert_eq!("deepseek".parse::<Format>(), Ok(Format::OpenAiChat));
    assert!("OpenAI".parse::<Format>().is_err());
}

#[test]
fn duplicate_call_ids_are_a_finding() {
    let body = br#"{"type":"message","role":"assistant","content":[
      {"type":"tool_use","id":"toolu_1","name":"a","input":{}},
      {"type":"tool_use","id":"toolu_1","name":"b","input":{}}],"stop_reason":"tool_use"}"#;
    assert_eq!(
        summary(&adapter::read(body, Format::Auto)),
        r#"anthropic complete(tool_use) | #0 c0 toolu_1 "a" value {} @/content/0/input | #1 c0 toolu_1 "b" value {} @/content/1/input | !duplicate_call_id @/content/1"#
    );
}

#[test]
fn stream_protocol_errors() {
    let cases: [(&str, &str); 6] = [
        // A delta for a block that was never started.
        (
            "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[]}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}}\n\n",
            "error stream_protocol @/1/index",
        ),
        // The event name and the payload's type disagree.
        (
            "event: message_stop\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[]}}\n\n",
            "error stream_protocol @/0/type",
        ),
        // message_stop with a block still open.
        (
            "data: {\"type\":\"message_start\",\"message\":{\"content\":[]}}\n\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"t\",\"name\":\"a\",\"input\":{}}}\n\ndata: {\"type\":\"message_stop\"}\n\n",
            "error stream_protocol @/2",
        ),
        // Responses: a delta for an unknown item.
        (
            "data: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_9\",\"output_index\":0,\"delta\":\"{}\"}\n\n",
            "error stream_protocol @/0",
        ),
        // Responses: output_item.done disagrees with the deltas.
        (
            "data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"c\",\"name\":\"a\",\"arguments\":\"\"}}\n\ndata: {\"type\":\"response.function_call_arguments.delta\",\"item_id\":\"fc_1\",\"output_index\":0,\"delta\":\"{}\"}\n\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"c\",\"name\":\"b\",\"arguments\":\"{}\"}}\n\n",
            "error stream_mismatch @/2/item/name",
        ),
        // Responses: the final response lists a call the stream never had.
        (
            "data: {\"type\":\"response.completed\",\"response\":{\"status\":\"completed\",\"output\":[{\"type\":\"function_call\",\"id\":\"fc_1\",\"call_id\":\"c\",\"name\":\"rm\",\"arguments\":\"{}\"}]}}\n\n",
            "error stream_mismatch @/0/response/output/0",
        ),
    ];
    for (body, expected) in cases {
        assert_eq!(
            summary(&adapter::read(body.as_bytes(), Format::Auto)),
            expected,
            "{body}"
        );
    }
}

#[test]
fn error_events_end_streams() {
    let anthropic = "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"content\":[]}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n";
    assert_eq!(
        summary(&adapter::read(anthropic.as_bytes(), Format::Anthropic)),
        "anthropic stream error(overloaded_error)"
    );
    let responses = "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"status\":\"in_progress\",\"output\":[]}}\n\nevent: response.failed\ndata: {\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":{\"code\":\"server_error\",\"message\":\"x\"},\"output\":[]}}\n\n";
    assert_eq!(
        summary(&adapter::read(responses.as_bytes(), Format::Auto)),
        "responses stream error(server_error)"
    );
    let chat = "data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"refusal\":\"No.\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";
    assert_eq!(
        summary(&adapter::read(chat.as_bytes(), Format::Auto)),
        "openai stream refused(refusal)"
    );
}

/// A body read as another provider's format is refused: a configured format
/// never turns a response with calls into one without.
#[test]
fn wrong_format_is_refused() {
    let samples = [
        ("openai-chat/oa-chat-01.json", Format::OpenAiChat),
        ("openai-chat/oa-chat-06.sse", Format::OpenAiChat),
        ("openai-responses/oa-resp-01.json", Format::OpenAiResponses),
        ("openai-responses/oa-resp-03.sse", Format::OpenAiResponses),
        ("anthropic/an-01.json", Format::Anthropic),
        ("anthropic/an-05.sse", Format::Anthropic),
        ("gemini/gm-01.json", Format::Gemini),
        ("gemini/x-stream.sse", Format::Gemini),
        ("mcp/mcp-02.json", Format::Mcp),
    ];
    for (rel, own) in samples {
        let body = read_file(rel);
        for format in Format::ALL {
            let result = adapter::read(&body, format);
            if format == own || format == Format::Auto {
                assert!(!result.unwrap().calls.is_empty(), "{rel} as {format}");
            } else {
                assert!(result.is_err(), "{rel} as {format}: {}", summary(&result));
            }
        }
    }
}

#[test]
fn responses_sequence_numbers_increase() {
    let body = String::from_utf8(read_file("openai-responses/oa-resp-03.sse")).unwrap();
    let swapped = body.replace("\"sequence_number\":4", "\"sequence_number\":3");
    assert_eq!(
        summary(&adapter::read(swapped.as_bytes(), Format::Auto)),
        "error stream_protocol @/2/sequence_number"
    );
}
