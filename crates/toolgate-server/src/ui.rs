//! The approvals page at `/ui/`: plain HTML, CSS and JavaScript compiled
//! into the binary (`ui/` beside `src/`), and the small JSON API it uses.
//!
//! # Login and sessions
//!
//! The page asks for an `approver` or `admin` token once and exchanges it
//! (`POST /ui/login`) for a session: a random id in an `HttpOnly`,
//! `SameSite=Strict` cookie scoped to `/ui`, valid for [`SESSION_TTL`], kept
//! in the server's memory only (a restart logs everyone out). The token
//! itself never stays in the page. Sessions act with their token's name as
//! the actor, exactly like the token would on `/v1`. Tokens change only with
//! a restart (a reload keeps them), which also ends every session: removing
//! a token logs its sessions out. Refused logins are audited and counted
//! like refused `/v1` requests, and so are CSRF refusals (`forbidden`,
//! reason `csrf`).
//!
//! With a `[login]` table, approvers log in with the organisation's
//! identity instead: an authenticating reverse proxy (oauth2-proxy, an
//! identity-aware proxy) in front of `GET /ui/login/proxy` asserts the user
//! and groups in headers, believed only from the configured peer
//! addresses; the session then acts as `sso:` and the user.
//!
//! # CSRF
//!
//! Every state-changing request of the page (`approve`, `deny`, `kill`,
//! `logout`) must carry the session's CSRF token in the `X-CSRF-Token`
//! header; the page learns it from `GET /ui/api/state`, which a foreign
//! site cannot read. Every `POST` under `/ui` (login included) is refused
//! when its `Origin` names another origin than the request's `Host`, or
//! when `Sec-Fetch-Site` says `cross-site` or `same-site`, before its body
//! is read; the login's body (read before anyone is known) is capped at
//! 4 KiB and must arrive within 3 seconds. Bodies must be
//! `application/json`, which an HTML form cannot send. A refusal is
//! `403 csrf_rejected` with the reason. A reverse proxy in front must pass
//! the `Host` header through.
//!
//! # Roles
//!
//! Approvers see the pending calls (tool, user, session, risk tier, reasons,
//! the redacted canonical arguments) and approve or deny them with a note;
//! they see the kill switch's state and the recent audit entries (who, what,
//! verdict, reasons, actor, note — not arguments or hashes) but cannot flip
//! the switch. Admins can also set the kill switch from the page.
//!
//! # Headers
//!
//! Every answer under `/ui` carries a strict `Content-Security-Policy` (no
//! inline script or style, nothing from other origins, no framing),
//! `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`,
//! `X-Frame-Options: DENY` and `Cache-Control: no-store`. The page renders
//! every value with `textContent`: arguments are the model's output, so
//! they are attacker-controlled and never parsed as HTML.
//!
//! | route | needs | answer |
//! |---|---|---|
//! | `GET /ui/`, `/ui/app.js`, `/ui/app.css`, `/ui/favicon.svg` | none | the page |
//! | `GET /ui/api/me` | none | `{"me": null}`, or `{"me": {"actor", "role", "csrf"}}` with a live session |
//! | `POST /ui/login` `{"token"}` | an approver or admin token | `{"actor", "role", "csrf"}` and the session cookie |
//! | `GET /ui/login/proxy` | `[login]`: a trusted proxy's identity headers | `303` to `/ui/` with the session cookie |
//! | `GET /ui/login/oidc`, `…/callback` | `[oidc]`: the provider's login | `303` to the provider, then to `/ui/` with the session cookie |
//! | `POST /ui/logout` | session, CSRF | `{}`, the cookie cleared |
//! | `GET /ui/api/state` | session | `{"me", "kill", "approvals", "pending_total", "pins", "audit"}`: the newest [`PENDING_LIMIT`] unexpired pending approvals, newest first, and how many there are in all; the oldest [`PENDING_LIMIT`] tool definitions of MCP servers waiting for a human, each with its findings and its diff from the definition approved before (as `GET /v1/pins/{id}`) |
//! | `POST /ui/api/approvals/{id}/approve`, `…/deny` `{"note"}` | session, CSRF | the approval |
//! | `POST /ui/api/pins/{id}/approve`, `…/reject` `{"note"}` | session, CSRF | the pin |
//! | `POST /ui/api/kill` `{"mode", "reason"}` | admin session, CSRF | the kill switch |

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use axum::extract::{Extension, FromRequestParts, Path, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::Router;
use sha2::{Digest as _, Sha256};
use toolgate_edge::config::ServerRole;
use toolgate_json::{canonical, Object, Value};
use toolgate_store::{
    ApprovalFilter, ApprovalId, ApprovalState, AuditEntry, AuditVerdict, PinFilter, PinState,
};

use crate::auth::{audit_refusal, caller_for, token_digest, Caller};
use crate::error::{json_response, ApiError};
use crate::extract::{MaybeJson, StrictJson};
use crate::state::AppState;
use crate::wire;

/// How long a page session lasts after login.
pub const SESSION_TTL: Duration = Duration::from_secs(8 * 60 * 60);
/// The most sessions kept at once; the oldest goes first.
const MAX_SESSIONS: usize = 1024;
/// The session cookie's name.
const COOKIE: &str = "toolgate_ui";
/// The header carrying the CSRF token.
const CSRF_HEADER: &str = "x-csrf-token";
/// How many pending approvals (the newest) the page shows.
pub const PENDING_LIMIT: u32 = 100;
/// How many audit entries the page shows.
const AUDIT_LIMIT: u32 = 25;
/// The Content-Security-Policy of every `/ui` answer.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const INDEX_HTML: &str = include_str!("../ui/index.html");
const APP_JS: &str = include_str!("../ui/app.js");
const APP_CSS: &str = include_str!("../ui/app.css");
const FAVICON: &str = include_str!("../ui/favicon.svg");

pub(crate) mod oidc;

struct Session {
    who: Who,
    csrf: String,
    expires: Instant,
}

/// Who a session is.
enum Who {
    /// The SHA-256 of the token that logged in: the caller is read from
    /// the tokens in force on every request (a reload may revoke or rebind
    /// it).
    Token([u8; 32]),
    /// An identity a trusted reverse proxy asserted (`[login]`), as it was
    /// at login, for the session's life.
    Asserted(Caller),
}

/// The page's sessions, by the SHA-256 of their cookie value.
#[derive(Clone, Default)]
struct Sessions(Arc<Mutex<HashMap<[u8; 32], Session>>>);

impl Sessions {
    fn with<T>(&self, f: impl FnOnce(&mut HashMap<[u8; 32], Session>) -> T) -> T {
        // A panic while holding the lock leaves the map consistent (every
        // change is one insert or remove), so a poisoned lock is used as is.
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut map)
    }
}

