"""examples/mcp/server.py's tools served in the 2025-11-25 era only (the
SDK's handshake loop, without the 2026-07-28 per-request envelope): a
legacy-only upstream for the cross-era tests of `toolgate mcp --listen`.

    python legacy_server.py PATH/TO/examples/mcp/server.py
"""

import importlib.util
import sys

import anyio

from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server

spec = importlib.util.spec_from_file_location("shop_server", sys.argv[1])
shop = importlib.util.module_from_spec(spec)
spec.loader.exec_module(shop)


async def main() -> None:
    low = shop.server._lowlevel_server
    async with stdio_server() as (read, write):
        async with low.lifespan(low) as state:
            await serve_loop(
                low,
                read,
                write,
                lifespan_state=state,
                init_options=low.create_initialization_options(),
            )


if __name__ == "__main__":
    anyio.run(main)
