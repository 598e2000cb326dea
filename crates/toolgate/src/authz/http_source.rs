//! The HTTP entity source: `GET <base>/<type>/<id>` answers one entity's
//! Cedar JSON (`200`), or none (`404`).

use std::io::{Read as _, Write as _};
use std::net::{SocketAddr, TcpStream, ToSocketAddrs as _};
use std::time::{Duration, Instant};

use url::Url;

use super::source::{EntitySource, SourceError, SourceErrorKind};

/// The most bytes of an answer's status line and headers read.
const MAX_HEAD_BYTES: usize = 16 << 10;

/// Fetches entities from an HTTP endpoint the operator runs beside the
/// system of record: `GET <base>/<type>/<id>` (each a percent-encoded path
/// segment; `Shop::Order` is one segment), answered `200` with the entity's
/// Cedar JSON (`application/json`), or `404` when there is no such entity.
///
/// Plain `http://` only (a service on the gate's own network; put TLS in
/// front of it with a local proxy if the path is not trusted). One request
/// per fetch, HTTP/1.0 with `Connection: close`: the whole exchange
/// (resolving, connecting, sending, reading) must end within the timeout,
/// and an answer longer than `max_bytes` is refused, not truncated. Any
/// other status, a redirect included, is `unavailable`.
#[derive(Debug, Clone)]
pub struct HttpSource {
    base: Url,
    timeout: Duration,
    max_bytes: usize,
}

impl HttpSource {
    /// A source at `base` (an `http://` URL with a host, no query or
    /// fragment, no user or password).
    pub fn new(base: &str, timeout: Duration, max_bytes: usize) -> Result<Self, String> {
        let url = Url::parse(base).map_err(|e| format!("`{base}` is not a URL: {e}"))?;
        if url.scheme() != "http" {
            return Err(format!(
                "`{base}`: an HTTP entity source is `http://` (plain HTTP on the gate's network)"
            ));
        }
        if url.host().is_none()
            || url.query().is_some()
            || url.fragment().is_some()
            || !url.username().is_empty()
            || url.password().is_some()
        {
            return Err(format!(
                "`{base}`: the base URL has a host and no query, fragment, user or password"
            ));
        }
        Ok(Self {
            base: url,
            timeout,
            max_bytes,
        })
    }

    /// The URL of one entity.
    fn url_of(&self, entity_type: &str, id: &str) -> Result<Url, SourceError> {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .map_err(|()| SourceError::new(SourceErrorKind::Unavailable, "base URL has no path"))?
            .pop_if_empty()
            .push(entity_type)
            .push(id);
        Ok(url)
    }

    fn get(&self, url: &Url) -> Result<(u16, Vec<u8>), SourceError> {
        let deadline = Instant::now() + self.timeout;
        let remaining = || {
            deadline
                .checked_duration_since(Instant::now())
                .filter(|d| !d.is_zero())
                .ok_or_else(|| SourceError::new(SourceErrorKind::Timeout, "no answer in time"))
        };
        let host = url.host_str().unwrap_or_default();
        let port = url.port_or_known_default().unwrap_or(80);
        let addrs = resolve(host, port, remaining()?)?;
        let mut stream = None;
        let mut last = unavailable(format!("`{host}` has no address"));
        for addr in addrs {
            match TcpStream::connect_timeout(&addr, remaining()?) {
                Ok(s) => {
                    stream = Some(s);
                    break;
                }
                Err(e) => last = io_error(&format!("cannot connect to `{host}:{port}`"), &e),
            }
        }
        let mut stream = stream.ok_or(last)?;
        stream
            .set_write_timeout(Some(remaining()?))
            .map_err(|e| unavailable(e.to_string()))?;
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_owned(),
        };
        let request = format!(
            "GET {path} HTTP/1.0\r\nHost: {}\r\nAccept: application/json\r\nConnection: close\r\n\r\n",
            url.host_str().map_or_else(String::new, |h| match url.port() {
                Some(p) => format!("{h}:{p}"),
                None => h.to_owned(),
            })
        );
        stream
            .write_all(request.as_bytes())
            .map_err(|e| io_error("cannot send the request", &e))?;
        let limit = MAX_HEAD_BYTES + self.max_bytes;
        let mut answer = Vec::new();
        let mut buf = [0_u8; 8192];
        loop {
            stream
                .set_read_timeout(Some(remaining()?))
                .map_err(|e| unavailable(e.to_string()))?;
            let n = stream
                .read(&mut buf)
                .map_err(|e| io_error("cannot read the answer", &e))?;
            if n == 0 {
                break;
            }
            answer.extend_from_slice(buf.get(..n).unwrap_or_default());
            if answer.len() > limit {
                return Err(SourceError::new(
                    SourceErrorKind::TooLarge,
                    format!("the answer is over {} bytes", self.max_bytes),
                ));
            }
            // Head read and too large already by its declared length.
            if let Some((_, head_len, length)) = head(&answer)? {
                if length.is_some_and(|l| l > self.max_bytes) {
                    return Err(SourceError::new(
                        SourceErrorKind::TooLarge,
                        format!("the answer declares over {} bytes", self.max_bytes),
                    ));
                }
                if length.is_some_and(|l| answer.len() >= head_len + l) {
                    break;
                }
            }
        }
        let Some((status, head_len, length)) = head(&answer)? else {
            return Err(malformed("the answer ended inside its head"));
        };
        let body = answer.get(head_len..).unwrap_or_default();
        if body.len() > self.max_bytes {
            return Err(SourceError::new(
                SourceErrorKind::TooLarge,
                format!("the answer is over {} bytes", self.max_bytes),
            ));
        }
        if let Some(l) = length {
            if body.len() != l {
                return Err(malformed("the answer's length is not its Content-Length"));
            }
        }
        Ok((status, body.to_vec()))
    }
}

