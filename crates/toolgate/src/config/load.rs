//! The loader: reads the config text, checks each table in turn (each
//! table's step lives in its own module), reads the imported tool lists and
//! builds the registry. Also the entry points that read a tool list alone.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::error::{self, key_at, key_start, Cause, Error, ErrorCode};
use super::front::FrontEndTables;
use super::gate::GateConfig;
use super::import::{self, ImportFormat, Imported};
use super::raw::RawConfig;
use super::tool::{name_problem, tool_from_import};
use super::Config;
use crate::registry::{Registry, Tool, ToolOrigin};

/// Reads a tool list (OpenAI, Anthropic or MCP) into a registry, with the
/// default gate limits, the default risk tiers (MCP annotations, otherwise
/// `destructive`) and approval required for every tool that is not `read`.
pub fn import_file(path: impl AsRef<Path>, format: ImportFormat) -> Result<Registry, Error> {
    let path = path.as_ref();
    let bytes = crate::fsread::read(path).map_err(|e| {
        Error::new(
            ErrorCode::Io,
            path,
            format!("cannot read the tool list: {e}"),
        )
        .cause(Cause::Io(e))
    })?;
    import_slice(&bytes, format, path)
}

/// Like [`import_file`], for a tool list already in memory; `origin` names it
/// in errors.
pub fn import_slice(
    bytes: &[u8],
    format: ImportFormat,
    origin: impl AsRef<Path>,
) -> Result<Registry, Error> {
    let origin = origin.as_ref();
    let gate = GateConfig::default();
    let mut registry = Registry::new();
    for imported in import::read(format, bytes, origin)? {
        let tool = tool_from_import(imported, origin, &gate)?;
        insert(&mut registry, tool)?;
    }
    Ok(registry)
}

/// Reads and checks one config text; see [`Config::parse`].
pub(super) struct Loader<'t> {
    text: &'t str,
    file: &'t Path,
    base: PathBuf,
}

/// The imported tools, in file order, and where each name is.
struct Imports {
    tools: Vec<(Imported, PathBuf)>,
    names: HashMap<String, usize>,
}

impl<'t> Loader<'t> {
    /// A loader of `text` read from `file`; relative paths resolve against
    /// `file`'s folder.
    pub(super) fn new(text: &'t str, file: &'t Path) -> Self {
        let base = match file.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        Self { text, file, base }
    }
}

