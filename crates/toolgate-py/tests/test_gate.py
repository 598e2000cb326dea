"""toolgate.Gate: the shop example's decisions, in-process, equal to `toolgate check --json`."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any, Dict, List

import pytest

import toolgate

from conftest import ROOT, toolgate_bin

SHOP = ROOT / "examples" / "shop"
CONFIG = SHOP / "toolgate.toml"
RESPONSES = sorted((SHOP / "responses").iterdir())
SNAPSHOTS = ROOT / "crates" / "toolgate-cli" / "tests" / "snapshots"


def context(name: str = "context.json") -> Dict[str, Any]:
    value = toolgate.loads((SHOP / name).read_bytes())
    assert isinstance(value, dict)
    return value


def expected_lines(paths: List[Path], ctx: str = "context.json") -> Dict[str, Dict[str, Any]]:
    """`toolgate check --no-store --json` per input: from the built binary,
    else from the CLI's committed snapshots."""
    binary = toolgate_bin()
    out: Dict[str, Dict[str, Any]] = {}
    if binary is not None:
        run = subprocess.run(
            [str(binary), "check", "--no-store", "--config", str(CONFIG), "--context", str(SHOP / ctx), "--json", *map(str, paths)],
            capture_output=True,
            text=True,
        )
        assert run.returncode in (0, 1), run.stderr
        for line in run.stdout.splitlines():
            obj = json.loads(line)
            out[Path(obj.pop("input")).name] = obj
        return out
    for path in paths:
        snap = (SNAPSHOTS / f"check_json__{path.name.replace('.', '_')}.snap").read_text()
        stdout = snap.split("--- stdout\n", 1)[1].split("--- stderr", 1)[0].strip()
        obj = json.loads(stdout)
        obj.pop("input")
        out[path.name] = obj
    return out


@pytest.fixture(scope="module")
def gate() -> toolgate.Gate:
    g = toolgate.Gate.from_config(CONFIG, store=False)
    assert not g.has_store
    return g


def test_shop_decisions_equal_the_cli(gate: toolgate.Gate) -> None:
    assert len(RESPONSES) >= 15
    expected = expected_lines(RESPONSES)
    ctx = context()
    for path in RESPONSES:
        r = gate.decide(path.read_bytes(), ctx)
        want = expected[path.name]
        assert r.to_dict() == want, path.name
        assert json.loads(r.to_json()) == want
        assert r.verdict == want["verdict"] and r.format == want["format"] and r.streamed == want["streamed"]
        assert [(f.code, f.exact_pointer, f.denies) for f in r.findings] == [
            (f["code"], f["pointer"], f["denies"]) for f in want["findings"]
        ]
        assert len(r.calls) == len(want["decisions"])
        for call, w in zip(r.calls, want["decisions"]):
            assert (call.index, call.call_id, call.tool, call.verdict) == (w["index"], w["call_id"], w["tool"], w["verdict"])
            assert (call.digest, call.approval, call.policies, call.feedback) == (
                w["digest"], w["approval"], w["policies"], w["feedback"],
            )
            assert [(x.code, x.exact_pointer, x.detail) for x in call.reasons] == [
                (x["code"], x["pointer"], x.get("detail")) for x in w["reasons"]
            ]
            # The pointer shown is the feedback's: the schema's names only.
            for x in call.reasons:
                if x.pointer:
                    assert f"{x.code} at {x.pointer}" in call.feedback or len(call.reasons) > 8
            assert call.arguments == w["arguments"]
            if call.verdict == "deny":
                assert call.arguments is None
            elif call.arguments is not None:
                # The arguments are the value the digest was taken of.
                assert toolgate.digest(call.arguments) == call.digest
    # carol, a support agent
    carol = SHOP / "responses" / "openai-support-refunds.json"
    want = expected_lines([carol], "context-carol.json")[carol.name]
    assert gate.decide(carol.read_bytes(), context("context-carol.json")).to_dict() == want


