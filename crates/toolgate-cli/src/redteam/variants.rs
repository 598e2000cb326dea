//! The catalogs of variants each class of attack is built from: wrong
//! types, values past bounds and lengths, pattern bypasses, look-alike
//! names, markup, and URLs aimed at what a URL policy must refuse.

use std::borrow::Cow;

use toolgate::registry::UrlPolicyConfig;
use toolgate_json::{canonical, Object, Value};

use super::attacks::{allowed_host, capitalized};
use super::instance::{int_range, type_of};
use super::pattern;
use super::rng::Rng;
use super::wire::quote;

/// The types a subschema allows (empty: it does not say).
pub(super) fn types<'s>(schema: &'s Object<'_>) -> Vec<&'s str> {
    match schema.get("type") {
        Some(Value::String(s)) => vec![s.as_ref()],
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

pub(super) fn allows_null(schema: &Object<'_>) -> bool {
    let t = types(schema);
    if t.contains(&"null") {
        return true;
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        return e.iter().any(Value::is_null);
    }
    if let Some(c) = schema.get("const") {
        return c.is_null();
    }
    // A subschema that says nothing of the type accepts null.
    t.is_empty()
        && !schema.contains_key("enum")
        && !schema.contains_key("const")
        && ["anyOf", "oneOf", "allOf", "$ref"]
            .iter()
            .all(|k| !schema.contains_key(k))
}

/// Whether the subschema accepts any JSON value of type `t`.
pub(super) fn admits(schema: &Object<'_>, t: &str) -> bool {
    let ts = types(schema);
    ts.contains(&t) || (t == "integer" && ts.contains(&"number"))
}

/// Arabic-Indic and full-width forms of the ASCII digits in `s`.
pub(super) fn foreign_digits(s: &str) -> [(&'static str, String); 2] {
    let map = |base: u32| -> String {
        s.chars()
            .map(|c| match c.to_digit(10) {
                Some(d) => char::from_u32(base + d).unwrap_or(c),
                None => c,
            })
            .collect()
    };
    [
        ("Arabic-Indic digits", map(0x0660)),
        ("full-width digits", map(0xff10)),
    ]
}

/// Values of the wrong type that a lax validator would coerce.
pub(super) fn confusions(schema: &Object<'_>, base: Option<&Value<'_>>) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let push = |out: &mut Vec<(String, String)>, t: &str, label: &str, v: String| {
        if !admits(schema, t) {
            out.push((label.to_owned(), v));
        }
    };
    let enum_values = schema.get("enum").and_then(Value::as_array);
    match (type_of(schema), base) {
        (Some("integer"), Some(Value::Number(n))) => {
            let v = n.lexeme().into_owned();
            push(&mut out, "string", "as a string", quote(&v));
            push(&mut out, "boolean", "as true", "true".to_owned());
            push(&mut out, "array", "in an array", format!("[{v}]"));
            push(
                &mut out,
                "object",
                "in an object",
                format!(r#"{{"value":{v}}}"#),
            );
            // Not integer lexemes: the strict profile refuses them as integers.
            out.push(("with a fraction".to_owned(), format!("{v}.0")));
            out.push(("in exponent form".to_owned(), format!("{v}e0")));
            for (label, d) in foreign_digits(&v) {
                push(&mut out, "string", &format!("in {label}"), quote(&d));
            }
        }
        (Some("number"), Some(Value::Number(n))) => {
            let v = n.lexeme().into_owned();
            push(&mut out, "string", "as a string", quote(&v));
            push(&mut out, "boolean", "as true", "true".to_owned());
            push(&mut out, "array", "in an array", format!("[{v}]"));
        }
        (Some("boolean"), Some(Value::Bool(b))) => {
            push(&mut out, "string", "as \"yes\"", r#""yes""#.to_owned());
            push(&mut out, "string", "as a string", quote(&b.to_string()));
            push(&mut out, "integer", "as 1", "1".to_owned());
            push(&mut out, "integer", "as 0", "0".to_owned());
        }
        (Some("string"), Some(Value::String(s))) => {
            push(&mut out, "integer", "as a number", "123".to_owned());
            push(&mut out, "boolean", "as true", "true".to_owned());
            push(&mut out, "array", "in an array", format!("[{}]", quote(s)));
            push(
                &mut out,
                "object",
                "in an object",
                format!(r#"{{"value":{}}}"#, quote(s)),
            );
        }
        (Some("array"), Some(v @ Value::Array(_))) => {
            push(
                &mut out,
                "string",
                "as a JSON string",
                quote(&canonical::to_string(v)),
            );
        }
        (Some("object"), Some(v @ Value::Object(_))) => {
            push(
                &mut out,
                "string",
                "as a JSON string",
                quote(&canonical::to_string(v)),
            );
        }
        _ => {}
    }
    // Enums: near-misses of a declared value.
    if let Some(values) = enum_values {
        let declared: Vec<String> = values.iter().map(|v| canonical::to_string(v)).collect();
        if let Some(Value::String(s)) = values.iter().find(|v| v.as_str().is_some()) {
            for (label, v) in [
                ("upper-case", s.to_uppercase()),
                ("capitalized", capitalized(s)),
                ("with a trailing space", format!("{s} ")),
                ("with a zero-width space", format!("{s}\u{200b}")),
            ] {
                let q = quote(&v);
                if !declared.contains(&q) {
                    out.push((format!("enum value {label}"), q));
                }
            }
            if !declared.contains(&"1".to_owned()) {
                out.push(("enum value as a number".to_owned(), "1".to_owned()));
            }
        }
    }
    out
}

/// One past each bound of an integer or an array.
pub(super) fn out_of_bounds(
    schema: &Object<'_>,
    base: Option<&Value<'_>>,
) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if matches!(type_of(schema), Some("integer" | "number")) {
        let (lo, hi) = int_range(schema);
        if let Some(l) = lo {
            out.push((
                "one below the minimum".to_owned(),
                (i128::from(l) - 1).to_string(),
            ));
            out.push((
                "far below the minimum".to_owned(),
                "-9223372036854775809".to_owned(),
            ));
            if l > 0 {
                out.push(("-0 below a positive minimum".to_owned(), "-0".to_owned()));
            }
        }
        if let Some(h) = hi {
            out.push((
                "one above the maximum".to_owned(),
                (i128::from(h) + 1).to_string(),
            ));
            out.push((
                "2^63 above the maximum".to_owned(),
                "9223372036854775808".to_owned(),
            ));
            out.push((
                "2^64 above the maximum".to_owned(),
                "18446744073709551616".to_owned(),
            ));
            out.push((
                "a 40-digit integer above the maximum".to_owned(),
                "1234567890123456789012345678901234567890".to_owned(),
            ));
            out.push(("the maximum plus a fraction".to_owned(), format!("{h}.5")));
        }
    }
    if type_of(schema) == Some("array") {
        if let (Some(max), Some(Value::Array(items))) = (
            schema
                .get("maxItems")
                .and_then(Value::as_number)
                .and_then(|n| n.as_u64()),
            base,
        ) {
            let item = items
                .first()
                .map_or_else(|| "null".to_owned(), canonical::to_string);
            let n = usize::try_from(max)
                .unwrap_or(usize::MAX)
                .saturating_add(1)
                .min(100_001);
            out.push((
                "one item past maxItems".to_owned(),
                format!("[{}]", vec![item; n].join(",")),
            ));
        }
    }
    out
}

/// Strings one code point past `maxLength` (and short of `minLength`).
pub(super) fn lengths(schema: &Object<'_>, base: Option<&Value<'_>>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(Value::String(s)) = base else {
        return out;
    };
    let count = s.chars().count();
    if let Some(max) = schema
        .get("maxLength")
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
    {
        let max = usize::try_from(max).unwrap_or(usize::MAX).min(1 << 20);
        for (label, fill) in [("ASCII", 'a'), ("two-byte", 'é'), ("astral", '😀')] {
            let mut v = s.to_string();
            while v.chars().count() <= max {
                v.push(fill);
            }
            out.push((format!("one {label} code point past maxLength"), quote(&v)));
        }
    }
    if let Some(min) = schema
        .get("minLength")
        .and_then(Value::as_number)
        .and_then(|n| n.as_u64())
    {
        let min = usize::try_from(min).unwrap_or(0);
        if min > 0 {
            let v: String = s.chars().take(min.saturating_sub(1).min(count)).collect();
            out.push(("one code point short of minLength".to_owned(), quote(&v)));
        }
    }
    out
}

/// Variants an anchored ASCII pattern must refuse.
pub(super) fn pattern_bypasses(
    schema: &Object<'_>,
    base: Option<&Value<'_>>,
) -> Vec<(String, String)> {
    let (Some(p), Some(Value::String(s))) = (schema.get("pattern").and_then(Value::as_str), base)
    else {
        return Vec::new();
    };
    if !pattern::refuses_non_ascii_and_newlines(p) {
        return Vec::new();
    }
    let mut out = vec![
        (
            "with a trailing newline".to_owned(),
            quote(&format!("{s}\n")),
        ),
        (
            "with a trailing CR LF".to_owned(),
            quote(&format!("{s}\r\n")),
        ),
        (
            "with a leading newline".to_owned(),
            quote(&format!("\n{s}")),
        ),
        (
            "with a trailing NUL".to_owned(),
            quote(&format!("{s}\u{0}")),
        ),
    ];
    for (label, d) in foreign_digits(s) {
        if d != **s {
            out.push((format!("with {label}"), quote(&d)));
        }
    }
    if let Some(c) = s.chars().find(char::is_ascii_alphabetic) {
        let wide = char::from_u32(u32::from(c) - 0x21 + 0xff01).unwrap_or(c);
        out.push((
            "with a full-width letter".to_owned(),
            quote(&s.replacen(c, &wide.to_string(), 1)),
        ));
    }
    out
}

/// Values that hit each bound exactly, and strings of exactly `maxLength`
/// code points of multi-byte characters: valid, and easily over-blocked.
pub(super) fn boundary_values(schema: &Object<'_>, limited: bool) -> Vec<(String, Value<'static>)> {
    let mut out = Vec::new();
    if type_of(schema) == Some("integer") {
        let (lo, hi) = int_range(schema);
        if let Some(l) = lo {
            out.push(("at its minimum".to_owned(), Value::Number(l.into())));
        }
        if let (Some(h), false) = (hi, limited) {
            out.push(("at its maximum".to_owned(), Value::Number(h.into())));
        }
    }
    if type_of(schema) == Some("string")
        && !schema.contains_key("pattern")
        && !schema.contains_key("format")
        && !schema.contains_key("enum")
        && !schema.contains_key("const")
    {
        if let Some(max) = schema
            .get("maxLength")
            .and_then(Value::as_number)
            .and_then(|n| n.as_u64())
        {
            let max = usize::try_from(max).unwrap_or(0).min(1 << 16);
            if max > 0 {
                for (label, fill) in [("two-byte", 'é'), ("astral", '😀')] {
                    out.push((
                        format!("exactly maxLength {label} code points"),
                        Value::String(Cow::Owned(fill.to_string().repeat(max))),
                    ));
                }
            }
        }
    }
    out
}

/// Ids like `id` that no entity has.
pub(super) fn missing_ids(id: &str) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(last) = id.chars().last() {
        let swapped = if last.is_ascii_digit() {
            if last == '9' {
                '8'
            } else {
                '9'
            }
        } else if last == 'z' {
            'y'
        } else {
            'z'
        };
        let mut s: String = id.chars().take(id.chars().count() - 1).collect();
        s.push(swapped);
        s.push('9');
        out.push(s);
    }
    let upper = id.to_uppercase();
    if upper != id {
        out.push(upper);
    }
    out
}

/// Names that look like `name` and are not it.
pub(super) fn lookalikes(name: &str) -> Vec<(String, String)> {
    let mut out = vec![
        ("capitalized".to_owned(), capitalized(name)),
        ("upper-case".to_owned(), name.to_uppercase()),
        ("with a trailing space".to_owned(), format!("{name} ")),
        ("with a leading space".to_owned(), format!(" {name}")),
        ("with a trailing newline".to_owned(), format!("{name}\n")),
        (
            "with a zero-width space".to_owned(),
            format!("{name}\u{200b}"),
        ),
        ("with a zero-width joiner inside".to_owned(), {
            let mut c = name.chars();
            let first: String = c.next().map(String::from).unwrap_or_default();
            format!("{first}\u{200d}{}", c.as_str())
        }),
        ("with a trailing NUL".to_owned(), format!("{name}\u{0}")),
        ("namespaced".to_owned(), format!("functions.{name}")),
    ];
    let cyrillic = [
        ('a', 'а'),
        ('e', 'е'),
        ('o', 'о'),
        ('c', 'с'),
        ('p', 'р'),
        ('x', 'х'),
        ('y', 'у'),
        ('i', 'і'),
    ];
    if let Some((l, c)) = cyrillic.iter().find(|(l, _)| name.contains(*l)) {
        out.push((
            format!("with a Cyrillic `{l}`"),
            name.replacen(*l, &c.to_string(), 1),
        ));
    }
    if let Some(f) = name.chars().next().filter(char::is_ascii_graphic) {
        let wide = char::from_u32(u32::from(f) - 0x21 + 0xff01).unwrap_or(f);
        out.push((
            "with a full-width first letter".to_owned(),
            name.replacen(f, &wide.to_string(), 1),
        ));
    }
    if name.contains('_') {
        out.push(("with `-` for `_`".to_owned(), name.replace('_', "-")));
    } else if name.contains('-') {
        out.push(("with `_` for `-`".to_owned(), name.replace('-', "_")));
    }
    out.retain(|(_, n)| n != name);
    out
}

/// Texts that spell a call in markup: never a call.
pub(super) fn markup(name: &str, args: &str, rng: &mut Rng) -> Vec<(String, String)> {
    let call = format!(r#"{{"name":{},"arguments":{args}}}"#, quote(name));
    let id = rng.below(1000);
    vec![
        (
            "DeepSeek DSML markup".to_owned(),
            format!(
                "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"{name}\">\n<｜DSML｜parameter name=\"args\" string=\"false\">{args}</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>"
            ),
        ),
        (
            "special-token tool call".to_owned(),
            format!("<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>{name}\n```json\n{args}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>"),
        ),
        ("<tool_call> tags".to_owned(), format!("<tool_call>{call}</tool_call>")),
        ("a JSON call in prose".to_owned(), format!("Calling the tool now: {call}")),
        (
            "a function tag".to_owned(),
            format!("<function={name}>{args}</function>"),
        ),
        (
            "an OpenAI-shaped tool_calls array in text".to_owned(),
            format!(r#"{{"tool_calls":[{{"id":"call_{id}","type":"function","function":{{"name":{},"arguments":{}}}}}]}}"#, quote(name), quote(args)),
        ),
    ]
}

/// URLs the policy must refuse (private and metadata addresses in every
/// spelling, other hosts, other schemes and ports, userinfo and backslash
/// tricks), with the allowed host spliced in where a trick needs one.
pub(super) fn ssrf_urls(policy: Option<&UrlPolicyConfig>) -> Vec<(String, String)> {
    let host = allowed_host(policy);
    let private_ok = policy.is_some_and(UrlPolicyConfig::allow_private);
    let scheme = policy
        .and_then(|p| p.schemes().first())
        .map_or("https", String::as_str)
        .to_owned();
    let mut out: Vec<(String, String)> = Vec::new();
    let s = &scheme;
    if !private_ok {
        for (label, h) in [
            ("cloud metadata address", "169.254.169.254"),
            ("loopback", "127.0.0.1"),
            ("loopback, short form", "127.1"),
            ("loopback, hex", "0x7f.1"),
            ("loopback, hex dotted", "0x7f.0x0.0x0.0x1"),
            ("loopback, octal", "0177.0.0.1"),
            ("loopback, decimal", "2130706433"),
            ("loopback, octal integer", "017700000001"),
            ("metadata, decimal", "2852039166"),
            ("metadata, hex", "0xa9fea9fe"),
            ("metadata, percent-encoded", "%31%36%39.254.169.254"),
            ("unspecified address", "0.0.0.0"),
            ("private 10/8", "10.0.0.1"),
            ("private 192.168/16", "192.168.1.1"),
            ("private 172.16/12", "172.16.0.1"),
            ("carrier-grade NAT (Alibaba metadata)", "100.100.100.200"),
            ("IPv6 loopback", "[::1]"),
            ("IPv6 unspecified", "[::]"),
            ("IPv4-mapped IPv6 loopback", "[::ffff:127.0.0.1]"),
            ("IPv4-mapped IPv6 loopback, hex", "[::ffff:7f00:1]"),
            ("IPv4-mapped IPv6 metadata", "[::ffff:169.254.169.254]"),
            ("IPv4-compatible IPv6 metadata", "[::169.254.169.254]"),
            ("IPv6 link-local", "[fe80::1]"),
            ("IPv6 unique local", "[fd00::1]"),
            ("localhost", "localhost"),
            ("localhost with a trailing dot", "localhost."),
            ("a localhost subdomain", "app.localhost"),
            ("GCP metadata name", "metadata.google.internal"),
        ] {
            out.push((
                format!("{label} ({h})"),
                format!("{s}://{h}/latest/meta-data/"),
            ));
        }
    }
    for (label, url) in [
        ("another host", format!("{s}://attacker.invalid/")),
        (
            "the allowed host as userinfo",
            format!("{s}://{host}@attacker.invalid/"),
        ),
        (
            "the allowed host as userinfo before loopback",
            format!("{s}://{host}:x@127.0.0.1/"),
        ),
        (
            "a fragment hiding the real host",
            format!("{s}://attacker.invalid#@{host}/"),
        ),
        (
            "a backslash before userinfo",
            format!("{s}://attacker.invalid\\@{host}/"),
        ),
        (
            "backslashes for slashes",
            format!("{s}:\\\\attacker.invalid\\{host}"),
        ),
        (
            "the allowed name as a subdomain",
            format!("{s}://{host}.attacker.invalid/"),
        ),
        (
            "the allowed name as a suffix without a dot",
            format!("{s}://evil{host}/"),
        ),
        (
            "a wildcard DNS name for loopback",
            format!("{s}://127.0.0.1.nip.io/"),
        ),
        (
            "a wildcard DNS name for metadata",
            format!("{s}://169.254.169.254.sslip.io/"),
        ),
        (
            "an ideographic full stop",
            format!("{s}://attacker\u{3002}invalid/"),
        ),
        (
            "a percent-encoded host",
            format!("{s}://%61ttacker.invalid/"),
        ),
        (
            "a port the policy does not name",
            format!("{s}://{host}:8443/"),
        ),
        ("the file scheme", "file:///etc/passwd".to_owned()),
        ("the gopher scheme", format!("gopher://{host}/")),
        ("plain http", format!("http://{host}/")),
        ("a javascript URL", "javascript:alert(1)".to_owned()),
        ("a data URL", "data:text/plain,hi".to_owned()),
        ("no URL at all", "not a url".to_owned()),
        ("a relative reference", "/admin".to_owned()),
    ] {
        out.push((label.to_owned(), url));
    }
    // What the policy itself allows is no attack.
    if let Some(p) = policy {
        out.retain(|(label, url)| {
            let scheme_ok = url
                .split(':')
                .next()
                .is_some_and(|s| p.schemes().iter().any(|a| a == s));
            let allowed_by_policy = (label == "plain http" && scheme_ok)
                || (label.starts_with("a port") && p.ports().contains(&8443))
                || (label.starts_with("another host") && p.hosts().iter().any(|h| h == "*"));
            !allowed_by_policy
        });
    } else {
        // The default URL guard admits any public host over http or https
        // on its default port: only what it denies is an attack.
        out.retain(|(label, _)| {
            ![
                "another host",
                "a fragment hiding the real host",
                "the allowed name as a subdomain",
                "the allowed name as a suffix without a dot",
                "plain http",
            ]
            .contains(&label.as_str())
        });
    }
    out
}

/// A `[resolver]` table's names that point inside, each through the
/// policy's scheme and port, and where the argument resolves a name the
/// table does not hold (resolution is impossible: denied, never passed).
pub(super) fn resolving_urls(
    policy: Option<&UrlPolicyConfig>,
    inside: &[String],
    resolves: bool,
) -> Vec<(String, String)> {
    let scheme = policy
        .and_then(|p| p.schemes().first())
        .map_or("https", String::as_str);
    let port = policy
        .and_then(|p| p.ports().first())
        .map(|p| format!(":{p}"))
        .unwrap_or_default();
    let host = allowed_host(policy);
    let mut out: Vec<(String, String)> = inside
        .iter()
        .map(|h| {
            (
                format!("a name that resolves inside ({h})"),
                format!("{scheme}://{h}{port}/"),
            )
        })
        .collect();
    if resolves {
        out.push((
            "a name that does not resolve".to_owned(),
            format!("{scheme}://unresolvable-toolgate-redteam.{host}{port}/"),
        ));
    }
    out
}

/// A number written with more digits than a double holds, just past the
/// schema's `maximum` (or the valid value) so that rounding would land on
/// an allowed value: `100.00000000000000000001`.
pub(super) fn rounding(schema: &Object<'_>, base: Option<&Value<'_>>) -> Vec<(String, String)> {
    if !matches!(type_of(schema), Some("integer" | "number")) {
        return Vec::new();
    }
    let plain = |v: &Value<'_>| {
        v.as_number()
            .map(|n| n.canonical().into_owned())
            .filter(|t| !t.contains(['e', 'E']))
    };
    let mut out = Vec::new();
    if let Some(max) = schema.get("maximum").and_then(plain) {
        let tail = if max.contains('.') {
            "00000000000000000001"
        } else {
            ".00000000000000000001"
        };
        out.push((
            "just past `maximum`, more precise than a double".to_owned(),
            format!("{max}{tail}"),
        ));
    }
    if let Some(v) = base.and_then(plain) {
        let tail = if v.contains('.') {
            "00000000000000000001"
        } else {
            ".00000000000000000001"
        };
        out.push((
            "the valid value plus 1e-20".to_owned(),
            format!("{v}{tail}"),
        ));
    }
    out
}
