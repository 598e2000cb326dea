//! TLS to PostgreSQL from the attacker's side: a server of the test's own
//! (see [`toolgate_testkit::PgServer`]) with a certificate made here,
//! signed by a CA made here. `verify-full` connects and the connection is
//! encrypted; a certificate from another CA, a certificate for another
//! host name, and a server without TLS are all refused with an error that
//! says why, never downgraded to plaintext. `require` and `prefer` mean
//! what they mean in libpq.
//!
//! Without the PostgreSQL server programs (`initdb`, `pg_ctl`) the test
//! says so and passes, unless `TOOLGATE_REQUIRE_EXTERNAL=1` (CI).
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]

use std::path::Path;
use std::time::Duration;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, SanType};
use toolgate_store::{
    AuditEntry, AuditVerdict, Error, ErrorCode, PgOptions, PgStore, Store, Timestamp,
};
use toolgate_testkit::{PgServer, ServerTls};

/// The name in the server's certificate.
const HOST: &str = "db.toolgate.test";

struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

fn ca(name: &str) -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    Ca {
        pem: cert.pem(),
        issuer: Issuer::new(params, key),
    }
}

/// A server certificate for `names`, signed by `ca`: (chain PEM, key PEM).
fn server_cert(ca: &Ca, names: &[&str]) -> (String, String) {
    let mut params =
        CertificateParams::new(names.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>()).unwrap();
    params
        .subject_alt_names
        .push(SanType::IpAddress("127.0.0.2".parse().unwrap()));
    params.distinguished_name.push(DnType::CommonName, names[0]);
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca.issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

/// The URL of the server's database `postgres` as `host`, reached at
/// 127.0.0.1 whatever `host` says (`hostaddr`), with `query` added.
fn url(server: &PgServer, host: &str, query: &str) -> String {
    format!(
        "postgres://postgres@{host}:{}/postgres?hostaddr=127.0.0.1&connect_timeout=10&{query}",
        server.port()
    )
}

fn open(url: &str) -> Result<PgStore, Error> {
    PgOptions::new()
        .connect_timeout(Duration::from_secs(10))
        .connections(1)
        .open(url)
}

/// The error and every cause, on one line.
fn chain(e: &Error) -> String {
    let mut out = format!("{} {}", e.code(), e.message());
    let mut cause = std::error::Error::source(e);
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}

fn refused(url: &str) -> String {
    match open(url) {
        Ok(_) => panic!("connected, but should have been refused: {url}"),
        Err(e) => chain(&e),
    }
}

/// Whether every connection the store (application `toolgate`) holds to
/// the server is encrypted, as the server sees it; `None` when it holds
/// none.
fn encrypted(server: &PgServer) -> Option<bool> {
    server
        .admin()
        .query_one(
            "SELECT bool_and(s.ssl) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) \
             WHERE a.application_name = 'toolgate'",
            &[],
        )
        .unwrap()
        .get(0)
}

/// Opens, writes a record, verifies the chain; says whether the store's
/// connection was encrypted.
fn works(server: &PgServer, url: &str) -> bool {
    let store = open(url).unwrap_or_else(|e| panic!("{url}: {}", chain(&e)));
    store
        .append(AuditEntry::new(Timestamp::from_unix_millis(1), AuditVerdict::Allow).tool("t"))
        .unwrap();
    assert!(store.verify().unwrap().is_intact());
    let seen = encrypted(server).expect("the store holds a connection");
    drop(store);
    seen
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().replace('/', "%2F")
}

#[test]
fn tls_to_postgres_is_verified_as_libpq_s_sslmode_says() {
    let ours = ca("toolgate test CA");
    let (cert, key) = server_cert(&ours, &[HOST]);
    let Some(server) = PgServer::start(Some(ServerTls {
        cert_pem: &cert,
        key_pem: &key,
    })) else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let good_ca = write(dir.path(), "ca.pem", &ours.pem);
    let other_ca = write(dir.path(), "other.pem", &ca("someone else's CA").pem);
    let not_pem = write(dir.path(), "empty.pem", "no certificate here\n");

    // verify-full with the right CA and the name in the certificate.
    let full = format!("sslmode=verify-full&sslrootcert={good_ca}");
    assert!(works(&server, &url(&server, HOST, &full)), "not encrypted");
    // libpq's key=value form reads the same way.
    let kv = format!(
        "host={HOST} hostaddr=127.0.0.1 port={} user=postgres dbname=postgres \
         sslmode=verify-full sslrootcert='{}'",
        server.port(),
        dir.path().join("ca.pem").display()
    );
    assert!(works(&server, &kv));

    // A certificate from a CA we do not trust (a man in the middle with a
    // certificate of its own): refused, in every mode given that CA.
    for mode in ["verify-full", "verify-ca", "require", "prefer"] {
        let e = refused(&url(
            &server,
            HOST,
            &format!("sslmode={mode}&sslrootcert={other_ca}"),
        ));
        assert!(e.starts_with("store_unavailable"), "{mode}: {e}");
        assert!(e.contains("UnknownIssuer"), "{mode}: {e}");
    }

    // A certificate of our CA for another host name: refused by
    // verify-full; verify-ca checks the chain only, as in libpq.
    let e = refused(&url(&server, "other.toolgate.test", &full));
    assert!(e.contains("certificate not valid for name"), "{e}");
    let e = refused(&url(&server, "127.0.0.1", &full));
    assert!(e.contains("certificate not valid for name"), "{e}");
    assert!(works(
        &server,
        &url(
            &server,
            "other.toolgate.test",
            &format!("sslmode=verify-ca&sslrootcert={good_ca}")
        )
    ));

    // A root file that is not PEM, or missing: refused at open, before
    // any connection.
    for root in [not_pem, "%2Fnonexistent%2Fca.pem".to_owned()] {
        let e = open(&url(
            &server,
            HOST,
            &format!("sslmode=verify-full&sslrootcert={root}"),
        ))
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidInput, "{}", chain(&e));
        assert!(e.message().contains("sslrootcert"), "{}", chain(&e));
    }

    // libpq's `require` without a root certificate: encrypted, any
    // certificate taken (it does not authenticate the server).
    assert!(works(
        &server,
        &url(&server, "other.toolgate.test", "sslmode=require")
    ));
    // `prefer` (the default) takes TLS when offered.
    assert!(works(&server, &url(&server, HOST, "")));

    // The same server with TLS turned off: every mode that requires TLS is
    // refused, never downgraded; `prefer` and `disable` connect in
    // plaintext.
    server.execute("ALTER SYSTEM SET ssl = off");
    server.execute("SELECT pg_reload_conf()");
    std::thread::sleep(Duration::from_millis(500));
    for query in [
        full.clone(),
        format!("sslmode=verify-ca&sslrootcert={good_ca}"),
        "sslmode=require".to_owned(),
    ] {
        let e = refused(&url(&server, HOST, &query));
        assert!(e.contains("server does not support TLS"), "{query}: {e}");
    }
    assert!(!works(&server, &url(&server, HOST, "sslmode=prefer")));
    assert!(!works(&server, &url(&server, HOST, "sslmode=disable")));
}
