//! toolgate's network edge: the one listener every front end serves on
//! (`toolgate serve`, `toolgate mcp --listen`, `toolgate proxy`).
//!
//! # The contract
//!
//! A front end hands [`serve`] its router, its [`Limits`] and a shutdown
//! future; the edge then holds these promises for every connection, the same
//! way for every front end:
//!
//! - **Connection cap.** At most [`Limits::max_connections`] connections are
//!   served at once; the others wait in the listener's backlog.
//! - **Per-address budget.** With [`Limits::per_address`], one peer address
//!   holds at most that many connections; one more is closed as soon as it is
//!   accepted (off by default: behind a reverse proxy every caller shares one
//!   address).
//! - **Pre-authentication budget.** A connection that has not yet made an
//!   authenticated request is *anonymous*. Anonymous connections hold at
//!   most three quarters of the cap (at least one); when one more arrives,
//!   the oldest anonymous connection of the address that holds the most of
//!   them is closed (after the request it is serving, if any). A flood of
//!   idle connections, scanners or unauthenticated requests therefore never
//!   keeps a caller with a valid token waiting, and one noisy address closes
//!   its own connections before anyone else's. A front end says a request
//!   was authenticated with [`authenticated`].
//! - **Header deadline.** A request's headers must arrive within
//!   [`Limits::header_timeout`], else the connection is closed.
//! - **Body deadline.** A request's body must arrive within
//!   [`Limits::body_timeout`] of its headers: past it, reading the body
//!   fails with an error for which [`is_body_deadline`] is true (front ends
//!   answer `408`).
//! - **Graceful stop.** When the shutdown future resolves, the listener is
//!   closed, the front end's own stop runs (ending long polls, event
//!   streams, sessions), every request in flight finishes, idle connections
//!   close, and [`serve`] returns once every connection is closed (or, with
//!   [`Limits::drain_timeout`], once that has passed).
//!
//! The edge also holds the one rule for presented tokens ([`token`]: one
//! header, one spelling, a SHA-256 compared in constant time with every
//! configured hash), and the one rule for JWT bearer tokens from an
//! identity provider ([`jwt`]: a JWKS, an `alg` allowlist, issuer,
//! audience, expiry, the user and role claims), so that the three front
//! ends accept and refuse the same requests.
//!
//! Toolgate's own outbound requests (JWKS, an OpenID token endpoint,
//! approval notices, OTLP exports) go through one client, [`Outbound`]: the
//! same deadlines, body bound, refusal of redirects and TLS roots for all.
//!
//! The front ends' config tables are the edge's too ([`config`]): the
//! values of `[server]`, `[proxy]`, `[mcp]`, `[jwt]`, `[login]`, `[oidc]`
//! and `[telemetry]`, and the rules they share (a token's hash, a listen
//! address, a header name, a user name), checked with their positions by
//! every front end right after the config loads. Without the default `net` feature the
//! crate is those tables alone (the API proxy's rewriters build it so).
//!
//! # Example
//!
//! ```no_run
//! # async fn run() -> std::io::Result<()> {
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! let router = axum::Router::new();
//! let limits = toolgate_edge::Limits::new()
//!     .max_connections(64)
//!     .header_timeout(std::time::Duration::from_secs(5));
//! toolgate_edge::serve(listener, router, limits, std::future::pending(), || async {}).await
//! # }
//! ```

#[cfg(feature = "net")]
mod admission;
#[cfg(feature = "net")]
mod body;
pub mod config;
#[cfg(feature = "net")]
mod event_stream;
#[cfg(feature = "net")]
pub mod jwt;
#[cfg(feature = "net")]
mod limits;
#[cfg(feature = "net")]
mod listener;
#[cfg(feature = "net")]
pub mod log;
#[cfg(feature = "net")]
pub mod outbound;
mod start;
#[cfg(feature = "net")]
pub mod token;

#[cfg(feature = "net")]
pub use admission::{authenticated, peer_address};
#[cfg(feature = "net")]
pub use body::{is_body_deadline, BodyDeadline};
#[cfg(feature = "net")]
pub use event_stream::event_stream;
#[cfg(feature = "net")]
pub use limits::Limits;
#[cfg(feature = "net")]
pub use listener::serve;
#[cfg(feature = "net")]
pub use outbound::{Outbound, OutboundError};
pub use start::StartError;
