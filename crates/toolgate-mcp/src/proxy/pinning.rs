//! The pins behind the proxy: every catalog the server shows is checked
//! against the store's pins (`toolgate_store::Store::observe_catalog`),
//! and every call against the definition the latest catalog showed.
//!
//! - A `tools/list` answer (the client's request, or the proxy's own) is a
//!   catalog: each registered tool's definition is pinned per upstream by
//!   the digest of its canonical form, the catalog by its own digest, in
//!   one store transaction. Only approved definitions are shown.
//! - `notifications/tools/list_changed` from the server makes the latest
//!   catalog stale: the proxy lists the tools itself (its own request id,
//!   `toolgate-pins-N`), checks them, then passes the notification on.
//! - A `tools/call` of a registered tool waits (at most the call timeout)
//!   until a catalog of this run is checked and fresh (listing the tools
//!   itself when none is), then goes on only if the tool's definition in
//!   that catalog is approved in the store, read afresh (a human's
//!   approval counts at once). Otherwise it is denied `tool_changed`
//!   (audited), or `store_unavailable` when the store cannot answer.
//! - The call's decision context carries that definition's digest, so an
//!   approval of the call is bound to it (`toolgate_store::bound_digest`).

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::Notify;
use toolgate::config::PinFirst;
use toolgate::Context;
use toolgate_json::canonical::{self, Digest};
use toolgate_json::{Object, Value};
use toolgate_store::{PinState, SeenTool};

use super::{finding, printable, Pending, Shared, Sides};
use crate::frame::RequestId;
use crate::pins;

/// The pins' part of a run's memory.
pub(super) struct Catalog {
    /// The name the upstream's pins are kept under.
    upstream: String,
    /// What the upstream's first catalog gets.
    first: PinFirst,
    /// Each registered tool's definition digest in the latest checked
    /// catalog (a tool listed twice is left out: its calls are denied).
    current: HashMap<String, Digest>,
    /// The latest catalog's digest.
    catalog: Option<Digest>,
    /// Whether a catalog was checked since the run started or the server
    /// last said its list changed.
    fresh: bool,
    /// When the proxy's own `tools/list` was sent, while it is unanswered.
    listing: Option<tokio::time::Instant>,
    /// The list changed again while the proxy's own list was in flight.
    again: bool,
    /// `list_changed` notifications held until the new list is checked.
    held: Vec<String>,
    /// The ids of the proxy's own requests.
    next_id: u64,
    /// Woken whenever a catalog was checked (or the proxy's list failed).
    checked: Arc<Notify>,
    /// How many of the proxy's own lists the server refused or left
    /// unanswered: a call waiting for a catalog gives up when this grows.
    failures: u64,
    /// The 2026-07-28 envelope (`_meta`'s `io.modelcontextprotocol/…`
    /// members) of the client's latest request, sent with the proxy's own
    /// list: a server of that era refuses a request without it.
    envelope: Option<Object<'static>>,
    /// The tools of the pages of the proxy's own list read so far (a
    /// paginated `tools/list` is checked as one catalog once every page is
    /// read).
    partial: Vec<Value<'static>>,
    /// How many pages of the proxy's own list were read so far.
    pages: usize,
    /// Whether the server is several upstreams joined (HTTP mode): then
    /// each tool is pinned under the upstream the join says serves it
    /// ([`crate::upstream::ROUTE_META`]), else under `upstream`.
    routed: bool,
    /// The upstream each tool of the latest checked catalog is pinned
    /// under.
    upstreams: HashMap<String, String>,
}

/// The most pages of a paginated `tools/list` the proxy reads for one
/// catalog; the tools of later pages are in no checked catalog (their
/// calls are denied `tool_changed`).
pub(super) const MAX_PAGES: usize = 64;
/// The most tools of one catalog the proxy reads.
pub(super) const MAX_TOOLS: usize = 4096;

impl Default for Catalog {
    fn default() -> Self {
        Self {
            upstream: toolgate::config::DEFAULT_UPSTREAM_NAME.to_owned(),
            first: PinFirst::Trust,
            current: HashMap::new(),
            catalog: None,
            fresh: false,
            listing: None,
            again: false,
            held: Vec::new(),
            next_id: 0,
            checked: Arc::default(),
            failures: 0,
            envelope: None,
            partial: Vec::new(),
            pages: 0,
            routed: false,
            upstreams: HashMap::new(),
        }
    }
}

