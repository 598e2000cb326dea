//! `toolgate proxy`: an OpenAI- and Anthropic-compatible API proxy. An
//! application changes its SDK's base URL to the proxy; the proxy forwards
//! each request to the real model API, reads the response (JSON or stream)
//! before the application does, decides every tool call with the full gate
//! and the store (each decision audited before anything is released), and
//! hands the application only the calls it may run, with the canonical
//! arguments in place of the model's text.
//!
//! | route | upstream (`[proxy]`) | gate format |
//! |---|---|---|
//! | `POST /v1/chat/completions` | `openai` | OpenAI Chat (also DeepSeek, Gemini's OpenAI endpoint, local servers) |
//! | `POST /v1/responses` | `openai` | OpenAI Responses |
//! | `POST /v1/messages` | `anthropic` | Anthropic Messages |
//! | `forward = ["GET /v1/models", "GET /v1/models/*", …]` | `openai` (`anthropic` for `/v1/messages/…` paths) | none: passed on unchanged |
//!
//! A route answered from a model's stored output (`responses.retrieve`,
//! `chat.completions.retrieve`, batch results, …) is answered `403
//! stored_output_refused` whatever `forward` lists: its calls were never
//! decided. Everything else is answered 404 and never reaches an upstream.
//! The upstream's SDK-facing headers (request ids, rate limits, retry
//! hints) pass through an allowlist on every route.
//!
//! - **The user** comes from `[proxy]`: a proxy token in `token_header`
//!   (`[[proxy.token]]`, stored as SHA-256), a header a trusted front sets
//!   (`user_header`), or one fixed `user`; never from the request body. The
//!   session is the `session_header`'s value (`default` when absent). The
//!   caller's API key (`Authorization`, `x-api-key`) goes on to the
//!   upstream and is never logged or audited.
//! - **Built from decisions**: what the application receives is made only
//!   of calls the gate decided, rebuilt from the decision, and items of the
//!   pass list ([`item_role`], one table per API for JSON and streams);
//!   any other item refuses the whole response, and its calls are audited
//!   as denied. Aggregates (a Responses terminal event's output) are
//!   rebuilt from what was released, never filtered from the upstream's.
//! - **Responses** ([`rewrite_json`]): allowed calls keep their place,
//!   rebuilt with the canonical arguments; other calls are withheld, with
//!   the model-safe feedback as assistant text (`on_deny = "feedback"`) or
//!   the whole response answered with an error in the provider's shape
//!   (`on_deny = "error"`); a `toolgate` member (toolgate's alone: an
//!   upstream's is removed) lists every call's verdict and pending approval
//!   id.
//! - **Streams** ([`Rewriter`]): each event is read whole before any of it
//!   goes on; text passes as it arrives; calls are held until the stream's
//!   terminal event, decided, then released whole or withheld. A stream
//!   that breaks, times out or cannot be read ends with an error event,
//!   never a partial call; its calls are decided (denied) and audited all
//!   the same, one record per call ([`HeldCall`]).
//! - **Requests** ([`rewrite_request`]): every item of the history is
//!   looked up in a table of known shapes per API; tool results are
//!   sanitized where their text sits, an unknown item or result part is
//!   refused (`400`, audited). Offered tools whose schema differs from
//!   the registered one are reported (and by `offered_tools` replaced or
//!   refused); DeepSeek thinking-mode pitfalls are reported or normalized.
//!   A Responses conversation continued (`previous_response_id`) past a
//!   withheld call gets that call's output supplied, with the feedback.
//! - **Faults**: an upstream that cannot be reached is `502
//!   upstream_unreachable`, one that is too slow `504 upstream_timeout`,
//!   garbage `502 response_refused`; an upstream error status is passed on
//!   as it came (it carries no call).

mod api;
#[cfg(feature = "server")]
mod continuation;
#[cfg(feature = "server")]
mod headers;
#[cfg(feature = "server")]
mod intake;
mod items;
mod members;
#[cfg(feature = "server")]
mod refused;
#[cfg(feature = "server")]
pub mod replay;
mod request;
mod rewrite;
#[cfg(feature = "server")]
mod server;
mod sse;
mod stream;
#[cfg(feature = "server")]
mod upstream;

pub use crate::api::Api;
pub use crate::items::{item_role, ItemRole, MESSAGES_BUILT_IN, RESPONSES_BUILT_IN};
pub use crate::request::{
    rewrite_request, OfferedTool, RequestNote, RequestOptions, RequestRefused, RequestReport,
    ResultFindings,
};
pub use crate::rewrite::{
    check_items, refusal, rewrite_json, rewrite_parsed, Refusal, MARKUP_REMOVED,
};
#[cfg(feature = "server")]
pub use crate::server::{serve, serve_within, Proxy, StartError};
pub use crate::sse::{Event, Reader as SseReader, SseError};
pub use crate::stream::{Broken, HeldCall, Rewriter, Step};
