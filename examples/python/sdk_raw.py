#!/usr/bin/env python3
"""The official ``openai`` and ``anthropic`` SDKs, gated in-process on the
raw HTTP body (their ``with_raw_response`` API).

A canned model API runs on loopback (it answers every call with one of the
shop example's responses, in which the model smuggles a second
``amount_cents`` spelled ``\\u0061mount_cents``), so no key or network is
needed. For each SDK the script prints what the SDK's own parsed object
holds, then toolgate's decision on the raw body of the same call.

    pip install ./crates/toolgate-py openai anthropic
    python3 examples/python/sdk_raw.py
"""

from __future__ import annotations

import http.server
import threading
from pathlib import Path
from typing import Dict, List

import anthropic
import openai

import toolgate

SHOP = Path(__file__).resolve().parents[1] / "shop"
CANNED = {
    "/v1/chat/completions": (SHOP / "responses" / "openai-duplicate-amount.json").read_bytes(),
    "/v1/messages": (SHOP / "responses" / "anthropic-duplicate-amount.json").read_bytes(),
}


class CannedModel(http.server.BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        body = CANNED.get(self.path.split("?", 1)[0])
        if body is None:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def report(sdk: str, response: toolgate.Response, outcomes: List[toolgate.Outcome]) -> None:
    if response.rejected is not None:
        r = response.rejected
        print(f"{sdk}: the body is refused: {r.code} ({r.detail}) at {r.pointer}: {response.verdict}")
    for o in outcomes:
        print(f"{sdk}: {o.call.tool} {o.call.verdict}: {o.feedback}")


def main() -> int:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), CannedModel)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    gate = toolgate.Gate.from_config(SHOP / "toolgate.toml", store=False)
    context = toolgate.loads((SHOP / "context.json").read_bytes())
    assert isinstance(context, dict)
    ran: Dict[str, object] = {}
    runner = toolgate.Runner(gate)

    @runner.tool("refund")
    def refund(order_id: str, amount_cents: int, reason: str) -> str:
        ran["refund"] = amount_cents
        return "refunded"

    messages: list = [{"role": "user", "content": "refund my order"}]  # type: ignore[type-arg]

    client = openai.OpenAI(base_url=f"{base}/v1", api_key="not-used", max_retries=0)
    raw = client.chat.completions.with_raw_response.create(model="canned", messages=messages)
    calls = raw.parse().choices[0].message.tool_calls or []
    for c in calls:
        if c.type == "function":
            print("openai SDK arguments text:", c.function.arguments)
    response, outcomes = toolgate.sdk.run(runner, raw, context, format="openai")
    report("openai", response, outcomes)

    claude = anthropic.Anthropic(base_url=base, api_key="not-used", max_retries=0)
    raw_a = claude.messages.with_raw_response.create(model="canned", max_tokens=64, messages=messages)
    for block in raw_a.parse().content:
        if block.type == "tool_use":
            print("anthropic SDK input (already parsed):", block.input)
    response, outcomes = toolgate.sdk.run(runner, raw_a, context, format="anthropic")
    report("anthropic", response, outcomes)

    server.shutdown()
    print("refund ran:", "yes" if ran else "no")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