impl Catalog {
    /// Pins kept under `upstream`, the first catalog treated as `first`
    /// says.
    pub(super) fn configure(&mut self, upstream: &str, first: PinFirst) {
        upstream.clone_into(&mut self.upstream);
        self.first = first;
    }

    /// Each tool pinned under the upstream that serves it (several
    /// upstreams joined).
    pub(super) fn route(&mut self) {
        self.routed = true;
    }

    /// The upstream `tool`'s pins are kept under.
    pub(super) fn upstream_of(&self, tool: &str) -> String {
        self.upstreams
            .get(tool)
            .cloned()
            .unwrap_or_else(|| self.upstream.clone())
    }

    /// The upstream a listed definition is pinned under.
    fn upstream_for(&self, o: &Object<'_>) -> String {
        if !self.routed {
            return self.upstream.clone();
        }
        o.get("_meta")
            .and_then(|m| m.as_object())
            .and_then(|m| m.get(crate::upstream::ROUTE_META))
            .and_then(Value::as_str)
            .map_or_else(|| self.upstream.clone(), str::to_owned)
    }

    /// The digest of `tool`'s definition in the latest checked catalog.
    pub(super) fn current(&self, tool: &str) -> Option<Digest> {
        self.current.get(tool).copied()
    }
}

/// Why a call of a registered tool does not go on.
pub(super) struct Refused {
    /// The reason code: `tool_changed` or `store_unavailable`.
    pub(super) code: &'static str,
    /// What the audit record's note says.
    pub(super) note: String,
}

impl Shared {
    /// The decision context of a call: the proxy's user and session, the
    /// digest of the called tool's definition in the latest catalog and
    /// the upstream the call goes to (the approval's binding, and what the
    /// approval names for the humans deciding).
    pub(super) fn call_context(&self, value: &Value<'static>) -> Context {
        let mut context = Context::new(self.user.as_str(), self.session.as_str(), 1);
        // The proxy's caller asks for the approvals its calls need:
        // per-requester caps count them.
        context.requester = Some(self.user.clone());
        let Some(tool) = value.pointer("/params/name").and_then(Value::as_str) else {
            return context;
        };
        let state = self.lock();
        let context = context.with_upstream(state.catalog.upstream_of(tool));
        match state.catalog.current.get(tool) {
            Some(d) => context.with_tool_definition(tool, *d),
            None => context,
        }
    }

    /// Keeps the 2026-07-28 envelope of a client request (the
    /// `io.modelcontextprotocol/` members of its `params._meta`) for the
    /// proxy's own requests.
    pub(super) fn remember_envelope(&self, value: &Value<'static>) {
        let Some(meta) = value.pointer("/params/_meta").and_then(Value::as_object) else {
            return;
        };
        let mut envelope = Object::new();
        for (k, v) in meta.iter() {
            if k.starts_with("io.modelcontextprotocol/")
                && k != "io.modelcontextprotocol/related-task"
            {
                envelope.insert(k.to_owned(), v.clone());
            }
        }
        if !envelope.is_empty() {
            self.lock().catalog.envelope = Some(envelope);
        }
    }

    /// Whether a call of `tool` may go on to the gate: a tool the config
    /// does not register goes on (the gate denies it); a registered one
    /// only if the latest fresh catalog's definition of it is approved.
    pub(super) async fn pin_check(&self, tool: &str, sides: &Sides) -> Result<(), Refused> {
        if self.gate.gate().registry().get(tool).is_none() {
            return Ok(());
        }
        self.fresh_catalog(sides).await?;
        let digest = self.lock().catalog.current.get(tool).copied();
        let Some(digest) = digest else {
            return Err(Refused {
                code: "tool_changed",
                note: "the tool is not in the server's latest catalog".to_owned(),
            });
        };
        let (store, upstream) = {
            let state = self.lock();
            (
                Arc::clone(self.gate.store()),
                state.catalog.upstream_of(tool),
            )
        };
        let name = tool.to_owned();
        let found =
            tokio::task::spawn_blocking(move || store.pin_state(&upstream, &name, &digest)).await;
        match found {
            Ok(Ok(Some(PinState::Approved))) => Ok(()),
            Ok(Ok(state)) => Err(Refused {
                code: "tool_changed",
                note: format!(
                    "definition {digest} is {}",
                    state.map_or("not pinned", PinState::as_str)
                ),
            }),
            Ok(Err(_)) | Err(_) => Err(Refused {
                code: "store_unavailable",
                note: "the tool pins could not be read".to_owned(),
            }),
        }
    }

