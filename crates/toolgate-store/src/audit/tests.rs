//! The audit record's unit tests.

#![allow(clippy::unwrap_used, reason = "test code")]
use super::text::opt_digest;
use super::*;

#[test]
fn body_is_canonical_json() {
    let args = toolgate_json::from_str(r#"{"b":[1,{"s":"x"}],"a":"é\n"}"#).unwrap();
    let e = AuditEntry::new(Timestamp::from_unix_millis(5), AuditVerdict::Deny)
        .user("u\"1")
        .reason("not_owner")
        .arguments(
            &args,
            &["/b/1/s", "/missing", "/b/7"],
            &RedactionKey::from_bytes([1; 32]),
        )
        .unwrap();
    let mut body = String::new();
    write_record(&mut body, Place::single(3), RECORD_VERSION, &e, None);
    let v = toolgate_json::from_str(&body).unwrap();
    assert_eq!(canonical::to_string(&v), body);
    let rec = AuditRecord {
        version: RECORD_VERSION,
        seq: 3,
        segment: 0,
        sseq: 3,
        prev: GENESIS,
        hash: chain_hash(&GENESIS, Place::single(3), RECORD_VERSION, &e),
        entry: e,
    };
    let line = rec.to_json();
    let v = toolgate_json::from_str(&line).unwrap();
    assert_eq!(canonical::to_string(&v), line);
    assert!(!line.contains("\"x\""));
    assert!(!line.contains("\"segment\""));
    // Version 3 adds the segment and the place in it, in canonical order.
    let seg = AuditRecord {
        version: SEGMENT_RECORD_VERSION,
        segment: 9,
        sseq: 2,
        ..rec.clone()
    };
    let line = seg.to_json();
    let v = toolgate_json::from_str(&line).unwrap();
    assert_eq!(canonical::to_string(&v), line);
    assert!(line.contains("\"segment\":9,\"seq\":3,") && line.contains("\"sseq\":2,"));
    assert_ne!(seg.expected_hash(), rec.expected_hash());
    let moved = AuditRecord {
        sseq: 3,
        ..seg.clone()
    };
    assert_ne!(moved.expected_hash(), seg.expected_hash());
}

#[test]
fn redaction_replaces_with_a_keyed_digest() {
    let key = RedactionKey::from_bytes([9; 32]);
    let args = toolgate_json::from_str(r#"{"card":"4111","n":1}"#).unwrap();
    let r = redact(&args, &["/card"], &key).unwrap();
    let shown = r.pointer("/card").and_then(Value::as_str).unwrap();
    assert_eq!(shown, key.digest(br#""4111""#));
    assert!(shown.starts_with("hmac-sha256:") && shown.len() == 12 + 64);
    // Not the unkeyed digest, and another key gives another digest.
    let card = toolgate_json::from_str(r#""4111""#).unwrap();
    assert!(!shown.contains(&canonical::digest(&card).to_string()["sha256:".len()..]));
    let other = RedactionKey::from_bytes([8; 32]);
    assert_ne!(shown, other.digest(br#""4111""#));
    assert!(redact(&args, &["card"], &key).is_err());
    assert_eq!(
        redact(&args, &[""], &key).unwrap().as_str(),
        Some(key.digest(canonical::to_string(&args).as_bytes()).as_str())
    );
}

/// RFC 4231, test case 2: the HMAC is the standard one.
#[test]
fn hmac_matches_the_rfc_4231_vector() {
    let mut k = [0u8; 32];
    k[..4].copy_from_slice(b"Jefe");
    // The RFC's key is 4 bytes; zero padding to the block size gives the
    // same HMAC, so a 32-byte key with zeros after "Jefe" is equivalent.
    let key = RedactionKey::from_bytes(k);
    assert_eq!(
        key.digest(b"what do ya want for nothing?"),
        "hmac-sha256:5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    );
    assert_eq!(format!("{key:?}"), "RedactionKey(..)");
}

#[test]
fn digest_text_round_trips() {
    let d = Digest::of(b"x");
    assert_eq!(parse_digest(&d.to_string()), Some(d));
    assert_eq!(parse_digest("sha256:00"), None);
    assert_eq!(parse_digest(&d.to_string().to_uppercase()), None);
}

/// A record's digest is written as the digest's own text spells it
/// (the chain's hashes depend on these bytes).
#[test]
fn a_records_digest_is_written_as_its_text() {
    for input in [&b""[..], b"x", b"\x00\xff\x10\x0f"] {
        let d = Digest::of(input);
        let mut out = String::new();
        opt_digest(&mut out, Some(&d));
        assert_eq!(out, format!("\"{d}\""));
    }
    let mut out = String::new();
    opt_digest(&mut out, None);
    assert_eq!(out, "null");
}
