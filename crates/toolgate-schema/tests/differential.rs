//! Differential test against the `jsonschema` crate (draft 2020-12, standard
//! mode, formats as annotations) on generated (schema, instance) pairs.
//!
//! A small deterministic generator (xorshift, fixed seed) writes schemas from
//! the keywords both validators implement and instances likely to sit on the
//! edges of those schemas. Both sides parse the same text. Every disagreement
//! fails unless listed in [`KNOWN_DISAGREEMENTS`] with a reason. One trial per
//! pair, named `differential / <n>`.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "a test harness"
)]

use libtest_mimic::{Arguments, Failed, Trial};
use toolgate_schema::{Mode, Options, Schema};

/// How many pairs are generated.
const PAIRS: usize = 4000;

/// Pairs on which the two validators are known to disagree, with the reason.
/// Each entry is the pair number.
const KNOWN_DISAGREEMENTS: &[(usize, &str)] = &[
    (
        817,
        "`-0.5` against `multipleOf: 0.5`: -0.5 = -1 × 0.5 exactly, so the specification \
         makes it valid; jsonschema 0.33 rejects negative multiples of a fractional divisor",
    ),
    (
        2788,
        "`1e2` against `type: [\"boolean\", \"integer\"]`: 100 has no fractional part, so it is \
         an integer in standard mode (as `type.json` requires); jsonschema 0.33 does not accept \
         a float-written integer when `type` is a list",
    ),
    (
        2846,
        "`4.0` against `type: [\"integer\", \"null\"]`: same as 2788",
    ),
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

const NAMES: &[&str] = &["a", "b", "c", "id", "x-y", "n"];
const STRINGS: &[&str] = &[
    "",
    "a",
    "ab",
    "abc",
    "hello",
    "\u{e9}t\u{e9}",
    "\u{1F600}",
    "12",
    "A1",
];
const PATTERNS: &[&str] = &["^a", "b$", "^[a-z]+$", "\\\\d", "^.{2,3}$", "\\\\p{L}"];
const TYPES: &[&str] = &[
    "null", "boolean", "integer", "number", "string", "array", "object",
];
const NUMBERS: &[&str] = &[
    "0", "1", "-1", "2", "3", "7", "10", "1.5", "2.5", "-0.5", "0.1", "100", "1e2", "4.0",
];

fn number(r: &mut Rng) -> String {
    r.pick(NUMBERS).to_owned()
}

fn string_lit(r: &mut Rng) -> String {
    format!("\"{}\"", r.pick(STRINGS))
}

fn instance(r: &mut Rng, depth: u32) -> String {
    let k = if depth >= 3 { r.below(4) } else { r.below(6) };
    match k {
        0 => r.pick(&["null", "true", "false"]).to_owned(),
        1 => number(r),
        2 | 3 => string_lit(r),
        4 => {
            let n = r.below(4);
            let items: Vec<String> = (0..n).map(|_| instance(r, depth + 1)).collect();
            format!("[{}]", items.join(","))
        }
        _ => {
            let n = r.below(4);
            let mut used = Vec::new();
            let mut members = Vec::new();
            for _ in 0..n {
                let name = r.pick(NAMES);
                if used.contains(&name) {
                    continue;
                }
                used.push(name);
                members.push(format!("\"{name}\":{}", instance(r, depth + 1)));
            }
            format!("{{{}}}", members.join(","))
        }
    }
}

fn schema(r: &mut Rng, depth: u32) -> String {
    if r.chance(5) {
        return r.pick(&["true", "false"]).to_owned();
    }
    let mut kws: Vec<String> = Vec::new();
    let count = 1 + r.below(3);
    for _ in 0..count {
        let choice = if depth >= 2 { r.below(14) } else { r.below(24) };
        let kw = match choice {
            0 | 1 => {
                if r.chance(70) {
                    format!("\"type\":\"{}\"", r.pick(TYPES))
                } else {
                    let a = r.pick(TYPES);
                    let b = r.pick(TYPES);
                    if a == b {
                        format!("\"type\":[\"{a}\"]")
                    } else {
                        format!("\"type\":[\"{a}\",\"{b}\"]")
                    }
                }
            }
            2 => format!("\"minimum\":{}", number(r)),
            3 => format!("\"maximum\":{}", number(r)),
            4 => format!("\"exclusiveMinimum\":{}", number(r)),
            5 => format!("\"exclusiveMaximum\":{}", number(r)),
            6 => format!(
                "\"multipleOf\":{}",
                r.pick(&["1", "2", "3", "0.5", "1.5", "0.25"])
            ),
            7 => format!("\"minLength\":{}", r.below(4)),
            8 => format!("\"maxLength\":{}", r.below(4)),
            9 => format!("\"pattern\":\"{}\"", r.pick(PATTERNS)),
            10 => {
                let n = 1 + r.below(3);
                let vals: Vec<String> = (0..n).map(|_| instance(r, 3)).collect();
                format!("\"enum\":[{}]", vals.join(","))
            }
            11 => format!("\"const\":{}", instance(r, 2)),
            12 => format!("\"minItems\":{}", r.below(3)),
            13 => format!("\"uniqueItems\":{}", r.pick(&["true", "false"])),
            14 => {
                let n = 1 + r.below(3);
                let props: Vec<String> = (0..n)
                    .map(|_| format!("\"{}\":{}", r.pick(NAMES), schema(r, depth + 1)))
                    .collect();
                // Duplicate names are possible: keep the first of each.
                let mut seen = Vec::new();
                let props: Vec<String> = props
                    .into_iter()
                    .filter(|p| {
                        let name = p.split(':').next().unwrap().to_owned();
                        let fresh = !seen.contains(&name);
                        seen.push(name);
                        fresh
                    })
                    .collect();
                format!("\"properties\":{{{}}}", props.join(","))
            }
            15 => format!("\"required\":[\"{}\"]", r.pick(NAMES)),
            16 => format!("\"additionalProperties\":{}", schema(r, depth + 1)),
            17 => format!("\"items\":{}", schema(r, depth + 1)),
            18 => format!(
                "\"prefixItems\":[{},{}]",
                schema(r, depth + 1),
                schema(r, depth + 1)
            ),
            19 => format!("\"contains\":{}", schema(r, depth + 1)),
            20 => {
                let key = r.pick(&["allOf", "anyOf", "oneOf"]);
                format!(
                    "\"{key}\":[{},{}]",
                    schema(r, depth + 1),
                    schema(r, depth + 1)
                )
            }
            21 => format!("\"not\":{}", schema(r, depth + 1)),
            22 => format!(
                "\"if\":{},\"then\":{},\"else\":{}",
                schema(r, depth + 1),
                schema(r, depth + 1),
                schema(r, depth + 1)
            ),
            _ => format!(
                "\"{}\":{}",
                r.pick(&["unevaluatedProperties", "unevaluatedItems", "propertyNames"]),
                schema(r, depth + 1)
            ),
        };
        let key = kw.split(':').next().unwrap().to_owned();
        let duplicate = kws.iter().any(|k| k.split(':').next().unwrap() == key);
        let if_after_then = key == "\"if\"" && kws.iter().any(|k| k.contains("\"then\""));
        if !duplicate && !if_after_then {
            kws.push(kw);
        }
    }
    format!("{{{}}}", kws.join(","))
}

fn main() {
    let args = Arguments::from_args();
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    let mut trials = Vec::new();
    for n in 0..PAIRS {
        let s = schema(&mut rng, 0);
        let i = instance(&mut rng, 0);
        let known = KNOWN_DISAGREEMENTS
            .iter()
            .find(|(k, _)| *k == n)
            .map(|(_, r)| *r);
        trials.push(Trial::test(format!("differential / {n}"), move || {
            let ours_schema = toolgate_json::from_str(&s).map_err(|e| format!("{s}: {e}"))?;
            let ours_inst = toolgate_json::from_str(&i).map_err(|e| format!("{i}: {e}"))?;
            let theirs_schema: serde_json::Value = serde_json::from_str(&s).unwrap();
            let theirs_inst: serde_json::Value = serde_json::from_str(&i).unwrap();
            let ours = Schema::compile(&ours_schema, &Options::new().mode(Mode::Standard))
                .map_err(|e| Failed::from(format!("we refuse {s}: {e}")))?
                .is_valid(&ours_inst);
            let theirs = jsonschema::draft202012::new(&theirs_schema)
                .map_err(|e| Failed::from(format!("jsonschema refuses {s}: {e}")))?
                .is_valid(&theirs_inst);
            match (ours == theirs, known) {
                (true, None) => Ok(()),
                (true, Some(_)) => Err("agrees but is listed as a known disagreement".into()),
                (false, Some(_)) => Ok(()),
                (false, None) => Err(format!(
                    "schema {s}\ninstance {i}\ntoolgate says {ours}, jsonschema says {theirs}"
                )
                .into()),
            }
        }));
    }
    libtest_mimic::run(&args, trials).exit();
}
