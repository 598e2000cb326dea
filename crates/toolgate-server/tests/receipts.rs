//! `POST /v1/decide` with `[gate] receipt_key`: every decision carries the
//! signed receipt, and it verifies only for the decided tool and canonical
//! arguments; the OpenAPI document admits the member.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    missing_docs,
    reason = "test code"
)]

use axum::http::StatusCode;
use toolgate::receipt::{self, ReceiptError, ReceiptKey};
use toolgate_json::Value;

mod shop_copy;

use shop_copy::{call, s, Fixture, AGENT};
use toolgate_testkit::shop_dir;

fn decide_body(file: &str) -> String {
    let response = std::fs::read_to_string(shop_dir().join("responses").join(file)).unwrap();
    let mut o = toolgate_json::Object::new();
    o.insert("body", Value::String(response.into()));
    o.insert("format", Value::String("auto".into()));
    let ctx = toolgate_json::from_str(
        r#"{"user":"alice","session":"sess-r","roles":["customer"],"turn":1,"entities":[]}"#,
    )
    .unwrap()
    .into_owned();
    o.insert("context", ctx);
    toolgate_json::canonical::to_string(&Value::Object(o))
}

#[tokio::test]
async fn decide_answers_carry_receipts_the_executor_verifies() {
    // The key file beside a copy of the shop's config, named in `[gate]`.
    let dir = tempfile::tempdir().unwrap();
    let path = shop_copy::write_shop(dir.path());
    std::fs::write(dir.path().join("receipts.key"), "5a".repeat(32)).unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replacen("[gate]\n", "[gate]\nreceipt_key = \"receipts.key\"\n", 1),
    )
    .unwrap();
    let config = toolgate::config::Config::load(&path).unwrap();
    let f = Fixture::on(dir, &config);
    let key = ReceiptKey::from_seed([0x5a; 32]).public_key();

    let (status, v) = call(
        &f.app,
        "POST",
        "/v1/decide",
        Some(AGENT),
        Some("application/json"),
        &decide_body("openai-search.json"),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{v:?}");
    assert_eq!(s(&v, "/decisions/0/verdict"), "allow");
    let args = toolgate_json::canonical::to_string(v.pointer("/decisions/0/arguments").unwrap());
    let r = s(&v, "/decisions/0/receipt");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = receipt::verify(r, "search", &args, &key, now).unwrap();
    assert_eq!(claims.args, s(&v, "/decisions/0/digest"));
    assert_eq!(
        receipt::verify(r, "fetch_url", &args, &key, now),
        Err(ReceiptError::OtherTool)
    );
    assert_eq!(
        receipt::verify(r, "search", &args, &key, claims.expires),
        Err(ReceiptError::Expired)
    );
}
