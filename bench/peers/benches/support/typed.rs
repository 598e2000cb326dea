//! The typed-serde baseline: `#[derive(Deserialize)]` structs for the perf
//! corpus' four tool schemas (`deny_unknown_fields` on every struct, enums
//! for the `enum`/`const` members), read with `serde_json::from_slice`, then
//! the schema's bounds, lengths and patterns checked by hand.
//!
//! This is how a careful Rust service checks tool arguments without a
//! schema validator. What it cannot see: `1200.0` read as an integer is
//! refused by serde_json (good), but `metadata`'s free-form map keeps the
//! last of two duplicate names, and `Option` members accept `null`.

use std::collections::HashMap;

use serde::Deserialize;

/// The four tools of the corpus.
#[derive(Debug, Clone, Copy)]
pub enum Tool {
    Search,
    Refund,
    CreateTicket,
    BulkUpsert,
}

impl Tool {
    pub fn of(name: &str) -> Tool {
        match name {
            "search" => Tool::Search,
            "refund" => Tool::Refund,
            "create_ticket" => Tool::CreateTicket,
            "bulk_upsert" => Tool::BulkUpsert,
            other => panic!("no typed baseline for `{other}`"),
        }
    }
}

/// Raw bytes in, accept or reject out.
pub fn check(tool: Tool, raw: &[u8]) -> bool {
    match tool {
        Tool::Search => serde_json::from_slice::<Search>(raw).is_ok_and(|v| v.ok()),
        Tool::Refund => serde_json::from_slice::<Refund>(raw).is_ok_and(|v| v.ok()),
        Tool::CreateTicket => serde_json::from_slice::<CreateTicket>(raw).is_ok_and(|v| v.ok()),
        Tool::BulkUpsert => serde_json::from_slice::<BulkUpsert>(raw).is_ok_and(|v| v.ok()),
    }
}

/// `minLength`/`maxLength` count code points.
fn len_in(s: &str, min: usize, max: usize) -> bool {
    // Bytes bound code points from above.
    if s.len() < min {
        return false;
    }
    if s.len() <= max && min == 0 {
        return true;
    }
    let n = s.chars().count();
    n >= min && n <= max
}

fn digits(s: &[u8]) -> bool {
    s.iter().all(u8::is_ascii_digit)
}

/// `^[A-Z]-\d{4}$`
fn order_id(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 6 && b[0].is_ascii_uppercase() && b[1] == b'-' && digits(&b[2..])
}

/// `^U\d{6}$`
fn user_id(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 7 && b[0] == b'U' && digits(&b[1..])
}

/// `^SKU-[0-9]{6}$`
fn sku(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10 && b.starts_with(b"SKU-") && digits(&b[4..])
}

/// `^ACC-[0-9]{8}$`
fn account(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 12 && b.starts_with(b"ACC-") && digits(&b[4..])
}

/// `^[0-9]{4}-[0-9]{2}-[0-9]{2}$`
fn date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && digits(&b[..4])
        && b[4] == b'-'
        && digits(&b[5..7])
        && b[7] == b'-'
        && digits(&b[8..])
}

/// `^[a-z_][a-z0-9_]{0,62}$`
fn table(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && (b[0].is_ascii_lowercase() || b[0] == b'_')
        && b[1..]
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'_')
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Search {
    query: String,
    limit: Option<i64>,
}

impl Search {
    fn ok(&self) -> bool {
        len_in(&self.query, 1, 500) && self.limit.is_none_or(|l| (1..=10).contains(&l))
    }
}

