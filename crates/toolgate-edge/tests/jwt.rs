//! JWT bearer tokens from the attacker's side: the edge's verifier with
//! keys and tokens the tests make, a JWKS file and a JWKS URL served here,
//! and a clock moved by hand.

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use toolgate::config::Config;
use toolgate_edge::config::{JwtConfig, ServerRole};
use toolgate_edge::jwt::{Clock, Identity, Refused, Verifier};
use toolgate_testkit::jwt::{attack_set, claims, jwks, SigningKey};

type TestResult = Result<(), Box<dyn std::error::Error>>;

const ISS: &str = "https://idp.test";
const AUD: &str = "https://toolgate.test";
const NOW: u64 = 1_900_000_000;

fn manual_clock(at: u64) -> (Clock, Arc<AtomicU64>) {
    let t = Arc::new(AtomicU64::new(at));
    let read = Arc::clone(&t);
    (Arc::new(move || read.load(Ordering::SeqCst)), t)
}

/// The `[jwt]` table of a config in `dir` with `extra` lines.
fn config(dir: &Path, extra: &str) -> Result<Config, Box<dyn std::error::Error>> {
    let text = format!("[jwt]\nissuer = \"{ISS}\"\naudience = [\"{AUD}\"]\n{extra}\n");
    let path = dir.join("toolgate.toml");
    std::fs::write(&path, &text)?;
    Ok(toolgate_edge::config::load(&path)?)
}

/// `config`'s `[jwt]` table.
fn jwt_of(config: &Config) -> Result<JwtConfig, Box<dyn std::error::Error>> {
    Ok(JwtConfig::from_config(config)?.ok_or("no [jwt]")?)
}

async fn file_verifier(
    keys: &[&SigningKey],
    extra: &str,
) -> Result<(Verifier, Arc<AtomicU64>, tempfile::TempDir), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("jwks.json"), jwks(keys))?;
    let config = config(dir.path(), &format!("jwks_file = \"jwks.json\"\n{extra}"))?;
    let (clock, t) = manual_clock(NOW);
    let jwt = &jwt_of(&config)?;
    let v = Verifier::start_with_clock(jwt, clock).await?;
    Ok((v, t, dir))
}

fn alice(role: ServerRole) -> Identity {
    Identity {
        user: "alice".into(),
        role,
    }
}

#[tokio::test]
async fn a_token_of_each_algorithm_names_its_user() -> TestResult {
    let es = SigningKey::es256("k-es")?;
    let ed = SigningKey::ed25519("k-ed")?;
    let rs = SigningKey::rs256("k-rs")?;
    let (v, _, _dir) = file_verifier(&[&es, &ed, &rs], "").await?;
    for key in [&es, &ed, &rs] {
        let token = key.sign(&claims(ISS, AUD, "alice", NOW, ""));
        assert_eq!(
            v.verify(&token).await,
            Ok(alice(ServerRole::Agent)),
            "{key:?}"
        );
    }
    Ok(())
}

#[tokio::test]
async fn every_forged_or_misdirected_token_is_refused_with_its_code() -> TestResult {
    for (good, impostor) in [
        (SigningKey::es256("k1")?, SigningKey::es256("k1")?),
        (SigningKey::rs256("k1")?, SigningKey::rs256("k1")?),
        (SigningKey::ed25519("k1")?, SigningKey::es256("k1")?),
    ] {
        let (v, _, _dir) = file_verifier(&[&good], "").await?;
        for attack in attack_set(&good, &impostor, ISS, AUD, NOW) {
            let got = v.verify(&attack.token).await.map_err(Refused::code);
            assert_eq!(got, Err(attack.code), "{} ({good:?})", attack.name);
        }
    }
    Ok(())
}

#[tokio::test]
async fn the_leeway_is_thirty_seconds_each_way() -> TestResult {
    let k = SigningKey::es256("k")?;
    let (v, clock, _dir) = file_verifier(&[&k], "").await?;
    let exp = |exp: u64| {
        k.sign(&format!(
            r#"{{"iss":"{ISS}","aud":"{AUD}","sub":"alice","exp":{exp}}}"#
        ))
    };
    let token = exp(NOW);
    clock.store(NOW + 29, Ordering::SeqCst);
    assert!(v.verify(&token).await.is_ok());
    clock.store(NOW + 30, Ordering::SeqCst);
    assert_eq!(v.verify(&token).await, Err(Refused::Expired));
    let nbf = k.sign(&format!(
        r#"{{"iss":"{ISS}","aud":"{AUD}","sub":"alice","nbf":{},"exp":{}}}"#,
        NOW + 30,
        NOW + 600
    ));
    clock.store(NOW, Ordering::SeqCst);
    assert!(v.verify(&nbf).await.is_ok());
    clock.store(NOW - 1, Ordering::SeqCst);
    assert_eq!(v.verify(&nbf).await, Err(Refused::NotYetValid));
    Ok(())
}

