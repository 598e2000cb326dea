//! The tree-free reader: the strict parser's rules applied in one pass that
//! builds no [`Value`] tree. It tells a [`Visitor`] what it reads (so a
//! validator can check the document while it is read) and writes the
//! canonical text as it goes.
//!
//! It accepts exactly what [`crate::from_slice`] accepts under the same
//! [`ParseOptions`] (the string rules are shared code; the tests read
//! JSONTestSuite, the perf corpus and generated documents through both).
//! It does not explain a refusal: the tree parser, run on the same input,
//! gives the error with its code and place ([`Reader::canonicalize`] does
//! that for you).

use std::collections::HashSet;
use std::hash::{BuildHasher, RandomState};

use crate::canonical::write_string;
use crate::error::Error;
use crate::number;
use crate::parser::{self, ParseOptions};
use crate::value::Value;

mod close;
mod order;

use order::head;

/// What a [`Reader`] reports while it reads, in document order. Every
/// method returns whether to go on: `false` stops the read, which then
/// ends with [`Read::Stopped`].
///
/// `()` is the visitor that accepts every event.
pub trait Visitor {
    /// An object starts.
    fn begin_object(&mut self) -> bool;
    /// A member's name; its value is reported next. Names are unique
    /// within their object by the time a read is [`Read::Accepted`] (a
    /// duplicate ends the read, but it may be reported first).
    fn member(&mut self, name: &str) -> bool;
    /// The innermost open object ends.
    fn end_object(&mut self) -> bool;
    /// An array starts.
    fn begin_array(&mut self) -> bool;
    /// The innermost open array ends.
    fn end_array(&mut self) -> bool;
    /// A `null`, boolean, number or string (never an array or object).
    fn scalar(&mut self, value: &Value<'_>) -> bool;

    /// A string value (a member's value or an item, never a name), as
    /// [`Visitor::scalar`] would get it: a visitor that checks strings
    /// often can take them without a [`Value`] around them. The default
    /// asks [`Visitor::scalar`].
    #[inline]
    fn string(&mut self, s: &str) -> bool {
        self.scalar(&Value::String(s.into()))
    }

    /// A member's name, as [`Visitor::member`], for a visitor that may
    /// also vouch for the name being new in its object ([`Name::New`]),
    /// which spares the reader its own comparison. The default asks
    /// [`Visitor::member`] and vouches for nothing.
    #[inline]
    fn member_name(&mut self, name: &str) -> Name {
        if self.member(name) {
            Name::Go
        } else {
            Name::Stop
        }
    }

    /// The name the visitor expects the next member of the innermost
    /// object to have, if it expects one (say, the declared name after the
    /// previous member's): printable ASCII with no quote or backslash. When
    /// the input's next name is exactly these bytes, the reader takes it
    /// without scanning it and reports it with [`Visitor::expected_member`]
    /// instead of [`Visitor::member_name`]. A visitor that offers a name
    /// with any other byte (one the reader would have to unescape or check)
    /// makes the reader take the input's bytes as they are. The default
    /// offers none.
    #[inline]
    fn expected_name(&self) -> Option<&str> {
        None
    }

    /// A member's name that is the one [`Visitor::expected_name`] offered
    /// (`name` is the input's copy of it): as [`Visitor::member_name`],
    /// which the default asks, for a visitor that can skip looking the
    /// name up.
    #[inline]
    fn expected_member(&mut self, name: &str) -> Name {
        self.member_name(name)
    }
}

/// What a [`Visitor::member_name`] says of a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Name {
    /// Stop the read.
    Stop,
    /// Go on; the reader checks that the name is new in its object.
    Go,
    /// Go on, and the visitor vouches that the name differs from every
    /// other name of its object: from each one it vouched for (it keeps
    /// track of those, say as a bit per known name) and from each one it
    /// did not (say, because those are the names it does not know). The
    /// reader then compares only the names it was not vouched for. A
    /// visitor that vouches wrongly makes the reader accept a duplicate.
    New,
    /// As [`Name::New`], with the name's rank among the names the visitor
    /// ranks in this object: ranks are distinct and follow the names'
    /// canonical order (RFC 8785: by UTF-16 code units), so the reader
    /// orders these members by rank without comparing their names (say,
    /// the name's place among a schema's declared names, sorted). An
    /// object whose members are not all ranked is ordered by their names.
    /// A visitor that ranks wrongly makes the reader write its members out
    /// of order.
    Ranked(u32),
}

