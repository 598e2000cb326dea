//! The `[login]` table: how approvers log in to the approvals page with
//! the organisation's identity, as asserted by a trusted authenticating
//! reverse proxy (a header, believed only from configured addresses).

use std::net::IpAddr;

use toolgate::config::{Config, Error, ErrorCode};

use super::rules::header_name;
use super::server::ServerRole;

/// The most addresses `trusted_proxies` lists.
pub const MAX_TRUSTED_PROXIES: usize = 64;

/// The `[login]` table, checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoginConfig {
    user_header: String,
    groups_header: String,
    trusted_proxies: Vec<IpAddr>,
    roles: Vec<(ServerRole, Vec<String>)>,
}

impl LoginConfig {
    /// The header naming the user (lower-case).
    pub fn user_header(&self) -> &str {
        &self.user_header
    }

    /// The header listing the user's groups, comma-separated (lower-case).
    pub fn groups_header(&self) -> &str {
        &self.groups_header
    }

    /// The peer addresses whose headers are believed.
    pub fn trusted_proxies(&self) -> &[IpAddr] {
        &self.trusted_proxies
    }

    /// For each role, the groups that grant it.
    pub fn roles(&self) -> &[(ServerRole, Vec<String>)] {
        &self.roles
    }

    /// The highest role one of `groups` grants.
    pub fn role_of<'g>(
        &self,
        groups: impl IntoIterator<Item = &'g str> + Clone,
    ) -> Option<ServerRole> {
        self.roles
            .iter()
            .filter(|(_, grants)| {
                groups
                    .clone()
                    .into_iter()
                    .any(|g| grants.iter().any(|x| x == g))
            })
            .map(|(r, _)| *r)
            .max()
    }
}

