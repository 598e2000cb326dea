"""A canned Anthropic Messages API for the end-to-end tests (agents_e2e.rs).

Usage: python3 anthropic_server.py COMMAND LOG

Listens on a free loopback port and prints it on the first line of standard
output. To every request offering the `Bash` tool whose last message is not
a tool result it answers (streamed, as Claude Code asks) with one `Bash`
call running COMMAND; to every other request, with the text "done". Each
request, and each tool result it carries, is appended to LOG as a JSON line,
so the test reads what the agent sent back.
"""

import http.server
import json
import sys

COMMAND, LOG = sys.argv[1], sys.argv[2]
calls = {"n": 0}


def log(record):
    with open(LOG, "a") as f:
        f.write(json.dumps(record) + "\n")


def sse(events):
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in events).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        if "count_tokens" in self.path:
            return self.reply(b'{"input_tokens": 10}', "application/json")
        messages = request.get("messages", [])
        last = messages[-1].get("content") if messages else None
        results = [c for c in last if c.get("type") == "tool_result"] if isinstance(last, list) else []
        log({"path": self.path, "tool_results": results})
        tools = [t.get("name") for t in request.get("tools", [])]
        if "Bash" in tools and not results:
            calls["n"] += 1
            block = {"type": "tool_use", "id": f"toolu_e2e_{calls['n']:04d}", "name": "Bash", "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps({"description": "Run it", "command": COMMAND})}
            stop = "tool_use"
        else:
            block = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": "done"}
            stop = "end_turn"
        message = {"id": "msg_e2e", "type": "message", "role": "assistant", "model": request.get("model"),
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": 10, "output_tokens": 1}}
        if not request.get("stream"):
            block = dict(block)
            if block["type"] == "text":
                block["text"] = "done"
            else:
                block["input"] = json.loads(delta["partial_json"])
            message.update(content=[block], stop_reason=stop)
            return self.reply(json.dumps(message).encode(), "application/json")
        self.reply(sse([
            ("message_start", {"type": "message_start", "message": message}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ]), "text/event-stream")

    def do_GET(self):
        self.reply(b"{}", "application/json", 404)

    def reply(self, data, content_type, status=200):
        self.send_response(status)
        self.send_header("content-type", content_type)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