#[tokio::test]
async fn roles_come_from_the_groups_claim_and_the_highest_wins() -> TestResult {
    let k = SigningKey::es256("k")?;
    let roles = "roles_claim = \"groups\"\n[jwt.roles]\nadmin = [\"ops\"]\napprover = [\"reviewers\"]\nagent = [\"bots\"]";
    let (v, _, _dir) = file_verifier(&[&k], roles).await?;
    let with = |extra: &str| k.sign(&claims(ISS, AUD, "alice", NOW, extra));
    assert_eq!(
        v.verify(&with(r#","groups":["bots"]"#)).await,
        Ok(alice(ServerRole::Agent))
    );
    assert_eq!(
        v.verify(&with(r#","groups":["bots","reviewers"]"#)).await,
        Ok(alice(ServerRole::Approver))
    );
    assert_eq!(
        v.verify(&with(r#","groups":"ops""#)).await,
        Ok(alice(ServerRole::Admin))
    );
    // No group that grants a role, no group at all, a group claim of the
    // wrong type: no role, and no default.
    for extra in [
        r#","groups":["guests"]"#,
        "",
        r#","groups":{"ops":true}"#,
        r#","groups":[1]"#,
    ] {
        assert_eq!(v.verify(&with(extra)).await, Err(Refused::Role), "{extra}");
    }
    Ok(())
}

#[tokio::test]
async fn an_oversized_or_misshapen_token_is_refused_before_any_key() -> TestResult {
    let k = SigningKey::es256("k")?;
    let (v, _, _dir) = file_verifier(&[&k], "").await?;
    let padding = "x".repeat(5000);
    let big = k.sign(&claims(
        ISS,
        AUD,
        "alice",
        NOW,
        &format!(r#","pad":"{padding}""#),
    ));
    assert_eq!(v.verify(&big).await, Err(Refused::Malformed));
    for bad in ["", "a.b", "a.b.c.d", "a..c", "a.b.c d", "e30.e30.e30"] {
        assert!(v.verify(bad).await.is_err(), "{bad}");
    }
    Ok(())
}

#[tokio::test]
async fn a_jwks_out_of_bounds_or_without_signature_keys_stops_the_start() -> TestResult {
    let k = SigningKey::es256("k")?;
    let dir = tempfile::tempdir()?;
    let c = config(dir.path(), "jwks_file = \"jwks.json\"")?;
    let jwt = &jwt_of(&c)?;
    let many: Vec<String> = (0..33).map(|i| format!("k{i}")).collect();
    let many: Vec<SigningKey> = many
        .iter()
        .map(|id| SigningKey::ed25519(id))
        .collect::<Result<_, _>>()?;
    let many: Vec<&SigningKey> = many.iter().collect();
    for (text, why) in [
        (
            format!(r#"{{"keys":[{}],"pad":"{}"}}"#, k.jwk(), "x".repeat(70_000)),
            "larger than",
        ),
        (jwks(&many), "more than 32 keys"),
        (
            r#"{"keys":[{"kty":"oct","k":"c2VjcmV0","kid":"h"}]}"#.to_owned(),
            "no asymmetric",
        ),
        (
            format!(r#"{{"keys":[{},{}]}}"#, k.jwk(), k.jwk()),
            "one `kid`",
        ),
        ("[]".to_owned(), "no `keys`"),
    ] {
        std::fs::write(dir.path().join("jwks.json"), &text)?;
        let e = Verifier::start(jwt).await.err().ok_or("started")?;
        assert!(e.to_string().contains(why), "{e} ({why})");
    }
    Ok(())
}

#[test]
fn the_config_refuses_hmac_none_and_a_plain_http_jwks_url() -> TestResult {
    let dir = tempfile::tempdir()?;
    for (extra, why) in [
        (
            "jwks_file = \"j\"\nalgorithms = [\"HS256\"]",
            "never `none` or HMAC",
        ),
        (
            "jwks_file = \"j\"\nalgorithms = [\"none\"]",
            "never `none` or HMAC",
        ),
        ("jwks_url = \"http://idp.example/jwks\"", "`https://`"),
        (
            "jwks_file = \"j\"\njwks_url = \"https://idp.example/jwks\"",
            "not both",
        ),
        ("", "`jwks_file` or `jwks_url`"),
        ("jwks_file = \"j\"\nleeway_seconds = 301", "at most 300"),
        (
            "jwks_file = \"j\"\n[jwt.roles]\nadmin = [\"x\"]",
            "name the claim",
        ),
        (
            "jwks_file = \"j\"\nroles_claim = \"g\"\n[jwt.roles]\nroot = [\"x\"]",
            "`agent`, `approver` or `admin`",
        ),
    ] {
        let e = config(dir.path(), extra).err().ok_or(extra)?;
        assert!(e.to_string().contains(why), "{e} ({extra})");
    }
    Ok(())
}

/// A JWKS served at `http://ADDR/jwks`, replaceable, counting its fetches.
struct JwksServer {
    addr: SocketAddr,
    body: Arc<Mutex<String>>,
    hits: Arc<AtomicUsize>,
}

async fn jwks_server(body: String) -> Result<JwksServer, Box<dyn std::error::Error>> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let addr = listener.local_addr()?;
    let body = Arc::new(Mutex::new(body));
    let hits = Arc::new(AtomicUsize::new(0));
    let (b, h) = (Arc::clone(&body), Arc::clone(&hits));
    let app = axum::Router::new().route(
        "/jwks",
        axum::routing::get(move || {
            let (b, h) = (Arc::clone(&b), Arc::clone(&h));
            async move {
                h.fetch_add(1, Ordering::SeqCst);
                b.lock().map(|b| b.clone()).unwrap_or_default()
            }
        }),
    );
    tokio::spawn(async move { axum::serve(listener, app).await });
    Ok(JwksServer { addr, body, hits })
}

#[tokio::test]
async fn a_rotated_key_is_fetched_once_and_made_up_kids_cost_one_fetch_per_interval() -> TestResult
{
    let old = SigningKey::es256("2026-11")?;
    let new = SigningKey::es256("2026-12")?;
    let server = jwks_server(jwks(&[&old])).await?;
    let dir = tempfile::tempdir()?;
    let c = config(
        dir.path(),
        &format!("jwks_url = \"http://{}/jwks\"", server.addr),
    )?;
    let (clock, t) = manual_clock(NOW);
    let v = Verifier::start_with_clock(&jwt_of(&c)?, clock).await?;
    assert_eq!(server.hits.load(Ordering::SeqCst), 1);
    let ok = claims(ISS, AUD, "alice", NOW, "");
    assert!(v.verify(&old.sign(&ok)).await.is_ok());
    // The issuer rotates: the new key's first token fetches the JWKS again.
    *server.body.lock().map_err(|_| "poisoned")? = jwks(&[&new]);
    assert_eq!(v.verify(&new.sign(&ok)).await, Ok(alice(ServerRole::Agent)));
    assert_eq!(server.hits.load(Ordering::SeqCst), 2);
    assert_eq!(v.verify(&old.sign(&ok)).await, Err(Refused::UnknownKey));
    // A flood of made-up kids within the interval fetches nothing more.
    for i in 0..50 {
        let forged = new.sign_raw(&format!(r#"{{"alg":"ES256","kid":"made-up-{i}"}}"#), &ok);
        assert_eq!(v.verify(&forged).await, Err(Refused::UnknownKey));
    }
    assert_eq!(server.hits.load(Ordering::SeqCst), 2);
    // After the interval, one more.
    t.store(NOW + 11, Ordering::SeqCst);
    for _ in 0..5 {
        let forged = new.sign_raw(r#"{"alg":"ES256","kid":"made-up"}"#, &ok);
        assert_eq!(v.verify(&forged).await, Err(Refused::UnknownKey));
    }
    assert_eq!(server.hits.load(Ordering::SeqCst), 3);
    // A JWKS that turns bad keeps the keys held.
    *server.body.lock().map_err(|_| "poisoned")? = "not json".into();
    t.store(NOW + 22, Ordering::SeqCst);
    let forged = new.sign_raw(r#"{"alg":"ES256","kid":"made-up"}"#, &ok);
    assert_eq!(v.verify(&forged).await, Err(Refused::UnknownKey));
    assert_eq!(server.hits.load(Ordering::SeqCst), 4);
    assert!(v.verify(&new.sign(&ok)).await.is_ok());
    Ok(())
}

#[tokio::test]
async fn a_jwks_url_that_cannot_be_read_stops_the_start() -> TestResult {
    let server = jwks_server("{\"keys\":[]}".into()).await?;
    let dir = tempfile::tempdir()?;
    for url in [
        format!("http://{}/jwks", server.addr),
        format!("http://{}/missing", server.addr),
    ] {
        let c = config(dir.path(), &format!("jwks_url = \"{url}\""))?;
        let e = Verifier::start(&jwt_of(&c)?).await.err().ok_or("started")?;
        assert!(e.to_string().starts_with("[jwt] jwks_url:"), "{e}");
    }
    Ok(())
}
