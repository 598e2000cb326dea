//! RFC 3339 `date-time`, `date`, `time` and `duration` (appendix A).

fn num(b: &[u8]) -> Option<u32> {
    if b.is_empty() || !b.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(b.iter().fold(0u32, |n, d| n * 10 + u32::from(d - b'0')))
}

fn is_leap(y: u32) -> bool {
    y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)
}

/// `full-date`.
pub(crate) fn date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return false;
    }
    let (Some(y), Some(m), Some(d)) = (
        b.get(0..4).and_then(num),
        b.get(5..7).and_then(num),
        b.get(8..10).and_then(num),
    ) else {
        return false;
    };
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(y) => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// `full-time`: `HH:MM:SS[.frac](Z|±HH:MM)`, a leap second only at 23:59:60 UTC.
pub(crate) fn time(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 9 || b.get(2) != Some(&b':') || b.get(5) != Some(&b':') {
        return false;
    }
    let (Some(h), Some(m), Some(sec)) = (
        b.get(0..2).and_then(num),
        b.get(3..5).and_then(num),
        b.get(6..8).and_then(num),
    ) else {
        return false;
    };
    if h > 23 || m > 59 || sec > 60 {
        return false;
    }
    let mut rest = b.get(8..).unwrap_or(&[]);
    if let Some((b'.', r)) = rest.split_first() {
        let n = r.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return false;
        }
        rest = r.get(n..).unwrap_or(&[]);
    }
    let offset_minutes: i64 = match rest {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), oh1, oh2, b':', om1, om2] => {
            let (Some(oh), Some(om)) = (num(&[*oh1, *oh2]), num(&[*om1, *om2])) else {
                return false;
            };
            if oh > 23 || om > 59 {
                return false;
            }
            let v = i64::from(oh * 60 + om);
            if *sign == b'-' {
                -v
            } else {
                v
            }
        }
        _ => return false,
    };
    if sec == 60 {
        let utc = (i64::from(h * 60 + m) - offset_minutes).rem_euclid(24 * 60);
        return utc == 23 * 60 + 59;
    }
    true
}

/// `date-time`: `full-date "T" full-time` (`T` in either case).
pub(crate) fn date_time(s: &str) -> bool {
    let b = s.as_bytes();
    if !matches!(b.get(10), Some(b'T' | b't')) {
        return false;
    }
    match (s.get(..10), s.get(11..)) {
        (Some(d), Some(t)) => date(d) && time(t),
        _ => false,
    }
}

/// Parses `1*DIGIT unit` at the start of `b` for one of `units` in order;
/// returns the index of the unit found and the rest.
fn element<'a>(b: &'a [u8], units: &[u8]) -> Option<(usize, &'a [u8])> {
    let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
    if n == 0 {
        return None;
    }
    let unit = b.get(n)?;
    let i = units.iter().position(|u| u == unit)?;
    Some((i, b.get(n + 1..).unwrap_or(&[])))
}

/// Parses a run of elements whose units follow `units` contiguously (no
/// skipping: `P1Y2D` is not a duration). Returns the rest and whether any was found.
fn run<'a>(mut b: &'a [u8], units: &[u8]) -> Option<(&'a [u8], bool)> {
    let mut next: Option<usize> = None;
    let mut any = false;
    while b.first().is_some_and(u8::is_ascii_digit) {
        let (i, rest) = element(b, units)?;
        if let Some(want) = next {
            if i != want {
                return None;
            }
        }
        next = Some(i + 1);
        any = true;
        b = rest;
    }
    Some((b, any))
}

/// RFC 3339 appendix A `duration`.
pub(crate) fn duration(s: &str) -> bool {
    let Some(b) = s.as_bytes().strip_prefix(b"P") else {
        return false;
    };
    // Weeks stand alone.
    if let Some((0, rest)) = element(b, b"W") {
        return rest.is_empty();
    }
    let Some((rest, date_any)) = run(b, b"YMD") else {
        return false;
    };
    match rest.split_first() {
        None => date_any,
        Some((b'T', t)) => matches!(run(t, b"HMS"), Some((r, true)) if r.is_empty()),
        Some(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_times() {
        assert!(date_time("1963-06-19T08:30:06.283185Z"));
        assert!(date_time("1998-12-31T23:59:60Z"));
        assert!(date_time("1998-12-31T15:59:60.123-08:00"));
        assert!(!date_time("1998-12-31T22:59:60Z"));
        assert!(!date("2021-02-29"));
        assert!(date("2020-02-29"));
        assert!(!time("08:30:06"));
        assert!(duration("P4DT12H30M5S"));
        assert!(!duration("P1Y2D"));
        assert!(!duration("PT1H2S"));
        assert!(duration("P2W"));
        assert!(!duration("P1Y2W"));
        assert!(!duration("P1YT"));
    }
}
