//! Exact decimal arithmetic on number lexemes: comparisons, integrality and
//! `multipleOf`, with no rounding and no allocation on the common path.
//!
//! A number is `sign × D × 10^exp`, where `D` is the digit string with no
//! leading and no trailing zeros (empty for zero). The digits stay borrowed
//! from the lexeme (or from the caller's buffer), split in two slices around
//! the decimal point.
//!
//! An instance number is taken at the value the tool will receive: its
//! canonical value ([`Dec::of_number`]). For an integer lexeme that is its
//! exact digits; for any other lexeme it is the exact value of its canonical
//! text, the shortest digits of the nearest double.

use std::cmp::Ordering;

use toolgate_json::Number;

/// A borrowed exact decimal.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Dec<'a> {
    neg: bool,
    hi: &'a [u8],
    lo: &'a [u8],
    exp: i64,
}

/// Room for the digits of an `i64` or the canonical text of a double (at
/// most 25 bytes, such as `-0.0000012345678901234567`).
pub(crate) type NumBuf = [u8; 32];

/// Significant digits up to which every decimal in the normal range of
/// doubles survives the trip to the nearest double and back (10^15 < 2^52).
const ROUND_TRIP_DIGITS: usize = 15;

/// Exponent digits beyond this are saturated (the parser bounds real values far below).
const EXP_CAP: i64 = 1 << 40;