/// The `/ui` routes, to be merged into the service's router.
pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route("/ui/", get(index))
        .route("/ui/app.js", get(app_js))
        .route("/ui/app.css", get(app_css))
        .route("/ui/favicon.svg", get(favicon))
        .route("/ui/api/me", get(who_am_i))
        .route("/ui/login", post(login))
        .route("/ui/login/proxy", get(login_proxy))
        .route("/ui/login/oidc", get(oidc::start))
        .route("/ui/login/oidc/callback", get(oidc::callback))
        .route("/ui/logout", post(logout))
        .route("/ui/api/state", get(page_state))
        .route("/ui/api/approvals/{id}/approve", post(approve))
        .route("/ui/api/approvals/{id}/deny", post(deny))
        .route("/ui/api/pins/{id}/approve", post(approve_pin))
        .route("/ui/api/pins/{id}/reject", post(reject_pin))
        .route("/ui/api/kill", post(set_kill))
        .layer(axum::middleware::map_response(security_headers))
        .layer(Extension(Sessions::default()))
        .layer(Extension(oidc::Flows::default()))
}

async fn security_headers(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut response = (StatusCode::OK, body).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

async fn index() -> Response {
    asset("text/html; charset=utf-8", INDEX_HTML)
}

/// The page's script with the one table of hidden characters written into
/// its `HIDDEN` expression.
fn app_js_text() -> &'static str {
    static TEXT: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        APP_JS.replacen(
            "/*toolgate:hidden*/",
            &toolgate::hidden::javascript_class(),
            1,
        )
    });
    &TEXT
}

