//! Admission: every request's `Host`, `Origin` and bearer token, checked
//! before anything else is read.

use axum::http::{header, Extensions, HeaderMap, HeaderValue, StatusCode};
use axum::response::Response;
use std::net::IpAddr;
use toolgate_edge::config::McpToken;
use toolgate_edge::config::ServerRole;
use toolgate_edge::token::Presented;

use super::{note, plain, rpc_error, Inner};
use crate::frame;
use crate::refusals::Kind;

/// Who a request's token speaks for: a `[[mcp.token]]`'s user (and
/// session), or a JWT's user claim.
#[derive(Debug, Clone)]
pub(super) struct Caller {
    user: String,
    session: Option<String>,
}

impl Caller {
    /// The user its calls are decided as.
    pub(super) fn user(&self) -> &str {
        &self.user
    }

    /// The session of its 2026-07-28 calls, when the config names one.
    pub(super) fn session(&self) -> Option<&str> {
        self.session.as_deref()
    }
}

impl From<&McpToken> for Caller {
    fn from(t: &McpToken) -> Self {
        Self {
            user: t.user().to_owned(),
            session: t.session().map(str::to_owned),
        }
    }
}

impl Inner {
    /// The checks every request passes first: its `Host` and `Origin`
    /// (`403`), then its bearer token (`401`); who the token speaks for.
    /// An accepted token takes the request's connection out of the edge's
    /// pre-authentication budget.
    pub(super) async fn admit(
        &self,
        headers: &HeaderMap,
        extensions: &Extensions,
    ) -> Result<Caller, Box<Response>> {
        self.check_host_origin(headers)?;
        let token = self.authenticate(headers).await?;
        toolgate_edge::authenticated(extensions);
        Ok(token)
    }

    /// `403` unless the `Host` names this endpoint and the `Origin` (if any)
    /// is allowed.
    pub(super) fn check_host_origin(&self, headers: &HeaderMap) -> Result<(), Box<Response>> {
        let host = headers.get(header::HOST).and_then(|v| v.to_str().ok());
        if !host.is_some_and(|h| self.host_ok(h)) {
            note("request refused: the Host header does not name this endpoint");
            self.refused(Kind::Forbidden, "host_not_allowed", None);
            return Err(Box::new(plain(StatusCode::FORBIDDEN, "forbidden: Host")));
        }
        if let Some(origin) = headers.get(header::ORIGIN) {
            let ok = origin.to_str().is_ok_and(|o| {
                let o = o.trim_end_matches('/').to_ascii_lowercase();
                self.origins.contains(&o)
            });
            if !ok {
                note("request refused: its Origin is not allowed");
                self.refused(Kind::Forbidden, "origin_not_allowed", None);
                return Err(Box::new(plain(StatusCode::FORBIDDEN, "forbidden: Origin")));
            }
        }
        Ok(())
    }

    /// The audit record of a refused request (aggregated:
    /// [`crate::refusals`]).
    pub(super) fn refused(&self, kind: Kind, code: &'static str, user: Option<&str>) {
        self.refusals.record(kind, "mcp http", code, user);
    }

    pub(super) fn host_ok(&self, host: &str) -> bool {
        host_ok(host, self.port, &self.hosts)
    }

