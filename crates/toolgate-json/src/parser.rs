//! The strict parser: one pass over the bytes, an explicit stack instead of
//! recursion, every limit checked as it is reached.

use std::borrow::Cow;
use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};

use crate::error::{Error, ErrorCode};
use crate::limits::Limits;
use crate::number;
use crate::pointer;
use crate::value::{Object, Value};

/// How to parse: the limits and the one relaxation the profile allows.
///
/// ```
/// use toolgate_json::{Limit, Limits, ParseOptions};
///
/// let limits = Limits::new().set(Limit::Depth, 8)?;
/// let options = ParseOptions::new().with_limits(limits);
/// assert!(options.parse(br#"{"a":[1,2]}"#).is_ok());
/// # Ok::<(), toolgate_json::LimitError>(())
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct ParseOptions {
    pub(crate) limits: Limits,
    pub(crate) allow_noncharacters: bool,
    pub(crate) allow_rounding: bool,
}

impl ParseOptions {
    /// The strict profile with every limit at its default.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the limits.
    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }

    /// Admits Unicode noncharacters (U+FDD0..U+FDEF, U+xFFFE, U+xFFFF), which
    /// the I-JSON profile rejects by default.
    pub fn allow_noncharacters(mut self, allow: bool) -> Self {
        self.allow_noncharacters = allow;
        self
    }

    /// Admits non-integer numbers written with more precision than the
    /// IEEE double they become holds (`100.00000000000000000001` reads as
    /// `100`), which the strict profile refuses by default
    /// (`number_too_precise`): the value then checked and handed on is the
    /// rounded one, not the one written. Integers are exact either way.
    pub fn allow_rounding(mut self, allow: bool) -> Self {
        self.allow_rounding = allow;
        self
    }

    /// Whether rounded numbers are admitted ([`Self::allow_rounding`]).
    pub fn allows_rounding(&self) -> bool {
        self.allow_rounding
    }

    /// The limits in force.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Parses one JSON text.
    pub fn parse<'a>(&self, input: &'a [u8]) -> Result<Value<'a>, Error> {
        // `Value<'static>` is a `Value<'a>`: the vectors come in as they are.
        let (stack, items, members) = SCRATCH.with(|s| s.take());
        let mut parser = Parser {
            input,
            // One validation of the whole input lets every string be sliced
            // out of it; invalid input takes the slower path that validates
            // string by string, to report the exact place.
            text: simdutf8::basic::from_utf8(input).ok(),
            pos: 0,
            options: *self,
            values: 0,
            stack,
            items,
            members,
            hash_state: None,
        };
        let result = parser.run();
        parser.stack.clear();
        parser.items.clear();
        parser.members.clear();
        // Keep modest scratch space for the next parse on this thread; a
        // huge document's space is given back.
        if parser.items.capacity() <= SCRATCH_KEEP && parser.members.capacity() <= SCRATCH_KEEP {
            SCRATCH.with(|s| s.set((parser.stack, recycle(parser.items), recycle(parser.members))));
        }
        result
    }
}

/// Parses one JSON text with the strict profile and default limits.
///
/// ```
/// let v = toolgate_json::from_slice(br#"{"amount": 300}"#).unwrap();
/// assert_eq!(v.pointer("/amount").and_then(|n| n.as_number()?.as_i64()), Some(300));
///
/// let e = toolgate_json::from_slice(br#"{"limit":10,"\u006cimit":1000000}"#).unwrap_err();
/// assert_eq!(e.code().as_str(), "duplicate_key");
/// ```
pub fn from_slice(input: &[u8]) -> Result<Value<'_>, Error> {
    ParseOptions::new().parse(input)
}

/// Parses one JSON text given as `&str` (the same rules as [`from_slice`]).
pub fn from_str(input: &str) -> Result<Value<'_>, Error> {
    from_slice(input.as_bytes())
}

type Scratch = (
    Vec<Frame>,
    Vec<Value<'static>>,
    Vec<(Cow<'static, str>, Value<'static>)>,
);