async fn app_js() -> Response {
    asset("text/javascript; charset=utf-8", app_js_text())
}

async fn app_css() -> Response {
    asset("text/css; charset=utf-8", APP_CSS)
}

async fn favicon() -> Response {
    asset("image/svg+xml", FAVICON)
}

fn csrf_rejected(why: &str) -> ApiError {
    ApiError::new(StatusCode::FORBIDDEN, "csrf_rejected", why.to_owned())
}

/// Refuses a cross-site request: an `Origin` other than this host's, or a
/// `Sec-Fetch-Site` other than `same-origin` or `none`.
fn same_origin(headers: &HeaderMap) -> Result<(), ApiError> {
    if let Some(site) = headers.get("sec-fetch-site") {
        let site = site.to_str().unwrap_or("");
        if site != "same-origin" && site != "none" {
            return Err(csrf_rejected(
                "the request comes from another site (Sec-Fetch-Site)",
            ));
        }
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let host = headers
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .unwrap_or("");
        let matches = !host.is_empty()
            && (origin.strip_prefix("http://") == Some(host)
                || origin.strip_prefix("https://") == Some(host));
        if !matches {
            return Err(csrf_rejected(
                "the request's Origin is not this server's origin",
            ));
        }
    }
    Ok(())
}

/// Counts and audits (as `forbidden`, reason `csrf`, within the refusals'
/// rate cap) a write refused by the CSRF checks; returns the refusal.
async fn audited_csrf(
    state: &AppState,
    refusal: ApiError,
    actor: Option<String>,
    parts: &Parts,
) -> ApiError {
    state.inner.metrics.refusal(StatusCode::FORBIDDEN);
    let path = parts.uri.path();
    let path: String = path.chars().take(200).collect();
    let mut entry = AuditEntry::new(state.now(), AuditVerdict::Forbidden)
        .reason("csrf")
        .note(format!("{} {path}", parts.method));
    if let Some(actor) = actor {
        entry = entry.actor(actor);
    }
    audit_refusal(state, entry).await;
    refusal
}

fn session_key(cookie_value: &str) -> [u8; 32] {
    Sha256::digest(cookie_value.as_bytes()).into()
}

/// The session cookie's value, if the request has one.
fn cookie(headers: &HeaderMap) -> Option<&str> {
    named_cookie(headers, COOKIE)
}

/// The value of the cookie `name`, if the request has one.
fn named_cookie<'h>(headers: &'h HeaderMap, name: &str) -> Option<&'h str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, value)| value)
}

fn random_hex() -> Result<String, ApiError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|_| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "store_unavailable",
            "no randomness for a session",
        )
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn equal_in_constant_time(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}

/// The caller and CSRF token of the request's session, if it is live and
/// its token is still one of the service's with a role that may use the
/// page (else the session ends).
fn live_session(
    state: &AppState,
    sessions: &Sessions,
    headers: &HeaderMap,
) -> Option<(Caller, String)> {
    let key = session_key(cookie(headers)?);
    let now = Instant::now();
    let server = state.server();
    sessions.with(|map| {
        let live = map
            .get(&key)
            .filter(|s| s.expires > now)
            .and_then(|s| {
                let caller = match &s.who {
                    Who::Token(t) => caller_for(server.tokens(), t)?,
                    Who::Asserted(c) => c.clone(),
                };
                Some((caller, s.csrf.clone()))
            })
            .filter(|(c, _)| c.role != ServerRole::Agent);
        if live.is_none() {
            map.remove(&key);
        }
        live
    })
}

