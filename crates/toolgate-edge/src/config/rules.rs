//! The rules the front ends' tables share, each written once: a configured
//! token's hash, a listen address, a user name (and the users a token may
//! speak for), a header name, an identity provider's URL.

use std::net::SocketAddr;

use toolgate::config::front::Spanned;
use toolgate::config::{Config, Error, ErrorCode};

/// The longest user name accepted, in bytes.
pub const MAX_USER_NAME_BYTES: usize = 256;

/// The longest header name accepted, in bytes.
pub const MAX_HEADER_NAME_BYTES: usize = 256;

/// The one rule for a user name, wherever one comes from (a token's
/// `user` in `[[mcp.token]]` or `[[proxy.token]]`, `[proxy] user`, the
/// proxy's trusted user header, a JWT's user claim): 1 to
/// [`MAX_USER_NAME_BYTES`] bytes, not blank, no control character. `Err`
/// says what is wrong.
///
/// # Errors
///
/// What is wrong with `name`, in words.
pub fn check_user_name(name: &str) -> Result<(), &'static str> {
    if name.trim().is_empty() {
        Err("a user name must not be empty or blank")
    } else if name.len() > MAX_USER_NAME_BYTES {
        Err("a user name must be at most 256 bytes")
    } else if name.chars().any(char::is_control) {
        Err("a user name must not contain control characters")
    } else {
        Ok(())
    }
}

/// Whether a token bound to `users` (`None`: unbound) may speak for `user`:
/// a name equal to one of them, or starting with a prefix given as
/// `prefix*`.
pub fn speaks_for(users: Option<&[String]>, user: &str) -> bool {
    users.is_none_or(|users| {
        users.iter().any(|u| match u.strip_suffix('*') {
            Some(prefix) => user.starts_with(prefix),
            None => u == user,
        })
    })
}

/// Whether `url` is `https://HOST…`, or `http://` on a loopback address:
/// the rule for every URL of an identity provider (a JWKS, the OpenID
/// endpoints, those a discovery document names).
pub fn provider_url_ok(url: &str) -> bool {
    if url.len() > 2048 || url.chars().any(|c| c.is_control() || c == ' ') {
        return false;
    }
    if let Some(rest) = url.strip_prefix("https://") {
        return !rest.is_empty() && !rest.starts_with('/');
    }
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    ["127.0.0.1", "localhost", "[::1]"].iter().any(|h| {
        rest.strip_prefix(h)
            .is_some_and(|after| after.is_empty() || after.starts_with([':', '/']))
    })
}

/// Whether `name` is an HTTP header name: 1 to [`MAX_HEADER_NAME_BYTES`]
/// token characters (RFC 9110 §5.6.2).
pub(crate) fn header_name_ok(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX_HEADER_NAME_BYTES
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// A configured header name (`key`), lower-cased; refused at its key when
/// it is not one ([`header_name_ok`]).
pub(crate) fn header_name(
    config: &Config,
    raw: &Spanned<String>,
    key: &str,
) -> Result<String, Error> {
    if header_name_ok(raw.get_ref()) {
        Ok(raw.get_ref().to_ascii_lowercase())
    } else {
        Err(config.error_at_key(
            ErrorCode::InvalidValue,
            raw.span().start,
            key,
            format!("`{key}` must be a header name"),
        ))
    }
}

/// A configured user name (`key`: `user`, `identity`), by
/// [`check_user_name`]; refused at its key.
pub(crate) fn user_name(
    config: &Config,
    raw: &Spanned<String>,
    key: &str,
) -> Result<String, Error> {
    match check_user_name(raw.get_ref()) {
        Ok(()) => Ok(raw.get_ref().clone()),
        Err(why) => Err(config.error_at_key(
            ErrorCode::InvalidValue,
            raw.span().start,
            key,
            format!("`{key}`: {why}"),
        )),
    }
}

/// A `listen` key: an address and port; the refusal shows `example` (the
/// table's default).
pub(crate) fn listen(
    config: &Config,
    raw: &Spanned<String>,
    example: &str,
) -> Result<SocketAddr, Error> {
    raw.get_ref().parse().map_err(|_| {
        config.error_at_key(
            ErrorCode::InvalidValue,
            raw.span().start,
            "listen",
            format!("`listen` must be an address and port, such as \"{example}\""),
        )
    })
}

/// A path the config names, relative to its folder (`.` for a config
/// named without one), as the core loader resolves its own.
pub(crate) fn resolve(config: &Config, path: &str) -> std::path::PathBuf {
    match config.base_dir() {
        dir if dir.as_os_str().is_empty() => std::path::Path::new(".").join(path),
        dir => dir.join(path),
    }
}

/// A configured token's `sha256`: 64 hexadecimal digits (either case), not
/// the hash of a token `declared` before it in the same table. The one
/// rule of `[[server.token]]`, `[[mcp.token]]` and `[[proxy.token]]`.
pub(crate) fn token_sha256<'d>(
    config: &Config,
    raw: &Spanned<String>,
    mut declared: impl Iterator<Item = &'d [u8; 32]>,
) -> Result<[u8; 32], Error> {
    let at = |message: &str| {
        config.error_at_key(
            ErrorCode::InvalidValue,
            raw.span().start,
            "sha256",
            message.to_owned(),
        )
    };
    let sha256 = parse_sha256(raw.get_ref())
        .ok_or_else(|| at("`sha256` must be the SHA-256 of the token: 64 hexadecimal digits"))?;
    if declared.any(|d| *d == sha256) {
        return Err(at("this token is already declared"));
    }
    Ok(sha256)
}