impl Visitor for () {
    fn begin_object(&mut self) -> bool {
        true
    }
    fn member(&mut self, _: &str) -> bool {
        true
    }
    fn end_object(&mut self) -> bool {
        true
    }
    fn begin_array(&mut self) -> bool {
        true
    }
    fn end_array(&mut self) -> bool {
        true
    }
    fn scalar(&mut self, _: &Value<'_>) -> bool {
        true
    }
}

/// How a [`Reader::read`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Read {
    /// The input is one strict JSON text and the visitor went along to
    /// the end; [`Reader::canonical`] is its canonical text.
    Accepted,
    /// The visitor stopped the read (the input may or may not be strict
    /// JSON past that point).
    Stopped,
    /// The input is not accepted by the strict parser; [`crate::from_slice`]
    /// (or [`ParseOptions::parse`]) says why.
    Refused,
}

/// A reusable strict reader that builds no tree: raw bytes in, events to a
/// [`Visitor`] and the canonical text out. Its buffers are kept from one
/// read to the next, so a warm reader allocates nothing for most inputs.
///
/// ```
/// use toolgate_json::{ParseOptions, Read, Reader};
///
/// let mut reader = Reader::new(ParseOptions::new());
/// assert_eq!(reader.read(br#"{"b": 1.0, "a": "x\u00e9"}"#, &mut ()), Read::Accepted);
/// assert_eq!(reader.canonical(), r#"{"a":"xé","b":1}"#);
/// assert_eq!(reader.read(br#"{"a":1,"a":2}"#, &mut ()), Read::Refused);
/// ```
#[derive(Debug, Default)]
pub struct Reader {
    options: ParseOptions,
    frames: Vec<Frame>,
    members: Vec<Member>,
    /// Unescaped names of open objects' members that had escapes.
    keys: String,
    /// The canonical text written so far.
    out: String,
    /// The last string with escapes, unescaped.
    decoded: String,
    /// An object's members already written, while its members are put in
    /// order.
    moved: String,
    /// An unsorted object's members by head, while they are put in order.
    order: Vec<(u64, usize)>,
    hash_state: Option<RandomState>,
}

#[derive(Debug)]
enum Frame {
    Array {
        /// Items completed so far.
        items: usize,
    },
    Object {
        /// Where this object's members begin in `members`.
        start: usize,
        /// Where its escaped names begin in `keys`.
        keys: usize,
        /// Hashes of the member names, built once the object grows large.
        index: Option<HashSet<u64>>,
        /// Members read so far.
        count: usize,
        /// Where its members' text begins in the canonical text.
        out: usize,
    },
}

/// One member of an open object.
#[derive(Debug, Clone, Copy)]
struct Member {
    /// The name's first eight bytes, big-endian, zero-padded: compared
    /// first, for duplicates and order.
    head: u64,
    /// The unescaped name: a range of the input, or of `keys` when `owned`.
    name: (usize, usize),
    owned: bool,
    /// Whether the visitor vouched for the name being new ([`Name::New`]).
    vouched: bool,
    /// Whether `head` is the name's rank ([`Name::Ranked`]), not its head.
    ranked: bool,
    /// Where its text is (with the canonical text only).
    text: Text,
}

/// Where the text of an open object's member is.
#[derive(Debug, Clone, Copy)]
enum Text {
    /// Not known yet: its value is next.
    Pending,
    /// Its value is a scalar that is its own canonical text, the input
    /// between these offsets: the member is written when its object
    /// closes, in canonical order, straight from the input.
    Input(usize, usize),
    /// Written to the canonical text from this offset (its name) up to
    /// the next written member of its object or the object's end (set
    /// when the object closes; the comma after it included).
    Out(usize, usize),
}

