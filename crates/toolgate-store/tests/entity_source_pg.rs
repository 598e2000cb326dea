//! The PostgreSQL entity source on the real server (a fresh database per
//! test): the gate decides ownership and totals from the system of
//! record's rows, and a query that is slow, answers too many rows, the
//! wrong column, `NULL`, too much, another entity, or a database that is
//! gone, denies `entity_source_unavailable`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code: a failed assumption should fail the test loudly"
)]

use std::net::TcpListener;
use std::path::Path;
use std::time::Duration;

use toolgate::authz::{EntitySource, SourceErrorKind};
use toolgate::config::Config;
use toolgate::{Context, Decision, Format, Gate, Verdict};
use toolgate_store::{connect_source, PgEntitySource};
use toolgate_testkit::PgDatabase;

fn order(id: &str, owner: &str, total: u64) -> String {
    format!(
        r#"{{"uid":{{"type":"Order","id":"{id}"}},"attrs":{{"owner":{{"type":"User","id":"{owner}"}},"total_cents":{total}}},"parents":[]}}"#
    )
}

/// A database with an `orders` table holding `rows` (id, entity JSON).
fn database(rows: &[(&str, String)]) -> Option<PgDatabase> {
    let db = PgDatabase::create()?;
    db.execute("CREATE TABLE orders (id text PRIMARY KEY, entity jsonb)");
    for (id, entity) in rows {
        db.execute(&format!(
            "INSERT INTO orders VALUES ('{id}', '{}')",
            entity.replace('\'', "''")
        ));
    }
    Some(db)
}

const QUERY: &str = "SELECT entity::text FROM orders WHERE $1 = 'Order' AND id = $2";

fn source(db: &PgDatabase, query: &str) -> PgEntitySource {
    PgEntitySource::new(db.url(), query, Duration::from_millis(500), 4096).unwrap()
}

#[test]
fn rows_are_entities_and_a_missing_row_is_none() {
    let Some(db) = database(&[("ord_a", order("ord_a", "alice", 10))]) else {
        return;
    };
    let s = source(&db, QUERY);
    let got = s.fetch("Order", "ord_a").unwrap().unwrap();
    let value = toolgate_json::from_str(&got).unwrap();
    assert_eq!(
        value.pointer("/attrs/owner/id").and_then(|v| v.as_str()),
        Some("alice")
    );
    assert_eq!(s.fetch("Order", "ord_none").unwrap(), None);
    assert_eq!(s.fetch("User", "ord_a").unwrap(), None);
    // The id is a parameter, never SQL.
    assert_eq!(s.fetch("Order", "x' OR '1'='1").unwrap(), None);
}

#[test]
fn a_query_that_misbehaves_is_an_error_of_its_kind() {
    let huge = format!(r#"{{"pad":"{}"}}"#, "x".repeat(5000));
    let Some(db) = database(&[("ord_a", order("ord_a", "alice", 10)), ("ord_huge", huge)]) else {
        return;
    };
    db.execute("INSERT INTO orders VALUES ('ord_null', NULL)");
    let kind = |query: &str, id: &str| source(&db, query).fetch("Order", id).unwrap_err().kind();
    // Slower than the timeout: the server cancels it.
    assert_eq!(
        kind(
            "SELECT entity::text FROM orders, pg_sleep(5) WHERE $1 = 'Order' AND id = $2",
            "ord_a"
        ),
        SourceErrorKind::Timeout
    );
    // Two rows; a column that is not text; NULL; too large.
    assert_eq!(
        kind(
            "SELECT entity::text FROM orders WHERE $1 = 'Order' AND $2 <> ''",
            "ord_a"
        ),
        SourceErrorKind::Malformed
    );
    assert_eq!(
        kind(
            "SELECT 1 FROM orders WHERE $1 = 'Order' AND id = $2",
            "ord_a"
        ),
        SourceErrorKind::Malformed
    );
    assert_eq!(kind(QUERY, "ord_null"), SourceErrorKind::Malformed);
    assert_eq!(kind(QUERY, "ord_huge"), SourceErrorKind::TooLarge);
    // A query the server refuses; a read-only session refuses writes.
    assert_eq!(
        kind("SELECT nope FROM orders WHERE $1 = $2", "ord_a"),
        SourceErrorKind::Unavailable
    );
    assert_eq!(
        kind(
            "DELETE FROM orders WHERE $1 = 'Order' AND id = $2 RETURNING entity::text",
            "ord_a"
        ),
        SourceErrorKind::Unavailable
    );
    assert!(source(&db, QUERY)
        .fetch("Order", "ord_a")
        .unwrap()
        .is_some());
}

#[test]
fn a_database_that_is_gone_fails_and_one_that_returns_is_used_again() {
    let Some(db) = database(&[("ord_a", order("ord_a", "alice", 10))]) else {
        return;
    };
    let s = source(&db, QUERY);
    assert!(s.fetch("Order", "ord_a").unwrap().is_some());
    db.terminate_connections();
    // The lost connection is an error (never an old answer) ...
    let first = s.fetch("Order", "ord_a");
    // ... or, had the loss not been seen yet, the fresh connection's answer.
    if let Err(e) = &first {
        assert_eq!(e.kind(), SourceErrorKind::Unavailable, "{e}");
    }
    assert!(s.fetch("Order", "ord_a").unwrap().is_some());
    // Nothing listens.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let url = format!("postgres://postgres@127.0.0.1:{port}/x?sslmode=disable");
    let gone = PgEntitySource::new(&url, QUERY, Duration::from_millis(500), 4096).unwrap();
    let e = gone.fetch("Order", "ord_a").unwrap_err();
    assert!(
        matches!(
            e.kind(),
            SourceErrorKind::Unavailable | SourceErrorKind::Timeout
        ),
        "{e}"
    );
}

const TOOLS: &str = r#"
[[tool]]
name = "get_order"
risk = "read"
schema_json = '{"type":"object","properties":{"order_id":{"type":"string","maxLength":64}},"required":["order_id"],"additionalProperties":false}'
resource = { type = "Order", id = "/order_id" }

[[tool]]
name = "refund"
risk = "write"
approval = "none"
schema_json = '{"type":"object","properties":{"order_id":{"type":"string","maxLength":64},"amount_cents":{"type":"integer","minimum":1,"maximum":1000000},"reason":{"type":"string"}},"required":["order_id","amount_cents","reason"],"additionalProperties":false}'
resource = { type = "Order", id = "/order_id" }
"#;

const PEOPLE: &str = r#"[
  {"uid":{"type":"Role","id":"customer"},"attrs":{},"parents":[]},
  {"uid":{"type":"User","id":"alice"},"attrs":{},"parents":[{"type":"Role","id":"customer"}]},
  {"uid":{"type":"User","id":"bob"},"attrs":{},"parents":[{"type":"Role","id":"customer"}]}
]"#;

