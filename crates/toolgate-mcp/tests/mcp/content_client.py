"""An MCP client (the official Python SDK, unchanged) reading everything a
server can put before a model through `toolgate mcp` (stdio) in front of
tests/mcp/content_server.py:

    python content_client.py TOOLGATE_BIN CONFIG SERVER_PY

One JSON object per step on standard output (`caps`, `add`, `temp`,
`sum` with what the sampling callback was given, `resource`, `prompt`),
each value as the SDK parsed it (`model_dump` by alias, set members only).
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters
from mcp_types import CreateMessageResult, TextContent


def emit(step: str, **fields: object) -> None:
    print(json.dumps({"step": step, **fields}, sort_keys=True), flush=True)


def dump(value) -> object:
    return value.model_dump(mode="json", by_alias=True, exclude_unset=True)


async def main() -> None:
    toolgate, config, server = sys.argv[1:4]
    params = StdioServerParameters(
        command=toolgate,
        args=["mcp", "--config", config, "--", sys.executable, server],
        env={k: os.environ[k] for k in ("MCP_TEST_SEEN",) if k in os.environ},
    )
    sampled: list = []

    async def on_sampling(context, p):
        sampled.append(dump(p))
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text="ok"), model="m"
        )

    async with Client(params, mode="legacy", sampling_callback=on_sampling) as client:
        emit("caps", capabilities=dump(client.server_capabilities))
        for name, args in (("add", {"a": 2, "b": 3}), ("temp", {})):
            try:
                emit(name, result=dump(await client.call_tool(name, args)))
            except Exception as e:
                emit(name, error=type(e).__name__, message=str(e))
        result = await client.call_tool("sum", {"a": 2, "b": 3})
        emit("sum", result=dump(result), sampled=sampled)
        emit("resource", result=dump(await client.read_resource("file:///secret.txt")))
        emit("prompt", result=dump(await client.get_prompt("greet")))
    emit("done")


if __name__ == "__main__":
    asyncio.run(main())