/// A request with a live session. For every method but `GET` the origin
/// and the CSRF token are checked too.
struct PageUser {
    caller: Caller,
    csrf: String,
}

impl FromRequestParts<AppState> for PageUser {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, ApiError> {
        let Extension(sessions) = Extension::<Sessions>::from_request_parts(parts, &())
            .await
            .map_err(|_| ApiError::unauthorized())?;
        let writes = parts.method != Method::GET && parts.method != Method::HEAD;
        if writes {
            if let Err(e) = same_origin(&parts.headers) {
                let actor = live_session(state, &sessions, &parts.headers).map(|(c, _)| c.actor);
                return Err(audited_csrf(state, e, actor, parts).await);
            }
        }
        let not_logged_in = || {
            ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                "log in first: no session, or it has expired",
            )
        };
        let (caller, csrf) =
            live_session(state, &sessions, &parts.headers).ok_or_else(not_logged_in)?;
        if writes {
            let refusal = match parts.headers.get(HeaderName::from_static(CSRF_HEADER)) {
                None => Some(csrf_rejected("the X-CSRF-Token header is missing")),
                Some(v) if !equal_in_constant_time(v.as_bytes(), csrf.as_bytes()) => Some(
                    csrf_rejected("the X-CSRF-Token header does not match the session"),
                ),
                Some(_) => None,
            };
            if let Some(e) = refusal {
                return Err(audited_csrf(state, e, Some(caller.actor), parts).await);
            }
        }
        toolgate_edge::authenticated(&parts.extensions);
        Ok(Self { caller, csrf })
    }
}

fn string(s: impl Into<String>) -> Value<'static> {
    Value::String(s.into().into())
}

fn me_object(caller: &Caller, csrf: &str) -> Object<'static> {
    let mut o = Object::new();
    o.insert("actor", string(caller.actor.clone()));
    o.insert("role", string(caller.role.as_str()));
    o.insert("csrf", string(csrf));
    o
}

/// Checks what the headers tell first (a cross-site login is refused
/// before its body is read), then reads the body as an anonymous one:
/// small, and soon ([`crate::extract::ANONYMOUS_BODY_TIMEOUT`]).
async fn login(
    State(state): State<AppState>,
    Extension(sessions): Extension<Sessions>,
    req: axum::extract::Request,
) -> Result<Response, ApiError> {
    let headers = req.headers().clone();
    if let Err(refusal) = same_origin(&headers) {
        state.inner.metrics.refusal(StatusCode::FORBIDDEN);
        let entry = AuditEntry::new(state.now(), AuditVerdict::Forbidden)
            .reason("csrf")
            .note("POST /ui/login");
        audit_refusal(&state, entry).await;
        return Err(refusal);
    }
    let value = crate::extract::read_anonymous(req).await?;
    let o = wire::object(&value)?;
    wire::only(o, &["token"])?;
    let token = wire::string_member(o, "token", true)?.unwrap_or_default();
    // The token as given: a token is compared byte for byte, never trimmed.
    let digest = token_digest(token.as_bytes());
    let Some(caller) = caller_for(state.server().tokens(), &digest) else {
        state.inner.metrics.refusal(StatusCode::UNAUTHORIZED);
        let entry = AuditEntry::new(state.now(), AuditVerdict::Unauthorized)
            .reason("unknown_token")
            .note("POST /ui/login");
        audit_refusal(&state, entry).await;
        return Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "the token is not one of the service's tokens",
        )
        .at("/token"));
    };
    if caller.role == ServerRole::Agent {
        state.inner.metrics.refusal(StatusCode::FORBIDDEN);
        let entry = AuditEntry::new(state.now(), AuditVerdict::Forbidden)
            .actor(caller.actor.clone())
            .reason(format!("role:{}", caller.role.as_str()))
            .note("POST /ui/login");
        audit_refusal(&state, entry).await;
        return Err(ApiError::forbidden(caller.role.as_str()).at("/token"));
    }
    let (cookie, csrf) = open_session(&sessions, Who::Token(digest), false)?;
    let body = canonical::to_string(&Value::Object(me_object(&caller, &csrf)));
    let mut response = json_response(StatusCode::OK, body);
    response.headers_mut().insert(header::SET_COOKIE, cookie);
    Ok(response)
}

