"""An MCP client (the official Python SDK, unchanged) driving server.py
through `toolgate mcp`, as an MCP host would.

    python client.py TOOLGATE_BIN CONFIG SERVER_PY

It starts `TOOLGATE_BIN mcp --config CONFIG -- PYTHON SERVER_PY` with the
SDK's stdio client, negotiates the 2025-11-25 era (initialize), lists the
tools, makes the calls below, approves the held refund with
`TOOLGATE_BIN approvals approve ID --config CONFIG` and retries it, and
prints one JSON object per step on standard output:
{"step": …, "is_error": …, "text": …, "structured": …} (and "tools" for
the list). The test in crates/toolgate-mcp/tests/mcp_sdk.rs reads them.
"""

import asyncio
import json
import os
import re
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def emit(step: str, **fields: object) -> None:
    print(json.dumps({"step": step, **fields}, sort_keys=True), flush=True)


def result_fields(result) -> dict:
    texts = [b.text for b in result.content if getattr(b, "type", None) == "text"]
    return {
        "is_error": bool(result.is_error),
        "text": "\n".join(texts),
        "structured": result.structured_content,
    }


async def call(session: ClientSession, step: str, name: str, arguments: dict) -> dict:
    try:
        result = await session.call_tool(name, arguments)
    except Exception as e:  # a protocol error, or the SDK's own check
        emit(step, error=type(e).__name__, message=str(e))
        return {}
    fields = result_fields(result)
    emit(step, **fields)
    return fields


async def main() -> None:
    toolgate, config, server = sys.argv[1], sys.argv[2], sys.argv[3]
    params = StdioServerParameters(
        command=toolgate,
        args=["mcp", "--config", config, "--", sys.executable, server],
        env={"MCP_TEST_SEEN": os.environ.get("MCP_TEST_SEEN", "")},
    )
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            emit("initialize", protocol_version=init.protocol_version)
            tools = await session.list_tools()
            emit("list", tools=sorted(t.name for t in tools.tools),
                 schemas={t.name: t.input_schema for t in tools.tools})
            await call(session, "add_allowed", "add", {"a": 2, "b": 3})
            await call(session, "add_strings", "add", {"a": "2", "b": "3"})
            await call(session, "add_extra", "add", {"a": 2, "b": 3, "extra": "x"})
            await call(session, "unregistered", "secret_admin", {})
            await call(session, "weather", "weather", {"city": "Kyoto"})
            held = await call(session, "refund_held", "refund",
                              {"order_id": "ord_1", "amount_cents": 500})
            match = re.search(r"approval (\S+);", held.get("text", ""))
            if match:
                approved = subprocess.run(
                    [toolgate, "approvals", "approve", match.group(1), "--config", config],
                    capture_output=True, text=True,
                )
                emit("approve", code=approved.returncode)
            await call(session, "refund_retry", "refund",
                       {"order_id": "ord_1", "amount_cents": 500})
            await call(session, "refund_again", "refund",
                       {"order_id": "ord_1", "amount_cents": 500})
            await call(session, "hang", "hang", {"seconds": 30})
            await call(session, "crash", "crash", {})
    emit("done")


if __name__ == "__main__":
    asyncio.run(main())
