//! A small authorization server and OpenID provider the tests run: its
//! metadata (RFC 8414, OpenID discovery), its keys (a JWKS), dynamic
//! client registration (RFC 7591), the authorization-code grant with PKCE
//! (S256 only), and a token endpoint that issues JWT access tokens for the
//! requested resource (RFC 8707) and, for `openid`, an id_token with the
//! nonce. It logs in one configured user without asking (the tests drive
//! a client through it, not a person). Plain HTTP/1.1 on 127.0.0.1, one
//! thread per connection, `Connection: close`.

use std::collections::HashMap;
use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;

use crate::jwt::{b64url, jwks, SigningKey};

/// A code waiting to be exchanged.
#[derive(Debug, Clone)]
struct Grant {
    client_id: String,
    redirect_uri: String,
    challenge: String,
    resource: Option<String>,
    nonce: Option<String>,
    scope: String,
}

#[derive(Default)]
struct State {
    clients: HashMap<String, Vec<String>>,
    /// Confidential clients: their secret and how they must send it
    /// (`client_secret_basic` or `client_secret_post`).
    secrets: HashMap<String, (String, String)>,
    codes: HashMap<String, Grant>,
    /// Every `/token` request's refusal, for the test to read.
    refusals: Vec<String>,
}

struct Shared {
    issuer: String,
    key: SigningKey,
    user: Mutex<String>,
    groups: Mutex<Vec<String>>,
    state: Mutex<State>,
    counter: AtomicUsize,
}

/// The running server. It stops with the test process.
#[derive(Clone)]
pub struct AuthServer {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for AuthServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AuthServer({})", self.shared.issuer)
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `%XX` and `+` decoded.
fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes.get(i) {
            Some(b'+') => out.push(b' '),
            Some(b'%') => {
                let hex = s
                    .get(i + 1..i + 3)
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            Some(b) => out.push(*b),
            None => {}
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A form or a query string's fields.
pub fn form(s: &str) -> HashMap<String, String> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (decode(k), decode(v))
        })
        .collect()
}

/// `%`-encodes everything but unreserved characters.
pub fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

struct Request {
    method: String,
    path: String,
    query: String,
    body: String,
    authorization: Option<String>,
}

fn read_request(s: &mut TcpStream) -> Option<Request> {
    let mut reader = BufReader::new(s.try_clone().ok()?);
    let mut line = String::new();
    reader.read_line(&mut line).ok()?;
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_owned();
    let target = parts.next()?.to_owned();
    let mut length = 0usize;
    let mut authorization = None;
    loop {
        let mut h = String::new();
        reader.read_line(&mut h).ok()?;
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().ok()?;
            }
            if k.eq_ignore_ascii_case("authorization") {
                authorization = Some(v.trim().to_owned());
            }
        }
    }
    let mut body = vec![0u8; length.min(1 << 20)];
    reader.read_exact(&mut body).ok()?;
    let (path, query) = match target.split_once('?') {
        Some((p, q)) => (p.to_owned(), q.to_owned()),
        None => (target, String::new()),
    };
    Some(Request {
        method,
        path,
        query,
        body: String::from_utf8_lossy(&body).into_owned(),
        authorization,
    })
}

