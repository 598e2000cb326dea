//! Just enough RFC 3986 to resolve `$id`, `$ref` and `$dynamicRef` against a
//! base: split into components, resolve a reference, remove dot segments.

/// The five components of a URI reference.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Parts<'a> {
    scheme: Option<&'a str>,
    authority: Option<&'a str>,
    path: &'a str,
    query: Option<&'a str>,
    fragment: Option<&'a str>,
}

fn split(s: &str) -> Parts<'_> {
    let (rest, fragment) = match s.split_once('#') {
        Some((r, f)) => (r, Some(f)),
        None => (s, None),
    };
    let (rest, query) = match rest.split_once('?') {
        Some((r, q)) => (r, Some(q)),
        None => (rest, None),
    };
    let mut scheme = None;
    let mut rest = rest;
    if let Some(i) = rest.find(':') {
        let cand = rest.get(..i).unwrap_or("");
        if !cand.is_empty()
            && !cand.contains('/')
            && cand.starts_with(|c: char| c.is_ascii_alphabetic())
            && cand
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        {
            scheme = Some(cand);
            rest = rest.get(i + 1..).unwrap_or("");
        }
    }
    let (authority, path) = match rest.strip_prefix("//") {
        Some(r) => {
            let end = r.find('/').unwrap_or(r.len());
            (Some(r.get(..end).unwrap_or("")), r.get(end..).unwrap_or(""))
        }
        None => (None, rest),
    };
    Parts {
        scheme,
        authority,
        path,
        query,
        fragment,
    }
}

fn remove_dot_segments(path: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    let absolute = path.starts_with('/');
    let segs: Vec<&str> = path.split('/').collect();
    let n = segs.len();
    for (i, seg) in segs.iter().enumerate() {
        if i == 0 && absolute {
            continue;
        }
        match *seg {
            "." => {
                if i + 1 == n {
                    out.push("");
                }
            }
            ".." => {
                out.pop();
                if i + 1 == n {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    let joined = out.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

fn merge(base: &Parts<'_>, rel_path: &str) -> String {
    if base.authority.is_some() && base.path.is_empty() {
        return format!("/{rel_path}");
    }
    match base.path.rfind('/') {
        Some(i) => format!("{}{}", base.path.get(..=i).unwrap_or(""), rel_path),
        None => rel_path.to_owned(),
    }
}

/// Resolves `reference` against `base` (RFC 3986 section 5.2.2).
pub(crate) fn resolve(base: &str, reference: &str) -> String {
    let r = split(reference);
    let b = split(base);
    let (scheme, authority, path, query);
    if let Some(s) = r.scheme {
        scheme = Some(s);
        authority = r.authority;
        path = remove_dot_segments(r.path);
        query = r.query;
    } else {
        scheme = b.scheme;
        if r.authority.is_some() {
            authority = r.authority;
            path = remove_dot_segments(r.path);
            query = r.query;
        } else {
            authority = b.authority;
            if r.path.is_empty() {
                path = b.path.to_owned();
                query = r.query.or(b.query);
            } else {
                path = if r.path.starts_with('/') {
                    remove_dot_segments(r.path)
                } else {
                    remove_dot_segments(&merge(&b, r.path))
                };
                query = r.query;
            }
        }
    }
    let mut out = String::new();
    if let Some(s) = scheme {
        out.push_str(s);
        out.push(':');
    }
    if let Some(a) = authority {
        out.push_str("//");
        out.push_str(a);
    }
    out.push_str(&path);
    if let Some(q) = query {
        out.push('?');
        out.push_str(q);
    }
    if let Some(f) = r.fragment {
        out.push('#');
        out.push_str(f);
    }
    out
}

/// Splits off the fragment: `("http://x/y", "frag")`. An absent fragment is `""`.
pub(crate) fn split_fragment(uri: &str) -> (&str, &str) {
    match uri.split_once('#') {
        Some((a, f)) => (a, f),
        None => (uri, ""),
    }
}

/// Whether the URI has a scheme (is absolute, fragment aside).
pub(crate) fn has_scheme(uri: &str) -> bool {
    split(uri).scheme.is_some()
}

/// Percent-decodes a fragment. Returns `None` for a malformed escape or non-UTF-8 result.
pub(crate) fn percent_decode(s: &str) -> Option<String> {
    if !s.contains('%') {
        return Some(s.to_owned());
    }
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        if c == b'%' {
            let h = b.get(i + 1..i + 3)?;
            let h = std::str::from_utf8(h).ok()?;
            out.push(u8::from_str_radix(h, 16).ok()?);
            i += 3;
        } else {
            out.push(c);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3986_examples() {
        let base = "http://a/b/c/d;p?q";
        for (r, want) in [
            ("g", "http://a/b/c/g"),
            ("./g", "http://a/b/c/g"),
            ("g/", "http://a/b/c/g/"),
            ("/g", "http://a/g"),
            ("//g", "http://g"),
            ("?y", "http://a/b/c/d;p?y"),
            ("#s", "http://a/b/c/d;p?q#s"),
            ("", "http://a/b/c/d;p?q"),
            ("..", "http://a/b/"),
            ("../g", "http://a/b/g"),
            ("../../g", "http://a/g"),
            ("../../../g", "http://a/g"),
            ("g;x=1/../y", "http://a/b/c/y"),
        ] {
            assert_eq!(resolve(base, r), want, "{r}");
        }
        assert_eq!(
            resolve("urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed", "#foo"),
            "urn:uuid:deadbeef-1234-ffff-ffff-4321feebdaed#foo"
        );
        assert_eq!(percent_decode("a%25b").as_deref(), Some("a%b"));
    }
}