impl<'a> Dec<'a> {
    /// Parses a JSON number lexeme. Returns `None` if it is not one.
    pub(crate) fn parse(lexeme: &'a str) -> Option<Self> {
        let b = lexeme.as_bytes();
        let (neg, rest) = match b.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, b),
        };
        let int_end = rest
            .iter()
            .position(|c| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (int, rest) = rest.split_at(int_end);
        if int.is_empty() {
            return None;
        }
        let (frac, rest) = match rest.split_first() {
            Some((b'.', r)) => {
                let end = r
                    .iter()
                    .position(|c| !c.is_ascii_digit())
                    .unwrap_or(r.len());
                let (f, r) = r.split_at(end);
                if f.is_empty() {
                    return None;
                }
                (f, r)
            }
            _ => (&[][..], rest),
        };
        let mut exp: i64 = 0;
        if let Some((e, r)) = rest.split_first() {
            if *e != b'e' && *e != b'E' {
                return None;
            }
            let (eneg, digits) = match r.split_first() {
                Some((b'-', d)) => (true, d),
                Some((b'+', d)) => (false, d),
                _ => (false, r),
            };
            if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            for d in digits {
                exp = (exp * 10 + i64::from(d - b'0')).min(EXP_CAP);
            }
            if eneg {
                exp = -exp;
            }
        }
        let frac_len = i64::try_from(frac.len()).unwrap_or(EXP_CAP);
        exp -= frac_len;
        // Strip leading zeros across both parts.
        let mut hi = strip_leading(int);
        let mut lo = frac;
        if hi.is_empty() {
            lo = strip_leading(lo);
        }
        // Strip trailing zeros across both parts.
        let lo_trim = strip_trailing(lo);
        exp += i64::try_from(lo.len() - lo_trim.len()).unwrap_or(0);
        lo = lo_trim;
        if lo.is_empty() {
            let hi_trim = strip_trailing(hi);
            exp += i64::try_from(hi.len() - hi_trim.len()).unwrap_or(0);
            hi = hi_trim;
        }
        if hi.is_empty() && lo.is_empty() {
            return Some(Self {
                neg: false,
                hi,
                lo,
                exp: 0,
            });
        }
        Some(Self { neg, hi, lo, exp })
    }

    /// The canonical value of a number: what the tool receives, and so what
    /// every numeric keyword judges.
    ///
    /// An integer lexeme is its exact digits (held as an `i64`, they are
    /// written into `buf`). Any other lexeme is the exact value of its
    /// canonical text, the shortest digits of its nearest double: with at
    /// most 15 significant digits in the normal range that is the lexeme's
    /// own value (no work beyond reading it); otherwise the canonical text is
    /// written into `buf` and read from there. `4999.99999999999999999` is
    /// `5000`, as the tool receives it.
    pub(crate) fn of_number(n: &'a Number, buf: &'a mut NumBuf) -> Option<Self> {
        if let Some(i) = n.as_i64() {
            return Some(Self::of_i64(i, buf));
        }
        let std::borrow::Cow::Borrowed(lexeme) = n.lexeme() else {
            // Only `i64`-held integers have an owned lexeme, handled above.
            return None;
        };
        let exact = Self::parse(lexeme)?;
        if n.is_integer_lexeme() || exact.survives_rounding() {
            return Some(exact);
        }
        let canonical = n.canonical();
        let text = canonical.as_bytes();
        let slot = buf.get_mut(..text.len())?;
        slot.copy_from_slice(text);
        Self::parse(std::str::from_utf8(buf.get(..text.len())?).ok()?)
    }

    /// Whether the nearest double of this decimal prints back as the same
    /// value: at most 15 significant digits, within the normal range of
    /// doubles (10^-307 to 10^308).
    fn survives_rounding(&self) -> bool {
        if self.len() > ROUND_TRIP_DIGITS {
            return false;
        }
        // The value lies in [10^(top-1), 10^top).
        let top = i64::try_from(self.len()).unwrap_or(i64::MAX) + self.exp;
        self.is_zero() || (-306..=308).contains(&top)
    }

    /// The decimal of an `i64`, its digits written into `buf`.
    pub(crate) fn of_i64(v: i64, buf: &'a mut NumBuf) -> Self {
        let neg = v < 0;
        let mut m = v.unsigned_abs();
        let mut start = buf.len();
        loop {
            start -= 1;
            if let Some(slot) = buf.get_mut(start) {
                // `m % 10` is below 10.
                *slot = b'0' + u8::try_from(m % 10).unwrap_or(0);
            }
            m /= 10;
            if m == 0 || start == 0 {
                break;
            }
        }
        let digits: &'a [u8] = buf.get(start..).unwrap_or(&[]);
        let trimmed = strip_trailing(digits);
        let exp = i64::try_from(digits.len() - trimmed.len()).unwrap_or(0);
        if trimmed.is_empty() {
            return Self {
                neg: false,
                hi: trimmed,
                lo: &[],
                exp: 0,
            };
        }
        Self {
            neg,
            hi: trimmed,
            lo: &[],
            exp,
        }
    }

    fn len(&self) -> usize {
        self.hi.len() + self.lo.len()
    }

    #[cfg(test)]
    fn digit(&self, i: usize) -> u8 {
        match self.hi.get(i) {
            Some(d) => *d - b'0',
            None => self.lo.get(i - self.hi.len()).map_or(0, |d| *d - b'0'),
        }
    }

    fn digits(&self) -> impl Iterator<Item = u8> + '_ {
        self.hi.iter().chain(self.lo.iter()).map(|d| d - b'0')
    }

    /// Whether the value is zero.
    pub(crate) fn is_zero(&self) -> bool {
        self.len() == 0
    }

    /// Whether the value is below zero.
    pub(crate) fn is_negative(&self) -> bool {
        self.neg && !self.is_zero()
    }

    /// Whether the value has no fractional part.
    pub(crate) fn is_integer(&self) -> bool {
        self.is_zero() || self.exp >= 0
    }

    fn cmp_magnitude(&self, other: &Self) -> Ordering {
        match (self.is_zero(), other.is_zero()) {
            (true, true) => return Ordering::Equal,
            (true, false) => return Ordering::Less,
            (false, true) => return Ordering::Greater,
            _ => {}
        }
        let a_top = i64::try_from(self.len()).unwrap_or(i64::MAX) + self.exp;
        let b_top = i64::try_from(other.len()).unwrap_or(i64::MAX) + other.exp;
        a_top
            .cmp(&b_top)
            .then_with(|| self.digits().cmp(other.digits()))
    }

    /// Exact comparison.
    pub(crate) fn cmp(&self, other: &Self) -> Ordering {
        match (self.is_negative(), other.is_negative()) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (false, false) => self.cmp_magnitude(other),
            (true, true) => other.cmp_magnitude(self),
        }
    }

    /// Whether `self / divisor` is an integer. `divisor` must not be zero.
    pub(crate) fn is_multiple_of(&self, divisor: &Dec<'_>) -> bool {
        if self.is_zero() {
            return true;
        }
        if divisor.is_zero() {
            return false;
        }
        // self = A × 10^ea, divisor = B × 10^eb.
        // q >= 0: (A × 10^q) mod B == 0; q < 0: A mod (B × 10^-q) == 0.
        let q = self.exp - divisor.exp;
        let (extra_dividend_zeros, extra_divisor_zeros) = if q >= 0 { (q, 0) } else { (0, -q) };
        let divisor_len = divisor.len() as i64 + extra_divisor_zeros;
        if divisor_len <= 36 {
            let mut m: u128 = 0;
            for d in divisor.digits() {
                m = m * 10 + u128::from(d);
            }
            for _ in 0..extra_divisor_zeros {
                m *= 10;
            }
            let mut r: u128 = 0;
            for d in self.digits() {
                r = (r * 10 + u128::from(d)) % m;
            }
            let mut z = extra_dividend_zeros;
            while z > 0 && r != 0 {
                r = (r * 10) % m;
                z -= 1;
            }
            return r == 0;
        }
        // Rare: a divisor with more than 36 significant digits. Schoolbook remainder.
        let Ok(extra) = usize::try_from(extra_divisor_zeros) else {
            return false;
        };
        let mut m: Vec<u8> = divisor.digits().collect();
        m.extend(std::iter::repeat_n(0, extra));
        let mut r: Vec<u8> = Vec::new();
        let step = |r: &mut Vec<u8>, d: u8| {
            if !(r.is_empty() && d == 0) {
                r.push(d);
            }
            while big_ge(r, &m) {
                big_sub(r, &m);
            }
        };
        for d in self.digits() {
            step(&mut r, d);
        }
        let mut z = extra_dividend_zeros;
        while z > 0 && !r.is_empty() {
            step(&mut r, 0);
            z -= 1;
        }
        r.is_empty()
    }

    /// The digit at a position, for tests.
    #[cfg(test)]
    fn digit_at(&self, i: usize) -> u8 {
        self.digit(i)
    }
}

