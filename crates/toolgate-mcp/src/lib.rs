//! `toolgate mcp`: the gate between an MCP client and an MCP server.
//!
//! A [`Proxy`] sits between one client and one server speaking
//! newline-delimited JSON-RPC (the MCP stdio transport) and reads every
//! frame from either side with the strict parser first ([`frame`]): a
//! duplicate key anywhere, a frame over the cap or not UTF-8, a batch, is
//! answered with a JSON-RPC error and never forwarded. Then:
//!
//! - **`tools/call`** (client → server): decided by the store gate
//!   ([`toolgate_store::StoreGate::decide_and_record`] with
//!   [`toolgate::Format::Mcp`], every stage, the audit record written
//!   before the answer) as the proxy's user in its session, never as
//!   anything the request's `_meta` says. Allowed: forwarded with
//!   `params.arguments` replaced by the canonical checked value
//!   ([`toolgate::Decision::executable_args`]), never the client's bytes.
//!   Denied: answered by the proxy with `{"content":[{"type":"text","text":
//!   FEEDBACK}],"isError":true,"resultType":"complete"}`, the decision's
//!   model-safe feedback. Held for approval: answered with an `isError: true` text result naming the
//!   pending approval's id (the call did not run); once a human approves it
//!   (`toolgate approvals approve ID`), the same call retried passes, once.
//!   A call its client cancels (`notifications/cancelled`) or abandons
//!   before it is forwarded is never forwarded: its pending approval is
//!   withdrawn in the store (`toolgate_store::Store::withdraw`).
//!   A 2026-07-28 client that declares URL elicitation is answered
//!   `input_required` instead, when an approvals page is configured
//!   ([`Proxy::with_approvals_url`]): its retry carries a MACed
//!   `requestState` and passes only once the store approved the call.
//!   A registered tool whose definition in the server's latest catalog is
//!   not approved in the store (new, changed, renamed, rejected) is denied
//!   `tool_changed` (audited) without reaching the gate; the decision's
//!   context carries the definition's digest, so an approval of the call
//!   is bound to it ([`toolgate_store::bound_digest`]).
//! - **`tools/list`** (the server's result): only tools the config
//!   registers are kept; each definition is pinned in the store per
//!   upstream by the digest of its canonical form ([`pins`],
//!   [`toolgate_store::Store::observe_catalog`]), with the findings in its
//!   text (hidden Unicode, instruction-like text), and the catalog by its
//!   own digest; only approved definitions are shown (the first catalog of
//!   an upstream is approved on trust, or waits too: `[mcp] pin_first`);
//!   a shown tool is built from a pass list ([`pins::shown_definition`]):
//!   the config's `inputSchema` (the schema the gate enforces) and
//!   description when it has one, every text without hidden characters,
//!   nothing the pass list does not name. A human approves a waiting definition from a diff (`toolgate pins
//!   approve`, `POST /v1/pins/{id}/approve`); it is shown from the next
//!   list, without a restart.
//! - **`notifications/tools/list_changed`** (from the server): the proxy
//!   lists the tools itself (request id `toolgate-pins-N`), checks the pins,
//!   then passes the notification on. A call made before any list of the
//!   run waits for the same check.
//! - **results** of forwarded calls ([`results`]): rebuilt from what was
//!   read: every content block type read (an unknown one refuses the
//!   result), texts sanitized and capped, `structuredContent` sanitized and
//!   validated against the tool's declared `outputSchema` (a mismatch is an
//!   error result, audited); a JSON-RPC error from the server becomes an
//!   error result with its code only. A call the server does not answer
//!   within the timeout, or that is pending when the server exits, gets an
//!   error result (audited).
//! - everything else passes only on a pass list: client methods (tasks are
//!   refused), server requests; `resources/read` and `prompts/get` answers
//!   and sampling and elicitation requests are read like results and
//!   audited. Refused frames are audited, aggregated per kind and window.
//!
//! # Features
//!
//! - `proxy` (default): [`Proxy`] and [`spawn_server`], with the store gate
//!   and tokio's process support. Without it, [`frame`], [`pins`] and
//!   [`results`] alone (what the fuzz targets build).
//!
//! [`HttpProxy`] ([`serve_http`]) is the streamable-HTTP endpoint of
//! `toolgate mcp --listen`: client bearer tokens name the user, both spec
//! eras are served (2025-11-25 sessions, 2026-07-28 stateless requests
//! whose mirrored headers must match the body), and each session runs the
//! same [`Proxy`] over its own connection to the configured upstreams (a
//! stdio child, or a streamable-HTTP server; several joined into one, with
//! prefixed tool names).
//!
//! A paginated `tools/list` is one catalog: the proxy reads every page
//! itself and pins each tool across all of them.
//!
//! A server's own `input_required` result (2026-07-28) is relayed, read
//! like a server request; the client's retry is decided as any call, and
//! the retry of a call a human approved continues it without a second
//! approval.

#[cfg(feature = "proxy")]
mod era;
#[cfg(feature = "proxy")]
mod http_server;
#[cfg(feature = "proxy")]
mod proxy;
#[cfg(feature = "proxy")]
mod refusals;
#[cfg(feature = "proxy")]
mod upstream;

pub mod frame;
pub mod pins;
pub mod results;

// The public interface is:
#[cfg(feature = "proxy")]
pub use crate::http_server::{
    serve as serve_http, serve_within as serve_http_within, HttpProxy, StartError, DRAIN_TIMEOUT,
    ENDPOINT, HEADER_MISMATCH, LEGACY_VERSIONS, MODERN_VERSION, UNSUPPORTED_PROTOCOL_VERSION,
};
#[cfg(feature = "proxy")]
pub use crate::proxy::{spawn_server, Ended, Proxy, ProxyOptions};
