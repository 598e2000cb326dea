//! The three tasks of a running proxy: the writer of each side, and the
//! readers of the client's and the server's lines.

#[allow(
    clippy::wildcard_imports,
    reason = "the proxy's shared state and its helpers"
)]
use super::*;

/// Writes each line and a `\n`, flushing after each, until `Close` or the
/// end of the channel; then shuts the writer down.
pub(super) async fn write_lines<W: AsyncWrite + Unpin>(mut w: W, mut rx: mpsc::Receiver<Out>) {
    while let Some(Out::Line(line)) = rx.recv().await {
        if w.write_all(line.as_bytes()).await.is_err()
            || w.write_all(b"\n").await.is_err()
            || w.flush().await.is_err()
        {
            break;
        }
    }
    let _ = w.shutdown().await;
}

/// Frames from the client.
pub(super) async fn client_pump<R: AsyncBufRead + Unpin>(
    shared: Arc<Shared>,
    mut r: R,
    sides: Sides,
) {
    loop {
        let line = match frame::read_line(&mut r, shared.options.max_frame_bytes).await {
            Ok(Some(line)) => line,
            Ok(None) | Err(_) => return,
        };
        let bytes = match line {
            Line::Frame(bytes) => bytes,
            Line::TooLong => {
                finding("client frame refused: frame_too_large");
                shared.refuse_frame("frame_too_large");
                sides
                    .to_client(frame::FrameError::too_long().answer())
                    .await;
                continue;
            }
        };
        match frame::decode(&bytes, &shared.parse) {
            Err(e) => {
                finding(&format!("client frame refused: {}", e.reason()));
                shared.refuse_frame(e.reason());
                // Never forwarded. A request whose id can be told gets the
                // error with its id; anything else with a null id.
                sides.to_client(e.answer()).await;
            }
            Ok(Message::Request { id, .. }) if shared.is_taken(&id) => {
                // The id of a request still pending: its answer would be
                // taken for the other's (a result would skip the checks of
                // a call's result, or get them wrongly).
                finding(&format!("client request refused: id {id} is pending"));
                shared.refuse_frame("duplicate_request_id");
                sides
                    .to_client(frame::error_answer(
                        Some(&id),
                        frame::INVALID_REQUEST,
                        "refused by toolgate: duplicate_request_id",
                    ))
                    .await;
            }
            Ok(Message::Request { id, .. }) if shared.is_full() => {
                // Bounded: a client that never waits for its answers cannot
                // grow the connection's memory.
                finding("client request refused: too_many_requests");
                shared.refuse_frame("too_many_requests");
                sides
                    .to_client(frame::error_answer(
                        Some(&id),
                        frame::INTERNAL_ERROR,
                        "refused by toolgate: too_many_requests",
                    ))
                    .await;
            }
            Ok(Message::Request { id, method, value }) if method == "tools/call" => {
                let shared = Arc::clone(&shared);
                let sides = sides.clone();
                // Decided off the pump: the store writes block.
                let Some(ctl) = shared.start_call(&id) else {
                    continue;
                };
                tokio::spawn(async move {
                    Arc::clone(&shared)
                        .call(id.clone(), value, bytes, sides, Arc::clone(&ctl))
                        .await;
                    shared.end_call(&id, &ctl);
                });
            }
            Ok(Message::Request { id, method, value }) => {
                // Only the documented methods pass ([`reads`]).
                let read = match reads::client_request(&method, &value) {
                    Ok(read) => read,
                    Err(()) => {
                        shared.refuse_at("mcp client request", reads::refused_code(&method));
                        sides.to_client(reads::refused_method(&id, &method)).await;
                        continue;
                    }
                };
                shared.remember_envelope(&value);
                let kind = match read {
                    _ if method == "tools/list" => Pending::List {
                        paged: value.pointer("/params/cursor").is_some(),
                    },
                    Some(read) => Pending::Read(read),
                    None => Pending::Other,
                };
                shared.lock().pending.insert(id, kind);
                sides.to_server(lossless(bytes)).await;
            }
            Ok(Message::Notification { method }) if method == "notifications/cancelled" => {
                // A call of the client's not forwarded yet is cancelled
                // here (the server never heard of it); any other goes on.
                let target = cancelled_request(&bytes, &shared.parse);
                let mine = match &target {
                    Some(id) => shared.cancel(id, "the client cancelled the call").await,
                    None => false,
                };
                if !mine {
                    sides.to_server(lossless(bytes)).await;
                }
            }
            Ok(Message::Notification { method })
                if !reads::CLIENT_NOTIFICATIONS.contains(&method.as_str()) =>
            {
                // Off the pass list: dropped, audited.
                finding("client notification dropped: notification_not_passed");
                shared.refuse_at("mcp client notification", "notification_not_passed");
            }
            Ok(Message::Response { id, .. }) => {
                // Only an answer to a server request the proxy forwarded
                // reaches the server, once.
                if shared.lock().server_pending.remove(&id) {
                    sides.to_server(lossless(bytes)).await;
                } else {
                    finding(&format!(
                        "client response to no pending server request dropped (id {id})"
                    ));
                    shared.refuse_at("mcp client response", "response_not_pending");
                }
            }
            Ok(Message::Notification { .. }) => {
                sides.to_server(lossless(bytes)).await;
            }
        }
    }
}

