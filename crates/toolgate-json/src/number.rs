//! Number lexemes: the RFC 8259 grammar, the finiteness rules of the strict
//! profile, and ECMAScript number formatting for the canonical form.

use std::fmt::{self, Write as _};

use crate::error::ErrorCode;
use crate::value::Number;

/// A number lexeme was refused by [`Number::from_lexeme`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NumberError {
    code: ErrorCode,
}

impl NumberError {
    /// The stable code: `invalid_syntax`, `truncated`, `non_finite_number` or
    /// `number_out_of_range`.
    pub fn code(&self) -> ErrorCode {
        self.code
    }
}

impl fmt::Display for NumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.code.description())
    }
}

impl std::error::Error for NumberError {}

/// Where a number lexeme ends and what kind it is.
pub(crate) struct Scan {
    pub(crate) end: usize,
    pub(crate) is_int: bool,
    /// The integer part's digits as a number, read on the way; exact when
    /// the lexeme is an integer of at most 18 bytes (see [`build`]).
    pub(crate) int_part: i64,
}

/// Scans a number starting at `start` (which holds `-` or a digit).
/// On failure returns the code and the offset of the offending byte.
pub(crate) fn scan(input: &[u8], start: usize) -> Result<Scan, (ErrorCode, usize)> {
    let at = |i: usize| input.get(i).copied();
    let mut i = start;
    let mut int_part = 0i64;
    if at(i) == Some(b'-') {
        i += 1;
    }
    match at(i) {
        Some(b'0') => {
            i += 1;
            if matches!(at(i), Some(b'0'..=b'9')) {
                return Err((ErrorCode::InvalidSyntax, i));
            }
        }
        Some(b'1'..=b'9') => {
            while let Some(d @ b'0'..=b'9') = at(i) {
                // Wraps only past 18 digits, where `build` does not use it.
                int_part = int_part.wrapping_mul(10).wrapping_add(i64::from(d - b'0'));
                i += 1;
            }
        }
        Some(_) => return Err((ErrorCode::InvalidSyntax, i)),
        None => return Err((ErrorCode::Truncated, i)),
    }
    let mut is_int = true;
    if at(i) == Some(b'.') {
        is_int = false;
        i += 1;
        i = digits(input, i)?;
    }
    if matches!(at(i), Some(b'e' | b'E')) {
        is_int = false;
        i += 1;
        if matches!(at(i), Some(b'+' | b'-')) {
            i += 1;
        }
        i = digits(input, i)?;
    }
    Ok(Scan {
        end: i,
        is_int,
        int_part,
    })
}

/// One or more digits at `i`; returns the offset after them.
fn digits(input: &[u8], mut i: usize) -> Result<usize, (ErrorCode, usize)> {
    match input.get(i) {
        Some(b'0'..=b'9') => {}
        Some(_) => return Err((ErrorCode::InvalidSyntax, i)),
        None => return Err((ErrorCode::Truncated, i)),
    }
    while matches!(input.get(i), Some(b'0'..=b'9')) {
        i += 1;
    }
    Ok(i)
}

/// Builds the number from a lexeme and what [`scan`] found in it: as
/// [`build`], with an integer lexeme of at most 18 bytes taken from the
/// digits the scan read instead of reading them again.
#[inline]
pub(crate) fn build_scanned(text: &str, scanned: &Scan, round: bool) -> Result<Number, ErrorCode> {
    if scanned.is_int && text.len() <= 18 {
        return Ok(match text.as_bytes().first() {
            Some(b'-') if scanned.int_part == 0 => Number::checked_lexeme(text, true),
            Some(b'-') => Number::int(-scanned.int_part),
            _ => Number::int(scanned.int_part),
        });
    }
    build(text, scanned.is_int, round)
}

