//! The `[proxy]` table: where `toolgate proxy` listens, the model APIs it
//! forwards to, how it knows the user, and what a denied call becomes.

use std::time::Duration;

use toolgate::config::front::{RawOnDeny, RawProxyToken};
use toolgate::config::{Config, Error, ErrorCode};

use super::proxy_routes::{is_stored_output_route, ForwardRoute, RouteError};
use super::rules::{header_name, listen, token_sha256, user_name};

/// The address `toolgate proxy` listens on when `[proxy]` sets no `listen`.
pub const DEFAULT_PROXY_LISTEN: &str = "127.0.0.1:8090";
/// The header a proxy token is read from when `[proxy]` names none.
pub const DEFAULT_TOKEN_HEADER: &str = "x-toolgate-token";
/// The header a session is read from when `[proxy]` names none.
pub const DEFAULT_SESSION_HEADER: &str = "x-toolgate-session";
/// Seconds an upstream response may take, start to end, by default.
pub const DEFAULT_UPSTREAM_TIMEOUT_SECONDS: u64 = 300;
/// Seconds an upstream stream may stay silent between two events, by default.
pub const DEFAULT_IDLE_TIMEOUT_SECONDS: u64 = 60;
/// The longest timeout accepted: one hour.
pub const MAX_PROXY_TIMEOUT_SECONDS: u64 = 3600;

/// What a call the gate does not allow becomes in the response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OnDeny {
    /// The call is removed and the model-safe feedback takes its place as
    /// assistant text, so the agent loop goes on.
    Feedback,
    /// The whole response is answered with an error in the provider's shape.
    Error,
}

/// What the proxy does when a request offers the model a registered tool
/// whose schema (`parameters`, `input_schema`) differs from the registered
/// one (`[proxy] offered_tools`). It is reported either way: a
/// `tool_offered` audit record (once per user, session, tool and offered
/// schema) and the `x-toolgate-request-findings` header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OfferedTools {
    /// `report` (the default): the request goes on as it came. The gate
    /// checks every call against the registered schema all the same.
    Report,
    /// `replace`: the offered schema is replaced by the registered one, so
    /// the model decodes against what the gate enforces.
    Replace,
    /// `refuse`: the request is answered `400 offered_tool_mismatch` in
    /// the provider's shape and never reaches the upstream.
    Refuse,
}

impl OfferedTools {
    /// The config's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Report => "report",
            Self::Replace => "replace",
            Self::Refuse => "refuse",
        }
    }
}

/// What the proxy does with the request pitfalls of DeepSeek's thinking
/// mode (`[proxy] deepseek`): a forced `tool_choice`, an assistant turn
/// with calls but no `reasoning_content`, an assistant `content: null`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DeepSeek {
    /// `report` (the default): each pitfall is named in the
    /// `x-toolgate-request-findings` header; the request goes on as it
    /// came.
    Report,
    /// `normalize`: reported, and normalized as DeepSeek documents it: a
    /// forced `tool_choice` is removed (thinking mode decides itself), a
    /// missing `reasoning_content` on an assistant turn with calls becomes
    /// `""`, an assistant's `content: null` becomes `""`.
    Normalize,
}

impl DeepSeek {
    /// The config's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Report => "report",
            Self::Normalize => "normalize",
        }
    }
}

/// One `[[proxy.token]]`: the SHA-256 of a proxy token and the user it
/// stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyToken {
    sha256: [u8; 32],
    user: String,
}

impl ProxyToken {
    /// The SHA-256 of the token.
    pub fn sha256(&self) -> &[u8; 32] {
        &self.sha256
    }

    /// The user its requests are decided for.
    pub fn user(&self) -> &str {
        &self.user
    }
}

/// How the proxy knows who a request is for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProxyAuth {
    /// `[[proxy.token]]`: the token in the token header names the user.
    Tokens(Vec<ProxyToken>),
    /// `user_header`: a header set by a trusted front (an authenticating
    /// gateway) names the user.
    TrustedHeader(String),
    /// `user`: every request is this user's (a proxy for one user).
    Fixed(String),
}