/// Why a read ended early.
enum End {
    Stopped,
    Refused,
}

/// Where a string read by [`Reader::string`] is.
#[derive(Clone, Copy)]
enum Str {
    /// The input between these offsets (no escapes).
    Input(usize, usize),
    /// In `Reader::decoded`.
    Decoded,
}

/// Objects with fewer members than this are checked for duplicates by a scan.
const INDEX_THRESHOLD: usize = 16;

/// Buffers up to this many bytes are kept between reads.
const KEEP: usize = 1 << 20;

impl Reader {
    /// A reader with these options (limits, noncharacters).
    pub fn new(options: ParseOptions) -> Self {
        Self {
            options,
            ..Self::default()
        }
    }

    /// The options in force.
    pub fn options(&self) -> &ParseOptions {
        &self.options
    }

    /// Reads one JSON text, reporting it to `visitor` and writing its
    /// canonical text ([`Reader::canonical`]).
    pub fn read<V: Visitor + ?Sized>(&mut self, input: &[u8], visitor: &mut V) -> Read {
        self.start(input, visitor, true)
    }

    /// Reads one JSON text, reporting it to `visitor`, without writing the
    /// canonical text (for a verdict alone): the same rules as
    /// [`Reader::read`], less work. [`Reader::canonical`] is empty after it.
    ///
    /// ```
    /// use toolgate_json::{ParseOptions, Read, Reader};
    ///
    /// let mut reader = Reader::new(ParseOptions::new());
    /// assert_eq!(reader.scan(br#"{"a": [1, 2.5]}"#, &mut ()), Read::Accepted);
    /// assert_eq!(reader.scan(br#"{"a": 1e400}"#, &mut ()), Read::Refused);
    /// ```
    pub fn scan<V: Visitor + ?Sized>(&mut self, input: &[u8], visitor: &mut V) -> Read {
        self.start(input, visitor, false)
    }

    fn start<V: Visitor + ?Sized>(&mut self, input: &[u8], visitor: &mut V, write: bool) -> Read {
        self.frames.clear();
        self.members.clear();
        self.keys.clear();
        if self.out.capacity() > KEEP {
            self.out = String::new();
            self.moved = String::new();
        } else {
            self.out.clear();
        }
        let limits = self.options.limits;
        if input.len() > limits.input_bytes || input.starts_with(&[0xEF, 0xBB, 0xBF]) {
            return Read::Refused;
        }
        // Whatever the strict parser accepts is UTF-8 as a whole (every
        // non-ASCII byte it accepts is inside a checked string).
        let Ok(text) = simdutf8::basic::from_utf8(input) else {
            return Read::Refused;
        };
        let run = if write {
            // The canonical text is at most as long as the input but for
            // numbers written out in full: room for it at once (most often
            // kept from the last read), in a new buffer rather than a
            // grown one, which would copy the old one's bytes.
            if self.out.capacity() < input.len() {
                self.out = String::with_capacity(input.len());
            }
            self.run::<true, V>(text, visitor)
        } else {
            self.run::<false, V>(text, visitor)
        };
        match run {
            Ok(()) => Read::Accepted,
            Err(End::Stopped) => Read::Stopped,
            Err(End::Refused) => Read::Refused,
        }
    }

    /// The canonical text of the last read; complete only when that read
    /// was [`Read::Accepted`].
    pub fn canonical(&self) -> &str {
        &self.out
    }

