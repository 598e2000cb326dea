"""The official openai and anthropic SDKs against a canned model API on
loopback: toolgate decides on their `with_raw_response` raw bodies."""

from __future__ import annotations

import http.server
import subprocess
import sys
import threading
from pathlib import Path
from typing import Dict, Iterator, List

import pytest

import toolgate

from conftest import ROOT, require_external

SHOP = ROOT / "examples" / "shop"


def sdk(name: str):  # type: ignore[no-untyped-def]
    if require_external():
        return __import__(name)
    return pytest.importorskip(name)


class Canned:
    body = b""


@pytest.fixture()
def upstream() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length", "0")))
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(Canned.body)))
            self.end_headers()
            self.wfile.write(Canned.body)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def gate() -> toolgate.Gate:
    return toolgate.Gate.from_config(SHOP / "toolgate.toml", store=False)


def context() -> Dict[str, object]:
    value = toolgate.loads((SHOP / "context.json").read_bytes())
    assert isinstance(value, dict)
    return value


MESSAGES: List[Dict[str, str]] = [{"role": "user", "content": "hi"}]


@pytest.mark.parametrize(
    "name", ["openai-search.json", "openai-duplicate-amount.json", "openai-refund-needs-approval.json", "openai-truncated.json"]
)
def test_openai_raw_response(upstream: str, gate: toolgate.Gate, name: str) -> None:
    openai = sdk("openai")
    Canned.body = (SHOP / "responses" / name).read_bytes()
    client = openai.OpenAI(base_url=f"{upstream}/v1", api_key="x", max_retries=0)
    raw = client.chat.completions.with_raw_response.create(model="m", messages=MESSAGES)
    assert toolgate.sdk.raw_body(raw) == Canned.body
    got = toolgate.sdk.decide(gate, raw, context(), format="openai")
    assert got.to_dict() == gate.decide(Canned.body, context()).to_dict()


@pytest.mark.parametrize(
    "name", ["anthropic-duplicate-amount.json", "anthropic-refund-approved.json", "anthropic-refund-over-total.json"]
)
def test_anthropic_raw_response(upstream: str, gate: toolgate.Gate, name: str) -> None:
    anthropic = sdk("anthropic")
    Canned.body = (SHOP / "responses" / name).read_bytes()
    client = anthropic.Anthropic(base_url=upstream, api_key="x", max_retries=0)
    raw = client.messages.with_raw_response.create(model="m", max_tokens=8, messages=MESSAGES)
    assert toolgate.sdk.raw_body(raw) == Canned.body
    got = toolgate.sdk.decide(gate, raw, context(), format="anthropic")
    assert got.to_dict() == gate.decide(Canned.body, context()).to_dict()


def test_the_sdk_parsed_value_differs_and_the_gate_refuses(upstream: str, gate: toolgate.Gate) -> None:
    anthropic = sdk("anthropic")
    Canned.body = (SHOP / "responses" / "anthropic-duplicate-amount.json").read_bytes()
    client = anthropic.Anthropic(base_url=upstream, api_key="x", max_retries=0)
    raw = client.messages.with_raw_response.create(model="m", max_tokens=8, messages=MESSAGES)
    parsed = [b.input for b in raw.parse().content if b.type == "tool_use"]
    assert parsed and parsed[0]["amount_cents"] == 99999  # the SDK kept the smuggled one
    runner = toolgate.Runner(gate)
    ran: List[object] = []
    runner.register("refund", lambda **kw: ran.append(kw))
    response, outcomes = toolgate.sdk.run(runner, raw, context(), format="anthropic")
    assert response.verdict == "deny" and response.rejected is not None
    assert response.rejected.detail == "duplicate_key"
    assert not ran and not any(o.ran for o in outcomes)


@pytest.mark.parametrize("name", ["openai-search.json", "openai-duplicate-amount.json", "openai-refund-needs-approval.json"])
def test_a_parsed_chat_completion_is_decided(upstream: str, gate: toolgate.Gate, name: str) -> None:
    openai = sdk("openai")
    Canned.body = (SHOP / "responses" / name).read_bytes()
    client = openai.OpenAI(base_url=f"{upstream}/v1", api_key="x", max_retries=0)
    completion = client.chat.completions.create(model="m", messages=MESSAGES)
    got = toolgate.sdk.decide(gate, completion, context())
    want = gate.decide(Canned.body, context())
    # The arguments are the model's text either way: the same decisions.
    assert [(c.tool, c.verdict, c.digest, c.feedback) for c in got.calls] == [
        (c.tool, c.verdict, c.digest, c.feedback) for c in want.calls
    ]


def test_a_parsed_anthropic_message_is_decided(upstream: str, gate: toolgate.Gate) -> None:
    anthropic = sdk("anthropic")
    Canned.body = (SHOP / "responses" / "anthropic-refund-over-total.json").read_bytes()
    client = anthropic.Anthropic(base_url=upstream, api_key="x", max_retries=0)
    message = client.messages.create(model="m", max_tokens=8, messages=MESSAGES)
    got = toolgate.sdk.decide(gate, message, context())
    want = gate.decide(Canned.body, context())
    assert got.format == "anthropic"
    assert [(c.tool, c.verdict, c.digest) for c in got.calls] == [(c.tool, c.verdict, c.digest) for c in want.calls]
    # The duplicate the SDK already resolved cannot be seen in its object:
    # the raw body is refused, the parsed message reads as one value.
    Canned.body = (SHOP / "responses" / "anthropic-duplicate-amount.json").read_bytes()
    parsed = toolgate.sdk.decide(gate, client.messages.create(model="m", max_tokens=8, messages=MESSAGES), context())
    assert parsed.rejected is None and gate.decide(Canned.body, context()).rejected is not None


def test_raw_body_refuses_what_has_no_body() -> None:
    assert toolgate.sdk.raw_body(b"{}") == b"{}"
    for bad in (None, {"choices": []}, "text"):
        with pytest.raises(TypeError):
            toolgate.sdk.raw_body(bad)


def test_sdk_example() -> None:
    sdk("openai")
    sdk("anthropic")
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "python" / "sdk_raw.py")], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[1:] == [
        "openai: refund deny: denied by toolgate: duplicate_key",
        "anthropic SDK input (already parsed): {'order_id': 'ord_1001', 'amount_cents': 99999, 'reason': 'damaged'}",
        "anthropic: the body is refused: body_invalid_json (duplicate_key) at /content/0/input: deny",
        "refund ran: no",
    ]