/// 64 hexadecimal digits (either case) as 32 bytes.
fn parse_sha256(hex: &str) -> Option<[u8; 32]> {
    let digits = hex.as_bytes();
    if digits.len() != 64 || !digits.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    let mut out = [0u8; 32];
    for (byte, pair) in out.iter_mut().zip(digits.chunks_exact(2)) {
        let text = std::str::from_utf8(pair).ok()?;
        *byte = u8::from_str_radix(text, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hash_is_64_hex_digits_of_either_case() {
        let lower = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        let bytes = parse_sha256(lower).unwrap();
        assert_eq!(bytes[0], 0x9f);
        assert_eq!(parse_sha256(&lower.to_ascii_uppercase()), Some(bytes));
        for bad in [
            "",
            "9f86",
            &lower[1..],
            &format!("{lower}0"),
            &lower.replace('9', "g"),
        ] {
            assert_eq!(parse_sha256(bad), None, "{bad}");
        }
        // A sign or a space is not a digit (`from_str_radix` would take `+`).
        assert_eq!(parse_sha256(&format!("+{}", &lower[1..])), None);
    }

    #[test]
    fn one_rule_for_user_names() {
        assert!(check_user_name("alice").is_ok());
        assert!(check_user_name("Zoë Müller").is_ok());
        assert!(check_user_name(&"a".repeat(256)).is_ok());
        for bad in ["", "   ", "\t", "al\nice", "al\u{7f}ice", "al\u{85}ice"] {
            assert!(check_user_name(bad).is_err(), "{bad:?}");
        }
        assert!(check_user_name(&"a".repeat(257)).is_err());
        // 256 bytes, not characters: 129 two-byte characters are too many.
        assert!(check_user_name(&"é".repeat(129)).is_err());
    }

    #[test]
    fn a_token_speaks_for_its_users_and_prefixes() {
        let users = ["alice".to_owned(), "team-*".to_owned()];
        assert!(speaks_for(None, "anyone"));
        assert!(speaks_for(Some(&users), "alice"));
        assert!(speaks_for(Some(&users), "team-a"));
        assert!(speaks_for(Some(&users), "team-"));
        assert!(!speaks_for(Some(&users), "alice2"));
        assert!(!speaks_for(Some(&users), "Alice"));
        assert!(!speaks_for(Some(&users), "team"));
        assert!(!speaks_for(Some(&[]), "alice"));
        assert!(speaks_for(Some(&["*".to_owned()]), "x"));
    }

    #[test]
    fn provider_urls_are_https_or_loopback_http() {
        for ok in [
            "https://idp.example/jwks",
            "http://127.0.0.1:8080/jwks",
            "http://localhost/jwks",
            "http://[::1]:9/k",
        ] {
            assert!(provider_url_ok(ok), "{ok}");
        }
        for bad in [
            "http://idp.example/jwks",
            "http://127.0.0.1.evil.example/jwks",
            "http://localhost.evil.example/",
            "https:///x",
            "ftp://x",
            "https://a b",
            "https://a\u{0}b",
            &format!("https://a/{}", "b".repeat(2048)),
            "",
        ] {
            assert!(!provider_url_ok(bad), "{bad}");
        }
    }

    #[test]
    fn header_names_are_tokens_of_bounded_length() {
        for ok in ["x-user", "X_Forwarded_User", "a", "x.y!#$%&'*+^`|~"] {
            assert!(header_name_ok(ok), "{ok}");
        }
        assert!(header_name_ok(&"h".repeat(MAX_HEADER_NAME_BYTES)));
        for bad in ["", "x user", "x:user", "x\nuser", "é", "(x)", "x/y"] {
            assert!(!header_name_ok(bad), "{bad}");
        }
        assert!(!header_name_ok(&"h".repeat(MAX_HEADER_NAME_BYTES + 1)));
    }
}
