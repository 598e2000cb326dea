"""What a Python user expects of a package: a version, the stub's names at
runtime, objects that pickle for process pools, and contexts read as the
CLI reads them."""

from __future__ import annotations

import json
import multiprocessing
import pickle
import subprocess
import typing
from concurrent.futures import ProcessPoolExecutor
from importlib.metadata import version
from pathlib import Path
from typing import Any, Dict, Tuple

import pytest

import toolgate

from conftest import ROOT, toolgate_bin

SHOP = ROOT / "examples" / "shop"
CONFIG = SHOP / "toolgate.toml"
SEARCH = {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}


def context() -> Dict[str, Any]:
    value = toolgate.loads((SHOP / "context.json").read_bytes())
    assert isinstance(value, dict)
    return value


def test_version_is_the_distributions() -> None:
    assert toolgate.__version__ == version("toolgate")
    pyproject = (ROOT / "crates" / "toolgate-py" / "pyproject.toml").read_text()
    assert f'version = "{toolgate.__version__}"' in pyproject


def test_the_stubs_names_exist_at_runtime() -> None:
    stub = (Path(toolgate.__file__).parent / "__init__.pyi").read_text()
    for name in ("JSON", "JSONDecimal", "Text", "Verdict", "Format"):
        assert f"\n{name}: TypeAlias" in stub
    for name in ("JSON", "JSONDecimal", "Text", "Verdict", "Format", "SchemaViolation", "features", "__version__"):
        assert hasattr(toolgate, name) and name in toolgate.__all__
    assert typing.get_args(toolgate.Verdict) == ("allow", "needs_approval", "deny")
    assert "mcp" in typing.get_args(toolgate.Format)
    assert memoryview in typing.get_args(toolgate.Text)
    assert isinstance(toolgate.features, frozenset)


def test_schema_pickles_with_its_mode_and_limits() -> None:
    for schema in (
        toolgate.Schema(SEARCH),
        toolgate.Schema(SEARCH, standard=True),
        toolgate.Schema(SEARCH, max_depth=2, allow_noncharacters=True),
    ):
        again = pickle.loads(pickle.dumps(schema))
        for text in (b'{"query": "x"}', b'{"query": "x", "extra": 1}', b'{"query": {"a": {}}}', b'{"query": "\xef\xb7\x90"}'):
            assert again.is_valid(text) == schema.is_valid(text), text


def test_gate_pickles_as_its_config() -> None:
    gate = toolgate.Gate.from_config(CONFIG, store=False)
    again = pickle.loads(pickle.dumps(gate))
    assert not again.has_store
    body = (SHOP / "responses" / "openai-refund-needs-approval.json").read_bytes()
    assert again.decide(body, context()).to_dict() == gate.decide(body, context()).to_dict()


def decide_in_worker(job: Tuple[toolgate.Gate, toolgate.Schema, bytes]) -> Tuple[str, Any]:
    gate, schema, body = job
    return gate.decide(body, context()).verdict, schema.loads(b'{"query": "boots"}')


def test_a_process_pool_gets_gate_and_schema() -> None:
    gate = toolgate.Gate.from_config(CONFIG, store=False)
    body = (SHOP / "responses" / "openai-search.json").read_bytes()
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        verdict, value = pool.submit(decide_in_worker, (gate, toolgate.Schema(SEARCH), body)).result()
    assert (verdict, value) == ("allow", {"query": "boots"})


def test_a_float_turn_is_refused_as_the_cli_refuses_it(tmp_path: Path) -> None:
    gate = toolgate.Gate.from_config(CONFIG, store=False)
    body = (SHOP / "responses" / "openai-search.json").read_bytes()
    ctx = {**context(), "turn": 3.0}
    with pytest.raises(ValueError) as info:
        gate.decide(body, ctx)
    assert "turn" in str(info.value)
    with pytest.raises(ValueError):
        gate.decide(body, json.dumps(ctx).encode())
    with pytest.raises(ValueError):
        gate.decide_call("search", '{"query": "boots"}', ctx)
    assert gate.decide(body, {**ctx, "turn": 3}).verdict == "allow"
    binary = toolgate_bin()
    if binary is None:
        return
    path = tmp_path / "context.json"
    path.write_text(json.dumps(ctx))
    run = subprocess.run(
        [str(binary), "check", "--no-store", "--config", str(CONFIG), "--context", str(path), str(SHOP / "responses" / "openai-search.json")],
        capture_output=True,
        text=True,
    )
    assert run.returncode not in (0, 1), run.stdout
    assert "turn" in run.stderr