/// Responses output items that are tools the provider runs itself, or
/// client-side tools the gate does not read: refused unless `pass_through`
/// names them.
pub const RESPONSES_BUILT_IN: [&str; 14] = [
    "web_search_call",
    "file_search_call",
    "code_interpreter_call",
    "image_generation_call",
    "mcp_call",
    "mcp_list_tools",
    "mcp_approval_request",
    "tool_search_call",
    "local_shell_call",
    "shell_call",
    "apply_patch_call",
    "computer_call",
    "function_shell_call",
    "compaction",
];

/// Messages content blocks of tools Anthropic runs itself, and their
/// results: refused unless `pass_through` names them.
pub const MESSAGES_BUILT_IN: [&str; 10] = [
    "server_tool_use",
    "mcp_tool_use",
    "mcp_tool_result",
    "web_search_tool_result",
    "web_fetch_tool_result",
    "code_execution_tool_result",
    "bash_code_execution_tool_result",
    "text_editor_code_execution_tool_result",
    "tool_search_tool_result",
    "container_upload",
];

/// The `[proxy]` table.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    listen: std::net::SocketAddr,
    openai: Option<String>,
    anthropic: Option<String>,
    forward: Vec<ForwardRoute>,
    on_deny: OnDeny,
    auth: Option<ProxyAuth>,
    token_header: String,
    session_header: String,
    upstream_timeout: Duration,
    idle_timeout: Duration,
    pass_through: Vec<String>,
    narrow_tools: bool,
    wrap_results: bool,
    strip_markup: bool,
    offered_tools: OfferedTools,
    deepseek: DeepSeek,
}

impl Default for ProxyConfig {
    fn default() -> Self {
        Self {
            listen: std::net::SocketAddr::from(([127, 0, 0, 1], 8090)),
            openai: None,
            anthropic: None,
            forward: Vec::new(),
            on_deny: OnDeny::Feedback,
            auth: None,
            token_header: DEFAULT_TOKEN_HEADER.to_owned(),
            session_header: DEFAULT_SESSION_HEADER.to_owned(),
            upstream_timeout: Duration::from_secs(DEFAULT_UPSTREAM_TIMEOUT_SECONDS),
            idle_timeout: Duration::from_secs(DEFAULT_IDLE_TIMEOUT_SECONDS),
            pass_through: Vec::new(),
            narrow_tools: false,
            wrap_results: false,
            strip_markup: false,
            offered_tools: OfferedTools::Report,
            deepseek: DeepSeek::Report,
        }
    }
}

impl ProxyConfig {
    /// The address to listen on.
    pub fn listen(&self) -> std::net::SocketAddr {
        self.listen
    }

    /// The base URL of the OpenAI-compatible API (`/v1/chat/completions`,
    /// `/v1/responses`), without a trailing `/`.
    pub fn openai(&self) -> Option<&str> {
        self.openai.as_deref()
    }

    /// The base URL of the Anthropic API (`/v1/messages`).
    pub fn anthropic(&self) -> Option<&str> {
        self.anthropic.as_deref()
    }

    /// Other routes forwarded unchanged (patterns: see [`ForwardRoute`]),
    /// to the upstream that serves the path's API (Anthropic's for
    /// `/v1/messages/…`, else OpenAI's).
    pub fn forward(&self) -> &[ForwardRoute] {
        &self.forward
    }

    /// Whether `method path` (without its query) is one of the `forward`
    /// routes; a route answered from a model's stored output never is
    /// ([`is_stored_output_route`]).
    pub fn forwards(&self, method: &str, path: &str) -> bool {
        !is_stored_output_route(method, path)
            && self.forward.iter().any(|r| r.matches(method, path))
    }

    /// What a call the gate does not allow becomes.
    pub fn on_deny(&self) -> OnDeny {
        self.on_deny
    }

