//! The rules the front ends' tables share: a configured token's hash.

use toolgate::config::front::Spanned;
use toolgate::config::{Config, Error, ErrorCode};

/// A configured token's `sha256`: 64 hexadecimal digits (either case), not
/// the hash of a token `declared` before it in the same table.
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
    use super::parse_sha256;

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
}
