"""A canned model API on loopback for the proxy's tests.

The request's `model` names what to answer:
- `file:NAME` — examples/shop/responses/NAME as it is (JSON, or SSE for `.sse`);
- `sse:NAME` — one of the streams below;
- `case:NAME` — one of the attacks in `attacks.py` (issue 28);
- `status:500`, `garbage`, `slow`, `close-mid-stream`, `drip` — faults.
Every request is appended to the file named by the second argument (one JSON
line: path, headers that matter, body), so tests can see what reached it.
Prints `port N` once listening.
"""

from __future__ import annotations

import http.server
import json
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from attacks import CASES  # noqa: E402

SHOP = Path(__file__).resolve().parents[4] / "examples" / "shop" / "responses"
LOG = Path(sys.argv[1])
LOCK = threading.Lock()


def chunk(delta: dict, finish: object = None, index: int = 0) -> str:
    body = {
        "id": "chatcmpl-t",
        "object": "chat.completion.chunk",
        "created": 1767225600,
        "model": "gpt-test",
        "choices": [{"index": index, "delta": delta, "finish_reason": finish}],
    }
    return "data: " + json.dumps(body) + "\n\n"


def openai_parallel_stream() -> str:
    """Text, then two calls in fragments: a search (allowed) and a refund
    of bob's order as alice (denied `not_owner`)."""
    out = chunk({"role": "assistant", "content": ""})
    out += chunk({"content": "Looking "})
    out += chunk({"content": "that up."})
    out += chunk({"tool_calls": [{"index": 0, "id": "call_s", "type": "function", "function": {"name": "search", "arguments": ""}}]})
    out += chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{\"query\": \"trail"}}]})
    out += chunk({"tool_calls": [{"index": 0, "function": {"arguments": " socks\", \"limit\": 5}"}}]})
    out += chunk({"tool_calls": [{"index": 1, "id": "call_r", "type": "function", "function": {"name": "refund", "arguments": ""}}]})
    out += chunk({"tool_calls": [{"index": 1, "function": {"arguments": "{\"order_id\":\"ord_2001\",\"amount_cents\":100,\"reason\":\"late\"}"}}]})
    out += chunk({}, "tool_calls")
    out += "data: [DONE]\n\n"
    return out


def openai_cut_stream() -> str:
    out = chunk({"role": "assistant", "content": ""})
    out += chunk({"tool_calls": [{"index": 0, "id": "call_s", "type": "function", "function": {"name": "search", "arguments": "{\"query\":\"so"}}]})
    return out


def anthropic_event(name: str, data: dict) -> str:
    return f"event: {name}\ndata: {json.dumps(data)}\n\n"


