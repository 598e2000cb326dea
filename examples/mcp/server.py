"""A FastMCP (mcp 2.x: MCPServer) server for toolgate mcp's tests.

Tools: add(a:int, b:int), refund(order_id, amount_cents), secret_admin() (not
registered in the toolgate config), weather(city) with an output schema,
and bad_weather(city), whose structured result breaks its output schema.

Every tool call it receives is appended, as the JSON arguments the server
saw (after FastMCP's lax coercion), to the file named by env
MCP_TEST_SEEN (one line per call), so a test can prove what reached it.
"""

import json
import os

from pydantic import BaseModel

from mcp.server.mcpserver import Context, MCPServer

server = MCPServer("toolgate-test-shop")


def seen(tool: str, arguments: dict) -> None:
    path = os.environ.get("MCP_TEST_SEEN")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"tool": tool, "arguments": arguments}, sort_keys=True) + "\n")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    seen("add", {"a": a, "b": b})
    return a + b


@server.tool()
def refund(order_id: str, amount_cents: int) -> str:
    """Refund part of an order."""
    seen("refund", {"order_id": order_id, "amount_cents": amount_cents})
    return f"refunded {amount_cents} cents on {order_id}"


@server.tool()
def secret_admin() -> str:
    """Not in the toolgate config: the proxy hides it."""
    seen("secret_admin", {})
    return "admin"


class Weather(BaseModel):
    temperature: float
    conditions: str


@server.tool()
def weather(city: str) -> Weather:
    """The weather in a city."""
    seen("weather", {"city": city})
    return Weather(temperature=22.5, conditions="sunny")


@server.tool(structured_output=False)
def hang(seconds: int) -> str:
    """Sleeps (the proxy's timeout answers first)."""
    import time

    seen("hang", {"seconds": seconds})
    time.sleep(seconds)
    return "woke"


@server.tool()
async def touch(ctx: Context) -> str:
    """Reports progress, then says its tool list changed (relay tests)."""
    seen("touch", {})
    await ctx.report_progress(1, 2, "half way")
    await ctx.session.send_tool_list_changed()
    return "touched"


@server.tool()
def crash() -> str:
    """Exits the server mid-call."""
    seen("crash", {})
    os._exit(3)


if __name__ == "__main__":
    import sys

    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        # A streamable-HTTP server on 127.0.0.1:PORT/mcp (toolgate mcp
        # --listen's `url` upstream in the tests).
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run("stdio")
