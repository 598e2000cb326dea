//! The routes `toolgate proxy` forwards unchanged (`[proxy] forward`), and
//! the routes it never forwards, whatever the config says: those that hand
//! back a model's stored output, whose calls the gate never decided.
//!
//! A `forward` entry is `"METHOD /v1/path"`: `GET`, `POST` or `DELETE`,
//! then a path of `/`-separated segments. A segment `*` matches exactly one
//! segment of the request's path (any text but `/`, not empty); every
//! other segment matches itself, byte for byte. There is no prefix or
//! multi-segment wildcard: `"GET /v1/models/*"` forwards
//! `/v1/models/gpt-4.1` but not `/v1/models` or `/v1/models/a/b`. The
//! query string is not part of the match and goes on as it came.

/// One `forward` pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ForwardRoute {
    method: String,
    pattern: String,
    segments: Vec<Segment>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Any,
    Exact(String),
}

impl Segment {
    fn overlaps(&self, other: &Segment) -> bool {
        match (self, other) {
            (Segment::Exact(a), Segment::Exact(b)) => a == b,
            _ => true,
        }
    }
}

/// The routes answered from a model's stored output (a stored response, a
/// stored chat completion, a batch's results or a file's content, which
/// can be a batch's output): never forwarded. `*` as in `forward`; a `None`
/// method is every method.
const STORED_OUTPUT: &[(Option<&str>, &str)] = &[
    (Some("GET"), "/v1/responses"),
    (None, "/v1/responses/*"),
    (None, "/v1/responses/*/*"),
    (Some("GET"), "/v1/chat/completions"),
    (None, "/v1/chat/completions/*"),
    (None, "/v1/chat/completions/*/*"),
    (None, "/v1/messages/batches/*/results"),
    (None, "/v1/files/*/content"),
];

/// Routes under a stored-output pattern that carry no model output and may
/// be forwarded.
const NOT_STORED_OUTPUT: &[(&str, &str)] = &[("POST", "/v1/responses/input_tokens")];

/// The gated routes: never forwarded unchanged.
const GATED: &[&str] = &["/v1/chat/completions", "/v1/responses", "/v1/messages"];

fn split(path: &str) -> Vec<Segment> {
    path.split('/')
        .skip(1)
        .map(|s| {
            if s == "*" {
                Segment::Any
            } else {
                Segment::Exact(s.to_owned())
            }
        })
        .collect()
}

fn overlaps(a: &[Segment], b: &[Segment]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.overlaps(y))
}

/// Whether `method path` is answered from a model's stored output, and so
/// is never forwarded: every path under `/v1/responses/` but `POST
/// /v1/responses/input_tokens`, `GET /v1/responses`, `GET
/// /v1/chat/completions` and every path under `/v1/chat/completions/`,
/// `/v1/messages/batches/{id}/results` and `/v1/files/{id}/content`.
pub fn is_stored_output_route(method: &str, path: &str) -> bool {
    if NOT_STORED_OUTPUT.contains(&(method, path)) {
        return false;
    }
    let segments = split(path);
    if segments.iter().any(|s| *s == Segment::Exact(String::new())) {
        // An empty segment (`//`, a trailing `/`) matches no pattern of
        // `forward` either; refused as the nearest stored route would be.
        return STORED_OUTPUT.iter().any(|(_, p)| {
            let p = split(p);
            p.len() <= segments.len() && p.iter().zip(&segments).all(|(x, y)| x.overlaps(y))
        });
    }
    STORED_OUTPUT
        .iter()
        .any(|(m, p)| m.is_none_or(|m| m == method) && overlaps(&split(p), &segments))
}

/// Why a `forward` entry is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RouteError {
    Syntax,
    Gated,
    StoredOutput,
}

impl ForwardRoute {
    /// Parses `"METHOD /v1/path"` (see the module docs).
    pub(crate) fn parse(text: &str) -> Result<Self, RouteError> {
        let (method, path) = text.split_once(' ').ok_or(RouteError::Syntax)?;
        if !["GET", "POST", "DELETE"].contains(&method)
            || !path.starts_with("/v1/")
            || path.contains(['?', '#', ' ', '%', '\\'])
            || path.len() > 256
        {
            return Err(RouteError::Syntax);
        }
        let segments = split(path);
        let bad_segment = |s: &Segment| match s {
            Segment::Any => false,
            Segment::Exact(t) => t.is_empty() || t == "." || t == ".." || t.contains('*'),
        };
        if segments.iter().any(bad_segment) {
            return Err(RouteError::Syntax);
        }
        if method == "POST" && GATED.iter().any(|g| overlaps(&split(g), &segments)) {
            return Err(RouteError::Gated);
        }
        let exception = NOT_STORED_OUTPUT.contains(&(method, path));
        let stored = STORED_OUTPUT
            .iter()
            .any(|(m, p)| m.is_none_or(|m| m == method) && overlaps(&split(p), &segments));
        if stored && !exception {
            return Err(RouteError::StoredOutput);
        }
        Ok(Self {
            method: method.to_owned(),
            pattern: path.to_owned(),
            segments,
        })
    }

