"""Runs registered Python tool functions only with an allowed decision's
``arguments``: the canonical value the gate checked, never the model's
text."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Mapping, Optional, Tuple, TypeVar, Union

if TYPE_CHECKING:
    # Typed by the package's stubs (__init__.pyi).
    from . import Call, Format, Gate, Response

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class Outcome:
    """What became of one proposed call.

    ``ran`` is true only for an allowed call whose tool ran; ``result`` is
    then what the tool returned. ``feedback`` is the text safe to return to
    the model for a call that did not run (codes and pointers only, never a
    value the model sent)."""

    call: Call
    ran: bool
    result: Any
    feedback: str


class Runner:
    """Tool functions by name, run only with an allowed call's arguments.

    >>> runner = Runner(gate)
    >>> @runner.tool("search")
    ... def search(query: str) -> list[str]: ...
    >>> response, outcomes = runner.run(raw_body, {"user": "alice", "session": "s1", "turn": 1})
    """

    def __init__(self, gate: Gate) -> None:
        self._gate = gate
        self._tools: Dict[str, Callable[..., Any]] = {}

    def tool(self, name: Optional[str] = None) -> Callable[[F], F]:
        """A decorator that registers a function under ``name`` (its own
        ``__name__`` by default). The gate's config decides which tools
        exist: a registered function runs only for a call the gate allowed."""

        def register(fn: F) -> F:
            self.register(name or fn.__name__, fn)
            return fn

        return register

    def register(self, name: str, fn: Callable[..., Any]) -> None:
        """Registers ``fn`` as the tool ``name``; a name registers once."""
        if not isinstance(name, str) or not name:
            raise TypeError("a tool name must be a non-empty str")
        if not callable(fn):
            raise TypeError("a tool must be callable")
        if name in self._tools:
            raise ValueError(f"tool `{name}` is already registered")
        self._tools[name] = fn

    def run(
        self,
        raw_body: Union[bytes, bytearray, str],
        context: Union[Mapping[str, Any], bytes, str],
        *,
        format: Format = "auto",
    ) -> Tuple[Response, List[Outcome]]:
        """Decides ``raw_body`` with the gate, then runs each allowed call's
        tool with its ``arguments`` (as keyword arguments when they are an
        object, else as the one positional argument). Calls that are denied
        or held for approval do not run: their outcome carries the gate's
        feedback. A tool's exception propagates."""
        response = self._gate.decide(raw_body, context, format=format)
        return response, self.run_response(response)

    def run_response(self, response: Response) -> List[Outcome]:
        """Runs the allowed calls of a response already decided."""
        outcomes: List[Outcome] = []
        for call in response.calls:
            outcomes.append(self._run_call(call))
        return outcomes

    def _run_call(self, call: Call) -> Outcome:
        if call.verdict != "allow":
            return Outcome(call, False, None, call.feedback)
        fn = self._tools.get(call.tool)
        if fn is None:
            return Outcome(call, False, None, "not run: no function is registered for this tool")
        arguments = call.arguments
        if isinstance(arguments, dict):
            result = fn(**arguments)
        else:
            result = fn(arguments)
        return Outcome(call, True, result, call.feedback)