    /// How the user is known; `None` when the table sets none (then the
    /// proxy refuses to start).
    pub fn auth(&self) -> Option<&ProxyAuth> {
        self.auth.as_ref()
    }

    /// The header the proxy token is read from (lower-case).
    pub fn token_header(&self) -> &str {
        &self.token_header
    }

    /// The header the session is read from (lower-case).
    pub fn session_header(&self) -> &str {
        &self.session_header
    }

    /// How long an upstream response may take, start to end.
    pub fn upstream_timeout(&self) -> Duration {
        self.upstream_timeout
    }

    /// How long an upstream stream may stay silent.
    pub fn idle_timeout(&self) -> Duration {
        self.idle_timeout
    }

    /// Whether a request's `tools` array is narrowed for its user (as
    /// `toolgate narrow` prints it).
    pub fn narrow_tools(&self) -> bool {
        self.narrow_tools
    }

    /// Whether tool results in a request's history are wrapped as untrusted
    /// data (they are sanitized and capped either way).
    pub fn wrap_results(&self) -> bool {
        self.wrap_results
    }

    /// Whether text holding tool-call markup is replaced in JSON responses
    /// (it is reported either way; streamed text has passed already).
    pub fn strip_markup(&self) -> bool {
        self.strip_markup
    }

    /// What a request offering a registered tool with another schema gets.
    pub fn offered_tools(&self) -> OfferedTools {
        self.offered_tools
    }

    /// What DeepSeek thinking-mode request pitfalls get.
    pub fn deepseek(&self) -> DeepSeek {
        self.deepseek
    }

    /// Call types that are not registered function calls and may pass
    /// (`server_tool_use`, `web_search_call`, …); every other one is denied.
    pub fn pass_through(&self) -> &[String] {
        &self.pass_through
    }
}

/// An upstream's base URL (`http://` or `https://`, a host, no query or
/// fragment) without its trailing `/`; `None` when `url` is not one.
fn base_url(url: &str) -> Option<String> {
    let url = url.trim_end_matches('/');
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    (!rest.is_empty() && !rest.contains(['?', '#', ' '])).then(|| url.to_owned())
}

impl ProxyConfig {
    /// This table with both upstreams (`openai`, `anthropic`) set to
    /// `base`, an `http://` or `https://` base URL (`toolgate proxy
    /// --upstream`: a replay server or a local model server); `Err` says
    /// why `base` is not one.
    pub fn with_upstream(mut self, base: &str) -> Result<Self, String> {
        let url = base_url(base).ok_or_else(|| {
            format!("`{base}` is not a base URL such as \"http://127.0.0.1:8089\" (http:// or https://, a host, no query)")
        })?;
        self.openai = Some(url.clone());
        self.anthropic = Some(url);
        Ok(self)
    }
}

