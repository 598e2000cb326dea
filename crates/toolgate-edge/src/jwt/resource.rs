//! OAuth 2.0 protected resource metadata (RFC 9728) for an endpoint with a
//! canonical URL (`[jwt] mcp_resource`): the document, where it is served,
//! and the `WWW-Authenticate` challenge that points clients to it.

use crate::config::JwtConfig;

/// What a resource server publishes about itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedResource {
    resource: String,
    path: String,
    url: String,
    document: String,
}

impl ProtectedResource {
    /// The metadata of `config`'s `mcp_resource`, if it names one.
    pub fn from_config(config: &JwtConfig) -> Option<Self> {
        let resource = config.mcp_resource()?;
        let (scheme, rest) = resource.split_once("://")?;
        let (authority, path) = match rest.find('/') {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        // Without a query: RFC 9728 §3.1 inserts the well-known segment
        // between the host and the path.
        let path = path
            .split('?')
            .next()
            .unwrap_or_default()
            .trim_end_matches('/');
        let well_known = format!("/.well-known/oauth-protected-resource{path}");
        let document = serde_json::json!({
            "resource": resource,
            "authorization_servers": config.authorization_servers(),
            "bearer_methods_supported": ["header"],
            "resource_name": "toolgate",
        })
        .to_string();
        Some(Self {
            resource: resource.to_owned(),
            url: format!("{scheme}://{authority}{well_known}"),
            path: well_known,
            document,
        })
    }

    /// The resource's URL: the audience its tokens must name.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The path the document is served at
    /// (`/.well-known/oauth-protected-resource` and the resource's path).
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The document's URL.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The document (JSON): `resource`, `authorization_servers`,
    /// `bearer_methods_supported` and `resource_name`.
    pub fn document(&self) -> &str {
        &self.document
    }

    /// The `WWW-Authenticate` value of a `401`: `Bearer` with
    /// `resource_metadata` (and `error` when given, RFC 6750).
    pub fn challenge(&self, realm: &str, error: Option<&str>) -> String {
        match error {
            Some(e) => format!(
                "Bearer realm=\"{realm}\", error=\"{e}\", resource_metadata=\"{}\"",
                self.url
            ),
            None => format!(
                "Bearer realm=\"{realm}\", resource_metadata=\"{}\"",
                self.url
            ),
        }
    }
}
