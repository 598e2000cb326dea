//! Google Gemini: `GenerateContentResponse` bodies, arrays of them, and their
//! event streams.

use std::collections::BTreeMap;

use toolgate_json::Value;

use super::error::{Error, ErrorCode};
use super::finding::FindingCode;
use super::finish::{self, Finish};
use super::leak::TextBuf;
use super::sse::{Event, Payload};
use super::walk::{self, key};
use super::{Arguments, CallKind, Ctx, NewCall};

/// What the chunks of one response have said so far.
#[derive(Default)]
struct State {
    /// Per candidate index: its `finishReason`, once one arrived.
    finishes: BTreeMap<usize, Option<String>>,
    texts: BTreeMap<usize, TextBuf>,
    blocked: Option<String>,
}

/// Reads one response body, or a JSON array of stream chunks.
pub(crate) fn read(v: &Value, ctx: &mut Ctx<'_>) -> Result<Finish, Error> {
    let mut state = State::default();
    match v {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                chunk(item, &walk::idx("", i), &mut state, ctx)?;
            }
            Ok(state.finish(ctx, true))
        }
        _ => {
            chunk(v, "", &mut state, ctx)?;
            Ok(state.finish(ctx, false))
        }
    }
}

/// Reads an SSE stream of chunks. Gemini has no terminal event: the stream
/// is complete when every candidate has received its `finishReason`.
pub(crate) fn read_stream(events: &[Event], ctx: &mut Ctx<'_>) -> Result<Finish, Error> {
    let mut state = State::default();
    let mut cut = false;
    for event in events {
        match event.payload(ctx.parse_options())? {
            Payload::Json(v) => chunk(&v, &event.pointer(), &mut state, ctx)?,
            Payload::Cut => {
                cut = true;
                break;
            }
            Payload::Done => return Err(Error::new(ErrorCode::StreamProtocol, event.pointer())),
        }
    }
    let finish = state.finish(ctx, true);
    Ok(if cut {
        finish.worst(Finish::stream_truncated())
    } else {
        finish
    })
}

fn chunk(v: &Value, at: &str, state: &mut State, ctx: &mut Ctx<'_>) -> Result<(), Error> {
    let o = walk::as_object(v, at)?;
    if !o.contains_key("candidates") && !o.contains_key("promptFeedback") {
        return Err(Error::new(ErrorCode::MissingField, key(at, "candidates")));
    }
    let pf_at = key(at, "promptFeedback");
    if let Some(pf) = walk::opt_object(o, "promptFeedback", at)? {
        if let Some(reason) = walk::opt_str(pf, "blockReason", &pf_at)? {
            state.blocked = Some(reason.to_owned());
        }
    }
    let cs_at = key(at, "candidates");
    for (c, candidate) in walk::opt_array(o, "candidates", at)?.iter().enumerate() {
        let c_at = walk::idx(&cs_at, c);
        let cand = walk::as_object(candidate, &c_at)?;
        let index = walk::opt_index(cand, "index", &c_at, c)?;
        let slot = state.finishes.entry(index).or_default();
        if let Some(r) = walk::opt_str(cand, "finishReason", &c_at)? {
            *slot = Some(r.to_owned());
        }
        let content_at = key(&c_at, "content");
        let Some(content) = walk::opt_object(cand, "content", &c_at)? else {
            continue;
        };
        let parts_at = key(&content_at, "parts");
        for (p, part) in walk::opt_array(content, "parts", &content_at)?
            .iter()
            .enumerate()
        {
            let p_at = walk::idx(&parts_at, p);
            let part = walk::as_object(part, &p_at)?;
            if let Some(t) = walk::opt_str(part, "text", &p_at)? {
                state
                    .texts
                    .entry(index)
                    .or_default()
                    .push(t, key(&p_at, "text"));
            }
            if part.contains_key("executableCode") {
                ctx.findings.push(FindingCode::ServerSideCall, p_at.clone());
            }
            let fc_at = key(&p_at, "functionCall");
            let Some(fc) = walk::opt_object(part, "functionCall", &p_at)? else {
                continue;
            };
            if fc.contains_key("partialArgs") || fc.contains_key("willContinue") {
                return Err(Error::new(ErrorCode::Unsupported, fc_at));
            }
            let arguments = match fc.get("args") {
                None => Arguments::Absent,
                Some(a) => Arguments::Value(a.clone().into_owned()),
            };
            ctx.push(NewCall {
                choice: index,
                kind: CallKind::Function,
                call_id: walk::opt_str(fc, "id", &fc_at)?.map(str::to_owned),
                name: walk::req_str(fc, "name", &fc_at)?.to_owned(),
                arguments,
                arguments_pointer: key(&fc_at, "args"),
                pointer: fc_at,
            })?;
        }
    }
    Ok(())
}

impl State {
    /// The worst finish over the candidates. A candidate without a
    /// `finishReason` is `missing` (unknown) in a whole body, and
    /// `stream_truncated` in a stream.
    fn finish(self, ctx: &mut Ctx<'_>, streamed: bool) -> Finish {
        for buf in self.texts.values() {
            buf.scan_into(&mut ctx.findings);
        }
        let mut finish: Option<Finish> = self.blocked.as_deref().map(|r| Finish::ContentFiltered {
            reason: walk::token(r),
        });
        for reason in self.finishes.values() {
            let f = match reason {
                None if streamed => Finish::stream_truncated(),
                r => finish::gemini(r.as_deref()),
            };
            finish = Some(match finish {
                None => f,
                Some(prev) => prev.worst(f),
            });
        }
        finish.unwrap_or_else(|| {
            if streamed {
                Finish::stream_truncated()
            } else {
                Finish::unknown("missing")
            }
        })
    }
}
