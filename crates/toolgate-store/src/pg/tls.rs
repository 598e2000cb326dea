//! TLS to PostgreSQL: `sslmode` and `sslrootcert` read from the connection
//! string as libpq reads them, and a rustls client configured to match.
//!
//! | `sslmode` | encrypted | server certificate |
//! | --- | --- | --- |
//! | `disable` | never | – |
//! | `prefer` (the default, as in libpq) | when the server offers TLS, else plaintext | not checked, unless a root certificate is given (then as `verify-ca`) |
//! | `require` | always (a server without TLS is refused) | not checked, unless a root certificate is given (then as `verify-ca`) |
//! | `verify-ca` | always | its chain must lead to a root of `sslrootcert`; the host name is not checked |
//! | `verify-full` | always | as `verify-ca`, and it must name the host connected to |
//!
//! Exactly libpq's meaning, including its weak points: `prefer` and
//! `require` without a root certificate encrypt but do not authenticate the
//! server (whoever sits between can present any certificate). Use
//! `verify-full` against anything but a trusted network.
//!
//! `sslrootcert=PATH` names a PEM file of trusted roots; `sslrootcert=system`
//! takes the operating system's roots and, as in libpq, only with
//! `verify-full` (anyone can get a publicly trusted certificate for some
//! name). Without `sslrootcert`, libpq's default file
//! `~/.postgresql/root.crt` is used when it exists, and `verify-ca` or
//! `verify-full` without any root certificate is refused at open. libpq's
//! `allow` (plaintext first) is refused, as are client certificates
//! (`sslcert`, `sslkey`, `sslpassword`) and `sslcrl`: a connection string
//! asking for what this client does not do fails at open, never later and
//! never weaker. The `PGSSLMODE` family of environment variables is not
//! read. Differences from libpq, all stricter: under `prefer`, a TLS
//! handshake that fails is an error (libpq retries in plaintext), and a
//! Unix-socket host with a mode that requires TLS fails (the server offers
//! none there).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::error::{Error, ErrorCode};

/// libpq's `sslmode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Result<Self, Error> {
        Ok(match value {
            "disable" => Self::Disable,
            "prefer" => Self::Prefer,
            "require" => Self::Require,
            "verify-ca" => Self::VerifyCa,
            "verify-full" => Self::VerifyFull,
            "allow" => {
                return Err(invalid(
                    "`sslmode=allow` is not supported (it tries plaintext first): use \
                     `disable`, `prefer`, `require`, `verify-ca` or `verify-full`",
                ))
            }
            _ => {
                return Err(invalid(format!(
                    "`sslmode` must be disable, prefer, require, verify-ca or verify-full, \
                     not `{}`",
                    value.escape_debug()
                )))
            }
        })
    }

    /// The mode the PostgreSQL driver runs: it knows only whether TLS is
    /// off, opportunistic or required; what is checked is the rustls
    /// configuration's business.
    fn driver_mode(self) -> &'static str {
        match self {
            Self::Disable => "disable",
            Self::Prefer => "prefer",
            Self::Require | Self::VerifyCa | Self::VerifyFull => "require",
        }
    }

    /// The `sslmode` as written.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Disable => "disable",
            Self::Prefer => "prefer",
            Self::Require => "require",
            Self::VerifyCa => "verify-ca",
            Self::VerifyFull => "verify-full",
        }
    }
}

/// Where the trusted roots come from.
#[derive(Clone, Debug, PartialEq, Eq)]
enum RootCert {
    File(PathBuf),
    System,
}

/// What a connection string asks of TLS.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TlsSettings {
    mode: SslMode,
    root: Option<RootCert>,
}