/// Builds the number from a lexeme that [`scan`] accepted. Unless `round`,
/// a non-integer lexeme whose value its double does not hold exactly (see
/// [`is_exact`]) is `number_too_precise`.
pub(crate) fn build(text: &str, is_int: bool, round: bool) -> Result<Number, ErrorCode> {
    let lexeme = text.as_bytes();
    if is_int {
        // At most 18 digits always fit an i64; longer ones may.
        if lexeme.len() <= 18 {
            let (neg, digits) = match lexeme.split_first() {
                Some((b'-', rest)) => (true, rest),
                _ => (false, lexeme),
            };
            let mut v: i64 = 0;
            for &d in digits {
                v = v * 10 + i64::from(d - b'0');
            }
            if neg {
                if v == 0 {
                    return Ok(Number::checked_lexeme(text, true));
                }
                v = -v;
            }
            return Ok(Number::int(v));
        }
        return Ok(match text.parse::<i64>() {
            Ok(v) => Number::int(v),
            Err(_) => Number::checked_lexeme(text, true),
        });
    }
    let finite = surely_finite(lexeme);
    if finite && (round || significant_count(lexeme) <= 15) {
        // At most 15 significant digits in the normal range: the lexeme is
        // its double's shortest form (see `write_plain_decimal`).
        return Ok(Number::checked_lexeme(text, false));
    }
    let value: f64 = text.parse().map_err(|_| ErrorCode::InvalidSyntax)?;
    if !finite {
        if value.is_infinite() {
            return Err(ErrorCode::NonFiniteNumber);
        }
        if value == 0.0 && mantissa_is_nonzero(lexeme) {
            return Err(ErrorCode::NumberOutOfRange);
        }
    }
    if !round && !is_exact(lexeme, value) {
        return Err(ErrorCode::NumberTooPrecise);
    }
    Ok(Number::checked_lexeme(text, false))
}

/// Whether the exact decimal value of a non-integer `lexeme` is the exact
/// value of the shortest round-trip form of `value`, the finite double it
/// reads as: then the double holds what was written (`0.1`, `2.5e-3`,
/// `1e300`, `100.000`); otherwise (`100.00000000000000000001`,
/// `0.30000000000000000001`, `4.9e-324`) reading it rounded.
pub(crate) fn is_exact(lexeme: &[u8], value: f64) -> bool {
    let (digits, n) = significant(lexeme);
    if digits.is_empty() {
        // Zero, in any spelling, is exact.
        return true;
    }
    let (shortest, m) = shortest(value.abs());
    shortest.as_bytes() == digits && m == n
}

/// The significant digits of a number lexeme (no leading or trailing zeros;
/// empty for zero) and `n`, the position of the decimal point: the value is
/// `0.digits × 10^n`, as [`shortest`] gives it. An exponent too large for an
/// `i64` saturates (such a lexeme is not finite or underflows anyway).
fn significant(lexeme: &[u8]) -> (Vec<u8>, i64) {
    let unsigned = lexeme.strip_prefix(b"-").unwrap_or(lexeme);
    let (mantissa, exp) = match unsigned.iter().position(|&b| b == b'e' || b == b'E') {
        Some(at) => (
            unsigned.get(..at).unwrap_or_default(),
            unsigned.get(at + 1..).unwrap_or_default(),
        ),
        None => (unsigned, &b""[..]),
    };
    let (negative_exp, exp_digits) = match exp.split_first() {
        Some((b'-', rest)) => (true, rest),
        Some((b'+', rest)) => (false, rest),
        _ => (false, exp),
    };
    let e = exp_digits.iter().fold(0i64, |e, d| {
        e.saturating_mul(10)
            .saturating_add(i64::from(d.saturating_sub(b'0')))
    });
    let e = if negative_exp { -e } else { e };
    let (int, frac) = match mantissa.iter().position(|&b| b == b'.') {
        Some(dot) => (
            mantissa.get(..dot).unwrap_or_default(),
            mantissa.get(dot + 1..).unwrap_or_default(),
        ),
        None => (mantissa, &b""[..]),
    };
    let all: Vec<u8> = int.iter().chain(frac).copied().collect();
    let Some(first) = all.iter().position(|&b| b != b'0') else {
        return (Vec::new(), 0);
    };
    let last = all.iter().rposition(|&b| b != b'0').unwrap_or(first);
    let digits = all.get(first..=last).unwrap_or_default().to_vec();
    let int_len = i64::try_from(int.len()).unwrap_or(i64::MAX);
    let first = i64::try_from(first).unwrap_or(0);
    (digits, (int_len - first).saturating_add(e))
}

