"""An MCP client (the official Python SDK, unchanged) that abandons a call
toolgate holds for a human, as an SDK user does: the task awaiting
`call_tool` is cancelled, and the SDK says so to the proxy its own way
(`notifications/cancelled` over stdio and over 2025-11-25 HTTP; over
2026-07-28 HTTP it aborts the request's POST).

    python cancel_client.py TOOLGATE_BIN CONFIG TARGET MODE [TOKEN]

TARGET is `stdio:SERVER_PY` (toolgate mcp started over stdio in front of
SERVER_PY) or the URL of `toolgate mcp --listen`; MODE is `legacy` or
`2026-07-28`; TOKEN is the bearer token for a URL. One JSON object per
step on standard output (crates/toolgate-cli/tests read them):

- held: the approval the held call waits for (from its progress message);
- withdrawn: the approval's state once it left `pending` (read with
  `toolgate approvals show`, for at most 20 s), or `pending` if it never did;
- approve_after: a human approving it afterwards (exit code, what was said);
- add_after: another call on the same connection still works.
"""

import asyncio
import json
import re
import subprocess
import sys
import time

from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

ARGS = {"order_id": "ord_7", "amount_cents": 700}


def emit(step: str, **fields: object) -> None:
    print(json.dumps({"step": step, **fields}, sort_keys=True), flush=True)


def show_state(toolgate: str, config: str, approval: str) -> str:
    out = subprocess.run(
        [toolgate, "approvals", "show", approval, "--config", config],
        capture_output=True,
        text=True,
    )
    m = re.search(r"^state:\s+(\w+)", out.stdout, re.M)
    return m.group(1) if m else "unknown"


async def scenario(client: Client, toolgate: str, config: str) -> None:
    emit("era", protocol_version=client.protocol_version)
    approval: dict = {}
    seen = asyncio.Event()

    async def on_progress(progress, total, message):
        m = re.search(r"approve approval (\d+)$", message or "")
        if m and "id" not in approval:
            approval["id"] = m.group(1)
            seen.set()

    task = asyncio.create_task(
        client.call_tool("refund", ARGS, progress_callback=on_progress)
    )
    await asyncio.wait_for(seen.wait(), 30)
    emit("held", approval=approval["id"])
    task.cancel()
    try:
        await task
        emit("cancel_ignored")
    except asyncio.CancelledError:
        pass
    # The proxy withdraws the approval when it hears of the cancellation;
    # nothing here can wait on that but its state.
    state = "pending"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        state = show_state(toolgate, config, approval["id"])
        if state != "pending":
            break
        await asyncio.sleep(0.1)
    emit("withdrawn", state=state)
    done = subprocess.run(
        [toolgate, "approvals", "approve", approval["id"], "--config", config],
        capture_output=True,
        text=True,
    )
    emit("approve_after", code=done.returncode, stderr=done.stderr.strip())
    result = await client.call_tool("add", {"a": 2, "b": 3})
    texts = [b.text for b in result.content if getattr(b, "type", None) == "text"]
    emit("add_after", is_error=bool(result.is_error), text="\n".join(texts))


async def main() -> None:
    toolgate, config, target, mode = sys.argv[1:5]
    if target.startswith("stdio:"):
        params = StdioServerParameters(
            command=toolgate,
            args=["mcp", "--config", config, "--", sys.executable, target[len("stdio:"):]],
            env={"MCP_TEST_SEEN": __import__("os").environ.get("MCP_TEST_SEEN", "")},
        )
        async with Client(params, mode=mode) as client:
            await scenario(client, toolgate, config)
    else:
        token = sys.argv[5]
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http:
            transport = streamable_http_client(target, http_client=http)
            async with Client(transport, mode=mode) as client:
                await scenario(client, toolgate, config)
    emit("done")


if __name__ == "__main__":
    asyncio.run(main())
