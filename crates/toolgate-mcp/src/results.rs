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
    /// `invalid_result`, `unknown_content_type`, `output_schema_mismatch`
    /// or `output_schema_invalid`.
    pub refused: Option<&'static str>,
    /// Whether the text was cut at the cap.
    pub truncated: bool,
    /// The sanitizer's distinct findings in the text blocks.
    pub findings: Vec<FindingCode>,
}

/// Checks the `result` member of a server's answer to a forwarded call and
/// returns the result the client gets, built from what was read (never the
/// server's object filtered):
///
/// - a result that is not an object with a `content` array, or whose
///   `isError` is not a boolean, is replaced by an error result
///   (`invalid_result`); one holding a content block of a type toolgate
///   does not know is replaced too (`unknown_content_type`);
/// - every content block is read ([`Reader::block`]): the text of `text`
///   blocks, of embedded `resource`s and the names and descriptions of
///   `resource_link`s is sanitized (toolgate's result sanitizer: invalid
///   UTF-8, control and invisible characters removed) and the texts
///   together are capped at `max_text_bytes`; the data of `image` and
///   `audio` blocks and of embedded blobs must be strings and passes;
/// - `structuredContent`'s strings are sanitized the same way, and when
///   the tool declared an `outputSchema` (`output`) and the result is not
///   an error, the sanitized `structuredContent` must be present and valid
///   against it (standard JSON Schema 2020-12), else the result is replaced
///   by an error result (`output_schema_mismatch`, or
///   `output_schema_invalid` for a schema toolgate cannot compile: fail
///   closed);
/// - the result shown is `content`, `structuredContent` and `isError` as
///   read, and `resultType` when it is `complete`; nothing else the server
///   put in it (`_meta`, a task, members of a later spec) passes.
pub fn check_result(
    result: &Value<'_>,
    output: Option<&OutputSchema>,
    max_text_bytes: usize,
) -> (Value<'static>, ResultReport) {
    let mut reader = Reader::new(max_text_bytes);
    let refuse = |code: &'static str, mut report: ResultReport| {
        report.refused = Some(code);
        (
            text_result(&format!("refused by toolgate: {code}"), true),
            report,
        )
    };
    let Some(o) = result.as_object() else {
        return refuse("invalid_result", reader.report);
    };
    let Some(content) = o.get("content").and_then(Value::as_array) else {
        return refuse("invalid_result", reader.report);
    };
    let is_error = match o.get("isError") {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => return refuse("invalid_result", reader.report),
    };
    let mut blocks = Vec::with_capacity(content.len());
    for block in content {
        match reader.block(block) {
            Ok(b) => blocks.push(b),
            Err(code) => return refuse(code, reader.report),
        }
    }
    let structured = o.get("structuredContent").map(|v| reader.structured(v));
    if let (Some(schema), false) = (output, is_error.unwrap_or(false)) {
        match (schema, &structured) {
            (OutputSchema::Invalid, _) => return refuse("output_schema_invalid", reader.report),
            (OutputSchema::Compiled(_), None) => {
                return refuse("output_schema_mismatch", reader.report)
            }
            (OutputSchema::Compiled(s), Some(v)) if !s.is_valid(v) => {
                return refuse("output_schema_mismatch", reader.report)
            }
            (OutputSchema::Compiled(_), Some(_)) => {}
        }
    }
    let mut out = Object::new();
    out.insert("content", Value::Array(blocks));
    if let Some(v) = structured {
        out.insert("structuredContent", v);
    }
    if let Some(b) = is_error {
        out.insert("isError", Value::Bool(b));
    }
    if o.get("resultType").and_then(Value::as_str) == Some("complete") {
        out.insert("resultType", Value::String(Cow::Borrowed("complete")));
    }
    (Value::Object(out), reader.report)
}

/// Reads what a server sends toward the model: content blocks, structured
/// values, texts. Every text is sanitized; the texts it reads share one
/// byte budget; what it found is its [`ResultReport`].
#[derive(Debug)]
pub struct Reader {
    budget: usize,
    report: ResultReport,
}

impl Reader {
    /// A reader whose texts together are capped at `max_text_bytes`.
    pub fn new(max_text_bytes: usize) -> Self {
        Self {
            budget: max_text_bytes,
            report: ResultReport::default(),
        }
    }

    /// What it found so far.
    pub fn report(&self) -> &ResultReport {
        &self.report
    }

    /// What it found.
    pub fn into_report(self) -> ResultReport {
        self.report
    }

    /// `text` sanitized, within the budget (what it takes is spent).
    pub fn text(&mut self, text: &str) -> String {
        let clean = sanitize_str(text, &SanitizeOptions::new().with_max_bytes(self.budget));
        self.budget = self.budget.saturating_sub(clean.text.len());
        self.report.truncated |= clean.truncated;
        for f in &clean.findings {
            if !self.report.findings.contains(&f.code) {
                self.report.findings.push(f.code);
            }
        }
        clean.text
    }

