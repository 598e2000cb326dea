"""An MCP client (the official Python SDK, unchanged, 2026-07-28 era)
calling a tool whose server asks for input first (tests/mcp/ask_server.py),
through `toolgate mcp` over stdio:

    python ask_client.py TOOLGATE_BIN CONFIG SERVER_PY [refund]

The SDK's own loop answers the server's elicitation (the callback accepts
with {"ok": true}) and retries. One JSON object per step on standard
output: `sum` with the result and the elicitations the callback was given.
With `refund`, it then calls `refund`, which toolgate holds for a human:
the progress callback approves the approval its message names (`toolgate
approvals approve`), then the server asks for input as for `sum`
(`refund` step, with the approvals approved).
"""

import asyncio
import json
import os
import re
import subprocess
import sys

from mcp import Client, StdioServerParameters
from mcp_types import ElicitResult


def emit(step: str, **fields: object) -> None:
    print(json.dumps({"step": step, **fields}, sort_keys=True), flush=True)


async def main() -> None:
    toolgate, config, server = sys.argv[1:4]
    params = StdioServerParameters(
        command=toolgate,
        args=["mcp", "--config", config, "--", sys.executable, server],
        env={k: os.environ[k] for k in ("MCP_TEST_SEEN",) if k in os.environ},
    )
    elicited: list = []

    async def on_elicit(context, p):
        elicited.append({"mode": p.mode, "message": p.message})
        return ElicitResult(action="accept", content={"ok": True})

    async with Client(
        params, mode="2026-07-28", elicitation_callback=on_elicit, input_required_max_rounds=3
    ) as client:
        result = await client.call_tool("sum", {"a": 2, "b": 3})
        texts = [b.text for b in result.content if getattr(b, "type", None) == "text"]
        emit("sum", is_error=bool(result.is_error), text="\n".join(texts), elicited=elicited)
        if len(sys.argv) > 4 and sys.argv[4] == "refund":
            approved: list = []

            async def on_progress(progress, total, message):
                m = re.search(r"approve approval (\d+)$", message or "")
                if m and m.group(1) not in approved:
                    approved.append(m.group(1))
                    subprocess.run(
                        [toolgate, "approvals", "approve", m.group(1), "--config", config],
                        capture_output=True,
                    )

            result = await client.call_tool("refund", {"amount": 5}, progress_callback=on_progress)
            texts = [b.text for b in result.content if getattr(b, "type", None) == "text"]
            emit("refund", is_error=bool(result.is_error), text="\n".join(texts), approved=approved)
    emit("done")


if __name__ == "__main__":
    asyncio.run(main())