/// Reuses an empty vector's allocation for another element lifetime. The
/// standard library collects a `filter_map` over `vec::IntoIter` in place when
/// the layouts match, so this moves no element and allocates nothing.
fn recycle<T, U>(v: Vec<T>) -> Vec<U> {
    v.into_iter().filter_map(|_| None).collect()
}

thread_local! {
    /// The item and member stacks, reused by the next parse on this thread.
    static SCRATCH: std::cell::Cell<Scratch> = const { std::cell::Cell::new((Vec::new(), Vec::new(), Vec::new())) };
}

/// Scratch stacks up to this many entries are kept between parses.
const SCRATCH_KEEP: usize = 4096;

/// Objects with fewer members than this are checked for duplicates by a scan.
const INDEX_THRESHOLD: usize = 16;

/// An open container. Items and members of every open container live in the
/// parser's two scratch stacks; a frame remembers where its own begin, so a
/// closed container is moved out in one exact-size allocation.
enum Frame {
    Array {
        start: usize,
    },
    Object {
        start: usize,
        /// Whether the last member is the one whose value is being read
        /// (its name is pushed first, with a placeholder value).
        pending: bool,
        /// Hashes of the member names, built once the object grows large.
        index: Option<HashSet<u64>>,
    },
}

/// Records `key` as the next member name of the object whose members are
/// `members`; `true` if it is a duplicate.
fn is_duplicate(
    members: &[(Cow<'_, str>, Value<'_>)],
    index: &mut Option<HashSet<u64>>,
    key: &str,
    state: &mut Option<RandomState>,
) -> bool {
    if members.len() < INDEX_THRESHOLD {
        return members.iter().any(|(k, _)| k == key);
    }
    let state = state.get_or_insert_with(RandomState::new);
    let index = index.get_or_insert_with(|| {
        members
            .iter()
            .map(|(k, _)| state.hash_one(k.as_ref()))
            .collect()
    });
    if index.insert(state.hash_one(key)) {
        false
    } else {
        // Equal hashes: compare the names themselves.
        members.iter().any(|(k, _)| k == key)
    }
}

struct Parser<'a> {
    input: &'a [u8],
    /// The input as text, when it is valid UTF-8 as a whole.
    text: Option<&'a str>,
    pos: usize,
    options: ParseOptions,
    values: usize,
    stack: Vec<Frame>,
    items: Vec<Value<'a>>,
    members: Vec<(Cow<'a, str>, Value<'a>)>,
    hash_state: Option<RandomState>,
}

/// Byte classes inside a string.
const PLAIN: u8 = 0;
const QUOTE: u8 = 1;
const BACKSLASH: u8 = 2;
const CONTROL: u8 = 3;
/// Lead bytes of sequences that may encode a noncharacter (`EF`, `F0`..`F4`).
const CHECK: u8 = 4;

#[expect(
    clippy::indexing_slicing,
    reason = "every index is a literal below 256 or a loop bound below 256"
)]
const CLASSES: [u8; 256] = {
    let mut t = [PLAIN; 256];
    let mut i = 0;
    while i < 0x20 {
        t[i] = CONTROL;
        i += 1;
    }
    t[b'"' as usize] = QUOTE;
    t[b'\\' as usize] = BACKSLASH;
    t[0xEF] = CHECK;
    let mut i = 0xF0;
    while i <= 0xF4 {
        t[i] = CHECK;
        i += 1;
    }
    t
};

#[expect(
    clippy::indexing_slicing,
    reason = "a u8 always indexes a 256-entry table"
)]
fn class(b: u8) -> u8 {
    CLASSES[usize::from(b)]
}

