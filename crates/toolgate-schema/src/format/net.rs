//! `ipv4`, `ipv6`, `hostname` (RFC 1123, with IDNA A-label checks) and
//! `email` (RFC 5321 mailbox).

/// Dotted-quad IPv4: four decimal octets, no leading zeros, ASCII digits only.
pub(crate) fn ipv4(s: &str) -> bool {
    let mut parts = 0;
    for p in s.split('.') {
        parts += 1;
        let b = p.as_bytes();
        if b.is_empty() || b.len() > 3 || !b.iter().all(u8::is_ascii_digit) {
            return false;
        }
        if b.len() > 1 && b.first() == Some(&b'0') {
            return false;
        }
        if p.parse::<u16>().map_or(true, |v| v > 255) {
            return false;
        }
    }
    parts == 4
}

fn hex_groups(s: &str) -> Option<usize> {
    if s.is_empty() {
        return Some(0);
    }
    let mut n = 0;
    let parts: Vec<&str> = s.split(':').collect();
    let last = parts.len() - 1;
    for (i, g) in parts.iter().enumerate() {
        if i == last && g.contains('.') {
            if !ipv4(g) {
                return None;
            }
            n += 2;
            continue;
        }
        if g.is_empty() || g.len() > 4 || !g.bytes().all(|c| c.is_ascii_hexdigit()) {
            return None;
        }
        n += 1;
    }
    Some(n)
}

/// IPv6 text form (RFC 4291 section 2.2), no zone identifier.
pub(crate) fn ipv6(s: &str) -> bool {
    if !s.is_ascii() || s.len() > 45 {
        return false;
    }
    match s.split_once("::") {
        Some((head, tail)) => {
            if tail.contains("::") || head.contains('.') {
                return false;
            }
            match (hex_groups(head), hex_groups(tail)) {
                (Some(a), Some(b)) => a + b <= 7,
                _ => false,
            }
        }
        None => hex_groups(s) == Some(8),
    }
}

/// An RFC 1123 host name; `xn--` labels must be valid IDNA A-labels.
pub(crate) fn hostname(s: &str) -> bool {
    if s.is_empty() || s.len() > 253 {
        return false;
    }
    s.split('.').all(label)
}

fn label(l: &str) -> bool {
    let b = l.as_bytes();
    if b.is_empty()
        || b.len() > 63
        || b.first() == Some(&b'-')
        || b.last() == Some(&b'-')
        || !b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
    {
        return false;
    }
    if b.get(2..4) == Some(b"--") {
        return match b.get(..4) {
            Some(p) if p.eq_ignore_ascii_case(b"xn--") => {
                super::idna::a_label(l.get(4..).unwrap_or(""))
            }
            _ => false,
        };
    }
    true
}

fn is_atext(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"!#$%&'*+-/=?^_`{|}~".contains(&c)
}

/// An RFC 5321 mailbox: dot-atom or quoted local part, `@`, then a host
/// name or an address literal.
pub(crate) fn email(s: &str) -> bool {
    let b = s.as_bytes();
    let domain_start = if b.first() == Some(&b'"') {
        let mut i = 1;
        loop {
            match b.get(i) {
                Some(b'"') => break,
                Some(b'\\') => {
                    if !b.get(i + 1).is_some_and(|c| (32..=126).contains(c)) {
                        return false;
                    }
                    i += 2;
                }
                Some(c) if (32..=126).contains(c) => i += 1,
                _ => return false,
            }
        }
        if b.get(i + 1) != Some(&b'@') {
            return false;
        }
        i + 2
    } else {
        let Some(at) = s.find('@') else { return false };
        let local = s.get(..at).unwrap_or("");
        if local.is_empty()
            || local.len() > 64
            || !local
                .split('.')
                .all(|atom| !atom.is_empty() && atom.bytes().all(is_atext))
        {
            return false;
        }
        at + 1
    };
    let domain = s.get(domain_start..).unwrap_or("");
    if let Some(lit) = domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        return match lit.strip_prefix("IPv6:") {
            Some(v6) => ipv6(v6),
            None => ipv4(lit),
        };
    }
    hostname(domain)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        assert!(ipv4("192.168.0.1"));
        assert!(!ipv4("087.10.0.1"));
        assert!(!ipv4("1.2.3"));
        assert!(ipv6("::1"));
        assert!(ipv6("1:2:3:4:5:6:7:8"));
        assert!(ipv6("::ffff:1.2.3.4"));
        assert!(!ipv6("1:2:3:4:5:6:7:8:9"));
        assert!(!ipv6("::ffff:01.2.3.4"));
        assert!(!ipv6("fe80::1%eth0"));
        assert!(!ipv6(":1:2"));
    }

    #[test]
    fn hosts_and_mail() {
        assert!(hostname("www.example.com"));
        assert!(!hostname("-a.com"));
        assert!(!hostname("example."));
        assert!(email("joe.bloggs@example.com"));
        assert!(email("\"joe bloggs\"@example.com"));
        assert!(email("joe@[IPv6:::1]"));
        assert!(!email("te..st@example.com"));
        assert!(!email("joe@"));
    }
}
