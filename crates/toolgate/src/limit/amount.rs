//! [`Amount`]: exact decimals for budgets, never floating point.

use std::cmp::Ordering;
use std::fmt;

use toolgate_json::Number;

/// An exact decimal: `units × 10^-scale`, kept normalized (no trailing
/// zero in `units` while `scale > 0`), so equal values are equal structs.
///
/// Amounts are taken from an argument at the value the tool will receive,
/// its canonical number text ([`Amount::of_number`], the value the schema
/// stage compared), or from a decimal string in the config. At most
/// [`Amount::MAX_SCALE`] fraction digits and [`Amount::MAX_DIGITS`]
/// significant digits are held; anything beyond is refused (`None`), never
/// rounded. Sums that would leave that range are refused as well, and a
/// budget treats a sum it cannot hold as over its cap.
///
/// ```
/// use toolgate::limit::Amount;
///
/// let a = Amount::parse("0.1").unwrap();
/// let b = Amount::parse("0.2").unwrap();
/// assert_eq!(a.checked_add(b), Amount::parse("0.3"));
/// assert_eq!(Amount::parse("49.50").unwrap().to_string(), "49.5");
/// assert_eq!(Amount::parse("1e400"), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Amount {
    units: i128,
    scale: u32,
}

/// `10^n` for `n ≤ 38`.
fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

impl Amount {
    /// Zero.
    pub const ZERO: Amount = Amount { units: 0, scale: 0 };
    /// One: what a call costs a rate limit.
    pub const ONE: Amount = Amount { units: 1, scale: 0 };
    /// The most fraction digits an amount holds.
    pub const MAX_SCALE: u32 = 18;
    /// The most significant digits an amount holds.
    pub const MAX_DIGITS: u32 = 20;

    /// A whole number.
    pub fn from_u64(n: u64) -> Self {
        Self {
            units: i128::from(n),
            scale: 0,
        }
    }

    /// Reads a JSON number lexeme (`-12.50`, `1e3`, `4.5E-2`). `None` if it
    /// is not one, or holds more than the digits an amount keeps.
    pub fn parse(text: &str) -> Option<Self> {
        let b = text.as_bytes();
        let (neg, rest) = match b.split_first() {
            Some((b'-', rest)) => (true, rest),
            _ => (false, b),
        };
        let int_len = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        let (int, rest) = rest.split_at(int_len);
        if int.is_empty() || (int.len() > 1 && int.first() == Some(&b'0')) {
            return None;
        }
        let (frac, rest) = match rest.split_first() {
            Some((b'.', r)) => {
                let n = r.iter().take_while(|c| c.is_ascii_digit()).count();
                if n == 0 {
                    return None;
                }
                r.split_at(n)
            }
            _ => (&[][..], rest),
        };
        let exp: i64 = match rest.split_first() {
            None => 0,
            Some((b'e' | b'E', r)) => {
                let (eneg, digits) = match r.split_first() {
                    Some((b'-', d)) => (true, d),
                    Some((b'+', d)) => (false, d),
                    _ => (false, r),
                };
                if digits.is_empty() || digits.len() > 6 || !digits.iter().all(u8::is_ascii_digit) {
                    return None;
                }
                let mut e: i64 = 0;
                for d in digits {
                    e = e * 10 + i64::from(d - b'0');
                }
                if eneg {
                    -e
                } else {
                    e
                }
            }
            Some(_) => return None,
        };
        // The significant digits, leading zeros dropped.
        let digits: Vec<u8> = int
            .iter()
            .chain(frac)
            .copied()
            .skip_while(|&d| d == b'0')
            .collect();
        let frac_len = i64::try_from(frac.len()).ok()?;
        let mut scale = frac_len.checked_sub(exp)?;
        let mut digits = digits;
        // Trailing zeros of a fraction carry nothing.
        while scale > 0 && digits.last() == Some(&b'0') {
            digits.pop();
            scale -= 1;
        }
        if digits.is_empty() {
            return Some(Self::ZERO);
        }
        let mut units: i128 = 0;
        for d in &digits {
            units = units.checked_mul(10)?.checked_add(i128::from(d - b'0'))?;
        }
        if scale < 0 {
            units = units.checked_mul(pow10(u32::try_from(-scale).ok()?)?)?;
            scale = 0;
        }
        let amount = Self {
            units: if neg { -units } else { units },
            scale: u32::try_from(scale).ok()?,
        };
        amount.within()
    }