impl Loader<'_> {
    /// An error at the key whose value starts at `value_start`.
    pub(super) fn at_key(
        &self,
        code: ErrorCode,
        value_start: usize,
        key: &str,
        message: impl Into<String>,
    ) -> Error {
        Error::new(code, self.file, message)
            .at_offset(self.text, key_start(self.text, value_start))
            .key(key)
    }

    /// An error at a value (an array element).
    pub(super) fn at_value(
        &self,
        code: ErrorCode,
        value_start: usize,
        key: &str,
        message: impl Into<String>,
    ) -> Error {
        Error::new(code, self.file, message)
            .at_offset(self.text, value_start)
            .key(key)
    }

    pub(super) fn resolve(&self, path: &str) -> PathBuf {
        self.base.join(path)
    }

    /// The config file, as given.
    pub(super) fn file(&self) -> &Path {
        self.file
    }

    /// Checks every table, then builds the tools: the first error wins.
    pub(super) fn load(self) -> Result<Config, Error> {
        let de = toml::de::Deserializer::parse(self.text).map_err(|e| self.toml_error(e, true))?;
        let raw = RawConfig::deserialize(de).map_err(|e| self.toml_error(e, false))?;

        let gate = self.gate(&raw)?;
        let store = self.store(&raw)?;
        let authorization = self.authorization(&raw)?;
        let resolver = self.resolver(&raw)?;
        let receipts = self.receipts(&raw)?;
        let imports = self.imports(&raw)?;
        let registry = self.registry(&raw, imports, &gate, resolver.is_some())?;
        let limits = self.limits(&raw, &registry)?;
        let approvals = self.approvals(&raw, &registry)?;
        Ok(Config {
            path: self.file.to_path_buf(),
            gate,
            store,
            approvals,
            authorization,
            resolver,
            receipts,
            registry,
            limits,
            front: FrontEndTables {
                server: raw.server,
                proxy: raw.proxy,
                mcp: raw.mcp,
                jwt: raw.jwt,
                login: raw.login,
                oidc: raw.oidc,
                telemetry: raw.telemetry,
            },
            text: super::Text(self.text.into()),
        })
    }

    /// `import`: every listed tool list, read; two imported tools with one
    /// name are ambiguous.
    fn imports(&self, raw: &RawConfig) -> Result<Imports, Error> {
        let mut imported: Vec<(Imported, PathBuf)> = Vec::new();
        let mut imported_names: HashMap<String, usize> = HashMap::new();
        for entry in &raw.import {
            let path = entry.get_ref().path.get_ref();
            let span = entry.get_ref().path.span();
            let file = self.resolve(path);
            let bytes = crate::fsread::read(&file).map_err(|e| {
                self.at_key(
                    ErrorCode::Io,
                    span.start,
                    "path",
                    format!("cannot read the tool list `{}`: {e}", path.escape_debug()),
                )
                .cause(Cause::Io(e))
            })?;
            for tool in import::read(entry.get_ref().format, &bytes, &file)? {
                if imported_names.contains_key(&tool.name) {
                    return Err(Error::new(
                        ErrorCode::DuplicateTool,
                        &file,
                        "a tool of this name is already imported",
                    )
                    .at_pointer(tool.pointer.clone())
                    .tool(&tool.name));
                }
                imported_names.insert(tool.name.clone(), imported.len());
                imported.push((tool, file.clone()));
            }
        }
        Ok(Imports {
            tools: imported,
            names: imported_names,
        })
    }

    /// The `[[tool]]` entries, each over the imported tool of its name if
    /// any, then the imported tools no entry names.
    fn registry(
        &self,
        raw: &RawConfig,
        imports: Imports,
        gate: &GateConfig,
        resolve_default: bool,
    ) -> Result<Registry, Error> {
        let Imports {
            tools: imported,
            names: imported_names,
        } = imports;
        let mut registry = Registry::new();
        let mut used = vec![false; imported.len()];
        let mut lines: HashMap<String, usize> = HashMap::new();
        for tool in &raw.tool {
            let name = tool.name.get_ref();
            let name_at = tool.name.span().start;
            if let Some(problem) = name_problem(name) {
                return Err(self
                    .at_key(ErrorCode::InvalidName, name_at, "name", problem)
                    .tool(name));
            }
            if let Some(ns) = &tool.namespace {
                let problem = name_problem(ns.get_ref())
                    .map(|p| p.replace("tool name", "namespace"))
                    .or_else(|| {
                        ns.get_ref()
                            .contains('.')
                            .then(|| "a namespace must not contain `.`".to_owned())
                    });
                if let Some(problem) = problem {
                    return Err(self
                        .at_key(
                            ErrorCode::InvalidName,
                            ns.span().start,
                            "namespace",
                            problem,
                        )
                        .tool(name));
                }
            }
            let qualified = super::tool::qualified_name(tool);
            let name = &qualified;
            if let Some(line) = lines.get(name.as_str()) {
                return Err(self
                    .at_key(
                        ErrorCode::DuplicateTool,
                        name_at,
                        "name",
                        format!("a tool of this name is already declared at line {line}"),
                    )
                    .tool(name));
            }
            let (line, _) = error::line_column(self.text, key_start(self.text, name_at));
            lines.insert(name.clone(), line);
            let from_import = imported_names.get(name).copied();
            if let Some(i) = from_import {
                if let Some(u) = used.get_mut(i) {
                    *u = true;
                }
            }
            let import = from_import.and_then(|i| imported.get(i));
            let built = self.tool(tool, import, gate, line, resolve_default)?;
            insert(&mut registry, built)?;
        }
        for ((tool, file), used) in imported.into_iter().zip(used) {
            if !used {
                let built = tool_from_import(tool, &file, gate)?;
                insert(&mut registry, built)?;
            }
        }
        Ok(registry)
    }

    /// A TOML syntax error (`syntax`) or a value serde refused, at its key.
    fn toml_error(&self, e: toml::de::Error, syntax: bool) -> Error {
        let raw_message = e.message().trim().replace('\n', "; ");
        let code = if syntax {
            ErrorCode::TomlSyntax
        } else if raw_message.starts_with("unknown field") {
            ErrorCode::UnknownKey
        } else if raw_message.starts_with("missing field") {
            ErrorCode::MissingKey
        } else if raw_message.starts_with("invalid type") {
            ErrorCode::InvalidType
        } else {
            ErrorCode::InvalidValue
        };
        let message = people_words(&raw_message);
        let Some(span) = e.span() else {
            return Error::new(code, self.file, message).cause(Cause::Toml(e));
        };
        // The error points at a key (unknown key) or at a value (wrong type):
        // name the key, and report the place the error points at, the value
        // for a wrong value.
        let start = key_at(self.text, span.start)
            .map_or_else(|| key_start(self.text, span.start), |_| span.start);
        let key = match code {
            ErrorCode::UnknownKey | ErrorCode::MissingKey => backticked(&raw_message),
            _ => key_at(self.text, start).map(str::to_owned),
        };
        let at = match code {
            ErrorCode::InvalidType | ErrorCode::InvalidValue => span.start,
            _ => start,
        };
        let message = match (&key, code) {
            (Some(k), ErrorCode::InvalidType | ErrorCode::InvalidValue) => {
                format!("`{k}`: {message}")
            }
            // A missing key says what it takes (the values of an enumerated
            // key), from the same types the reference is made from.
            (Some(k), ErrorCode::MissingKey) => match super::reference::expected_of(k) {
                Some(expected) => format!("{message} ({expected})"),
                None => message,
            },
            _ => message,
        };
        let mut err = Error::new(code, self.file, message)
            .at_offset(self.text, at)
            .cause(Cause::Toml(e));
        if let Some(k) = key {
            err = err.key(k);
        }
        err
    }
}

