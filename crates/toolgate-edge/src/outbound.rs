//! The one HTTP client for toolgate's own outbound requests (a JWKS fetch,
//! an OpenID provider's token endpoint, an approval notice to a webhook or
//! Slack, an OTLP export): everything that is not a proxy's upstream path.
//! The proxies' upstream path goes through [`upstream_client`], on the same
//! connector and TLS roots.
//!
//! # The contract
//!
//! Every [`Outbound`] client keeps the same promises, whoever made it:
//!
//! - **TLS roots.** `https://` is verified against the Web PKI roots
//!   (rustls on ring, the same stack the edge serves with); `http://` is
//!   allowed for operators who point at a local receiver.
//! - **Deadlines.** Connecting takes at most [`Outbound::deadline`], and so
//!   does the whole exchange: request, answer headers and the answer's body.
//!   Past it the request fails with [`OutboundError::Deadline`].
//! - **Body bound.** An answer's body is read up to [`Outbound::max_body`]
//!   bytes; one byte more (announced or streamed) fails with
//!   [`OutboundError::TooLarge`], so a receiver cannot make toolgate hold
//!   more. [`Outbound::status`] drops the body unread.
//! - **No redirects.** A `3xx` answer is never followed: it fails with
//!   [`OutboundError::Redirect`], so a receiver cannot point a request (with
//!   its signature or its form) somewhere else.
//! - **Quiet errors.** An error's text never names the URL (a sink's URL can
//!   be a secret) nor repeats the answer.

use std::fmt;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::{Request, Response, StatusCode};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

type Https = hyper_rustls::HttpsConnector<HttpConnector>;

/// The client a proxy forwards its upstream path with (`toolgate proxy`'s
/// model APIs, `toolgate mcp --listen`'s `url` upstreams).
pub type UpstreamClient = Client<Https, Full<Bytes>>;

/// The connector of every outbound client: `https://` verified against the
/// Web PKI roots (rustls on ring), `http://` allowed, HTTP/1, no delay.
fn connector(connect_timeout: Option<Duration>) -> Https {
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(connect_timeout);
    hyper_rustls::HttpsConnectorBuilder::new()
        .with_webpki_roots()
        .https_or_http()
        .enable_http1()
        .wrap_connector(http)
}

/// A client for a proxy's upstream path: the same TLS roots and connector
/// as [`Outbound`], without its deadline and body bound (a proxy bounds
/// each upstream exchange by its own table's timeouts and caps).
#[must_use]
pub fn upstream_client() -> UpstreamClient {
    Client::builder(TokioExecutor::new()).build(connector(None))
}

/// The deadline of a client made with [`Outbound::new`].
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(10);
/// The body bound of a client made with [`Outbound::new`].
pub const DEFAULT_MAX_BODY: usize = 64 * 1024;

/// Why an outbound request gave no answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutboundError {
    /// The request could not be built (a URL that does not parse).
    Request,
    /// No connection could be made.
    Connect,
    /// The connection broke before a whole answer arrived.
    Failed,
    /// No whole answer within the deadline.
    Deadline(Duration),
    /// The answer was a redirect (its status), which is never followed.
    Redirect(u16),
    /// The answer's body was larger than the bound (the bound).
    TooLarge(usize),
}

impl OutboundError {
    /// Whether trying again later may succeed (no connection, a broken
    /// one, or no answer in time).
    #[must_use]
    pub fn is_transient(self) -> bool {
        matches!(self, Self::Connect | Self::Failed | Self::Deadline(_))
    }
}

impl fmt::Display for OutboundError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Request => f.write_str("the request cannot be built"),
            Self::Connect => f.write_str("cannot connect"),
            Self::Failed => f.write_str("the connection failed"),
            Self::Deadline(d) => write!(f, "no answer within {} ms", d.as_millis()),
            Self::Redirect(s) => write!(f, "redirect {s} not followed"),
            Self::TooLarge(n) => write!(f, "the answer is larger than {n} bytes"),
        }
    }
}

impl std::error::Error for OutboundError {}

