"""An MCP client (the official Python SDK, unchanged) in front of a server
whose tools/list is paginated (tests/mcp/list_server.py with a page size),
through `toolgate mcp` over stdio:

    python paged_client.py TOOLGATE_BIN CONFIG SERVER_PY TOOLS_JSON [approve]

It reads the first page only, as an SDK user often does, then calls a
tool of a later page (`temp`); with `approve`, a human then approves the
pending pin of `temp` (`toolgate pins approve`) and it calls it again.
One JSON object per step on standard output.
"""

import asyncio
import json
import subprocess
import sys

from mcp import Client, StdioServerParameters


def emit(step: str, **fields: object) -> None:
    print(json.dumps({"step": step, **fields}, sort_keys=True), flush=True)


async def call(client: Client, step: str, name: str, args: dict) -> None:
    result = await client.call_tool(name, args)
    texts = [b.text for b in result.content if getattr(b, "type", None) == "text"]
    emit(step, is_error=bool(result.is_error), text="\n".join(texts))


async def main() -> None:
    toolgate, config, server, tools = sys.argv[1:5]
    approve = len(sys.argv) > 5 and sys.argv[5] == "approve"
    params = StdioServerParameters(
        command=toolgate,
        args=["mcp", "--config", config, "--", sys.executable, server, tools, "paged", "1"],
    )
    async with Client(params, mode="legacy") as client:
        first = await client.session.list_tools()
        emit("first_page", tools=[t.name for t in first.tools], next=first.next_cursor)
        await call(client, "temp", "temp", {})
        if approve:
            done = subprocess.run(
                [toolgate, "pins", "approve", "temp", "--config", config],
                capture_output=True,
                text=True,
            )
            emit("approved", code=done.returncode, stderr=done.stderr.strip())
            await call(client, "temp_after", "temp", {})
    emit("done")


if __name__ == "__main__":
    asyncio.run(main())
