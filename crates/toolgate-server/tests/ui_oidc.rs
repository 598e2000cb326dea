#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! Approvers log in to the page with OpenID Connect (`[oidc]`) against a
//! small identity provider the test runs (`toolgate_testkit::oauth`):
//! the browser's round trip by hand (redirects followed as a browser
//! would), then the attacker's: a callback from another browser, a replayed
//! callback, a user whose groups grant no page role. Then the same login
//! in headless Chromium (`tests/browser/oidc_login.mjs`, playwright-core
//! and Debian's Chromium, as `ui_browser.rs` runs them; missing ones skip
//! unless `TOOLGATE_REQUIRE_EXTERNAL=1`).

mod shop_copy;

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use toolgate_server::AppState;
use toolgate_testkit::jwt::SigningKey;
use toolgate_testkit::oauth::AuthServer;

/// One GET of `url` (`http://127.0.0.1:PORT/…`) with a cookie: status,
/// head (lower-case names kept as sent), body.
async fn get(url: &str, cookie: Option<&str>) -> (u16, String, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut s = tokio::net::TcpStream::connect(host).await.unwrap();
    let mut req = format!("GET {path} HTTP/1.1\r\nhost: {host}\r\nconnection: close\r\n");
    if let Some(c) = cookie {
        req.push_str(&format!("cookie: {c}\r\n"));
    }
    req.push_str("\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).await.unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, head.to_owned(), body.to_owned())
}

fn header<'h>(head: &'h str, name: &str) -> Vec<&'h str> {
    head.lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.trim())
        .collect()
}

fn cookie_pair(set_cookie: &str) -> String {
    set_cookie.split(';').next().unwrap().to_owned()
}

struct Page {
    base: String,
    _dir: tempfile::TempDir,
}

async fn page(idp: &AuthServer) -> Page {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let redirect = format!("http://{addr}/ui/login/oidc/callback");
    idp.register("toolgate-page", &[&redirect]);
    let iss = idp.issuer();
    let extra = format!(
        "\n[jwt]\nissuer = \"{iss}\"\naudience = [\"https://toolgate.test\"]\njwks_url = \"{}\"\n\
         roles_claim = \"groups\"\n[jwt.roles]\napprover = [\"payments\"]\nadmin = [\"ops\"]\n\
         [oidc]\nclient_id = \"toolgate-page\"\nredirect_uri = \"{redirect}\"\n\
         authorization_endpoint = \"{iss}/authorize\"\ntoken_endpoint = \"{iss}/token\"\n",
        idp.jwks_url()
    );
    let dir = tempfile::tempdir().unwrap();
    let config = shop_copy::config_in(dir.path(), "", "", &extra);
    let state = AppState::from_config(&config).unwrap();
    state.start_jwt(&config).await.unwrap();
    tokio::spawn(toolgate_server::serve(
        listener,
        state,
        std::future::pending(),
    ));
    Page {
        base: format!("http://{addr}"),
        _dir: dir,
    }
}

/// The page of a confidential client (`token_endpoint_auth` `method`,
/// its secret `configured`) whose `[oidc]` names no endpoints: they come
/// from the provider's discovery document. The provider knows the client
/// with the secret `registered`.
async fn confidential_page(
    idp: &AuthServer,
    method: &str,
    registered: &str,
    configured: &str,
) -> Page {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let redirect = format!("http://{addr}/ui/login/oidc/callback");
    idp.register_confidential("toolgate-private", registered, method, &[&redirect]);
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("oidc-client.secret");
    std::fs::write(&secret, format!("{configured}\n")).unwrap();
    let extra = format!(
        "\n[jwt]\nissuer = \"{}\"\naudience = [\"https://toolgate.test\"]\njwks_url = \"{}\"\n\
         roles_claim = \"groups\"\n[jwt.roles]\napprover = [\"payments\"]\n\
         [oidc]\nclient_id = \"toolgate-private\"\nredirect_uri = \"{redirect}\"\n\
         client_secret_file = \"{}\"\ntoken_endpoint_auth = \"{method}\"\n",
        idp.issuer(),
        idp.jwks_url(),
        secret.display()
    );
    let config = shop_copy::config_in(dir.path(), "", "", &extra);
    let state = AppState::from_config(&config).unwrap();
    state.start_jwt(&config).await.unwrap();
    tokio::spawn(toolgate_server::serve(
        listener,
        state,
        std::future::pending(),
    ));
    Page {
        base: format!("http://{addr}"),
        _dir: dir,
    }
}