fn strip_leading(d: &[u8]) -> &[u8] {
    let n = d.iter().take_while(|&&c| c == b'0').count();
    d.get(n..).unwrap_or(&[])
}

fn strip_trailing(d: &[u8]) -> &[u8] {
    let n = d.iter().rev().take_while(|&&c| c == b'0').count();
    d.get(..d.len() - n).unwrap_or(&[])
}

/// `a >= b` for digit vectors without leading zeros.
fn big_ge(a: &[u8], b: &[u8]) -> bool {
    a.len().cmp(&b.len()).then_with(|| a.cmp(b)).is_ge()
}

/// `a -= b` where `a >= b`; leaves `a` without leading zeros.
fn big_sub(a: &mut Vec<u8>, b: &[u8]) {
    let mut borrow = 0u8;
    let off = a.len() - b.len();
    for i in (0..a.len()).rev() {
        let sub = if i >= off {
            b.get(i - off).copied().unwrap_or(0)
        } else {
            0
        };
        if let Some(x) = a.get_mut(i) {
            let need = sub + borrow;
            if *x >= need {
                *x -= need;
                borrow = 0;
            } else {
                *x = *x + 10 - need;
                borrow = 1;
            }
        }
    }
    let lead = a.iter().take_while(|&&c| c == 0).count();
    a.drain(..lead);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Dec<'_> {
        Dec::parse(s).unwrap()
    }

    #[test]
    fn parses_and_normalizes() {
        let x = d("120.500");
        assert_eq!((x.len(), x.exp), (4, -1));
        assert_eq!(x.digit_at(0), 1);
        assert!(d("1e2").is_integer());
        assert!(d("1.0").is_integer());
        assert!(!d("1.5").is_integer());
        assert!(d("-0.0").is_zero());
        assert!(!d("-0").is_negative());
        assert!(d("0.000").is_integer());
    }

    #[test]
    fn compares_exactly() {
        assert!(d("18446744073709551616")
            .cmp(&d("18446744073709551615"))
            .is_gt());
        assert!(d("1e2").cmp(&d("100")).is_eq());
        assert!(d("-1.5").cmp(&d("-1.25")).is_lt());
        assert!(d("0.1").cmp(&d("0.10000000000000001")).is_lt());
        assert!(d("-0").cmp(&d("0")).is_eq());
        assert!(d("9007199254740993").cmp(&d("9007199254740992")).is_gt());
        let mut b = [0; 32];
        assert!(Dec::of_i64(-1200, &mut b).cmp(&d("-1.2e3")).is_eq());
    }

    #[test]
    fn multiple_of_is_exact() {
        assert!(d("0.0075").is_multiple_of(&d("0.0001")));
        assert!(!d("0.00751").is_multiple_of(&d("0.0001")));
        assert!(d("1e308").is_multiple_of(&d("0.5")));
        assert!(!d("1e308").is_multiple_of(&d("0.123456789")));
        assert!(d("4.5").is_multiple_of(&d("1.5")));
        assert!(!d("35").is_multiple_of(&d("1.5")));
        let big = format!("1{}", "0".repeat(50));
        let div = format!("1{}", "0".repeat(40));
        assert!(d(&big).is_multiple_of(&d(&div)));
        let div = format!("3{}", "0".repeat(40));
        assert!(!d(&big).is_multiple_of(&d(&div)));
        assert!(d("0").is_multiple_of(&d("7")));
    }
}
