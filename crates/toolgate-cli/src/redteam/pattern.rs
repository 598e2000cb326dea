//! Strings a `pattern` matches, for the common shapes of argument patterns
//! (anchors, literals, classes, groups with alternatives, quantifiers), and
//! what a pattern can be relied on to refuse.
//!
//! Generation is a guess: the result is checked against the compiled schema
//! before it is used, and a pattern it cannot read gives `None`.

/// A string `pattern` matches: each quantifier at its minimum (or, with
/// `long`, at its maximum when bounded, else a few repetitions).
pub fn generate(pattern: &str, long: bool) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut p = Gen {
        chars: &chars,
        at: 0,
        long,
    };
    let out = p.alternatives()?;
    (p.at == chars.len()).then_some(out)
}

/// Whether `pattern` is anchored at both ends and built only of ASCII
/// literals and classes that cannot match a non-ASCII character or a line
/// break: no `.`, no negated class, no `\s` and no negated escape. Such a
/// pattern refuses a value with a trailing newline or a non-ASCII digit, so
/// those variants are attacks it must stop.
pub fn refuses_non_ascii_and_newlines(pattern: &str) -> bool {
    let b = pattern.as_bytes();
    if !pattern.is_ascii() || b.first() != Some(&b'^') || b.last() != Some(&b'$') {
        return false;
    }
    let mut escaped = false;
    for (i, &c) in b.iter().enumerate() {
        if escaped {
            if matches!(
                c,
                b's' | b'S' | b'D' | b'W' | b'B' | b'p' | b'P' | b'u' | b'x'
            ) {
                return false;
            }
            escaped = false;
            continue;
        }
        match c {
            b'\\' => escaped = true,
            b'.' => return false,
            b'^' if i > 0 && b.get(i - 1) == Some(&b'[') => return false,
            b'$' if i + 1 != b.len() => return false,
            _ => {}
        }
    }
    !escaped
}

struct Gen<'a> {
    chars: &'a [char],
    at: usize,
    long: bool,
}

impl Gen<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.at += 1;
        Some(c)
    }

    /// `a|b|c`: the first alternative that generates.
    fn alternatives(&mut self) -> Option<String> {
        let mut first: Option<String> = None;
        loop {
            let s = self.sequence()?;
            first.get_or_insert(s);
            if self.peek() == Some('|') {
                self.at += 1;
            } else {
                return first;
            }
        }
    }

    fn sequence(&mut self) -> Option<String> {
        let mut out = String::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom()?;
            let (min, max) = self.quantifier()?;
            let reps = if self.long {
                max.unwrap_or(min.saturating_add(3)).min(64)
            } else {
                min
            };
            for _ in 0..reps {
                out.push_str(&atom);
            }
        }
        Some(out)
    }

    fn atom(&mut self) -> Option<String> {
        match self.next()? {
            '^' | '$' => Some(String::new()),
            '.' => Some("a".to_owned()),
            '(' => {
                if self.peek() == Some('?') {
                    // `(?:…)` only.
                    self.at += 1;
                    if self.next()? != ':' {
                        return None;
                    }
                }
                let s = self.alternatives()?;
                (self.next()? == ')').then_some(s)
            }
            '[' => self.class().map(String::from),
            '\\' => self.escape().map(String::from),
            c if "*+?{}".contains(c) => None,
            c => Some(c.to_string()),
        }
    }

    fn escape(&mut self) -> Option<char> {
        Some(match self.next()? {
            'd' => '0',
            'w' => 'a',
            's' => ' ',
            'n' => '\n',
            't' => '\t',
            c if c.is_ascii_alphanumeric() => return None,
            c => c,
        })
    }

    /// `[…]`: its first member (or, negated, a letter or digit it leaves out).
    fn class(&mut self) -> Option<char> {
        let negated = self.peek() == Some('^');
        if negated {
            self.at += 1;
        }
        let mut members: Vec<(char, char)> = Vec::new();
        let mut first = true;
        loop {
            let c = self.next()?;
            if c == ']' && !first {
                break;
            }
            first = false;
            let lo = if c == '\\' { self.escape()? } else { c };
            if self.peek() == Some('-') && self.chars.get(self.at + 1).is_some_and(|&n| n != ']') {
                self.at += 1;
                let hi = match self.next()? {
                    '\\' => self.escape()?,
                    h => h,
                };
                members.push((lo, hi));
            } else {
                members.push((lo, lo));
            }
        }
        if negated {
            "aA0_"
                .chars()
                .find(|c| !members.iter().any(|(lo, hi)| (lo..=hi).contains(&c)))
        } else {
            members.first().map(|(lo, _)| *lo)
        }
    }

    /// The quantifier after an atom, as `(min, max)`; none is `(1, Some(1))`.
    fn quantifier(&mut self) -> Option<(u32, Option<u32>)> {
        let q = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => {
                self.at += 1;
                let min = self.digits()?;
                let max = match self.next()? {
                    '}' => return Some((min, Some(min))),
                    ',' if self.peek() == Some('}') => None,
                    ',' => Some(self.digits()?),
                    _ => return None,
                };
                (self.next()? == '}').then_some(())?;
                return Some((min, max));
            }
            _ => return Some((1, Some(1))),
        };
        self.at += 1;
        // A lazy quantifier's `?` changes nothing here.
        if self.peek() == Some('?') {
            self.at += 1;
        }
        Some(q)
    }

    fn digits(&mut self) -> Option<u32> {
        let start = self.at;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.at += 1;
        }
        let text: String = self.chars.get(start..self.at)?.iter().collect();
        text.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_argument_patterns_generate() {
        assert_eq!(
            generate("^ord_[A-Za-z0-9]{1,32}$", false).as_deref(),
            Some("ord_A")
        );
        assert_eq!(
            generate("^ord_[A-Za-z0-9]{1,32}$", true).map(|s| s.len()),
            Some(36)
        );
        assert_eq!(generate("^https://", false).as_deref(), Some("https://"));
        assert_eq!(generate("^[A-Za-z0-9_:./-]*$", false).as_deref(), Some(""));
        assert_eq!(generate("^(?:ab|cd)+\\d$", false).as_deref(), Some("ab0"));
        assert_eq!(generate("^[^a]$", false).as_deref(), Some("A"));
        assert_eq!(generate("^a{2}", false).as_deref(), Some("aa"));
        assert_eq!(generate("(?=x)", false), None);
        assert_eq!(generate("\\p{L}", false), None);
    }

    #[test]
    fn only_closed_ascii_patterns_are_relied_on() {
        assert!(refuses_non_ascii_and_newlines("^ord_[A-Za-z0-9]{1,32}$"));
        assert!(refuses_non_ascii_and_newlines("^\\d+$"));
        assert!(!refuses_non_ascii_and_newlines("^https://"));
        assert!(!refuses_non_ascii_and_newlines("^[^/]+$"));
        assert!(!refuses_non_ascii_and_newlines("^.+$"));
        assert!(!refuses_non_ascii_and_newlines("^\\s*$"));
        assert!(!refuses_non_ascii_and_newlines("^a$|^b"));
    }
}