/// How many significant digits the mantissa of a number lexeme has (no
/// leading or trailing zeros; 0 for zero): the length of
/// [`significant`]'s digits, counted without building them.
fn significant_count(lexeme: &[u8]) -> usize {
    let (mut k, mut first, mut last) = (0usize, None, 0usize);
    for &b in lexeme {
        match b {
            b'1'..=b'9' => {
                first.get_or_insert(k);
                last = k;
                k += 1;
            }
            b'0' => k += 1,
            b'e' | b'E' => break,
            _ => {}
        }
    }
    first.map_or(0, |f| last - f + 1)
}

/// Whether a non-integer lexeme is surely neither too large nor too small
/// for a double, without converting it: with `n` bytes and exponent `e`, a
/// non-zero value lies between 10^-(n+|e|) and 10^(n+|e|), well inside the
/// double range (about 4.9e-324 to 1.8e308) while n + |e| < 300.
fn surely_finite(lexeme: &[u8]) -> bool {
    let exp = match lexeme.iter().position(|&b| b == b'e' || b == b'E') {
        None => 0,
        Some(at) => {
            let digits = lexeme.get(at + 1..).unwrap_or_default();
            let digits = digits
                .strip_prefix(b"-")
                .or_else(|| digits.strip_prefix(b"+"))
                .unwrap_or(digits);
            if digits.len() > 3 {
                return false;
            }
            digits
                .iter()
                .fold(0usize, |e, d| e * 10 + usize::from(d.saturating_sub(b'0')))
        }
    };
    lexeme.len() + exp < 300
}

/// Whether any digit before the exponent is non-zero.
fn mantissa_is_nonzero(lexeme: &[u8]) -> bool {
    lexeme
        .iter()
        .take_while(|&&b| b != b'e' && b != b'E')
        .any(|&b| (b'1'..=b'9').contains(&b))
}

/// Parses a whole lexeme (used by [`Number::from_lexeme`]).
pub(crate) fn parse_lexeme(lexeme: &[u8]) -> Result<Number, NumberError> {
    let scanned = scan(lexeme, 0).map_err(|(code, _)| NumberError { code })?;
    if scanned.end != lexeme.len() {
        return Err(NumberError {
            code: ErrorCode::InvalidSyntax,
        });
    }
    let text = std::str::from_utf8(lexeme).map_err(|_| NumberError {
        code: ErrorCode::InvalidSyntax,
    })?;
    build(text, scanned.is_int, true).map_err(|code| NumberError { code })
}

/// The canonical text of an integer held in an `i64`: what ECMAScript prints
/// for it when it is exactly representable, its exact digits otherwise.
pub(crate) fn canonical_i64(v: i64) -> String {
    // Within ±2^53 ECMAScript prints the plain digits; beyond it the strict
    // profile keeps the exact digits instead of rounding. Both are the digits.
    v.to_string()
}

/// Writes the canonical text of a non-integer lexeme without exponent and
/// with at most 15 significant digits, whose decimal point lies where
/// ECMAScript prints plain notation (`1e-6 <= |value| < 1e21`); `false`
/// (and nothing written) for any other lexeme.
///
/// Such a lexeme is its own shortest round-trip form once its insignificant
/// zeros are dropped: every decimal of at most 15 significant digits reads
/// back from its nearest double (a double holds 15 decimal digits), so no
/// other decimal of that length or shorter maps to the same double, and
/// the shortest digits are unique. `tests` compares it with [`format_f64`].
pub(crate) fn write_plain_decimal(lexeme: &str, out: &mut String) -> bool {
    let bytes = lexeme.as_bytes();
    let (negative, rest) = match bytes.split_first() {
        Some((b'-', rest)) => (true, rest),
        _ => (false, bytes),
    };
    let Some(dot) = rest.iter().position(|&b| b == b'.') else {
        return false;
    };
    let (int, frac) = rest.split_at(dot);
    let frac = frac.get(1..).unwrap_or_default();
    if int.is_empty() || frac.is_empty() || !int.iter().chain(frac).all(u8::is_ascii_digit) {
        return false;
    }
    // The significant digits: from the first non-zero digit of int + frac
    // to the last non-zero one.
    let all = || int.iter().chain(frac.iter());
    let Some(first) = all().position(|&b| b != b'0') else {
        out.push('0');
        return true;
    };
    let last = match frac.iter().rposition(|&b| b != b'0') {
        Some(i) => int.len() + i,
        None => int.iter().rposition(|&b| b != b'0').unwrap_or(first),
    };
    let k = last - first + 1;
    // The decimal point after `n` significant-digit positions.
    let n = i64::try_from(int.len()).unwrap_or(i64::MAX) - i64::try_from(first).unwrap_or(0);
    if k > 15 || n <= -6 || n > 21 {
        return false;
    }
    if negative {
        out.push('-');
    }
    let digits = all().skip(first).take(k).map(|&b| char::from(b));
    if n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', usize::try_from(-n).unwrap_or(0)));
        out.extend(digits);
    } else {
        let n = usize::try_from(n).unwrap_or(0);
        for (i, d) in digits.enumerate() {
            if i == n {
                out.push('.');
            }
            out.push(d);
        }
        out.extend(std::iter::repeat_n('0', n.saturating_sub(k)));
    }
    true
}

