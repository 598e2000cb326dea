"""OpenAI Agents SDK function tools behind the gate.

>>> from toolgate.adapters.openai_agents import gate_tools
>>> agent = Agent(name="shop", tools=gate_tools([search, refund], gate, context))

Each returned ``FunctionTool`` is the tool given, with one change: when the
model calls it, the SDK hands over the model's argument text as it came,
and the gate decides the call on that text (strictly: a duplicate key, a
``NaN`` or a ``"5"`` for an integer is a denial). Only an allowed call runs
the tool, with the canonical JSON of the value the gate checked; a denied
or held call does not run and its feedback is the tool's output, which the
model reads.
"""

from __future__ import annotations

import dataclasses
from typing import Any, List, Sequence

from agents import FunctionTool

from .. import Gate, canonical
from . import Context, decide_one


def gate_tool(tool: FunctionTool, gate: Gate, context: Context) -> FunctionTool:
    """``tool`` behind ``gate``: see the module documentation."""
    invoke = tool.on_invoke_tool

    async def on_invoke_tool(ctx: Any, arguments: str) -> Any:
        call_id = getattr(ctx, "tool_call_id", None)
        call = decide_one(gate, tool.name, arguments, context, call_id)
        if call.verdict != "allow":
            return call.feedback
        return await invoke(ctx, canonical(call.arguments).decode("utf-8"))

    return dataclasses.replace(tool, on_invoke_tool=on_invoke_tool)


def gate_tools(tools: Sequence[FunctionTool], gate: Gate, context: Context) -> List[FunctionTool]:
    """Every tool of ``tools`` behind ``gate``."""
    return [gate_tool(t, gate, context) for t in tools]
