"""A canned OpenAI Responses API for the end-to-end tests (agents_e2e.rs).

Usage: python3 responses_server.py COMMAND LOG

Listens on a free loopback port and prints it on the first line of standard
output. To every `POST .../responses` offering a shell tool whose last input
item is not a tool result it answers (streamed, as Codex CLI asks) with one
call of that tool running COMMAND; to every other request, with the text
"done". Each request, with the tool results it carries, is appended to LOG
as a JSON line, so the test reads what the agent sent back.
"""

import http.server
import json
import sys

COMMAND, LOG = sys.argv[1], sys.argv[2]
calls = {"n": 0}


def log(record):
    with open(LOG, "a") as f:
        f.write(json.dumps(record) + "\n")


def shell_call(tools):
    """The name and arguments of a call running COMMAND with the shell tool offered."""
    names = [t.get("name") for t in tools]
    if "exec_command" in names:
        return "exec_command", {"cmd": COMMAND}
    if "shell_command" in names:
        return "shell_command", {"command": COMMAND}
    if "shell" in names:
        return "shell", {"command": ["bash", "-lc", COMMAND]}
    return None


def sse(events):
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        if not self.path.endswith("/responses"):
            return self.reply(b'{"error": {"message": "not canned"}}', "application/json", 404)
        items = request.get("input", [])
        last = items[-1] if items else {}
        results = [i for i in items if i.get("type") == "function_call_output"]
        last_is_result = last.get("type") == "function_call_output"
        call = shell_call(request.get("tools", []))
        log({"path": self.path, "tools": [t.get("name") for t in request.get("tools", [])],
             "tool_results": results})
        if call and not last_is_result:
            calls["n"] += 1
            name, arguments = call
            item = {"type": "function_call", "id": f"fc_e2e_{calls['n']:04d}", "status": "completed",
                    "call_id": f"call_e2e_{calls['n']:04d}", "name": name, "arguments": json.dumps(arguments)}
        else:
            item = {"type": "message", "id": "msg_e2e", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "done", "annotations": []}]}
        response = {"id": f"resp_e2e_{calls['n']:04d}", "object": "response", "status": "completed",
                    "model": request.get("model"), "output": [item],
                    "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                              "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                              "total_tokens": 15}}
        self.reply(sse([
            {"type": "response.created", "response": dict(response, status="in_progress", output=[])},
            {"type": "response.output_item.added", "output_index": 0, "item": item},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": response},
        ]), "text/event-stream")

    def do_GET(self):
        self.reply(b'{"object": "list", "data": []}', "application/json", 404)

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
