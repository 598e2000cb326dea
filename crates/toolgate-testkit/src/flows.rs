//! A small config with session labels, an egress tool, the trifecta rule
//! and a rate limit: what the proxies' tests of limits and labels share.

use std::path::Path;

/// The Cedar schema: one action per tool; `post` declares the labels and
/// `egress` its policy reads.
const SCHEMA: &str = r#"
entity User;
entity Tool;
action read_page appliesTo {
  principal: [User], resource: [Tool],
  context: { args: { url: String }, turn: Long, risk: String },
};
action read_record appliesTo {
  principal: [User], resource: [Tool],
  context: { args: { id: String }, turn: Long, risk: String },
};
action post appliesTo {
  principal: [User], resource: [Tool],
  context: { args: { url: String }, turn: Long, risk: String,
             labels: Set<String>, egress: Bool },
};
"#;

/// Everything is allowed, but an egress call in a session that read
/// untrusted content and private data is held for a human.
const POLICIES: &str = r#"
@id("all-tools")
permit(principal, action, resource);

@id("trifecta-egress")
@approval("required")
forbid(principal, action == Action::"post", resource)
when {
  context.egress &&
  context.labels.contains("untrusted_content") &&
  context.labels.contains("private_data")
};
"#;

/// Writes the policies and schema into `dir` and returns the config's
/// `[authorization]`, `[[tool]]` and `[[limit]]` tables: `read_page`
/// (labels `untrusted_content`), `read_record` (`private_data`), `post`
/// (egress), all read-risk, and `posts_per_session`: one `post` per
/// session an hour. The caller adds `[store]` and its front end's table.
#[expect(
    clippy::panic,
    reason = "a fixture that cannot be written fails the test"
)]
pub fn flow_config(dir: &Path) -> String {
    for (name, text) in [("flows.cedarschema", SCHEMA), ("flows.cedar", POLICIES)] {
        let path = dir.join(name);
        std::fs::write(&path, text)
            .unwrap_or_else(|e| panic!("cannot write `{}`: {e}", path.display()));
    }
    let string = |n: &str| {
        format!(
            r#"{{ type = "object", properties = {{ {n} = {{ type = "string" }} }}, required = ["{n}"], additionalProperties = false }}"#
        )
    };
    format!(
        r#"
[authorization]
policies = "flows.cedar"
schema = "flows.cedarschema"

[[tool]]
name = "read_page"
risk = "read"
labels = ["untrusted_content"]
schema = {url}

[[tool]]
name = "read_record"
risk = "read"
labels = ["private_data"]
schema = {id}

[[tool]]
name = "post"
risk = "read"
egress = true
schema = {url}

[[limit]]
name = "posts_per_session"
tools = ["post"]
per = "session"
calls = 1
window_seconds = 3600
"#,
        url = string("url"),
        id = string("id"),
    )
}
