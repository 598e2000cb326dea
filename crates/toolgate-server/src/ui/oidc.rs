//! The approvals page's OpenID Connect login (`[oidc]`): the
//! authorization-code flow with PKCE against `[jwt]`'s issuer.
//!
//! The endpoints are the config's, or read from the issuer's discovery
//! document when the service starts ([`discover`]). A confidential client
//! authenticates at the token endpoint with its secret
//! (`client_secret_basic` or `client_secret_post`).
//!
//! `GET /ui/login/oidc` makes a flow — a random `state`, `nonce` and PKCE
//! verifier kept in memory for [`FLOW_TTL`] (at most [`MAX_FLOWS`]) — binds
//! it to the browser with an `HttpOnly` cookie (`SameSite=Lax`: it must come
//! back with the provider's redirect) and sends the browser to the
//! provider. `GET /ui/login/oidc/callback` takes the flow out (each is used
//! once), checks that the cookie and the `state` name it, exchanges the
//! code with the verifier at the token endpoint, verifies the id_token by
//! the edge's one JWT rule for the audience `client_id` with the flow's
//! `nonce`, and opens a page session for the user (actor `oidc:` and the
//! user) when `[jwt.roles]` make them an approver or admin.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::{Extension, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse as _, Redirect, Response};
use sha2::{Digest as _, Sha256};
use toolgate_edge::config::ServerRole;
use toolgate_store::{AuditEntry, AuditVerdict};

use super::{equal_in_constant_time, named_cookie, open_session, random_hex, Sessions, Who};
use crate::auth::{audit_refusal, Caller};
use crate::error::ApiError;
use crate::state::AppState;

/// How long a login may take at the provider.
pub const FLOW_TTL: Duration = Duration::from_secs(600);
/// The most logins under way at once; the oldest goes first.
pub const MAX_FLOWS: usize = 1024;
const FLOW_COOKIE: &str = "toolgate_oidc";

struct Flow {
    nonce: String,
    verifier: String,
    expires: Instant,
}

/// The logins under way, by `state`.
#[derive(Clone, Default)]
pub(super) struct Flows(Arc<Mutex<HashMap<String, Flow>>>);

fn b64url(bytes: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk.first().copied().unwrap_or(0),
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..=chunk.len() {
            let index = usize::try_from((n >> (18 - 6 * i)) & 63).unwrap_or(0);
            out.push(char::from(A.get(index).copied().unwrap_or(b'A')));
        }
    }
    out
}

fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The authorization and token endpoints in `[jwt]` issuer's discovery
/// document (`ISSUER/.well-known/openid-configuration`, OpenID Connect
/// Discovery 1.0): its `issuer` must be exactly the configured one (a
/// document for another issuer is refused), and both endpoints URLs
/// toolgate accepts in a config (`https://`, `http://` only on loopback,
/// no query or fragment).
pub(crate) async fn discover(issuer: &str) -> Result<(String, String), String> {
    let url = format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    );
    let fail = |why: String| format!("[oidc]: cannot use the discovery document at {url}: {why}");
    let (status, body) = toolgate_edge::jwt::get(&url).await.map_err(&fail)?;
    if status != 200 {
        return Err(fail(format!(
            "the server answered {status} (200 was expected)"
        )));
    }
    let doc = toolgate_json::from_slice(&body).map_err(|_| fail("it is not JSON".to_owned()))?;
    let field = |name: &str| {
        doc.as_object()
            .and_then(|o| o.get(name))
            .and_then(toolgate_json::Value::as_str)
            .map(str::to_owned)
    };
    if field("issuer").as_deref() != Some(issuer) {
        return Err(fail(format!(
            "its `issuer` is not `{issuer}`, the configured one"
        )));
    }
    let endpoint = |name: &str| {
        field(name)
            .filter(|u| toolgate_edge::config::provider_url_ok(u) && !u.contains(['?', '#']))
            .ok_or_else(|| {
                fail(format!(
                    "`{name}` is missing, or not an `https://` URL without query or fragment"
                ))
            })
    };
    Ok((
        endpoint("authorization_endpoint")?,
        endpoint("token_endpoint")?,
    ))
}