/// A new session for `who`: its `Set-Cookie` value (`Secure` too when
/// `secure`) and its CSRF token.
fn open_session(
    sessions: &Sessions,
    who: Who,
    secure: bool,
) -> Result<(HeaderValue, String), ApiError> {
    let id = random_hex()?;
    let csrf = random_hex()?;
    let now = Instant::now();
    let kept = csrf.clone();
    sessions.with(|map| {
        map.retain(|_, s| s.expires > now);
        if map.len() >= MAX_SESSIONS {
            let oldest = map.iter().min_by_key(|(_, s)| s.expires).map(|(k, _)| *k);
            if let Some(k) = oldest {
                map.remove(&k);
            }
        }
        map.insert(
            session_key(&id),
            Session {
                who,
                csrf: kept,
                expires: now + SESSION_TTL,
            },
        );
    });
    let cookie = format!(
        "{COOKIE}={id}; Path=/ui; HttpOnly; SameSite=Strict; Max-Age={}{}",
        SESSION_TTL.as_secs(),
        if secure { "; Secure" } else { "" }
    );
    let cookie = HeaderValue::from_str(&cookie).map_err(|_| {
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "cannot set the session cookie",
        )
    })?;
    Ok((cookie, csrf))
}

/// `GET /ui/login/proxy`: a session for the identity a trusted
/// authenticating reverse proxy asserts (`[login]`): only from one of
/// `trusted_proxies` (from any other peer the headers are refused,
/// `403`, audited `forbidden` reason `untrusted_proxy`), exactly one user
/// header naming a valid user, the groups header (at most one) granting
/// `approver` or `admin`. Answers `303` to the page with the session
/// cookie (`Secure` when the proxy says `X-Forwarded-Proto: https`).
async fn login_proxy(
    State(state): State<AppState>,
    Extension(sessions): Extension<Sessions>,
    req: axum::extract::Request,
) -> Result<Response, ApiError> {
    let (parts, _) = req.into_parts();
    let Some(login) = &state.inner.login else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "the config has no [login] table",
        ));
    };
    let refuse =
        |verdict: AuditVerdict, status: StatusCode, reason: &'static str, message: &'static str| {
            let state = state.clone();
            async move {
                state.inner.metrics.refusal(status);
                let entry = AuditEntry::new(state.now(), verdict)
                    .reason(reason)
                    .note("GET /ui/login/proxy");
                audit_refusal(&state, entry).await;
                ApiError::new(
                    status,
                    if status == StatusCode::FORBIDDEN {
                        "forbidden"
                    } else {
                        "unauthorized"
                    },
                    message,
                )
            }
        };
    let peer = toolgate_edge::peer_address(&parts.extensions);
    if !peer.is_some_and(|p| login.trusted_proxies().contains(&p)) {
        return Err(refuse(
            AuditVerdict::Forbidden,
            StatusCode::FORBIDDEN,
            "untrusted_proxy",
            "this peer is not a trusted proxy: its identity headers are not believed",
        )
        .await);
    }
    let one = |name: &str| {
        let mut all = parts.headers.get_all(name).iter();
        match (all.next(), all.next()) {
            (Some(v), None) => v.to_str().ok().map(Some),
            (None, _) => Some(None),
            _ => None,
        }
    };
    let user = match one(login.user_header()) {
        Some(Some(u)) if toolgate_edge::config::check_user_name(u).is_ok() => u.to_owned(),
        _ => {
            return Err(refuse(
                AuditVerdict::Unauthorized,
                StatusCode::UNAUTHORIZED,
                "asserted_user",
                "the proxy asserted no valid user (exactly one user header)",
            )
            .await)
        }
    };
    let groups = match one(login.groups_header()) {
        Some(g) => g.unwrap_or_default(),
        None => {
            return Err(refuse(
                AuditVerdict::Unauthorized,
                StatusCode::UNAUTHORIZED,
                "asserted_groups",
                "more than one groups header",
            )
            .await)
        }
    };
    let groups: Vec<&str> = groups
        .split(',')
        .map(str::trim)
        .filter(|g| !g.is_empty())
        .collect();
    let Some(role) = login.role_of(groups.iter().copied()) else {
        return Err(refuse(
            AuditVerdict::Forbidden,
            StatusCode::FORBIDDEN,
            "role:none",
            "none of the user's groups may use the approvals page",
        )
        .await);
    };
    let caller = Caller {
        role,
        actor: format!("sso:{user}"),
        identity: user.clone(),
        users: Some(vec![user]),
    };
    let secure = parts
        .headers
        .get("x-forwarded-proto")
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"https"));
    let (cookie, _) = open_session(&sessions, Who::Asserted(caller), secure)?;
    toolgate_edge::authenticated(&parts.extensions);
    let mut response = Redirect::to("/ui/").into_response();
    *response.status_mut() = StatusCode::SEE_OTHER;
    response.headers_mut().insert(header::SET_COOKIE, cookie);
    Ok(response)
}

