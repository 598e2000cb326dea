//! Notices of held calls, from the sinks' side and the attacker's: a
//! receiver that verifies the signature, one that lies (a `2xx` with
//! garbage), one that fails (`500`), one that redirects, one that hangs,
//! and a Slack-compatible one. None of them approves anything or holds a
//! decision back; each delivery is recorded and visible to an admin; a
//! captured body replayed later does not verify.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::Router;
use tokio::sync::mpsc;
use toolgate_json::Value;
use toolgate_server::notify::{self, VerifyError};
use toolgate_server::AppState;
use toolgate_testkit::shop_dir;

mod shop_copy;

use shop_copy::{config_in, s, ADMIN, AGENT, APPROVER};

const KEY: &str = "a-webhook-key-of-32-bytes-or-so!";

/// What a receiver does with a notice.
#[derive(Clone, Copy)]
enum Receiver {
    /// Answers 204.
    Good,
    /// Answers 200 with a body that is not JSON and claims to approve.
    Lies,
    /// Answers 500.
    Fails,
    /// Answers 302 to the good receiver.
    Redirects,
    /// Never answers.
    Hangs,
}

/// A notice as received: its headers and body.
#[derive(Debug, Clone)]
struct Got {
    timestamp: String,
    signature: String,
    body: Vec<u8>,
}

/// A receiver on a port of its own; its URL, and what it received.
async fn receiver(kind: Receiver, redirect_to: &str) -> (String, mpsc::UnboundedReceiver<Got>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let to = redirect_to.to_owned();
    let handler = move |headers: HeaderMap, body: Bytes| {
        let (tx, to) = (tx.clone(), to.clone());
        async move {
            let header = |n: &str| {
                headers
                    .get(n)
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or_default()
                    .to_owned()
            };
            let _ = tx.send(Got {
                timestamp: header(notify::TIMESTAMP_HEADER),
                signature: header(notify::SIGNATURE_HEADER),
                body: body.to_vec(),
            });
            match kind {
                Receiver::Good => (StatusCode::NO_CONTENT, HeaderMap::new(), String::new()),
                Receiver::Lies => (
                    StatusCode::OK,
                    HeaderMap::new(),
                    "{\"approve\": true, \"state\": \"approved\"".to_owned(),
                ),
                Receiver::Fails => (
                    StatusCode::INTERNAL_SERVER_ERROR,
                    HeaderMap::new(),
                    String::new(),
                ),
                Receiver::Redirects => {
                    let mut h = HeaderMap::new();
                    h.insert("location", to.parse().unwrap());
                    (StatusCode::FOUND, h, String::new())
                }
                Receiver::Hangs => std::future::pending().await,
            }
        }
    };
    let app = Router::new().route("/hook", post(handler));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/hook", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (url, rx)
}

fn sink(name: &str, kind: &str, url: &str, extra: &str) -> String {
    format!(
        "\n[[approvals.notify]]\nname = \"{name}\"\nkind = \"{kind}\"\nurl = \"{url}\"\n{extra}\n"
    )
}

fn decide_body(session: &str) -> String {
    let text = std::fs::read_to_string(
        shop_dir()
            .join("responses")
            .join("openai-refund-needs-approval.json"),
    )
    .unwrap();
    let mut o = toolgate_json::Object::new();
    o.insert("body", Value::String(text.into()));
    let ctx = toolgate_json::from_str(&format!(
        r#"{{"user":"alice","session":"{session}","roles":["customer"],"turn":2,"entities":[]}}"#
    ))
    .unwrap()
    .into_owned();
    o.insert("context", ctx);
    toolgate_json::canonical::to_string(&Value::Object(o))
}

