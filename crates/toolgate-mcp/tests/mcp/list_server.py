"""A bare MCP stdio server (standard library only) that lists the tools
given as a JSON array in its first argument and answers every call with
"NAME ran". Every tools/call it receives is appended to the file named by
env MCP_TEST_SEEN, with the server's name (its second argument) as
`server`. With a third argument N, tools/list is paginated: N tools a
page, `nextCursor` naming the next page.
"""

import json
import os
import sys

TOOLS = json.loads(sys.argv[1])
NAME = sys.argv[2] if len(sys.argv) > 2 else "list"
PAGE = int(sys.argv[3]) if len(sys.argv) > 3 else 0


def send(message):
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    method, mid = msg.get("method"), msg.get("id")
    if mid is None or method is None:
        continue
    if method == "initialize":
        send({"jsonrpc": "2.0", "id": mid, "result": {
            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
            "serverInfo": {"name": NAME, "version": "0"}}})
    elif method == "tools/list" and PAGE:
        start = int((msg.get("params") or {}).get("cursor") or 0)
        result = {"tools": TOOLS[start:start + PAGE]}
        if start + PAGE < len(TOOLS):
            result["nextCursor"] = str(start + PAGE)
        send({"jsonrpc": "2.0", "id": mid, "result": result})
    elif method == "tools/list":
        send({"jsonrpc": "2.0", "id": mid, "result": {"tools": TOOLS}})
    elif method == "tools/call":
        path = os.environ.get("MCP_TEST_SEEN")
        if path:
            with open(path, "a", encoding="utf-8") as f:
                f.write(json.dumps({"server": NAME, **msg["params"]}, sort_keys=True) + "\n")
        text = msg["params"]["name"] + " ran"
        send({"jsonrpc": "2.0", "id": mid, "result": {"content": [{"type": "text", "text": text}]}})
    else:
        send({"jsonrpc": "2.0", "id": mid, "error": {"code": -32601, "message": "no such method"}})