    /// The amount of a JSON number at the value the tool receives: its
    /// canonical text (for an integer lexeme, its exact digits).
    pub fn of_number(n: &Number) -> Option<Self> {
        Self::parse(&n.canonical())
    }

    /// Whether it is below zero.
    pub fn is_negative(&self) -> bool {
        self.units < 0
    }

    /// How many digits it has after the point, written shortest (`49.5`:
    /// 1, `500`: 0).
    pub fn scale(&self) -> u32 {
        self.scale
    }

    /// Whether non-negative amounts of at most `scale` digits after the
    /// point that add up to at most this amount can be added in any order,
    /// every step held exactly: this amount, not negative, written with
    /// `scale` digits after the point, has at most [`Amount::MAX_DIGITS`]
    /// digits. Then every partial sum (at most this amount, at most `scale`
    /// digits after the point) fits too, so the sum of such amounts does
    /// not depend on the order they are added in. A running total that
    /// holds this stands for its events exactly; one that does not is
    /// summed from the events again.
    pub fn bounds_sums_at(&self, scale: u32) -> bool {
        if self.units < 0 || scale > Self::MAX_SCALE || scale < self.scale {
            return false;
        }
        let Some(max) = pow10(Self::MAX_DIGITS) else {
            return false;
        };
        pow10(scale - self.scale)
            .and_then(|p| self.units.checked_mul(p))
            .is_some_and(|u| u < max)
    }

    /// The exact sum, `None` beyond the digits an amount keeps.
    #[must_use]
    pub fn checked_add(self, other: Self) -> Option<Self> {
        let scale = self.scale.max(other.scale);
        let a = self.units.checked_mul(pow10(scale - self.scale)?)?;
        let b = other.units.checked_mul(pow10(scale - other.scale)?)?;
        Self::normalized(a.checked_add(b)?, scale).within()
    }

    /// The exact difference, `None` beyond the digits an amount keeps.
    #[must_use]
    pub fn checked_sub(self, other: Self) -> Option<Self> {
        self.checked_add(Self {
            units: other.units.checked_neg()?,
            scale: other.scale,
        })
    }

    fn normalized(mut units: i128, mut scale: u32) -> Self {
        while scale > 0 && units % 10 == 0 {
            units /= 10;
            scale -= 1;
        }
        if units == 0 {
            scale = 0;
        }
        Self { units, scale }
    }

    /// Itself if within [`Amount::MAX_SCALE`] and [`Amount::MAX_DIGITS`].
    fn within(self) -> Option<Self> {
        let max = pow10(Self::MAX_DIGITS)?;
        (self.scale <= Self::MAX_SCALE && self.units.unsigned_abs() < max.unsigned_abs())
            .then_some(self)
    }
}

impl Ord for Amount {
    fn cmp(&self, other: &Self) -> Ordering {
        let scale = self.scale.max(other.scale);
        // INVARIANT: both are within MAX_DIGITS (< 10^20) and MAX_SCALE
        // (≤ 18), so scaling either by at most 10^18 stays below 10^38,
        // inside i128. Saturation is only a fallback that cannot happen.
        let widen = |a: &Self| {
            pow10(scale - a.scale)
                .and_then(|p| a.units.checked_mul(p))
                .unwrap_or(if a.units < 0 { i128::MIN } else { i128::MAX })
        };
        widen(self).cmp(&widen(other))
    }
}