    /// The canonical text of one JSON text, read without a tree; on a
    /// refusal, the strict parser's error for it.
    ///
    /// ```
    /// use toolgate_json::{ParseOptions, Reader};
    ///
    /// let mut reader = Reader::new(ParseOptions::new());
    /// assert_eq!(reader.canonicalize(b"[1E2, -0]")?, "[100,0]");
    /// let e = reader.canonicalize(br#"{"a":NaN}"#).unwrap_err();
    /// assert_eq!(e.code().as_str(), "non_finite_number");
    /// # Ok::<(), toolgate_json::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// The [`Error`] [`ParseOptions::parse`] gives for the input.
    pub fn canonicalize(&mut self, input: &[u8]) -> Result<&str, Error> {
        if self.read(input, &mut ()) != Read::Accepted {
            // The tree parser explains; should it accept after all, its
            // canonical text is the answer.
            let value = self.options.parse(input)?;
            self.out.clear();
            crate::canonical::write_value(&mut self.out, &value);
        }
        Ok(&self.out)
    }

    fn run<const W: bool, V: Visitor + ?Sized>(
        &mut self,
        text: &str,
        v: &mut V,
    ) -> Result<(), End> {
        let input = text.as_bytes();
        let limits = self.options.limits;
        let mut pos = 0usize;
        let mut values = 0usize;
        // Whether the value next is an object member's (whose text is not
        // written yet: see `Text`).
        let mut pending = false;
        'value: loop {
            let member = W && std::mem::take(&mut pending);
            pos = skip_whitespace(input, pos);
            values += 1;
            if values > limits.values {
                return Err(End::Refused);
            }
            match input.get(pos) {
                Some(b'{') => {
                    if self.frames.len() >= limits.depth {
                        return Err(End::Refused);
                    }
                    go(v.begin_object())?;
                    if member {
                        self.write_name(text);
                    }
                    if W {
                        self.out.push('{');
                    }
                    pos = skip_whitespace(input, pos + 1);
                    match input.get(pos) {
                        Some(b'}') => {
                            pos += 1;
                            go(v.end_object())?;
                            if W {
                                self.out.push('}');
                            }
                        }
                        Some(b'"') => {
                            self.frames.push(Frame::Object {
                                start: self.members.len(),
                                keys: self.keys.len(),
                                index: None,
                                count: 0,
                                out: self.out.len(),
                            });
                            pos = self.member::<W, V>(text, pos, v)?;
                            pending = true;
                            continue 'value;
                        }
                        _ => return Err(End::Refused),
                    }
                }
                Some(b'[') => {
                    if self.frames.len() >= limits.depth {
                        return Err(End::Refused);
                    }
                    go(v.begin_array())?;
                    if member {
                        self.write_name(text);
                    }
                    if W {
                        self.out.push('[');
                    }
                    pos = skip_whitespace(input, pos + 1);
                    if input.get(pos) == Some(&b']') {
                        pos += 1;
                        go(v.end_array())?;
                        if W {
                            self.out.push(']');
                        }
                    } else {
                        self.frames.push(Frame::Array { items: 0 });
                        continue 'value;
                    }
                }
                Some(b'"') => {
                    let (s, end) = self.string(text, pos)?;
                    pos = end;
                    match s {
                        Str::Input(a, b) => {
                            let s = text.get(a..b).ok_or(End::Refused)?;
                            go(v.string(s))?;
                            // No quote, backslash or control character is
                            // left in an unescaped string: it is canonical,
                            // and so is the input from quote to quote.
                            if member {
                                self.defer(a - 1, b + 1);
                            } else if W {
                                self.out
                                    .push_str(text.get(a - 1..b + 1).unwrap_or_default());
                            }
                        }
                        Str::Decoded => {
                            go(v.string(&self.decoded))?;
                            if member {
                                self.write_name(text);
                            }
                            if W {
                                write_string(&mut self.out, &self.decoded);
                            }
                        }
                    }
                }
                Some(b'-' | b'0'..=b'9') => {
                    let scanned = number::scan(input, pos).map_err(|_| End::Refused)?;
                    let lexeme = text.get(pos..scanned.end).ok_or(End::Refused)?;
                    let n = number::build_scanned(lexeme, &scanned, self.options.allow_rounding)
                        .map_err(|_| End::Refused)?;
                    let value = Value::Number(n);
                    go(v.scalar(&value))?;
                    // An integer lexeme is its own canonical text, but
                    // `-0`; so is a plain fraction in its shortest form.
                    let as_is = W
                        && if scanned.is_int {
                            lexeme != "-0"
                        } else {
                            number::is_plain_canonical(lexeme)
                        };
                    if !W {
                        // Nothing to write.
                    } else if as_is {
                        if member {
                            self.defer(pos, scanned.end);
                        } else {
                            self.out.push_str(lexeme);
                        }
                    } else {
                        if member {
                            self.write_name(text);
                        }
                        if scanned.is_int {
                            self.out.push('0');
                        } else if !number::write_plain_decimal(lexeme, &mut self.out) {
                            if let Value::Number(n) = &value {
                                self.out.push_str(&n.canonical());
                            }
                        }
                    }
                    release(value);
                    pos = scanned.end;
                }
                Some(b't') => {
                    pos = self.literal::<W, V>(input, pos, "true", Value::Bool(true), v, member)?
                }
                Some(b'f') => {
                    pos =
                        self.literal::<W, V>(input, pos, "false", Value::Bool(false), v, member)?
                }
                Some(b'n') => {
                    pos = self.literal::<W, V>(input, pos, "null", Value::Null, v, member)?
                }
                _ => return Err(End::Refused),
            }
            // A value is complete: step to the next one, closing every
            // container that ends here.
            loop {
                let in_array = match self.frames.last_mut() {
                    None => {
                        pos = skip_whitespace(input, pos);
                        if pos < input.len() {
                            return Err(End::Refused);
                        }
                        return Ok(());
                    }
                    Some(Frame::Array { items }) => {
                        *items += 1;
                        Some(*items)
                    }
                    Some(Frame::Object { .. }) => None,
                };
                pos = skip_whitespace(input, pos);
                match (input.get(pos), in_array) {
                    (Some(b','), Some(items)) => {
                        pos += 1;
                        if items >= limits.array_items {
                            return Err(End::Refused);
                        }
                        if W {
                            self.out.push(',');
                        }
                        continue 'value;
                    }
                    (Some(b','), None) => {
                        pos = skip_whitespace(input, pos + 1);
                        if input.get(pos) != Some(&b'"') {
                            return Err(End::Refused);
                        }
                        if self.open_members() >= limits.object_members {
                            return Err(End::Refused);
                        }
                        // The comma is written with the member (see `Text`).
                        pos = self.member::<W, V>(text, pos, v)?;
                        pending = true;
                        continue 'value;
                    }
                    (Some(b']'), Some(_)) => {
                        pos += 1;
                        self.frames.pop();
                        go(v.end_array())?;
                        if W {
                            self.out.push(']');
                        }
                    }
                    (Some(b'}'), None) => {
                        pos += 1;
                        if let Some(Frame::Object {
                            start, keys, out, ..
                        }) = self.frames.pop()
                        {
                            self.close_object::<W>(text, start, keys, out);
                        }
                        go(v.end_object())?;
                    }
                    _ => return Err(End::Refused),
                }
            }
        }
    }

    /// Members of the innermost open object so far.
    fn open_members(&self) -> usize {
        match self.frames.last() {
            Some(Frame::Object { count, .. }) => *count,
            _ => 0,
        }
    }

    #[inline(always)]
    fn literal<const W: bool, V: Visitor + ?Sized>(
        &mut self,
        input: &[u8],
        pos: usize,
        word: &'static str,
        value: Value<'static>,
        v: &mut V,
        member: bool,
    ) -> Result<usize, End> {
        if !input
            .get(pos..)
            .unwrap_or_default()
            .starts_with(word.as_bytes())
        {
            return Err(End::Refused);
        }
        go(v.scalar(&value))?;
        if member {
            self.defer(pos, pos + word.len());
        } else if W {
            self.out.push_str(word);
        }
        Ok(pos + word.len())
    }

    /// The innermost object's last member's value is its own canonical
    /// text, the input from `a` to `b`: the member is written when the
    /// object closes.
    #[inline(always)]
    fn defer(&mut self, a: usize, b: usize) {
        if let Some(m) = self.members.last_mut() {
            m.text = Text::Input(a, b);
        }
    }

    /// Writes the innermost object's last member's name (after a comma
    /// when a member of the object is written before it) and its colon:
    /// its value is written next, as it is read.
    fn write_name(&mut self, text: &str) {
        let begin = match self.frames.last() {
            Some(Frame::Object { out, .. }) => *out,
            _ => return,
        };
        if self.out.len() > begin {
            self.out.push(',');
        }
        let at = self.out.len();
        if let Some(m) = self.members.last_mut() {
            m.text = Text::Out(at, at);
            let (a, b) = m.name;
            if m.owned {
                write_string(&mut self.out, self.keys.get(a..b).unwrap_or_default());
            } else {
                // The name from quote to quote, as in a string value.
                self.out
                    .push_str(text.get(a - 1..b + 1).unwrap_or_default());
            }
        }
        self.out.push(':');
    }

    /// The string whose opening quote is at `pos`, and the offset after it.
    #[inline(always)]
    fn string(&mut self, text: &str, pos: usize) -> Result<(Str, usize), End> {
        let input = text.as_bytes();
        let start = pos + 1;
        let end = parser::skip_plain(input, start);
        if input.get(end) == Some(&b'"') && end - start <= self.options.limits.string_bytes {
            return Ok((Str::Input(start, end), end + 1));
        }
        self.decoded.clear();
        match parser::string_slow(input, Some(text), pos, &self.options, &mut self.decoded) {
            Ok((close, true)) => Ok((Str::Decoded, close + 1)),
            Ok((close, false)) => Ok((Str::Input(start, close), close + 1)),
            Err(_) => Err(End::Refused),
        }
    }

    /// Reads `"name":` at `pos` in the innermost object: checks the name is
    /// new there, reports it, keeps it (see [`Text`]). Returns the offset
    /// after the colon.
    #[inline(always)]
    fn member<const W: bool, V: Visitor + ?Sized>(
        &mut self,
        text: &str,
        pos: usize,
        v: &mut V,
    ) -> Result<usize, End> {
        let input = text.as_bytes();
        // The name the visitor expects, if the input holds it and its
        // closing quote: taken without a scan.
        let expected = match v.expected_name() {
            Some(e)
                if e.len() <= self.options.limits.string_bytes
                    && holds_name(input, pos + 1, e.as_bytes()) =>
            {
                debug_assert!(
                    e.bytes()
                        .all(|b| (0x20..0x80).contains(&b) && b != b'"' && b != b'\\'),
                    "an expected name must be plain ASCII"
                );
                Some(e.len())
            }
            _ => None,
        };
        let (s, end) = match expected {
            Some(n) => (Str::Input(pos + 1, pos + 1 + n), pos + 2 + n),
            None => self.string(text, pos)?,
        };
        let (name, owned) = match s {
            Str::Input(a, b) => ((a, b), false),
            Str::Decoded => {
                let a = self.keys.len();
                self.keys.push_str(&self.decoded);
                ((a, self.keys.len()), true)
            }
        };
        let key = name_of(text, &self.keys, name, owned);
        let pos = skip_whitespace(input, end);
        if input.get(pos) != Some(&b':') {
            return Err(End::Refused);
        }
        let said = if expected.is_some() {
            v.expected_member(key)
        } else {
            v.member_name(key)
        };
        let (vouched, rank) = match said {
            Name::Stop => return Err(End::Stopped),
            Name::Go => (false, None),
            Name::New => (true, None),
            Name::Ranked(rank) => (true, Some(rank)),
        };
        // With the canonical text, a ranked name is ordered by its rank.
        let ranked = W && rank.is_some();
        let key_head = match rank {
            Some(rank) if W => u64::from(rank),
            _ if W || !vouched => head(key),
            _ => 0,
        };
        if let Some(Frame::Object {
            start,
            index,
            count,
            ..
        }) = self.frames.last_mut()
        {
            *count += 1;
            if !vouched {
                let earlier = self.members.get(*start..).unwrap_or_default();
                let new = (key, key_head);
                if is_duplicate(earlier, index, new, text, &self.keys, &mut self.hash_state) {
                    return Err(End::Refused);
                }
            }
        }
        // Without the canonical text, members are kept only to compare
        // the names no one vouched for.
        // With it, the member's text is written once its value is seen.
        if W || !vouched {
            self.members.push(Member {
                head: key_head,
                name,
                owned,
                vouched,
                ranked,
                text: Text::Pending,
            });
        }
        Ok(pos + 1)
    }
}