/// The authorization and token endpoints: as configured, or as read from
/// the discovery document when the service started.
fn endpoints(
    state: &AppState,
    oidc: &toolgate_edge::config::OidcConfig,
) -> Result<(String, String), ApiError> {
    if let Some((a, t)) = oidc.endpoints() {
        return Ok((a.to_owned(), t.to_owned()));
    }
    state.inner.oidc_endpoints.get().cloned().ok_or_else(|| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "the provider's discovery document was not read",
        )
    })
}

/// The token request's form and `Authorization` header for the client's
/// `token_endpoint_auth` (RFC 6749 §2.3.1: in the header, the id and the
/// secret are form-encoded first).
fn client_auth(
    oidc: &toolgate_edge::config::OidcConfig,
    mut form: String,
) -> (String, Option<String>) {
    use base64::Engine as _;
    use toolgate_edge::config::TokenEndpointAuth;
    let Some(secret) = oidc.client_secret() else {
        return (form, None);
    };
    match oidc.token_endpoint_auth() {
        TokenEndpointAuth::ClientSecretPost => {
            form.push_str("&client_secret=");
            form.push_str(&encode(secret.expose()));
            (form, None)
        }
        TokenEndpointAuth::ClientSecretBasic => {
            let pair = format!("{}:{}", encode(oidc.client_id()), encode(secret.expose()));
            let basic = base64::engine::general_purpose::STANDARD.encode(pair);
            (form, Some(format!("Basic {basic}")))
        }
        _ => (form, None),
    }
}

fn not_configured() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        "the config has no [oidc] table",
    )
}

/// `GET /ui/login/oidc`: to the provider.
pub(super) async fn start(
    State(state): State<AppState>,
    Extension(flows): Extension<Flows>,
) -> Result<Response, ApiError> {
    let oidc = state.inner.oidc.as_ref().ok_or_else(not_configured)?;
    let (authorization_endpoint, _) = endpoints(&state, oidc)?;
    let flow_state = random_hex()?;
    let nonce = random_hex()?;
    let verifier = random_hex()?;
    let challenge = b64url(&Sha256::digest(verifier.as_bytes()));
    let now = Instant::now();
    {
        let mut map = flows.0.lock().unwrap_or_else(PoisonError::into_inner);
        map.retain(|_, f| f.expires > now);
        if map.len() >= MAX_FLOWS {
            let oldest = map
                .iter()
                .min_by_key(|(_, f)| f.expires)
                .map(|(k, _)| k.clone());
            if let Some(k) = oldest {
                map.remove(&k);
            }
        }
        map.insert(
            flow_state.clone(),
            Flow {
                nonce: nonce.clone(),
                verifier,
                expires: now + FLOW_TTL,
            },
        );
    }
    let location = format!(
        "{}?response_type=code&client_id={}&redirect_uri={}&scope=openid&state={flow_state}&nonce={nonce}&code_challenge={challenge}&code_challenge_method=S256",
        authorization_endpoint,
        encode(oidc.client_id()),
        encode(oidc.redirect_uri()),
    );
    let cookie = format!(
        "{FLOW_COOKIE}={flow_state}; Path=/ui/login/oidc; HttpOnly; SameSite=Lax; Max-Age={}{}",
        FLOW_TTL.as_secs(),
        if oidc.secure() { "; Secure" } else { "" }
    );
    let mut response = Redirect::to(&location).into_response();
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, v);
    }
    Ok(response)
}

/// A refused callback: audited (`reason`), and the answer.
async fn refused(
    state: &AppState,
    verdict: AuditVerdict,
    reason: &str,
    message: &'static str,
) -> ApiError {
    let status = match verdict {
        AuditVerdict::Forbidden => StatusCode::FORBIDDEN,
        _ => StatusCode::UNAUTHORIZED,
    };
    state.inner.metrics.refusal(status);
    let entry = AuditEntry::new(state.now(), verdict)
        .reason(reason.to_owned())
        .note("GET /ui/login/oidc/callback");
    audit_refusal(state, entry).await;
    let code = if status == StatusCode::FORBIDDEN {
        "forbidden"
    } else {
        "unauthorized"
    };
    ApiError::new(status, code, message)
}