impl ProxyConfig {
    /// `config`'s `[proxy]` table, checked: an address, upstream base URLs
    /// (`http://` or `https://`), forwarded routes as `"METHOD /path"`, one
    /// way of knowing the user. The error is placed at the key, as
    /// [`Config::load`] places its own.
    pub fn from_config(config: &Config) -> Result<Self, Error> {
        let p = &config.front_end_tables().proxy;
        let mut proxy = ProxyConfig::default();
        if let Some(v) = &p.listen {
            proxy.listen = listen(config, v, DEFAULT_PROXY_LISTEN)?;
        }
        for (v, key, slot) in [
            (&p.openai, "openai", &mut proxy.openai),
            (&p.anthropic, "anthropic", &mut proxy.anthropic),
        ] {
            if let Some(v) = v {
                let Some(url) = base_url(v.get_ref()) else {
                    return Err(config.error_at_key(
                        ErrorCode::InvalidValue,
                        v.span().start,
                        key,
                        format!("`{key}` must be the API's base URL, such as \"https://api.example.com\""),
                    ));
                };
                *slot = Some(url);
            }
        }
        if let Some(list) = &p.forward {
            for item in list.get_ref() {
                let route = ForwardRoute::parse(item.get_ref()).map_err(|e| {
                    let why = match e {
                        RouteError::Syntax => "each `forward` route must be \"GET /v1/…\", \"POST /v1/…\" or \"DELETE /v1/…\": a path of plain segments, where `*` stands for exactly one segment",
                        RouteError::Gated => "a gated route cannot be forwarded unchanged",
                        RouteError::StoredOutput => "this route hands back a model's stored output (a stored response or completion, a batch's results, a file's content), whose calls the gate never decided: it is never forwarded",
                    };
                    config.error_at_value(ErrorCode::InvalidValue, item.span().start, "forward", why)
                })?;
                proxy.forward.push(route);
            }
        }
        if let Some(v) = &p.on_deny {
            proxy.on_deny = match v.get_ref() {
                RawOnDeny::Feedback => OnDeny::Feedback,
                RawOnDeny::Error => OnDeny::Error,
            };
        }
        for (v, key, slot) in [
            (&p.token_header, "token_header", &mut proxy.token_header),
            (
                &p.session_header,
                "session_header",
                &mut proxy.session_header,
            ),
        ] {
            if let Some(v) = v {
                *slot = header_name(config, v, key)?;
            }
        }
        for (v, key, slot) in [
            (
                &p.upstream_timeout_seconds,
                "upstream_timeout_seconds",
                &mut proxy.upstream_timeout,
            ),
            (
                &p.idle_timeout_seconds,
                "idle_timeout_seconds",
                &mut proxy.idle_timeout,
            ),
        ] {
            if let Some(v) = v {
                let n = *v.get_ref();
                if n == 0 || n > MAX_PROXY_TIMEOUT_SECONDS {
                    return Err(config.error_at_key(
                        ErrorCode::InvalidLimit,
                        v.span().start,
                        key,
                        format!("`{key}` must be between 1 and {MAX_PROXY_TIMEOUT_SECONDS}"),
                    ));
                }
                *slot = Duration::from_secs(n);
            }
        }
        proxy.narrow_tools = p.narrow_tools.unwrap_or(false);
        proxy.wrap_results = p.wrap_results.unwrap_or(false);
        proxy.strip_markup = p.strip_markup.unwrap_or(false);
        if let Some(v) = &p.offered_tools {
            proxy.offered_tools = match v.get_ref().as_str() {
                "report" => OfferedTools::Report,
                "replace" => OfferedTools::Replace,
                "refuse" => OfferedTools::Refuse,
                _ => {
                    return Err(config.error_at_value(
                        ErrorCode::InvalidValue,
                        v.span().start,
                        "offered_tools",
                        "`offered_tools` must be `report`, `replace` or `refuse`",
                    ))
                }
            };
        }
        if let Some(v) = &p.deepseek {
            proxy.deepseek = match v.get_ref().as_str() {
                "report" => DeepSeek::Report,
                "normalize" => DeepSeek::Normalize,
                _ => {
                    return Err(config.error_at_value(
                        ErrorCode::InvalidValue,
                        v.span().start,
                        "deepseek",
                        "`deepseek` must be `report` or `normalize`",
                    ))
                }
            };
        }
        if let Some(list) = &p.pass_through {
            // Only built-in item types can be opened: a misspelt or unknown
            // name would open nothing and hide the mistake.
            if let Some(bad) = list.get_ref().iter().find(|t| {
                !RESPONSES_BUILT_IN.contains(&t.as_str())
                    && !MESSAGES_BUILT_IN.contains(&t.as_str())
            }) {
                let shown: String = bad
                    .chars()
                    .filter(char::is_ascii_graphic)
                    .take(64)
                    .collect();
                return Err(config.error_at_value(
                    ErrorCode::InvalidValue,
                    list.span().start,
                    "pass_through",
                    format!(
                        "`pass_through` names `{shown}`, which is not a built-in item type: see the proxy's pass list (`web_search_call`, `server_tool_use`, ...)"
                    ),
                ));
            }
            proxy.pass_through = list.get_ref().clone();
        }
        let ways = usize::from(!p.token.is_empty())
            + usize::from(p.user_header.is_some())
            + usize::from(p.user.is_some());
        if ways > 1 {
            return Err(config.error_in_table(
                ErrorCode::InvalidValue,
                "proxy",
                "[proxy] names the user in more than one way: use one of `[[proxy.token]]`, `user_header` or `user`",
            ));
        }
        if !p.token.is_empty() {
            let mut tokens: Vec<ProxyToken> = Vec::new();
            for t in &p.token {
                tokens.push(proxy_token(config, t, &tokens)?);
            }
            proxy.auth = Some(ProxyAuth::Tokens(tokens));
        } else if let Some(v) = &p.user_header {
            proxy.auth = Some(ProxyAuth::TrustedHeader(header_name(
                config,
                v,
                "user_header",
            )?));
        } else if let Some(v) = &p.user {
            proxy.auth = Some(ProxyAuth::Fixed(user_name(config, v, "user")?));
        }
        Ok(proxy)
    }
}