    /// Waits (at most the call timeout) until a catalog of this run is
    /// checked and fresh, listing the tools itself (every page) when none
    /// is.
    pub(super) async fn fresh_catalog(&self, sides: &Sides) -> Result<(), Refused> {
        let deadline = tokio::time::Instant::now() + self.options.call_timeout;
        loop {
            let checked = Arc::clone(&self.lock().catalog.checked);
            let notified = checked.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            let (fresh, failures) = {
                let state = self.lock();
                (state.catalog.fresh, state.catalog.failures)
            };
            if fresh {
                return Ok(());
            }
            self.relist(sides, None).await;
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Err(Refused {
                    code: "tool_changed",
                    note: "no catalog of the server's was checked in time".to_owned(),
                });
            }
            if self.lock().catalog.failures != failures {
                // The server refused the list (or left): no catalog to
                // check against; never asked again in a loop.
                return Err(Refused {
                    code: "tool_changed",
                    note: "the server did not answer toolgate's own tools/list".to_owned(),
                });
            }
        }
    }

    /// The pin state of each registered tool of one page of a paginated
    /// list the client asked for, by name: read afresh from the store for
    /// the definition on the page, once the whole catalog (every page,
    /// read by the proxy itself) is checked; `None` for a tool the checked
    /// catalog does not hold once (or when no catalog could be checked).
    pub(super) async fn page_states(
        &self,
        tools: &[Value<'static>],
        sides: &Sides,
    ) -> HashMap<String, Option<PinState>> {
        let mut out = HashMap::new();
        if self.fresh_catalog(sides).await.is_err() {
            return out;
        }
        let registry = self.gate.gate().registry();
        let mut asked: Vec<(String, Digest, String)> = Vec::new();
        {
            let state = self.lock();
            for tool in tools {
                let Some(o) = tool.as_object() else { continue };
                let Some(name) = o.get("name").and_then(Value::as_str) else {
                    continue;
                };
                if registry.get(name).is_none() || !state.catalog.current.contains_key(name) {
                    continue;
                }
                let upstream = state.catalog.upstream_of(name);
                asked.push((name.to_owned(), pins::definition_digest(o), upstream));
            }
        }
        let store = Arc::clone(self.gate.store());
        let read = tokio::task::spawn_blocking(move || {
            asked
                .into_iter()
                .map(|(name, digest, upstream)| {
                    let state = store.pin_state(&upstream, &name, &digest).ok().flatten();
                    (name, state)
                })
                .collect::<Vec<_>>()
        })
        .await;
        if let Ok(read) = read {
            out.extend(read);
        }
        out
    }

    /// The server's list may have changed: the latest catalog is stale
    /// until the proxy's own `tools/list` is answered and checked;
    /// `notification` (the server's `list_changed`) is passed on to the
    /// client after that. Sends the list unless one is in flight (then it
    /// is sent again once that one is answered).
    pub(super) async fn relist(&self, sides: &Sides, notification: Option<String>) {
        let now = tokio::time::Instant::now();
        let line = {
            let mut state = self.lock();
            let state = &mut *state;
            if let Some(n) = notification {
                state.catalog.fresh = false;
                state.catalog.held.push(n);
                if state.catalog.listing.is_some() {
                    state.catalog.again = true;
                }
            }
            let in_flight = state
                .catalog
                .listing
                .is_some_and(|since| now.duration_since(since) < self.options.call_timeout);
            if in_flight {
                return;
            }
            let Some(id) = own_id(state) else { return };
            state.pending.insert(id.clone(), Pending::OwnList);
            state.catalog.listing = Some(now);
            state.catalog.again = false;
            state.catalog.partial.clear();
            state.catalog.pages = 0;
            list_request(&id, state.catalog.envelope.as_ref(), None)
        };
        sides.to_server(line).await;
    }

    /// The server's answer to the proxy's own `tools/list`: checked, then
    /// the held notifications passed on (or the list sent again when it
    /// changed meanwhile).
    pub(super) async fn own_list_answered(&self, value: &Value<'static>, sides: &Sides) {
        let tools = value.pointer("/result/tools").and_then(Value::as_array);
        let cursor = value.pointer("/result/nextCursor").and_then(Value::as_str);
        match tools {
            Some(tools) => {
                // A page: the next one is asked for; the catalog is every
                // page's tools, checked once the last is read.
                let next = {
                    let mut state = self.lock();
                    let state = &mut *state;
                    state.catalog.pages = state.catalog.pages.saturating_add(1);
                    let room = state.catalog.pages < MAX_PAGES
                        && state.catalog.partial.len().saturating_add(tools.len()) <= MAX_TOOLS;
                    state.catalog.partial.extend(tools.iter().cloned());
                    match (cursor, room) {
                        (Some(c), true) => own_id(state).map(|id| {
                            state.pending.insert(id.clone(), Pending::OwnList);
                            list_request(&id, state.catalog.envelope.as_ref(), Some(c))
                        }),
                        _ => None,
                    }
                };
                if let Some(line) = next {
                    sides.to_server(line).await;
                    return;
                }
                if cursor.is_some() {
                    finding(&format!(
                        "tools/list: more than {MAX_PAGES} pages or {MAX_TOOLS} tools: the rest is in no checked catalog"
                    ));
                }
                let all = std::mem::take(&mut self.lock().catalog.partial);
                self.check_catalog(&all).await;
            }
            None => {
                finding("the server refused toolgate's own tools/list");
                let mut state = self.lock();
                state.catalog.failures = state.catalog.failures.wrapping_add(1);
                state.catalog.partial.clear();
            }
        }
        let (again, held) = {
            let mut state = self.lock();
            state.catalog.listing = None;
            let again = std::mem::take(&mut state.catalog.again);
            let held = if again {
                Vec::new()
            } else {
                std::mem::take(&mut state.catalog.held)
            };
            (again, held)
        };
        if again {
            self.relist(sides, None).await;
        }
        for n in held {
            sides.to_client(n).await;
        }
        // Calls waiting on a list that failed look again (and list again).
        Arc::clone(&self.lock().catalog.checked).notify_waiters();
    }

    /// The proxy's own list will not be answered (the server closed).
    pub(super) fn own_list_failed(&self) {
        let checked = {
            let mut state = self.lock();
            state.catalog.listing = None;
            state.catalog.failures = state.catalog.failures.wrapping_add(1);
            Arc::clone(&state.catalog.checked)
        };
        checked.notify_waiters();
    }

    /// Checks a catalog against the store's pins: the state of each
    /// registered tool's definition, by name (`None`: not known, the store
    /// could not answer or the name is listed twice). The run's latest
    /// catalog becomes this one, fresh, and waiting calls are woken.
    pub(super) async fn check_catalog(
        &self,
        tools: &[Value<'static>],
    ) -> HashMap<String, Option<PinState>> {
        let registry = self.gate.gate().registry();
        let mut all: Vec<(String, Digest)> = Vec::new();
        let mut seen: Vec<SeenTool> = Vec::new();
        let mut twice: Vec<String> = Vec::new();
        // Each definition's upstream (the catalog's, or the one serving it
        // when several are joined).
        let mut of: Vec<String> = Vec::new();
        let mut upstreams: HashMap<String, String> = HashMap::new();
        for tool in tools {
            let Some(o) = tool.as_object() else { continue };
            let Some(name) = o.get("name").and_then(Value::as_str) else {
                continue;
            };
            let (digest, text) = pins::canonical_definition(o);
            if all.iter().any(|(n, _)| n == name) {
                twice.push(name.to_owned());
            }
            let upstream = self.lock().catalog.upstream_for(o);
            all.push((name.to_owned(), digest));
            of.push(upstream.clone());
            if registry.get(name).is_some() {
                let findings = pins::definition_findings(o);
                seen.push(SeenTool::new(name, digest, text, findings));
                upstreams.insert(name.to_owned(), upstream);
            }
        }
        let catalog = pins::catalog_digest(all.iter().map(|(n, d)| (n.as_str(), *d)));
        let (store, first, previous) = {
            let state = self.lock();
            (
                Arc::clone(self.gate.store()),
                state.catalog.first,
                state.catalog.catalog,
            )
        };
        if previous.is_some_and(|p| p != catalog) {
            finding(&format!(
                "tools/list: the catalog changed: {catalog} ({} tools)",
                all.len()
            ));
        }
        // One catalog per upstream, each with its own digest.
        let mut groups: Vec<UpstreamCatalog> = Vec::new();
        for ((name, digest), upstream) in all.iter().zip(&of) {
            let at = match groups.iter().position(|(u, _, _)| u == upstream) {
                Some(at) => at,
                None => {
                    groups.push((upstream.clone(), Vec::new(), Vec::new()));
                    groups.len() - 1
                }
            };
            if let Some(g) = groups.get_mut(at) {
                g.1.push((name.clone(), *digest));
            }
        }
        for s in &seen {
            let upstream = upstreams.get(&s.tool);
            if let Some(g) = groups.iter_mut().find(|(u, _, _)| Some(u) == upstream) {
                g.2.push(s.clone());
            }
        }
        let observed = tokio::task::spawn_blocking(move || {
            let mut by_name: HashMap<String, PinState> = HashMap::new();
            for (upstream, tools, definitions) in groups {
                let digest = pins::catalog_digest(tools.iter().map(|(n, d)| (n.as_str(), *d)));
                let states = store
                    .observe_catalog(&upstream, &digest, &definitions, first)
                    .map_err(|_| ())?;
                if states.len() != definitions.len() {
                    return Err(());
                }
                for (d, state) in definitions.iter().zip(states) {
                    by_name.insert(d.tool.clone(), state);
                }
            }
            Ok(by_name)
        })
        .await;
        let states: Vec<Option<PinState>> = match observed {
            Ok(Ok(by_name)) => seen.iter().map(|s| by_name.get(&s.tool).copied()).collect(),
            _ => {
                finding("tools/list: the tool pins could not be written: every tool hidden");
                vec![None; seen.len()]
            }
        };
        let mut out: HashMap<String, Option<PinState>> = HashMap::new();
        let mut current: HashMap<String, Digest> = HashMap::new();
        for (s, state) in seen.iter().zip(states) {
            if twice.contains(&s.tool) {
                out.insert(s.tool.clone(), None);
                continue;
            }
            current.insert(s.tool.clone(), s.digest);
            out.insert(s.tool.clone(), state);
        }
        let checked = {
            let mut state = self.lock();
            state.catalog.current = current;
            state.catalog.upstreams = upstreams;
            state.catalog.catalog = Some(catalog);
            state.catalog.fresh = true;
            Arc::clone(&state.catalog.checked)
        };
        checked.notify_waiters();
        for name in &twice {
            finding(&format!(
                "tools/list: `{}` hidden: listed more than once",
                printable(name)
            ));
        }
        out
    }
}

/// One upstream's part of a catalog: its name, every tool it listed (name
/// and definition digest), the registered ones' definitions.
type UpstreamCatalog = (String, Vec<(String, Digest)>, Vec<SeenTool>);

/// Says on standard error why a registered tool is hidden from a list.
pub(super) fn report_unapproved(
    catalog: &Catalog,
    name: &str,
    o: &Object<'_>,
    state: Option<PinState>,
) {
    let digest = pins::definition_digest(o);
    let why = match state {
        Some(PinState::Pending) => format!(
            "its definition {digest} waits for a human (`toolgate pins show --upstream {} {}`)",
            catalog.upstream_for(o),
            printable(name)
        ),
        Some(PinState::Rejected) => format!("its definition {digest} was rejected"),
        _ => "its definition could not be checked".to_owned(),
    };
    finding(&format!(
        "tools/list: `{}` hidden: {why}; its calls are denied tool_changed",
        printable(name)
    ));
}

/// An id for the proxy's own request that no request of this run holds.
fn own_id(state: &mut super::State) -> Option<RequestId> {
    loop {
        state.catalog.next_id = state.catalog.next_id.saturating_add(1);
        let text = format!("toolgate-pins-{}", state.catalog.next_id);
        let id = RequestId::from_value(&Value::String(std::borrow::Cow::Owned(text)))?;
        if !state.pending.contains_key(&id) && !state.live.contains_key(&id) {
            return Some(id);
        }
    }
}

/// The proxy's own `tools/list` request (of the page after `cursor`), with
/// the client's 2026-07-28 envelope when it sent one.
fn list_request(
    id: &RequestId,
    envelope: Option<&Object<'static>>,
    cursor: Option<&str>,
) -> String {
    let mut o = Object::new();
    let mut params = Object::new();
    if let Some(meta) = envelope {
        params.insert("_meta", Value::Object(meta.clone()));
    }
    if let Some(c) = cursor {
        params.insert(
            "cursor",
            Value::String(std::borrow::Cow::Owned(c.to_owned())),
        );
    }
    if !params.is_empty() {
        o.insert("params", Value::Object(params));
    }
    o.insert("jsonrpc", Value::String(std::borrow::Cow::Borrowed("2.0")));
    o.insert("id", id.to_value());
    o.insert(
        "method",
        Value::String(std::borrow::Cow::Borrowed("tools/list")),
    );
    canonical::to_string(&Value::Object(o))
}