/// Skips plain string bytes from `i`: a word of eight bytes at a time, the
/// first byte that may be special (quote, backslash, control, non-ASCII)
/// located in the word by its bit position; non-ASCII bytes that are plain
/// are stepped over one by one.
pub(crate) fn skip_plain(input: &[u8], mut i: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    while let Some(word) = input.get(i..i + 8) {
        let mut buf = [0u8; 8];
        buf.copy_from_slice(word);
        let w = u64::from_le_bytes(buf);
        // The lowest set bit of each mask marks a byte that really matches
        // (borrows only spill upwards), so the lowest of all is exact.
        let special = has_zero(w ^ (ONES * u64::from(b'"')))
            | has_zero(w ^ (ONES * u64::from(b'\\')))
            | (w.wrapping_sub(ONES * 0x20) & !w & HIGH)
            | (w & HIGH);
        if special == 0 {
            i += 8;
            continue;
        }
        i += (special.trailing_zeros() / 8) as usize;
        match input.get(i) {
            // Plain non-ASCII text: its run is stepped over byte by byte.
            Some(&b) if class(b) == PLAIN => {
                i += 1;
                while let Some(&b) = input.get(i) {
                    if b < 0x80 || class(b) != PLAIN {
                        break;
                    }
                    i += 1;
                }
            }
            _ => return i,
        }
    }
    while let Some(&b) = input.get(i) {
        if class(b) != PLAIN {
            break;
        }
        i += 1;
    }
    i
}

fn is_noncharacter(cp: u32) -> bool {
    (0xFDD0..=0xFDEF).contains(&cp) || (cp & 0xFFFE) == 0xFFFE
}

/// A parse failure before it is dressed as an [`Error`]: the code and the
/// byte offset.
pub(crate) type Fail = (ErrorCode, usize);

/// Reads the string whose opening quote is at `open`, byte by byte where
/// needed: the path for strings with escapes, non-ASCII text, or more bytes
/// than the string limit. Returns the offset of the closing quote and
/// whether the string had an escape; if it had, `decoded` (which must come
/// in empty) holds the whole unescaped string, otherwise the string is the
/// input between the quotes. Shared by the tree parser and the tree-free
/// [`crate::Reader`], so both apply the same rules.
pub(crate) fn string_slow(
    input: &[u8],
    text: Option<&str>,
    open: usize,
    options: &ParseOptions,
    decoded: &mut String,
) -> Result<(usize, bool), Fail> {
    let limit = options.limits.string_bytes;
    let mut i = open + 1;
    let mut run_start = i;
    let mut escaped = false;
    loop {
        i = skip_plain(input, i);
        let Some(&b) = input.get(i) else {
            return Err((ErrorCode::Truncated, i));
        };
        match class(b) {
            QUOTE => {
                let run = valid_run(input, text, run_start, i)?;
                let len = if escaped {
                    decoded.push_str(run);
                    decoded.len()
                } else {
                    run.len()
                };
                if len > limit {
                    return Err((ErrorCode::StringTooLong, open));
                }
                return Ok((i, escaped));
            }
            BACKSLASH => {
                let run = valid_run(input, text, run_start, i)?;
                if !escaped {
                    // The run so far starts at the first byte of the string.
                    decoded.clear();
                    escaped = true;
                }
                decoded.push_str(run);
                let (c, next) = escape(input, i, options.allow_noncharacters)?;
                decoded.push(c);
                i = next;
                run_start = i;
                if decoded.len() > limit {
                    return Err((ErrorCode::StringTooLong, open));
                }
            }
            CONTROL => return Err((ErrorCode::ControlCharacter, i)),
            _ => {
                let (cp, len) = decode_utf8(input, i)?;
                if !options.allow_noncharacters && is_noncharacter(cp) {
                    return Err((ErrorCode::Noncharacter, i));
                }
                i += len;
            }
        }
    }
}

/// The bytes `start..end` as UTF-8 text, or `invalid_utf8` at the first bad byte.
pub(crate) fn valid_run<'a>(
    input: &'a [u8],
    text: Option<&'a str>,
    start: usize,
    end: usize,
) -> Result<&'a str, Fail> {
    if let Some(run) = text.and_then(|t| t.get(start..end)) {
        return Ok(run);
    }
    let bytes = input.get(start..end).unwrap_or_default();
    std::str::from_utf8(bytes).map_err(|e| (ErrorCode::InvalidUtf8, start + e.valid_up_to()))
}