/// Whether the browser has a live session: `{"me": null}` or
/// `{"me": {"actor", "role", "csrf"}}` (always 200, so that the page's first
/// look is not an error).
async fn who_am_i(
    State(state): State<AppState>,
    Extension(sessions): Extension<Sessions>,
    headers: HeaderMap,
) -> Response {
    let me = live_session(&state, &sessions, &headers).map_or(Value::Null, |(caller, csrf)| {
        Value::Object(me_object(&caller, &csrf))
    });
    let mut o = Object::new();
    o.insert("me", me);
    json_response(StatusCode::OK, canonical::to_string(&Value::Object(o)))
}

async fn logout(
    Extension(sessions): Extension<Sessions>,
    headers: HeaderMap,
    _user: PageUser,
) -> Response {
    if let Some(value) = cookie(&headers) {
        let key = session_key(value);
        sessions.with(|map| map.remove(&key));
    }
    let mut response = json_response(StatusCode::OK, "{}".to_owned());
    response.headers_mut().insert(
        header::SET_COOKIE,
        HeaderValue::from_static("toolgate_ui=; Path=/ui; HttpOnly; SameSite=Strict; Max-Age=0"),
    );
    response
}

/// The page's search of the pending calls: exact user, session or tool.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PageQuery {
    user: Option<String>,
    session: Option<String>,
    tool: Option<String>,
}