impl LoginConfig {
    /// `config`'s `[login]` table, checked (`None` without one): header
    /// names, the proxies' addresses, roles by name. The error is placed at
    /// the key, as [`Config::load`] places its own.
    ///
    /// # Errors
    ///
    /// The first value refused, with its [`ErrorCode`] and position.
    pub fn from_config(config: &Config) -> Result<Option<Self>, Error> {
        let Some(t) = &config.front_end_tables().login else {
            return Ok(None);
        };
        let user_header = header_name(config, &t.user_header, "user_header")?;
        let groups_header = header_name(config, &t.groups_header, "groups_header")?;
        let list = t.trusted_proxies.get_ref();
        let proxies: Option<Vec<IpAddr>> = list.iter().map(|a| a.parse().ok()).collect();
        let proxies = proxies
            .filter(|p| !p.is_empty() && p.len() <= MAX_TRUSTED_PROXIES)
            .ok_or_else(|| {
                config.error_at_key(
                    ErrorCode::InvalidValue,
                    t.trusted_proxies.span().start,
                    "trusted_proxies",
                    format!("`trusted_proxies` must list 1 to {MAX_TRUSTED_PROXIES} IP addresses (the reverse proxy's, as toolgate sees them)"),
                )
            })?;
        let mut roles = Vec::new();
        for (name, groups) in t.roles.get_ref() {
            let role =
                match ServerRole::from_name(name) {
                    Some(role @ (ServerRole::Approver | ServerRole::Admin)) => role,
                    _ => return Err(config.error_at_key(
                        ErrorCode::InvalidValue,
                        t.roles.span().start,
                        "roles",
                        "`[login.roles]` keys must be `approver` or `admin` (the page is theirs)",
                    )),
                };
            if groups.is_empty() || groups.len() > 64 || groups.iter().any(String::is_empty) {
                return Err(config.error_at_key(
                    ErrorCode::InvalidValue,
                    t.roles.span().start,
                    "roles",
                    "each role in `[login.roles]` lists 1 to 64 groups",
                ));
            }
            roles.push((role, groups.clone()));
        }
        Ok(Some(LoginConfig {
            user_header,
            groups_header,
            trusted_proxies: proxies,
            roles,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{refused, refused_by_core, table};
    use super::*;

    const OK: [(&str, &str); 4] = [
        ("user_header", "\"X-Forwarded-User\""),
        ("groups_header", "\"x-forwarded-groups\""),
        ("trusted_proxies", "[\"127.0.0.1\", \"::1\"]"),
        (
            "roles",
            "{ approver = [\"reviewers\"], admin = [\"ops\", \"sec\"] }",
        ),
    ];

    /// A `[login]` table of `OK`'s keys, `key` given `value` instead
    /// (or left out, with `None`).
    fn with(key: &str, value: Option<&str>) -> String {
        let mut text = "[login]\n".to_owned();
        for (k, v) in OK {
            match (k == key, value) {
                (false, _) => text.push_str(&format!("{k} = {v}\n")),
                (true, Some(v)) => text.push_str(&format!("{k} = {v}\n")),
                (true, None) => {}
            }
        }
        text
    }

    #[test]
    fn no_table_no_login() {
        assert_eq!(table("", LoginConfig::from_config).unwrap(), None);
    }

    #[test]
    fn every_key_is_read() {
        let l = table(&with("", None), LoginConfig::from_config)
            .unwrap()
            .unwrap();
        // Header names are kept in lower case.
        assert_eq!(l.user_header(), "x-forwarded-user");
        assert_eq!(l.groups_header(), "x-forwarded-groups");
        assert_eq!(
            l.trusted_proxies(),
            [
                IpAddr::from([127, 0, 0, 1]),
                IpAddr::from([0, 0, 0, 0, 0, 0, 0, 1])
            ]
        );
        assert_eq!(
            l.roles(),
            [
                (ServerRole::Admin, vec!["ops".to_owned(), "sec".to_owned()]),
                (ServerRole::Approver, vec!["reviewers".to_owned()]),
            ]
        );
    }

    #[test]
    fn the_highest_role_a_group_grants_wins() {
        let l = table(&with("", None), LoginConfig::from_config)
            .unwrap()
            .unwrap();
        assert_eq!(l.role_of(["reviewers"]), Some(ServerRole::Approver));
        assert_eq!(l.role_of(["reviewers", "sec"]), Some(ServerRole::Admin));
        assert_eq!(l.role_of(["Reviewers", "ops "]), None);
        assert_eq!(l.role_of([]), None);
    }

    #[test]
    fn bad_values_are_refused_at_their_key() {
        let many = format!(
            "[{}]",
            (0..=MAX_TRUSTED_PROXIES)
                .map(|i| format!("\"10.0.0.{i}\""))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let long = format!("\"{}\"", "h".repeat(257));
        for (key, value, line, says) in [
            (
                "user_header",
                "\"x user\"",
                4,
                "`user_header` must be a header name",
            ),
            (
                "user_header",
                "\"\"",
                4,
                "`user_header` must be a header name",
            ),
            (
                "user_header",
                long.as_str(),
                4,
                "`user_header` must be a header name",
            ),
            (
                "groups_header",
                "\"x:groups\"",
                4,
                "`groups_header` must be a header name",
            ),
            ("trusted_proxies", "[]", 4, "1 to 64 IP addresses"),
            (
                "trusted_proxies",
                "[\"proxy.example\"]",
                4,
                "1 to 64 IP addresses",
            ),
            (
                "trusted_proxies",
                "[\"10.0.0.0/8\"]",
                4,
                "1 to 64 IP addresses",
            ),
            ("trusted_proxies", many.as_str(), 4, "1 to 64 IP addresses"),
            (
                "roles",
                "{ agent = [\"bots\"] }",
                4,
                "keys must be `approver` or `admin`",
            ),
            (
                "roles",
                "{ root = [\"x\"] }",
                4,
                "keys must be `approver` or `admin`",
            ),
            ("roles", "{ admin = [] }", 4, "1 to 64 groups"),
            ("roles", "{ admin = [\"\"] }", 4, "1 to 64 groups"),
        ] {
            // Each key moves to the end of the table: line 5.
            let (code, at, column, got, message) = refused(
                &with(key, None).replace("[login]\n", &format!("[login]\n{key} = {value}\n")),
                LoginConfig::from_config,
            );
            assert_eq!(
                (code, at, column),
                (ErrorCode::InvalidValue, Some(line - 2), Some(1)),
                "{key} = {value}"
            );
            assert_eq!(got, key, "{key} = {value}");
            assert!(message.contains(says), "{key} = {value}: {message}");
        }
    }

    #[test]
    fn missing_keys_wrong_types_and_unknown_keys_are_the_core_loaders_refusals() {
        for key in ["user_header", "groups_header", "trusted_proxies", "roles"] {
            let (code, line, got) = refused_by_core(&with(key, None));
            assert_eq!((code, got.as_str()), (ErrorCode::MissingKey, key));
            assert!(line.is_some(), "{key}");
        }
        for (text, code, key) in [
            (
                with("trusted_proxies", Some("\"127.0.0.1\"")),
                ErrorCode::InvalidType,
                "trusted_proxies",
            ),
            (
                with("user_header", Some("1")),
                ErrorCode::InvalidType,
                "user_header",
            ),
            (
                format!("{}trusted = true\n", with("", None)),
                ErrorCode::UnknownKey,
                "trusted",
            ),
        ] {
            let (got, line, got_key) = refused_by_core(&text);
            assert_eq!((got, got_key.as_str()), (code, key), "{text}");
            assert!(line.is_some(), "{text}");
        }
    }
}