/// One `[[proxy.token]]`: a hash not declared before, a valid user name.
fn proxy_token(
    config: &Config,
    t: &RawProxyToken,
    declared: &[ProxyToken],
) -> Result<ProxyToken, Error> {
    let sha256 = token_sha256(config, &t.sha256, declared.iter().map(|d| &d.sha256))?;
    Ok(ProxyToken {
        sha256,
        user: user_name(config, &t.user, "user")?,
    })
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use toolgate::config::{Config, Error, ErrorCode};

    use super::super::test_support::{self, table, Refusal};
    use super::*;

    const HASH_A: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    const HASH_B: &str = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752";

    /// `text`'s `[proxy]` table, checked; the core loader must accept the
    /// file (its keys and types), so every refusal below is this table's.
    fn proxy(text: &str) -> Result<ProxyConfig, Error> {
        table(text, ProxyConfig::from_config)
    }

    /// The refusal of `text`: its code, line, column, key and message.
    fn refused(text: &str) -> Refusal {
        test_support::refused(text, ProxyConfig::from_config)
    }

    #[test]
    fn an_empty_table_has_the_defaults() {
        let p = proxy("").unwrap();
        assert_eq!(p.listen().to_string(), DEFAULT_PROXY_LISTEN);
        assert_eq!((p.openai(), p.anthropic()), (None, None));
        assert!(p.forward().is_empty());
        assert_eq!(p.on_deny(), OnDeny::Feedback);
        assert_eq!(p.auth(), None);
        assert_eq!(p.token_header(), DEFAULT_TOKEN_HEADER);
        assert_eq!(p.session_header(), DEFAULT_SESSION_HEADER);
        assert_eq!(
            p.upstream_timeout(),
            Duration::from_secs(DEFAULT_UPSTREAM_TIMEOUT_SECONDS)
        );
        assert_eq!(
            p.idle_timeout(),
            Duration::from_secs(DEFAULT_IDLE_TIMEOUT_SECONDS)
        );
        assert!(p.pass_through().is_empty());
        assert!(!p.narrow_tools() && !p.wrap_results() && !p.strip_markup());
        assert_eq!(p.offered_tools(), OfferedTools::Report);
        assert_eq!(p.deepseek(), DeepSeek::Report);
    }

    #[test]
    fn every_key_is_read() {
        let p = proxy(
            "[proxy]\nlisten = \"0.0.0.0:9000\"\nopenai = \"https://api.openai.com/\"\n\
             anthropic = \"http://127.0.0.1:8089\"\non_deny = \"error\"\n\
             user_header = \"X-User\"\ntoken_header = \"X-Key\"\nsession_header = \"X-Session\"\n\
             upstream_timeout_seconds = 3600\nidle_timeout_seconds = 1\n\
             narrow_tools = true\nwrap_results = true\nstrip_markup = true\n",
        )
        .unwrap();
        assert_eq!(p.listen().to_string(), "0.0.0.0:9000");
        // A base URL loses its trailing `/`.
        assert_eq!(p.openai(), Some("https://api.openai.com"));
        assert_eq!(p.anthropic(), Some("http://127.0.0.1:8089"));
        assert_eq!(p.on_deny(), OnDeny::Error);
        // Header names are kept in lower case.
        assert_eq!(
            p.auth(),
            Some(&ProxyAuth::TrustedHeader("x-user".to_owned()))
        );
        assert_eq!(p.token_header(), "x-key");
        assert_eq!(p.session_header(), "x-session");
        assert_eq!(p.upstream_timeout(), Duration::from_secs(3600));
        assert_eq!(p.idle_timeout(), Duration::from_secs(1));
        assert!(p.narrow_tools() && p.wrap_results() && p.strip_markup());

        let p = proxy("[proxy]\nuser = \"alice\"\non_deny = \"feedback\"\n").unwrap();
        assert_eq!(p.auth(), Some(&ProxyAuth::Fixed("alice".to_owned())));
        assert_eq!(p.on_deny(), OnDeny::Feedback);

        let p = proxy(&format!(
            "[[proxy.token]]\nsha256 = \"{HASH_A}\"\nuser = \"alice\"\n\
             [[proxy.token]]\nsha256 = \"{}\"\nuser = \"bob\"\n",
            HASH_B.to_ascii_uppercase()
        ))
        .unwrap();
        let Some(ProxyAuth::Tokens(tokens)) = p.auth() else {
            panic!("{:?}", p.auth());
        };
        assert_eq!(tokens.len(), 2);
        assert_eq!(tokens[0].user(), "alice");
        assert_eq!(tokens[0].sha256()[..2], [0x9f, 0x86]);
        assert_eq!(tokens[1].user(), "bob");
        assert_eq!(tokens[1].sha256()[..2], [0x60, 0x30]);
    }

    #[test]
    fn offered_tools_and_deepseek_are_read() {
        for (text, want) in [
            ("report", OfferedTools::Report),
            ("replace", OfferedTools::Replace),
            ("refuse", OfferedTools::Refuse),
        ] {
            let p = proxy(&format!("[proxy]\noffered_tools = \"{text}\"\n")).unwrap();
            assert_eq!(p.offered_tools(), want);
            assert_eq!(want.as_str(), text);
        }
        for (text, want) in [
            ("report", DeepSeek::Report),
            ("normalize", DeepSeek::Normalize),
        ] {
            let p = proxy(&format!("[proxy]\ndeepseek = \"{text}\"\n")).unwrap();
            assert_eq!(p.deepseek(), want);
            assert_eq!(want.as_str(), text);
        }
        assert_eq!(
            refused("[proxy]\noffered_tools = \"drop\"\n"),
            (
                ErrorCode::InvalidValue,
                Some(2),
                Some(17),
                "offered_tools".to_owned(),
                "`offered_tools` must be `report`, `replace` or `refuse`".to_owned()
            )
        );
        assert_eq!(
            refused("[proxy]\ndeepseek = \"fix\"\n"),
            (
                ErrorCode::InvalidValue,
                Some(2),
                Some(12),
                "deepseek".to_owned(),
                "`deepseek` must be `report` or `normalize`".to_owned()
            )
        );
        // A value of the wrong type, or a misspelt key, is the core
        // loader's refusal, with its position.
        let e = Config::parse("[proxy]\noffered_tools = true\n", "toolgate.toml").unwrap_err();
        assert_eq!((e.code(), e.line()), (ErrorCode::InvalidType, Some(2)));
        let e = Config::parse("[proxy]\noffered_tool = \"report\"\n", "toolgate.toml").unwrap_err();
        assert_eq!((e.code(), e.line()), (ErrorCode::UnknownKey, Some(2)));
        assert!(e.to_string().contains("offered_tool"), "{e}");
    }

    #[test]
    fn a_bad_address_url_header_or_timeout_is_refused_at_its_key() {
        for (text, code, column, key, message) in [
            (
                "[proxy]\nlisten = \"localhost\"\n",
                ErrorCode::InvalidValue,
                1,
                "listen",
                "`listen` must be an address and port, such as \"127.0.0.1:8090\"",
            ),
            (
                "[proxy]\nopenai = \"api.openai.com\"\n",
                ErrorCode::InvalidValue,
                1,
                "openai",
                "`openai` must be the API's base URL, such as \"https://api.example.com\"",
            ),
            (
                "[proxy]\n  anthropic = \"https://api.anthropic.com/v1?x=1\"\n",
                ErrorCode::InvalidValue,
                3,
                "anthropic",
                "`anthropic` must be the API's base URL, such as \"https://api.example.com\"",
            ),
            (
                "[proxy]\ntoken_header = \"x token\"\n",
                ErrorCode::InvalidValue,
                1,
                "token_header",
                "`token_header` must be a header name",
            ),
            (
                "[proxy]\nsession_header = \"\"\n",
                ErrorCode::InvalidValue,
                1,
                "session_header",
                "`session_header` must be a header name",
            ),
            (
                "[proxy]\nuser_header = \"x:user\"\n",
                ErrorCode::InvalidValue,
                1,
                "user_header",
                "`user_header` must be a header name",
            ),
            (
                "[proxy]\nupstream_timeout_seconds = 0\n",
                ErrorCode::InvalidLimit,
                1,
                "upstream_timeout_seconds",
                "`upstream_timeout_seconds` must be between 1 and 3600",
            ),
            (
                "[proxy]\nidle_timeout_seconds = 3601\n",
                ErrorCode::InvalidLimit,
                1,
                "idle_timeout_seconds",
                "`idle_timeout_seconds` must be between 1 and 3600",
            ),
        ] {
            assert_eq!(
                refused(text),
                (
                    code,
                    Some(2),
                    Some(column),
                    key.to_owned(),
                    message.to_owned()
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn pass_through_names_only_built_in_item_types() {
        let p =
            proxy("[proxy]\npass_through = [\"web_search_call\", \"server_tool_use\"]\n").unwrap();
        assert_eq!(p.pass_through(), ["web_search_call", "server_tool_use"]);
        for bad in ["web_search", "program", "function_call", "text"] {
            let (code, line, column, key, message) =
                refused(&format!("[proxy]\npass_through = [\"{bad}\"]\n"));
            assert_eq!(
                (code, line, column, key.as_str()),
                (ErrorCode::InvalidValue, Some(2), Some(16), "pass_through"),
                "{bad}"
            );
            assert_eq!(
                message,
                format!("`pass_through` names `{bad}`, which is not a built-in item type: see the proxy's pass list (`web_search_call`, `server_tool_use`, ...)")
            );
        }
        // A name is shown without control characters, and cut.
        let (_, _, _, _, message) = refused(&format!(
            "[proxy]\npass_through = [\"a\\u0007{}\"]\n",
            "b".repeat(100)
        ));
        assert!(
            message.contains(&format!("`a{}`", "b".repeat(63))),
            "{message}"
        );
    }

    #[test]
    fn forward_patterns_are_read() {
        let p = proxy(
            "[proxy]\nforward = [\"GET /v1/models/*\", \"POST /v1/messages/count_tokens\", \"POST /v1/responses/input_tokens\", \"POST /v1/embeddings\"]\n",
        )
        .unwrap();
        assert_eq!(p.forward().len(), 4);
        assert_eq!(p.forward()[0].method(), "GET");
        assert_eq!(p.forward()[0].pattern(), "/v1/models/*");
        assert!(p.forwards("GET", "/v1/models/gpt-4.1"));
        assert!(p.forwards("POST", "/v1/messages/count_tokens"));
        assert!(p.forwards("POST", "/v1/responses/input_tokens"));
        assert!(!p.forwards("GET", "/v1/models"));
        assert!(!p.forwards("GET", "/v1/embeddings"));
    }

    #[test]
    fn a_bad_forward_route_is_refused_at_its_value() {
        for (text, column, says) in [
            (
                "[proxy]\nforward = [\"GET /v1/models\", \"GET /v1/responses/*\"]\n",
                30,
                "this route hands back a model's stored output (a stored response or completion, a batch's results, a file's content), whose calls the gate never decided: it is never forwarded",
            ),
            (
                "[proxy]\nforward = [\"POST /v1/*\"]\n",
                12,
                "a gated route cannot be forwarded unchanged",
            ),
            (
                "[proxy]\nforward = [\"GET /v1/models/**\"]\n",
                12,
                "each `forward` route must be \"GET /v1/…\", \"POST /v1/…\" or \"DELETE /v1/…\": a path of plain segments, where `*` stands for exactly one segment",
            ),
        ] {
            assert_eq!(
                refused(text),
                (
                    ErrorCode::InvalidValue,
                    Some(2),
                    Some(column),
                    "forward".to_owned(),
                    says.to_owned()
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn the_user_is_named_one_way_and_validly() {
        let e = proxy(&format!(
            "[proxy]\nuser = \"alice\"\n[[proxy.token]]\nsha256 = \"{HASH_A}\"\nuser = \"bob\"\n"
        ))
        .unwrap_err();
        assert_eq!(e.code(), ErrorCode::InvalidValue);
        assert_eq!((e.line(), e.column()), (None, None));
        assert_eq!(e.config_key(), Some("proxy"));
        assert_eq!(
            e.to_string(),
            "toolgate.toml: [proxy] names the user in more than one way: use one of `[[proxy.token]]`, `user_header` or `user`"
        );
        assert!(proxy("[proxy]\nuser = \"alice\"\nuser_header = \"x-user\"\n").is_err());

        for (text, line, column, key, message) in [
            (
                "[proxy]\nuser = \" \"\n".to_owned(),
                2,
                1,
                "user",
                "`user`: a user name must not be empty or blank",
            ),
            (
                format!("[proxy]\nuser = \"{}\"\n", "u".repeat(257)),
                2,
                1,
                "user",
                "`user`: a user name must be at most 256 bytes",
            ),
            (
                format!("[[proxy.token]]\nsha256 = \"{HASH_A}\"\nuser = \"a\\u0000\"\n"),
                3,
                1,
                "user",
                "`user`: a user name must not contain control characters",
            ),
            (
                "[[proxy.token]]\nsha256 = \"9f86\"\nuser = \"alice\"\n".to_owned(),
                2,
                1,
                "sha256",
                "`sha256` must be the SHA-256 of the token: 64 hexadecimal digits",
            ),
            (
                format!(
                    "[[proxy.token]]\nsha256 = \"{HASH_A}\"\nuser = \"alice\"\n\
                     [[proxy.token]]\nsha256 = \"{}\"\nuser = \"bob\"\n",
                    HASH_A.to_ascii_uppercase()
                ),
                5,
                1,
                "sha256",
                "this token is already declared",
            ),
        ] {
            assert_eq!(
                refused(&text),
                (
                    ErrorCode::InvalidValue,
                    Some(line),
                    Some(column),
                    key.to_owned(),
                    message.to_owned()
                ),
                "{text}"
            );
        }
    }

    #[test]
    fn an_upstream_override_sets_both_apis() {
        let p = proxy("[proxy]\nopenai = \"https://api.openai.com\"\n").unwrap();
        let p = p.with_upstream("http://127.0.0.1:8089/").unwrap();
        assert_eq!(p.openai(), Some("http://127.0.0.1:8089"));
        assert_eq!(p.anthropic(), Some("http://127.0.0.1:8089"));
        for bad in ["127.0.0.1:8089", "http://", "https://h/?q", "ftp://h"] {
            let why = proxy("").unwrap().with_upstream(bad).unwrap_err();
            assert!(why.contains(bad) && why.contains("base URL"), "{why}");
        }
    }
}