impl PartialOrd for Amount {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Amount {
    /// The shortest exact decimal text: `49.5`, `-0.25`, `500`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.units < 0 {
            f.write_str("-")?;
        }
        let digits = self.units.unsigned_abs().to_string();
        let scale = usize::try_from(self.scale).unwrap_or(0);
        if scale == 0 {
            return f.write_str(&digits);
        }
        if digits.len() <= scale {
            f.write_str("0.")?;
            for _ in digits.len()..scale {
                f.write_str("0")?;
            }
            return f.write_str(&digits);
        }
        let (int, frac) = digits.split_at(digits.len() - scale);
        write!(f, "{int}.{frac}")
    }
}

impl std::str::FromStr for Amount {
    type Err = AmountError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s).ok_or(AmountError)
    }
}

/// Text that is not an amount: not a JSON number, or more digits than an
/// amount keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AmountError;

impl fmt::Display for AmountError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not a decimal number of at most {} digits, {} after the point",
            Amount::MAX_DIGITS,
            Amount::MAX_SCALE
        )
    }
}

impl std::error::Error for AmountError {}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(s: &str) -> Amount {
        Amount::parse(s).unwrap()
    }

    #[test]
    fn parses_exactly_and_normalizes() {
        assert_eq!(a("49.50"), a("49.5"));
        assert_eq!(a("4950e-2"), a("49.5"));
        assert_eq!(a("0.000"), Amount::ZERO);
        assert_eq!(a("-0"), Amount::ZERO);
        assert_eq!(a("1e3").to_string(), "1000");
        assert_eq!(a("1E+2").to_string(), "100");
        assert_eq!(a("0.05").to_string(), "0.05");
        assert_eq!(a("-12.5").to_string(), "-12.5");
        for bad in [
            "",
            "-",
            "01",
            "1.",
            ".5",
            "1e",
            "1e+",
            "x",
            "1.5x",
            "NaN",
            "1e400",
            "1e-19",
            "123456789012345678901",
        ] {
            assert_eq!(Amount::parse(bad), None, "{bad}");
        }
        assert_eq!(
            a("0.000000000000000001").to_string(),
            "0.000000000000000001"
        );
    }

    #[test]
    fn sums_are_exact_where_doubles_are_not() {
        let mut sum = Amount::ZERO;
        for _ in 0..10 {
            sum = sum.checked_add(a("0.1")).unwrap();
        }
        assert_eq!(sum, a("1"));
        assert_eq!(a("49.99").checked_add(a("0.01")), Some(a("50")));
        assert_eq!(a("500").checked_sub(a("0.01")), Some(a("499.99")));
        assert!(a("500.00") < a("500.000000000000001"));
        assert!(a("-1") < Amount::ZERO);
        assert_eq!(a("99999999999999999999").checked_add(a("1")), None);
    }

    #[test]
    fn a_total_bounds_its_partial_sums_only_within_the_digits() {
        assert_eq!(a("49.5").scale(), 1);
        assert_eq!(a("500.00").scale(), 0);
        // 20 digits at scale 2: 999…9.99 (18 + 2) holds, one more does not.
        assert!(a("999999999999999999.99").bounds_sums_at(2));
        assert!(!a("1000000000000000000").bounds_sums_at(2));
        assert!(a("1000000000000000000").bounds_sums_at(1));
        // A partial sum that needs more digits than the total: 10^19 + 0.5
        // on the way to 10^19 + 1.
        let big = a("10000000000000000000");
        let total = big.checked_add(a("1")).unwrap();
        assert_eq!(big.checked_add(a("0.5")), None);
        assert!(!total.bounds_sums_at(1));
        assert!(!a("-1").bounds_sums_at(0));
        assert!(!a("1.25").bounds_sums_at(1));
        assert!(Amount::ZERO.bounds_sums_at(Amount::MAX_SCALE));
        assert!(!Amount::ONE.bounds_sums_at(Amount::MAX_SCALE + 1));
    }

    #[test]
    fn of_number_takes_the_canonical_value() {
        let n = toolgate_json::Number::from_lexeme("1.50").unwrap();
        assert_eq!(Amount::of_number(&n), Some(a("1.5")));
        let n = toolgate_json::Number::from_lexeme("25").unwrap();
        assert_eq!(Amount::of_number(&n), Some(a("25")));
    }
}