    /// The method.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The path pattern, as written.
    pub fn pattern(&self) -> &str {
        &self.pattern
    }

    /// Whether the request `method path` (without its query) is this
    /// route's.
    pub fn matches(&self, method: &str, path: &str) -> bool {
        if method != self.method {
            return false;
        }
        let segments = split(path);
        segments.len() == self.segments.len()
            && self
                .segments
                .iter()
                .zip(&segments)
                .all(|(p, s)| match (p, s) {
                    (Segment::Any, Segment::Exact(t)) => {
                        !t.is_empty() && t != "." && t != ".." && !t.contains(['%', '\\'])
                    }
                    (Segment::Exact(a), Segment::Exact(b)) => a == b,
                    (_, Segment::Any) => false,
                })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_one_segment_per_star() {
        let r = ForwardRoute::parse("GET /v1/models/*").unwrap();
        assert!(r.matches("GET", "/v1/models/gpt-4.1"));
        assert!(!r.matches("GET", "/v1/models"));
        assert!(!r.matches("GET", "/v1/models/"));
        assert!(!r.matches("GET", "/v1/models/a/b"));
        assert!(!r.matches("GET", "/v1/models/a%2Fcontent"));
        assert!(!r.matches("GET", "/v1/models/.."));
        assert!(!r.matches("POST", "/v1/models/gpt-4.1"));
        let r = ForwardRoute::parse("POST /v1/messages/count_tokens").unwrap();
        assert!(r.matches("POST", "/v1/messages/count_tokens"));
        assert!(!r.matches("POST", "/v1/messages/count_token"));
        // `*` in the request's own path is a literal, never a wildcard.
        let r = ForwardRoute::parse("GET /v1/models/gpt").unwrap();
        assert!(!r.matches("GET", "/v1/models/*"));
    }

    #[test]
    fn bad_patterns_gated_and_stored_routes_are_refused() {
        for (text, why) in [
            ("GET /v1/models?x=1", RouteError::Syntax),
            ("PUT /v1/models", RouteError::Syntax),
            ("GET /v2/models", RouteError::Syntax),
            ("GET /v1/models/**", RouteError::Syntax),
            ("GET /v1/mod*", RouteError::Syntax),
            ("GET /v1/a/../b", RouteError::Syntax),
            ("GET /v1//b", RouteError::Syntax),
            ("GET /v1/%2e%2e/b", RouteError::Syntax),
            ("POST /v1/messages", RouteError::Gated),
            ("POST /v1/*", RouteError::Gated),
            ("POST /v1/chat/*", RouteError::Gated),
            ("GET /v1/responses/*", RouteError::StoredOutput),
            ("GET /v1/responses/*/input_items", RouteError::StoredOutput),
            ("POST /v1/responses/*", RouteError::StoredOutput),
            ("POST /v1/responses/resp_1/cancel", RouteError::StoredOutput),
            ("GET /v1/chat/completions", RouteError::StoredOutput),
            ("GET /v1/chat/completions/*", RouteError::StoredOutput),
            ("GET /v1/chat/*/*", RouteError::StoredOutput),
            ("GET /v1/*", RouteError::StoredOutput),
            (
                "GET /v1/messages/batches/*/results",
                RouteError::StoredOutput,
            ),
            ("GET /v1/files/*/content", RouteError::StoredOutput),
        ] {
            assert_eq!(ForwardRoute::parse(text), Err(why), "{text}");
        }
        for ok in [
            "POST /v1/responses/input_tokens",
            "POST /v1/messages/count_tokens",
            "POST /v1/embeddings",
            "GET /v1/models",
            "GET /v1/messages/batches/*",
            "GET /v1/files/*",
        ] {
            assert!(ForwardRoute::parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn stored_output_routes_are_known_at_run_time() {
        for (m, p) in [
            ("GET", "/v1/responses/resp_1"),
            ("GET", "/v1/responses/resp_1/input_items"),
            ("POST", "/v1/responses/resp_1/cancel"),
            ("GET", "/v1/chat/completions"),
            ("GET", "/v1/chat/completions/chatcmpl-1"),
            ("POST", "/v1/chat/completions/chatcmpl-1"),
            ("GET", "/v1/chat/completions/chatcmpl-1/messages"),
            ("GET", "/v1/messages/batches/b1/results"),
            ("GET", "/v1/files/f1/content"),
            ("GET", "/v1/responses/resp_1/"),
            ("GET", "/v1/responses//x"),
        ] {
            assert!(is_stored_output_route(m, p), "{m} {p}");
        }
        for (m, p) in [
            ("POST", "/v1/responses/input_tokens"),
            ("POST", "/v1/messages/count_tokens"),
            ("GET", "/v1/models"),
            ("POST", "/v1/embeddings"),
        ] {
            assert!(!is_stored_output_route(m, p), "{m} {p}");
        }
    }
}