/// Splits `url` into the connection string the driver reads (with a
/// `sslmode` it knows, and no `sslrootcert`) and the TLS settings.
pub(crate) fn split(url: &str) -> Result<(String, TlsSettings), Error> {
    let (rest, mut picked) = if let Some((base, query)) = url_form(url) {
        let (kept, picked) = split_query(query)?;
        let rest = if kept.is_empty() {
            base.to_owned()
        } else {
            format!("{base}?{}", kept.join("&"))
        };
        (rest, picked)
    } else {
        split_key_values(url)?
    };
    let mode = match picked.mode.take() {
        Some(m) => SslMode::parse(&m)?,
        None => SslMode::Prefer,
    };
    let root = match picked.root.take() {
        Some(r) if r == "system" => Some(RootCert::System),
        Some(r) if r.is_empty() => return Err(invalid("`sslrootcert` is empty")),
        Some(r) => Some(RootCert::File(PathBuf::from(r))),
        None => None,
    };
    if root == Some(RootCert::System) && mode != SslMode::VerifyFull {
        return Err(invalid(format!(
            "`sslrootcert=system` needs `sslmode=verify-full`, not `{}` (as in libpq: any \
             publicly trusted certificate would do otherwise)",
            mode.as_str()
        )));
    }
    let sep = if url_form(url).is_some() {
        if rest.contains('?') {
            "&"
        } else {
            "?"
        }
    } else {
        " "
    };
    let driver = format!("{rest}{sep}sslmode={}", mode.driver_mode());
    Ok((driver, TlsSettings { mode, root }))
}

/// The rustls connector for `settings`: the roots read (a missing or empty
/// file is an error now, not at the first connection).
pub(crate) fn connector(settings: &TlsSettings) -> Result<MakeRustlsConnect, Error> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let root = match &settings.root {
        Some(r) => Some(r.clone()),
        None => default_root_file().map(RootCert::File),
    };
    let verifier: Arc<dyn ServerCertVerifier> = match (settings.mode, root) {
        (SslMode::Disable, _) => Arc::new(NoServerAuth {
            provider: Arc::clone(&provider),
        }),
        (SslMode::VerifyCa | SslMode::VerifyFull, None) => {
            return Err(invalid(format!(
                "`sslmode={}` needs the trusted roots: add `sslrootcert=PATH` (a PEM file) or \
                 `sslrootcert=system`, or put them in ~/.postgresql/root.crt",
                settings.mode.as_str()
            )))
        }
        // libpq: `prefer` and `require` without a root certificate
        // encrypt without checking who answers.
        (SslMode::Prefer | SslMode::Require, None) => Arc::new(NoServerAuth {
            provider: Arc::clone(&provider),
        }),
        (mode, Some(root)) => {
            let roots = load_roots(&root)?;
            let webpki =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), Arc::clone(&provider))
                    .build()
                    .map_err(|e| invalid(format!("the trusted roots cannot be used ({e})")))?;
            if mode == SslMode::VerifyFull {
                webpki
            } else {
                // libpq: `prefer` and `require` with a root certificate
                // check as `verify-ca` does.
                Arc::new(ChainOnly { inner: webpki })
            }
        }
    };
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::new(ErrorCode::Internal, format!("TLS setup failed ({e})")))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::InvalidInput, message)
}

/// The `sslmode` and `sslrootcert` values taken out of a connection string.
#[derive(Default)]
struct Picked {
    mode: Option<String>,
    root: Option<String>,
}

impl Picked {
    /// Takes `key`'s value if it is one of ours; `Ok(false)` leaves it to
    /// the driver.
    fn take(&mut self, key: &str, value: String) -> Result<bool, Error> {
        let slot = match key {
            "sslmode" => &mut self.mode,
            "sslrootcert" => &mut self.root,
            "sslcert" | "sslkey" | "sslpassword" => {
                return Err(invalid(format!(
                    "`{key}`: client certificates are not supported by toolgate's PostgreSQL \
                     client (use a password, or `verify-full` with a server certificate)"
                )))
            }
            "sslcrl"
            | "sslcrldir"
            | "sslsni"
            | "sslcompression"
            | "ssl_min_protocol_version"
            | "ssl_max_protocol_version"
            | "requiressl" => {
                return Err(invalid(format!(
                    "`{key}` is not supported by toolgate's PostgreSQL client (it reads \
                     `sslmode` and `sslrootcert`)"
                )))
            }
            _ => return Ok(false),
        };
        if slot.is_some() {
            return Err(invalid(format!("`{key}` is given twice")));
        }
        *slot = Some(value);
        Ok(true)
    }
}