/// Drops a scalar by its own variant: the generic drop of a [`Value`]
/// (arrays and objects included) is not inlined, and a string or a number
/// needs next to nothing.
#[inline(always)]
fn release(value: Value<'_>) {
    match value {
        Value::String(s) => drop(s),
        Value::Number(n) => drop(n),
        other => drop(other),
    }
}

/// `Ok` to go on, the stop otherwise.
#[inline(always)]
fn go(on: bool) -> Result<(), End> {
    if on {
        Ok(())
    } else {
        Err(End::Stopped)
    }
}

/// The offset of the first byte at or after `pos` that is not whitespace.
/// Every token starts with a byte above the space, and between tokens
/// there is most often nothing or one space: those two are decided first.
#[inline(always)]
fn skip_whitespace(input: &[u8], mut pos: usize) -> usize {
    match input.get(pos) {
        Some(&b) if b > b' ' => return pos,
        Some(b' ') if input.get(pos + 1).is_some_and(|&b| b > b' ') => return pos + 1,
        _ => {}
    }
    while let Some(b' ' | b'\n' | b'\r' | b'\t') = input.get(pos) {
        pos += 1;
    }
    pos
}

/// Whether `input` holds `name` and then a quote at `at`. The name is
/// compared in at most two overlapping loads of four or eight bytes (most
/// names are short), without a call.
#[inline(always)]
fn holds_name(input: &[u8], at: usize, name: &[u8]) -> bool {
    let n = name.len();
    let Some(got) = input.get(at..at + n) else {
        return false;
    };
    if input.get(at + n) != Some(&b'"') {
        return false;
    }
    let w4 = |c: Option<&[u8; 4]>| c.map(|c| u32::from_le_bytes(*c));
    let w8 = |c: Option<&[u8; 8]>| c.map(|c| u64::from_le_bytes(*c));
    match n {
        0..=3 => got == name,
        4..=7 => {
            w4(got.first_chunk()) == w4(name.first_chunk())
                && w4(got.last_chunk()) == w4(name.last_chunk())
        }
        8..=16 => {
            w8(got.first_chunk()) == w8(name.first_chunk())
                && w8(got.last_chunk()) == w8(name.last_chunk())
        }
        _ => got == name,
    }
}

/// A member's unescaped name.
#[inline]
fn name_of<'t>(text: &'t str, keys: &'t str, (a, b): (usize, usize), owned: bool) -> &'t str {
    let from = if owned { keys } else { text };
    from.get(a..b).unwrap_or_default()
}

/// Whether `key` is already a name among `members`.
fn is_duplicate(
    members: &[Member],
    index: &mut Option<HashSet<u64>>,
    (key, key_head): (&str, u64),
    text: &str,
    keys: &str,
    state: &mut Option<RandomState>,
) -> bool {
    let name = |m: &Member| name_of(text, keys, m.name, m.owned);
    if members.len() < INDEX_THRESHOLD {
        return members
            .iter()
            .any(|m| m.head == key_head && !m.vouched && name(m) == key);
    }
    let state = state.get_or_insert_with(RandomState::new);
    let index =
        index.get_or_insert_with(|| members.iter().map(|m| state.hash_one(name(m))).collect());
    if index.insert(state.hash_one(key)) {
        false
    } else {
        // Equal hashes: compare the names themselves.
        members.iter().any(|m| name(m) == key)
    }
}

#[cfg(test)]
mod tests;