    /// One content block as the client gets it: `text`, `image`, `audio`,
    /// `resource_link` and `resource` (embedded), each rebuilt from its
    /// known members with every text sanitized; `Err` with the code that
    /// refuses the whole answer (`unknown_content_type`, or
    /// `invalid_result` for a known type of the wrong shape).
    pub fn block(&mut self, block: &Value<'_>) -> Result<Value<'static>, &'static str> {
        let b = block.as_object().ok_or("invalid_result")?;
        let kind = b
            .get("type")
            .and_then(Value::as_str)
            .ok_or("invalid_result")?;
        let mut out = Object::new();
        match kind {
            "text" => {
                let t = str_member(b, "text")?.ok_or("invalid_result")?;
                out.insert("type", text_value("text"));
                let clean = self.text(t);
                out.insert("text", Value::String(Cow::Owned(clean)));
            }
            "image" | "audio" => {
                out.insert("type", text_value(kind));
                let data = str_member(b, "data")?.ok_or("invalid_result")?;
                out.insert("data", Value::String(Cow::Owned(data.to_owned())));
                let mime = str_member(b, "mimeType")?.ok_or("invalid_result")?;
                out.insert(
                    "mimeType",
                    Value::String(Cow::Owned(crate::pins::clean_text(mime))),
                );
            }
            "resource_link" => {
                out.insert("type", text_value("resource_link"));
                for (member, required) in [
                    ("uri", true),
                    ("name", true),
                    ("title", false),
                    ("description", false),
                    ("mimeType", false),
                ] {
                    match str_member(b, member)? {
                        Some(t) => {
                            let clean = self.text(t);
                            out.insert(member, Value::String(Cow::Owned(clean)));
                        }
                        None if required => return Err("invalid_result"),
                        None => {}
                    }
                }
                if let Some(size) = b.get("size") {
                    let n = size.as_number().ok_or("invalid_result")?;
                    out.insert("size", Value::Number(n.clone()));
                }
            }
            "resource" => {
                out.insert("type", text_value("resource"));
                let r = b.get("resource").ok_or("invalid_result")?;
                out.insert("resource", self.resource_contents(r)?);
            }
            _ => return Err("unknown_content_type"),
        }
        if let Some(a) = b.get("annotations") {
            out.insert("annotations", self.structured(a));
        }
        Ok(Value::Object(out))
    }

    /// A resource's contents (`resources/read`, an embedded resource):
    /// `uri`, `mimeType`, and its `text` sanitized or its `blob` (a
    /// string) as it is.
    pub fn resource_contents(&mut self, r: &Value<'_>) -> Result<Value<'static>, &'static str> {
        let r = r.as_object().ok_or("invalid_result")?;
        let mut out = Object::new();
        let uri = str_member(r, "uri")?.ok_or("invalid_result")?;
        out.insert(
            "uri",
            Value::String(Cow::Owned(crate::pins::clean_text(uri))),
        );
        if let Some(m) = str_member(r, "mimeType")? {
            out.insert(
                "mimeType",
                Value::String(Cow::Owned(crate::pins::clean_text(m))),
            );
        }
        match (str_member(r, "text")?, str_member(r, "blob")?) {
            (Some(t), None) => {
                let clean = self.text(t);
                out.insert("text", Value::String(Cow::Owned(clean)));
            }
            (None, Some(blob)) => {
                out.insert("blob", Value::String(Cow::Owned(blob.to_owned())));
            }
            _ => return Err("invalid_result"),
        }
        Ok(Value::Object(out))
    }

    /// A structured value with each of its strings (keys too) sanitized;
    /// numbers, booleans and nulls as they are.
    pub fn structured(&mut self, v: &Value<'_>) -> Value<'static> {
        match v {
            Value::String(s) => Value::String(Cow::Owned(self.text(s))),
            Value::Array(items) => Value::Array(items.iter().map(|i| self.structured(i)).collect()),
            Value::Object(o) => {
                let mut out = Object::new();
                for (k, v) in o.iter() {
                    let key = crate::pins::clean_text(k);
                    out.insert(key, self.structured(v));
                }
                Value::Object(out)
            }
            other => other.clone().into_owned(),
        }
    }
}

/// The string member `name` of `o`: `Ok(None)` when absent, `Err` when it
/// is not a string.
fn str_member<'o>(o: &'o Object<'_>, name: &str) -> Result<Option<&'o str>, &'static str> {
    match o.get(name) {
        None => Ok(None),
        Some(v) => v.as_str().map(Some).ok_or("invalid_result"),
    }
}

fn text_value(s: &str) -> Value<'static> {
    Value::String(Cow::Owned(s.to_owned()))
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
    fn every_block_type_is_read_and_unknown_ones_refused() {
        let r = json(
            r#"{"content":[{"type":"resource","resource":{"uri":"file:///a","mimeType":"text/plain","text":"x\u200by"}},{"type":"resource_link","uri":"file:///b","name":"b\u202e","description":"d"},{"type":"audio","data":"AA==","mimeType":"audio/wav"}],"structuredContent":{"k\u200b":"v\u2066"},"_meta":{"x":1},"task":{"taskId":"t"},"isError":true}"#,
        );
        let (out, report) = check_result(&r, None, 100);
        assert_eq!(report.refused, None);
        assert!(report.findings.contains(&FindingCode::ControlRemoved));
        assert_eq!(
            out.to_canonical_string(),
            r#"{"content":[{"resource":{"mimeType":"text/plain","text":"xy","uri":"file:///a"},"type":"resource"},{"description":"d","name":"b","type":"resource_link","uri":"file:///b"},{"data":"AA==","mimeType":"audio/wav","type":"audio"}],"isError":true,"structuredContent":{"k":"v"}}"#
        );
        for bad in [
            r#"{"content":[{"type":"program","text":"x"}]}"#,
            r#"{"content":[{"text":"x"}]}"#,
        ] {
            assert_eq!(
                check_result(&json(bad), None, 100).1.refused,
                Some(if bad.contains("program") {
                    "unknown_content_type"
                } else {
                    "invalid_result"
                }),
                "{bad}"
            );
        }
        let no_text = json(r#"{"content":[{"type":"resource","resource":{"uri":"u"}}]}"#);
        assert_eq!(
            check_result(&no_text, None, 100).1.refused,
            Some("invalid_result")
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