/// Starts a login: the flow cookie and the provider's redirect back (the
/// callback URL with its code and state).
async fn to_provider_and_back(p: &Page) -> (String, String) {
    let (status, head, _) = get(&format!("{}/ui/login/oidc", p.base), None).await;
    assert_eq!(status, 303, "{head}");
    let set = header(&head, "set-cookie")[0].to_owned();
    assert!(
        set.starts_with("toolgate_oidc=")
            && set.contains("HttpOnly")
            && set.contains("SameSite=Lax"),
        "{set}"
    );
    let to = header(&head, "location")[0].to_owned();
    assert!(
        to.contains("code_challenge_method=S256")
            && to.contains("nonce=")
            && to.contains("scope=openid"),
        "{to}"
    );
    let (status, head, _) = get(&to, None).await;
    assert_eq!(status, 302, "{head}");
    (cookie_pair(&set), header(&head, "location")[0].to_owned())
}

#[tokio::test]
async fn an_approver_logs_in_with_the_provider_and_forgeries_are_refused() {
    let idp = AuthServer::start(SigningKey::es256("op-1").unwrap(), 0, "alice").unwrap();
    idp.set_groups(&["staff", "payments"]);
    let p = page(&idp).await;

    let (flow, back) = to_provider_and_back(&p).await;
    // The callback from a browser that did not start this login (no flow
    // cookie, or another one's) is refused, and does not use the flow up.
    let (status, _, body) = get(&back, None).await;
    assert_eq!(status, 403, "{body}");
    let (other, _) = to_provider_and_back(&p).await;
    let (status, _, body) = get(&back, Some(&other)).await;
    assert_eq!(status, 403, "{body}");

    // The browser that started it: a session.
    let (status, head, body) = get(&back, Some(&flow)).await;
    assert_eq!(status, 303, "{head}\n{body}");
    let sets = header(&head, "set-cookie");
    let session = sets.iter().find(|c| c.starts_with("toolgate_ui=")).unwrap();
    assert!(
        session.contains("HttpOnly") && session.contains("SameSite=Strict"),
        "{session}"
    );
    let (status, _, me) = get(
        &format!("{}/ui/api/me", p.base),
        Some(&cookie_pair(session)),
    )
    .await;
    assert_eq!(status, 200);
    assert!(
        me.contains(r#""actor":"oidc:alice""#) && me.contains(r#""role":"approver""#),
        "{me}"
    );

    // The same callback again (a replayed code and state): refused.
    let (status, _, body) = get(&back, Some(&flow)).await;
    assert_eq!(status, 403, "{body}");

    // A user whose groups grant no page role.
    idp.set_user("mallory");
    idp.set_groups(&["staff"]);
    let (flow, back) = to_provider_and_back(&p).await;
    let (status, head, body) = get(&back, Some(&flow)).await;
    assert_eq!(status, 401, "{body}");
    assert!(
        header(&head, "set-cookie")
            .iter()
            .all(|c| !c.starts_with("toolgate_ui=")),
        "{head}"
    );
}

/// With only the issuer configured, the endpoints come from its discovery
/// document; a confidential client sends its secret by the method it was
/// registered with (`client_secret_basic`, `client_secret_post`). From the
/// attacker's side: a wrong secret gets no session, and a discovery
/// document that names another issuer stops the start.
#[tokio::test]
async fn a_confidential_client_logs_in_through_the_discovery_document() {
    const SECRET: &str = "s3cret:with/odd+chars&more";
    let idp = AuthServer::start(SigningKey::es256("op-2").unwrap(), 0, "alice").unwrap();
    idp.set_groups(&["payments"]);
    for method in ["client_secret_basic", "client_secret_post"] {
        let p = confidential_page(&idp, method, SECRET, SECRET).await;
        let (flow, back) = to_provider_and_back(&p).await;
        assert!(
            back.starts_with(&p.base),
            "the provider's discovery document named its endpoints: {back}"
        );
        let (status, head, body) = get(&back, Some(&flow)).await;
        assert_eq!(
            status,
            303,
            "{method}: {head}\n{body}\n{:?}",
            idp.refusals()
        );
        assert!(
            header(&head, "set-cookie")
                .iter()
                .any(|c| c.starts_with("toolgate_ui=")),
            "{head}"
        );
    }
    assert!(idp.refusals().is_empty(), "{:?}", idp.refusals());

    // A page configured with another secret: the provider refuses the
    // code exchange, and the page opens no session.
    let p = confidential_page(&idp, "client_secret_basic", SECRET, "a-guessed-secret").await;
    let (flow, back) = to_provider_and_back(&p).await;
    let (status, head, body) = get(&back, Some(&flow)).await;
    assert_eq!(status, 401, "{body}");
    assert!(
        header(&head, "set-cookie")
            .iter()
            .all(|c| !c.starts_with("toolgate_ui=")),
        "{head}"
    );
    assert_eq!(
        idp.refusals(),
        ["client_secret_basic: wrong or missing Authorization"]
    );

    // A discovery document for another issuer (here the configured issuer
    // differs by a final slash) is refused when the service starts.
    let dir = tempfile::tempdir().unwrap();
    let extra = format!(
        "\n[jwt]\nissuer = \"{}/\"\naudience = [\"https://toolgate.test\"]\njwks_url = \"{}\"\n\
         [oidc]\nclient_id = \"toolgate-page\"\nredirect_uri = \"http://127.0.0.1:9/ui/login/oidc/callback\"\n",
        idp.issuer(),
        idp.jwks_url()
    );
    let config = shop_copy::config_in(dir.path(), "", "", &extra);
    let state = AppState::from_config(&config).unwrap();
    let err = state.start_jwt(&config).await.unwrap_err().to_string();
    assert!(
        err.contains("`issuer`") && err.contains("openid-configuration"),
        "{err}"
    );
}

/// Why the browser cannot run here, if it cannot.
fn missing_browser() -> Option<String> {
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let chromium = std::env::var_os("TOOLGATE_CHROMIUM")
        .map_or_else(|| std::path::PathBuf::from("/usr/bin/chromium"), Into::into);
    let module = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/browser/node_modules/playwright-core");
    if !node {
        Some("node is not installed".into())
    } else if !chromium.exists() {
        Some(format!("no Chromium at {}", chromium.display()))
    } else if !module.exists() {
        Some("playwright-core is missing (npm ci in tests/browser)".into())
    } else {
        None
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_approver_logs_in_with_the_provider_in_a_browser() {
    if let Some(why) = missing_browser() {
        assert!(
            std::env::var_os("TOOLGATE_REQUIRE_EXTERNAL").is_none_or(|v| v != "1"),
            "TOOLGATE_REQUIRE_EXTERNAL=1: {why}"
        );
        println!("SKIPPED ui_oidc browser: {why}");
        return;
    }
    let idp = AuthServer::start(SigningKey::rs256("op-2").unwrap(), 0, "alice").unwrap();
    idp.set_groups(&["ops"]);
    let p = page(&idp).await;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/browser");
    let mut cmd = std::process::Command::new("node");
    cmd.arg(dir.join("oidc_login.mjs"))
        .current_dir(&dir)
        .env("TOOLGATE_URL", &p.base);
    if let Some(c) = std::env::var_os("TOOLGATE_CHROMIUM") {
        cmd.env("CHROMIUM", c);
    }
    // The service runs on this runtime's other thread meanwhile.
    let out = tokio::task::spawn_blocking(move || cmd.output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let result = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RESULT "))
        .unwrap();
    assert!(
        result.contains(r#""actor":"oidc:alice""#) && result.contains(r#""role":"admin""#),
        "{result}"
    );
    assert!(
        result.contains(r#"{"name":"toolgate_ui","httpOnly":true,"sameSite":"Strict"}"#),
        "{result}"
    );
}
