//! Fetching a JWKS from its URL: one `GET`, a `200` answer of at most
//! [`MAX_JWKS_BYTES`], within [`FETCH_TIMEOUT`], no redirects.

use axum::body::Bytes;
use http_body_util::{BodyExt as _, Empty, Full, Limited};
use hyper::{header, Request, StatusCode, Uri};
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

use super::keys::{KeySet, MAX_JWKS_BYTES};
use super::FETCH_TIMEOUT;

type Https = hyper_rustls::HttpsConnector<HttpConnector>;

pub(super) struct Fetcher {
    uri: Uri,
    client: Client<Https, Empty<Bytes>>,
}

impl Fetcher {
    pub(super) fn new(url: &str) -> Result<Self, String> {
        let uri: Uri = url
            .parse()
            .map_err(|_| "the URL does not parse".to_owned())?;
        let mut http = HttpConnector::new();
        http.enforce_http(false);
        http.set_connect_timeout(Some(FETCH_TIMEOUT));
        let connector = hyper_rustls::HttpsConnectorBuilder::new()
            .with_webpki_roots()
            .https_or_http()
            .enable_http1()
            .wrap_connector(http);
        let client = Client::builder(TokioExecutor::new()).build(connector);
        Ok(Self { uri, client })
    }

    /// One fetch of the keys.
    pub(super) async fn fetch(&self) -> Result<KeySet, String> {
        let request = Request::get(self.uri.clone())
            .header(header::ACCEPT, "application/json")
            .body(Empty::new())
            .map_err(|_| "cannot make the request".to_owned())?;
        let exchange = async {
            let response = self
                .client
                .request(request)
                .await
                .map_err(|e| format!("the fetch failed: {e}"))?;
            if response.status() != StatusCode::OK {
                return Err(format!(
                    "the server answered {} (200 was expected)",
                    response.status().as_u16()
                ));
            }
            let body = Limited::new(response.into_body(), MAX_JWKS_BYTES)
                .collect()
                .await
                .map_err(|_| {
                    format!("the answer is larger than {MAX_JWKS_BYTES} bytes or broke off")
                })?
                .to_bytes();
            KeySet::parse(&body)
        };
        tokio::time::timeout(FETCH_TIMEOUT, exchange)
            .await
            .map_err(|_| format!("no answer within {} seconds", FETCH_TIMEOUT.as_secs()))?
    }
}

/// One `POST` of an `application/x-www-form-urlencoded` `form` to `url`
/// (an OpenID provider's token endpoint): the answer's status and body, at
/// most [`MAX_JWKS_BYTES`], within [`FETCH_TIMEOUT`], no redirects.
pub async fn post_form(url: &str, form: String) -> Result<(u16, Bytes), String> {
    post_form_with(url, form, None).await
}

/// [`post_form`] with an `Authorization` header (a confidential client's
/// `client_secret_basic`).
pub async fn post_form_with(
    url: &str,
    form: String,
    authorization: Option<&str>,
) -> Result<(u16, Bytes), String> {
    let uri: Uri = url
        .parse()
        .map_err(|_| "the URL does not parse".to_owned())?;
    let mut http = HttpConnector::new();
    http.enforce_http(false);
    http.set_connect_timeout(Some(FETCH_TIMEOUT));
    let connector = hyper_rustls::HttpsConnectorBuilder::new()
        .with_webpki_roots()
        .https_or_http()
        .enable_http1()
        .wrap_connector(http);
    let client: Client<Https, Full<Bytes>> = Client::builder(TokioExecutor::new()).build(connector);
    let mut request = Request::post(uri)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "application/json");
    if let Some(value) = authorization {
        request = request.header(header::AUTHORIZATION, value);
    }
    let request = request
        .body(Full::new(Bytes::from(form)))
        .map_err(|_| "cannot make the request".to_owned())?;
    let exchange = async {
        let response = client
            .request(request)
            .await
            .map_err(|e| format!("the request failed: {e}"))?;
        let status = response.status().as_u16();
        let body = Limited::new(response.into_body(), MAX_JWKS_BYTES)
            .collect()
            .await
            .map_err(|_| format!("the answer is larger than {MAX_JWKS_BYTES} bytes or broke off"))?
            .to_bytes();
        Ok((status, body))
    };
    tokio::time::timeout(FETCH_TIMEOUT, exchange)
        .await
        .map_err(|_| format!("no answer within {} seconds", FETCH_TIMEOUT.as_secs()))?
}

/// One `GET` of `url` (an OpenID provider's discovery document): the
/// answer's status and body, at most [`MAX_JWKS_BYTES`], within
/// [`FETCH_TIMEOUT`], no redirects.
pub async fn get(url: &str) -> Result<(u16, Bytes), String> {
    let fetcher = Fetcher::new(url)?;
    let request = Request::get(fetcher.uri.clone())
        .header(header::ACCEPT, "application/json")
        .body(Empty::new())
        .map_err(|_| "cannot make the request".to_owned())?;
    let exchange = async {
        let response = fetcher
            .client
            .request(request)
            .await
            .map_err(|e| format!("the request failed: {e}"))?;
        let status = response.status().as_u16();
        let body = Limited::new(response.into_body(), MAX_JWKS_BYTES)
            .collect()
            .await
            .map_err(|_| format!("the answer is larger than {MAX_JWKS_BYTES} bytes or broke off"))?
            .to_bytes();
        Ok((status, body))
    };
    tokio::time::timeout(FETCH_TIMEOUT, exchange)
        .await
        .map_err(|_| format!("no answer within {} seconds", FETCH_TIMEOUT.as_secs()))?
}