/// Decodes the escape whose backslash is at `at`; returns the character
/// and the offset after the escape.
fn escape(input: &[u8], at: usize, allow_noncharacters: bool) -> Result<(char, usize), Fail> {
    let simple = match input.get(at + 1) {
        None => return Err((ErrorCode::Truncated, at + 1)),
        Some(b'"') => '"',
        Some(b'\\') => '\\',
        Some(b'/') => '/',
        Some(b'b') => '\u{8}',
        Some(b'f') => '\u{c}',
        Some(b'n') => '\n',
        Some(b'r') => '\r',
        Some(b't') => '\t',
        Some(b'u') => return unicode_escape(input, at, allow_noncharacters),
        Some(_) => return Err((ErrorCode::InvalidEscape, at)),
    };
    Ok((simple, at + 2))
}

fn unicode_escape(
    input: &[u8],
    at: usize,
    allow_noncharacters: bool,
) -> Result<(char, usize), Fail> {
    let first = hex4(input, at + 2)?;
    let (cp, next) = match first {
        0xD800..=0xDBFF => {
            let low_at = at + 6;
            match (input.get(low_at), input.get(low_at + 1)) {
                (Some(b'\\'), Some(b'u')) => {}
                (None, _) | (Some(b'\\'), None) => return Err((ErrorCode::Truncated, low_at)),
                _ => return Err((ErrorCode::LoneSurrogate, at)),
            }
            let low = hex4(input, low_at + 2)?;
            if !(0xDC00..=0xDFFF).contains(&low) {
                return Err((ErrorCode::LoneSurrogate, at));
            }
            (0x10000 + ((first - 0xD800) << 10) + (low - 0xDC00), at + 12)
        }
        0xDC00..=0xDFFF => return Err((ErrorCode::LoneSurrogate, at)),
        cp => (cp, at + 6),
    };
    if !allow_noncharacters && is_noncharacter(cp) {
        return Err((ErrorCode::Noncharacter, at));
    }
    let c = char::from_u32(cp).ok_or((ErrorCode::LoneSurrogate, at))?;
    Ok((c, next))
}

fn hex4(input: &[u8], at: usize) -> Result<u32, Fail> {
    let mut v = 0u32;
    for i in at..at + 4 {
        let digit = match input.get(i) {
            None => return Err((ErrorCode::Truncated, i)),
            Some(&b) => char::from(b).to_digit(16),
        };
        let digit = digit.ok_or((ErrorCode::InvalidEscape, i))?;
        v = v * 16 + digit;
    }
    Ok(v)
}

/// Decodes the UTF-8 sequence at `at`, returning the code point and its
/// length, or the code and offset of the problem.
fn decode_utf8(input: &[u8], at: usize) -> Result<(u32, usize), Fail> {
    let byte = |i: usize| input.get(at + i).copied();
    let lead = byte(0).ok_or((ErrorCode::Truncated, at))?;
    let (len, min2, max2, init) = match lead {
        0xC2..=0xDF => (2, 0x80, 0xBF, u32::from(lead & 0x1F)),
        0xE0 => (3, 0xA0, 0xBF, 0),
        0xE1..=0xEC | 0xEE..=0xEF => (3, 0x80, 0xBF, u32::from(lead & 0x0F)),
        0xED => (3, 0x80, 0x9F, 0xD),
        0xF0 => (4, 0x90, 0xBF, 0),
        0xF1..=0xF3 => (4, 0x80, 0xBF, u32::from(lead & 0x07)),
        0xF4 => (4, 0x80, 0x8F, 4),
        _ => return Err((ErrorCode::InvalidUtf8, at)),
    };
    let mut cp = init;
    for i in 1..len {
        let b = byte(i).ok_or((ErrorCode::Truncated, at + i))?;
        let (lo, hi) = if i == 1 { (min2, max2) } else { (0x80, 0xBF) };
        if !(lo..=hi).contains(&b) {
            return Err((ErrorCode::InvalidUtf8, at + i));
        }
        cp = (cp << 6) | u32::from(b & 0x3F);
    }
    Ok((cp, len))
}

