"""`Schema.loads`: strict parse, validation and the value out in one call,
agreeing with `is_valid` and `loads` on the whole perf corpus; exact
decimals on request."""

from __future__ import annotations

import json
import os
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterator, Tuple

import pytest

import toolgate

from conftest import ROOT


@pytest.fixture(scope="module")
def perf() -> Path:
    """`perf` in the folder `TOOLGATE_CORPORA` names, or ../shared/perf
    beside the checkout (as the Rust tests find it)."""
    named = os.environ.get("TOOLGATE_CORPORA")
    path = Path(named) / "perf" if named else ROOT.parent / "shared" / "perf"
    if not (path / "schemas").is_dir():
        pytest.fail(
            f"no perf corpus at {path}: run scripts/fetch-corpora.sh DIR and set TOOLGATE_CORPORA=DIR"
        )
    return path


def lines(perf: Path) -> Iterator[Tuple[str, bytes, bool]]:
    for path in sorted((perf / "valid").glob("*.jsonl")):
        tool = path.name.split(".")[1]
        for line in path.read_bytes().splitlines():
            if line:
                yield tool, line, True
    for path in sorted((perf / "bad").glob("*.tsv")):
        tool = path.name.split(".")[1]
        for line in path.read_bytes().splitlines():
            if line:
                yield tool, line.split(b"\t", 1)[1], False


def test_agrees_with_is_valid_and_loads_on_the_corpus(perf: Path) -> None:
    schemas = {p.stem: toolgate.Schema(p.read_bytes()) for p in (perf / "schemas").glob("*.json")}
    seen = {True: 0, False: 0}
    for tool, raw, valid in lines(perf):
        schema = schemas[tool]
        assert schema.is_valid(raw) is valid
        if valid:
            assert schema.loads(raw) == toolgate.loads(raw)
        else:
            with pytest.raises((toolgate.JSONError, toolgate.SchemaViolation)):
                schema.loads(raw)
        seen[valid] += 1
    assert seen[True] > 20_000 and seen[False] > 2_000


def test_the_value_is_the_one_checked() -> None:
    schema = toolgate.Schema({"type": "object", "properties": {"n": {"type": "integer"}}})
    assert schema.loads(b'{"n": 12345678901234567890123}') == {"n": 12345678901234567890123}
    assert schema.loads('{"n": 1}') == {"n": 1}
    with pytest.raises(toolgate.SchemaViolation) as info:
        schema.loads(b'{"n": 1.0}')
    e = info.value
    assert (e.code, e.instance_pointer, e.keyword_location) == ("type_mismatch", "/n", "/properties/n/type")
    assert [x.code for x in e.errors] == ["type_mismatch"]
    assert str(e) == "type_mismatch at `/n`: expected integer"
    with pytest.raises(toolgate.JSONError) as json_info:
        schema.loads(b'{"n": 1, "n": 2}')
    assert json_info.value.code == "duplicate_key"
    with pytest.raises(TypeError):
        schema.loads({"n": 1})  # type: ignore[call-overload]


def test_every_violation_is_listed() -> None:
    schema = toolgate.Schema(
        {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["c"]}
    )
    with pytest.raises(toolgate.SchemaViolation) as info:
        schema.loads(b'{"a": 1, "b": "x"}')
    assert sorted(x.code for x in info.value.errors) == ["missing_required", "type_mismatch", "type_mismatch"]


def test_decimal_gives_exact_non_integers() -> None:
    text = b'{"price": 0.1, "qty": 3, "big": 12345678901234567890, "e": 1e2, "z": -0.0}'
    value: Any = toolgate.loads(text, decimal=True)
    assert value == {"price": Decimal("0.1"), "qty": 3, "big": 12345678901234567890, "e": Decimal("1E+2"), "z": Decimal("-0.0")}
    assert type(value["qty"]) is int and type(value["price"]) is Decimal
    assert str(value["price"]) == "0.1"
    assert toolgate.loads(text)["price"] == 0.1  # type: ignore[index,call-overload]
    schema = toolgate.Schema({"type": "object", "properties": {"price": {"type": "number", "maximum": 1}}})
    assert schema.loads(b'{"price": 0.30}', decimal=True) == {"price": Decimal("0.30")}
    # The strict profile refuses what a double cannot hold, Decimal or not.
    with pytest.raises(toolgate.JSONError) as info:
        toolgate.loads(b"100.00000000000000000001", decimal=True)
    assert info.value.code == "number_too_precise"


def test_large_inputs_give_the_same_value() -> None:
    doc = {"items": [{"sku": f"SKU-{i:06d}", "qty": i, "price": i / 4} for i in range(20_000)]}
    text = json.dumps(doc).encode()
    assert len(text) > 64 * 1024
    schema = toolgate.Schema({"type": "object", "properties": {"items": {"type": "array"}}})
    assert schema.loads(text) == doc
    assert toolgate.loads(text) == doc
    assert toolgate.loads(memoryview(text)) == doc
