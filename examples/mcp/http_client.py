"""An MCP client (the official Python SDK, unchanged) over streamable HTTP
against `toolgate mcp --listen`, in either era.

    python http_client.py URL TOKEN MODE [PREFIX]

MODE is `legacy` (the 2025-11-25 initialize handshake, a session) or
`2026-07-28` (stateless requests carrying `_meta`); PREFIX is what the
proxy puts before the upstream's tool names (default none). The token is
sent as `Authorization: Bearer TOKEN`. It lists the tools, makes the calls
below and prints one JSON object per step on standard output:
{"step": …, "is_error": …, "text": …, "structured": …} (and "tools" for
the list). The test in crates/toolgate-mcp/tests/mcp_http.rs reads them.
"""

import asyncio
import json
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client


def emit(step: str, **fields: object) -> None:
    print(json.dumps({"step": step, **fields}, sort_keys=True), flush=True)


async def call(client: Client, step: str, name: str, arguments: dict) -> None:
    try:
        result = await client.call_tool(name, arguments)
    except Exception as e:  # a protocol error, or the SDK's own check
        emit(step, error=type(e).__name__, message=str(e))
        return
    texts = [b.text for b in result.content if getattr(b, "type", None) == "text"]
    emit(
        step,
        is_error=bool(result.is_error),
        text="\n".join(texts),
        structured=result.structured_content,
    )


async def main() -> None:
    url, token, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    prefix = sys.argv[4] if len(sys.argv) > 4 else ""
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    async with http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode=mode) as client:
            emit("connected", protocol_version=client.protocol_version)
            listed = await client.list_tools()
            emit(
                "list",
                tools=sorted(t.name for t in listed.tools),
                schemas={t.name: t.input_schema for t in listed.tools},
            )
            await call(client, "add_allowed", prefix + "add", {"a": 2, "b": 3})
            await call(client, "add_strings", prefix + "add", {"a": "2", "b": "3"})
            await call(client, "weather", prefix + "weather", {"city": "Kyoto"})
            await call(client, "unregistered", prefix + "secret_admin", {})
    emit("done")


if __name__ == "__main__":
    asyncio.run(main())
