//! What looks like a URL: the strings the default URL guard checks when a
//! tool declares no policy for them (issue 31).

use url::Url;

use super::UrlPolicyConfig;

/// Words that make an argument's name URL-like, compared with each word of
/// the name (`image_url`, `webhookUrl`, `callback-uri`, `links`).
const URL_WORDS: [&str; 15] = [
    "url",
    "urls",
    "uri",
    "uris",
    "iri",
    "href",
    "endpoint",
    "endpoints",
    "webhook",
    "webhooks",
    "callback",
    "callbacks",
    "link",
    "links",
    "redirect",
];

/// Whether a member name reads like a URL's: one of its words (split at
/// `_`, `-`, `.`, spaces, digits and lower-to-upper case changes, compared
/// case-insensitively) is `url`, `uri`, `iri`, `href`, `endpoint`,
/// `webhook`, `callback`, `link`, `redirect` (or a plural).
///
/// ```
/// use toolgate::url_guard::is_url_like_name;
///
/// for name in ["url", "image_url", "webhookUrl", "callback", "Links", "REDIRECT_URI"] {
///     assert!(is_url_like_name(name), "{name}");
/// }
/// for name in ["curly", "hurl", "linkedin", "query", "title"] {
///     assert!(!is_url_like_name(name), "{name}");
/// }
/// ```
pub fn is_url_like_name(name: &str) -> bool {
    let mut word = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        let boundary = !c.is_alphabetic() || (c.is_uppercase() && prev_lower);
        if boundary && !word.is_empty() {
            if URL_WORDS.contains(&word.as_str()) {
                return true;
            }
            word.clear();
        }
        if c.is_alphabetic() {
            word.extend(c.to_lowercase());
        }
        prev_lower = c.is_lowercase();
    }
    URL_WORDS.contains(&word.as_str())
}

/// Whether a string parses (by the WHATWG URL Standard, the parser
/// browsers and the `url` crate use, which forgives leading spaces, tabs
/// and newlines) as an absolute URL with a network host: `http:`,
/// `https:`, `ws:`, `ftp:` and any other scheme written with an authority
/// (`gopher://`, `redis://`, `dict://`); not `mailto:`, `urn:`, `data:`,
/// `file:` or free text.
///
/// ```
/// use toolgate::url_guard::looks_like_network_url;
///
/// assert!(looks_like_network_url("http://169.254.169.254/latest/meta-data/"));
/// assert!(looks_like_network_url(" HTTP:evil.example"));
/// assert!(looks_like_network_url("gopher://127.0.0.1:6379/_INFO"));
/// assert!(!looks_like_network_url("see http://example.com"));
/// assert!(!looks_like_network_url("mailto:a@example.com"));
/// assert!(!looks_like_network_url("file:///etc/passwd"));
/// ```
pub fn looks_like_network_url(s: &str) -> bool {
    if !s.contains(':') {
        return false;
    }
    Url::parse(s).is_ok_and(|u| u.scheme() != "file" && u.host().is_some())
}

impl UrlPolicyConfig {
    /// The default URL policy: what guards a URL-looking argument its tool
    /// declares no policy for. Schemes `http` and `https`, any host that
    /// passes the name and address checks (no loopback, private,
    /// link-local, metadata or wildcard-DNS host; see the crate's URL
    /// checks), each scheme's default port.
    pub fn default_guard() -> Self {
        Self::new()
            .with_schemes(["http", "https"])
            .with_hosts(["*"])
    }
}
