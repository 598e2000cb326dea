"""`Gate.decide_call`: one call held as a tool name and its arguments (what
every agent framework hands a tool), decided as `Gate.decide` decides it in
a provider body."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any, Dict

import pytest

import toolgate

from conftest import ROOT

SHOP = ROOT / "examples" / "shop"


@pytest.fixture(scope="module")
def gate() -> toolgate.Gate:
    return toolgate.Gate.from_config(SHOP / "toolgate.toml", store=False)


def context() -> Dict[str, Any]:
    value = toolgate.loads((SHOP / "context.json").read_bytes())
    assert isinstance(value, dict)
    return value


def test_a_call_as_text_or_value(gate: toolgate.Gate) -> None:
    for arguments in ('{"query": "boots", "limit": 5}', b'{"limit":5,"query":"boots"}', {"query": "boots", "limit": 5}):
        r = gate.decide_call("search", arguments, context(), call_id="call_1")
        (call,) = r.calls
        assert (call.tool, call.call_id, call.verdict) == ("search", "call_1", "allow")
        assert call.arguments == {"query": "boots", "limit": 5}
        assert call.digest == toolgate.digest({"limit": 5, "query": "boots"})


def test_it_decides_as_the_provider_body_does(gate: toolgate.Gate) -> None:
    for name in ("openai-search.json", "openai-refund-needs-approval.json", "openai-refund-other-users-order.json"):
        body = gate.decide((SHOP / "responses" / name).read_bytes(), context())
        raw = toolgate.loads((SHOP / "responses" / name).read_bytes())
        assert isinstance(raw, dict)
        for call, tc in zip(body.calls, raw["choices"][0]["message"]["tool_calls"]):
            one = gate.decide_call(tc["function"]["name"], tc["function"]["arguments"], context()).calls[0]
            assert (one.verdict, one.digest, one.feedback) == (call.verdict, call.digest, call.feedback), name
            assert [r.code for r in one.reasons] == [r.code for r in call.reasons]


def test_bad_arguments_are_denials_not_exceptions(gate: toolgate.Gate) -> None:
    cases = {
        '{"query": "a", "query": "b"}': "duplicate_key",
        '{"query": "a", "limit": 5.0}': "type_mismatch",
        '{"query": "a"': "truncated",
        '["boots"]': "not_object",
    }
    for text, code in cases.items():
        (call,) = gate.decide_call("search", text, context()).calls
        assert call.verdict == "deny" and call.arguments is None, text
        assert code in [r.code for r in call.reasons], (text, call.reasons)
    (call,) = gate.decide_call("serach", "{}", context()).calls
    assert (call.verdict, call.reasons[0].code) == ("deny", "unknown_tool")
    with pytest.raises(TypeError):
        gate.decide_call("search", ("query",), context())  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        gate.decide_call("search", b"\xff", context())


def test_with_a_store_the_call_is_held_and_recorded(tmp_path: Path, store_build: None) -> None:
    shop = tmp_path / "shop"
    shutil.copytree(SHOP, shop, ignore=shutil.ignore_patterns("*.db", "*.db-*"))
    gate = toolgate.Gate.from_config(shop / "toolgate.toml", store=f"sqlite://{tmp_path / 'tg.db'}")
    ctx = {"user": "alice", "session": "py-call", "roles": ["customer"], "turn": 1}
    (call,) = gate.decide_call(
        "refund", '{"order_id": "ord_1002", "amount_cents": 2599, "reason": "late"}', ctx
    ).calls
    assert call.verdict == "needs_approval" and call.approval is not None