/// Whether the lexeme of a number that [`scan`] accepted and found not to
/// be an integer is already its own canonical text, that is, whether
/// [`write_plain_decimal`] would write it unchanged: no exponent, no zero
/// ending the fraction, at most 15 significant digits and, below one, at
/// most five zeros after the point before the first significant digit.
/// The reader then copies the lexeme as it is, without writing it digit
/// by digit.
pub(crate) fn is_plain_canonical(lexeme: &str) -> bool {
    let bytes = lexeme.as_bytes();
    // `-`, `0.`, five zeros and 15 digits at the most.
    if bytes.len() > 23 {
        return false;
    }
    let rest = bytes.strip_prefix(b"-").unwrap_or(bytes);
    let Some(dot) = rest.iter().position(|&b| b == b'.') else {
        return false;
    };
    let int = rest.get(..dot).unwrap_or_default();
    let frac = rest.get(dot + 1..).unwrap_or_default();
    // The scanner let only digits, then maybe an exponent (`e`, `E`,
    // above the digits), through after the point.
    if int.is_empty() || !matches!(frac.last(), Some(b'1'..=b'9')) || frac.iter().any(|&b| b > b'9')
    {
        return false;
    }
    if int == b"0" {
        // `0.` and up to five zeros, then the significant digits.
        let zeros = frac.iter().take_while(|&&b| b == b'0').count();
        zeros <= 5 && frac.len() - zeros <= 15
    } else {
        int.len() + frac.len() <= 15
    }
}

/// Formats a finite double the way ECMAScript's `Number.prototype.toString`
/// does (RFC 8785 section 3.2.2.3): the shortest digits that round-trip, the
/// one closest to the value among them and the even one of two equally close;
/// plain notation for decimal exponents in [-6, 21), exponent notation
/// otherwise.
pub(crate) fn format_f64(value: f64) -> String {
    // Callers pass finite values; zero and -0 take the general path to `0`.
    if !value.is_finite() {
        return "0".to_owned();
    }
    let (digits, n) = shortest(value.abs());
    let mut out = String::with_capacity(26);
    if value < 0.0 {
        out.push('-');
    }
    let k = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    // n: position of the decimal point relative to the digits.
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n(
            '0',
            usize::try_from(n - k).unwrap_or(0),
        ));
    } else if 0 < n && n <= 21 {
        let split = usize::try_from(n).unwrap_or(0);
        let (int, frac) = digits.split_at(split.min(digits.len()));
        out.push_str(int);
        out.push('.');
        out.push_str(frac);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', usize::try_from(-n).unwrap_or(0)));
        out.push_str(&digits);
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        out.push_str(first);
        if !rest.is_empty() {
            out.push('.');
            out.push_str(rest);
        }
        // The exponent with its sign: `e+21`, `e-7`.
        let _ = write!(out, "e{:+}", n - 1);
    }
    out
}

