"""examples/mcp/server.py's tools served in the 2026-07-28 era only (the
SDK's own modern stream loop: `initialize` is refused with -32022): a
modern-only upstream for the cross-era tests of `toolgate mcp --listen`.

    python modern_server.py PATH/TO/examples/mcp/server.py
"""

import importlib.util
import sys

import anyio

from mcp.server.runner import _serve_modern_stream
from mcp.server.stdio import stdio_server

spec = importlib.util.spec_from_file_location("shop_server", sys.argv[1])
shop = importlib.util.module_from_spec(spec)
spec.loader.exec_module(shop)


async def main() -> None:
    low = shop.server._lowlevel_server
    async with stdio_server() as (read, write):
        async with low.lifespan(low) as state:
            await _serve_modern_stream(low, read, write, lifespan_state=state, raise_exceptions=False)


if __name__ == "__main__":
    anyio.run(main)
