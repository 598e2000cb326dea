//! The public API, table-driven: threat 2 ("the validator helps") cases, error
//! codes and positions, masked rendering, compile errors, limits.

#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    reason = "test helpers outside `#[test]` functions"
)]

use toolgate_json::{from_str, Value};
use toolgate_schema::{CompileErrorCode, ErrorCode, Mode, Options, Schema};

fn json(s: &str) -> Value<'_> {
    from_str(s).unwrap()
}

fn strict(schema: &str) -> Schema {
    Schema::compile(&json(schema), &Options::new()).unwrap()
}

const REFUND: &str = r#"{
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^[0-9]{6}$"},
        "amount": {"type": "integer", "minimum": 1, "maximum": 500},
        "notify": {"type": "boolean"},
        "reason": {"type": ["string", "null"], "maxLength": 20}
    },
    "required": ["order_id", "amount"]
}"#;

#[test]
fn threat_2_no_coercion() {
    let s = strict(REFUND);
    // (instance, expected codes with pointers)
    let table: &[(&str, &[(ErrorCode, &str)])] = &[
        (r#"{"order_id":"123456","amount":300}"#, &[]),
        (
            r#"{"order_id":"123456","amount":"1200"}"#,
            &[(ErrorCode::TypeMismatch, "/amount")],
        ),
        (
            r#"{"order_id":"123456","amount":3.0}"#,
            &[(ErrorCode::TypeMismatch, "/amount")],
        ),
        (
            r#"{"order_id":"123456","amount":1e2}"#,
            &[(ErrorCode::TypeMismatch, "/amount")],
        ),
        (
            r#"{"order_id":"123456","amount":true}"#,
            &[(ErrorCode::TypeMismatch, "/amount")],
        ),
        (
            r#"{"order_id":"123456","amount":1,"notify":"yes"}"#,
            &[(ErrorCode::TypeMismatch, "/notify")],
        ),
        (
            r#"{"order_id":"123456","amount":1,"admin":true}"#,
            &[(ErrorCode::UnknownProperty, "/admin")],
        ),
        (
            r#"{"order_id":"123456","amount":501}"#,
            &[(ErrorCode::OutOfRange, "/amount")],
        ),
        (
            r#"{"order_id":"123456","amount":300000000000000000000000000000}"#,
            &[(ErrorCode::OutOfRange, "/amount")],
        ),
        (
            r#"{"order_id":"12345x","amount":1}"#,
            &[(ErrorCode::Pattern, "/order_id")],
        ),
        (r#"{"amount":1}"#, &[(ErrorCode::MissingRequired, "")]),
        (
            r#"{"order_id":null,"amount":1}"#,
            &[(ErrorCode::TypeMismatch, "/order_id")],
        ),
        (r#"{"order_id":"123456","amount":1,"reason":null}"#, &[]),
        (
            r#"{"order_id":"123456","amount":1,"reason":"aaaaaaaaaaaaaaaaaaaaa"}"#,
            &[(ErrorCode::Length, "/reason")],
        ),
        (
            r#"{"amount":"x","extra":1}"#,
            &[
                (ErrorCode::TypeMismatch, "/amount"),
                (ErrorCode::MissingRequired, ""),
                (ErrorCode::UnknownProperty, "/extra"),
            ],
        ),
    ];
    for (instance, want) in table {
        let v = json(instance);
        let got: Vec<(ErrorCode, String)> = match s.validate(&v) {
            Ok(()) => Vec::new(),
            Err(e) => e
                .iter()
                .map(|e| (e.code(), e.instance_pointer().to_owned()))
                .collect(),
        };
        let want: Vec<(ErrorCode, String)> =
            want.iter().map(|(c, p)| (*c, (*p).to_owned())).collect();
        assert_eq!(got, want, "{instance}");
        assert_eq!(s.is_valid(&v), want.is_empty(), "{instance}");
    }
}

#[test]
fn error_positions_and_renderings() {
    let s = strict(REFUND);
    let errors = s
        .validate(&json(r#"{"order_id":"secret-token-123","amount":"1200"}"#))
        .unwrap_err();
    let list = errors.as_slice();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0].code(), ErrorCode::Pattern);
    assert_eq!(list[0].instance_pointer(), "/order_id");
    assert_eq!(list[0].keyword_location(), "/properties/order_id/pattern");
    assert_eq!(list[1].keyword_location(), "/properties/amount/type");
    assert_eq!(list[1].code().as_str(), "type_mismatch");
    assert_eq!(
        list[1].to_string(),
        "type_mismatch at `/amount`: expected integer, found string (schema `/properties/amount/type`)"
    );
    assert_eq!(
        list[1].masked(),
        "type_mismatch at `/amount`: expected integer"
    );
    for rendering in [errors.to_string(), errors.masked()] {
        assert!(!rendering.contains("secret-token"), "{rendering}");
        assert!(!rendering.contains("1200"), "{rendering}");
    }
}

#[test]
fn closed_object_error_names_the_member_pointer() {
    let s = strict(r#"{"properties":{"a":{"type":"integer"}}}"#);
    let e = s.validate(&json(r#"{"a":1,"b/c":2}"#)).unwrap_err();
    assert_eq!(e.as_slice()[0].code(), ErrorCode::UnknownProperty);
    assert_eq!(e.as_slice()[0].instance_pointer(), "/b~1c");
    assert_eq!(e.as_slice()[0].keyword_location(), "/properties");
}

#[test]
fn error_cap() {
    let schema = json(r#"{"items":{"type":"string"}}"#);
    let s = Schema::compile(&schema, &Options::new().max_errors(3)).unwrap();
    let e = s.validate(&json("[1,2,3,4,5,6]")).unwrap_err();
    assert_eq!(e.len(), 3);
    assert!(e.is_truncated());
    assert_eq!(e.as_slice()[2].instance_pointer(), "/2");
}

#[test]
fn compile_errors_name_keyword_and_pointer() {
    let table: &[(&str, Mode, CompileErrorCode, &str)] = &[
        (
            r#"{"properties":{"a":{"maxLenght":3}}}"#,
            Mode::Strict,
            CompileErrorCode::UnknownKeyword,
            "/properties/a/maxLenght",
        ),
        (
            r#"{"definitions":{}}"#,
            Mode::Strict,
            CompileErrorCode::UnsupportedKeyword,
            "/definitions",
        ),
        (
            r#"{"format":"idn-email"}"#,
            Mode::Strict,
            CompileErrorCode::UnknownFormat,
            "/format",
        ),
        (
            r#"{"format":"made-up"}"#,
            Mode::Strict,
            CompileErrorCode::UnknownFormat,
            "/format",
        ),
        (
            r#"{"pattern":"("}"#,
            Mode::Standard,
            CompileErrorCode::InvalidRegex,
            "/pattern",
        ),
        (
            r##"{"$ref":"#/$defs/missing"}"##,
            Mode::Standard,
            CompileErrorCode::UnresolvableRef,
            "/$ref",
        ),
        (
            r#"{"$ref":"https://example.com/remote.json"}"#,
            Mode::Standard,
            CompileErrorCode::UnresolvableRef,
            "/$ref",
        ),
        (
            r#"{"minimum":"5"}"#,
            Mode::Standard,
            CompileErrorCode::InvalidKeyword,
            "/minimum",
        ),
        (
            r#"{"type":["string","string"]}"#,
            Mode::Standard,
            CompileErrorCode::InvalidKeyword,
            "/type",
        ),
        (
            r#"{"maxLength":2.0}"#,
            Mode::Strict,
            CompileErrorCode::InvalidKeyword,
            "/maxLength",
        ),
        (
            r#"{"multipleOf":0}"#,
            Mode::Standard,
            CompileErrorCode::InvalidKeyword,
            "/multipleOf",
        ),
        (
            r#"{"$schema":"http://json-schema.org/draft-07/schema#","items":[{}]}"#,
            Mode::Standard,
            CompileErrorCode::UnsupportedDraft,
            "/$schema",
        ),
        (
            r#"{"items":[{"type":"string"}]}"#,
            Mode::Standard,
            CompileErrorCode::UnsupportedKeyword,
            "/items",
        ),
    ];
    for (schema, mode, code, pointer) in table {
        let err = Schema::compile(&json(schema), &Options::new().mode(*mode)).unwrap_err();
        assert_eq!(
            (err.code(), err.pointer()),
            (*code, *pointer),
            "{schema}: {err}"
        );
        assert!(!err.message().is_empty());
    }
}

#[test]
fn standard_mode_ignores_unknown_keywords() {
    let s = Schema::compile(
        &json(r#"{"maxLenght":3,"definitions":{},"x-note":1}"#),
        &Options::new().mode(Mode::Standard),
    )
    .unwrap();
    assert!(s.is_valid(&json(r#""abcdef""#)));
    // Annotations are allowed in strict mode too.
    strict(
        r#"{"title":"t","description":"d","default":1,"examples":[1],"deprecated":false,"readOnly":true,"writeOnly":false,"$comment":"c","x-vendor":{},"contentMediaType":"text/plain","contentEncoding":"base64","type":"string","maxLength":9}"#,
    );
}

#[test]
fn remote_documents_are_registered_never_fetched() {
    let options = Options::new().register(
        "https://schemas.example/money.json",
        json(r#"{"$defs":{"cents":{"type":"integer","minimum":0,"maximum":100000}}}"#),
    );
    let s = Schema::compile(
        &json(r#"{"$ref":"https://schemas.example/money.json#/$defs/cents"}"#),
        &options,
    )
    .unwrap();
    assert!(s.is_valid(&json("100")));
    assert!(!s.is_valid(&json("-1")));
    let bad = Options::new().register("relative.json", json("{}"));
    let err = Schema::compile(&json("{}"), &bad).unwrap_err();
    assert_eq!(err.code(), CompileErrorCode::InvalidUri);
}

#[test]
fn ref_loops_fail_closed() {
    let s = Schema::compile(
        &json(
            r##"{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"$ref":"#/$defs/a"}},"$ref":"#/$defs/a"}"##,
        ),
        &Options::new().mode(Mode::Standard),
    )
    .unwrap();
    assert!(!s.is_valid(&json("1")));
    let e = s.validate(&json("1")).unwrap_err();
    assert_eq!(e.as_slice()[0].code(), ErrorCode::RecursionLimit);
}

#[test]
fn deep_instances_validate_without_overflow() {
    let s = Schema::compile(
        &json(
            r##"{"$defs":{"n":{"type":"array","items":{"$ref":"#/$defs/n"}}},"$ref":"#/$defs/n"}"##,
        ),
        &Options::new(),
    )
    .unwrap();
    let deep = format!("{}{}", "[".repeat(64), "]".repeat(64));
    assert!(s.is_valid(&json(&deep)));
}

#[test]
fn schema_is_send_sync_and_clone() {
    fn assert_send_sync<T: Send + Sync + Clone>() {}
    assert_send_sync::<Schema>();
    let s = strict(r#"{"type":"string"}"#);
    assert_eq!(s.mode(), Mode::Strict);
}

#[test]
fn a_schema_can_be_checked_against_the_bundled_meta_schema() {
    let s = Schema::compile(
        &json(r#"{"$ref":"https://json-schema.org/draft/2020-12/schema"}"#),
        &Options::new().mode(Mode::Standard),
    )
    .unwrap();
    assert!(s.is_valid(&json(REFUND)));
    assert!(!s.is_valid(&json(r#"{"type":"integr"}"#)));
    assert!(!s.is_valid(&json(r#"{"maxLength":-1}"#)));
}