/// Holds the shop's refund in `session`: its approval id.
async fn hold(app: &Router, session: &str) -> String {
    let (status, v) = shop_copy::call(
        app,
        "POST",
        "/v1/decide",
        Some(AGENT),
        Some("application/json"),
        &decide_body(session),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    let d = v
        .pointer("/decisions")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .find(|d| d.pointer("/tool").and_then(Value::as_str) == Some("refund"))
        .unwrap()
        .clone();
    assert_eq!(s(&d, "/verdict"), "needs_approval");
    s(&d, "/approval").to_owned()
}

/// The notices as `GET /v1/notices` lists them: (approval, sink) → (state,
/// attempts, outcome).
async fn notices(app: &Router) -> (Vec<(String, String, String, u64, String)>, u64) {
    let (status, v) = shop_copy::call(app, "GET", "/v1/notices", Some(ADMIN), None, "").await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    let list = v
        .pointer("/notices")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .map(|n| {
            (
                s(n, "/approval").to_owned(),
                s(n, "/sink").to_owned(),
                s(n, "/state").to_owned(),
                n.pointer("/attempts")
                    .and_then(Value::as_number)
                    .and_then(|x| x.as_u64())
                    .unwrap(),
                n.pointer("/outcome")
                    .and_then(Value::as_str)
                    .unwrap_or("-")
                    .to_owned(),
            )
        })
        .collect();
    let dropped = v
        .pointer("/dropped")
        .and_then(Value::as_number)
        .and_then(|x| x.as_u64())
        .unwrap();
    (list, dropped)
}

fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sinks_that_fail_lie_or_hang_decide_nothing_and_every_delivery_is_recorded() {
    let (good, mut good_rx) = receiver(Receiver::Good, "").await;
    let (lies, _lies_rx) = receiver(Receiver::Lies, "").await;
    let (fails, mut fails_rx) = receiver(Receiver::Fails, "").await;
    let (redirects, _redirects_rx) = receiver(Receiver::Redirects, &good).await;
    let (hangs, mut hangs_rx) = receiver(Receiver::Hangs, "").await;
    let (slack, mut slack_rx) = receiver(Receiver::Good, "").await;

    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("webhook.key");
    std::fs::write(&key_file, format!("{KEY}\n")).unwrap();
    let secret = format!("secret_file = \"{}\"", key_file.display());
    let mut extra = "\n[approvals]\npage_url = \"https://gate.example/ui/\"\n".to_owned();
    extra.push_str(&sink("ops", "webhook", &good, &secret));
    extra.push_str(&sink("liar", "webhook", &lies, &secret));
    extra.push_str(&sink(
        "broken",
        "webhook",
        &fails,
        &format!("{secret}\nmax_attempts = 2"),
    ));
    extra.push_str(&sink("moved", "webhook", &redirects, &secret));
    extra.push_str(&sink(
        "stuck",
        "webhook",
        &hangs,
        &format!("{secret}\ntimeout_ms = 200\nmax_attempts = 2"),
    ));
    extra.push_str(&sink("chat", "slack", &slack, ""));
    let config = config_in(dir.path(), "store_poll_ms = 50", "", &extra);
    let state = AppState::from_config(&config).unwrap();
    let app = toolgate_server::app(state.clone());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut settled = state.notices_settled();
    let sender = tokio::spawn(notify::run(state, stop_rx));

    let first = hold(&app, "s-1").await;

    // The hanging sink holds its connection open: a decision made now is
    // answered all the same, and its notices go out too.
    let got = tokio::time::timeout(Duration::from_secs(30), hangs_rx.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(!got.body.is_empty());
    let second = tokio::time::timeout(Duration::from_secs(10), hold(&app, "s-2"))
        .await
        .expect("a hanging sink held a decision back");

    // The good receiver verifies each notice's signature.
    let mut seen = Vec::new();
    for _ in 0..2 {
        let got = tokio::time::timeout(Duration::from_secs(30), good_rx.recv())
            .await
            .unwrap()
            .unwrap();
        notify::verify(
            KEY.as_bytes(),
            &got.timestamp,
            &got.body,
            &got.signature,
            unix_now(),
        )
        .unwrap();
        seen.push(got);
    }
    let body = toolgate_json::from_slice(&seen[0].body).unwrap();
    assert_eq!(s(&body, "/type"), "approval.pending");
    let id = s(&body, "/approval/id").to_owned();
    assert!(id == first || id == second);
    assert_eq!(s(&body, "/approval/tool"), "refund");
    assert_eq!(s(&body, "/approval/user"), "alice");
    assert_eq!(s(&body, "/approval/risk"), "destructive");
    assert!(s(&body, "/approval/arguments").contains("ord_1002"));
    assert_eq!(
        s(&body, "/approval/link"),
        format!("https://gate.example/ui/#approval-{id}")
    );
    assert!(!body
        .pointer("/approval/reasons")
        .and_then(Value::as_array)
        .unwrap()
        .is_empty());

    // Replayed later, or changed on the way, it does not verify.
    let late = unix_now() + notify::MAX_AGE_SECONDS + 1;
    let replay = notify::verify(
        KEY.as_bytes(),
        &seen[0].timestamp,
        &seen[0].body,
        &seen[0].signature,
        late,
    );
    assert_eq!(replay, Err(VerifyError::Stale));
    let mut changed = seen[0].body.clone();
    changed.extend_from_slice(b" ");
    assert_eq!(
        notify::verify(
            KEY.as_bytes(),
            &seen[0].timestamp,
            &changed,
            &seen[0].signature,
            unix_now()
        ),
        Err(VerifyError::Mismatch)
    );
    assert_eq!(
        notify::verify(
            b"a guess at the key",
            &seen[0].timestamp,
            &seen[0].body,
            &seen[0].signature,
            unix_now()
        ),
        Err(VerifyError::Mismatch)
    );

    // The Slack message carries the call, escaped, and the link.
    let got = tokio::time::timeout(Duration::from_secs(30), slack_rx.recv())
        .await
        .unwrap()
        .unwrap();
    let msg = toolgate_json::from_slice(&got.body).unwrap();
    let text = s(&msg, "/text");
    assert!(text.contains("`refund` for user `alice`"), "{text}");
    assert!(text.contains("ord_1002"), "{text}");
    assert!(
        text.contains("<https://gate.example/ui/#approval-"),
        "{text}"
    );
    assert!(got.signature.is_empty(), "a Slack message is not signed");

    // Wait until every notice of both calls is settled.
    let want = 2 * 6;
    tokio::time::timeout(
        Duration::from_secs(60),
        settled.wait_for(|n| *n >= u64::try_from(want).unwrap()),
    )
    .await
    .expect("the notices settle")
    .unwrap();
    let (settled, _) = notices(&app).await;
    assert_eq!(settled.len(), want, "{settled:?}");
    assert!(settled.iter().all(|n| n.2 != "sending"), "{settled:?}");
    for approval in [&first, &second] {
        let of = |sink: &str| {
            settled
                .iter()
                .find(|n| &n.0 == approval && n.1 == sink)
                .unwrap_or_else(|| panic!("no notice of {approval} to {sink}: {settled:?}"))
                .clone()
        };
        assert_eq!(of("ops").2, "delivered");
        assert_eq!(of("chat").2, "delivered");
        // A lie is a delivery: its answer is never read.
        assert_eq!(of("liar").2, "delivered");
        let broken = of("broken");
        assert_eq!(
            (broken.2.as_str(), broken.3, broken.4.as_str()),
            ("failed", 2, "500")
        );
        let moved = of("moved");
        assert_eq!(
            (moved.2.as_str(), moved.3, moved.4.as_str()),
            ("failed", 1, "redirect 302 not followed")
        );
        let stuck = of("stuck");
        assert_eq!(
            (stuck.2.as_str(), stuck.3, stuck.4.as_str()),
            ("failed", 2, "no answer within 200 ms")
        );
        // No sink approved anything.
        let (status, a) = shop_copy::call(
            &app,
            "GET",
            &format!("/v1/approvals/{approval}"),
            Some(APPROVER),
            None,
            "",
        )
        .await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(s(&a, "/state"), "pending");
    }
    // The failing sink was tried exactly twice per notice; the redirect
    // was not followed (the good receiver got one notice per call).
    let mut fails_seen = 0;
    while fails_rx.try_recv().is_ok() {
        fails_seen += 1;
    }
    assert_eq!(fails_seen, 4);
    assert!(good_rx.try_recv().is_err(), "a redirect was followed");

    // The admin sees the same in the CLI's words: nothing was dropped.
    assert_eq!(notices(&app).await.1, 0);
    stop_tx.send_replace(true);
    tokio::time::timeout(Duration::from_secs(10), sender)
        .await
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn a_sink_without_a_usable_key_or_url_is_refused_when_loading() {
    let dir = tempfile::tempdir().unwrap();
    let short = dir.path().join("short.key");
    std::fs::write(&short, "too short").unwrap();
    for (extra, says) in [
        (sink("ops", "webhook", "http://127.0.0.1:9/hook", ""), "key"),
        (
            sink(
                "ops",
                "webhook",
                "http://127.0.0.1:9/hook",
                &format!("secret_file = \"{}\"", short.display()),
            ),
            "key",
        ),
        (
            sink(
                "ops",
                "webhook",
                "ftp://example.com/",
                "secret_env = \"HOME\"",
            ),
            "http",
        ),
        (
            sink("Bad Name", "slack", "https://hooks.example/x", ""),
            "name",
        ),
        (
            sink(
                "chat",
                "slack",
                "https://hooks.example/x",
                "secret_env = \"HOME\"",
            ),
            "signs nothing",
        ),
    ] {
        let text = std::fs::read_to_string(shop_dir().join("toolgate.toml")).unwrap();
        let text = shop_copy::with_test_server(&text, "", "", &extra);
        let e = toolgate::config::Config::parse(&text, shop_dir().join("toolgate.toml"))
            .unwrap_err()
            .to_string();
        assert!(e.contains(says), "{extra}: {e}");
        assert!(!e.contains("hooks.example"), "the URL is a secret: {e}");
    }
}

/// The scrape's `toolgate_notices_*` lines: (dropped, pending).
async fn notice_metrics(app: &Router) -> (u64, u64) {
    let (status, body) = shop_copy::send(app, "GET", "/metrics", Some(ADMIN), None, "").await;
    assert_eq!(status, StatusCode::OK);
    let text = String::from_utf8(body.to_vec()).unwrap();
    let value = |name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no {name} in the scrape:\n{text}"))
    };
    (
        value("toolgate_notices_dropped_total"),
        value("toolgate_notices_pending"),
    )
}

/// A flood of notices to sinks that hang: what does not fit in the queue
/// is dropped, and the scrape counts each drop and shows the notices
/// still waiting (as `GET /v1/notices` counts the drops).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn dropped_and_pending_notices_are_metrics() {
    let (hangs, _hangs_rx) = receiver(Receiver::Hangs, "").await;
    let dir = tempfile::tempdir().unwrap();
    let key_file = dir.path().join("webhook.key");
    std::fs::write(&key_file, format!("{KEY}\n")).unwrap();
    let secret = format!(
        "secret_file = \"{}\"\ntimeout_ms = 60000\nmax_attempts = 1",
        key_file.display()
    );
    // Each (approval, sink) is one notice: 30 sinks by 10 held calls are
    // 300 notices, more than the queue and the delivery slots hold.
    const SINKS: usize = 30;
    const CALLS: usize = 10;
    let mut extra = String::new();
    for i in 0..SINKS {
        extra.push_str(&sink(&format!("stuck{i}"), "webhook", &hangs, &secret));
    }
    let config = config_in(dir.path(), "store_poll_ms = 50", "", &extra);
    let state = AppState::from_config(&config).unwrap();
    let app = toolgate_server::app(state.clone());
    assert_eq!(notice_metrics(&app).await, (0, 0));
    for i in 0..CALLS {
        hold(&app, &format!("s-{i}")).await;
    }
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut claimed = state.notices_claimed();
    let sender = tokio::spawn(notify::run(state, stop_rx));

    // Every notice is claimed once: each is either waiting or dropped.
    let total = (SINKS * CALLS) as u64;
    tokio::time::timeout(Duration::from_secs(30), claimed.wait_for(|n| *n >= total))
        .await
        .expect("every notice is claimed")
        .unwrap();
    let (dropped, pending) = notice_metrics(&app).await;
    assert_eq!(dropped + pending, total, "every notice is counted");
    assert!(dropped > 0, "nothing was dropped: {pending} pending");
    assert!(
        pending >= notify::QUEUE as u64,
        "the queue was not full: {pending} pending"
    );
    assert_eq!(notices(&app).await.1, dropped);

    stop_tx.send_replace(true);
    tokio::time::timeout(Duration::from_secs(10), sender)
        .await
        .unwrap()
        .unwrap();
}