/// The shortest round-trip digits of a finite positive double, and `n`, the
/// position of the decimal point: the value printed is `0.digits × 10^n`.
///
/// Rust's shortest formatting gives the digits closest to the value, but of
/// two equally close candidates it takes the upper one where ECMAScript takes
/// the even one (`1424953923781206.25` is `…206.2` there, not `…206.3`).
/// Such a tie needs the double's exact value to be a decimal one digit longer
/// than the output and ending in 5, which [`is_midpoint`] checks exactly; only
/// then is the even neighbour below tried, and taken if it reads back as the
/// same double (at a power of two the gap below is half the gap above, so it
/// may not: 2^-24 is `5.960464477539063e-8`).
fn shortest(value: f64) -> (String, i64) {
    // `{:e}` prints the shortest digits that round-trip: `d.ddde±x`.
    let sci = format!("{value:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i64 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let k = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    let n = exp + 1;
    // At most 17 digits: they fit a u64. The last one is worth 10^scale.
    let scale = n - k;
    let Ok(d) = digits.parse::<u64>() else {
        return (digits, n);
    };
    if d % 2 == 0 || !is_midpoint(value, d, scale) {
        return (digits, n);
    }
    let even = d - 1;
    if format!("{even}e{scale}").parse::<f64>().ok() != Some(value) {
        return (digits, n);
    }
    // `d` is odd, so `even` has as many digits; it cannot end in 0, as that
    // would make a shorter form, which `{:e}` would have found.
    (even.to_string(), n)
}

/// Whether `value` is exactly halfway between `d × 10^scale` and the
/// candidate below it: `value == (10d - 5) × 10^p` with `p = scale - 1`.
///
/// With `value = m × 2^e` (`m` odd) and `t = 10d - 5` (odd), equality needs
/// the powers of two to agree, `e == p`, and then `m × 5^-p == t`, checked in
/// integers. Only `p < 0` can hold a tie between two round-tripping
/// candidates: they lie `5 × 10^p` from the value, more than half the gap
/// between doubles there (at most `2^(p-1)` when the value is `m × 2^p`). A
/// subnormal double is never a tie: its exact value has hundreds of digits.
fn is_midpoint(value: f64, d: u64, scale: i64) -> bool {
    let bits = value.to_bits();
    let biased = i64::try_from(bits >> 52).unwrap_or(0);
    if biased == 0 {
        return false;
    }
    let m = (bits & ((1 << 52) - 1)) + (1 << 52);
    let zeros = m.trailing_zeros();
    let e = biased - 1075 + i64::from(zeros);
    let p = scale - 1;
    if e != p {
        return false;
    }
    let Ok(k) = u32::try_from(-p) else {
        return false;
    };
    let t = u128::from(d) * 10 - 5;
    5u128
        .checked_pow(k)
        .and_then(|f| u128::from(m >> zeros).checked_mul(f))
        == Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn significant_count_is_the_length_of_the_significant_digits() {
        for lexeme in [
            "0.0",
            "-0.0",
            "0e5",
            "1.5",
            "-1.50",
            "100.000",
            "0.001",
            "120.5e3",
            "1E-7",
            "0.000123000e+10",
            "123456789012345.6",
            "1234567890123456.7",
            "00.10",
            "9.0e0",
            "7",
            "-0",
            "10",
        ] {
            assert_eq!(
                significant_count(lexeme.as_bytes()),
                significant(lexeme.as_bytes()).0.len(),
                "{lexeme}"
            );
        }
    }

    #[test]
    fn ecmascript_formatting() {
        // Values from RFC 8785 appendix B and ECMA-262 examples.
        let cases: &[(f64, &str)] = &[
            (0.0, "0"),
            (-0.0, "0"),
            (1.0, "1"),
            (-1.5, "-1.5"),
            (1e21, "1e+21"),
            (1e20, "100000000000000000000"),
            (123e18, "123000000000000000000"),
            (1e-6, "0.000001"),
            (1e-7, "1e-7"),
            (0.000001234, "0.000001234"),
            (1.5e-7, "1.5e-7"),
            (5e-324, "5e-324"),
            (f64::MAX, "1.7976931348623157e+308"),
            (f64::MIN_POSITIVE, "2.2250738585072014e-308"),
            (9007199254740992.0, "9007199254740992"),
            (333333333.3333333, "333333333.3333333"),
            (1e23, "1e+23"),
            (295147905179352830000.0, "295147905179352830000"),
            (0.1, "0.1"),
            (4.35, "4.35"),
            (-1e-7, "-1e-7"),
        ];
        for (v, want) in cases {
            assert_eq!(format_f64(*v), *want, "{v:e}");
        }
    }

    #[test]
    fn the_shortcut_agrees_with_conversion() {
        // Surely finite: kept without converting.
        // With n bytes and exponent e, the shortcut holds while n + |e| < 300.
        for lexeme in [
            "1.5", "1.5e10", "1.5E10", "-2e-5", "1e+99", "1.5e100", "0.1e-250", "1e-293",
        ] {
            assert!(surely_finite(lexeme.as_bytes()), "{lexeme}");
        }
        // Near or past the ends of the range: converted and checked.
        for lexeme in ["1e-294", "1e300", "1E300", "1e-300", "1.5e1000", "1e0001"] {
            assert!(!surely_finite(lexeme.as_bytes()), "{lexeme}");
        }
        // Whatever the shortcut keeps is finite and non-zero when written so.
        for lexeme in ["9.99e290", "1e-290", "123456.789e-280", "0.0e299"] {
            if surely_finite(lexeme.as_bytes()) {
                let v: f64 = lexeme.parse().unwrap();
                assert!(v.is_finite() && (v != 0.0 || !mantissa_is_nonzero(lexeme.as_bytes())));
            }
        }
    }

    #[test]
    fn plain_decimals_are_their_own_canonical_text() {
        let mut rng = toolgate_testkit::Rng::new(0x5eed_dec1_3a15);
        let mut fast = String::new();
        let mut checked = 0;
        for i in 0..200_000u64 {
            let int_len = rng.below(18) as usize;
            let frac_len = 1 + rng.below(18) as usize;
            let mut lexeme = String::new();
            if rng.below(2) == 0 {
                lexeme.push('-');
            }
            let digit = |rng: &mut toolgate_testkit::Rng| {
                // Runs of zeros are where the edge cases are.
                if rng.below(3) == 0 {
                    '0'
                } else {
                    char::from(b'0' + rng.below(10) as u8)
                }
            };
            if int_len == 0 || i % 3 == 0 {
                lexeme.push('0');
            } else {
                lexeme.push(char::from(b'1' + rng.below(9) as u8));
                for _ in 1..int_len {
                    lexeme.push(digit(&mut rng));
                }
            }
            lexeme.push('.');
            for _ in 0..frac_len {
                lexeme.push(digit(&mut rng));
            }
            fast.clear();
            let as_is = is_plain_canonical(&lexeme);
            let wrote = write_plain_decimal(&lexeme, &mut fast);
            assert_eq!(as_is, wrote && fast == lexeme, "{lexeme}");
            if wrote {
                checked += 1;
                let slow = format_f64(lexeme.parse::<f64>().unwrap());
                assert_eq!(fast, slow, "{lexeme}");
            }
        }
        assert!(checked > 50_000, "{checked}");
        for (lexeme, want) in [
            ("115736.91", Some("115736.91")),
            ("1.50", Some("1.5")),
            ("-0.0", Some("0")),
            ("100.000", Some("100")),
            ("0.000001", Some("0.000001")),
            ("0.0000001", None),
            ("1.5e3", None),
            ("1234567890123456.5", None),
            ("123456789012345678901.5", None),
        ] {
            fast.clear();
            let got = write_plain_decimal(lexeme, &mut fast).then_some(fast.as_str());
            assert_eq!(got, want, "{lexeme}");
            assert_eq!(is_plain_canonical(lexeme), want == Some(lexeme), "{lexeme}");
        }
    }

    #[test]
    fn precision_a_double_cannot_hold_is_refused_unless_rounding() {
        let parse = |s: &str, round: bool| {
            let scanned = scan(s.as_bytes(), 0).map_err(|(c, _)| c)?;
            assert_eq!(scanned.end, s.len(), "{s}");
            build(s, scanned.is_int, round)
        };
        for exact in [
            "0.1",
            "2.5e-3",
            "1e300",
            "100.000",
            "100.0",
            "1.5",
            "-0.0",
            "0e999",
            "5e-324",
            "1.7976931348623157e308",
            "0.30000000000000004",
            "123456789012345.6",
            "9007199254740993",
            "100000000000000000000000000001",
            "1E2",
            "12.5e-1",
            "4.35",
            "2.2250738585072014e-308",
            "1e-7",
        ] {
            assert!(parse(exact, false).is_ok(), "{exact}");
        }
        for inexact in [
            "100.00000000000000000001",
            "0.30000000000000000001",
            "4.9e-324",
            "9007199254740993.0",
            "1.00000000000000001e300",
            "-100.00000000000000000001",
            "0.1000000000000000055511151231257827",
        ] {
            assert_eq!(
                parse(inexact, false).unwrap_err(),
                ErrorCode::NumberTooPrecise,
                "{inexact}"
            );
            assert!(parse(inexact, true).is_ok(), "{inexact}");
        }
        // Past the ends of the range the old codes still win.
        assert_eq!(
            parse("1.00000000000000000001e400", false).unwrap_err(),
            ErrorCode::NonFiniteNumber
        );
        assert_eq!(
            parse("1.00000000000000000001e-400", false).unwrap_err(),
            ErrorCode::NumberOutOfRange
        );
        // The rule by its definition, over random lexemes: exact exactly
        // when the lexeme's significant digits are the shortest form's.
        let mut rng = toolgate_testkit::Rng::new(0x0000_ddd1_6175);
        for _ in 0..50_000 {
            let mut lexeme = String::new();
            for i in 0..(1 + rng.below(22)) {
                if i == 1 {
                    lexeme.push('.');
                }
                lexeme.push(char::from(b'0' + rng.below(10) as u8));
            }
            if lexeme.len() > 1 && lexeme.starts_with('0') && !lexeme.starts_with("0.") {
                lexeme.remove(0);
            }
            if !lexeme.contains('.') {
                lexeme.push_str(".5");
            }
            let e = rng.below(40) as i64 - 20;
            lexeme.push_str(&format!("e{e}"));
            let value: f64 = lexeme.parse().unwrap();
            let want = value == 0.0 || {
                let short: f64 = format_f64(value).parse().unwrap();
                // Compare exact decimals by their normalized digits.
                significant(format_f64(short).as_bytes()) == significant(lexeme.as_bytes())
            };
            assert_eq!(parse(&lexeme, false).is_ok(), want, "{lexeme}");
        }
    }

    #[test]
    fn minus_zero_keeps_its_lexeme() {
        let n = Number::from_lexeme("-0").unwrap();
        assert_eq!(n.lexeme(), "-0");
        assert_eq!(n.canonical(), "0");
        assert_eq!(n.as_i64(), Some(0));
        assert!(n.is_integer_lexeme() && !n.is_negative());
        assert_eq!(Number::from_lexeme("-7").unwrap().as_i64(), Some(-7));
        assert_eq!(Number::from_lexeme("-7").unwrap().lexeme(), "-7");
    }

    #[test]
    fn number_errors_render_code_and_description() {
        let e = Number::from_lexeme("1e400").unwrap_err();
        assert_eq!(e.code(), ErrorCode::NonFiniteNumber);
        assert_eq!(
            e.to_string(),
            format!(
                "non_finite_number: {}",
                ErrorCode::NonFiniteNumber.description()
            )
        );
        assert!(!ErrorCode::NonFiniteNumber.description().is_empty());
    }

    #[test]
    fn lexeme_rules() {
        for ok in [
            "0", "-0", "1", "-1", "1.5", "1e5", "1E+5", "1e-5", "0e999", "-0.0",
        ] {
            assert!(Number::from_lexeme(ok).is_ok(), "{ok}");
        }
        let code = |s: &str| Number::from_lexeme(s).unwrap_err().code();
        assert_eq!(code("01"), ErrorCode::InvalidSyntax);
        assert_eq!(code("+1"), ErrorCode::InvalidSyntax);
        assert_eq!(code("1."), ErrorCode::Truncated);
        assert_eq!(code("1.e5"), ErrorCode::InvalidSyntax);
        assert_eq!(code(".5"), ErrorCode::InvalidSyntax);
        assert_eq!(code("1e400"), ErrorCode::NonFiniteNumber);
        assert_eq!(code("-1e400"), ErrorCode::NonFiniteNumber);
        assert_eq!(code("1e-400"), ErrorCode::NumberOutOfRange);
        assert_eq!(code("-Infinity"), ErrorCode::InvalidSyntax);
        assert_eq!(code("1.7976931348623159e308"), ErrorCode::NonFiniteNumber);
        assert!(Number::from_lexeme("1.7976931348623157e308").is_ok());
        assert!(Number::from_lexeme("4.9e-324").is_ok());
        assert_eq!(code("2e-324"), ErrorCode::NumberOutOfRange);
    }
}
