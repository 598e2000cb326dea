"""An MCP client session behind the gate.

>>> from toolgate.adapters.mcp import GatedSession
>>> async with Client(params) as client:
...     session = GatedSession(client, gate, context)
...     result = await session.call_tool("refund", {"order_id": "ord_1", "amount_cents": 500})

``GatedSession`` wraps an MCP client session (``mcp.ClientSession`` or
``mcp.Client``): ``call_tool`` decides the call with the gate first and
sends it to the server only when it is allowed, with the canonical
arguments the gate checked. A denied or held call is not sent: it comes
back as a tool result with ``isError`` set and the gate's feedback as its
text, which is what the model should read. Everything else (listing
tools, resources, prompts) goes to the session unchanged.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

from .. import Call, Gate
from . import Context, decide_one

try:  # mcp 2 keeps its types in the mcp-types distribution
    from mcp_types import CallToolResult, TextContent
except ImportError:  # pragma: no cover - older mcp
    from mcp.types import CallToolResult, TextContent  # type: ignore[no-redef]


class GatedSession:
    """``session`` (an MCP client session) with every tool call decided by ``gate``."""

    def __init__(self, session: Any, gate: Gate, context: Context) -> None:
        self._session = session
        self._gate = gate
        self._context = context
        self.last_call: Optional[Call] = None

    async def call_tool(self, name: str, arguments: Optional[Dict[str, Any]] = None, *args: Any, **kwargs: Any) -> Any:
        """Decides the call, then sends an allowed one with its checked
        arguments; any other is answered here with the gate's feedback."""
        call = decide_one(self._gate, name, arguments if arguments is not None else {}, self._context)
        self.last_call = call
        if call.verdict != "allow":
            return CallToolResult(content=[TextContent(type="text", text=call.feedback)], isError=True)
        return await self._session.call_tool(name, call.arguments, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)