fn respond(s: &mut TcpStream, status: &str, headers: &[(&str, String)], body: &str) {
    let mut head = format!(
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\nCache-Control: no-store\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    let _ = s.write_all(head.as_bytes());
    let _ = s.write_all(body.as_bytes());
}

fn json(s: &mut TcpStream, status: &str, body: &str) {
    respond(
        s,
        status,
        &[("Content-Type", "application/json".to_owned())],
        body,
    );
}

fn quote(s: &str) -> String {
    serde_json::Value::String(s.to_owned()).to_string()
}

impl AuthServer {
    /// Starts a server on 127.0.0.1 (`port` 0: any free port) that signs
    /// with `key` and logs in `user`.
    pub fn start(key: SigningKey, port: u16, user: &str) -> Result<Self, String> {
        let listener = TcpListener::bind(("127.0.0.1", port)).map_err(|e| e.to_string())?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let shared = Arc::new(Shared {
            issuer: format!("http://127.0.0.1:{port}"),
            key,
            user: Mutex::new(user.to_owned()),
            groups: Mutex::new(Vec::new()),
            state: Mutex::new(State::default()),
            counter: AtomicUsize::new(0),
        });
        let server = Self { shared };
        let s = server.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let s = s.clone();
                std::thread::spawn(move || s.serve(stream));
            }
        });
        Ok(server)
    }

    /// Its issuer identifier: `http://127.0.0.1:PORT`.
    pub fn issuer(&self) -> &str {
        &self.shared.issuer
    }

    /// Its JWKS URL.
    pub fn jwks_url(&self) -> String {
        format!("{}/jwks", self.shared.issuer)
    }

    /// Registers a client (as an operator would, without RFC 7591) with
    /// its redirect URIs.
    pub fn register(&self, client_id: &str, redirect_uris: &[&str]) {
        if let Ok(mut st) = self.shared.state.lock() {
            st.clients.insert(
                client_id.to_owned(),
                redirect_uris.iter().map(|u| (*u).to_owned()).collect(),
            );
        }
    }

    /// Registers a confidential client with its redirect URIs, its
    /// `secret` and the `method` it must authenticate with at the token
    /// endpoint (`client_secret_basic` or `client_secret_post`).
    pub fn register_confidential(
        &self,
        client_id: &str,
        secret: &str,
        method: &str,
        redirect_uris: &[&str],
    ) {
        self.register(client_id, redirect_uris);
        if let Ok(mut st) = self.shared.state.lock() {
            st.secrets
                .insert(client_id.to_owned(), (secret.to_owned(), method.to_owned()));
        }
    }

    /// Whether the token request authenticates its client as registered:
    /// a public client sends no secret; a confidential one its secret,
    /// exactly by its method (RFC 6749 §2.3.1: the Basic credentials are
    /// form-encoded id and secret).
    fn client_authenticated(
        &self,
        f: &HashMap<String, String>,
        authorization: Option<&str>,
    ) -> Result<(), &'static str> {
        let id = f.get("client_id").cloned().unwrap_or_default();
        let registered = self
            .shared
            .state
            .lock()
            .ok()
            .and_then(|st| st.secrets.get(&id).cloned());
        let Some((secret, method)) = registered else {
            return match (authorization, f.get("client_secret")) {
                (None, None) => Ok(()),
                _ => Err("a public client sent credentials"),
            };
        };
        match method.as_str() {
            "client_secret_basic" => {
                let want = format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(format!(
                        "{}:{}",
                        encode(&id),
                        encode(&secret)
                    ))
                );
                if f.contains_key("client_secret") {
                    return Err("client_secret_basic: the secret was in the form");
                }
                if authorization == Some(want.as_str()) {
                    Ok(())
                } else {
                    Err("client_secret_basic: wrong or missing Authorization")
                }
            }
            _ => {
                if authorization.is_some() {
                    return Err("client_secret_post: an Authorization header was sent");
                }
                if f.get("client_secret") == Some(&secret) {
                    Ok(())
                } else {
                    Err("client_secret_post: wrong or missing client_secret")
                }
            }
        }
    }

    fn refuse_client(&self, s: &mut TcpStream, why: &str) {
        if let Ok(mut st) = self.shared.state.lock() {
            st.refusals.push(why.to_owned());
        }
        json(
            s,
            "401 Unauthorized",
            &format!(
                r#"{{"error":"invalid_client","error_description":{}}}"#,
                quote(why)
            ),
        );
    }

    /// Logs in `user` from now on.
    pub fn set_user(&self, user: &str) {
        if let Ok(mut u) = self.shared.user.lock() {
            *u = user.to_owned();
        }
    }

    /// Puts `groups` into the tokens issued from now on.
    pub fn set_groups(&self, groups: &[&str]) {
        if let Ok(mut g) = self.shared.groups.lock() {
            *g = groups.iter().map(|s| (*s).to_owned()).collect();
        }
    }

    /// A token with `claims` signed with its key (an attacker's replay of
    /// a token it issued for someone else, say).
    pub fn sign(&self, claims: &str) -> String {
        self.shared.key.sign(claims)
    }

    /// What the token endpoint refused so far.
    pub fn refusals(&self) -> Vec<String> {
        self.shared
            .state
            .lock()
            .map(|s| s.refusals.clone())
            .unwrap_or_default()
    }

    fn next(&self, prefix: &str) -> String {
        let n = self.shared.counter.fetch_add(1, Ordering::SeqCst);
        format!("{prefix}-{n}-{}", b64url(&n.to_be_bytes()))
    }

    fn serve(&self, mut s: TcpStream) {
        let Some(r) = read_request(&mut s) else {
            return;
        };
        let iss = &self.shared.issuer;
        match (r.method.as_str(), r.path.as_str()) {
            (
                "GET",
                "/.well-known/oauth-authorization-server" | "/.well-known/openid-configuration",
            ) => {
                let alg = self.shared.key.alg();
                json(
                    &mut s,
                    "200 OK",
                    &format!(
                        r#"{{"issuer":"{iss}","authorization_endpoint":"{iss}/authorize","token_endpoint":"{iss}/token","registration_endpoint":"{iss}/register","jwks_uri":"{iss}/jwks","response_types_supported":["code"],"grant_types_supported":["authorization_code"],"code_challenge_methods_supported":["S256"],"token_endpoint_auth_methods_supported":["none","client_secret_basic","client_secret_post"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["{alg}"],"scopes_supported":["openid","profile","mcp"]}}"#
                    ),
                );
            }
            ("GET", "/jwks") => json(&mut s, "200 OK", &jwks(&[&self.shared.key])),
            ("POST", "/register") => self.register_client(&mut s, &r.body),
            ("GET", "/authorize") => self.authorize(&mut s, &form(&r.query)),
            ("POST", "/token") => {
                let f = form(&r.body);
                match self.client_authenticated(&f, r.authorization.as_deref()) {
                    Ok(()) => self.token(&mut s, &f),
                    Err(why) => self.refuse_client(&mut s, why),
                }
            }
            _ => respond(&mut s, "404 Not Found", &[], "not found"),
        }
    }

    fn register_client(&self, s: &mut TcpStream, body: &str) {
        let Ok(meta) = serde_json::from_str::<serde_json::Value>(body) else {
            return json(
                s,
                "400 Bad Request",
                r#"{"error":"invalid_client_metadata"}"#,
            );
        };
        let uris: Vec<String> = meta
            .get("redirect_uris")
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|u| u.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        if uris.is_empty() {
            return json(s, "400 Bad Request", r#"{"error":"invalid_redirect_uri"}"#);
        }
        let id = self.next("client");
        if let Ok(mut st) = self.shared.state.lock() {
            st.clients.insert(id.clone(), uris.clone());
        }
        let mut out = meta.as_object().cloned().unwrap_or_default();
        out.insert("client_id".into(), id.into());
        out.insert("client_id_issued_at".into(), now().into());
        out.insert("token_endpoint_auth_method".into(), "none".into());
        out.insert(
            "grant_types".into(),
            serde_json::json!(["authorization_code"]),
        );
        out.insert("response_types".into(), serde_json::json!(["code"]));
        json(
            s,
            "201 Created",
            &serde_json::Value::Object(out).to_string(),
        );
    }

    fn authorize(&self, s: &mut TcpStream, q: &HashMap<String, String>) {
        let get = |k: &str| q.get(k).cloned().unwrap_or_default();
        let (client_id, redirect_uri) = (get("client_id"), get("redirect_uri"));
        let known = self.shared.state.lock().is_ok_and(|st| {
            st.clients
                .get(&client_id)
                .is_some_and(|uris| uris.contains(&redirect_uri))
        });
        if !known {
            return respond(s, "400 Bad Request", &[], "unknown client or redirect_uri");
        }
        if get("response_type") != "code"
            || get("code_challenge_method") != "S256"
            || get("code_challenge").len() < 43
        {
            return respond(s, "400 Bad Request", &[], "code with PKCE S256 only");
        }
        let code = self.next("code");
        let grant = Grant {
            client_id,
            redirect_uri: redirect_uri.clone(),
            challenge: get("code_challenge"),
            resource: q.get("resource").cloned(),
            nonce: q.get("nonce").cloned(),
            scope: get("scope"),
        };
        if let Ok(mut st) = self.shared.state.lock() {
            st.codes.insert(code.clone(), grant);
        }
        let sep = if redirect_uri.contains('?') { '&' } else { '?' };
        let location = format!(
            "{redirect_uri}{sep}code={}&state={}",
            encode(&code),
            encode(&get("state"))
        );
        respond(s, "302 Found", &[("Location", location)], "");
    }

    fn refuse(&self, s: &mut TcpStream, why: &str) {
        if let Ok(mut st) = self.shared.state.lock() {
            st.refusals.push(why.to_owned());
        }
        json(
            s,
            "400 Bad Request",
            &format!(
                r#"{{"error":"invalid_grant","error_description":{}}}"#,
                quote(why)
            ),
        );
    }

    fn token(&self, s: &mut TcpStream, f: &HashMap<String, String>) {
        let get = |k: &str| f.get(k).cloned().unwrap_or_default();
        if get("grant_type") != "authorization_code" {
            return self.refuse(s, "unsupported grant_type");
        }
        // A code is good once.
        let grant = self
            .shared
            .state
            .lock()
            .ok()
            .and_then(|mut st| st.codes.remove(&get("code")));
        let Some(g) = grant else {
            return self.refuse(s, "unknown or used code");
        };
        if g.client_id != get("client_id") || g.redirect_uri != get("redirect_uri") {
            return self.refuse(s, "client_id or redirect_uri differ");
        }
        let verifier = get("code_verifier");
        let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
        if URL_SAFE_NO_PAD.encode(digest.as_ref()) != g.challenge {
            return self.refuse(s, "PKCE verifier does not match");
        }
        let resource = f.get("resource").cloned().or(g.resource.clone());
        if resource != g.resource {
            return self.refuse(s, "resource differs from the authorization request");
        }
        let user = self
            .shared
            .user
            .lock()
            .map(|u| u.clone())
            .unwrap_or_default();
        let groups = self
            .shared
            .groups
            .lock()
            .map(|g| g.clone())
            .unwrap_or_default();
        let groups = serde_json::to_string(&groups).unwrap_or_else(|_| "[]".into());
        let t = now();
        let iss = &self.shared.issuer;
        let aud = resource.unwrap_or_else(|| g.client_id.clone());
        let access = self.shared.key.sign(&format!(
            r#"{{"iss":"{iss}","sub":{},"aud":{},"iat":{t},"exp":{},"groups":{groups},"client_id":{}}}"#,
            quote(&user),
            quote(&aud),
            t + 300,
            quote(&g.client_id)
        ));
        let mut out = format!(
            r#"{{"access_token":"{access}","token_type":"Bearer","expires_in":300,"scope":{}"#,
            quote(&g.scope)
        );
        if g.scope.split(' ').any(|x| x == "openid") {
            let nonce = g
                .nonce
                .as_deref()
                .map(|n| format!(r#","nonce":{}"#, quote(n)))
                .unwrap_or_default();
            let id = self.shared.key.sign(&format!(
                r#"{{"iss":"{iss}","sub":{},"aud":{},"iat":{t},"exp":{},"groups":{groups}{nonce}}}"#,
                quote(&user),
                quote(&g.client_id),
                t + 300
            ));
            out.push_str(&format!(r#","id_token":"{id}""#));
        }
        out.push('}');
        json(s, "200 OK", &out);
    }
}
