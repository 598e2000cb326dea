"""LangChain tools behind the gate.

>>> from toolgate.adapters.langchain import gate_tools
>>> tools = gate_tools([search, refund], gate, context)
>>> agent = create_agent(model, tools)   # or model.bind_tools(tools), a ToolNode, ...

Each returned tool has the name, description and JSON Schema of the tool
it wraps. When the model calls it, LangChain hands over the arguments it
parsed; the gate decides the call (schema, policies, approvals, limits)
and only an allowed call runs the wrapped tool, with the canonical value
the gate checked. A denied or held call returns the gate's feedback as the
tool's result, so the model reads why. The arguments are passed to the
gate as LangChain parsed them (``json.loads`` of the model's text, which
keeps the last of two duplicate keys); decide on the raw response with
:meth:`toolgate.Gate.decide` to have the gate read the text itself.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from langchain_core.tools import BaseTool

from .. import Gate
from . import Context, decide_one


class GatedTool(BaseTool):
    """A LangChain tool that runs ``tool`` only for calls the gate allows."""

    tool: BaseTool
    gate: Any
    context: Any
    last_call: Optional[Any] = None

    def _run(self, *args: Any, run_manager: Any = None, **kwargs: Any) -> Any:
        if args:
            raise TypeError("a gated tool takes its arguments by name")
        call = decide_one(self.gate, self.name, kwargs, self.context)
        self.last_call = call
        if call.verdict != "allow":
            return call.feedback
        arguments = call.arguments
        return self.tool.invoke(arguments if isinstance(arguments, dict) else {"input": arguments})


def _schema(tool: BaseTool) -> Dict[str, Any]:
    schema = tool.tool_call_schema
    if isinstance(schema, dict):
        return schema
    return dict(schema.model_json_schema())


def gate_tool(tool: BaseTool, gate: Gate, context: Context) -> GatedTool:
    """``tool`` behind ``gate``: see the module documentation. ``context``
    is the request context, or a function that gives it for each call."""
    return GatedTool(
        name=tool.name,
        description=tool.description,
        # A JSON Schema (not a pydantic model): LangChain passes the model's
        # arguments on unconverted, and the gate validates them.
        args_schema=_schema(tool),
        tool=tool,
        gate=gate,
        context=context,
    )


def gate_tools(tools: Sequence[BaseTool], gate: Gate, context: Context) -> List[GatedTool]:
    """Every tool of ``tools`` behind ``gate``."""
    return [gate_tool(t, gate, context) for t in tools]
