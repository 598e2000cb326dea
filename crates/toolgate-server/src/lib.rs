//! toolgate's HTTP decision service: `toolgate serve`.
//!
//! [`app`] builds the [`axum::Router`]; [`serve`] runs it on a listener with
//! graceful shutdown. Handlers are thin: an extractor checks the bearer
//! token and role (`auth`) and reads the body strictly (`extract`), the
//! handler (`routes`) calls the [`toolgate_store::StoreGate`] or the store on a
//! blocking thread, and `wire` writes the answer. Those modules are private
//! (`cargo doc --document-private-items` shows them); [`AppState`] is what
//! every handler shares.
//!
//! | route | roles | answer |
//! |---|---|---|
//! | `POST /v1/decide` | agent, admin | the decisions, as `toolgate check --json` prints them (without `input`) |
//! | `POST /v1/results` (`{"tool", "result", "call_id"?, "session"?}`) | agent, admin | the sanitized result: `content`, `wrapped`, `changed`, `truncated`, `findings` (see the `results` module) |
//! | `GET /v1/approvals?state=pending\|approved\|denied\|expired\|all&limit=&before=&after=` | approver, admin | `{"approvals": […], "total"}`: without `after`, the newest first (`before=ID` pages back); with `after=ID`, the next ones oldest first; `total` counts every match (a pending approval past its expiry is `expired`, never `pending`) |
//! | `GET /v1/approvals/{id}` | approver, admin | the approval |
//! | `POST /v1/approvals/{id}/approve`, `…/deny` (optional `{"note"}`) | approver, admin | the approval |
//! | `GET /v1/approvals/{id}/wait?timeout=SECONDS` | any | the approval and `timed_out`, once decided, after the timeout (at most 60 s), or as the service stops |
//! | `GET /v1/pins?state=&upstream=&tool=&limit=&after=` | approver, admin | `{"pins": [...]}`: the tool definitions MCP servers showed `toolgate mcp` (pending by default), each with its findings and its diff from the definition approved before |
//! | `GET /v1/pins/{id}`, `POST /v1/pins/{id}/approve`, `…/reject` (`{"note"}`) | approver, admin | the pin; a decision is audited (`pin_approved`, `pin_rejected`) with the caller as actor |
//! | `GET /v1/kill`, `POST /v1/kill` (`{"mode", "reason"}`) | admin | the kill switch |
//! | `GET /v1/audit?user=&session=&tool=&verdict=&kind=&since=&until=&limit=&before=&after=` | admin | `{"records": […], "next_before", "next_after"}`, oldest first: the newest matching page, or the page before `before` / after `after` (a `seq`; the answer's cursor is the next page's) |
//! | `POST /v1/reload` | admin | re-reads the config file, policies, schemas and entities and swaps the gate atomically (see [`live`]); a bad config keeps the running one (`422 invalid_config`, saying what and where) |
//! | `GET /healthz`, `GET /readyz` | none | liveness, store readiness (503) |
//! | `GET /metrics` | none, or any token with `[server] metrics_auth = "token"` | Prometheus text (see the `metrics` module) |
//! | `GET /openapi.json` | none | the OpenAPI 3.1 document of every route above but `/ui/` ([`openapi`]) |
//! | `GET /ui/` and the page's own routes ([`ui`]) | a session from an approver or admin token | the approvals page |
//!
//! Every error is `{"error": {"code", "message", "pointer"}}`, with one of
//! the stable codes `invalid_json`, `duplicate_key`, `invalid_request`,
//! `unknown_field`, `invalid_query`, `unsupported_media_type`,
//! `payload_too_large`, `request_timeout`, `unauthorized`, `forbidden`,
//! `not_found`, `method_not_allowed`, `conflict`, `invalid_config`,
//! `store_unavailable`.
//!
//! `GET /v1/audit`'s `kind` is `decision` (`allow`, `deny`,
//! `needs_approval`), `approval` (`approval_granted`, `approval_denied`,
//! `approval_used`, `approval_withdrawn`, `approval_voted`), `kill_switch`, `auth` (`unauthorized`, `forbidden`:
//! refused requests, see the `auth` module), `reload` (`config_reload`) or
//! `result` (`tool_result`: a tool result checked by `toolgate proxy` or
//! `toolgate mcp`), `pin` (`pin_pending`, `pin_approved`, `pin_rejected`),
//! `offered` (`tool_offered`: a request to `toolgate proxy` offered a
//! registered tool with another schema) or `checkpoint` (a signed
//! checkpoint of the chain's heads); `since` and `until` are Unix milliseconds (`[since, until)`).
//!
//! `/readyz` answers `503 store_unavailable` when the store does not answer
//! or cannot take a write ([`Store::ping`](toolgate_store::Store::ping) commits a write to a probe row,
//! by the path an audit append takes: an immutable file, a full disk or a
//! lock held too long fail it); `POST /v1/decide` then denies every call
//! with `store_unavailable`: nothing is allowed without its audit record.
//! The probe runs at most once per [`READY_TTL`]; callers in between share
//! its answer, so an anonymous flood of `/readyz` is not a flood of
//! commits.
//!
//! Tokens and users: an agent token with `users` in its `[[server.token]]`
//! table may decide only for those users (the context's `user`) and wait
//! only on their approvals; anything else is `403 forbidden`, audited
//! (`forbidden`, reason `user`). A token without `users` speaks for any
//! user (the default).
//!
//! Slow clients: a request's headers must arrive within `[server]
//! header_timeout_seconds` (10 s; the connection is closed, as is an idle
//! keep-alive connection after as long), its body within
//! `body_timeout_seconds` (30 s; `408 request_timeout`). At most
//! `max_connections` (1024) connections are served at once; more wait in
//! the listener's backlog.
//!
//! Waits on an approval wake as soon as it is decided here, or in another
//! replica when the store pushes changes (PostgreSQL's `LISTEN`/`NOTIFY`),
//! and re-read the store every `[server] store_poll_ms` (200 ms) whatever
//! happens.

mod auth;
mod error;
mod extract;
pub mod live;
mod metrics;
pub mod notify;
pub mod openapi;
mod results;
mod routes;
mod serve;
mod state;
pub mod ui;
mod wire;

// The public interface is:
pub use crate::routes::app;
pub use crate::routes::approvals::MAX_WAIT;
pub use crate::routes::audit::AUDIT_KINDS;
pub use crate::routes::health::READY_TTL;
pub use crate::serve::{serve, shutdown_signal};
pub use crate::state::{AppState, BuildError};
