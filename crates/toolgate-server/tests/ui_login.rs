#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! Approvers log in to the page with the identity a trusted reverse proxy
//! asserts (`[login]`), through the real listener (the peer address is the
//! edge's): headers from any other address are refused, the asserted user
//! and groups are checked, and the session acts as that user.

mod shop_copy;

use std::net::SocketAddr;

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use toolgate_server::AppState;

/// The service with `[login]` trusting the proxy at 127.0.0.2, served on
/// a real listener; its address.
async fn serve() -> (tempfile::TempDir, SocketAddr) {
    let dir = tempfile::tempdir().unwrap();
    let login = "\n[login]\nuser_header = \"X-Forwarded-User\"\ngroups_header = \"X-Forwarded-Groups\"\n\
                 trusted_proxies = [\"127.0.0.2\"]\n[login.roles]\napprover = [\"payments\"]\nadmin = [\"ops\"]\n";
    let config = shop_copy::config_in(dir.path(), "", "", login);
    let state = AppState::from_config(&config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(toolgate_server::serve(
        listener,
        state,
        std::future::pending(),
    ));
    (dir, addr)
}

/// One request from `from` (a loopback address) with `headers`: the
/// status, the head (lower-case), the body.
async fn get(
    addr: SocketAddr,
    from: &str,
    path: &str,
    headers: &[(&str, &str)],
) -> (u16, String, String) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
    let mut s = socket.connect(addr).await.unwrap();
    let mut req = format!("GET {path} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n");
    for (n, v) in headers {
        req.push_str(&format!("{n}: {v}\r\n"));
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
    (status, head.to_ascii_lowercase(), body.to_owned())
}

fn cookie(head: &str) -> String {
    let line = head.lines().find(|l| l.starts_with("set-cookie:")).unwrap();
    line.trim_start_matches("set-cookie:")
        .trim()
        .split(';')
        .next()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn the_asserted_identity_logs_in_only_from_the_trusted_proxy() {
    let (_dir, addr) = serve().await;
    let alice = [
        ("x-forwarded-user", "alice"),
        ("x-forwarded-groups", "staff, payments"),
    ];

    // From the proxy: a session for alice, an approver.
    let (status, head, _) = get(addr, "127.0.0.2", "/ui/login/proxy", &alice).await;
    assert_eq!(status, 303, "{head}");
    assert!(head.contains("location: /ui/"), "{head}");
    assert!(
        head.contains("httponly") && head.contains("samesite=strict"),
        "{head}"
    );
    assert!(!head.contains("secure"), "plain http: {head}");
    let c = cookie(&head);
    let (status, _, body) = get(addr, "127.0.0.1", "/ui/api/me", &[("cookie", &c)]).await;
    assert_eq!(status, 200);
    assert!(
        body.contains(r#""actor":"sso:alice""#) && body.contains(r#""role":"approver""#),
        "{body}"
    );

    // The same headers from another peer (anyone who reaches the port
    // directly) are not believed.
    let (status, _, body) = get(addr, "127.0.0.1", "/ui/login/proxy", &alice).await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("not a trusted proxy"), "{body}");

    // From the proxy, but: no user, two users, a blank user, no group
    // that may use the page, no groups at all, two groups headers.
    for (headers, status) in [
        (vec![("x-forwarded-groups", "payments")], 401),
        (
            vec![
                ("x-forwarded-user", "alice"),
                ("x-forwarded-user", "bob"),
                ("x-forwarded-groups", "payments"),
            ],
            401,
        ),
        (
            vec![
                ("x-forwarded-user", " "),
                ("x-forwarded-groups", "payments"),
            ],
            401,
        ),
        (
            vec![
                ("x-forwarded-user", "alice"),
                ("x-forwarded-groups", "staff"),
            ],
            403,
        ),
        (vec![("x-forwarded-user", "alice")], 403),
        (
            vec![
                ("x-forwarded-user", "alice"),
                ("x-forwarded-groups", "payments"),
                ("x-forwarded-groups", "ops"),
            ],
            401,
        ),
    ] {
        let (got, head, body) = get(addr, "127.0.0.2", "/ui/login/proxy", &headers).await;
        assert_eq!(got, status, "{headers:?}: {body}");
        assert!(!head.contains("set-cookie"), "{headers:?}");
    }

    // The highest role wins; https at the proxy makes the cookie Secure.
    let ops = [
        ("x-forwarded-user", "olga"),
        ("x-forwarded-groups", "payments,ops"),
        ("x-forwarded-proto", "https"),
    ];
    let (status, head, _) = get(addr, "127.0.0.2", "/ui/login/proxy", &ops).await;
    assert_eq!(status, 303);
    assert!(head.contains("; secure"), "{head}");
    let (_, _, body) = get(
        addr,
        "127.0.0.1",
        "/ui/api/me",
        &[("cookie", &cookie(&head))],
    )
    .await;
    assert!(
        body.contains(r#""actor":"sso:olga""#) && body.contains(r#""role":"admin""#),
        "{body}"
    );
}

#[tokio::test]
async fn without_a_login_table_the_route_is_not_found() {
    let dir = tempfile::tempdir().unwrap();
    let config = shop_copy::config_in(dir.path(), "", "", "");
    let state = AppState::from_config(&config).unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(toolgate_server::serve(
        listener,
        state,
        std::future::pending(),
    ));
    let (status, _, _) = get(
        addr,
        "127.0.0.1",
        "/ui/login/proxy",
        &[("x-forwarded-user", "alice")],
    )
    .await;
    assert_eq!(status, 404);
}