async fn page_state(
    State(state): State<AppState>,
    user: PageUser,
    crate::extract::StrictQuery(q): crate::extract::StrictQuery<PageQuery>,
) -> Result<Response, ApiError> {
    let inner = Arc::clone(&state.inner);
    let waiting = crate::routes::approvals::narrowed(
        ApprovalFilter::new().state(ApprovalState::Pending),
        q.user,
        q.session,
        q.tool,
    )?;
    let body = state
        .blocking(move |s| {
            let kill = s.kill_switch()?;
            let pending_total = s.count_approvals(&waiting)?;
            let pending = s.list_approvals(&waiting.newest_first().limit(PENDING_LIMIT))?;
            // The tools as configured now (a reload may have changed them).
            let gate = inner.gate.gate();
            let mut approvals = Vec::with_capacity(pending.len());
            let now = inner.clock.now();
            for a in &pending {
                let why = toolgate_store::approval_context(s, a, gate.tool_limits(&a.tool), now)?;
                let risk = gate.registry().get(&a.tool).map(|t| t.risk().as_str());
                approvals.push(Value::Object(wire::approval_detail_object(a, risk, &why)));
            }
            // Tool definitions waiting for a human (issue 17), oldest first.
            let pins = s.list_pins(
                &PinFilter::new()
                    .state(PinState::Pending)
                    .limit(PENDING_LIMIT),
            )?;
            let pins = crate::routes::pins::with_before(s, pins)?;
            let audit = s.tail(AUDIT_LIMIT)?;
            let mut o = Object::new();
            o.insert(
                "pins",
                Value::Array(
                    pins.iter()
                        .map(|(p, b)| Value::Object(wire::pin_object(p, b.as_ref())))
                        .collect(),
                ),
            );
            o.insert("me", Value::Object(me_object(&user.caller, &user.csrf)));
            o.insert("kill", Value::Object(wire::kill_object(&kill)));
            o.insert("approvals", Value::Array(approvals));
            o.insert("pending_total", Value::Number(pending_total.into()));
            o.insert(
                "audit",
                Value::Array(
                    audit
                        .iter()
                        .rev()
                        .map(|r| Value::Object(wire::audit_summary_object(r)))
                        .collect(),
                ),
            );
            Ok(canonical::to_string(&Value::Object(o)))
        })
        .await?;
    Ok(json_response(StatusCode::OK, body))
}

fn approval_id(raw: &str) -> Result<ApprovalId, ApiError> {
    raw.parse()
        .map_err(|_| ApiError::not_found(format!("no approval `{}`", raw.escape_debug())))
}

async fn decide_approval(
    state: AppState,
    user: PageUser,
    id: &str,
    body: Option<&Value<'static>>,
    approve: bool,
) -> Result<Response, ApiError> {
    let id = approval_id(id)?;
    let note = wire::note(body)?;
    // Approvals count by the person, not by the token or session.
    let actor = user.caller.identity;
    let a = state
        .blocking(move |s| {
            if approve {
                s.approve(id, &actor, &note)
            } else {
                s.deny(id, &actor, &note)
            }
        })
        .await?;
    state.inner.decided.notify_waiters();
    Ok(json_response(StatusCode::OK, wire::approval(&a)))
}

async fn approve(
    State(state): State<AppState>,
    user: PageUser,
    Path(id): Path<String>,
    MaybeJson(body): MaybeJson,
) -> Result<Response, ApiError> {
    decide_approval(state, user, &id, body.as_ref(), true).await
}

async fn deny(
    State(state): State<AppState>,
    user: PageUser,
    Path(id): Path<String>,
    MaybeJson(body): MaybeJson,
) -> Result<Response, ApiError> {
    decide_approval(state, user, &id, body.as_ref(), false).await
}

async fn approve_pin(
    State(state): State<AppState>,
    user: PageUser,
    Path(id): Path<String>,
    MaybeJson(body): MaybeJson,
) -> Result<Response, ApiError> {
    crate::routes::pins::decide_pin(&state, user.caller.actor, &id, body.as_ref(), true).await
}

async fn reject_pin(
    State(state): State<AppState>,
    user: PageUser,
    Path(id): Path<String>,
    MaybeJson(body): MaybeJson,
) -> Result<Response, ApiError> {
    crate::routes::pins::decide_pin(&state, user.caller.actor, &id, body.as_ref(), false).await
}

async fn set_kill(
    State(state): State<AppState>,
    user: PageUser,
    StrictJson(value): StrictJson,
) -> Result<Response, ApiError> {
    if user.caller.role != ServerRole::Admin {
        return Err(ApiError::forbidden(user.caller.role.as_str()));
    }
    let req = wire::KillRequest::from_value(&value)?;
    let actor = user.caller.actor;
    let k = state
        .blocking(move |s| s.set_kill_switch(req.mode, &req.reason, &actor))
        .await?;
    Ok(json_response(StatusCode::OK, wire::kill(&k)))
}
