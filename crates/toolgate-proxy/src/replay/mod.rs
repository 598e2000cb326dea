//! `toolgate replay`: a stand-in model server that answers the three gated
//! routes with recorded response bodies, so that the proxy, an SDK or a CI
//! job runs without a model API.
//!
//! A folder of recordings holds `replay.toml` and the bodies it names:
//!
//! ```toml
//! [[recording]]
//! route = "POST /v1/chat/completions"   # or "POST /v1/responses", "POST /v1/messages"
//! user = "Find waterproof hiking boots" # the request's last user message (optional)
//! model = "gpt-4.1"                     # the request's `model` (optional)
//! body = "search.json"                  # `.json`: a JSON body; `.sse`: an event stream
//! status = 200                          # optional; a JSON body may carry an error status
//! ```
//!
//! **The matching rule.** A request is answered with the first recording,
//! in file order, whose route is the request's method and path; whose body
//! is an event stream (`.sse`) exactly when the request says `"stream":
//! true`; whose `model`, when given, is the request's `model`; and whose
//! `user`, when given, is the text of the request's last user message (see
//! [`last_user_text`]). A request no recording matches is refused with
//! `404 no_recording`, naming what it was matched on; nothing is guessed.
//!
//! **Bounds.** `replay.toml` is at most 1 MiB with at most 1,024
//! recordings; each body at most 16 MiB, all of them together at most
//! 256 MiB; a request body at most `--max-request-bytes` (default 8 MiB).
//! Every body is checked when the folder loads (strict JSON; an event
//! stream of whole events whose data is strict JSON or `[DONE]`), and a
//! recording that can never be served (an earlier one matches every request
//! it matches) does not load.

mod load;
mod matching;
mod serve;

pub use load::{
    LoadError, Recording, Recordings, MANIFEST, MAX_MANIFEST_BYTES, MAX_RECORDINGS,
    MAX_RECORDING_BYTES, MAX_TOTAL_BYTES,
};
pub use matching::{last_user_text, Asked, NoMatch};
pub use serve::{router, serve, DEFAULT_MAX_REQUEST_BYTES};
