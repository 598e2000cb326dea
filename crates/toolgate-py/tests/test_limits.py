"""Limits and session labels from Python: an allowed call's charges and
labels, a refused call's retry time, and over the store (store build) the
session's labels, the tools a limit has used up, and an audited reset."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict

import pytest

import toolgate

from conftest import ROOT

SHOP = ROOT / "examples" / "shop"
PAGE = '{"url": "https://docs.example.com/returns"}'
ORDER = '{"order_id": "ord_1001"}'


def shop(tmp_path: Path) -> Path:
    copy = tmp_path / "shop"
    shutil.copytree(SHOP, copy, ignore=shutil.ignore_patterns("*.db", "*.db-*"))
    return copy / "toolgate.toml"


def ctx(session: str, **more: Any) -> Dict[str, Any]:
    return {"user": "alice", "session": session, "roles": ["customer"], "turn": 1, **more}


def test_without_a_store_the_caller_carries_charges_and_labels(tmp_path: Path) -> None:
    gate = toolgate.Gate.from_config(shop(tmp_path), store=False)
    (call,) = gate.decide_call("fetch_url", PAGE, ctx("py-lim-1"), call_id="c1").calls
    assert call.verdict == "allow"
    assert call.charges == [("fetches_per_session", "1")]
    assert call.labels == ["untrusted_content"]
    assert call.retry_after is None
    # Three fetches in the window: the fourth is refused, with a retry time.
    events = [{"limit": "fetches_per_session", "at": 1767225600, "amount": 1}] * 3
    (over,) = gate.decide_call(
        "fetch_url", PAGE, ctx("py-lim-1", now=1767225660, limit_events=events), call_id="c2"
    ).calls
    assert over.verdict == "deny"
    assert [r.code for r in over.reasons] == ["rate_limited"]
    assert over.retry_after == 540
    assert over.charges == [] and over.labels == []
    # The labels the caller carries are what the trifecta rule reads.
    (held,) = gate.decide_call(
        "fetch_url", PAGE, ctx("py-lim-1", labels=["untrusted_content", "private_data"]), call_id="c3"
    ).calls
    assert held.verdict == "needs_approval"
    assert held.charges == [] and held.labels == []


def test_the_store_keeps_labels_and_hides_what_is_used_up(tmp_path: Path, store_build: None, cli: Path) -> None:
    config = shop(tmp_path)
    gate = toolgate.Gate.from_config(config)
    assert gate.session_labels("py-lim-2") == []
    (order,) = gate.decide_call("get_order", ORDER, ctx("py-lim-2"), call_id="o1").calls
    assert order.allowed
    for i in range(3):
        (page,) = gate.decide_call("fetch_url", PAGE, ctx("py-lim-2"), call_id=f"f{i}").calls
        # After the first fetch the session holds both labels: the trifecta
        # holds the next ones for a human (held calls do not count).
        assert page.verdict == ("allow" if i == 0 else "needs_approval"), page.feedback
    assert gate.session_labels("py-lim-2") == ["private_data", "untrusted_content"]
    assert gate.exhausted_tools("alice", session="py-lim-2") == []
    # In a session without private data, three fetches use the limit up.
    for i in range(3):
        (page,) = gate.decide_call("fetch_url", PAGE, ctx("py-lim-3"), call_id=f"g{i}").calls
        assert page.allowed, page.feedback
    assert gate.exhausted_tools("alice", session="py-lim-3") == ["fetch_url"]
    (over,) = gate.decide_call("fetch_url", PAGE, ctx("py-lim-3"), call_id="g3").calls
    assert [r.code for r in over.reasons] == ["rate_limited"] and over.retry_after is not None
    # An audited reset frees it; a reset must name the limit's own scope.
    with pytest.raises(ValueError, match="per session"):
        gate.reset_limit("fetches_per_session", user="alice", reason="wrong scope")
    with pytest.raises(ValueError, match="no \\[\\[limit\\]\\] named"):
        gate.reset_limit("nope", session="py-lim-3", reason="no such limit")
    assert gate.reset_limit("fetches_per_session", session="py-lim-3", reason="page cache fixed", actor="ops") == 3
    assert gate.exhausted_tools("alice", session="py-lim-3") == []
    # The CLI sees the reset in the store's audit log.
    out = subprocess.run(
        [str(cli), "audit", "tail", "-n", "1", "--jsonl", "--config", str(config)],
        capture_output=True, text=True, check=True,
    )
    assert "limit_reset" in out.stdout and "fetches_per_session/session/py-lim-3" in out.stdout, out.stdout


def test_without_a_store_the_store_reads_are_refused(tmp_path: Path, store_build: None) -> None:
    gate = toolgate.Gate.from_config(shop(tmp_path), store=False)
    with pytest.raises(toolgate.ConfigError, match="without a store"):
        gate.session_labels("s")
    with pytest.raises(toolgate.ConfigError, match="without a store"):
        gate.exhausted_tools("alice")