def test_the_seeds_cases_through_the_gate(gate: toolgate.Gate) -> None:
    r = gate.decide((SHOP / "responses" / "openai-duplicate-amount.json").read_bytes(), context())
    assert r.verdict == "deny"
    dup = [c for c in r.calls if any(x.code == "duplicate_key" for x in c.reasons)]
    assert dup and all(c.arguments is None for c in dup)
    cut = gate.decide((SHOP / "responses" / "openai-truncated.json").read_bytes(), context())
    assert cut.verdict == "deny" and all(c.verdict == "deny" for c in cut.calls)
    assert any(f.code == "truncated" for f in cut.findings) or (cut.rejected and cut.rejected.code)
    coerced = gate.decide((SHOP / "responses" / "gemini-coerced-types.json").read_bytes(), context())
    assert any(x.code in ("type_mismatch", "unknown_property") for c in coerced.calls for x in c.reasons)


def test_arguments_are_a_fresh_copy(gate: toolgate.Gate) -> None:
    r = gate.decide((SHOP / "responses" / "openai-search.json").read_bytes(), context())
    call = r.calls[0]
    assert call.verdict == "allow"
    args = call.arguments
    assert isinstance(args, dict)
    args["query"] = "changed"
    assert call.arguments != args


def test_bad_input_raises(gate: toolgate.Gate) -> None:
    body = (SHOP / "responses" / "openai-search.json").read_bytes()
    with pytest.raises(ValueError):
        gate.decide(body, {"user": "alice", "session": "s", "turn": 1, "nope": 1})
    with pytest.raises(ValueError):
        gate.decide(body, {"user": "alice", "session": "s", "turn": float("nan")})
    with pytest.raises(TypeError):
        gate.decide(body, {"user": "alice", "session": "s", "turn": (1,)})
    with pytest.raises(ValueError):
        gate.decide(body, b'{"user": "alice", "user": "bob", "session": "s", "turn": 1}')
    with pytest.raises(ValueError):
        gate.decide(body, context(), format="nope")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        gate.decide(json.loads(body), context())  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        gate.decide(b" " * (64 << 20), context())
    with pytest.raises(toolgate.ConfigError):
        toolgate.Gate.from_config(SHOP / "missing.toml")
    with pytest.raises(TypeError):
        toolgate.Gate.from_config(CONFIG, store=1)  # type: ignore[arg-type]


