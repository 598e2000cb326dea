"""The canned model API of `canned_upstream.py`, with what the request-side
scenarios (`sdk_request.py`) need on top:

- every response carries the headers a real API sends (request ids,
  rate-limit state, processing time) and two it should not leak
  (`set-cookie`, `x-internal-host`);
- `POST /v1/messages/count_tokens`, `/v1/responses/input_tokens`,
  `/v1/embeddings`, `GET /v1/models/{id}`: small canned answers;
- `GET /v1/responses/{id}` and `/v1/chat/completions/{id}`: a stored
  response holding a call (the proxy must never hand it on);
- model `continue`: a Responses turn that continues `previous_response_id`
  and, as the real API does, answers 400 when an earlier call of that
  response has no output in the input;
- model `legacy-function-call`: a chat answer with a message-level
  `function_call` refunding bob's order;
- model `echo` (and any `deepseek…` model): a plain chat answer (the
  request is in the log).

Usage: request_upstream.py LOG. Prints `port N` once listening.
"""

from __future__ import annotations

import json
import http.server

import canned_upstream as canned

# The calls of the canned Responses answers the proxy may withhold, by
# response id (`file:responses-fetch-metadata.json`, `sse:responses`).
CALLS = {
    "resp_shop_07": ["call_fetch_7a", "call_fetch_7b"],
    "resp_t": ["call_a", "call_b"],
}

STORED = {
    "id": "resp_shop_07", "object": "response", "created_at": 1767225600, "status": "completed", "model": "gpt-test",
    "output": [{"type": "function_call", "id": "fc_x", "call_id": "call_fetch_7a", "name": "fetch_url",
                "arguments": "{\"url\":\"https://169.254.169.254/\"}", "status": "completed"}],
}

CHAT_ANSWER = {
    "id": "chatcmpl-e", "object": "chat.completion", "created": 1767225600, "model": "gpt-test",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "fine"}}],
}

LEGACY = {
    "id": "chatcmpl-l", "object": "chat.completion", "created": 1767225600, "model": "gpt-3.5-turbo-0613",
    "choices": [{"index": 0, "finish_reason": "function_call", "message": {
        "role": "assistant", "content": None,
        "function_call": {"name": "refund", "arguments": "{\"order_id\":\"ord_2001\",\"amount_cents\":100,\"reason\":\"late\"}"}}}],
}


def answer(previous: str) -> dict:
    return {
        "id": "resp_next", "object": "response", "created_at": 1767225600, "status": "completed", "model": "gpt-test",
        "previous_response_id": previous,
        "output": [{"type": "message", "id": "msg_n", "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": "continued", "annotations": []}]}],
        "parallel_tool_calls": True,
    }


class Handler(canned.Handler):
    def end_headers(self) -> None:
        for name, value in (
            ("x-request-id", "req_canned_openai"),
            ("request-id", "req_canned_anthropic"),
            ("openai-processing-ms", "12"),
            ("x-ratelimit-remaining-requests", "99"),
            ("anthropic-ratelimit-requests-remaining", "49"),
            ("set-cookie", "upstream-session=secret"),
            ("x-internal-host", "10.0.0.7"),
        ):
            self.send_header(name, value)
        super().end_headers()

    def json(self, status: int, body: dict) -> None:
        self.send(status, "application/json", json.dumps(body).encode())

    def do_GET(self) -> None:
        if self.path.startswith("/v1/responses/") or self.path.startswith("/v1/chat/completions/"):
            self.record(b"")
            self.json(200, STORED)
        elif self.path.startswith("/v1/models/"):
            self.record(b"")
            self.json(200, {"id": self.path.rsplit("/", 1)[1], "object": "model", "created": 1, "owned_by": "t"})
        else:
            super().do_GET()

    def do_POST(self) -> None:
        if self.path in ("/v1/messages/count_tokens", "/v1/responses/input_tokens", "/v1/embeddings"):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            self.record(body)
            if self.path == "/v1/messages/count_tokens":
                self.json(200, {"input_tokens": 12})
            elif self.path == "/v1/responses/input_tokens":
                self.json(200, {"object": "response.input_tokens", "input_tokens": 7})
            else:
                self.json(200, {"object": "list", "model": "emb", "data": [{"object": "embedding", "index": 0, "embedding": [0.5, 0.25]}],
                                "usage": {"prompt_tokens": 1, "total_tokens": 1}})
            return
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        request = json.loads(body or b"{}")
        model = request.get("model", "")
        if model.startswith("deepseek"):
            model = "echo"
        if model not in ("continue", "legacy-function-call", "echo"):
            # The base handler reads the body itself: hand it back.
            rest = self.rfile
            self.rfile = _Replay(body)
            try:
                super().do_POST()
            finally:
                self.rfile = rest
            return
        self.record(body)
        if model == "echo":
            self.json(200, CHAT_ANSWER)
        elif model == "legacy-function-call":
            self.json(200, LEGACY)
        else:
            previous = request.get("previous_response_id", "")
            items = request.get("input")
            items = items if isinstance(items, list) else []
            answered = {i.get("call_id") for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"}
            for call in CALLS.get(previous, []):
                if call not in answered:
                    self.json(400, {"error": {"message": f"No tool output found for function call {call}.",
                                              "type": "invalid_request_error", "param": "input", "code": None}})
                    return
            self.json(200, answer(previous))


class _Replay:
    """A body already read, read again."""

    def __init__(self, body: bytes) -> None:
        self.body = body

    def read(self, n: int = -1) -> bytes:
        out, self.body = self.body, b""
        return out


def main() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
