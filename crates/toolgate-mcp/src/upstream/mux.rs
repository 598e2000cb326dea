//! Several upstreams joined into one server for the proxy (HTTP mode).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncBufRead, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::mpsc;
use toolgate_json::{canonical, Object, ParseOptions, Value};

use super::{write_line, writeln_stderr};
use crate::frame::{self, Line, RequestId};

/// The `_meta` member the join sets on each tool of a joined `tools/list`:
/// the name of the upstream serving it, for the proxy's pins (set by the
/// join whatever the upstream sent; the client is never shown `_meta`).
pub(crate) const ROUTE_META: &str = "io.toolgate/upstream";

/// Several upstreams as one server: `initialize` and `tools/list` go to
/// each (the first upstream's answer to the former, the tools of all to
/// the latter, a name two upstreams offer dropped as ambiguous);
/// `tools/call` to the upstream whose list offered the tool (else the one
/// whose prefix it bears); notifications to all; any other request to the
/// first upstream. Server requests get ids of the mux's own, so the
/// client's answer goes back to the upstream that asked. When one
/// upstream closes, the whole server closes (pending calls get an error).
pub(super) struct Mux {
    pub(super) parse: ParseOptions,
    pub(super) max_frame_bytes: usize,
    pub(super) inputs: Vec<tokio::sync::Mutex<Box<dyn AsyncWrite + Unpin + Send>>>,
    pub(super) prefixes: Vec<String>,
    pub(super) names: Vec<String>,
    pub(super) state: Mutex<MuxState>,
    pub(super) out: mpsc::Sender<Option<String>>,
}

#[derive(Default)]
pub(super) struct MuxState {
    /// Requests sent to every upstream, by id: the method and the answers.
    fanout: HashMap<RequestId, FanOut>,
    /// Which upstream offers each (shown) tool name.
    routes: HashMap<String, usize>,
    /// Names two upstreams offer: hidden, and their calls refused.
    ambiguous: std::collections::HashSet<String>,
    /// Server requests by the mux's id: the upstream and its own id.
    asked: HashMap<RequestId, (usize, Value<'static>)>,
    next: u64,
}

struct FanOut {
    list: bool,
    answers: Vec<Option<Value<'static>>>,
}

impl Mux {
    fn state(&self) -> std::sync::MutexGuard<'_, MuxState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    async fn send_to(&self, i: usize, line: &str) {
        if let Some(input) = self.inputs.get(i) {
            let mut w = input.lock().await;
            let _ = write_line(&mut *w, line).await;
        }
    }

    /// Proxy → upstreams.
    pub(super) async fn outward<R: AsyncBufRead + Unpin>(self: Arc<Self>, mut r: R) {
        while let Ok(Some(Line::Frame(bytes))) =
            frame::read_line(&mut r, self.max_frame_bytes).await
        {
            let Ok(v) = self.parse.parse(&bytes).map(Value::into_owned) else {
                continue;
            };
            let line = String::from_utf8_lossy(&bytes).into_owned();
            let id = v.pointer("/id").and_then(RequestId::from_value);
            let method = v.pointer("/method").and_then(Value::as_str);
            match (id, method) {
                (Some(id), Some(m @ ("initialize" | "tools/list"))) => {
                    self.state().fanout.insert(
                        id,
                        FanOut {
                            list: m == "tools/list",
                            answers: vec![None; self.inputs.len()],
                        },
                    );
                    for i in 0..self.inputs.len() {
                        self.send_to(i, &line).await;
                    }
                }
                (Some(id), Some("tools/call")) => {
                    let name = v
                        .pointer("/params/name")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    match self.route(name) {
                        Some(target) => self.send_to(target, &line).await,
                        None => {
                            let refusal = frame::error_answer(
                                Some(&id),
                                frame::INVALID_PARAMS,
                                "refused by toolgate: unknown_upstream_tool",
                            );
                            let _ = self.out.send(Some(refusal)).await;
                        }
                    }
                }
                (Some(_), Some(_)) => self.send_to(0, &line).await,
                (None, Some(_)) => {
                    for i in 0..self.inputs.len() {
                        self.send_to(i, &line).await;
                    }
                }
                (Some(id), None) => {
                    // The client's answer to a server request.
                    let asked = self.state().asked.remove(&id);
                    if let Some((i, original)) = asked {
                        if let Some(mut o) = v.as_object().cloned() {
                            o.insert("id", original);
                            self.send_to(i, &canonical::to_string(&Value::Object(o)))
                                .await;
                        }
                    }
                }
                (None, None) => {}
            }
        }
        for i in 0..self.inputs.len() {
            if let Some(input) = self.inputs.get(i) {
                let _ = input.lock().await.shutdown().await;
            }
        }
    }

