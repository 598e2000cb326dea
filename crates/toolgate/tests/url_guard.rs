#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! The URL guard from the attacker's side: every hostile URL below must be
//! denied with the expected code, and no denial may repeat the URL.

use std::collections::HashMap;
use std::io;
use std::net::IpAddr;

use toolgate::url_guard::{
    AddressClass, Resolve, UrlDenial, UrlDenialCode, UrlPolicy, UrlPolicyConfig,
};

/// The policy of a `fetch_url` tool: http(s) to example.com and its
/// subdomains. IP literals in forbidden ranges are allowlisted on purpose, to
/// show that the allowlist does not open them.
fn policy() -> UrlPolicy {
    UrlPolicyConfig::new()
        .with_schemes(["http", "https"])
        .with_hosts([
            "example.com",
            "*.example.com",
            "127.0.0.1",
            "169.254.169.254",
            "10.0.0.1",
            "[::1]",
            "8.8.8.8",
        ])
        .compile()
        .unwrap()
}

/// A general browsing tool: any host that passes the other checks.
fn any_host_policy() -> UrlPolicy {
    UrlPolicyConfig::new()
        .with_schemes(["http", "https"])
        .with_hosts(["*"])
        .compile()
        .unwrap()
}

use UrlDenialCode::{
    Ambiguous, ForbiddenAddress, ForbiddenHost, HostNotAllowed, Invalid, Port, Scheme, Userinfo,
};