/// `GET /ui/login/oidc/callback?code&state`: back from the provider.
pub(super) async fn callback(
    State(state): State<AppState>,
    Extension(sessions): Extension<Sessions>,
    Extension(flows): Extension<Flows>,
    Query(query): Query<HashMap<String, String>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let oidc = state.inner.oidc.as_ref().ok_or_else(not_configured)?;
    let given = query.get("state").map(String::as_str).unwrap_or_default();
    let bound = named_cookie(&headers, FLOW_COOKIE).unwrap_or_default();
    if given.is_empty() || !equal_in_constant_time(given.as_bytes(), bound.as_bytes()) {
        return Err(refused(
            &state,
            AuditVerdict::Forbidden,
            "oidc_state",
            "this login was not started in this browser (state)",
        )
        .await);
    }
    let flow = flows
        .0
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(given)
        .filter(|f| f.expires > Instant::now());
    let Some(flow) = flow else {
        return Err(refused(
            &state,
            AuditVerdict::Forbidden,
            "oidc_state",
            "this login is unknown, used or expired",
        )
        .await);
    };
    let Some(code) = query
        .get("code")
        .filter(|c| !c.is_empty() && c.len() <= 2048)
    else {
        return Err(refused(
            &state,
            AuditVerdict::Unauthorized,
            "oidc_code",
            "the provider sent no code (the login was refused)",
        )
        .await);
    };
    let form = format!(
        "grant_type=authorization_code&code={}&redirect_uri={}&client_id={}&code_verifier={}",
        encode(code),
        encode(oidc.redirect_uri()),
        encode(oidc.client_id()),
        flow.verifier
    );
    let (_, token_endpoint) = endpoints(&state, oidc)?;
    let (form, authorization) = client_auth(oidc, form);
    let answer =
        toolgate_edge::jwt::post_form_with(&token_endpoint, form, authorization.as_deref()).await;
    let id_token = answer
        .ok()
        .filter(|(status, _)| *status == 200)
        .and_then(|(_, body)| {
            let v = toolgate_json::from_slice(&body).ok()?;
            let t = v.as_object()?.get("id_token")?.as_str()?.to_owned();
            Some(t)
        });
    let Some(id_token) = id_token else {
        return Err(refused(
            &state,
            AuditVerdict::Unauthorized,
            "oidc_token",
            "the provider's token endpoint gave no id_token for the code",
        )
        .await);
    };
    let Some(verifier) = state.inner.jwt.get() else {
        return Err(refused(
            &state,
            AuditVerdict::Unauthorized,
            "oidc_keys",
            "the [jwt] keys are not loaded",
        )
        .await);
    };
    let identity = match verifier
        .verify_id_token(&id_token, oidc.client_id(), &flow.nonce)
        .await
    {
        Ok(id) => id,
        Err(r) => {
            return Err(refused(&state, AuditVerdict::Unauthorized, r.code(), r.message()).await);
        }
    };
    if identity.role == ServerRole::Agent {
        return Err(refused(
            &state,
            AuditVerdict::Forbidden,
            "role:agent",
            "the user's role may not use the approvals page",
        )
        .await);
    }
    let caller = Caller {
        role: identity.role,
        actor: format!("oidc:{}", identity.user),
        identity: identity.user.clone(),
        users: Some(vec![identity.user]),
    };
    let (cookie, _) = open_session(&sessions, Who::Asserted(caller), oidc.secure())?;
    let mut response = Redirect::to("/ui/").into_response();
    let headers = response.headers_mut();
    headers.append(header::SET_COOKIE, cookie);
    headers.append(
        header::SET_COOKIE,
        HeaderValue::from_static(
            "toolgate_oidc=; Path=/ui/login/oidc; HttpOnly; SameSite=Lax; Max-Age=0",
        ),
    );
    Ok(response)
}