    /// The upstream whose namespace `name` is in: the one with the longest
    /// prefix `name` starts with; `None` when no prefix matches.
    fn namespace_of(&self, name: &str) -> Option<usize> {
        self.prefixes
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.is_empty() && name.starts_with(p.as_str()))
            .max_by_key(|(_, p)| p.len())
            .map(|(i, _)| i)
    }

    /// The upstream a call of `name` goes to.
    fn route(&self, name: &str) -> Option<usize> {
        let state = self.state();
        if let Some(i) = state.routes.get(name) {
            return Some(*i);
        }
        if state.ambiguous.contains(name) {
            return None;
        }
        drop(state);
        self.prefixes
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.is_empty() && name.starts_with(p.as_str()))
            .max_by_key(|(_, p)| p.len())
            .or_else(|| self.prefixes.iter().enumerate().find(|(_, p)| p.is_empty()))
            .map(|(i, _)| i)
    }

    /// Upstream `i` → proxy.
    pub(super) async fn inward(
        self: Arc<Self>,
        i: usize,
        mut r: Box<dyn AsyncBufRead + Unpin + Send>,
    ) {
        while let Ok(Some(line)) = frame::read_line(&mut r, self.max_frame_bytes).await {
            let Line::Frame(bytes) = line else { continue };
            let Ok(v) = self.parse.parse(&bytes).map(Value::into_owned) else {
                // The proxy's server pump refuses it (and says why).
                let _ = self
                    .out
                    .send(Some(String::from_utf8_lossy(&bytes).into_owned()))
                    .await;
                continue;
            };
            let id = v.pointer("/id").and_then(RequestId::from_value);
            let is_request = v.pointer("/method").is_some();
            let out = match (id, is_request) {
                (Some(id), false) => self.answer(i, id, v),
                (Some(_), true) => {
                    // A server request: the mux's own id.
                    let mut state = self.state();
                    state.next += 1;
                    let own = format!("tg-mux-{}", state.next);
                    let original = v.pointer("/id").cloned().unwrap_or(Value::Null);
                    if let Some(own_id) = RequestId::from_value(&Value::String(own.clone().into()))
                    {
                        state.asked.insert(own_id, (i, original));
                    }
                    drop(state);
                    v.as_object().cloned().map(|mut o| {
                        o.insert("id", Value::String(own.into()));
                        canonical::to_string(&Value::Object(o))
                    })
                }
                _ => Some(String::from_utf8_lossy(&bytes).into_owned()),
            };
            if let Some(line) = out {
                if self.out.send(Some(line)).await.is_err() {
                    return;
                }
            }
        }
        // One upstream is gone: the whole server is.
        let name = self.names.get(i).map_or("?", String::as_str);
        let _ = writeln_stderr(&format!("the upstream `{name}` closed"));
        let _ = self.out.send(None).await;
    }

    /// An answer of upstream `i`: passed on, or kept until every upstream
    /// answered a fanned-out request.
    fn answer(&self, i: usize, id: RequestId, v: Value<'static>) -> Option<String> {
        let mut state = self.state();
        let Some(f) = state.fanout.get_mut(&id) else {
            return Some(canonical::to_string(&v));
        };
        if let Some(slot) = f.answers.get_mut(i) {
            *slot = Some(v);
        }
        if f.answers.iter().any(Option::is_none) {
            return None;
        }
        let f = state.fanout.remove(&id)?;
        let answers: Vec<Value<'static>> = f.answers.into_iter().flatten().collect();
        if !f.list {
            return answers.first().map(canonical::to_string);
        }
        // The tools of every upstream; a name offered twice is dropped.
        let mut seen: HashMap<String, Option<usize>> = HashMap::new();
        let mut tools: Vec<(usize, Value<'static>)> = Vec::new();
        for (u, a) in answers.iter().enumerate() {
            let Some(list) = a.pointer("/result/tools").and_then(Value::as_array) else {
                continue;
            };
            for t in list {
                let Some(name) = t.pointer("/name").and_then(Value::as_str) else {
                    continue;
                };
                match seen.get(name) {
                    Some(_) => {
                        let shown: String = name.chars().take(64).collect();
                        let _ = writeln_stderr(&format!(
                            "tools/list: `{}` hidden: offered by two upstreams",
                            shown.escape_debug()
                        ));
                        seen.insert(name.to_owned(), None);
                    }
                    None => {
                        seen.insert(name.to_owned(), Some(u));
                    }
                }
                tools.push((u, t.clone()));
            }
        }
        state.routes.clear();
        state.ambiguous.clear();
        let mut kept = Vec::new();
        for (_, t) in tools {
            let name = t.pointer("/name").and_then(Value::as_str).unwrap_or("");
            if let Some(Some(u)) = seen.get(name) {
                // Routing is identity: a name in another upstream's
                // namespace is that upstream's, whoever lists it.
                if let Some(owner) = self.namespace_of(name).filter(|o| o != u) {
                    let shown: String = name.chars().take(64).collect();
                    let owner = self.names.get(owner).map_or("?", String::as_str);
                    let _ = writeln_stderr(&format!(
                        "tools/list: `{}` hidden: its name is in the namespace of the upstream `{owner}`",
                        shown.escape_debug()
                    ));
                    seen.insert(name.to_owned(), None);
                }
            }
            match seen.get(name) {
                Some(Some(u)) => {
                    state.routes.insert(name.to_owned(), *u);
                    // The upstream serving it, for the proxy's pins: set
                    // here whatever the upstream put in `_meta`.
                    let mut o = t.as_object().cloned().unwrap_or_default();
                    let mut meta = o
                        .get("_meta")
                        .and_then(Value::as_object)
                        .cloned()
                        .unwrap_or_else(Object::new);
                    let upstream = self.names.get(*u).cloned().unwrap_or_default();
                    meta.insert(ROUTE_META, Value::String(upstream.into()));
                    o.insert("_meta", Value::Object(meta));
                    kept.push(Value::Object(o));
                }
                _ => {
                    state.ambiguous.insert(name.to_owned());
                }
            }
        }
        let first = answers
            .iter()
            .find(|a| a.pointer("/result/tools").is_some())
            .or_else(|| answers.first())?;
        let mut o = first.as_object()?.clone();
        if let Some(Value::Object(result)) = o.get_mut("result") {
            result.remove("nextCursor");
            result.insert("tools", Value::Array(kept));
        }
        Some(canonical::to_string(&Value::Object(o)))
    }
}