/// The addresses of `host`, within `timeout`: an IP literal at once, a
/// name on a thread of its own (the system's lookup takes no deadline; a
/// lookup past it is left to finish alone, its answer unused).
fn resolve(host: &str, port: u16, timeout: Duration) -> Result<Vec<SocketAddr>, SourceError> {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    if let Ok(ip) = bare.parse::<std::net::IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let (tx, rx) = std::sync::mpsc::channel();
    let name = bare.to_owned();
    std::thread::Builder::new()
        .name("toolgate-resolve".to_owned())
        .spawn(move || {
            let found = (name.as_str(), port)
                .to_socket_addrs()
                .map(Iterator::collect::<Vec<_>>);
            let _ = tx.send(found);
        })
        .map_err(|e| unavailable(format!("cannot resolve `{host}`: {e}")))?;
    match rx.recv_timeout(timeout) {
        Ok(Ok(addrs)) => Ok(addrs),
        Ok(Err(e)) => Err(unavailable(format!("cannot resolve `{host}`: {e}"))),
        Err(_) => Err(SourceError::new(
            SourceErrorKind::Timeout,
            format!("`{host}` did not resolve in time"),
        )),
    }
}

/// The status, the head's length and the declared `Content-Length`, once
/// the head is complete.
fn head(answer: &[u8]) -> Result<Option<(u16, usize, Option<usize>)>, SourceError> {
    let Some(end) = answer.windows(4).position(|w| w == b"\r\n\r\n") else {
        if answer.len() > MAX_HEAD_BYTES {
            return Err(malformed("the answer's head is too long"));
        }
        return Ok(None);
    };
    let text = std::str::from_utf8(answer.get(..end).unwrap_or_default())
        .map_err(|_| malformed("the answer's head is not text"))?;
    let mut lines = text.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.split(' ');
    let (Some(version), Some(code)) = (parts.next(), parts.next()) else {
        return Err(malformed("no status line"));
    };
    if !version.starts_with("HTTP/1.") || code.len() != 3 {
        return Err(malformed("no HTTP/1 status line"));
    }
    let status: u16 = code.parse().map_err(|_| malformed("no status code"))?;
    let mut length = None;
    for line in lines {
        let Some((name, value)) = line.split_once(':') else {
            return Err(malformed("a header line without `:`"));
        };
        if name.eq_ignore_ascii_case("content-length") {
            if length.is_some() {
                return Err(malformed("two Content-Length headers"));
            }
            length = Some(
                value
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| malformed("a Content-Length that is not a number"))?,
            );
        } else if name.eq_ignore_ascii_case("transfer-encoding") {
            return Err(malformed(
                "a Transfer-Encoding answer to an HTTP/1.0 request",
            ));
        }
    }
    Ok(Some((status, end + 4, length)))
}

fn malformed(what: &str) -> SourceError {
    SourceError::new(SourceErrorKind::Malformed, what)
}

fn unavailable(what: String) -> SourceError {
    SourceError::new(SourceErrorKind::Unavailable, what)
}

/// An I/O error while `doing`: a timeout when the socket timed out.
fn io_error(doing: &str, e: &std::io::Error) -> SourceError {
    let kind = match e.kind() {
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock => SourceErrorKind::Timeout,
        _ => SourceErrorKind::Unavailable,
    };
    SourceError::new(kind, format!("{doing}: {e}"))
}

impl EntitySource for HttpSource {
    fn fetch(&self, entity_type: &str, id: &str) -> Result<Option<String>, SourceError> {
        let url = self.url_of(entity_type, id)?;
        let (status, body) = self.get(&url)?;
        match status {
            200 => String::from_utf8(body)
                .map(Some)
                .map_err(|_| malformed("the answer is not UTF-8")),
            404 => Ok(None),
            other => Err(unavailable(format!("the endpoint answered {other}"))),
        }
    }
}