def audit_rows(db: Path) -> int:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        tables = [t for (t,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        return sum(con.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables)
    finally:
        con.close()


def test_with_a_store_decisions_are_recorded_and_approvals_shared(tmp_path: Path, store_build: None) -> None:
    shop = tmp_path / "shop"
    shutil.copytree(SHOP, shop, ignore=shutil.ignore_patterns("*.db", "*.db-*"))
    db = tmp_path / "tg.db"
    url = f"sqlite://{db}"
    gate = toolgate.Gate.from_config(shop / "toolgate.toml", store=url)
    assert gate.has_store
    body = (shop / "responses" / "openai-refund-needs-approval.json").read_bytes()
    ctx = {"user": "alice", "session": "py-1", "roles": ["customer"], "turn": 1}
    r = gate.decide(body, ctx)
    refund = r.calls[1]
    assert (refund.tool, refund.verdict) == ("refund", "needs_approval")
    assert refund.approval is not None
    rows = audit_rows(db)
    assert rows > 0
    # Bad input: raises, and nothing is recorded.
    with pytest.raises(ValueError):
        gate.decide(body, {**ctx, "turn": "2"})
    assert audit_rows(db) == rows
    binary = toolgate_bin()
    if binary is None:
        return
    # A human approves it with the CLI on the same store: the identical call
    # goes through exactly once.
    run = subprocess.run(
        [str(binary), "approvals", "approve", refund.approval, "--store", url, "--actor", "pytest"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    again = gate.decide(body, {**ctx, "turn": 2})
    assert again.calls[1].verdict == "allow" and again.calls[1].approval == refund.approval
    assert again.calls[1].arguments == {"amount_cents": 2599, "order_id": "ord_1002", "reason": "late"}
    third = gate.decide(body, {**ctx, "turn": 3})
    assert third.calls[1].verdict != "allow"


def test_runner_runs_only_allowed_calls_with_the_checked_arguments(gate: toolgate.Gate) -> None:
    runner = toolgate.Runner(gate)
    ran: List[Dict[str, Any]] = []

    @runner.tool("get_order")
    def get_order(order_id: str) -> Dict[str, str]:
        ran.append({"tool": "get_order", "order_id": order_id})
        return {"order_id": order_id, "status": "shipped"}

    @runner.tool()
    def refund(order_id: str, amount_cents: int, reason: str) -> None:  # pragma: no cover - must not run
        ran.append({"tool": "refund"})

    response, outcomes = runner.run((SHOP / "responses" / "openai-refund-needs-approval.json").read_bytes(), context())
    assert [o.ran for o in outcomes] == [True, False]
    assert outcomes[0].result == {"order_id": "ord_1002", "status": "shipped"}
    assert outcomes[1].feedback == response.calls[1].feedback
    assert ran == [{"tool": "get_order", "order_id": "ord_1002"}]
    _, outcomes = runner.run((SHOP / "responses" / "openai-duplicate-amount.json").read_bytes(), context())
    assert not any(o.ran for o in outcomes if o.call.tool == "refund")
    with pytest.raises(ValueError):
        runner.register("get_order", get_order)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_store_shared_with_a_running_toolgate_serve(tmp_path: Path, store_build: None) -> None:
    import time
    import urllib.request

    binary = toolgate_bin()
    if binary is None:
        if __import__("conftest").require_external():
            pytest.fail("no toolgate binary")
        pytest.skip("no toolgate binary")
    shop = tmp_path / "shop"
    shutil.copytree(SHOP, shop, ignore=shutil.ignore_patterns("*.db", "*.db-*"))
    gate = toolgate.Gate.from_config(shop / "toolgate.toml")  # the config's store: shop/toolgate.db
    assert gate.has_store
    body = (shop / "responses" / "openai-refund-needs-approval.json").read_bytes()
    ctx = {"user": "alice", "session": "py-serve", "roles": ["customer"], "turn": 1}
    held = gate.decide(body, ctx).calls[1]
    assert held.verdict == "needs_approval" and held.approval is not None
    port = free_port()
    server = subprocess.Popen(
        [str(binary), "serve", "--config", str(shop / "toolgate.toml"), "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        for _ in range(200):
            try:
                with urllib.request.urlopen(f"{base}/healthz", timeout=1):
                    break
            except OSError:
                if server.poll() is not None:
                    raise AssertionError(server.stderr.read().decode() if server.stderr else "serve exited")
                time.sleep(0.05)
        # The pending approval made in-process is the server's to show and approve.
        request = urllib.request.Request(
            f"{base}/v1/approvals/{held.approval}/approve",
            data=b'{"note": "checked"}',
            method="POST",
            headers={"Authorization": "Bearer approver-demo-token", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200
        # Exactly one identical in-process call goes through.
        allowed = gate.decide(body, {**ctx, "turn": 2}).calls[1]
        assert (allowed.verdict, allowed.approval) == ("allow", held.approval)
        assert allowed.arguments == {"amount_cents": 2599, "order_id": "ord_1002", "reason": "late"}
        assert gate.decide(body, {**ctx, "turn": 3}).calls[1].verdict != "allow"
        # A different amount is not covered by the approval.
        changed = body.replace(b"2599", b"2598")
        assert changed != body
        assert gate.decide(changed, {**ctx, "turn": 4}).calls[1].verdict != "allow"
    finally:
        server.terminate()
        server.wait(timeout=30)
