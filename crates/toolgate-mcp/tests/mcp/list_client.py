"""An MCP client (the official Python SDK, unchanged) that lists the tools
`toolgate mcp` shows, as an SDK user reads them.

    python list_client.py TOOLGATE_BIN CONFIG SERVER_PY [MODE]

toolgate is started over stdio in front of SERVER_PY (MODE `legacy`, the
default, or `2026-07-28`). One JSON object per step on standard output:
`list` with `tools`, each tool as the SDK parsed it (`model_dump` by
alias, without unset members) and `raw` (the SDK's own wire text of it).
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters


def emit(step: str, **fields: object) -> None:
    print(json.dumps({"step": step, **fields}, sort_keys=True), flush=True)


async def main() -> None:
    toolgate, config, server = sys.argv[1:4]
    mode = sys.argv[4] if len(sys.argv) > 4 else "legacy"
    params = StdioServerParameters(
        command=toolgate,
        args=["mcp", "--config", config, "--", sys.executable, server],
        env={k: os.environ[k] for k in ("MCP_TEST_SEEN", "MCP_TEST_TOOLS") if k in os.environ},
    )
    async with Client(params, mode=mode) as client:
        listed = await client.list_tools()
        emit(
            "list",
            tools=[t.model_dump(mode="json", by_alias=True, exclude_unset=True) for t in listed.tools],
        )
    emit("done")


if __name__ == "__main__":
    asyncio.run(main())
