"""A 2026-07-28 MCP client (the official Python SDK, unchanged) driving
examples/mcp/server.py through `toolgate mcp`, for approvals answered with
`input_required` (multi round-trip requests).

    python mrtr_client.py TOOLGATE_BIN CONFIG SERVER_PY

The client negotiates the 2026-07-28 era (server/discover), declares URL
elicitation, and prints one JSON object per step on standard output
({"step": …, …}); crates/toolgate-mcp/tests/mcp_sdk.rs reads them:

- round_trip: the SDK's own retry loop; the elicitation callback approves
  the approval named in the URL with `toolgate approvals approve ID`, then
  accepts; the retry runs the refund.
- forged: the callback accepts without anyone approving: the SDK keeps
  getting input_required until its round cap.
- declined: the callback declines: an error result, the call did not run.
- manual: the loop driven by hand (`allow_input_required=True`): approved in
  the store, then a tampered requestState, a retry with other arguments, the
  right retry, and the right retry once more; then a call a human denies.
"""

import asyncio
import json
import os
import re
import subprocess
import sys

from mcp import StdioServerParameters
from mcp.client.client import Client
from mcp_types import ElicitResult, InputRequiredResult

ARGS = {"order_id": "ord_7", "amount_cents": 700}


def emit(step: str, **fields: object) -> None:
    print(json.dumps({"step": step, **fields}, sort_keys=True), flush=True)


def fields_of(result) -> dict:
    if isinstance(result, InputRequiredResult):
        requests = result.input_requests or {}
        return {
            "input_required": True,
            "keys": sorted(requests),
            "urls": [r.params.url for r in requests.values()],
            "modes": [r.params.mode for r in requests.values()],
            "state": result.request_state,
        }
    texts = [b.text for b in result.content if getattr(b, "type", None) == "text"]
    return {"input_required": False, "is_error": bool(result.is_error), "text": "\n".join(texts)}


def approve(toolgate: str, config: str, url: str) -> int:
    match = re.search(r"#approval-(\d+)$", url)
    if not match:
        return -1
    done = subprocess.run(
        [toolgate, "approvals", "approve", match.group(1), "--config", config],
        capture_output=True,
        text=True,
    )
    return done.returncode


async def main() -> None:
    toolgate, config, server = sys.argv[1], sys.argv[2], sys.argv[3]
    params = StdioServerParameters(
        command=toolgate,
        args=["mcp", "--config", config, "--", sys.executable, server],
        env={"MCP_TEST_SEEN": os.environ.get("MCP_TEST_SEEN", "")},
    )
    behaviour = {"mode": "approve"}
    elicited: list = []

    async def on_elicit(context, p):
        elicited.append({"mode": p.mode, "url": getattr(p, "url", None), "message": p.message})
        if behaviour["mode"] == "approve":
            emit("approved_in_store", code=approve(toolgate, config, p.url))
            return ElicitResult(action="accept")
        if behaviour["mode"] == "decline":
            return ElicitResult(action="decline")
        return ElicitResult(action="accept")  # forged: nobody approved

    async with Client(
        params,
        mode="2026-07-28",
        elicitation_callback=on_elicit,
        input_required_max_rounds=3,
    ) as client:
        emit("era", protocol_version=client.protocol_version)
        tools = await client.list_tools()
        emit("list", tools=sorted(t.name for t in tools.tools))

        result = await client.call_tool("add", {"a": 2, "b": 3})
        emit("add", **fields_of(result))

        # The SDK's loop, a human approving in the store.
        result = await client.call_tool("refund", ARGS)
        emit("round_trip", elicited=elicited[-1:], **fields_of(result))

        # Accepting proves nothing.
        behaviour["mode"] = "forged"
        try:
            result = await client.call_tool("refund", {"order_id": "ord_8", "amount_cents": 800})
            emit("forged", **fields_of(result))
        except Exception as e:
            emit("forged", error=type(e).__name__)

        behaviour["mode"] = "decline"
        try:
            result = await client.call_tool("refund", {"order_id": "ord_9", "amount_cents": 900})
            emit("declined", **fields_of(result))
        except Exception as e:
            emit("declined", error=type(e).__name__, message=str(e))

        # The loop by hand.
        args = {"order_id": "ord_10", "amount_cents": 1000}
        first = await client.session.call_tool("refund", args, allow_input_required=True)
        emit("manual_first", **fields_of(first))
        url = next(iter(first.input_requests.values())).params.url
        emit("manual_approved_in_store", code=approve(toolgate, config, url))
        state = first.request_state
        responses = {"toolgate_approval": ElicitResult(action="accept")}
        # One hex digit of the MAC changed.
        tampered = state[:-1] + ("0" if state[-1] != "0" else "1")
        for step, a, s in [
            ("manual_tampered", args, tampered),
            ("manual_other_args", {"order_id": "ord_10", "amount_cents": 99999}, state),
            ("manual_right", args, state),
            ("manual_replayed", args, state),
        ]:
            r = await client.session.call_tool(
                "refund", a, input_responses=responses, request_state=s, allow_input_required=True
            )
            emit(step, **fields_of(r))

        # Denied by a human: an error result.
        args = {"order_id": "ord_11", "amount_cents": 1100}
        first = await client.session.call_tool("refund", args, allow_input_required=True)
        url = next(iter(first.input_requests.values())).params.url
        approval = re.search(r"#approval-(\d+)$", url).group(1)
        denied = subprocess.run(
            [toolgate, "approvals", "deny", approval, "--config", config],
            capture_output=True,
            text=True,
        )
        emit("denied_in_store", code=denied.returncode)
        r = await client.session.call_tool(
            "refund", args, input_responses=responses, request_state=first.request_state,
            allow_input_required=True,
        )
        emit("denied", **fields_of(r))
    emit("done")


if __name__ == "__main__":
    asyncio.run(main())
