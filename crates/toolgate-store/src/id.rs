//! Ids the store issues (approvals, pins), read back exactly as issued.

use std::fmt;

/// A text that is not an id as the store issues them: decimal digits
/// without a leading zero, sign, space or other character, from 1 to
/// 2^63 − 1 (the largest id either database holds). `02`, `+1`, ` 1` and
/// `1.0` are refused rather than read as another spelling of an id, so an
/// id in a URL or a command names one record and only one spelling of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseIdError(());

impl fmt::Display for ParseIdError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not an id as issued (decimal digits without a leading zero)")
    }
}

impl std::error::Error for ParseIdError {}

/// The number `s` spells, if it is an id exactly as issued.
pub(crate) fn parse_issued(s: &str) -> Result<u64, ParseIdError> {
    let bytes = s.as_bytes();
    let canonical = matches!(bytes.first(), Some(b'1'..=b'9'))
        && bytes.iter().all(u8::is_ascii_digit)
        && bytes.len() <= 19;
    if !canonical {
        return Err(ParseIdError(()));
    }
    s.parse::<i64>()
        .ok()
        .and_then(|n| u64::try_from(n).ok())
        .ok_or(ParseIdError(()))
}

#[cfg(test)]
mod tests {
    use super::parse_issued;

    #[test]
    fn only_the_issued_spelling_is_read() {
        for ok in ["1", "9", "10", "9223372036854775807"] {
            assert_eq!(parse_issued(ok).map(|n| n.to_string()), Ok(ok.to_owned()));
        }
        for bad in [
            "",
            "0",
            "00",
            "01",
            "+1",
            "-1",
            " 1",
            "1 ",
            "1.0",
            "1e3",
            "0x1",
            "１",
            "9223372036854775808",
            "18446744073709551616",
            "1\0",
        ] {
            assert!(parse_issued(bad).is_err(), "{bad:?}");
        }
    }
}