impl<'a> Parser<'a> {
    fn run(&mut self) -> Result<Value<'a>, Error> {
        let limits = self.options.limits;
        if self.input.len() > limits.input_bytes {
            return Err(self.error(ErrorCode::TooLarge, limits.input_bytes));
        }
        if self.input.starts_with(&[0xEF, 0xBB, 0xBF]) {
            return Err(self.error(ErrorCode::ByteOrderMark, 0));
        }
        'value: loop {
            self.skip_whitespace();
            self.values += 1;
            if self.values > limits.values {
                return Err(self.error(ErrorCode::TooManyValues, self.pos));
            }
            let mut value = match self.peek() {
                None => return Err(self.error(ErrorCode::Truncated, self.pos)),
                Some(b'{') => {
                    self.open()?;
                    self.skip_whitespace();
                    match self.peek() {
                        Some(b'}') => {
                            self.pos += 1;
                            Value::Object(Object::new())
                        }
                        Some(b'"') => {
                            let key = self.parse_string()?;
                            self.expect_colon()?;
                            self.stack.push(Frame::Object {
                                start: self.members.len(),
                                pending: true,
                                index: None,
                            });
                            self.members.push((key, Value::Null));
                            continue 'value;
                        }
                        None => return Err(self.error(ErrorCode::Truncated, self.pos)),
                        Some(_) => return Err(self.error(ErrorCode::InvalidSyntax, self.pos)),
                    }
                }
                Some(b'[') => {
                    self.open()?;
                    self.skip_whitespace();
                    if self.peek() == Some(b']') {
                        self.pos += 1;
                        Value::Array(Vec::new())
                    } else {
                        self.stack.push(Frame::Array {
                            start: self.items.len(),
                        });
                        continue 'value;
                    }
                }
                Some(b'"') => Value::String(self.parse_string()?),
                Some(b'-' | b'0'..=b'9') => self.parse_number()?,
                Some(b't') => self.literal(b"true", Value::Bool(true))?,
                Some(b'f') => self.literal(b"false", Value::Bool(false))?,
                Some(b'n') => self.literal(b"null", Value::Null)?,
                Some(b'N' | b'I') => return Err(self.non_finite_literal()),
                Some(b) => {
                    let code = if b >= 0x80 && self.decode_utf8(self.pos).is_err() {
                        ErrorCode::InvalidUtf8
                    } else {
                        ErrorCode::InvalidSyntax
                    };
                    return Err(self.error(code, self.pos));
                }
            };
            // A value is complete: hand it to its container, closing every
            // container that ends here.
            loop {
                match self.stack.last_mut() {
                    None => {
                        self.skip_whitespace();
                        if self.pos < self.input.len() {
                            return Err(self.error(ErrorCode::TrailingData, self.pos));
                        }
                        return Ok(value);
                    }
                    Some(Frame::Array { .. }) => self.items.push(value),
                    Some(Frame::Object { pending, .. }) => {
                        *pending = false;
                        if let Some(slot) = self.members.last_mut() {
                            // INVARIANT: the slot holds the `Null` placeholder
                            // pushed with the name, which owns nothing.
                            std::mem::forget(std::mem::replace(&mut slot.1, value));
                        }
                    }
                }
                self.skip_whitespace();
                let in_array = matches!(self.stack.last(), Some(Frame::Array { .. }));
                match (self.peek(), in_array) {
                    (Some(b','), true) => {
                        self.pos += 1;
                        if self.container_len() >= limits.array_items {
                            self.skip_whitespace();
                            return Err(self.error(ErrorCode::TooManyItems, self.pos));
                        }
                        continue 'value;
                    }
                    (Some(b','), false) => {
                        self.pos += 1;
                        self.next_member()?;
                        continue 'value;
                    }
                    (Some(b']'), true) | (Some(b'}'), false) => {
                        self.pos += 1;
                        value = match self.stack.pop() {
                            Some(Frame::Array { start }) => {
                                Value::Array(self.items.split_off(start))
                            }
                            Some(Frame::Object { start, .. }) => {
                                Value::Object(Object::from_unique(self.members.split_off(start)))
                            }
                            None => return Err(self.error(ErrorCode::InvalidSyntax, self.pos)),
                        };
                    }
                    (None, _) => return Err(self.error(ErrorCode::Truncated, self.pos)),
                    (Some(_), _) => return Err(self.error(ErrorCode::InvalidSyntax, self.pos)),
                }
            }
        }
    }

    /// Reads `"name":` after a comma in an object and records the name.
    fn next_member(&mut self) -> Result<(), Error> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'"') => {}
            None => return Err(self.error(ErrorCode::Truncated, self.pos)),
            Some(_) => return Err(self.error(ErrorCode::InvalidSyntax, self.pos)),
        }
        let key_offset = self.pos;
        if self.container_len() >= self.options.limits.object_members {
            return Err(self.error(ErrorCode::TooManyMembers, key_offset));
        }
        let key = self.parse_string()?;
        let duplicate = match self.stack.last_mut() {
            Some(Frame::Object { start, index, .. }) => is_duplicate(
                self.members.get(*start..).unwrap_or_default(),
                index,
                &key,
                &mut self.hash_state,
            ),
            _ => false,
        };
        if duplicate {
            let pointer = self.pointer();
            return Err(Error::new(
                ErrorCode::DuplicateKey,
                self.input,
                key_offset,
                pointer,
                Some(key.into_owned()),
            ));
        }
        self.expect_colon()?;
        if let Some(Frame::Object { pending, .. }) = self.stack.last_mut() {
            *pending = true;
        }
        self.members.push((key, Value::Null));
        Ok(())
    }

    /// Items or members already held by the innermost container.
    fn container_len(&self) -> usize {
        match self.stack.last() {
            Some(Frame::Array { start }) => self.items.len().saturating_sub(*start),
            Some(Frame::Object { start, .. }) => self.members.len().saturating_sub(*start),
            None => 0,
        }
    }

    /// Steps into `[` or `{`, checking the depth limit.
    fn open(&mut self) -> Result<(), Error> {
        if self.stack.len() >= self.options.limits.depth {
            return Err(self.error(ErrorCode::TooDeep, self.pos));
        }
        self.pos += 1;
        Ok(())
    }

    #[inline]
    fn expect_colon(&mut self) -> Result<(), Error> {
        self.skip_whitespace();
        match self.peek() {
            Some(b':') => {
                self.pos += 1;
                Ok(())
            }
            None => Err(self.error(ErrorCode::Truncated, self.pos)),
            Some(_) => Err(self.error(ErrorCode::InvalidSyntax, self.pos)),
        }
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    #[inline]
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\n' | b'\r' | b'\t') = self.peek() {
            self.pos += 1;
        }
    }

    fn literal(&mut self, word: &'static [u8], value: Value<'a>) -> Result<Value<'a>, Error> {
        let rest = self.input.get(self.pos..).unwrap_or_default();
        if rest.starts_with(word) {
            self.pos += word.len();
            return Ok(value);
        }
        Err(self.word_error(rest, word, ErrorCode::InvalidSyntax))
    }

    /// `NaN`, `Infinity` or `-Infinity` where a value starts.
    fn non_finite_literal(&self) -> Error {
        let rest = self.input.get(self.pos..).unwrap_or_default();
        let word: &[u8] = if rest.first() == Some(&b'N') {
            b"NaN"
        } else {
            b"Infinity"
        };
        if rest.starts_with(word) {
            return self.error(ErrorCode::NonFiniteNumber, self.pos);
        }
        self.word_error(rest, word, ErrorCode::InvalidSyntax)
    }

    /// The error for input that does not spell `word`: `truncated` when the
    /// input ends inside a correct prefix of it.
    fn word_error(&self, rest: &[u8], word: &[u8], otherwise: ErrorCode) -> Error {
        let common = rest.iter().zip(word).take_while(|(a, b)| a == b).count();
        let code = if common == rest.len() {
            ErrorCode::Truncated
        } else {
            otherwise
        };
        self.error(code, self.pos + common)
    }

    fn parse_number(&mut self) -> Result<Value<'a>, Error> {
        let start = self.pos;
        let rest = self.input.get(start..).unwrap_or_default();
        if rest.starts_with(b"-I") {
            self.pos += 1;
            let e = self.non_finite_literal();
            self.pos = start;
            return Err(if e.code() == ErrorCode::NonFiniteNumber {
                self.error(ErrorCode::NonFiniteNumber, start)
            } else {
                e
            });
        }
        let scanned = number::scan(self.input, start).map_err(|(code, at)| self.error(code, at))?;
        // A scanned lexeme is ASCII.
        let lexeme = self.valid_run(start, scanned.end)?;
        let n = number::build_scanned(lexeme, &scanned, self.options.allow_rounding)
            .map_err(|code| self.error(code, start))?;
        self.pos = scanned.end;
        Ok(Value::Number(n))
    }

    /// Reads a string whose opening quote is at `self.pos`.
    /// The string whose opening quote is at `self.pos`. Most strings have
    /// no escape and no byte that needs a closer look: they are sliced out of
    /// the validated input here; the others take [`Self::parse_string_slow`].
    #[inline(always)]
    fn parse_string(&mut self) -> Result<Cow<'a, str>, Error> {
        let start = self.pos + 1;
        let end = skip_plain(self.input, start);
        if self.input.get(end) == Some(&b'"') {
            if let Some(run) = self.text.and_then(|t| t.get(start..end)) {
                if run.len() <= self.options.limits.string_bytes {
                    self.pos = end + 1;
                    return Ok(Cow::Borrowed(run));
                }
            }
        }
        self.parse_string_slow()
    }

    fn parse_string_slow(&mut self) -> Result<Cow<'a, str>, Error> {
        let open = self.pos;
        let mut decoded = String::new();
        match string_slow(self.input, self.text, open, &self.options, &mut decoded) {
            Ok((close, escaped)) => {
                let s = if escaped {
                    Cow::Owned(decoded)
                } else {
                    Cow::Borrowed(self.valid_run(open + 1, close)?)
                };
                self.pos = close + 1;
                Ok(s)
            }
            Err((code, at)) => Err(self.error(code, at)),
        }
    }

    /// The bytes `start..end` as UTF-8 text, or `invalid_utf8` at the first bad byte.
    fn valid_run(&self, start: usize, end: usize) -> Result<&'a str, Error> {
        valid_run(self.input, self.text, start, end).map_err(|(code, at)| self.error(code, at))
    }

    fn decode_utf8(&self, at: usize) -> Result<(u32, usize), (ErrorCode, usize)> {
        decode_utf8(self.input, at)
    }

    /// The JSON Pointer of the value being read.
    fn pointer(&self) -> String {
        let mut p = String::new();
        for (i, frame) in self.stack.iter().enumerate() {
            match frame {
                Frame::Array { start } => {
                    // This array's items end where the next open array's begin.
                    let end = self
                        .stack
                        .iter()
                        .skip(i + 1)
                        .find_map(|f| match f {
                            Frame::Array { start } => Some(*start),
                            Frame::Object { .. } => None,
                        })
                        .unwrap_or(self.items.len());
                    pointer::push_index(&mut p, end.saturating_sub(*start));
                }
                Frame::Object { pending: true, .. } => {
                    // This object's members end where the next open object's begin.
                    let end = self
                        .stack
                        .iter()
                        .skip(i + 1)
                        .find_map(|f| match f {
                            Frame::Object { start, .. } => Some(*start),
                            Frame::Array { .. } => None,
                        })
                        .unwrap_or(self.members.len());
                    if let Some((key, _)) =
                        end.checked_sub(1).and_then(|last| self.members.get(last))
                    {
                        pointer::push_token(&mut p, key);
                    }
                }
                Frame::Object { pending: false, .. } => {}
            }
        }
        p
    }

    #[cold]
    #[inline(never)]
    fn error(&self, code: ErrorCode, offset: usize) -> Error {
        Error::new(code, self.input, offset, self.pointer(), None)
    }
}
