"""Adapters that put the gate in front of the tools of Python agent
frameworks. Each is a module of its own, imported by name, and needs its
framework installed (the package's extras):

- :mod:`toolgate.adapters.langchain` (``pip install "toolgate[langchain]"``):
  LangChain tools that decide each call before the tool runs;
- :mod:`toolgate.adapters.mcp` (``pip install "toolgate[mcp]"``): an MCP
  client session whose ``call_tool`` decides each call before it is sent;
- :mod:`toolgate.adapters.openai_agents` (``pip install
  "toolgate[openai-agents]"``): OpenAI Agents SDK function tools decided on
  the model's own argument text;
- :mod:`toolgate.adapters.pydantic_ai` (``pip install
  "toolgate[pydantic-ai]"``): a pydantic-ai toolset wrapper.

Every adapter decides one call with :meth:`toolgate.Gate.decide_call` and
runs the tool only for an allowed call, with ``call.arguments`` (the
canonical value the gate checked); a call that is denied or held for
approval does not run and its feedback (codes and pointers only) is what
the model reads instead of a result.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Union

from .. import JSON, Call, Gate

Context = Union[Mapping[str, JSON], bytes, str, Callable[[], Union[Mapping[str, JSON], bytes, str]]]
"""The request context for each call: a value, or a function called for
each call (so that a turn counter or a session can change between calls)."""


def decide_one(gate: Gate, tool: str, arguments: Any, context: Context, call_id: Any = None) -> Call:
    """The decision on one call (the context called first if it is a function)."""
    ctx = context() if callable(context) else context
    response = gate.decide_call(tool, arguments, ctx, call_id=call_id if isinstance(call_id, str) else None)
    (call,) = response.calls
    return call