/// Frames from the server.
pub(super) async fn server_pump<R: AsyncBufRead + Unpin>(
    shared: Arc<Shared>,
    mut r: R,
    sides: Sides,
) {
    loop {
        let line = match frame::read_line(&mut r, shared.options.max_frame_bytes).await {
            Ok(Some(line)) => line,
            Ok(None) | Err(_) => return,
        };
        let bytes = match line {
            Line::Frame(bytes) => bytes,
            Line::TooLong => {
                finding("server frame refused: frame_too_large");
                continue;
            }
        };
        match frame::decode(&bytes, &shared.parse) {
            Err(e) => {
                finding(&format!("server frame refused: {}", e.reason()));
                if e.id().is_some() {
                    // A request of the server's: it gets the error.
                    sides.to_server(e.answer()).await;
                }
            }
            Ok(Message::Response { id, value }) => {
                let pending = shared.lock().pending.remove(&id);
                match pending {
                    None => finding(&format!(
                        "server response to no pending request dropped (id {id})"
                    )),
                    Some(Pending::Other) => sides.to_client(lossless(bytes)).await,
                    Some(Pending::Read(read)) => {
                        let line = shared.read_answer(&id, &value, read).await;
                        sides.to_client(line).await;
                    }
                    Some(Pending::List { paged }) => {
                        let paged = paged || value.pointer("/result/nextCursor").is_some();
                        if paged {
                            // One page of several: checked against the
                            // whole catalog, which the proxy reads itself
                            // (off this pump, which reads those answers).
                            let shared = Arc::clone(&shared);
                            let sides = sides.clone();
                            tokio::spawn(async move {
                                let line = shared.filter_list(&id, &value, Some(&sides)).await;
                                sides.to_client(line).await;
                            });
                        } else {
                            let line = shared.filter_list(&id, &value, None).await;
                            sides.to_client(line).await;
                        }
                    }
                    Some(Pending::OwnList) => shared.own_list_answered(&value, &sides).await,
                    Some(Pending::Call {
                        tool,
                        call_id,
                        approved,
                    }) => {
                        let line = shared
                            .call_result(&id, &value, &tool, &call_id, approved)
                            .await;
                        sides.to_client(line).await;
                    }
                }
            }
            Ok(Message::Notification { method })
                if method == "notifications/tools/list_changed" =>
            {
                // Checked before the client hears of it.
                shared.relist(&sides, Some(lossless(bytes))).await;
            }
            Ok(Message::Request { id, method, value }) => {
                // Only the documented server requests pass, read first.
                match shared
                    .server_request(&id, &method, &value, lossless(bytes))
                    .await
                {
                    Ok(line) => {
                        // Noted before the client can answer it; a server
                        // that floods requests its client never answers is
                        // refused past the cap.
                        let noted = {
                            let mut state = shared.lock();
                            let fits = state.server_pending.len() < MAX_SERVER_REQUESTS
                                || state.server_pending.contains(&id);
                            if fits {
                                state.server_pending.insert(id.clone());
                            }
                            fits
                        };
                        if noted {
                            sides.to_client(line).await;
                        } else {
                            finding("server request refused: too_many_pending_requests");
                            shared.refuse_at("mcp server request", "too_many_pending_requests");
                            sides
                                .to_server(frame::error_answer(
                                    Some(&id),
                                    frame::INTERNAL_ERROR,
                                    "refused by toolgate: too_many_pending_requests",
                                ))
                                .await;
                        }
                    }
                    Err(answer) => sides.to_server(answer).await,
                }
            }
            Ok(Message::Notification { method }) if method.starts_with("notifications/tasks/") => {
                finding("server notification dropped: toolgate does not support tasks");
                shared.refuse_at("mcp server notification", "tasks_not_supported");
            }
            Ok(Message::Notification { method })
                if !reads::SERVER_NOTIFICATIONS.contains(&method.as_str()) =>
            {
                // Off the pass list: dropped, audited.
                finding("server notification dropped: notification_not_passed");
                shared.refuse_at("mcp server notification", "notification_not_passed");
            }
            Ok(Message::Notification { .. }) => {
                sides.to_client(lossless(bytes)).await;
            }
        }
    }
}
