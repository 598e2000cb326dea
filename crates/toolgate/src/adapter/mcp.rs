//! MCP JSON-RPC messages: only a `tools/call` request is a call.

use toolgate_json::Value;

use super::error::{Error, ErrorCode};
use super::finish::Finish;
use super::walk::{self, key};
use super::{Arguments, CallKind, Ctx, NewCall};

/// Reads one JSON-RPC message, or a batch (an array, 2025-03-26).
///
/// A request with another method, a notification or a response yields no
/// call. A `tools/call` without an `id` (a notification) is refused: it would
/// run a tool with no answer to deny.
pub(crate) fn read(v: &Value<'_>, ctx: &mut Ctx<'_>) -> Result<Finish, Error> {
    match v {
        Value::Array(items) => {
            if items.is_empty() {
                return Err(Error::new(ErrorCode::InvalidValue, ""));
            }
            for (i, item) in items.iter().enumerate() {
                message(item, &walk::idx("", i), ctx)?;
            }
        }
        _ => message(v, "", ctx)?,
    }
    Ok(Finish::complete("request"))
}

fn message(v: &Value<'_>, at: &str, ctx: &mut Ctx<'_>) -> Result<(), Error> {
    let o = walk::as_object(v, at)?;
    if walk::req_str(o, "jsonrpc", at)? != "2.0" {
        return Err(Error::new(ErrorCode::InvalidValue, key(at, "jsonrpc")));
    }
    if walk::opt_str(o, "method", at)? != Some("tools/call") {
        return Ok(());
    }
    let id_at = key(at, "id");
    let call_id = match o.get("id") {
        None => return Err(Error::new(ErrorCode::MissingField, id_at)),
        Some(Value::String(s)) => s.to_string(),
        Some(Value::Number(n)) => n.lexeme().into_owned(),
        Some(other) => {
            return Err(Error::wrong_type(
                id_at,
                "string or number",
                other.type_name(),
            ))
        }
    };
    let p_at = key(at, "params");
    let params = walk::req_object(o, "params", at)?;
    let arguments = match params.get("arguments") {
        None => Arguments::Absent,
        Some(a) => Arguments::Value(a.clone().into_owned()),
    };
    ctx.push(NewCall {
        choice: 0,
        kind: CallKind::Function,
        call_id: Some(call_id),
        name: walk::req_str(params, "name", &p_at)?.to_owned(),
        arguments,
        pointer: at.to_owned(),
        arguments_pointer: key(&p_at, "arguments"),
    })
}
