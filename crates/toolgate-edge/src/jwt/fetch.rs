//! Fetching a JWKS from its URL: one `GET`, a `200` answer of at most
//! [`MAX_JWKS_BYTES`], within [`FETCH_TIMEOUT`], no redirects (the edge's
//! one [`Outbound`] client).

use axum::body::Bytes;
use http_body_util::Full;
use hyper::{header, Request, StatusCode, Uri};

use super::keys::{KeySet, MAX_JWKS_BYTES};
use super::FETCH_TIMEOUT;
use crate::outbound::{self, Outbound};

fn client() -> Outbound {
    Outbound::new()
        .with_deadline(FETCH_TIMEOUT)
        .with_max_body(MAX_JWKS_BYTES)
}

pub(super) struct Fetcher {
    url: String,
    client: Outbound,
}

impl Fetcher {
    pub(super) fn new(url: &str) -> Result<Self, String> {
        url.parse::<Uri>()
            .map_err(|_| "the URL does not parse".to_owned())?;
        Ok(Self {
            url: url.to_owned(),
            client: client(),
        })
    }

    /// One fetch of the keys.
    pub(super) async fn fetch(&self) -> Result<KeySet, String> {
        let request = outbound::get(&self.url, "application/json")
            .map_err(|_| "cannot make the request".to_owned())?;
        let response = self
            .client
            .send(request)
            .await
            .map_err(|e| format!("the fetch failed: {e}"))?;
        if response.status() != StatusCode::OK {
            return Err(format!(
                "the server answered {} (200 was expected)",
                response.status().as_u16()
            ));
        }
        KeySet::parse(response.body())
    }
}

/// One `POST` of an `application/x-www-form-urlencoded` `form` to `url`
/// (an OpenID provider's token endpoint): the answer's status and body, at
/// most [`MAX_JWKS_BYTES`], within [`FETCH_TIMEOUT`], no redirects.
///
/// # Errors
///
/// Why no answer came (never naming the URL).
pub async fn post_form(url: &str, form: String) -> Result<(u16, Bytes), String> {
    post_form_with(url, form, None).await
}

/// [`post_form`] with an `Authorization` header (a confidential client's
/// `client_secret_basic`).
///
/// # Errors
///
/// Why no answer came (never naming the URL).
pub async fn post_form_with(
    url: &str,
    form: String,
    authorization: Option<&str>,
) -> Result<(u16, Bytes), String> {
    let uri: Uri = url
        .parse()
        .map_err(|_| "the URL does not parse".to_owned())?;
    let mut request = Request::post(uri)
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(header::ACCEPT, "application/json");
    if let Some(value) = authorization {
        request = request.header(header::AUTHORIZATION, value);
    }
    let request = request
        .body(Full::new(Bytes::from(form)))
        .map_err(|_| "cannot make the request".to_owned())?;
    let response = client()
        .send(request)
        .await
        .map_err(|e| format!("the request failed: {e}"))?;
    Ok((response.status().as_u16(), response.into_body()))
}

/// One `GET` of `url` (an OpenID provider's discovery document): the
/// answer's status and body, at most [`MAX_JWKS_BYTES`], within
/// [`FETCH_TIMEOUT`], no redirects.
///
/// # Errors
///
/// Why no answer came (never naming the URL).
pub async fn get(url: &str) -> Result<(u16, Bytes), String> {
    url.parse::<Uri>()
        .map_err(|_| "the URL does not parse".to_owned())?;
    let request =
        outbound::get(url, "application/json").map_err(|_| "cannot make the request".to_owned())?;
    let response = client()
        .send(request)
        .await
        .map_err(|e| format!("the request failed: {e}"))?;
    Ok((response.status().as_u16(), response.into_body()))
}