    /// The token of `Authorization: Bearer TOKEN` (the edge's one rule:
    /// [`toolgate_edge::token`]): a `[[mcp.token]]`, else a JWT (`[jwt]`,
    /// [`toolgate_edge::jwt`]) whose role may call tools (`agent` or
    /// `admin`); or the `401` answer.
    pub(super) async fn authenticate(&self, headers: &HeaderMap) -> Result<Caller, Box<Response>> {
        let digest = match toolgate_edge::token::bearer(headers) {
            Presented::Token(d) => d,
            Presented::Missing => {
                self.refused(Kind::Unauthorized, "missing_token", None);
                return Err(Box::new(self.unauthorized(None)));
            }
            Presented::Malformed | Presented::Duplicate => {
                self.refused(Kind::Unauthorized, "invalid_token", None);
                return Err(Box::new(self.unauthorized(Some("invalid_token"))));
            }
        };
        if let Some(t) = digest.find(&self.tokens, McpToken::sha256) {
            return Ok(Caller::from(t));
        }
        let jwt = self
            .jwt
            .get()
            .zip(toolgate_edge::token::bearer_text(headers));
        let Some((verifier, token)) =
            jwt.filter(|(_, t)| toolgate_edge::jwt::Verifier::looks_like_jwt(t))
        else {
            self.refused(Kind::Unauthorized, "invalid_token", None);
            return Err(Box::new(self.unauthorized(Some("invalid_token"))));
        };
        let verified = match &self.resource {
            // The endpoint's own resource is the one audience (RFC 8707).
            Some(r) => verifier.verify_for(token, &[r.resource().to_owned()]).await,
            None => verifier.verify(token).await,
        };
        match verified {
            Ok(id) if matches!(id.role, ServerRole::Agent | ServerRole::Admin) => Ok(Caller {
                user: id.user,
                session: None,
            }),
            Ok(id) => {
                self.refused(Kind::Forbidden, "jwt_role", Some(&id.user));
                Err(Box::new(forbidden_role()))
            }
            Err(r) => {
                self.refused(Kind::Unauthorized, r.code(), None);
                Err(Box::new(self.unauthorized(Some("invalid_token"))))
            }
        }
    }
}

/// Whether a `Host` header names this endpoint: `localhost`, an IP
/// literal or one of `hosts`, with the bound `port`.
pub(super) fn host_ok(host: &str, port: u16, hosts: &[String]) -> bool {
    let host = host.to_ascii_lowercase();
    let (name, given) = match host.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((ip, after)) => (ip.to_owned(), after.strip_prefix(':').map(str::to_owned)),
            None => return false,
        },
        None => match host.rsplit_once(':') {
            Some((n, p)) => (n.to_owned(), Some(p.to_owned())),
            None => (host.clone(), None),
        },
    };
    let port_ok = match given {
        Some(p) => p.parse::<u16>().is_ok_and(|p| p == port),
        None => port == 80,
    };
    port_ok && (name == "localhost" || name.parse::<IpAddr>().is_ok() || hosts.contains(&name))
}

/// `403`: a valid JWT whose role may not call tools.
fn forbidden_role() -> Response {
    let mut r = rpc_error(
        StatusCode::FORBIDDEN,
        None,
        frame::INVALID_REQUEST,
        "refused by toolgate: this token's role may not call tools",
    );
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static("Bearer realm=\"toolgate-mcp\", error=\"insufficient_scope\""),
    );
    r
}

impl Inner {
    /// `401`, with the challenge: `Bearer`, the error (RFC 6750) and, with
    /// `[jwt] mcp_resource`, where the protected resource metadata is
    /// (RFC 9728), so that an OAuth client knows where to get a token.
    pub(super) fn unauthorized(&self, error: Option<&'static str>) -> Response {
        let mut r = rpc_error(
            StatusCode::UNAUTHORIZED,
            None,
            frame::INVALID_REQUEST,
            "refused by toolgate: a bearer token is required",
        );
        let value = match &self.resource {
            Some(res) => HeaderValue::from_str(&res.challenge("toolgate-mcp", error)).ok(),
            None => None,
        };
        let value = value.unwrap_or_else(|| match error {
            Some(_) => {
                HeaderValue::from_static("Bearer realm=\"toolgate-mcp\", error=\"invalid_token\"")
            }
            None => HeaderValue::from_static("Bearer realm=\"toolgate-mcp\""),
        });
        r.headers_mut().insert(header::WWW_AUTHENTICATE, value);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_this_endpoint_or_is_refused() {
        let hosts = vec!["mcp.example.com".to_owned()];
        for ok in [
            "localhost:8070",
            "127.0.0.1:8070",
            "[::1]:8070",
            "LOCALHOST:8070",
            "10.0.0.5:8070",
            "mcp.example.com:8070",
        ] {
            assert!(host_ok(ok, 8070, &hosts), "{ok}");
        }
        for bad in [
            "evil.example:8070",
            "localhost:8071",
            "localhost",
            "localhost.evil.example:8070",
            "[::1",
            "",
        ] {
            assert!(!host_ok(bad, 8070, &hosts), "{bad}");
        }
        assert!(host_ok("localhost", 80, &hosts));
    }
}
