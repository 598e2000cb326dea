#!/usr/bin/env python3
"""toolgate in-process: the shop example's model responses decided by the
`toolgate` Python package (`pip install ./crates/toolgate-py`), and the
allowed calls run with the value the gate checked.

It replaces the usual recipe, `json.loads` of the model's argument text
(which keeps the last of two duplicate keys and reads `NaN` and `1e400`)
plus a pydantic model (a second parser that may read the text differently):
toolgate reads the raw response once, strictly, validates each call's
arguments against the tool's schema, authorizes it, and hands back
`arguments`, the only value to run the tool with.

    python3 examples/python/inprocess.py

prints one line per call; the exit code is 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Dict

import toolgate

SHOP = Path(__file__).resolve().parents[1] / "shop"


def main() -> int:
    # store=False: nothing is recorded, the context carries the state (as
    # `toolgate check --no-store`); the default uses the config's store.
    gate = toolgate.Gate.from_config(SHOP / "toolgate.toml", store=False)
    context = toolgate.loads((SHOP / "context.json").read_bytes())
    assert isinstance(context, dict)
    runner = toolgate.Runner(gate)

    @runner.tool("get_order")
    def get_order(order_id: str) -> Dict[str, str]:
        return {"order_id": order_id, "status": "shipped"}

    for name in ("openai-refund-needs-approval.json", "openai-duplicate-amount.json"):
        raw_body = (SHOP / "responses" / name).read_bytes()  # the raw HTTP body
        response, outcomes = runner.run(raw_body, context)
        for o in outcomes:
            if o.ran:
                print(f"{name}: {o.call.tool} ran with {o.call.arguments}: {o.result}")
            else:
                print(f"{name}: {o.call.tool} {o.call.verdict}: {o.feedback}")

    # A schema on raw text, without a Python object in between.
    refund = toolgate.Schema((SHOP.parent / "schemas" / "refund.json").read_bytes())
    for text in (
        b'{"action": "refund", "order_id": "M-6929", "amount": 4758, "notify_customer": false}',
        b'{"action": "refund", "order_id": "M-6929", "amount": 4758.0, "notify_customer": false}',
        b'{"action": "refund", "order_id": "M-6929", "amount": 1, "\\u0061mount": 4758, "notify_customer": false}',
    ):
        try:
            errors = [f"{e.code} at {e.instance_pointer or '/'}" for e in refund.validate(text)]
            print("refund schema:", "valid" if not errors else ", ".join(errors))
        except toolgate.JSONError as e:
            print(f"refund schema: not strict JSON: {e.code} at line {e.line} column {e.column}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