#[derive(Deserialize)]
enum RefundAction {
    #[serde(rename = "refund")]
    Refund,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Refund {
    #[expect(dead_code, reason = "its check is the deserialization")]
    action: RefundAction,
    order_id: String,
    amount: i64,
    #[expect(dead_code, reason = "its check is the deserialization")]
    notify_customer: bool,
    memo: Option<String>,
}

impl Refund {
    fn ok(&self) -> bool {
        order_id(&self.order_id)
            && (1..=5000).contains(&self.amount)
            && self.memo.as_deref().is_none_or(|m| len_in(m, 0, 200))
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Priority {
    Low,
    Medium,
    High,
    Urgent,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Reporter {
    id: String,
    name: String,
    email: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Role {
    Owner,
    Reviewer,
    Watcher,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Assignee {
    id: String,
    #[expect(dead_code, reason = "its check is the deserialization")]
    role: Role,
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Tier {
    Free,
    Pro,
    Enterprise,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Contact {
    phone: String,
    timezone: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Customer {
    account_id: String,
    #[expect(dead_code, reason = "its check is the deserialization")]
    tier: Tier,
    contact: Option<Contact>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LineItem {
    sku: String,
    qty: i64,
    unit_price: f64,
    note: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Attachment {
    name: String,
    size_bytes: i64,
    mime: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CreateTicket {
    title: String,
    description: String,
    #[expect(dead_code, reason = "its check is the deserialization")]
    priority: Priority,
    reporter: Reporter,
    assignees: Option<Vec<Assignee>>,
    labels: Option<Vec<String>>,
    estimate_hours: Option<f64>,
    due_date: Option<String>,
    customer: Customer,
    line_items: Vec<LineItem>,
    attachments: Option<Vec<Attachment>>,
    metadata: Option<HashMap<String, String>>,
    #[expect(dead_code, reason = "its check is the deserialization")]
    watch: Option<bool>,
}

impl CreateTicket {
    fn ok(&self) -> bool {
        let r = &self.reporter;
        let c = &self.customer;
        len_in(&self.title, 1, 200)
            && len_in(&self.description, 0, 4000)
            && user_id(&r.id)
            && len_in(&r.name, 1, 100)
            && len_in(&r.email, 0, 254)
            && self
                .assignees
                .as_ref()
                .is_none_or(|a| a.len() <= 10 && a.iter().all(|x| user_id(&x.id)))
            && self
                .labels
                .as_ref()
                .is_none_or(|l| l.len() <= 20 && l.iter().all(|x| len_in(x, 1, 32)))
            && self
                .estimate_hours
                .is_none_or(|h| (0.0..=1000.0).contains(&h))
            && self.due_date.as_deref().is_none_or(date)
            && account(&c.account_id)
            && c.contact.as_ref().is_none_or(|x| {
                len_in(&x.phone, 0, 32) && x.timezone.as_deref().is_none_or(|t| len_in(t, 0, 64))
            })
            && (1..=50).contains(&self.line_items.len())
            && self.line_items.iter().all(|li| {
                sku(&li.sku)
                    && (1..=1000).contains(&li.qty)
                    && (0.0..=100000.0).contains(&li.unit_price)
                    && li.note.as_deref().is_none_or(|n| len_in(n, 0, 200))
            })
            && self.attachments.as_ref().is_none_or(|a| {
                a.len() <= 10
                    && a.iter().all(|x| {
                        len_in(&x.name, 0, 255)
                            && (0..=100_000_000).contains(&x.size_bytes)
                            && len_in(&x.mime, 0, 100)
                    })
            })
            && self
                .metadata
                .as_ref()
                .is_none_or(|m| m.len() <= 20 && m.values().all(|v| len_in(v, 0, 100)))
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Mode {
    Insert,
    Upsert,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Record {
    id: i64,
    sku: String,
    name: String,
    price: f64,
    qty: i64,
    #[expect(dead_code, reason = "its check is the deserialization")]
    active: bool,
    tags: Option<Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BulkUpsert {
    table: String,
    #[expect(dead_code, reason = "its check is the deserialization")]
    mode: Mode,
    #[expect(dead_code, reason = "its check is the deserialization")]
    dry_run: Option<bool>,
    records: Vec<Record>,
}

impl BulkUpsert {
    fn ok(&self) -> bool {
        table(&self.table)
            && (1..=10000).contains(&self.records.len())
            && self.records.iter().all(|r| {
                (1..=9_007_199_254_740_991).contains(&r.id)
                    && sku(&r.sku)
                    && len_in(&r.name, 1, 100)
                    && (0.0..=1_000_000.0).contains(&r.price)
                    && (0..=100_000).contains(&r.qty)
                    && r.tags
                        .as_ref()
                        .is_none_or(|t| t.len() <= 5 && t.iter().all(|x| len_in(x, 0, 16)))
            })
    }
}
