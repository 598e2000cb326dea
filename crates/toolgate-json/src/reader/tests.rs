//! The reader's own tests: canonical text, vouched, expected and ranked
//! names, stops.

use super::*;

#[test]
fn canonical_text_matches_the_tree() {
    let mut r = Reader::new(ParseOptions::new());
    for doc in [
        r#"{"b":1,"a":[{"z":null,"\u00e9":true,"y":"\n"}],"\ud83d\ude00":1,"\ue000":2}"#,
        r#"[1.0, -0, 1E2, 12345678901234567890123, 0.1e-5, "a\"b", "\u0001"]"#,
        r#"{"c":{"b":{"a":1,"A":2},"a":[]},"b":{},"a":"x"}"#,
        "  \"plain\"  ",
    ] {
        assert_eq!(r.read(doc.as_bytes(), &mut ()), Read::Accepted, "{doc}");
        let tree = crate::from_str(doc).unwrap();
        assert_eq!(r.canonical(), crate::canonical::to_string(&tree), "{doc}");
    }
}

/// Vouches for `a` and `b` by a bit each, as a schema walk does for
/// its declared names; other names are left to the reader.
struct Known(Vec<u8>);
impl Visitor for Known {
    fn begin_object(&mut self) -> bool {
        self.0.push(0);
        true
    }
    fn member(&mut self, _: &str) -> bool {
        true
    }
    fn member_name(&mut self, name: &str) -> Name {
        let bit = match name {
            "a" => 1,
            "b" => 2,
            _ => return Name::Go,
        };
        match self.0.last_mut() {
            Some(seen) if *seen & bit == 0 => {
                *seen |= bit;
                Name::New
            }
            _ => Name::Stop,
        }
    }
    fn end_object(&mut self) -> bool {
        self.0.pop().is_some()
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

#[test]
fn vouched_names_skip_the_comparison_and_the_rest_do_not() {
    let mut r = Reader::new(ParseOptions::new());
    for write in [false, true] {
        let mut read = |doc: &str| {
            let mut known = Known(Vec::new());
            if write {
                r.read(doc.as_bytes(), &mut known)
            } else {
                r.scan(doc.as_bytes(), &mut known)
            }
        };
        assert_eq!(read(r#"{"b":1,"x":2,"a":3,"y":{"a":1}}"#), Read::Accepted);
        assert_eq!(read(r#"{"a":1,"x":1,"b":2,"x":2}"#), Read::Refused);
        assert_eq!(read(r#"{"x":1,"a":1,"\u0078":2}"#), Read::Refused);
        assert_eq!(read(r#"{"a":1,"b":2,"a":3}"#), Read::Stopped);
        assert_eq!(read(r#"{"a":{"a":1,"b":2},"b":[{"a":1}]}"#), Read::Accepted);
    }
    assert_eq!(
        r.read(br#"{"b":1,"x":2,"a":3}"#, &mut Known(Vec::new())),
        Read::Accepted
    );
    assert_eq!(r.canonical(), r#"{"a":3,"b":1,"x":2}"#);
}

/// Declares `b`, `a`, `long_name_x` in that order, as a schema walk
/// does: offers the name after the previous one's, vouches for each
/// by a bit and ranks it by `rank` (canonical order when it is
/// `[1, 0, 2]`).
struct Declared {
    seen: Vec<u8>,
    next: Vec<usize>,
    rank: [u32; 3],
    taken: usize,
}
const DECLARED: [&str; 3] = ["b", "a", "long_name_x"];
impl Declared {
    fn new(rank: [u32; 3]) -> Self {
        Declared {
            seen: Vec::new(),
            next: Vec::new(),
            rank,
            taken: 0,
        }
    }
    fn found(&mut self, i: Option<usize>) -> Name {
        let Some(i) = i else { return Name::Go };
        if let Some(next) = self.next.last_mut() {
            *next = i + 1;
        }
        match self.seen.last_mut() {
            Some(seen) if *seen & (1 << i) == 0 => {
                *seen |= 1 << i;
                Name::Ranked(self.rank[i])
            }
            _ => Name::Stop,
        }
    }
}
impl Visitor for Declared {
    fn begin_object(&mut self) -> bool {
        self.seen.push(0);
        self.next.push(0);
        true
    }
    fn member(&mut self, _: &str) -> bool {
        true
    }
    fn member_name(&mut self, name: &str) -> Name {
        let i = DECLARED.iter().position(|d| *d == name);
        self.found(i)
    }
    fn expected_name(&self) -> Option<&str> {
        DECLARED.get(*self.next.last()?).copied()
    }
    fn expected_member(&mut self, name: &str) -> Name {
        self.taken += 1;
        let i = self.next.last().copied();
        assert_eq!(DECLARED.get(i.unwrap_or(9)), Some(&name));
        self.found(i)
    }
    fn end_object(&mut self) -> bool {
        self.next.pop();
        self.seen.pop().is_some()
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

#[test]
fn expected_names_are_taken_without_a_scan_and_nothing_else_is() {
    let mut r = Reader::new(ParseOptions::new());
    let mut read = |doc: &str| {
        let mut v = Declared::new([1, 0, 2]);
        let read = r.read(doc.as_bytes(), &mut v);
        (read, v.taken, r.canonical().to_owned())
    };
    let doc = r#"{"b":1,"a":{"b":2},"long_name_x":3}"#;
    let want = r#"{"a":{"b":2},"b":1,"long_name_x":3}"#;
    assert_eq!(read(doc), (Read::Accepted, 4, want.to_owned()));
    // Escaped, longer, or an undeclared name: read and looked up as any.
    let want = r#"{"a":2,"b":1}"#.to_owned();
    assert_eq!(read(r#"{"b":1,"\u0061":2}"#), (Read::Accepted, 1, want));
    let want = r#"{"ab":2,"b":1}"#.to_owned();
    assert_eq!(read(r#"{"b":1,"ab":2}"#), (Read::Accepted, 1, want));
    assert_eq!(read(r#"{"b":1,"a":2,"a":3}"#).0, Read::Stopped);
    assert_eq!(read(r#"{"b":1,"a"#).0, Read::Refused);
    assert_eq!(read(r#"{"b" 1}"#).0, Read::Refused);
    // An expected name is held to the string limit all the same.
    let limits = crate::Limits::new()
        .set(crate::Limit::StringBytes, 4)
        .unwrap();
    let mut r = Reader::new(ParseOptions::new().with_limits(limits));
    let mut v = Declared::new([1, 0, 2]);
    let doc = br#"{"b":1,"a":2,"long_name_x":3}"#;
    assert_eq!(r.read(doc, &mut v), Read::Refused);
    assert_eq!(v.taken, 2);
}

#[test]
fn ranked_members_are_ordered_by_rank_alone() {
    let mut r = Reader::new(ParseOptions::new());
    // Ranks that are not the canonical order show that they, not the
    // names, decide where ranked members go.
    let doc = br#"{"a":1,"long_name_x":{"b":2,"a":3},"b":4}"#;
    assert_eq!(r.read(doc, &mut Declared::new([0, 1, 2])), Read::Accepted);
    assert_eq!(
        r.canonical(),
        r#"{"b":4,"a":1,"long_name_x":{"b":2,"a":3}}"#
    );
    // Beside an unranked name, every member is ordered by its name.
    let doc = br#"{"b":1,"x":2,"a":3}"#;
    assert_eq!(r.read(doc, &mut Declared::new([0, 1, 2])), Read::Accepted);
    assert_eq!(r.canonical(), r#"{"a":3,"b":1,"x":2}"#);
    let doc = br#"{"long_name_x":1,"b":2,"a":[{"a":1,"b":2}]}"#;
    assert_eq!(r.read(doc, &mut Declared::new([1, 0, 2])), Read::Accepted);
    let tree = crate::from_slice(doc).unwrap();
    assert_eq!(r.canonical(), crate::canonical::to_string(&tree));
}

#[test]
fn vouched_names_count_toward_the_member_limit() {
    let limits = crate::Limits::new()
        .set(crate::Limit::ObjectMembers, 2)
        .unwrap();
    let mut r = Reader::new(ParseOptions::new().with_limits(limits));
    let mut known = Known(Vec::new());
    assert_eq!(r.scan(br#"{"a":1,"b":2}"#, &mut known), Read::Accepted);
    assert_eq!(r.scan(br#"{"a":1,"b":2,"x":3}"#, &mut known), Read::Refused);
}

#[test]
fn stops_when_the_visitor_says_so() {
    struct NoArrays;
    impl Visitor for NoArrays {
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
            false
        }
        fn end_array(&mut self) -> bool {
            true
        }
        fn scalar(&mut self, _: &Value<'_>) -> bool {
            true
        }
    }
    let mut r = Reader::new(ParseOptions::new());
    assert_eq!(r.read(br#"{"a":1}"#, &mut NoArrays), Read::Accepted);
    assert_eq!(r.read(br#"{"a":[1]}"#, &mut NoArrays), Read::Stopped);
    assert_eq!(r.read(br#"{"a":[1],"#, &mut NoArrays), Read::Stopped);
    assert_eq!(r.read(br#"{"a":1,"#, &mut NoArrays), Read::Refused);
}

/// A random object for the members' order at close: names that collide
/// (duplicates), that order differently by UTF-8 bytes and UTF-16 units,
/// or that are escaped; values kept for the close (plain strings,
/// integers, shortest fractions, literals) beside values written as read
/// (escaped strings, `-0`, other numbers, nested objects, arrays); and
/// every spacing around the colon and comma.
fn random_object(rng: &mut toolgate_testkit::Rng, depth: u32, out: &mut String) {
    const NAMES: [&str; 14] = [
        "a",
        "b",
        "ab",
        "long_name_x",
        "\u{e9}",
        "\u{e000}",
        "\u{1f600}",
        "\u{ffff}",
        r"\u0061",
        r"\u00e9",
        r"\ud83d\ude00",
        "A",
        "a\u{0}",
        "",
    ];
    const SCALARS: [&str; 16] = [
        "1",
        "-0",
        "0",
        "-17",
        "1.5",
        "1.50",
        "0.000001",
        "1e2",
        "-0.0",
        "12345678901234567.5",
        "true",
        "false",
        "null",
        "\"x\"",
        "\"\\n\\u00e9\"",
        "\"\u{e9}\"",
    ];
    const GAPS: [&str; 4] = ["", " ", "\n  ", "\t"];
    out.push('{');
    let n = rng.below(6);
    for i in 0..n {
        if i > 0 {
            out.push_str(rng.pick(&GAPS));
            out.push(',');
        }
        out.push_str(rng.pick(&GAPS));
        out.push('"');
        out.push_str(rng.pick(&NAMES));
        out.push('"');
        out.push_str(rng.pick(&GAPS));
        out.push(':');
        out.push_str(rng.pick(&GAPS));
        match rng.below(8) {
            0 if depth < 3 => random_object(rng, depth + 1, out),
            1 if depth < 3 => {
                out.push('[');
                random_object(rng, depth + 1, out);
                out.push_str(", 2.50, \"y\"]");
            }
            _ => out.push_str(rng.pick(&SCALARS)),
        }
    }
    out.push_str(rng.pick(&GAPS));
    out.push('}');
}

#[test]
fn members_kept_for_the_close_are_written_as_the_tree_writes_them() {
    let mut rng = toolgate_testkit::Rng::new(35);
    let mut r = Reader::new(ParseOptions::new());
    let (mut accepted, mut refused) = (0, 0);
    let mut doc = String::new();
    for _ in 0..20_000 {
        doc.clear();
        random_object(&mut rng, 0, &mut doc);
        let tree = crate::from_str(&doc);
        // Unranked (every name ordered by its head and bytes), and ranked
        // for the declared names `a` < `b` < `long_name_x`.
        for ranked in [false, true] {
            let read = if ranked {
                r.read(doc.as_bytes(), &mut Declared::new([1, 0, 2]))
            } else {
                r.read(doc.as_bytes(), &mut ())
            };
            match &tree {
                Ok(tree) => {
                    assert_eq!(read, Read::Accepted, "{doc}");
                    assert_eq!(r.canonical(), crate::canonical::to_string(tree), "{doc}");
                    accepted += 1;
                }
                // Duplicates: refused, or stopped by the visitor that
                // knows the name.
                Err(_) => {
                    assert_ne!(read, Read::Accepted, "{doc}");
                    refused += 1;
                }
            }
        }
    }
    assert!(accepted > 10_000 && refused > 1_000, "{accepted} {refused}");
}

#[test]
fn kept_and_written_members_are_put_in_order_together() {
    let mut r = Reader::new(ParseOptions::new());
    for (doc, want) in [
        // Kept (plain scalars) out of order, and all kept in order.
        (r#"{"b": "x", "a": 1}"#, r#"{"a":1,"b":"x"}"#),
        (r#"{"a":true,"b":null}"#, r#"{"a":true,"b":null}"#),
        // Written members (an escape, `-0`, a long fraction, nested
        // values) between kept ones.
        (
            r#"{"d":[1],"c":"\u0041","b":-0,"a":{"z":1,"y":2.50}}"#,
            r#"{"a":{"y":2.5,"z":1},"b":0,"c":"A","d":[1]}"#,
        ),
        (
            r#"{"c" : 1.0 ,"b":2,"a" :"s","e":{},"d": []}"#,
            r#"{"a":"s","b":2,"c":1,"d":[],"e":{}}"#,
        ),
        // Written members already in order, kept ones between them.
        (r#"{"a":[],"b":1,"c":{}}"#, r#"{"a":[],"b":1,"c":{}}"#),
        // UTF-16 order: U+E000 after U+1F600; an escaped name written
        // canonically.
        (
            "{\"\\ue000\":1,\"\u{1f600}\":2,\"\\u00e9\":3,\"\u{e9}\\n\":4}",
            "{\"\u{e9}\":3,\"\u{e9}\\n\":4,\"\u{1f600}\":2,\"\u{e000}\":1}",
        ),
    ] {
        assert_eq!(r.read(doc.as_bytes(), &mut ()), Read::Accepted, "{doc}");
        assert_eq!(r.canonical(), want, "{doc}");
        let tree = crate::from_str(doc).unwrap();
        assert_eq!(crate::canonical::to_string(&tree), want, "{doc}");
    }
    // Duplicates among kept members are still refused.
    assert_eq!(r.read(br#"{"a":1,"b":2,"a":1}"#, &mut ()), Read::Refused);
    assert_eq!(r.read(br#"{"a":1,"\u0061":[]}"#, &mut ()), Read::Refused);
}
