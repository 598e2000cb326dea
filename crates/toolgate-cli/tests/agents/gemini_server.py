"""A canned Gemini API for the end-to-end tests (agents_e2e.rs).

Usage: python3 gemini_server.py COMMAND LOG

Listens on a free loopback port and prints it on the first line of standard
output. To every `models/MODEL:generateContent` or `:streamGenerateContent`
request offering `run_shell_command` whose last part is not a function
response it answers with one `run_shell_command` call running COMMAND; to
every other request, with the text "done" (streamed as server-sent events
when asked). Each request, with the function responses it carries, is
appended to LOG as a JSON line, so the test reads what the agent sent back.
"""

import http.server
import json
import sys

COMMAND, LOG = sys.argv[1], sys.argv[2]
calls = {"n": 0}


def log(record):
    with open(LOG, "a") as f:
        f.write(json.dumps(record) + "\n")


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        request = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
        path = self.path.split("?")[0]
        if path.endswith(":countTokens"):
            return self.reply(b'{"totalTokens": 10}', "application/json")
        if not (path.endswith(":generateContent") or path.endswith(":streamGenerateContent")):
            return self.reply(b'{"error": {"code": 404, "message": "not canned"}}', "application/json", 404)
        contents = request.get("contents", [])
        parts = contents[-1].get("parts", []) if contents else []
        results = [p["functionResponse"] for c in contents for p in c.get("parts", []) if "functionResponse" in p]
        last_is_result = any("functionResponse" in p for p in parts)
        tools = [d.get("name") for t in request.get("tools", []) for d in t.get("functionDeclarations", [])]
        log({"path": path, "tools": tools, "tool_results": results})
        if "run_shell_command" in tools and not last_is_result:
            calls["n"] += 1
            part = {"functionCall": {"id": f"call_e2e_{calls['n']:04d}", "name": "run_shell_command",
                                     "args": {"command": COMMAND, "description": "Run it"}}}
        else:
            part = {"text": "done"}
        body = {"candidates": [{"content": {"role": "model", "parts": [part]}, "finishReason": "STOP", "index": 0}],
                "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
                "modelVersion": "canned"}
        if path.endswith(":streamGenerateContent"):
            return self.reply(f"data: {json.dumps(body)}\r\n\r\n".encode(), "text/event-stream")
        self.reply(json.dumps(body).encode(), "application/json")

    def do_GET(self):
        self.reply(b'{"error": {"code": 404, "message": "not canned"}}', "application/json", 404)

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
