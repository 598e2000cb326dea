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
//! callback, a user whose groups grant no page role.

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
