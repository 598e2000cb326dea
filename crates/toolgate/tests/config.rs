#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing,
    reason = "test code"
)]
//! The config loader and the tool registry: bad configs with their exact
//! positions, the shop example, imports of every format, exact names.

use std::path::{Path, PathBuf};

use toolgate::config::{import_file, import_slice, Config, ErrorCode, ImportFormat};
use toolgate::registry::{Risk, ToolOrigin};
use toolgate_json::Limit;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Loads config text as `tests/fixtures/toolgate.toml`; renders the error
/// with the fixtures folder shown as `fixtures/`.
fn load_err(text: &str) -> (String, toolgate::config::Error) {
    let err = Config::parse(text, fixtures().join("toolgate.toml"))
        .expect_err("the config must be refused");
    let shown = err
        .to_string()
        .replace(&format!("{}/", fixtures().display()), "fixtures/");
    (shown, err)
}

fn load(text: &str) -> Config {
    match Config::parse(text, fixtures().join("toolgate.toml")) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    }
}

const TOOL: &str = "[[tool]]\nname = \"a\"\nrisk = \"read\"\n";
const CLOSED: &str = "schema = { type = \"object\", additionalProperties = false }\n";

struct Bad {
    what: &'static str,
    toml: String,
    code: ErrorCode,
    /// The exact rendering prefix: `file:line:column: `.
    at: &'static str,
    key: Option<&'static str>,
    /// A part of the message.
    says: &'static str,
}

fn bad(
    what: &'static str,
    toml: impl Into<String>,
    code: ErrorCode,
    at: &'static str,
    key: Option<&'static str>,
    says: &'static str,
) -> Bad {
    Bad {
        what,
        toml: toml.into(),
        code,
        at,
        key,
        says,
    }
}

