"""A bare MCP stdio server (standard library only) that offers the shop's
tools (examples/shop), for `[mcp] narrow_tools`: it lists search, get_order
and refund with open schemas, and answers every call with "ok". Every
tools/call it receives is appended to the file named by env MCP_TEST_SEEN.
"""

import json
import os
import sys

OPEN = {"type": "object"}
TOOLS = [
    {"name": "search", "description": "Search.", "inputSchema": OPEN},
    {"name": "get_order", "description": "One order.", "inputSchema": OPEN},
    {"name": "refund", "description": "Refund.", "inputSchema": OPEN},
]


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": "shop", "version": "0"}}})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        path = os.environ.get("MCP_TEST_SEEN")
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps(msg["params"], sort_keys=True) + "\n")
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": "ok"}]}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such method"}})
