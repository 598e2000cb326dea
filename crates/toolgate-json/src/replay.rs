//! Events told again: a parsed [`Value`] reported to a [`Visitor`] as a
//! [`Reader`](crate::Reader) reports its text ([`visit`]), and a [`Tape`]
//! that keeps what a reader reported, to tell it later (read where a lock
//! is not held, build where it is).

use crate::reader::{Name, Visitor};
use crate::value::Value;

/// Reports `value` to `visitor` with the events a [`Reader`](crate::Reader)
/// reports for its text: containers opened and closed, member names (by
/// [`Visitor::member_name`]) and values in order, strings by
/// [`Visitor::string`], other scalars by [`Visitor::scalar`]. Returns
/// whether the visitor went along to the end (`false`: it stopped). The
/// walk does not recurse, so any depth is safe.
///
/// ```
/// use toolgate_json::{from_str, visit, Tape};
///
/// let value = from_str(r#"{"a": [1, "x"], "b": null}"#)?;
/// let mut tape = Tape::new();
/// assert!(visit(&value, &mut tape));
/// // {, "a", [, 1, "x", ], "b", null, }
/// assert_eq!(tape.len(), 9);
/// # Ok::<(), toolgate_json::Error>(())
/// ```
pub fn visit<V: Visitor + ?Sized>(value: &Value<'_>, visitor: &mut V) -> bool {
    // The containers open around the next value, each with what is left of it.
    let mut open = Vec::new();
    let mut next = Some(value);
    loop {
        if let Some(value) = next.take() {
            let on = match value {
                Value::Object(members) => {
                    open.push(Open::Object(members.iter()));
                    visitor.begin_object()
                }
                Value::Array(items) => {
                    open.push(Open::Array(items.iter()));
                    visitor.begin_array()
                }
                Value::String(s) => visitor.string(s),
                scalar => visitor.scalar(scalar),
            };
            if !on {
                return false;
            }
        }
        // The next value of the innermost container, closing those that end.
        let Some(last) = open.last_mut() else {
            return true;
        };
        let on = match last {
            Open::Array(items) => match items.next() {
                Some(item) => {
                    next = Some(item);
                    true
                }
                None => {
                    open.pop();
                    visitor.end_array()
                }
            },
            Open::Object(members) => match members.next() {
                Some((name, value)) => {
                    next = Some(value);
                    visitor.member_name(name) != Name::Stop
                }
                None => {
                    open.pop();
                    visitor.end_object()
                }
            },
        };
        if !on {
            return false;
        }
    }
}

/// An open container in [`visit`], with its members or items still to come.
enum Open<A, O> {
    Array(A),
    Object(O),
}

/// The events a [`Reader`](crate::Reader) (or [`visit`]) reported, kept to
/// be told again by [`Tape::replay`]: a [`Visitor`] that records. Strings
/// and names are copied, so a tape does not borrow the input; it holds
/// about 40 bytes a value besides the text of its strings, and is as
/// bounded as the read that filled it (the reader's limits). Reuse one
/// with [`Tape::clear`]: its buffers are kept.
///
/// ```
/// use toolgate_json::{ParseOptions, Read, Reader, Tape};
///
/// let mut reader = Reader::new(ParseOptions::new());
/// let mut tape = Tape::new();
/// assert_eq!(reader.scan(br#"{"a": [1, 2.5, "x"]}"#, &mut tape), Read::Accepted);
/// let mut copy = Tape::new();
/// assert!(tape.replay(&mut copy));
/// assert_eq!(copy, tape);
/// ```
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tape {
    events: Vec<Event>,
    /// The names and strings, one after another.
    text: String,
}

/// One event of a [`Tape`].
#[derive(Debug, Clone, PartialEq)]
enum Event {
    BeginObject,
    EndObject,
    BeginArray,
    EndArray,
    /// A member name: its range in the tape's text.
    Member(usize, usize),
    /// A string value: its range in the tape's text.
    String(usize, usize),
    /// `null`, a boolean or a number.
    Scalar(Value<'static>),
}

impl Tape {
    /// An empty tape.
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets every event, keeping the buffers.
    pub fn clear(&mut self) {
        self.events.clear();
        self.text.clear();
    }

    /// The number of events recorded.
    pub fn len(&self) -> usize {
        self.events.len()
    }

    /// Whether no event is recorded.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// Tells `visitor` every event, in the order recorded (names by
    /// [`Visitor::member_name`], strings by [`Visitor::string`]). Returns
    /// whether it went along to the end (`false`: it stopped).
    pub fn replay<V: Visitor + ?Sized>(&self, visitor: &mut V) -> bool {
        let text = self.text.as_str();
        for event in &self.events {
            let on = match event {
                Event::BeginObject => visitor.begin_object(),
                Event::EndObject => visitor.end_object(),
                Event::BeginArray => visitor.begin_array(),
                Event::EndArray => visitor.end_array(),
                Event::Member(a, b) => {
                    visitor.member_name(text.get(*a..*b).unwrap_or_default()) != Name::Stop
                }
                Event::String(a, b) => visitor.string(text.get(*a..*b).unwrap_or_default()),
                Event::Scalar(value) => visitor.scalar(value),
            };
            if !on {
                return false;
            }
        }
        true
    }

    /// Appends `s` to the text, returning its range there.
    fn keep(&mut self, s: &str) -> (usize, usize) {
        let a = self.text.len();
        self.text.push_str(s);
        (a, self.text.len())
    }
}

impl Visitor for Tape {
    fn begin_object(&mut self) -> bool {
        self.events.push(Event::BeginObject);
        true
    }

