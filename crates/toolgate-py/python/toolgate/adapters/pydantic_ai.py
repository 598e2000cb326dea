"""A pydantic-ai toolset behind the gate.

>>> from toolgate.adapters.pydantic_ai import GatedToolset
>>> agent = Agent(model, toolsets=[GatedToolset(FunctionToolset([search, refund]), gate, context)])

``GatedToolset`` wraps a toolset. Where pydantic-ai would validate a tool
call's arguments (the model's argument text, or the value the model sent),
the gate decides the call instead, on that text; only an allowed call runs
the tool, with the canonical value the gate checked (read by the tool's
own validator into the tool's types). A denied or held call does not run:
the gate's feedback is the tool's return value, which the model reads. A
tool's own ``args_validator_func`` is not run behind the gate.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Dict

from pydantic_ai.toolsets import AbstractToolset, WrapperToolset
from pydantic_ai.toolsets.abstract import ToolsetTool

from .. import Gate
from . import Context, decide_one

_DECIDED = "__toolgate_decided__"


def _partial(allow_partial: Any) -> bool:
    """Whether pydantic-ai asks for a partial read (`True`, `"on"`, `"trailing-strings"`)."""
    return allow_partial not in (False, None, "off")


class _GateValidator:
    """Stands in for a tool's argument validator: the gate decides."""

    def __init__(self, gate: Gate, name: str, context: Context, original: Any) -> None:
        self.gate, self.name, self.context, self.original = gate, name, context, original

    def validate_json(self, input: Any, *, allow_partial: Any = False, **kwargs: Any) -> Any:
        if _partial(allow_partial):  # a stream's partial arguments: not a call yet
            return self.original.validate_json(input, allow_partial=allow_partial, **kwargs)
        return {_DECIDED: decide_one(self.gate, self.name, input, self.context)}

    def validate_python(self, input: Any, *, allow_partial: Any = False, **kwargs: Any) -> Any:
        if _partial(allow_partial):
            return self.original.validate_python(input, allow_partial=allow_partial, **kwargs)
        return {_DECIDED: decide_one(self.gate, self.name, input if input is not None else {}, self.context)}


@dataclasses.dataclass
class GatedToolset(WrapperToolset[Any]):
    """``wrapped`` with every tool call decided by ``gate`` first."""

    gate: Any = None
    context: Any = None

    def __init__(self, wrapped: AbstractToolset[Any], gate: Gate, context: Context) -> None:
        super().__init__(wrapped)
        self.gate = gate
        self.context = context

    async def get_tools(self, ctx: Any) -> Dict[str, ToolsetTool[Any]]:
        tools = await self.wrapped.get_tools(ctx)
        return {
            name: dataclasses.replace(
                tool,
                args_validator=_GateValidator(self.gate, name, self.context, tool.args_validator),
                args_validator_func=None,
            )
            for name, tool in tools.items()
        }

    async def call_tool(self, name: str, tool_args: Dict[str, Any], ctx: Any, tool: ToolsetTool[Any]) -> Any:
        validator = tool.args_validator
        original = validator.original if isinstance(validator, _GateValidator) else validator
        call = tool_args.get(_DECIDED) if isinstance(tool_args, dict) else None
        if call is None:  # not through the validator: decide on the value
            call = decide_one(self.gate, name, tool_args, self.context)
        if call.verdict != "allow":
            return call.feedback
        args = original.validate_python(call.arguments)
        return await self.wrapped.call_tool(name, args, ctx, dataclasses.replace(tool, args_validator=original))