/// `(everything before the query, the query)` of a `postgres://` URL.
fn url_form(url: &str) -> Option<(&str, &str)> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        return None;
    }
    Some(url.split_once('?').unwrap_or((url, "")))
}

/// The query's parameters the driver reads (as written), and ours.
fn split_query(query: &str) -> Result<(Vec<&str>, Picked), Error> {
    let mut kept = Vec::new();
    let mut picked = Picked::default();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let key = percent_decode(key)?;
        if !picked.take(&key, percent_decode(value)?)? {
            kept.push(pair);
        }
    }
    Ok((kept, picked))
}

/// `%XX` escapes decoded (`+` stays itself, as in the driver).
fn percent_decode(s: &str) -> Result<String, Error> {
    let bad = || invalid("the store url has a malformed `%` escape in its query");
    let mut out = Vec::with_capacity(s.len());
    let mut bytes = s.bytes();
    while let Some(b) = bytes.next() {
        if b == b'%' {
            let hi = bytes.next().and_then(|c| (c as char).to_digit(16));
            let lo = bytes.next().and_then(|c| (c as char).to_digit(16));
            match (hi, lo) {
                (Some(h), Some(l)) => out.push(u8::try_from(h * 16 + l).map_err(|_| bad())?),
                _ => return Err(bad()),
            }
        } else {
            out.push(b);
        }
    }
    String::from_utf8(out).map_err(|_| bad())
}

/// libpq's `key=value` form: the pairs the driver reads, written back
/// quoted, and ours.
fn split_key_values(s: &str) -> Result<(String, Picked), Error> {
    let mut picked = Picked::default();
    let mut kept = Vec::new();
    let mut chars = s.chars().peekable();
    let malformed = || invalid("the store url is not a PostgreSQL connection string");
    loop {
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.peek().is_none() {
            break;
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        if chars.next() != Some('=') || key.is_empty() {
            return Err(malformed());
        }
        while chars.next_if(|c| c.is_whitespace()).is_some() {}
        let mut value = String::new();
        if chars.next_if_eq(&'\'').is_some() {
            loop {
                match chars.next() {
                    Some('\'') => break,
                    Some('\\') => value.push(chars.next().ok_or_else(malformed)?),
                    Some(c) => value.push(c),
                    None => return Err(malformed()),
                }
            }
        } else {
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                if c == '\\' {
                    value.push(chars.next().ok_or_else(malformed)?);
                } else {
                    value.push(c);
                }
            }
        }
        if !picked.take(&key, value.clone())? {
            let quoted = value.replace('\\', "\\\\").replace('\'', "\\'");
            kept.push(format!("{key}='{quoted}'"));
        }
    }
    Ok((kept.join(" "), picked))
}

/// libpq's default root file, `~/.postgresql/root.crt`, if it exists.
fn default_root_file() -> Option<PathBuf> {
    let home = std::env::var_os("HOME")?;
    let path = Path::new(&home).join(".postgresql").join("root.crt");
    path.is_file().then_some(path)
}

fn load_roots(root: &RootCert) -> Result<RootCertStore, Error> {
    let mut roots = RootCertStore::empty();
    match root {
        RootCert::File(path) => {
            let shown = path.display();
            let certs = CertificateDer::pem_file_iter(path)
                .map_err(|e| invalid(format!("`sslrootcert` `{shown}` cannot be read ({e})")))?
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| invalid(format!("`sslrootcert` `{shown}` is not PEM ({e})")))?;
            if certs.is_empty() {
                return Err(invalid(format!(
                    "`sslrootcert` `{shown}` holds no certificate"
                )));
            }
            for cert in certs {
                roots.add(cert).map_err(|e| {
                    invalid(format!(
                        "`sslrootcert` `{shown}` holds a certificate that cannot be a root ({e})"
                    ))
                })?;
            }
        }
        RootCert::System => {
            let found = rustls_native_certs::load_native_certs();
            let (added, _ignored) = roots.add_parsable_certificates(found.certs);
            if added == 0 {
                return Err(invalid(
                    "`sslrootcert=system`: no trusted roots found on this system",
                ));
            }
        }
    }
    Ok(roots)
}