fn gate(dir: &Path, url: &str) -> Gate {
    let shop = toolgate_testkit::shop_dir();
    std::fs::write(dir.join("people.json"), PEOPLE).unwrap();
    let toml = format!(
        "[authorization]\npolicies = {:?}\nschema = {:?}\nentities = \"people.json\"\n\n[[authorization.sources]]\nkind = \"postgres\"\ntypes = [\"Order\"]\nurl = {url:?}\nquery = {QUERY:?}\ntimeout_ms = 1000\nttl_seconds = 0\n{TOOLS}",
        shop.join("policies.cedar").display().to_string(),
        shop.join("shop.cedarschema").display().to_string(),
    );
    let config = Config::parse(&toml, dir.join("toolgate.toml")).unwrap();
    Gate::from_config_with(&config, &connect_source).unwrap()
}

fn decide(gate: &Gate, user: &str, tool: &str, args: &str) -> Decision {
    let args = toolgate_json::canonical::to_string(&toolgate_json::Value::String(args.into()));
    let body = format!(
        r#"{{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{{"index":0,"finish_reason":"tool_calls","message":{{"role":"assistant","content":null,"tool_calls":[{{"id":"call_1","type":"function","function":{{"name":"{tool}","arguments":{args}}}}}]}}}}]}}"#
    );
    let ctx = Context::new(user, "s-1", 1);
    gate.decide(body.as_bytes(), Format::Auto, &ctx, &ctx)
        .into_decisions()
        .remove(0)
}

fn code(d: &Decision) -> &str {
    assert_eq!(d.verdict(), Verdict::Deny, "{d:?}");
    d.reasons()[0].code.as_str()
}

#[test]
fn the_gate_decides_on_the_databases_rows() {
    let Some(db) = database(&[
        ("ord_a", order("ord_a", "alice", 4999)),
        ("ord_liar", order("ord_other", "alice", 4999)),
    ]) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let g = gate(dir.path(), db.url());
    let get =
        |user: &str, id: &str| decide(&g, user, "get_order", &format!(r#"{{"order_id":"{id}"}}"#));
    assert_eq!(get("alice", "ord_a").verdict(), Verdict::Allow);
    assert_eq!(code(&get("bob", "ord_a")), "not_owner");
    assert_eq!(code(&get("alice", "ord_missing")), "not_owner");
    // A row holding another order: not the entity asked for.
    let liar = get("alice", "ord_liar");
    assert_eq!(code(&liar), "entity_source_unavailable");
    assert_eq!(liar.policies(), ["toolgate:entity_source:mismatch"]);
    let refund = |amount: u64| {
        decide(
            &g,
            "alice",
            "refund",
            &format!(r#"{{"order_id":"ord_a","amount_cents":{amount},"reason":"late"}}"#),
        )
    };
    assert_eq!(refund(4999).verdict(), Verdict::Allow);
    assert_eq!(code(&refund(5000)), "not_authorized");
    // The total changes in the database: the next call sees it (TTL 0).
    db.execute("UPDATE orders SET entity = jsonb_set(entity, '{attrs,total_cents}', '6000') WHERE id = 'ord_a'");
    assert_eq!(refund(5000).verdict(), Verdict::Allow);
    // The database goes away: denied, never allowed on what it said before.
    drop(g);
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = closed.local_addr().unwrap().port();
    drop(closed);
    let g = gate(
        dir.path(),
        &format!("postgres://postgres@127.0.0.1:{port}/x?sslmode=disable"),
    );
    let d = decide(&g, "alice", "get_order", r#"{"order_id":"ord_a"}"#);
    assert_eq!(code(&d), "entity_source_unavailable");
}