#[test]
fn bad_configs_name_file_line_column_and_key() {
    let order_tool =
        "[[tool]]\nname = \"refund\"\nrisk = \"destructive\"\nschema = \"schemas/order.json\"\n";
    let cases = [
        bad(
            "unknown key at top level",
            "colour = \"blue\"\n[gate]\nmax_turns = 8\n",
            ErrorCode::UnknownKey,
            "fixtures/toolgate.toml:1:1: ",
            Some("colour"),
            "unknown key `colour`",
        ),
        bad(
            "unknown key in [gate]",
            "[gate]\nmax_turns = 8\nmax_turn = 9\n",
            ErrorCode::UnknownKey,
            "fixtures/toolgate.toml:3:1: ",
            Some("max_turn"),
            "unknown key `max_turn`",
        ),
        bad(
            "unknown key in a tool",
            format!("{TOOL}{CLOSED}colour = 1\n"),
            ErrorCode::UnknownKey,
            "fixtures/toolgate.toml:5:1: ",
            Some("colour"),
            "unknown key `colour`",
        ),
        bad(
            "unknown key in a resource",
            format!("{order_tool}resource = {{ type = \"Order\", ids = \"/order_id\" }}\n"),
            ErrorCode::UnknownKey,
            "fixtures/toolgate.toml:5:30: ",
            Some("ids"),
            "unknown key `ids`",
        ),
        bad(
            "wrong type",
            "[gate]\nmax_depth = \"64\"\n",
            ErrorCode::InvalidType,
            "fixtures/toolgate.toml:2:13: ",
            Some("max_depth"),
            "`max_depth`: expected a non-negative integer, found string \"64\"",
        ),
        bad(
            "negative limit",
            "[gate]\nmax_depth = -1\n",
            ErrorCode::InvalidValue,
            "fixtures/toolgate.toml:2:13: ",
            Some("max_depth"),
            "`max_depth`",
        ),
        bad(
            "missing name",
            format!("[[tool]]\nrisk = \"read\"\n{CLOSED}"),
            ErrorCode::MissingKey,
            "fixtures/toolgate.toml:1:1: ",
            Some("name"),
            "missing key `name` (string)",
        ),
        bad(
            "missing risk",
            format!("[[tool]]\nname = \"a\"\n{CLOSED}"),
            ErrorCode::MissingKey,
            "fixtures/toolgate.toml:1:1: ",
            Some("risk"),
            "missing key `risk` (one of \"read\", \"write\", \"destructive\")",
        ),
        bad(
            "bad risk value",
            format!("[[tool]]\nname = \"a\"\nrisk = \"dangerous\"\n{CLOSED}"),
            ErrorCode::InvalidValue,
            "fixtures/toolgate.toml:3:8: ",
            Some("risk"),
            "`risk`: unknown value `dangerous`, expected one of `read`, `write`, `destructive`",
        ),
        bad(
            "bad approval value",
            format!("{TOOL}approval = \"maybe\"\n{CLOSED}"),
            ErrorCode::InvalidValue,
            "fixtures/toolgate.toml:4:12: ",
            Some("approval"),
            "unknown value `maybe`",
        ),
        bad(
            "duplicate tool",
            format!("{TOOL}{CLOSED}\n{TOOL}{CLOSED}"),
            ErrorCode::DuplicateTool,
            "fixtures/toolgate.toml:7:1: tool `a`: ",
            Some("name"),
            "already declared at line 2",
        ),
        bad(
            "schema file missing",
            format!("{TOOL}schema = \"schemas/nope.json\"\n"),
            ErrorCode::Io,
            "fixtures/toolgate.toml:4:1: tool `a`: ",
            Some("schema"),
            "`schema`: cannot read `schemas/nope.json`",
        ),
        bad(
            "schema path that is a device, not a file",
            format!("{TOOL}schema = \"/dev/zero\"\n"),
            ErrorCode::Io,
            "fixtures/toolgate.toml:4:1: tool `a`: ",
            Some("schema"),
            "`schema`: cannot read `/dev/zero`: not a regular file",
        ),
        bad(
            "schema path that is a folder",
            format!("{TOOL}schema = \"schemas\"\n"),
            ErrorCode::Io,
            "fixtures/toolgate.toml:4:1: tool `a`: ",
            Some("schema"),
            "`schema`: cannot read `schemas`: ",
        ),
        bad(
            "schema file with a duplicate key (escaped spelling)",
            format!("{TOOL}schema = \"schemas/dup_key.json\"\n"),
            ErrorCode::InvalidJson,
            "fixtures/schemas/dup_key.json:5:5: tool `a`: ",
            Some("schema"),
            "duplicate_key: duplicate member name `order_id` in object at `/properties`",
        ),
        bad(
            "schema file that does not compile",
            format!("{TOOL}schema = \"schemas/bad_keyword.json\"\n"),
            ErrorCode::SchemaCompile,
            "fixtures/toolgate.toml:4:1: tool `a`: ",
            Some("schema"),
            "`schema` (`schemas/bad_keyword.json`) does not compile: unknown_keyword: unknown keyword `minimun`",
        ),
        bad(
            "inline schema that does not compile",
            format!("{TOOL}schema = {{ type = \"object\", propertiez = {{}} }}\n"),
            ErrorCode::SchemaCompile,
            "fixtures/toolgate.toml:4:1: tool `a`: ",
            Some("schema"),
            "`schema` does not compile: unknown_keyword",
        ),
        bad(
            "schema_json that does not compile",
            format!("{TOOL}schema_json = '{{\"type\": \"object\", \"maximun\": 3}}'\n"),
            ErrorCode::SchemaCompile,
            "fixtures/toolgate.toml:4:1: tool `a`: ",
            Some("schema_json"),
            "`schema_json` does not compile: unknown_keyword",
        ),
        bad(
            "schema_json with a duplicate key",
            format!("{TOOL}schema_json = '{{\"type\": \"object\", \"type\": \"string\"}}'\n"),
            ErrorCode::InvalidJson,
            "fixtures/toolgate.toml:4:1: tool `a`: ",
            Some("schema_json"),
            "duplicate_key",
        ),
        bad(
            "schema and schema_json",
            format!("{TOOL}{CLOSED}schema_json = '{{\"type\": \"object\"}}'\n"),
            ErrorCode::ConflictingKeys,
            "fixtures/toolgate.toml:5:1: tool `a`: ",
            Some("schema_json"),
            "either `schema` or `schema_json`",
        ),
        bad(
            "no schema at all",
            TOOL,
            ErrorCode::MissingSchema,
            "fixtures/toolgate.toml:2:1: tool `a`: ",
            Some("name"),
            "no `schema`",
        ),
        bad(
            "schema whose root is not an object schema",
            format!("{TOOL}schema = {{ type = \"string\", maxLength = 3 }}\n"),
            ErrorCode::SchemaNotObject,
            "fixtures/toolgate.toml:4:1: tool `a`: ",
            Some("schema"),
            "\"type\": \"object\"",
        ),
        bad(
            "inline schema with a NaN",
            format!("{TOOL}schema = {{ type = \"object\", maxProperties = nan }}\n"),
            ErrorCode::InvalidSchemaValue,
            "fixtures/toolgate.toml:4:1: tool `a`: ",
            Some("schema"),
            "at `/maxProperties`",
        ),
        bad(
            "resource pointer to an undeclared property",
            format!("{order_tool}resource = {{ type = \"Order\", id = \"/orderid\" }}\n"),
            ErrorCode::UndeclaredProperty,
            "fixtures/toolgate.toml:5:1: tool `refund`: ",
            Some("resource"),
            "`resource`: `/orderid` does not name a property declared by the schema",
        ),
        bad(
            "resource pointer without a leading slash",
            format!("{order_tool}resource = {{ type = \"Order\", id = \"order_id\" }}\n"),
            ErrorCode::InvalidPointer,
            "fixtures/toolgate.toml:5:1: tool `refund`: ",
            Some("resource"),
            "`order_id` is not a valid JSON Pointer",
        ),
        bad(
            "resource pointer with a bad escape",
            format!("{order_tool}resource = {{ type = \"Order\", id = \"/order~2id\" }}\n"),
            ErrorCode::InvalidPointer,
            "fixtures/toolgate.toml:5:1: tool `refund`: ",
            Some("resource"),
            "`~` must be followed by `0` or `1`",
        ),
        bad(
            "resource with a bad entity type",
            format!("{order_tool}resource = {{ type = \"Order!\", id = \"/order_id\" }}\n"),
            ErrorCode::InvalidValue,
            "fixtures/toolgate.toml:5:1: tool `refund`: ",
            Some("resource"),
            "not an entity type name",
        ),
        bad(
            "redact pointer to an undeclared property",
            format!("{order_tool}redact = [\"/card/number\", \"/card/cvv\"]\n"),
            ErrorCode::UndeclaredProperty,
            "fixtures/toolgate.toml:5:27: tool `refund`: ",
            Some("redact"),
            "`/card/cvv` does not name a property",
        ),
        bad(
            "url policy on an undeclared argument",
            format!("{order_tool}url_policy = {{ arg = \"/url\", hosts = [\"example.com\"] }}\n"),
            ErrorCode::UndeclaredProperty,
            "fixtures/toolgate.toml:5:1: tool `refund`: ",
            Some("url_policy"),
            "`/url` does not name a property",
        ),
        bad(
            "url policy without hosts",
            format!("{order_tool}url_policy = {{ arg = \"/order_id\", hosts = [] }}\n"),
            ErrorCode::InvalidUrlPolicy,
            "fixtures/toolgate.toml:5:1: tool `refund`: ",
            Some("url_policy"),
            "`hosts` must not be empty",
        ),
        bad(
            "url policy with a port in a host",
            format!("{order_tool}url_policy = {{ arg = \"/order_id\", hosts = [\"example.com:8080\"] }}\n"),
            ErrorCode::InvalidUrlPolicy,
            "fixtures/toolgate.toml:5:1: tool `refund`: ",
            Some("url_policy"),
            "ports go in `ports`",
        ),
        bad(
            "url policy with an unknown key",
            format!("{order_tool}url_policy = {{ arg = \"/order_id\", hosts = [\"a.example\"], allow_privates = true }}\n"),
            ErrorCode::UnknownKey,
            "fixtures/toolgate.toml:5:58: ",
            Some("allow_privates"),
            "unknown key `allow_privates`",
        ),
        bad(
            "tool name with a trailing space",
            format!("[[tool]]\nname = \"refund \"\nrisk = \"read\"\n{CLOSED}"),
            ErrorCode::InvalidName,
            "fixtures/toolgate.toml:2:1: tool `refund `: ",
            Some("name"),
            "must not start or end with whitespace",
        ),
        bad(
            "empty tool name",
            format!("[[tool]]\nname = \"\"\nrisk = \"read\"\n{CLOSED}"),
            ErrorCode::InvalidName,
            "fixtures/toolgate.toml:2:1: tool ``: ",
            Some("name"),
            "must not be empty",
        ),
        bad(
            "tool name with a control character",
            format!("[[tool]]\nname = \"ref\\u0000und\"\nrisk = \"read\"\n{CLOSED}"),
            ErrorCode::InvalidName,
            "fixtures/toolgate.toml:2:1: tool `ref\\0und`: ",
            Some("name"),
            "control characters",
        ),
        bad(
            "tool name in NFD while the import has NFC",
            "import = [{ path = \"mcp_tools_list.json\", format = \"mcp\" }]\n\n[[tool]]\nname = \"cafe\\u0301\"\nrisk = \"read\"\n",
            ErrorCode::MissingSchema,
            "fixtures/toolgate.toml:4:1: tool `cafe\u{301}`: ",
            Some("name"),
            "no imported tool has this name",
        ),
        bad(
            "gate limit of zero",
            "[gate]\nmax_depth = 0\n",
            ErrorCode::InvalidLimit,
            "fixtures/toolgate.toml:2:1: ",
            Some("max_depth"),
            "`max_depth` must be between 1 and 1024, got 0",
        ),
        bad(
            "gate limit above its ceiling",
            "[gate]\n  max_argument_bytes   =   2000000000\n",
            ErrorCode::InvalidLimit,
            "fixtures/toolgate.toml:2:3: ",
            Some("max_argument_bytes"),
            "`max_argument_bytes` must be between 1 and 1073741824",
        ),
        bad(
            "zero turns",
            "[gate]\nmax_turns = 0\n",
            ErrorCode::InvalidLimit,
            "fixtures/toolgate.toml:2:1: ",
            Some("max_turns"),
            "`max_turns` must be between 1",
        ),
        bad(
            "tool limit above the gate's",
            format!("[gate]\nmax_depth = 8\n\n{TOOL}{CLOSED}max_depth = 9\n"),
            ErrorCode::InvalidLimit,
            "fixtures/toolgate.toml:8:1: tool `a`: ",
            Some("max_depth"),
            "`max_depth` = 9 is above the gate's 8",
        ),
        bad(
            "empty store url",
            "[store]\nurl = \"\"\n",
            ErrorCode::InvalidValue,
            "fixtures/toolgate.toml:2:1: ",
            Some("url"),
            "`url` must not be empty",
        ),
        bad(
            "unknown key in [authorization]",
            "[authorization]\npolicy = \"p.cedar\"\n",
            ErrorCode::UnknownKey,
            "fixtures/toolgate.toml:2:1: ",
            Some("policy"),
            "unknown key `policy`",
        ),
        bad(
            "unknown import format",
            "import = [{ path = \"x.json\", format = \"gemini\" }]\n",
            ErrorCode::InvalidValue,
            "fixtures/toolgate.toml:1:39: ",
            Some("format"),
            "unknown value `gemini`",
        ),
        bad(
            "import file missing",
            "import = [{ path = \"nope.json\", format = \"openai\" }]\n",
            ErrorCode::Io,
            "fixtures/toolgate.toml:1:13: ",
            Some("path"),
            "cannot read the tool list `nope.json`",
        ),
        bad(
            "TOML syntax",
            "[gate\nmax_turns = 8\n",
            ErrorCode::TomlSyntax,
            "fixtures/toolgate.toml:1:6: ",
            None,
            "unclosed table",
        ),
    ];
    let mut failures = Vec::new();
    for case in &cases {
        let (shown, err) = load_err(&case.toml);
        let ok = err.code() == case.code
            && shown.starts_with(case.at)
            && shown.contains(case.says)
            && err.config_key() == case.key;
        if !ok {
            failures.push(format!(
                "{}:\n  got    {:?} key {:?}: {shown}\n  wanted {:?} key {:?}: {}…{}",
                case.what,
                err.code(),
                err.config_key(),
                case.code,
                case.key,
                case.at,
                case.says
            ));
        }
        assert!(!shown.contains('\n'), "{}: one line: {shown}", case.what);
        if std::env::var_os("SHOW_CONFIG_ERRORS").is_some() {
            println!("{shown}");
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn errors_keep_their_cause() {
    use std::error::Error as _;
    let (_, err) = load_err(&format!("{TOOL}schema = \"schemas/dup_key.json\"\n"));
    let json = err.json_error().unwrap();
    assert_eq!(json.code(), toolgate_json::ErrorCode::DuplicateKey);
    assert_eq!((err.line(), err.column()), (Some(5), Some(5)));
    assert_eq!(err.tool_name(), Some("a"));
    assert!(err.source().is_some());

    let (_, err) = load_err(&format!("{TOOL}schema = \"schemas/bad_keyword.json\"\n"));
    let compile = err.compile_error().unwrap();
    assert_eq!(compile.pointer(), "/properties/n/minimun");
    assert!(err.source().is_some());
}

#[test]
fn shop_example_loads_and_its_schemas_are_lint_clean() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/shop/toolgate.toml");
    let config = match Config::load(&path) {
        Ok(c) => c,
        Err(e) => panic!("{e}"),
    };
    let names: Vec<&str> = config.registry().iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        ["search", "get_order", "refund", "fetch_url", "run_tests"]
    );
    assert_eq!(config.gate().max_turns(), 20);
    assert_eq!(config.gate().max_calls_per_response(), 4);
    assert_eq!(config.gate().limits().get(Limit::InputBytes), 16384);
    assert_eq!(config.store().url(), "sqlite://toolgate.db");

    let r = config.registry();
    let tier = |n: &str| r.get(n).map(|t| (t.risk(), t.approval_required()));
    assert_eq!(tier("search"), Some((Risk::Read, false)));
    assert_eq!(tier("get_order"), Some((Risk::Read, false)));
    assert_eq!(tier("refund"), Some((Risk::Destructive, true)));
    assert_eq!(tier("fetch_url"), Some((Risk::Read, false)));
    assert_eq!(tier("run_tests"), Some((Risk::Write, true)));

    let refund = r.get("refund").unwrap();
    let resource = refund.resource().unwrap();
    assert_eq!(
        (resource.entity_type(), resource.id_pointer()),
        ("Order", "/order_id")
    );
    assert!(refund.redact().is_empty());
    assert_eq!(refund.parse_options().limits().get(Limit::InputBytes), 1024);
    assert_eq!(refund.parse_options().limits().get(Limit::Depth), 8);
    assert!(matches!(refund.origin(), ToolOrigin::Config { line, .. } if *line > 1));

    let fetch = r.get("fetch_url").unwrap();
    let policy = &fetch.url_policies()[0];
    assert_eq!(policy.arg(), "/url");
    assert_eq!(policy.schemes(), ["https"]);
    assert_eq!(policy.hosts(), ["example.com", "*.example.com"]);
    assert_eq!(policy.ports(), [443]);
    assert!(!policy.allow_private());

    for tool in r {
        let findings = toolgate_schema::lint(tool.raw_schema());
        assert!(
            findings.is_empty(),
            "{}: {}",
            tool.name(),
            findings
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ")
        );
        // The compiled schema is the strict one and does its job.
        let ok = match tool.name() {
            "search" => r#"{"query":"red shoes"}"#,
            "get_order" => r#"{"order_id":"ord_1"}"#,
            "refund" => r#"{"order_id":"ord_1","amount_cents":300,"reason":"late"}"#,
            "fetch_url" => r#"{"url":"https://shop.example.com/"}"#,
            _ => r#"{"suite":"unit"}"#,
        };
        let value = tool.parse_options().parse(ok.as_bytes()).unwrap();
        assert!(tool.schema().is_valid(&value), "{}", tool.name());
        let coerced =
            toolgate_json::from_str(r#"{"order_id":"ord_1","amount_cents":"300","reason":"late"}"#)
                .unwrap();
        if tool.name() == "refund" {
            assert!(!tool.schema().is_valid(&coerced));
        }
    }
}

#[test]
fn inline_schemas_per_tool_limits_and_policies() {
    let config = load(
        r##"
[gate]
max_depth = 16

[[tool]]
name = "pay"
risk = "write"
approval = "none"
max_depth = 4
max_string_bytes = 256
redact = ["/card/number"]
url_policy = [
  { arg = "/callback", hosts = ["hooks.example.com"] },
  { arg = "/receipt", schemes = ["https", "http"], hosts = ["*.example.org"], ports = [443, 8443], allow_private = true },
]
resource = { type = "Shop::Account", id = "/account" }

[tool.schema]
type = "object"
required = ["account", "card", "callback", "receipt", "amount"]
additionalProperties = false

[tool.schema.properties.account]
type = "string"
maxLength = 40

[tool.schema.properties.amount]
type = "number"
minimum = 0.5
maximum = 1e4

[tool.schema.properties.callback]
type = "string"
maxLength = 200

[tool.schema.properties.receipt]
type = "string"
maxLength = 200

[tool.schema.properties.card]
"$ref" = "#/$defs/card"

[tool.schema."$defs".card]
type = "object"
properties = { number = { type = "string", maxLength = 19 } }
required = ["number"]
additionalProperties = false

[[tool]]
name = "json"
risk = "read"
approval = "required"
schema_json = '{"type":"object","properties":{"q":{"type":"string","maxLength":9}},"required":["q"],"additionalProperties":false}'
"##,
    );
    let pay = config.registry().get("pay").unwrap();
    assert_eq!(pay.risk(), Risk::Write);
    assert!(!pay.approval_required());
    assert_eq!(pay.redact(), ["/card/number"]);
    let limits = pay.parse_options().limits();
    assert_eq!(limits.get(Limit::Depth), 4);
    assert_eq!(limits.get(Limit::StringBytes), 256);
    assert_eq!(limits.get(Limit::InputBytes), 65536);
    assert_eq!(pay.url_policies().len(), 2);
    assert_eq!(pay.url_policies()[0].schemes(), ["https"]);
    assert!(pay.url_policies()[0].ports().is_empty());
    assert_eq!(pay.url_policies()[1].ports(), [443, 8443]);
    assert!(pay.url_policies()[1].allow_private());
    assert_eq!(pay.resource().unwrap().entity_type(), "Shop::Account");
    let args = toolgate_json::from_str(
        r#"{"account":"a1","card":{"number":"4111"},"callback":"https://hooks.example.com/x","receipt":"r","amount":12.5}"#,
    )
    .unwrap();
    assert!(pay.schema().is_valid(&args));
    // Integers stay integers, floats stay floats in the converted schema.
    let amount = pay
        .raw_schema()
        .pointer("/properties/amount/maximum")
        .unwrap();
    assert_eq!(amount.as_number().unwrap().as_f64(), Some(1e4));

    let json = config.registry().get("json").unwrap();
    assert!(json.approval_required());
    assert_eq!(json.parse_options().limits().get(Limit::Depth), 16);
}

#[test]
fn defaults() {
    let config = load(&format!("[[tool]]\nname = \"w\"\nrisk = \"write\"\n{CLOSED}\n[[tool]]\nname = \"d\"\nrisk = \"destructive\"\n{CLOSED}"));
    assert_eq!(config.store().url(), "sqlite://toolgate.db");
    assert_eq!(
        config.gate().max_turns(),
        toolgate::config::DEFAULT_MAX_TURNS
    );
    assert_eq!(config.gate().limits().get(Limit::Depth), 64);
    assert!(config.authorization().policies().is_none());
    assert!(config.registry().get("w").unwrap().approval_required());
    assert!(config.registry().get("d").unwrap().approval_required());

    let config =
        load("[authorization]\npolicies = \"policies/shop.cedar\"\nschema = \"shop.cedarschema\"\nentities = \"entities.json\"\n");
    assert_eq!(
        config.authorization().policies(),
        Some(fixtures().join("policies/shop.cedar").as_path())
    );
    assert_eq!(
        config.authorization().entities(),
        Some(fixtures().join("entities.json").as_path())
    );
    assert!(config.registry().is_empty());
}

#[test]
fn import_openai_chat_and_responses() {
    let r = import_file(
        fixtures().join("openai_chat_tools.json"),
        ImportFormat::OpenAi,
    )
    .unwrap();
    assert_eq!(r.len(), 2);
    let w = r.get("get_weather").unwrap();
    assert_eq!(w.description(), Some("Weather for a city."));
    // No annotations: the most guarded tier.
    assert_eq!(w.risk(), Risk::Destructive);
    assert!(w.approval_required());
    assert!(matches!(w.origin(), ToolOrigin::Import { pointer, .. } if pointer == "/0"));
    // No parameters: only `{}` is valid.
    let ping = r.get("ping").unwrap();
    assert!(ping
        .schema()
        .is_valid(&toolgate_json::from_str("{}").unwrap()));
    assert!(!ping
        .schema()
        .is_valid(&toolgate_json::from_str(r#"{"x":1}"#).unwrap()));

    let r = import_file(
        fixtures().join("openai_responses_tools.json"),
        ImportFormat::OpenAi,
    )
    .unwrap();
    let w = r.get("get_weather").unwrap();
    assert!(matches!(w.origin(), ToolOrigin::Import { pointer, .. } if pointer == "/tools/0"));
    assert!(w
        .schema()
        .is_valid(&toolgate_json::from_str(r#"{"city":"Paris"}"#).unwrap()));
    assert!(!w
        .schema()
        .is_valid(&toolgate_json::from_str(r#"{"city":7}"#).unwrap()));
}

#[test]
fn import_anthropic() {
    let r = import_file(
        fixtures().join("anthropic_tools.json"),
        ImportFormat::Anthropic,
    )
    .unwrap();
    assert_eq!(r.len(), 2);
    assert!(r.get("get_weather").is_some());
    // `ref\u0075nd` in the file unescapes to the same bytes: it is `refund`.
    assert!(r.get("refund").is_some());
    assert!(r.get("ref\\u0075nd").is_none());
}

#[test]
fn import_mcp_annotations_give_default_tiers() {
    let r = import_file(fixtures().join("mcp_tools_list.json"), ImportFormat::Mcp).unwrap();
    let tier = |n: &str| r.get(n).map(|t| (t.risk(), t.approval_required()));
    assert_eq!(tier("read_file"), Some((Risk::Read, false)));
    assert_eq!(tier("write_file"), Some((Risk::Write, true)));
    assert_eq!(tier("delete_file"), Some((Risk::Destructive, true)));
    // No annotations: MCP's defaults (not read-only, destructive).
    assert_eq!(tier("café"), Some((Risk::Destructive, true)));
    assert_eq!(tier("purge"), Some((Risk::Read, false)));

    let r = import_file(fixtures().join("mcp_jsonrpc.json"), ImportFormat::Mcp).unwrap();
    let t = r.get("list_issues").unwrap();
    assert_eq!(t.risk(), Risk::Read);
    assert!(
        matches!(t.origin(), ToolOrigin::Import { pointer, .. } if pointer == "/result/tools/0")
    );
}

#[test]
fn config_entries_override_imported_annotations() {
    let config = load(
        r#"
import = [
  { path = "mcp_tools_list.json", format = "mcp" },
  { path = "anthropic_tools.json", format = "anthropic" },
]

# The server says `purge` is read-only; we do not believe it.
[[tool]]
name = "purge"
risk = "destructive"

# A config schema replaces the imported one.
[[tool]]
name = "read_file"
risk = "read"
schema = { type = "object", properties = { path = { type = "string", maxLength = 10 } }, required = ["path"], additionalProperties = false }
redact = ["/path"]
"#,
    );
    let r = config.registry();
    assert_eq!(r.len(), 7);
    let purge = r.get("purge").unwrap();
    assert_eq!(
        (purge.risk(), purge.approval_required()),
        (Risk::Destructive, true)
    );
    assert_eq!(purge.description(), Some("Claims to be harmless."));
    assert!(matches!(purge.origin(), ToolOrigin::Config { line: 9, .. }));
    let read_file = r.get("read_file").unwrap();
    let long = toolgate_json::from_str(r#"{"path":"/a/very/long/path"}"#).unwrap();
    assert!(!read_file.schema().is_valid(&long));
    assert_eq!(read_file.redact(), ["/path"]);
    // Untouched imports keep their defaults.
    assert_eq!(r.get("write_file").unwrap().risk(), Risk::Write);
    assert_eq!(r.get("refund").unwrap().risk(), Risk::Destructive);
    // Config entries first, then the imports in file order.
    let names: Vec<&str> = r.iter().map(|t| t.name()).collect();
    assert_eq!(
        names,
        [
            "purge",
            "read_file",
            "write_file",
            "delete_file",
            "café",
            "get_weather",
            "refund"
        ]
    );
}

#[test]
fn bad_imports() {
    // The same name from two imported lists is ambiguous.
    let (shown, err) = load_err(
        "import = [\n  { path = \"openai_chat_tools.json\", format = \"openai\" },\n  { path = \"anthropic_tools.json\", format = \"anthropic\" },\n]\n",
    );
    assert_eq!(err.code(), ErrorCode::DuplicateTool);
    assert_eq!(
        shown,
        "fixtures/anthropic_tools.json: at `/0`: tool `get_weather`: a tool of this name is already imported"
    );

    // A duplicate key in an imported file: line and column in that file.
    let err = import_file(fixtures().join("mcp_dup_key.json"), ImportFormat::Mcp).unwrap_err();
    assert_eq!(err.code(), ErrorCode::InvalidJson);
    assert_eq!((err.line(), err.column()), (Some(1), Some(26)));
    assert!(err.to_string().contains("duplicate_key"), "{err}");

    let cases: [(&str, ImportFormat, &str, ErrorCode, &str); 9] = [
        (
            r#"[{"type":"custom","custom":{"name":"x"}}]"#,
            ImportFormat::OpenAi,
            "/0/type",
            ErrorCode::InvalidImport,
            "only `function` tools",
        ),
        (
            r#"[{"type":"function","function":{"parameters":{}}}]"#,
            ImportFormat::OpenAi,
            "/0/function",
            ErrorCode::InvalidImport,
            "missing `name`",
        ),
        (
            r#"{"tools":{}}"#,
            ImportFormat::OpenAi,
            "",
            ErrorCode::InvalidImport,
            "expected a openai `tools` array",
        ),
        (
            r#"[{"type":"web_search_20250305","name":"web_search"}]"#,
            ImportFormat::Anthropic,
            "/0/type",
            ErrorCode::InvalidImport,
            "only client",
        ),
        (
            r#"[{"name":"x"}]"#,
            ImportFormat::Anthropic,
            "/0",
            ErrorCode::InvalidImport,
            "missing `input_schema`",
        ),
        (
            r#"{"tools":[{"name":"x","inputSchema":null}]}"#,
            ImportFormat::Mcp,
            "/tools/0/inputSchema",
            ErrorCode::InvalidImport,
            "must be an object",
        ),
        (
            r#"{"tools":[{"name":"x","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":"yes"}}]}"#,
            ImportFormat::Mcp,
            "/tools/0/annotations/readOnlyHint",
            ErrorCode::InvalidImport,
            "must be a boolean",
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"x"}}"#,
            ImportFormat::Mcp,
            "/error",
            ErrorCode::InvalidImport,
            "is an error",
        ),
        (
            r#"{"tools":[{"name":"x ","inputSchema":{"type":"object"}}]}"#,
            ImportFormat::Mcp,
            "/tools/0",
            ErrorCode::InvalidName,
            "whitespace",
        ),
    ];
    for (json, format, pointer, code, says) in cases {
        let err = import_slice(json.as_bytes(), format, "tools.json").unwrap_err();
        assert_eq!(err.code(), code, "{json}: {err}");
        assert_eq!(err.pointer(), Some(pointer), "{json}: {err}");
        assert!(
            err.to_string()
                .starts_with(&format!("tools.json: at `{pointer}`: ")),
            "{err}"
        );
        assert!(err.to_string().contains(says), "{json}: {err}");
    }

    let err = import_slice(
        br#"{"tools":[{"name":"x","inputSchema":{"type":"object","properties":{"a":{"type":"integer","minimun":1}}}}]}"#,
        ImportFormat::Mcp,
        "tools.json",
    )
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::SchemaCompile);
    assert_eq!(
        err.compile_error()
            .map(toolgate_schema::CompileError::pointer),
        Some("/properties/a/minimun")
    );
    let err = import_slice(
        br#"{"tools":[{"name":"x","inputSchema":{"type":"object"}},{"name":"x","inputSchema":{"type":"object"}}]}"#,
        ImportFormat::Mcp,
        "tools.json",
    )
    .unwrap_err();
    assert_eq!(err.code(), ErrorCode::DuplicateTool);
    assert_eq!(err.pointer(), Some("/tools/1"));
}

#[test]
fn names_match_byte_for_byte() {
    let config = load(&format!(
        "[[tool]]\nname = \"refund\"\nrisk = \"destructive\"\n{CLOSED}\n[[tool]]\nname = \"caf\\u00e9\"\nrisk = \"read\"\n{CLOSED}"
    ));
    let r = config.registry();
    assert!(r.get("refund").is_some());
    for other in [
        "Refund",
        "REFUND",
        "refund ",
        " refund",
        "refun",
        "refunds",
        "refund\0",
        "ref\u{200b}und",
    ] {
        assert!(r.get(other).is_none(), "{other:?}");
    }
    // A JSON-escaped spelling unescapes to the same bytes: the same name.
    let from_json = toolgate_json::from_str(r#""ref\u0075nd""#).unwrap();
    assert_eq!(
        r.get(from_json.as_str().unwrap()).map(|t| t.name()),
        Some("refund")
    );
    // NFC is registered; NFD is another name.
    assert!(r.get("caf\u{e9}").is_some());
    assert!(r.get("cafe\u{301}").is_none());

    // Names differing only by normalization are two tools.
    let config = load(&format!(
        "[[tool]]\nname = \"caf\\u00e9\"\nrisk = \"read\"\n{CLOSED}\n[[tool]]\nname = \"cafe\\u0301\"\nrisk = \"write\"\n{CLOSED}"
    ));
    assert_eq!(config.registry().len(), 2);
    assert_eq!(
        config.registry().get("cafe\u{301}").unwrap().risk(),
        Risk::Write
    );
}
