//! `CallToolResult`s: the ones toolgate answers itself, and the server's,
//! checked before the client sees them.

use std::borrow::Cow;

use toolgate::sanitize::{sanitize_str, FindingCode, SanitizeOptions};
use toolgate_json::{Object, Value};
use toolgate_schema::Schema;

/// A `CallToolResult` with one text block: `{"content":[{"type":"text",
/// "text":…}],"isError":…,"resultType":"complete"}` (`resultType` is
/// required by 2026-07-28 clients; older ones ignore it, results being open
/// objects in every era).
pub fn text_result(text: &str, is_error: bool) -> Value<'static> {
    let mut block = Object::new();
    block.insert("type", Value::String(Cow::Borrowed("text")));
    block.insert("text", Value::String(Cow::Owned(text.to_owned())));
    let mut o = Object::new();
    o.insert("content", Value::Array(vec![Value::Object(block)]));
    o.insert("isError", Value::Bool(is_error));
    o.insert("resultType", Value::String(Cow::Borrowed("complete")));
    Value::Object(o)
}

/// What checking a server's result found.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub struct ResultReport {
    /// The result was refused (and replaced by an error result): the code,
    /// `invalid_result`, `output_schema_mismatch` or `output_schema_invalid`.
    pub refused: Option<&'static str>,
    /// Whether the text was cut at the cap.
    pub truncated: bool,
    /// The sanitizer's distinct findings in the text blocks.
    pub findings: Vec<FindingCode>,
}

/// Checks the `result` member of a server's answer to a forwarded call and
/// returns the result the client gets:
///
/// - a result that is not an object with a `content` array is replaced by
///   an error result (`invalid_result`);
/// - when the tool declared an `outputSchema` (`output`) and the result is
///   not an error, `structuredContent` must be present and valid against
///   it (standard JSON Schema 2020-12); otherwise the result is replaced by
///   an error result (`output_schema_mismatch`, or `output_schema_invalid`
///   for a schema toolgate cannot compile: fail closed);
/// - every `text` block is sanitized (toolgate's result sanitizer: invalid
///   UTF-8, control and invisible characters removed) and the text blocks
///   together are capped at `max_text_bytes`.
pub fn check_result(
    result: &Value<'_>,
    output: Option<&OutputSchema>,
    max_text_bytes: usize,
) -> (Value<'static>, ResultReport) {
    let mut report = ResultReport::default();
    let refuse = |code: &'static str, mut report: ResultReport| {
        report.refused = Some(code);
        (
            text_result(&format!("refused by toolgate: {code}"), true),
            report,
        )
    };
    let Some(o) = result.as_object() else {
        return refuse("invalid_result", report);
    };
    let Some(content) = o.get("content").and_then(Value::as_array) else {
        return refuse("invalid_result", report);
    };
    let is_error = match o.get("isError") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return refuse("invalid_result", report),
    };
    if let (Some(schema), false) = (output, is_error) {
        match (schema, o.get("structuredContent")) {
            (OutputSchema::Invalid, _) => return refuse("output_schema_invalid", report),
            (OutputSchema::Compiled(_), None) => return refuse("output_schema_mismatch", report),
            (OutputSchema::Compiled(s), Some(v)) if !s.is_valid(v) => {
                return refuse("output_schema_mismatch", report)
            }
            (OutputSchema::Compiled(_), Some(_)) => {}
        }
    }
    let mut budget = max_text_bytes;
    let mut blocks = Vec::with_capacity(content.len());
    for block in content {
        let text = block
            .as_object()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .and_then(|b| b.get("text"))
            .and_then(Value::as_str);
        let (Some(text), Some(b)) = (text, block.as_object()) else {
            blocks.push(block.clone().into_owned());
            continue;
        };
        let clean = sanitize_str(text, &SanitizeOptions::new().with_max_bytes(budget));
        budget = budget.saturating_sub(clean.text.len());
        report.truncated |= clean.truncated;
        for f in &clean.findings {
            if !report.findings.contains(&f.code) {
                report.findings.push(f.code);
            }
        }
        let mut b = b.clone().into_owned();
        b.insert("text", Value::String(Cow::Owned(clean.text)));
        blocks.push(Value::Object(b));
    }
    let mut out = o.clone().into_owned();
    out.insert("content", Value::Array(blocks));
    (Value::Object(out), report)
}

/// A tool's declared `outputSchema`, compiled once per list.
#[derive(Debug)]
#[non_exhaustive]
pub enum OutputSchema {
    /// Compiled (standard JSON Schema 2020-12; nothing is fetched).
    Compiled(Box<Schema>),
    /// Declared, but toolgate cannot compile it: results are refused.
    Invalid,
}

impl OutputSchema {
    /// Compiles a declared `outputSchema`.
    pub fn compile(schema: &Value<'_>) -> Self {
        let options = toolgate_schema::Options::new().mode(toolgate_schema::Mode::Standard);
        match Schema::compile(schema, &options) {
            Ok(s) => Self::Compiled(Box::new(s)),
            Err(_) => Self::Invalid,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &str) -> Value<'static> {
        toolgate_json::from_str(text).unwrap().into_owned()
    }

    #[test]
    fn a_structured_result_must_match_the_output_schema() {
        let schema = OutputSchema::compile(&json(
            r#"{"type":"object","properties":{"t":{"type":"number"}},"required":["t"]}"#,
        ));
        let ok = json(r#"{"content":[{"type":"text","text":"22"}],"structuredContent":{"t":22}}"#);
        let (out, report) = check_result(&ok, Some(&schema), 100);
        assert_eq!(report.refused, None);
        assert_eq!(out, ok);
        let bad = json(r#"{"content":[],"structuredContent":{"t":"hot"}}"#);
        let (out, report) = check_result(&bad, Some(&schema), 100);
        assert_eq!(report.refused, Some("output_schema_mismatch"));
        assert_eq!(
            out,
            text_result("refused by toolgate: output_schema_mismatch", true)
        );
        let missing = json(r#"{"content":[]}"#);
        assert_eq!(
            check_result(&missing, Some(&schema), 100).1.refused,
            Some("output_schema_mismatch")
        );
        // An error result is not held to the schema.
        let error = json(r#"{"content":[],"isError":true}"#);
        assert_eq!(check_result(&error, Some(&schema), 100).1.refused, None);
    }

    #[test]
    fn text_is_sanitized_and_capped_across_blocks() {
        let r = json(
            r#"{"content":[{"type":"text","text":"abc\u202edef"},{"type":"image","data":"AA==","mimeType":"image/png"},{"type":"text","text":"ghijkl"}]}"#,
        );
        let (out, report) = check_result(&r, None, 8);
        assert!(report.truncated);
        assert!(report.findings.contains(&FindingCode::ControlRemoved));
        assert_eq!(
            out.pointer("/content/0/text").and_then(Value::as_str),
            Some("abcdef")
        );
        assert_eq!(
            out.pointer("/content/1/type").and_then(Value::as_str),
            Some("image")
        );
        assert_eq!(
            out.pointer("/content/2/text").and_then(Value::as_str),
            Some("gh")
        );
    }

    #[test]
    fn a_result_without_content_is_refused() {
        for r in [r#"{}"#, r#"[]"#, r#"{"content":[],"isError":"yes"}"#] {
            assert_eq!(
                check_result(&json(r), None, 8).1.refused,
                Some("invalid_result"),
                "{r}"
            );
        }
    }
}
