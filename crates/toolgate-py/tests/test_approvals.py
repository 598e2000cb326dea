"""Approvals from Python (store build): list, show, approve, deny and grant
over the gate's store, as `toolgate approvals` does, and the CLI sees the
same approvals and audit records."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any, Dict

import pytest

import toolgate

from conftest import ROOT, toolgate_bin

SHOP = ROOT / "examples" / "shop"
REFUND = '{"order_id": "ord_1002", "amount_cents": 2599, "reason": "late"}'


@pytest.fixture()
def gate(tmp_path: Path, store_build: None) -> toolgate.Gate:
    shop = tmp_path / "shop"
    shutil.copytree(SHOP, shop, ignore=shutil.ignore_patterns("*.db", "*.db-*"))
    return toolgate.Gate.from_config(shop / "toolgate.toml", store=f"sqlite://{tmp_path / 'tg.db'}")


def ctx(turn: int) -> Dict[str, Any]:
    return {"user": "alice", "session": "py-appr", "roles": ["customer"], "turn": turn}


def test_approve_lets_the_identical_call_run_once(gate: toolgate.Gate, tmp_path: Path) -> None:
    approvals = gate.approvals()
    (held,) = gate.decide_call("refund", REFUND, ctx(1)).calls
    assert held.verdict == "needs_approval" and held.approval is not None
    pending = approvals.list()
    assert [a.id for a in pending] == [held.approval]
    a = approvals.show(held.approval)
    assert (a.state, a.kind, a.user, a.session, a.tool, a.digest) == (
        "pending", "single", "alice", "py-appr", "refund", held.digest,
    )
    done = approvals.approve(held.approval, actor="carol", note="checked the order")
    assert (done.state, done.decided_by, done.note) == ("approved", "carol", "checked the order")
    with pytest.raises(ValueError, match="conflict"):
        approvals.approve(held.approval, actor="carol")
    (ran,) = gate.decide_call("refund", REFUND, ctx(2)).calls
    assert (ran.verdict, ran.approval) == ("allow", held.approval)
    (again,) = gate.decide_call("refund", REFUND, ctx(3)).calls
    assert again.verdict == "needs_approval"
    assert approvals.show(held.approval).uses == 1
    # The CLI reads the same store.
    binary = toolgate_bin()
    if binary is not None:
        run = subprocess.run(
            [str(binary), "approvals", "show", held.approval, "--store", f"sqlite://{tmp_path / 'tg.db'}"],
            capture_output=True, text=True,
        )
        assert run.returncode == 0 and "carol" in run.stdout, run.stderr


def test_deny_and_unknown_ids(gate: toolgate.Gate) -> None:
    approvals = gate.approvals()
    (held,) = gate.decide_call("refund", REFUND, ctx(1)).calls
    assert held.approval is not None
    assert approvals.deny(held.approval, actor="carol").state == "denied"
    assert [a.state for a in approvals.list(state="denied")] == ["denied"]
    assert approvals.list() == []
    with pytest.raises(KeyError):
        approvals.show("999999")
    with pytest.raises(ValueError):
        approvals.show("not an id")
    with pytest.raises(ValueError):
        approvals.list(state="nope")  # type: ignore[arg-type]


def test_a_standing_grant_covers_the_users_calls(gate: toolgate.Gate, tmp_path: Path) -> None:
    grant = toolgate.Approvals(f"sqlite://{tmp_path / 'tg.db'}").grant(
        "alice", "refund", for_seconds=3600, note="on call", actor="carol"
    )
    assert (grant.kind, grant.state, grant.user, grant.tool, grant.session) == ("standing", "approved", "alice", "refund", None)
    (call,) = gate.decide_call("refund", REFUND, ctx(1)).calls
    assert (call.verdict, call.approval) == ("allow", grant.id)


def test_a_standing_grant_is_bound_to_its_upstream(gate: toolgate.Gate, tmp_path: Path) -> None:
    approvals = toolgate.Approvals(f"sqlite://{tmp_path / 'tg.db'}")
    billing = approvals.grant("alice", "refund", for_seconds=3600, note="", actor="carol", upstream="billing")
    assert billing.upstream == "billing"
    assert approvals.show(billing.id).upstream == "billing"
    # A call routed to no upstream (this gate's calls) is not covered by it.
    (held,) = gate.decide_call("refund", REFUND, ctx(1)).calls
    assert held.verdict == "needs_approval"
    assert approvals.show(held.approval).upstream is None
    assert approvals.show(billing.id).uses == 0
    plain = approvals.grant("alice", "refund", for_seconds=3600, note="", actor="carol")
    assert plain.upstream is None
    (call,) = gate.decide_call("refund", REFUND, ctx(2)).calls
    assert (call.verdict, call.approval) == ("allow", plain.id)
    with pytest.raises(ValueError):
        approvals.grant("alice", "refund", for_seconds=60, note="", upstream="bad name!")


def test_a_gate_without_a_store_has_no_approvals() -> None:
    gate = toolgate.Gate.from_config(SHOP / "toolgate.toml", store=False)
    with pytest.raises(toolgate.ConfigError):
        gate.approvals()