/// (URL, expected code, expected address class for `url_forbidden_address`).
const HOSTILE: &[(&str, UrlDenialCode, Option<AddressClass>)] = &[
    // 127.0.0.1 in every IPv4 spelling WHATWG accepts.
    (
        "http://127.0.0.1/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://127.1/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://127.0.1/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://2130706433/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://0x7f000001/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://0X7F000001/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://0x7f.0.0.1/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://0x7f.1/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://0177.0.0.1/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://0177.0000.0000.0001/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://017700000001/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://127.000.000.001/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://127.0.0.1./",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://127.0.0.1:80/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://127.255.255.254/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    // IPv6 spellings of loopback.
    (
        "http://[::1]/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://[0:0:0:0:0:0:0:1]/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://[0000::0001]/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://[::ffff:127.0.0.1]/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://[::ffff:7f00:1]/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://[0:0:0:0:0:ffff:127.0.0.1]/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://[::127.0.0.1]/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://[::ffff:0:127.0.0.1]/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://[64:ff9b::127.0.0.1]/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://[64:ff9b::7f00:1]/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    (
        "http://[2002:7f00:1::]/",
        ForbiddenAddress,
        Some(AddressClass::Loopback),
    ),
    // Unspecified: Linux connects these to the local host.
    (
        "http://0/",
        ForbiddenAddress,
        Some(AddressClass::Unspecified),
    ),
    (
        "http://0.0.0.0/",
        ForbiddenAddress,
        Some(AddressClass::Unspecified),
    ),
    (
        "http://0x0/",
        ForbiddenAddress,
        Some(AddressClass::Unspecified),
    ),
    (
        "http://[::]/",
        ForbiddenAddress,
        Some(AddressClass::Unspecified),
    ),
    (
        "http://[::ffff:0.0.0.0]/",
        ForbiddenAddress,
        Some(AddressClass::Unspecified),
    ),
    // 169.254.169.254 in every spelling.
    (
        "http://169.254.169.254/latest/meta-data/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://169.254.43518/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://169.16689662/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://2852039166/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://0xa9fea9fe/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://0xA9.0xFE.0xA9.0xFE/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://0251.0376.0251.0376/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://0251.254.0xa9.254/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://025177524776/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://[::ffff:169.254.169.254]/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://[::ffff:a9fe:a9fe]/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://[64:ff9b::a9fe:a9fe]/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://[2002:a9fe:a9fe::1]/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://169.254.169.254#@example.com/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://169.254.169.254?@example.com/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://169.254.169.254/#.example.com",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    // Other cloud metadata services.
    (
        "http://100.100.100.200/latest/meta-data/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://[fd00:ec2::254]/latest/meta-data/",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://168.63.129.16/machine",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://169.254.170.2/v2/credentials",
        ForbiddenAddress,
        Some(AddressClass::Metadata),
    ),
    (
        "http://metadata.google.internal/computeMetadata/v1/",
        ForbiddenHost,
        None,
    ),
    ("http://METADATA.GOOGLE.INTERNAL./", ForbiddenHost, None),
    ("http://metadata/computeMetadata/v1/", ForbiddenHost, None),
    ("http://metadata.goog/", ForbiddenHost, None),
    ("http://instance-data/latest/", ForbiddenHost, None),
    // Private and special-purpose ranges (some allowlisted: no help).
    (
        "http://10.0.0.1/",
        ForbiddenAddress,
        Some(AddressClass::Private),
    ),
    (
        "http://012.0.0.1/",
        ForbiddenAddress,
        Some(AddressClass::Private),
    ),
    (
        "http://172.16.0.1/",
        ForbiddenAddress,
        Some(AddressClass::Private),
    ),
    (
        "http://172.31.255.255/",
        ForbiddenAddress,
        Some(AddressClass::Private),
    ),
    (
        "http://192.168.0.1/",
        ForbiddenAddress,
        Some(AddressClass::Private),
    ),
    (
        "http://3232235521/",
        ForbiddenAddress,
        Some(AddressClass::Private),
    ),
    (
        "http://100.64.0.1/",
        ForbiddenAddress,
        Some(AddressClass::SharedAddressSpace),
    ),
    (
        "http://169.254.1.1/",
        ForbiddenAddress,
        Some(AddressClass::LinkLocal),
    ),
    (
        "http://[fe80::1]/",
        ForbiddenAddress,
        Some(AddressClass::LinkLocal),
    ),
    (
        "http://[fc00::1]/",
        ForbiddenAddress,
        Some(AddressClass::UniqueLocal),
    ),
    (
        "http://[fd12:3456:789a::1]/",
        ForbiddenAddress,
        Some(AddressClass::UniqueLocal),
    ),
    (
        "http://224.0.0.1/",
        ForbiddenAddress,
        Some(AddressClass::Multicast),
    ),
    (
        "http://[ff02::1]/",
        ForbiddenAddress,
        Some(AddressClass::Multicast),
    ),
    (
        "http://255.255.255.255/",
        ForbiddenAddress,
        Some(AddressClass::Broadcast),
    ),
    (
        "http://4294967295/",
        ForbiddenAddress,
        Some(AddressClass::Broadcast),
    ),
    (
        "http://192.0.2.1/",
        ForbiddenAddress,
        Some(AddressClass::Documentation),
    ),
    (
        "http://[2001:db8::1]/",
        ForbiddenAddress,
        Some(AddressClass::Documentation),
    ),
    (
        "http://198.18.0.1/",
        ForbiddenAddress,
        Some(AddressClass::Benchmarking),
    ),
    (
        "http://240.0.0.1/",
        ForbiddenAddress,
        Some(AddressClass::Reserved),
    ),
    (
        "http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
        ForbiddenAddress,
        Some(AddressClass::Reserved),
    ),
    (
        "http://[64:ff9b::10.0.0.1]/",
        ForbiddenAddress,
        Some(AddressClass::Private),
    ),
    (
        "http://[2002:c0a8:0101::1]/",
        ForbiddenAddress,
        Some(AddressClass::Private),
    ),
    // Local names.
    ("http://localhost/", ForbiddenHost, None),
    ("http://LOCALHOST:80/", ForbiddenHost, None),
    ("http://localhost./", ForbiddenHost, None),
    ("http://foo.localhost/", ForbiddenHost, None),
    ("http://intranet/", ForbiddenHost, None),
    ("http://printer.local/", ForbiddenHost, None),
    ("http://db.internal/", ForbiddenHost, None),
    ("http://nas.home.arpa/", ForbiddenHost, None),
    ("http://host.localdomain/", ForbiddenHost, None),
    ("http://0x7f.0x0.0x0.0x1x/", ForbiddenHost, None),
    ("http://a.example.1a/", ForbiddenHost, None),
    // Schemes.
    ("file:///etc/passwd", Scheme, None),
    ("FILE:///etc/passwd", Scheme, None),
    ("file://localhost/etc/passwd", Scheme, None),
    ("gopher://example.com:70/_GET%20/", Scheme, None),
    ("data:text/html,<script>alert(1)</script>", Scheme, None),
    ("javascript:alert(document.domain)", Scheme, None),
    ("JaVaScRiPt:alert(1)", Scheme, None),
    ("dict://example.com:11211/stat", Scheme, None),
    ("ftp://example.com/", Scheme, None),
    ("ldap://example.com/", Scheme, None),
    ("jar:http://example.com!/x", Scheme, None),
    ("view-source:http://example.com/", Scheme, None),
    ("ws://example.com/", Scheme, None),
    // Userinfo: the classic `good@evil` confusions.
    ("http://example.com@169.254.169.254/", Userinfo, None),
    ("http://example.com:80@evil.com/", Userinfo, None),
    ("https://example.com:443@127.0.0.1/", Userinfo, None),
    ("http://user:pass@example.com/", Userinfo, None),
    ("http://@example.com/", Userinfo, None),
    ("http://:@example.com/", Userinfo, None),
    ("http://a.example.com@evil.com@example.com/", Userinfo, None),
    // Spellings parsers disagree on.
    ("http:\\\\evil.com/", Ambiguous, None),
    ("http:/\\evil.com/", Ambiguous, None),
    ("http://example.com\\@evil.com/", Ambiguous, None),
    ("http://evil.com\\.example.com/", Ambiguous, None),
    ("http:evil.com/", Ambiguous, None),
    ("http:/evil.com/", Ambiguous, None),
    ("http:///evil.com/", Ambiguous, None),
    ("http:////example.com/", Ambiguous, None),
    ("http://exa\tmple.com/", Ambiguous, None),
    ("http://example.com\n.evil.net/", Ambiguous, None),
    ("http://127.0.0.\n1/", Ambiguous, None),
    ("http://example.com/\r\nHost: evil", Ambiguous, None),
    ("\thttp://example.com/", Ambiguous, None),
    (" http://example.com/", Ambiguous, None),
    ("http://example.com/ ", Ambiguous, None),
    ("http://example.com\u{0}/", Ambiguous, None),
    ("http://%31%32%37.0.0.1/", Ambiguous, None),
    ("http://%6c%6f%63%61%6c%68%6f%73%74/", Ambiguous, None),
    ("http://ex%61mple.com/", Ambiguous, None),
    ("http://ｅｘａｍｐｌｅ.com/", Ambiguous, None),
    ("http://example。com/", Ambiguous, None),
    ("http://exam\u{AD}ple.com/", Ambiguous, None),
    ("http://１２７.０.０.１/", Ambiguous, None),
    ("http://bücher.ｅｘａｍｐｌｅ.com/", Ambiguous, None),
    ("http://a.example．com/", Ambiguous, None),
    ("http://a.example｡com/", Ambiguous, None),
    ("http://Ａ.example.com/", Ambiguous, None),
    ("http://①②⑦.0.0.1/", Ambiguous, None),
    // Not in the allowlist.
    ("http://evil.com/", HostNotAllowed, None),
    ("http://evil.com/#@example.com", HostNotAllowed, None),
    ("http://evil.com/?@example.com", HostNotAllowed, None),
    ("http://example.com.evil.net/", HostNotAllowed, None),
    ("http://evil-example.com/", HostNotAllowed, None),
    ("http://evilexample.com/", HostNotAllowed, None),
    ("http://example.com./", HostNotAllowed, None),
    ("http://a.example.com./", HostNotAllowed, None),
    ("http://example.com../", HostNotAllowed, None),
    ("http://exаmple.com/", HostNotAllowed, None),
    ("http://еxample.com/", HostNotAllowed, None),
    ("http://xn--exmple-cua.com/", HostNotAllowed, None),
    ("http://example.co/", HostNotAllowed, None),
    // Wildcard-DNS services: forbidden names under every policy.
    ("http://169.254.169.254.nip.io/", ForbiddenHost, None),
    ("http://127.0.0.1.nip.io/", ForbiddenHost, None),
    ("http://a.127.0.0.1.sslip.io/", ForbiddenHost, None),
    ("http://localtest.me/", ForbiddenHost, None),
    ("http://7f000001.a9fea9fe.rbndr.us/", ForbiddenHost, None),
    ("http://8.8.4.4/", HostNotAllowed, None),
    ("http://[2606:4700:4700::1111]/", HostNotAllowed, None),
    // Ports.
    ("http://example.com:0/", Port, None),
    ("http://example.com:8080/", Port, None),
    ("http://example.com:443/", Port, None),
    ("https://example.com:80/", Port, None),
    ("http://a.example.com:22/", Port, None),
    ("http://example.com:00000000000000000080x/", Invalid, None),
    // Not URLs at all.
    ("http://example.com:65536/", Invalid, None),
    ("http://example.com:99999999999/", Invalid, None),
    ("http://example.com:-1/", Invalid, None),
    ("http://1.2.3.4.5/", Invalid, None),
    ("http://256.0.0.1/", Invalid, None),
    ("http://0x100000000/", Invalid, None),
    ("http://[::1/", Invalid, None),
    ("http://[fe80::1%25eth0]/", Invalid, None),
    ("http://[::ffff:127.0.0.1.1]/", Invalid, None),
    ("http://exa mple.com/", Invalid, None),
    ("http://exa<mple.com/", Invalid, None),
    ("http://", Invalid, None),
    ("//example.com/", Invalid, None),
    ("/etc/passwd", Invalid, None),
    ("example.com", Invalid, None),
    ("", Invalid, None),
];

/// Fragments of the hostile URLs that must never appear in a denial.
const NEVER_IN_DENIAL: &[&str] = &[
    "://",
    "example",
    "evil",
    "169.254",
    "127.",
    "0x",
    "nip.io",
    "passwd",
    "localhost",
    "[",
];

fn assert_quiet(raw: &str, denial: &UrlDenial) {
    for rendered in [denial.to_string(), format!("{denial:?}")] {
        if !raw.is_empty() {
            assert!(!rendered.contains(raw), "{raw:?} echoed in {rendered:?}");
        }
        for fragment in NEVER_IN_DENIAL {
            assert!(
                !rendered.contains(fragment),
                "{raw:?}: {fragment:?} in {rendered:?}"
            );
        }
        assert!(
            !rendered.contains(|c: char| c.is_ascii_digit()),
            "{raw:?}: digits in {rendered:?}"
        );
    }
}

#[test]
fn hostile_urls_are_denied_with_their_code() {
    assert!(HOSTILE.len() >= 60, "{}", HOSTILE.len());
    let policy = policy();
    let mut failures = Vec::new();
    for &(raw, code, class) in HOSTILE {
        match policy.check(raw) {
            Ok(checked) => failures.push(format!("{raw:?}: allowed as {}", checked.as_str())),
            Err(denial) => {
                if denial.code() != code || denial.address_class() != class {
                    failures.push(format!(
                        "{raw:?}: {} {:?}, expected {} {:?}",
                        denial.code(),
                        denial.address_class(),
                        code,
                        class
                    ));
                }
                assert_quiet(raw, &denial);
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_wildcard_policy_still_denies_every_forbidden_target() {
    let policy = any_host_policy();
    for &(raw, code, _) in HOSTILE {
        if matches!(code, HostNotAllowed | Port | Invalid | Scheme) {
            continue;
        }
        let denial = policy.check(raw).expect_err(raw);
        assert_eq!(denial.code(), code, "{raw:?}");
        assert_quiet(raw, &denial);
    }
}

#[test]
fn friendly_urls_pass_and_are_normalized() {
    let policy = policy();
    for (raw, normalized, host, port) in [
        (
            "http://example.com/",
            "http://example.com/",
            "example.com",
            80,
        ),
        (
            "HTTP://EXAMPLE.COM/",
            "http://example.com/",
            "example.com",
            80,
        ),
        (
            "HtTpS://Example.Com:443",
            "https://example.com/",
            "example.com",
            443,
        ),
        (
            "https://docs.example.com/a/../b?q=1#frag",
            "https://docs.example.com/b?q=1#frag",
            "docs.example.com",
            443,
        ),
        (
            "https://a.b.example.com/x y",
            "https://a.b.example.com/x%20y",
            "a.b.example.com",
            443,
        ),
        (
            "https://example.com/path\\with\\backslash?q=a\\b",
            "",
            "",
            0,
        ),
        ("http://8.8.8.8/dns", "http://8.8.8.8/dns", "8.8.8.8", 80),
        (
            "http://0x08.0x08.0x08.0x08/",
            "http://8.8.8.8/",
            "8.8.8.8",
            80,
        ),
    ] {
        let result = policy.check(raw);
        if normalized.is_empty() {
            // A backslash in the path is rewritten to `/` by WHATWG only:
            // ambiguous, denied.
            assert_eq!(result.unwrap_err().code(), Ambiguous, "{raw:?}");
            continue;
        }
        let checked = result.unwrap_or_else(|e| panic!("{raw:?}: {e}"));
        assert_eq!(checked.as_str(), normalized);
        assert_eq!(checked.host(), host);
        assert_eq!(checked.port(), port);
    }
    let ip = policy.check("http://8.8.8.8/").unwrap();
    assert_eq!(ip.ip(), Some("8.8.8.8".parse().unwrap()));
    assert_eq!(ip.pinned(), &["8.8.8.8".parse::<IpAddr>().unwrap()]);
    let name = policy.check("http://example.com/").unwrap();
    assert_eq!(name.ip(), None);
    assert!(name.pinned().is_empty());
    // A backslash in the query or fragment is only data.
    assert!(policy.check("https://example.com/?q=a\\b#c\\d").is_ok());
}

#[test]
fn idn_hosts_compare_after_idna() {
    let policy = UrlPolicyConfig::new()
        .with_hosts(["bücher.example", "*.müller.example"])
        .compile()
        .unwrap();
    let checked = policy.check("https://BÜCHER.example/").unwrap();
    assert_eq!(checked.host(), "xn--bcher-kva.example");
    assert_eq!(checked.as_str(), "https://xn--bcher-kva.example/");
    assert!(policy.check("https://xn--bcher-kva.example/").is_ok());
    assert!(policy.check("https://shop.xn--mller-kva.example/").is_ok());
    assert!(policy.check("https://shop.müller.example/").is_ok());
    assert_eq!(
        policy.check("https://müller.example/").unwrap_err().code(),
        HostNotAllowed
    );
    assert_eq!(
        policy.check("https://bucher.example/").unwrap_err().code(),
        HostNotAllowed
    );
}

#[test]
fn too_long_is_its_own_code_at_the_boundary() {
    let policy = UrlPolicyConfig::new()
        .with_hosts(["example.com"])
        .with_max_url_bytes(64)
        .compile()
        .unwrap();
    let base = "https://example.com/";
    let at_limit = format!("{base}{}", "a".repeat(64 - base.len()));
    assert_eq!(at_limit.len(), 64);
    assert!(policy.check(&at_limit).is_ok());
    let over = format!("{at_limit}a");
    assert_eq!(
        policy.check(&over).unwrap_err().code().as_str(),
        "url_too_long"
    );
    let default = UrlPolicyConfig::new()
        .with_hosts(["example.com"])
        .compile()
        .unwrap();
    let huge = format!("{base}{}", "a".repeat(1 << 20));
    assert_eq!(
        default.check(&huge).unwrap_err().code(),
        UrlDenialCode::TooLong
    );
}

/// A resolver that answers from a table, and fails for unknown names.
struct FakeDns(HashMap<&'static str, Vec<IpAddr>>);

impl FakeDns {
    fn new(entries: &[(&'static str, &[&str])]) -> Self {
        Self(
            entries
                .iter()
                .map(|(host, addrs)| (*host, addrs.iter().map(|a| a.parse().unwrap()).collect()))
                .collect(),
        )
    }
}

impl Resolve for FakeDns {
    fn resolve(&self, host: &str, _port: u16) -> io::Result<Vec<IpAddr>> {
        self.0
            .get(host)
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no such host {host}")))
    }
}

/// A resolver that must not be called.
struct NoDns;

impl Resolve for NoDns {
    fn resolve(&self, _host: &str, _port: u16) -> io::Result<Vec<IpAddr>> {
        panic!("an IP literal must not be resolved")
    }
}

#[test]
fn resolve_mode_catches_names_that_point_inside() {
    let dns = FakeDns::new(&[
        ("meta.attacker.example", &["169.254.169.254"]),
        ("loop.attacker.example", &["127.0.0.1"]),
        ("rebind.example.com", &["93.184.216.34", "127.0.0.1"]),
        ("mapped.example.com", &["::ffff:10.0.0.1"]),
        ("v6.example.com", &["fd00:ec2::254"]),
        ("empty.example.com", &[]),
        ("xn--bcher-kva.example", &["93.184.216.34"]),
        (
            "good.example.com",
            &[
                "93.184.216.34",
                "2606:2800:220:1:248:1893:25c8:1946",
                "93.184.216.34",
            ],
        ),
    ]);
    let policy = any_host_policy();
    let cases: &[(&str, UrlDenialCode, Option<AddressClass>)] = &[
        (
            "http://meta.attacker.example/latest/meta-data/",
            ForbiddenAddress,
            Some(AddressClass::Metadata),
        ),
        (
            "http://loop.attacker.example/",
            ForbiddenAddress,
            Some(AddressClass::Loopback),
        ),
        (
            "https://rebind.example.com/",
            ForbiddenAddress,
            Some(AddressClass::Loopback),
        ),
        (
            "https://mapped.example.com/",
            ForbiddenAddress,
            Some(AddressClass::Private),
        ),
        (
            "https://v6.example.com/",
            ForbiddenAddress,
            Some(AddressClass::Metadata),
        ),
        (
            "https://empty.example.com/",
            UrlDenialCode::ResolveFailed,
            None,
        ),
        (
            "https://unknown.example.com/",
            UrlDenialCode::ResolveFailed,
            None,
        ),
    ];
    for &(raw, code, class) in cases {
        // By shape alone, these are ordinary public names.
        assert!(policy.check(raw).is_ok(), "{raw:?}");
        let denial = policy.check_resolved(raw, &dns).expect_err(raw);
        assert_eq!(
            (denial.code(), denial.address_class()),
            (code, class),
            "{raw:?}"
        );
        assert_quiet(raw, &denial);
    }
    let failed = policy
        .check_resolved("https://unknown.example.com/", &dns)
        .unwrap_err();
    assert_eq!(failed.resolve_error_kind(), Some(io::ErrorKind::NotFound));
    assert!(!failed.to_string().contains("unknown"));

    let pinned = policy
        .check_resolved("https://good.example.com/x", &dns)
        .unwrap();
    let expected: Vec<IpAddr> = ["93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"]
        .iter()
        .map(|a| a.parse().unwrap())
        .collect();
    assert_eq!(pinned.pinned(), expected.as_slice());
    assert_eq!(pinned.socket_addrs().len(), 2);
    assert!(pinned.socket_addrs().iter().all(|s| s.port() == 443));

    // IDNs are resolved by their ASCII form.
    assert!(policy
        .check_resolved("https://bücher.example/", &dns)
        .is_ok());
    // IP literals are pinned without a lookup; forbidden ones never reach it.
    let literal = policy.check_resolved("http://0x08080808/", &NoDns).unwrap();
    assert_eq!(literal.pinned(), &["8.8.8.8".parse::<IpAddr>().unwrap()]);
    assert_eq!(
        policy
            .check_resolved("http://0x7f.1/", &NoDns)
            .unwrap_err()
            .code(),
        ForbiddenAddress
    );
    // Shape checks run before the resolver is asked.
    assert_eq!(
        policy
            .check_resolved("http://localhost/", &NoDns)
            .unwrap_err()
            .code(),
        ForbiddenHost
    );
}

#[test]
fn the_dangerous_opt_in_opens_private_addresses_but_not_metadata() {
    let mut config = UrlPolicyConfig::new().with_schemes(["http"]).with_hosts([
        "*.corp.example.com",
        "10.1.2.3",
        "169.254.169.254",
    ]);
    config.dangerous().allow_private_addresses(true);
    let policy = config.compile().unwrap();
    let dns = FakeDns::new(&[
        ("wiki.corp.example.com", &["10.1.2.4"]),
        ("meta.corp.example.com", &["169.254.169.254"]),
    ]);
    assert!(policy.check("http://10.1.2.3/").is_ok());
    assert!(policy.check("http://0xa010203/").is_ok());
    assert_eq!(
        policy.check("http://10.1.2.4/").unwrap_err().code(),
        HostNotAllowed
    );
    assert_eq!(
        policy
            .check("http://169.254.169.254/")
            .unwrap_err()
            .address_class(),
        Some(AddressClass::Metadata)
    );
    assert!(policy
        .check_resolved("http://wiki.corp.example.com/", &dns)
        .is_ok());
    assert_eq!(
        policy
            .check_resolved("http://meta.corp.example.com/", &dns)
            .unwrap_err()
            .address_class(),
        Some(AddressClass::Metadata)
    );
}

#[test]
fn system_resolver_is_a_resolve() {
    // No network here: only check that it is usable as `&dyn Resolve` and
    // that a literal never reaches it.
    let resolver = toolgate::url_guard::SystemResolver::new();
    let policy = any_host_policy();
    let checked = policy.check_resolved("http://1.1.1.1/", &resolver).unwrap();
    assert_eq!(checked.pinned().len(), 1);
}