/// `prefer` and `require` without a root certificate (libpq's meaning):
/// any certificate is taken, but the handshake must still be signed by its
/// key, so the session is at least encrypted to whoever holds it.
#[derive(Debug)]
struct NoServerAuth {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for NoServerAuth {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// `verify-ca`: the chain must lead to a trusted root (and be in date);
/// only the host name is not compared. The web PKI verifier checks the
/// chain first, so a name mismatch is reported only for a trusted chain.
#[derive(Debug)]
struct ChainOnly {
    inner: Arc<WebPkiServerVerifier>,
}

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::{split, SslMode};

    fn driver(url: &str) -> String {
        split(url).unwrap().0
    }

    #[test]
    fn the_default_is_libpq_s_prefer() {
        let (d, s) = split("postgres://u@h/db").unwrap();
        assert_eq!(d, "postgres://u@h/db?sslmode=prefer");
        assert_eq!(s.mode, SslMode::Prefer);
    }

    #[test]
    fn verify_modes_never_reach_the_driver_as_anything_but_require() {
        assert_eq!(
            driver("postgres://u@h/db?sslmode=verify-full&sslrootcert=%2Ftmp%2Fca.pem&connect_timeout=3"),
            "postgres://u@h/db?connect_timeout=3&sslmode=require"
        );
        assert_eq!(
            driver("host=h user=u sslmode=verify-ca sslrootcert='/tmp/my ca.pem'"),
            "host='h' user='u' sslmode=require"
        );
        assert_eq!(
            driver("postgres://u@h/db?sslmode=disable"),
            "postgres://u@h/db?sslmode=disable"
        );
    }

    #[test]
    fn key_value_form_keeps_quotes_and_escapes() {
        assert_eq!(
            driver(r"host = h password='it\'s \\ x' sslmode=require"),
            r"host='h' password='it\'s \\ x' sslmode=require"
        );
    }

    #[test]
    fn what_this_client_cannot_do_is_refused_at_open() {
        for (url, says) in [
            ("postgres://h/db?sslmode=allow", "sslmode=allow"),
            ("postgres://h/db?sslmode=verify", "`sslmode` must be"),
            (
                "postgres://h/db?sslmode=require&sslmode=disable",
                "given twice",
            ),
            ("postgres://h/db?sslcert=/c.pem", "client certificates"),
            ("host=h sslcrl=/x", "`sslcrl` is not supported"),
            (
                "postgres://h/db?sslrootcert=system",
                "needs `sslmode=verify-full`",
            ),
            (
                "postgres://h/db?sslmode=verify-ca&sslrootcert=system",
                "needs `sslmode=verify-full`",
            ),
            ("postgres://h/db?sslrootcert=", "is empty"),
            ("postgres://h/db?sslmode=%zz", "malformed `%`"),
            (
                "host=h sslmode='require",
                "not a PostgreSQL connection string",
            ),
        ] {
            let e = split(url).unwrap_err();
            assert!(e.message().contains(says), "{url}: {}", e.message());
        }
    }

    #[test]
    fn verify_without_roots_is_refused_unless_a_default_file_exists() {
        let (_, s) = split("postgres://h/db?sslmode=verify-full").unwrap();
        if super::default_root_file().is_none() {
            let Err(e) = super::connector(&s) else {
                panic!("verify-full without roots was accepted")
            };
            assert!(
                e.message().contains("needs the trusted roots"),
                "{}",
                e.message()
            );
        }
        let (_, s) =
            split("postgres://h/db?sslmode=verify-full&sslrootcert=/nonexistent/ca.pem").unwrap();
        let Err(e) = super::connector(&s) else {
            panic!("a missing root file was accepted")
        };
        assert!(e.message().contains("cannot be read"), "{}", e.message());
    }
}
