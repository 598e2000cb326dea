//! RFC 3986 `uri` and `uri-reference`, RFC 3987 `iri` and `iri-reference`
//! (the same grammar with non-ASCII characters allowed), RFC 6570 `uri-template`.

fn is_unreserved(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~')
}

fn is_sub_delim(c: char) -> bool {
    matches!(
        c,
        '!' | '$' | '&' | '\'' | '(' | ')' | '*' | '+' | ',' | ';' | '='
    )
}

fn is_ucschar(c: char, iri: bool) -> bool {
    iri && !c.is_ascii() && !c.is_control() && !matches!(c, '\u{FFF0}'..='\u{FFFF}')
}

/// Every character is allowed by `extra` or unreserved/sub-delim/ucschar, and
/// every `%` starts a valid escape.
fn chars_ok(s: &str, iri: bool, extra: &[char]) -> bool {
    let b = s.as_bytes();
    for (i, c) in s.char_indices() {
        let ok = if c == '%' {
            b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
        } else {
            is_unreserved(c) || is_sub_delim(c) || extra.contains(&c) || is_ucschar(c, iri)
        };
        if !ok {
            return false;
        }
    }
    true
}

fn scheme_ok(s: &str) -> bool {
    let mut it = s.chars();
    it.next().is_some_and(|c| c.is_ascii_alphabetic())
        && it.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

fn authority_ok(a: &str, iri: bool) -> bool {
    let (userinfo, hostport) = match a.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, a),
    };
    if let Some(u) = userinfo {
        if !chars_ok(u, iri, &[':']) {
            return false;
        }
    }
    let (host, port) = if let Some(rest) = hostport.strip_prefix('[') {
        let Some((lit, after)) = rest.split_once(']') else {
            return false;
        };
        let lit_ok = if lit.starts_with(['v', 'V']) {
            lit.split_once('.').is_some_and(|(v, rest)| {
                v.len() > 1
                    && v.bytes().skip(1).all(|c| c.is_ascii_hexdigit())
                    && !rest.is_empty()
                    && chars_ok(rest, false, &[':'])
            })
        } else {
            super::net::ipv6(lit)
        };
        if !lit_ok {
            return false;
        }
        match after {
            "" => ("", None),
            p => match p.strip_prefix(':') {
                Some(port) => ("", Some(port)),
                None => return false,
            },
        }
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (hostport, None),
        }
    };
    if !chars_ok(host, iri, &[]) {
        return false;
    }
    port.is_none_or(|p| p.bytes().all(|c| c.is_ascii_digit()))
}

const PCHAR_EXTRA: &[char] = &[':', '@', '/'];
const QUERY_EXTRA: &[char] = &[':', '@', '/', '?'];

/// Path, query and fragment after the scheme or as a relative reference.
fn tail_ok(s: &str, iri: bool, relative: bool) -> bool {
    let (rest, fragment) = match s.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (s, None),
    };
    if fragment.is_some_and(|f| !chars_ok(f, iri, QUERY_EXTRA)) {
        return false;
    }
    let (hier, query) = match rest.split_once('?') {
        Some((h, q)) => (h, Some(q)),
        None => (rest, None),
    };
    if query.is_some_and(|q| !chars_ok(q, iri, QUERY_EXTRA)) {
        return false;
    }
    let path = if let Some(after) = hier.strip_prefix("//") {
        let end = after.find('/').unwrap_or(after.len());
        if !authority_ok(after.get(..end).unwrap_or(""), iri) {
            return false;
        }
        after.get(end..).unwrap_or("")
    } else {
        if relative {
            // path-noscheme: no ':' in the first segment.
            let first = hier.split('/').next().unwrap_or("");
            if first.contains(':') {
                return false;
            }
        }
        hier
    };
    chars_ok(path, iri, PCHAR_EXTRA)
}

fn absolute(s: &str, iri: bool) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    scheme_ok(scheme) && tail_ok(rest, iri, false)
}

fn reference(s: &str, iri: bool) -> bool {
    absolute(s, iri) || tail_ok(s, iri, true)
}

/// An absolute URI.
pub(crate) fn uri(s: &str) -> bool {
    absolute(s, false)
}

/// A URI or a relative reference.
pub(crate) fn uri_reference(s: &str) -> bool {
    reference(s, false)
}

/// An absolute IRI.
pub(crate) fn iri(s: &str) -> bool {
    absolute(s, true)
}

/// An IRI or a relative IRI reference.
pub(crate) fn iri_reference(s: &str) -> bool {
    reference(s, true)
}

fn varspec_ok(v: &str) -> bool {
    let (name, modifier) = if let Some(n) = v.strip_suffix('*') {
        (n, None)
    } else if let Some((n, m)) = v.split_once(':') {
        (n, Some(m))
    } else {
        (v, None)
    };
    if let Some(m) = modifier {
        let ok = !m.is_empty()
            && m.len() <= 4
            && !m.starts_with('0')
            && m.bytes().all(|c| c.is_ascii_digit());
        if !ok {
            return false;
        }
    }
    !name.is_empty()
        && !name.starts_with('.')
        && !name.ends_with('.')
        && !name.contains("..")
        && chars_ok(name, false, &[])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '%'))
}

/// An RFC 6570 URI template (any level).
pub(crate) fn uri_template(s: &str) -> bool {
    let mut rest = s;
    loop {
        let Some(open) = rest.find(['{', '}']) else {
            return literal_ok(rest);
        };
        if !literal_ok(rest.get(..open).unwrap_or(""))
            || rest.get(open..).is_some_and(|r| r.starts_with('}'))
        {
            return false;
        }
        let after = rest.get(open + 1..).unwrap_or("");
        let Some(close) = after.find('}') else {
            return false;
        };
        let expr = after.get(..close).unwrap_or("");
        let body = expr
            .strip_prefix(['+', '#', '.', '/', ';', '?', '&', '=', ',', '!', '@', '|'])
            .unwrap_or(expr);
        if body.is_empty() || !body.split(',').all(varspec_ok) {
            return false;
        }
        rest = after.get(close + 1..).unwrap_or("");
    }
}

fn literal_ok(s: &str) -> bool {
    let b = s.as_bytes();
    s.char_indices().all(|(i, c)| {
        if c == '%' {
            return b.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && b.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
        }
        !(c.is_control()
            || matches!(
                c,
                ' ' | '"' | '<' | '>' | '\\' | '^' | '`' | '{' | '|' | '}'
            ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        assert!(uri("http://foo.bar/?baz=qux#quux"));
        assert!(uri("urn:oasis:names:specification:docbook:dtd:xml:4.1.2"));
        assert!(uri("ldap://[2001:db8::7]/c=GB?objectClass?one"));
        assert!(!uri("//foo.bar/?baz=qux#quux"));
        assert!(!uri("http:// shouldfail.com"));
        assert!(!uri("http://example.com/%6G"));
        assert!(!uri("https://[@example.org/test.txt"));
        assert!(!uri("http://[::ffff:01.2.3.4]"));
        assert!(!uri("http:/[::1]"));
        assert!(uri_reference("/abc"));
        assert!(uri_reference("#frag"));
        assert!(!uri_reference("\\\\WINDOWS\\fileshare"));
        assert!(iri("http://ƒøø.ßår/?∂éœ=πîx#πîüx"));
        assert!(uri_template(
            "http://example.com/dictionary/{term:1}/{term}"
        ));
        assert!(!uri_template(
            "http://example.com/dictionary/{term:1}/{term"
        ));
    }
}
