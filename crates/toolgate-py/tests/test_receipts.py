"""toolgate.verify_receipt from the executor's side: receipts made by the
gate (``toolgate check --json`` with ``[gate] receipt_key``) pass only for
an allowed call's tool and exact canonical arguments, before they expire."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

import toolgate

CONFIG = """
[gate]
receipt_key = "receipts.key"
receipt_seconds = 60

[authorization]
mode = "none"

[[tool]]
name = "lookup"
risk = "read"
schema_json = '{"type":"object","properties":{"order_id":{"type":"string"},"n":{"type":"integer","maximum":5}},"additionalProperties":false}'
"""


def body(args: str) -> str:
    return json.dumps(
        {
            "id": "c",
            "object": "chat.completion",
            "created": 1,
            "model": "m",
            "choices": [
                {
                    "index": 0,
                    "finish_reason": "tool_calls",
                    "message": {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {"id": "call_5", "type": "function", "function": {"name": "lookup", "arguments": args}}
                        ],
                    },
                }
            ],
        }
    )


def decide(cli: Path, tmp: Path, args: str) -> Dict[str, Any]:
    (tmp / "in.json").write_text(body(args))
    run = subprocess.run(
        [str(cli), "check", "--no-store", "--json", "--config", str(tmp / "toolgate.toml"), str(tmp / "in.json")],
        capture_output=True,
        text=True,
    )
    assert run.returncode in (0, 1), run.stderr
    decision: Dict[str, Any] = json.loads(run.stdout)["decisions"][0]
    return decision


@pytest.fixture()
def setup(cli: Path, tmp_path: Path) -> Tuple[Path, str]:
    (tmp_path / "receipts.key").write_text("33" * 32)
    (tmp_path / "toolgate.toml").write_text(CONFIG)
    key = subprocess.run(
        [str(cli), "receipt", "public-key", "--config", str(tmp_path / "toolgate.toml")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    return tmp_path, key


def test_an_allowed_calls_receipt_verifies(cli: Path, setup: Tuple[Path, str]) -> None:
    tmp, key = setup
    d = decide(cli, tmp, '{ "order_id": "o-1", "n": 2 }')
    assert d["verdict"] == "allow"
    args = toolgate.canonical(d["arguments"])
    if isinstance(args, bytes):
        args = args.decode()
    assert args == '{"n":2,"order_id":"o-1"}'
    claims = toolgate.verify_receipt(d["receipt"], "lookup", args, key)
    assert claims["call_id"] == "call_5"
    assert claims["tool"] == "lookup"
    assert claims["verdict"] == "allow"
    assert claims["args"] == d["digest"]
    assert claims["expires"] - claims["issued"] == 60
    # bytes work too
    assert toolgate.verify_receipt(d["receipt"], "lookup", args.encode(), key)["tool"] == "lookup"


def code_of(receipt: str, tool: str, args: str, key: str, now: Any = None) -> str:
    with pytest.raises(toolgate.ReceiptError) as e:
        toolgate.verify_receipt(receipt, tool, args, key, now)
    code: str = e.value.code
    return code


def test_attacks_are_refused_with_their_codes(cli: Path, setup: Tuple[Path, str]) -> None:
    tmp, key = setup
    d = decide(cli, tmp, '{"order_id":"o-1","n":2}')
    receipt, args = d["receipt"], '{"n":2,"order_id":"o-1"}'
    claims = toolgate.verify_receipt(receipt, "lookup", args, key)
    # Other arguments (also the same value written otherwise), other tool.
    assert code_of(receipt, "lookup", '{"n":3,"order_id":"o-1"}', key) == "receipt_other_arguments"
    assert code_of(receipt, "lookup", '{"order_id":"o-1","n":2}', key) == "receipt_other_arguments"
    assert code_of(receipt, "delete", args, key) == "receipt_other_tool"
    # Replayed after it expired.
    assert code_of(receipt, "lookup", args, key, claims["expires"]) == "receipt_expired"
    # Another gate's key; a forged payload (expiry) under the old signature.
    (tmp / "other.key").write_text("44" * 32)
    (tmp / "other.toml").write_text(CONFIG.replace("receipts.key", "other.key"))
    other = subprocess.run(
        [str(cli), "receipt", "public-key", "--config", str(tmp / "other.toml")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert other != key
    assert code_of(receipt, "lookup", args, other) == "receipt_bad_signature"
    prefix, payload, sig = receipt.split(".")
    text = base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)).decode()
    later = text.replace(str(claims["expires"]), str(claims["expires"] + 10**6))
    forged = ".".join([prefix, base64.urlsafe_b64encode(later.encode()).decode().rstrip("="), sig])
    assert code_of(forged, "lookup", args, key) == "receipt_bad_signature"
    assert code_of("tgr1.x.y", "lookup", args, key) == "receipt_malformed"
    # A denied call's receipt, and the deny rewritten as an allow.
    denied = decide(cli, tmp, '{"order_id":"o-1","n":9}')
    assert denied["verdict"] == "deny"
    dargs = '{"n":9,"order_id":"o-1"}'
    assert code_of(denied["receipt"], "lookup", dargs, key) == "receipt_not_allowed"
    p, pl, s = denied["receipt"].split(".")
    t = base64.urlsafe_b64decode(pl + "=" * (-len(pl) % 4)).decode().replace('"deny"', '"allow"')
    as_allow = ".".join([p, base64.urlsafe_b64encode(t.encode()).decode().rstrip("="), s])
    assert code_of(as_allow, "lookup", dargs, key) == "receipt_bad_signature"
    # Not a key at all: a plain ValueError, not a receipt verdict.
    with pytest.raises(ValueError):
        toolgate.verify_receipt(receipt, "lookup", args, "zz")
    with pytest.raises(TypeError):
        toolgate.verify_receipt(receipt, "lookup", {"n": 2}, key)  # type: ignore[arg-type]


def test_the_python_gate_hands_out_the_decisions_receipt(setup: Tuple[Path, str]) -> None:
    tmp, key = setup
    gate = toolgate.Gate.from_config(str(tmp / "toolgate.toml"), store=False)
    context = {"user": "alice", "session": "s", "turn": 1}
    allowed = gate.decide_call("lookup", '{ "order_id": "o-1", "n": 2 }', context, call_id="call_7").calls[0]
    assert allowed.verdict == "allow" and allowed.receipt is not None
    args = '{"n":2,"order_id":"o-1"}'
    claims = toolgate.verify_receipt(allowed.receipt, "lookup", args, key)
    assert (claims["call_id"], claims["verdict"], claims["args"]) == ("call_7", "allow", allowed.digest)
    # A denied call's receipt says so, and never lets the call run.
    denied = gate.decide(body('{"order_id":"o-1","n":9}').encode(), context).calls[0]
    assert denied.verdict == "deny" and denied.receipt is not None
    assert code_of(denied.receipt, "lookup", '{"n":9,"order_id":"o-1"}', key) == "receipt_not_allowed"
    # Arguments that do not parse have no digest, so no receipt.
    broken = gate.decide_call("lookup", '{"order_id":"o-1","n":2', context).calls[0]
    assert broken.verdict == "deny" and broken.receipt is None
    # Without a receipt key, no receipt.
    (tmp / "plain.toml").write_text(CONFIG.replace('receipt_key = "receipts.key"\nreceipt_seconds = 60\n', ""))
    plain = toolgate.Gate.from_config(str(tmp / "plain.toml"), store=False)
    assert plain.decide_call("lookup", '{"order_id":"o-1","n":2}', context).calls[0].receipt is None