    fn member(&mut self, name: &str) -> bool {
        let (a, b) = self.keep(name);
        self.events.push(Event::Member(a, b));
        true
    }

    fn end_object(&mut self) -> bool {
        self.events.push(Event::EndObject);
        true
    }

    fn begin_array(&mut self) -> bool {
        self.events.push(Event::BeginArray);
        true
    }

    fn end_array(&mut self) -> bool {
        self.events.push(Event::EndArray);
        true
    }

    fn scalar(&mut self, value: &Value<'_>) -> bool {
        let event = match value {
            Value::Null => Event::Scalar(Value::Null),
            Value::Bool(b) => Event::Scalar(Value::Bool(*b)),
            Value::Number(n) => Event::Scalar(Value::Number(n.clone())),
            Value::String(s) => return self.string(s),
            // Not a scalar: kept whole (a reader never reports one).
            Value::Array(_) | Value::Object(_) => Event::Scalar(value.clone().into_owned()),
        };
        self.events.push(event);
        true
    }

    #[inline]
    fn string(&mut self, s: &str) -> bool {
        let (a, b) = self.keep(s);
        self.events.push(Event::String(a, b));
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{from_str, Object, ParseOptions, Read, Reader};

    /// Writes the events as text, to compare two event streams.
    #[derive(Default)]
    struct Log(Vec<String>, Option<usize>);

    impl Log {
        fn go(&mut self, event: String) -> bool {
            self.0.push(event);
            self.1.is_none_or(|n| self.0.len() < n)
        }
    }

    impl Visitor for Log {
        fn begin_object(&mut self) -> bool {
            self.go("{".into())
        }
        fn member(&mut self, name: &str) -> bool {
            self.go(format!("name {name}"))
        }
        fn end_object(&mut self) -> bool {
            self.go("}".into())
        }
        fn begin_array(&mut self) -> bool {
            self.go("[".into())
        }
        fn end_array(&mut self) -> bool {
            self.go("]".into())
        }
        fn scalar(&mut self, value: &Value<'_>) -> bool {
            self.go(format!("scalar {}", value.to_canonical_string()))
        }
        fn string(&mut self, s: &str) -> bool {
            self.go(format!("string {s}"))
        }
    }

    const DOCS: [&str; 6] = [
        r#"{"b": 1.50, "a": [{"z": null, "\u00e9": true, "y": "\n"}], "c": {}, "d": []}"#,
        r#"[1.0, -0, 1E2, 12345678901234567890123, 0.1e-5, "a\"b", false, [[]]]"#,
        r#""plain""#,
        "7",
        "[]",
        r#"{"x":{"y":{"z":[1,{"w":"v"}]}}}"#,
    ];

    fn read(doc: &str) -> Log {
        let mut log = Log::default();
        let mut reader = Reader::new(ParseOptions::new());
        assert_eq!(
            reader.scan(doc.as_bytes(), &mut log),
            Read::Accepted,
            "{doc}"
        );
        log
    }

    #[test]
    fn a_tree_tells_what_the_reader_tells() {
        for doc in DOCS {
            let mut log = Log::default();
            assert!(visit(&from_str(doc).unwrap(), &mut log), "{doc}");
            assert_eq!(log.0, read(doc).0, "{doc}");
        }
    }

    #[test]
    fn a_tape_tells_what_it_was_told() {
        let mut reader = Reader::new(ParseOptions::new());
        let mut tape = Tape::new();
        for doc in DOCS {
            tape.clear();
            assert_eq!(
                reader.scan(doc.as_bytes(), &mut tape),
                Read::Accepted,
                "{doc}"
            );
            let mut log = Log::default();
            assert!(tape.replay(&mut log), "{doc}");
            assert_eq!(log.0, read(doc).0, "{doc}");
        }
        // A tape filled from a tree tells the same.
        let value = from_str(DOCS[0]).unwrap();
        let mut from_tree = Tape::new();
        assert!(visit(&value, &mut from_tree));
        tape.clear();
        assert_eq!(reader.scan(DOCS[0].as_bytes(), &mut tape), Read::Accepted);
        assert_eq!(from_tree, tape);
    }

    #[test]
    fn the_visitor_stops_both() {
        let value = from_str(DOCS[0]).unwrap();
        let mut tape = Tape::new();
        assert!(visit(&value, &mut tape));
        let all = read(DOCS[0]).0.len();
        for n in 1..all {
            let mut log = Log(Vec::new(), Some(n));
            assert!(!visit(&value, &mut log), "stop after {n}");
            assert_eq!(log.0.len(), n);
            let mut log = Log(Vec::new(), Some(n));
            assert!(!tape.replay(&mut log), "stop after {n}");
            assert_eq!(log.0.len(), n);
        }
        let mut log = Log(Vec::new(), Some(all + 1));
        assert!(visit(&value, &mut log));
    }

    #[test]
    fn a_deep_value_is_visited_without_recursion() {
        let mut value = Value::Null;
        for i in 0..200_000 {
            value = if i % 2 == 0 {
                Value::Array(vec![value])
            } else {
                let mut o = Object::new();
                o.insert("k", value);
                Value::Object(o)
            };
        }
        let mut tape = Tape::new();
        assert!(visit(&value, &mut tape));
        assert_eq!(tape.len(), 200_000 * 2 + 100_000 + 1);
        // A value drops recursively: take it apart from the outside in.
        let mut rest = vec![value];
        while let Some(v) = rest.pop() {
            match v {
                Value::Array(items) => rest.extend(items),
                Value::Object(mut o) => rest.extend(o.remove("k")),
                _ => {}
            }
        }
    }
}
