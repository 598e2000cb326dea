//! Checkers for the `format` names toolgate asserts. Each takes the string and
//! answers whether it is well-formed; none allocates on the common path.

mod idna;
mod net;
mod time;
mod uri_format;

/// A format checker.
pub(crate) type Checker = fn(&str) -> bool;

/// The checker for a format name, if toolgate has one.
pub(crate) fn checker(name: &str) -> Option<Checker> {
    Some(match name {
        "date-time" => time::date_time,
        "date" => time::date,
        "time" => time::time,
        "duration" => time::duration,
        "email" => net::email,
        "hostname" => net::hostname,
        "ipv4" => net::ipv4,
        "ipv6" => net::ipv6,
        "uri" => uri_format::uri,
        "uri-reference" => uri_format::uri_reference,
        "iri" => uri_format::iri,
        "iri-reference" => uri_format::iri_reference,
        "uri-template" => uri_format::uri_template,
        "uuid" => uuid,
        "regex" => regex,
        "json-pointer" => json_pointer,
        "relative-json-pointer" => relative_json_pointer,
        _ => return None,
    })
}

/// The format names toolgate can assert.
pub(crate) const KNOWN: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uri-template",
    "uuid",
    "regex",
    "json-pointer",
    "relative-json-pointer",
];

fn uuid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// ECMA-262 in Unicode mode: the `format` asks whether the string is a
/// regular expression, so Annex B leniencies (such as `\a`) are not allowed.
fn regex(s: &str) -> bool {
    regress::Regex::with_flags(s, "u").is_ok()
}

fn json_pointer(s: &str) -> bool {
    if s.is_empty() {
        return true;
    }
    if !s.starts_with('/') {
        return false;
    }
    let b = s.as_bytes();
    b.iter()
        .enumerate()
        .all(|(i, c)| *c != b'~' || matches!(b.get(i + 1), Some(b'0' | b'1')))
}

fn relative_json_pointer(s: &str) -> bool {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 || (digits > 1 && s.starts_with('0')) {
        return false;
    }
    let rest = s.get(digits..).unwrap_or("");
    rest == "#" || json_pointer(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_formats() {
        assert!(uuid("2eb8aa08-aa98-11ea-b4aa-73b441d16380"));
        assert!(!uuid("2eb8aa08-aa98-11ea-b4aa-73b441d1638"));
        assert!(json_pointer("/a~0b/c~1d"));
        assert!(!json_pointer("/a~2"));
        assert!(relative_json_pointer("0#"));
        assert!(relative_json_pointer("1/a"));
        assert!(!relative_json_pointer("01/a"));
        assert!(regex("^a+$"));
        assert!(!regex("^(a$"));
        for k in KNOWN {
            assert!(checker(k).is_some());
        }
    }
}
