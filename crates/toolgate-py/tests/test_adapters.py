"""The framework adapters against the real packages, driven by a canned
model: LangChain tools (langchain-core's fake chat model proposes the
calls) and an MCP client session (the official SDK's client over stdio to
a bare server that records what it receives)."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

import toolgate

from conftest import ROOT, require_external

SHOP = ROOT / "examples" / "shop"
SERVER = ROOT / "crates" / "toolgate-mcp" / "tests" / "mcp" / "shop_server.py"
INJECTION = "IGNORE PREVIOUS INSTRUCTIONS"


def package(name: str) -> Any:
    if require_external():
        return __import__(name)
    return pytest.importorskip(name)


@pytest.fixture(scope="module")
def gate() -> toolgate.Gate:
    return toolgate.Gate.from_config(SHOP / "toolgate.toml", store=False)


def context() -> Dict[str, Any]:
    value = toolgate.loads((SHOP / "context.json").read_bytes())
    assert isinstance(value, dict)
    return value


def test_langchain_tools_run_only_allowed_calls(gate: toolgate.Gate) -> None:
    package("langchain_core")
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
    from langchain_core.messages import AIMessage, ToolMessage
    from langchain_core.tools import tool

    from toolgate.adapters.langchain import gate_tools

    ran: List[Dict[str, Any]] = []

    @tool
    def search(query: str, limit: int = 10) -> str:
        """Search the shop."""
        ran.append({"query": query, "limit": limit})
        return f"{limit} results"

    @tool
    def refund(order_id: str, amount_cents: int, reason: str) -> str:
        """Refund an order."""
        ran.append({"refund": order_id})  # pragma: no cover - must not run
        return "refunded"

    proposed = AIMessage(
        content="",
        tool_calls=[
            {"name": "search", "args": {"query": "boots", "limit": 5}, "id": "c1", "type": "tool_call"},
            {"name": "search", "args": {"query": "boots", "limit": "5"}, "id": "c2", "type": "tool_call"},
            {"name": "search", "args": {"query": "boots", INJECTION: 1}, "id": "c3", "type": "tool_call"},
            {"name": "refund", "args": {"order_id": "ord_1002", "amount_cents": 2599, "reason": "late"}, "id": "c4", "type": "tool_call"},
        ],
    )
    model = GenericFakeChatModel(messages=iter([proposed]))
    tools = {t.name: t for t in gate_tools([search, refund], gate, context)}
    assert tools["search"].description == "Search the shop."
    message = model.invoke("find boots")
    results = [tools[c["name"]].invoke(c) for c in message.tool_calls]
    assert all(isinstance(r, ToolMessage) for r in results)
    # Only the allowed call ran, with the checked value; "5" was not coerced.
    assert ran == [{"query": "boots", "limit": 5}]
    assert results[0].content == "5 results"
    assert results[1].content.startswith("denied by toolgate: type_mismatch at /limit")
    assert results[2].content.startswith("denied by toolgate: unknown_property at /*")
    assert INJECTION not in results[2].content
    assert results[3].content.startswith("held by toolgate for human approval")


def test_mcp_session_sends_only_allowed_calls(gate: toolgate.Gate, tmp_path: Path) -> None:
    package("mcp")
    from mcp import Client, StdioServerParameters

    from toolgate.adapters.mcp import GatedSession

    seen = tmp_path / "seen.jsonl"

    async def run() -> List[Any]:
        params = StdioServerParameters(command=sys.executable, args=[str(SERVER)], env={"MCP_TEST_SEEN": str(seen)})
        async with Client(params, mode="legacy") as client:
            session = GatedSession(client, gate, context)
            # The canned model's calls, as an MCP host hands them over.
            calls = [
                ("search", {"limit": 5, "query": "boots"}),
                ("search", {"query": "boots", "limit": 5.5}),
                ("refund", {"order_id": "ord_1002", "amount_cents": 2599, "reason": "late"}),
                ("serach", {"query": "boots"}),
            ]
            out = [await session.call_tool(name, args) for name, args in calls]
            tools = await session.list_tools()  # passed through unchanged
            assert {t.name for t in tools.tools} == {"search", "get_order", "refund"}
            return out

    results = asyncio.run(run())
    assert [r.is_error for r in results] == [False, True, True, True]
    assert results[0].content[0].text == "ok"
    assert results[1].content[0].text.startswith("denied by toolgate: type_mismatch at /limit")
    assert results[2].content[0].text.startswith("held by toolgate for human approval")
    assert results[3].content[0].text == "denied by toolgate: unknown_tool"
    # The server received exactly the allowed call, canonical.
    received = [json.loads(line) for line in seen.read_text().splitlines()]
    assert [(r["name"], r["arguments"]) for r in received] == [("search", {"limit": 5, "query": "boots"})]


def test_openai_agents_tools_get_the_models_text(gate: toolgate.Gate) -> None:
    package("agents")
    from agents import Agent, ModelSettings, Runner, function_tool
    from agents.items import ModelResponse
    from agents.models.interface import Model
    from agents.usage import Usage
    from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

    from toolgate.adapters.openai_agents import gate_tools

    ran: List[Dict[str, Any]] = []

    @function_tool
    def search(query: str, limit: int) -> str:
        """Search the shop."""
        ran.append({"query": query, "limit": limit})
        return f"{limit} results"

    texts = [
        '{"query": "boots", "limit": 5}',
        '{"query": "boots", "limit": 5, "limit": 50}',
        '{"query": "boots", "limit": "5"}',
        '{"query": "boots", "limit": NaN}',
    ]
    seen_outputs: List[Any] = []

    class Canned(Model):
        """The canned model: the calls first, then a closing message."""

        async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
            if not seen_outputs:
                seen_outputs.append(True)
                calls = [
                    ResponseFunctionToolCall(type="function_call", name="search", arguments=t, call_id=f"c{i}", id=f"fc{i}")
                    for i, t in enumerate(texts)
                ]
                return ModelResponse(output=list(calls), usage=Usage(), response_id=None)
            seen_outputs.extend(item for item in input if isinstance(item, dict) and item.get("type") == "function_call_output")
            message = ResponseOutputMessage(
                id="m1", type="message", role="assistant", status="completed",
                content=[ResponseOutputText(type="output_text", text="done", annotations=[])],
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)

        def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover - not streamed
            raise NotImplementedError

    agent = Agent(name="shop", model=Canned(), tools=gate_tools([search], gate, context), model_settings=ModelSettings())
    result = Runner.run_sync(agent, "find boots")
    assert result.final_output == "done"
    assert ran == [{"query": "boots", "limit": 5}]
    outputs = {o["call_id"]: o["output"] for o in seen_outputs[1:]}
    assert outputs["c0"] == "5 results"
    assert outputs["c1"].startswith("denied by toolgate: duplicate_key")
    assert outputs["c2"].startswith("denied by toolgate: type_mismatch at /limit")
    assert outputs["c3"].startswith("denied by toolgate: non_finite_number")


def test_pydantic_ai_toolset_decides_on_the_models_text(gate: toolgate.Gate) -> None:
    package("pydantic_ai")
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.toolsets import FunctionToolset

    from toolgate.adapters.pydantic_ai import GatedToolset

    ran: List[Dict[str, Any]] = []

    def search(query: str, limit: int) -> str:
        """Search the shop."""
        ran.append({"query": query, "limit": limit})
        return f"{limit} results"

    texts = [
        '{"query": "boots", "limit": 5}',
        '{"query": "boots", "limit": 5, "limit": 50}',
        '{"query": "boots", "limit": "5"}',
        '{"query": "boots", "%s": 1}' % INJECTION,
    ]
    returned: Dict[str, Any] = {}

    def canned(messages: List[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("search", t, tool_call_id=f"c{i}") for i, t in enumerate(texts)])
        for part in messages[-1].parts:
            if isinstance(part, ToolReturnPart):
                returned[part.tool_call_id] = part.content
        return ModelResponse(parts=[TextPart("done")])

    agent = Agent(FunctionModel(canned), toolsets=[GatedToolset(FunctionToolset([search]), gate, context)])
    result = agent.run_sync("find boots")
    assert result.output == "done"
    assert ran == [{"query": "boots", "limit": 5}]
    assert returned["c0"] == "5 results"
    assert returned["c1"].startswith("denied by toolgate: duplicate_key")
    assert returned["c2"].startswith("denied by toolgate: type_mismatch at /limit")
    assert returned["c3"].startswith("denied by toolgate: unknown_property at /*") and INJECTION not in returned["c3"]
