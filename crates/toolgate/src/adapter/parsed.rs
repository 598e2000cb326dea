//! A JSON response body read once: the tree the adapter reads its calls
//! from is the tree the caller rewrites, so the two cannot disagree about
//! what the body holds, and the body is not parsed again.

use toolgate_json::Value;

use super::{AdapterOptions, Envelope, Error, Format};

/// A JSON response body and the strict parser's tree of it, made by
/// [`AdapterOptions::parse_exact`] under those options' limits, with every
/// number held to the value written (no rounding). Read its calls with
/// [`AdapterOptions::read_parsed`], and use [`ParsedBody::value`] (or
/// [`ParsedBody::into_value`]) for anything else the caller does with the
/// same body: both see the one tree.
///
/// ```
/// use toolgate::adapter::{AdapterOptions, Format};
///
/// let options = AdapterOptions::new();
/// let body = br#"{"id":"msg_1","type":"message","role":"assistant","content":[
///   {"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city":"Paris"}}],
///   "stop_reason":"tool_use"}"#;
/// let parsed = options.parse_exact(body)?;
/// let envelope = options.read_parsed(&parsed, Format::Auto)?;
/// assert_eq!(envelope, options.read(body, Format::Auto)?);
/// assert_eq!(parsed.value().pointer("/content/0/name").and_then(|v| v.as_str()), Some("get_weather"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct ParsedBody<'a> {
    body: &'a [u8],
    value: Value<'a>,
}

impl<'a> ParsedBody<'a> {
    /// The body as received.
    pub fn body(&self) -> &'a [u8] {
        self.body
    }

    /// The body's tree.
    pub fn value(&self) -> &Value<'a> {
        &self.value
    }

    /// The body's tree, for a caller that rebuilds it.
    pub fn into_value(self) -> Value<'a> {
        self.value
    }
}

impl AdapterOptions {
    /// Parses the JSON body `body` once, under these options' limits, and
    /// refusing a number its double does not hold exactly
    /// (`number_too_precise`) even where these options admit rounding: the
    /// tree is then the one [`AdapterOptions::read`] builds from the same
    /// body (a number admitted either way keeps its lexeme), and what a
    /// caller rebuilds from it holds every number as written. A body this
    /// refuses can still be read with [`AdapterOptions::read`].
    pub fn parse_exact<'a>(&self, body: &'a [u8]) -> Result<ParsedBody<'a>, toolgate_json::Error> {
        let value = self.parse.allow_rounding(false).parse(body)?;
        Ok(ParsedBody { body, value })
    }

    /// [`AdapterOptions::read`] for a body already parsed by
    /// [`AdapterOptions::parse_exact`] of these options: the same envelope,
    /// or the same error, without parsing the body again.
    pub fn read_parsed(&self, parsed: &ParsedBody<'_>, format: Format) -> Result<Envelope, Error> {
        // A strict JSON text never opens with an SSE field; should one
        // (it cannot), the stream reader decides, as `read` would.
        if super::sse::looks_like_sse(parsed.body) {
            return self.read(parsed.body, format);
        }
        self.read_tree(parsed.body, &parsed.value, format)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "test code")]

    use super::*;

    const BODIES: [&str; 6] = [
        r#"{"choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":"<tool_call>{}</tool_call>","tool_calls":[{"id":"a","type":"function","function":{"name":"x","arguments":"{\"q\": 1}"}},{"id":"a","type":"function","function":{"name":"y","arguments":""}}]}}]}"#,
        r#"{"object":"response","status":"completed","output":[{"type":"function_call","id":"fc_1","call_id":"c1","name":"x","namespace":"ns","arguments":"{\"a\":[1,2]}"},{"type":"custom_tool_call","call_id":"c2","name":"z","input":"free text"}]}"#,
        r#"{"id":"m","type":"message","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"x","input":{ "a" : 1.5 }}],"stop_reason":"tool_use"}"#,
        r#"{"candidates":[{"content":{"parts":[{"functionCall":{"name":"x","args":{"b":true}}}]},"finishReason":"STOP"}]}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"x","arguments":{"c":null}}}"#,
        r#"{"choices":[{"index":0,"finish_reason":"length","message":{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"x","arguments":"{\"q\""}}]}}]}"#,
    ];

    #[test]
    fn a_parsed_body_reads_as_its_text_does_in_every_format() {
        let options = AdapterOptions::new();
        for body in BODIES {
            for format in Format::ALL {
                let parsed = options.parse_exact(body.as_bytes()).unwrap();
                let once = options.read_parsed(&parsed, format);
                let text = options.read(body.as_bytes(), format);
                assert_eq!(once, text, "{format} {body}");
            }
        }
    }

    #[test]
    fn errors_are_the_same_as_reading_the_text() {
        let options = AdapterOptions::new().with_max_calls(1);
        for body in [
            BODIES[0],
            r#"{"model":"m","messages":[]}"#,
            r#"{"error":{"message":"x"}}"#,
        ] {
            let parsed = options.parse_exact(body.as_bytes()).unwrap();
            let once = options.read_parsed(&parsed, Format::Auto).unwrap_err();
            let text = options.read(body.as_bytes(), Format::Auto).unwrap_err();
            assert_eq!(
                (once.code(), once.pointer()),
                (text.code(), text.pointer()),
                "{body}"
            );
        }
    }

    #[test]
    fn the_exact_parse_refuses_rounding_and_keeps_the_limits() {
        let options = AdapterOptions::new();
        assert!(options.parse_options().allows_rounding());
        let body = br#"{"choices":[],"logprob":0.30000000000000000001}"#;
        let e = options.parse_exact(body).unwrap_err();
        assert_eq!(e.code().as_str(), "number_too_precise");
        // The text path admits it (rounded), as before.
        assert!(options.read(body, Format::OpenAiChat).is_ok());

        let small = toolgate_json::ParseOptions::new().with_limits(
            toolgate_json::Limits::new()
                .set(toolgate_json::Limit::InputBytes, 16)
                .unwrap(),
        );
        let options = AdapterOptions::new().with_parse_options(small);
        let e = options.parse_exact(BODIES[4].as_bytes()).unwrap_err();
        assert_eq!(e.code().as_str(), "too_large");
    }
}
