"""toolgate.Schema: strict JSON Schema on raw text or parsed values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import toolgate

REFUND = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^ord_[0-9]+$"},
        "amount_cents": {"type": "integer", "minimum": 1, "maximum": 100000},
    },
    "required": ["order_id", "amount_cents"],
}


@pytest.fixture(scope="module")
def refund() -> toolgate.Schema:
    return toolgate.Schema(REFUND)


def codes(errors: list) -> list:  # type: ignore[type-arg]
    return [(e.code, e.exact_instance_pointer) for e in errors]


def test_valid(refund: toolgate.Schema) -> None:
    for data in (
        b'{"order_id": "ord_1", "amount_cents": 1200}',
        '{"order_id": "ord_1", "amount_cents": 1200}',
        {"order_id": "ord_1", "amount_cents": 1200},
        # An integer lexeme of any length is an integer; the range is checked.
        {"order_id": "ord_1", "amount_cents": 99999},
    ):
        assert refund.is_valid(data)
        assert refund.validate(data) == []


@pytest.mark.parametrize(
    "data, expected",
    [
        # The seeds' cases: a string, a boolean, a float lexeme for an integer.
        (b'{"order_id": "ord_1", "amount_cents": "1200"}', [("type_mismatch", "/amount_cents")]),
        (b'{"order_id": "ord_1", "amount_cents": true}', [("type_mismatch", "/amount_cents")]),
        (b'{"order_id": "ord_1", "amount_cents": 3.0}', [("type_mismatch", "/amount_cents")]),
        ({"order_id": "ord_1", "amount_cents": True}, [("type_mismatch", "/amount_cents")]),
        ({"order_id": "ord_1", "amount_cents": 3.0}, [("type_mismatch", "/amount_cents")]),
        # Extra keys: the strict mode closes an object schema with properties.
        (
            b'{"order_id": "ord_1", "amount_cents": 5, "admin": true}',
            [("unknown_property", "/admin")],
        ),
        (b'{"order_id": "ord_1", "amount_cents": 10000000000000000000000}', None),
    ],
)
def test_invalid(refund: toolgate.Schema, data: object, expected: object) -> None:
    errors = refund.validate(data)  # type: ignore[arg-type]
    assert errors
    if expected is not None:
        assert codes(errors) == expected
    assert not refund.is_valid(data)  # type: ignore[arg-type]
    for e in errors:
        assert e.keyword_location.startswith("/")
        # The message says the constraint, never the value.
        assert "1200" not in e.message and "true" not in e.message


def test_standard_mode_is_the_specification() -> None:
    s = toolgate.Schema(REFUND, standard=True)
    assert s.is_valid({"order_id": "ord_1", "amount_cents": 3.0})
    assert s.is_valid({"order_id": "ord_1", "amount_cents": 3, "extra": 1})
    assert toolgate.Schema({"type": "object", "x-note": 1}, standard=True).is_valid({})


def test_raw_text_is_parsed_strictly(refund: toolgate.Schema) -> None:
    smuggled = b'{"order_id": "ord_1", "amount_cents": 5, "\\u0061mount_cents": 99999}'
    assert not refund.is_valid(smuggled)
    with pytest.raises(toolgate.JSONError) as info:
        refund.validate(smuggled)
    assert info.value.code == "duplicate_key"
    for text in (b'{"order_id": "ord_1", "amount_cents": NaN}', b'{"amount_cents": 1e400}', b'{"order_id": "ord_1"'):
        assert not refund.is_valid(text)
        with pytest.raises(toolgate.JSONError):
            refund.validate(text)


def test_schema_from_text_and_compile_errors(root: Path) -> None:
    text = (root / "examples" / "schemas" / "refund.json").read_bytes()
    s = toolgate.Schema(text)
    assert toolgate.Schema(json.loads(text)).validate({}) == s.validate({})
    with pytest.raises(toolgate.SchemaError) as info:
        toolgate.Schema({"type": "object", "properties": {"a": {"tpye": "string"}}})
    e = info.value
    assert (e.code, e.pointer, e.keyword) == ("unknown_keyword", "/properties/a/tpye", "tpye")
    assert isinstance(e, ValueError)
    with pytest.raises(toolgate.SchemaError) as info:
        toolgate.Schema({"type": "strnig"})
    assert info.value.keyword == "type"
    with pytest.raises(toolgate.JSONError):
        toolgate.Schema(b'{"type": "object", "type": "string"}')
    with pytest.raises(TypeError):
        toolgate.Schema({"type": ("object",)})  # type: ignore[dict-item]


def test_instance_conversion_is_strict(refund: toolgate.Schema) -> None:
    with pytest.raises(TypeError):
        refund.is_valid({"order_id": "ord_1", "amount_cents": 5, 3: 1})  # type: ignore[dict-item]
    with pytest.raises(ValueError):
        refund.validate({"order_id": "ord_1", "amount_cents": float("nan")})