def anthropic_stream() -> str:
    """Text, a search (allowed, its input in fragments), a refund of bob's
    order (denied)."""
    e = anthropic_event
    out = e("message_start", {"type": "message_start", "message": {"id": "msg_t", "type": "message", "role": "assistant", "model": "claude-test", "content": [], "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}})
    out += e("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}})
    out += e("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Checking."}})
    out += e("content_block_stop", {"type": "content_block_stop", "index": 0})
    out += e("content_block_start", {"type": "content_block_start", "index": 1, "content_block": {"type": "tool_use", "id": "toolu_s", "name": "search", "input": {}}})
    out += e("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": ""}})
    out += e("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"query\": \"boo"}})
    out += e("content_block_delta", {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": "ts\"}"}})
    out += e("content_block_stop", {"type": "content_block_stop", "index": 1})
    out += e("content_block_start", {"type": "content_block_start", "index": 2, "content_block": {"type": "tool_use", "id": "toolu_r", "name": "refund", "input": {}}})
    out += e("content_block_delta", {"type": "content_block_delta", "index": 2, "delta": {"type": "input_json_delta", "partial_json": "{\"order_id\":\"ord_2001\",\"amount_cents\":100,\"reason\":\"late\"}"}})
    out += e("content_block_stop", {"type": "content_block_stop", "index": 2})
    out += e("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None}, "usage": {"output_tokens": 9}})
    out += e("message_stop", {"type": "message_stop"})
    return out


def responses_stream() -> str:
    """Text, then the metadata fetch (denied) and a docs fetch (allowed)."""
    def ev(name: str, data: dict) -> str:
        data = {"type": name, **data}
        return f"event: {name}\ndata: {json.dumps(data)}\n\n"

    msg = {"type": "message", "id": "msg_1", "status": "completed", "role": "assistant", "content": [{"type": "output_text", "text": "Fetching.", "annotations": []}]}
    bad = {"type": "function_call", "id": "fc_a", "call_id": "call_a", "name": "fetch_url", "arguments": "{\"url\":\"https://169.254.169.254/\"}", "status": "completed"}
    good = {"type": "function_call", "id": "fc_b", "call_id": "call_b", "name": "fetch_url", "arguments": "{\"url\": \"https://docs.example.com/returns\"}", "status": "completed"}
    out = ev("response.created", {"sequence_number": 1, "response": {"id": "resp_t", "object": "response", "created_at": 1767225600, "status": "in_progress", "model": "gpt-test", "output": []}})
    out += ev("response.output_item.added", {"sequence_number": 2, "output_index": 0, "item": {**msg, "status": "in_progress", "content": []}})
    out += ev("response.output_text.delta", {"sequence_number": 3, "output_index": 0, "item_id": "msg_1", "content_index": 0, "delta": "Fetching.", "logprobs": []})
    out += ev("response.output_item.done", {"sequence_number": 4, "output_index": 0, "item": msg})
    seq = 5
    for i, item in ((1, bad), (2, good)):
        out += ev("response.output_item.added", {"sequence_number": seq, "output_index": i, "item": {**item, "arguments": "", "status": "in_progress"}})
        out += ev("response.function_call_arguments.delta", {"sequence_number": seq + 1, "output_index": i, "item_id": item["id"], "delta": item["arguments"]})
        out += ev("response.function_call_arguments.done", {"sequence_number": seq + 2, "output_index": i, "item_id": item["id"], "name": item["name"], "arguments": item["arguments"]})
        out += ev("response.output_item.done", {"sequence_number": seq + 3, "output_index": i, "item": item})
        seq += 4
    out += ev("response.completed", {"sequence_number": seq, "response": {"id": "resp_t", "object": "response", "created_at": 1767225600, "status": "completed", "model": "gpt-test", "output": [msg, bad, good], "parallel_tool_calls": True}})
    return out


STREAMS = {
    "openai-parallel": openai_parallel_stream,
    "openai-cut": openai_cut_stream,
    "anthropic": anthropic_stream,
    "responses": responses_stream,
}


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def record(self, body: bytes) -> None:
        entry = {
            "path": self.path,
            "method": self.command,
            "authorization": self.headers.get("authorization"),
            "x-api-key": self.headers.get("x-api-key"),
            "x-toolgate-token": self.headers.get("x-toolgate-token"),
            "x-toolgate-session": self.headers.get("x-toolgate-session"),
            "body": body.decode("utf-8", "replace"),
        }
        with LOCK, LOG.open("a") as f:
            f.write(json.dumps(entry) + "\n")

    def send(self, status: int, ctype: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("content-type", ctype)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        self.record(b"")
        if self.path == "/v1/models":
            self.send(200, "application/json", b'{"object":"list","data":[{"id":"gpt-test","object":"model","created":1,"owned_by":"t"}]}')
        else:
            self.send(404, "application/json", b'{"error":{"message":"no","type":"invalid_request_error","param":null,"code":null}}')

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        self.record(body)
        model = json.loads(body).get("model", "")
        if model.startswith("file:"):
            name = model[5:]
            data = (SHOP / name).read_bytes()
            ctype = "text/event-stream" if name.endswith(".sse") else "application/json"
            self.send(200, ctype, data)
        elif model.startswith("case:"):
            ctype, text = CASES[model[5:]]()
            self.send(200, ctype, text.encode())
        elif model.startswith("sse:"):
            self.send(200, "text/event-stream", STREAMS[model[4:]]().encode())
        elif model == "status:500":
            self.send(500, "application/json", b'{"error":{"message":"upstream trouble","type":"server_error","param":null,"code":null}}')
        elif model == "garbage":
            self.send(200, "application/json", b"<html>not json</html>")
        elif model == "slow":
            time.sleep(4)
            self.send(200, "application/json", (SHOP / "openai-search.json").read_bytes())
        elif model == "slow-disconnect":
            # A whole, valid stream, slowly: the call first, then text, so
            # a client that leaves early leaves while the call is held.
            parts = [
                chunk({"role": "assistant", "content": ""}),
                chunk({"tool_calls": [{"index": 0, "id": "call_s", "type": "function", "function": {"name": "search", "arguments": "{\"query\":\"socks\"}"}}]}),
            ]
            parts += [chunk({"content": f"word {i} "}) for i in range(12)]
            parts += [chunk({}, "tool_calls"), "data: [DONE]\n\n"]
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            try:
                for part in parts:
                    self.wfile.write(part.encode())
                    self.wfile.flush()
                    time.sleep(0.2)
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True
        elif model in ("close-mid-stream", "drip"):
            text = STREAMS["openai-parallel"]().encode()
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("content-length", str(len(text)))
            self.end_headers()
            if model == "drip":
                # The text first, then silence past the idle timeout.
                self.wfile.write(text[: text.index(b"tool_calls")])
                self.wfile.flush()
                time.sleep(4)
            else:
                self.wfile.write(text[: len(text) * 2 // 3])
                self.wfile.flush()
            self.close_connection = True
        else:
            self.send(400, "application/json", b'{"error":{"message":"unknown model","type":"invalid_request_error","param":null,"code":null}}')


def main() -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