/// An HTTP/1.1 client for toolgate's own requests. Cloning is cheap and
/// shares the connection pool.
#[derive(Clone)]
pub struct Outbound {
    client: Client<Https, Full<Bytes>>,
    deadline: Duration,
    max_body: usize,
}

impl fmt::Debug for Outbound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Outbound")
            .field("deadline", &self.deadline)
            .field("max_body", &self.max_body)
            .finish_non_exhaustive()
    }
}

impl Default for Outbound {
    fn default() -> Self {
        Self::new()
    }
}

impl Outbound {
    /// A client with [`DEFAULT_DEADLINE`] and [`DEFAULT_MAX_BODY`].
    #[must_use]
    pub fn new() -> Self {
        // Connecting is bounded again by each request's deadline; this one
        // only keeps a connection attempt from outliving the longest.
        let connector = connector(Some(Duration::from_secs(60)));
        Self {
            client: Client::builder(TokioExecutor::new()).build(connector),
            deadline: DEFAULT_DEADLINE,
            max_body: DEFAULT_MAX_BODY,
        }
    }

    /// The same client (and pool) with another deadline for the whole
    /// exchange.
    #[must_use]
    pub fn with_deadline(&self, deadline: Duration) -> Self {
        Self {
            deadline,
            ..self.clone()
        }
    }

    /// The same client (and pool) with another body bound.
    #[must_use]
    pub fn with_max_body(&self, max_body: usize) -> Self {
        Self {
            max_body,
            ..self.clone()
        }
    }

    /// The deadline for connecting and for the whole exchange.
    #[must_use]
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// The most bytes of an answer's body that are read.
    #[must_use]
    pub fn max_body(&self) -> usize {
        self.max_body
    }

    /// Sends `request` and reads the whole answer (a body of at most
    /// [`Outbound::max_body`] bytes), all within the deadline.
    ///
    /// # Errors
    ///
    /// [`OutboundError`]: no connection, a broken one, the deadline, a
    /// redirect or a body over the bound.
    pub async fn send(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<Response<Bytes>, OutboundError> {
        let max = self.max_body;
        let exchange = async {
            let response = self.answer(request).await?;
            let (parts, body) = response.into_parts();
            let body = match Limited::new(body, max).collect().await {
                Ok(collected) => collected.to_bytes(),
                Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                    return Err(OutboundError::TooLarge(max));
                }
                Err(_) => return Err(OutboundError::Failed),
            };
            Ok(Response::from_parts(parts, body))
        };
        tokio::time::timeout(self.deadline, exchange)
            .await
            .map_err(|_| OutboundError::Deadline(self.deadline))?
    }

    /// Sends `request` and returns the answer's status within the deadline;
    /// the body is dropped unread (for receivers whose answer decides
    /// nothing but delivery).
    ///
    /// # Errors
    ///
    /// As [`Outbound::send`], without the body bound.
    pub async fn status(&self, request: Request<Full<Bytes>>) -> Result<StatusCode, OutboundError> {
        tokio::time::timeout(self.deadline, self.answer(request))
            .await
            .map_err(|_| OutboundError::Deadline(self.deadline))?
            .map(|r| r.status())
    }

    async fn answer(
        &self,
        request: Request<Full<Bytes>>,
    ) -> Result<Response<hyper::body::Incoming>, OutboundError> {
        let response = self.client.request(request).await.map_err(|e| {
            if e.is_connect() {
                OutboundError::Connect
            } else {
                OutboundError::Failed
            }
        })?;
        let status = response.status();
        if status.is_redirection() {
            return Err(OutboundError::Redirect(status.as_u16()));
        }
        Ok(response)
    }
}

/// A `GET` of `url` with `accept`, ready for [`Outbound::send`].
///
/// # Errors
///
/// [`OutboundError::Request`] when `url` does not parse.
pub fn get(url: &str, accept: &str) -> Result<Request<Full<Bytes>>, OutboundError> {
    let uri: hyper::Uri = url.parse().map_err(|_| OutboundError::Request)?;
    Request::get(uri)
        .header(hyper::header::ACCEPT, accept)
        .body(Full::new(Bytes::new()))
        .map_err(|_| OutboundError::Request)
}