/// Adds `tool` to `registry`, or an error at it when its name is taken.
fn insert(registry: &mut Registry, tool: Tool) -> Result<(), Error> {
    registry.insert(tool).map_err(|tool| {
        let e = Error::new(
            ErrorCode::DuplicateTool,
            tool.origin_file(),
            "a tool of this name is already declared",
        )
        .tool(&tool.name);
        match &tool.origin {
            ToolOrigin::Import { pointer, .. } => e.at_pointer(pointer.clone()),
            _ => e,
        }
    })
}

/// The first backticked word of a message: the key in serde's
/// `unknown field `x`` and `missing field `x``.
fn backticked(message: &str) -> Option<String> {
    let rest = message.split_once('`')?.1;
    Some(rest.split_once('`')?.0.to_owned())
}

/// serde's wording, in the config's terms (keys, not fields; no Rust types):
/// `invalid type: string "x", expected u64` reads `expected a non-negative
/// integer, found string "x"`.
fn people_words(message: &str) -> String {
    let message = match message
        .strip_prefix("invalid type: ")
        .and_then(|rest| rest.rsplit_once(", expected "))
    {
        Some((found, expected)) => format!("expected {expected}, found {found}"),
        None => message.to_owned(),
    };
    message
        .replace("unknown field", "unknown key")
        .replace("missing field", "missing key")
        .replace("unknown variant", "unknown value")
        .replace("expected u64", "expected a non-negative integer")
        .replace("expected u32", "expected a non-negative integer")
        .replace("expected u16", "expected an integer from 0 to 65535")
        .replace("a sequence", "an array")
        .replace("expected a map", "expected a table")
        .replace("expected struct ", "expected a table ")
}
