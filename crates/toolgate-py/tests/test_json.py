"""toolgate.loads, canonical and digest: the strict parser through Python."""

from __future__ import annotations

import csv
import json
import subprocess
from pathlib import Path
from typing import Dict, List, Tuple

import pytest

import toolgate


def expectations(corpora: Path) -> Dict[str, bool]:
    out: Dict[str, bool] = {}
    with open(corpora / "strict-profile-expectations.tsv", newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            out[row["file"]] = row["expect"] == "accept"
    return out


def cases(corpora: Path) -> List[Tuple[str, Path, bool]]:
    """Every JSONTestSuite parsing case and extra case with its verdict, as
    crates/toolgate-json/tests/json_test_suite.rs derives it."""
    listed = expectations(corpora)
    seen = 0
    out = []
    for folder, use_tsv in (("JSONTestSuite/test_parsing", True), ("extra", False)):
        files = sorted(p for p in (corpora / folder).iterdir() if p.is_file())
        assert files, f"no cases in {folder}"
        for path in files:
            verdict = listed.get(path.name) if use_tsv else None
            if verdict is not None:
                seen += 1
            elif path.name.startswith("y_"):
                verdict = True
            elif path.name.startswith("n_"):
                verdict = False
            else:
                raise AssertionError(f"{folder}/{path.name} has no verdict")
            out.append((f"{folder}/{path.name}", path, verdict))
    assert seen == len(listed), f"the TSV lists {len(listed)} files, {seen} found"
    return out


def test_json_test_suite_same_verdicts_as_the_rust_parser(corpora: Path) -> None:
    all_cases = cases(corpora)
    assert len(all_cases) > 300
    wrong = []
    for name, path, accept in all_cases:
        data = path.read_bytes()
        try:
            value = toolgate.loads(data)
        except toolgate.JSONError as e:
            if accept:
                wrong.append(f"{name}: rejected ({e.code}), expected accept")
            # The message never echoes the input.
            assert isinstance(e, ValueError)
            assert e.code.isidentifier()
            continue
        if not accept:
            wrong.append(f"{name}: accepted, expected reject")
            continue
        # Accepted values survive the canonical round trip through Python.
        text = toolgate.canonical(data)
        assert toolgate.canonical(value) == text, name
        assert toolgate.loads(text) == value, name
    assert not wrong, "\n".join(wrong)


TRANSFORMS = {
    "number_-9223372036854775809.json": "[-9223372036854775809]",
    "number_1.0.json": "[1]",
    "number_10000000000000000999.json": "[10000000000000000999]",
    "number_1e-999.json": "!number_out_of_range",
    "object_same_key_different_values.json": "!duplicate_key",
    "object_same_key_same_value.json": "!duplicate_key",
    "string_1_escaped_invalid_codepoint.json": "!lone_surrogate",
    "string_1_invalid_codepoint.json": "!invalid_utf8",
    "string_with_escaped_NULL.json": '["A\\u0000B"]',
}


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transforms(corpora: Path, name: str) -> None:
    data = (corpora / "JSONTestSuite" / "test_transform" / name).read_bytes()
    try:
        got = toolgate.canonical(data).decode()
    except toolgate.JSONError as e:
        got = "!" + e.code
    assert got == TRANSFORMS[name]


@pytest.mark.parametrize(
    "text, code, pointer",
    [
        (b'{"amount": 1, "amount": 2}', "duplicate_key", ""),
        (b'{"o": {"amount": 1, "\\u0061mount": 2}}', "duplicate_key", "/o"),
        (b'{"x": NaN}', "non_finite_number", "/x"),
        (b'{"x": Infinity}', "non_finite_number", "/x"),
        (b'{"x": 1e400}', "non_finite_number", "/x"),
        (b'{"x": 1e-400}', "number_out_of_range", "/x"),
        (b'{"order_id": "ord_1", "amount": 30', "truncated", ""),
        (b"[1,]", "invalid_syntax", "/1"),
        (b"// c\n1", "invalid_syntax", ""),
        (b"\xef\xbb\xbf{}", "byte_order_mark", ""),
        (b'"\\ud800"', "lone_surrogate", ""),
        (b'"\xff"', "invalid_utf8", ""),
        (b"{} x", "trailing_data", ""),
    ],
)
def test_the_seeds_refusals(text: bytes, code: str, pointer: str) -> None:
    with pytest.raises(toolgate.JSONError) as info:
        toolgate.loads(text)
    e = info.value
    assert (e.code, e.exact_pointer) == (code, pointer)
    # Member names the input chose are masked where a message may show them.
    assert e.pointer == "/".join("*" if t and not t.isdigit() else t for t in pointer.split("/"))
    assert e.line >= 1 and e.column >= 1 and e.offset >= 0
    assert isinstance(e, ValueError)


def test_error_messages_never_echo_the_input() -> None:
    secret = "SECRET-7731"
    for text in (
        '{"%s": 1, "%s": 2}' % (secret, secret),
        '{"a": "%s", "b": NaN}' % secret,
        '["%s", ' % secret,
        '{"a": "%s" "b"}' % secret,
    ):
        with pytest.raises(toolgate.JSONError) as info:
            toolgate.loads(text)
        assert secret not in str(info.value)
        assert secret not in repr(info.value)


def test_line_and_column() -> None:
    with pytest.raises(toolgate.JSONError) as info:
        toolgate.loads(b'{\n  "a": 1,\n  "b": tru\n}')
    assert (info.value.line, info.value.column, info.value.exact_pointer) == (3, 11, "/b")
    assert info.value.pointer == "/*"


def test_exact_integers_of_any_size() -> None:
    assert toolgate.loads(b"123456789012345678901234567890") == 123456789012345678901234567890
    assert toolgate.loads(b"-9223372036854775809") == -9223372036854775809
    assert toolgate.loads(b"-0") == 0 and isinstance(toolgate.loads(b"-0"), int)
    assert toolgate.loads(b"3.0") == 3.0 and isinstance(toolgate.loads(b"3.0"), float)
    assert toolgate.loads(b"1e2") == 100.0 and isinstance(toolgate.loads(b"1e2"), float)
    # Beyond CPython's 4300-digit limit on int(str) and str(int).
    digits = "7" + "0123456789" * 1200
    big = toolgate.loads(digits.encode())
    assert isinstance(big, int) and big % 10**9 == 123456789 and big.bit_length() > 39000
    assert toolgate.canonical(big) == digits.encode()
    assert toolgate.canonical(-big) == b"-" + digits.encode()
    assert toolgate.loads(b"-" + digits.encode()) == -big
    assert toolgate.digest(big) == toolgate.digest(digits.encode())


def test_loads_equals_json_loads_on_plain_json() -> None:
    text = '{"a": [1, -2.5, "x\\u00e9\\n", true, false, null, {}], "b": {"c": []}}'
    assert toolgate.loads(text) == json.loads(text)
    assert toolgate.loads(text.encode()) == json.loads(text)
    assert toolgate.loads(bytearray(text.encode())) == json.loads(text)


def test_limits() -> None:
    with pytest.raises(toolgate.JSONError) as info:
        toolgate.loads(b"[[[1]]]", max_depth=2)
    assert info.value.code == "too_deep"
    assert toolgate.loads(b"[[1]]", max_depth=2) == [[1]]
    with pytest.raises(toolgate.JSONError) as info:
        toolgate.loads(b"[1,2,3]", max_array_items=2)
    assert info.value.code == "too_many_items"
    with pytest.raises(toolgate.JSONError) as info:
        toolgate.loads(b'"abcdef"', max_string_bytes=3)
    assert info.value.code == "string_too_long"
    with pytest.raises(toolgate.JSONError) as info:
        toolgate.loads(b"[1]" + b" " * 100, max_input_bytes=50)
    assert info.value.code == "too_large"
    with pytest.raises(toolgate.JSONError) as info:
        toolgate.loads('"\ufdd0"')
    assert info.value.code == "noncharacter"
    assert toolgate.loads('"\ufdd0"', allow_noncharacters=True) == "\ufdd0"
    for bad in ({"max_depth": 0}, {"max_depth": 1025}, {"max_depth": -1}):
        with pytest.raises(ValueError):
            toolgate.loads(b"1", **bad)
    with pytest.raises(TypeError):
        toolgate.loads(b"1", max_dept=3)
    with pytest.raises(TypeError):
        toolgate.loads(b"1", max_depth=True)


def test_loads_takes_text_only() -> None:
    for bad in (1, None, {"a": 1}, [b"1"]):
        with pytest.raises(TypeError):
            toolgate.loads(bad)  # type: ignore[arg-type]


def test_canonical_and_digest() -> None:
    assert toolgate.canonical(b'{"b": 1.0, "a": "x\\u00e9"}') == '{"a":"xé","b":1}'.encode()
    assert toolgate.canonical({"b": 1.0, "a": "xé"}) == '{"a":"xé","b":1}'.encode()
    assert toolgate.canonical({"n": 4758.0, "m": 1e21, "s": 1e-7}) == b'{"m":1e+21,"n":4758,"s":1e-7}'
    # The digest of the shop example's get_order arguments, as `toolgate check --json` printed it.
    expected = "sha256:453ccc8220a6e8a8a4a1b753e40e394d973935c786392214d15ab5e0f59c9c83"
    assert toolgate.digest({"order_id": "ord_1002"}) == expected
    assert toolgate.digest(b'{ "order_id" : "ord_1002" }') == expected
    # A str is a value (the JSON string), as loads() returns it.
    assert toolgate.canonical('{"a"}') == b'"{\\"a\\"}"'
    assert toolgate.canonical(toolgate.loads(b'"x\\u00e9"')) == toolgate.canonical(b'"x\\u00e9"')


def test_digest_equals_the_cli(cli: Path, tmp_path: Path, root: Path) -> None:
    files = sorted((root / "examples" / "json").glob("*.json"))
    assert files
    out = subprocess.run(
        [str(cli), "json", "check", "--canonical", *map(str, files)],
        capture_output=True,
        text=True,
    ).stdout
    for path in files:
        line = next(l for l in out.splitlines() if l.startswith(f"{path}: "))
        status = line[len(f"{path}: ") :]
        try:
            d = toolgate.digest(path.read_bytes())
        except toolgate.JSONError as e:
            assert status.startswith(f"error {e.code} {e.line}:{e.column} "), line
            continue
        assert status == f"ok {d} {toolgate.canonical(path.read_bytes()).decode()}", line
    # Values made in Python: the CLI reads their canonical text to the same digest.
    value = {"z": [1, 2.5, -0.0, 10**30, "é\u2028"], "a": {"nested": None, "t": True}}
    f = tmp_path / "v.json"
    f.write_bytes(toolgate.canonical(value))
    out = subprocess.run([str(cli), "json", "check", str(f)], capture_output=True, text=True).stdout
    assert out.strip() == f"{f}: ok {toolgate.digest(value)}"


@pytest.mark.parametrize(
    "value, error",
    [
        ({1: "a"}, TypeError),
        ({("a",): 1}, TypeError),
        ((1, 2), TypeError),
        ({"a": {1, 2}}, TypeError),
        ({"a": b"bytes"}, TypeError),
        ([float("nan")], ValueError),
        ({"x": float("inf")}, ValueError),
        ({"x": "\ud800"}, ValueError),
        ({"\udc00": 1}, ValueError),
        (object(), TypeError),
    ],
)
def test_python_values_are_converted_strictly(value: object, error: type) -> None:
    with pytest.raises(error):
        toolgate.canonical(value)  # type: ignore[arg-type]
    with pytest.raises(error):
        toolgate.digest(value)  # type: ignore[arg-type]


def test_subclasses_are_refused_and_bool_is_not_int() -> None:
    class Weird(str):
        pass

    class D(dict):  # type: ignore[type-arg]
        pass

    for value in ({"a": Weird("x")}, D(a=1), [Weird("x")]):
        with pytest.raises(TypeError):
            toolgate.canonical(value)
    assert toolgate.canonical([True, False, 1, 0]) == b"[true,false,1,0]"


def test_cycles_and_deep_values_raise() -> None:
    a: list = []  # type: ignore[type-arg]
    a.append(a)
    with pytest.raises(ValueError):
        toolgate.canonical(a)
    deep: object = 1
    for _ in range(2000):
        deep = [deep]
    with pytest.raises(ValueError):
        toolgate.canonical(deep)  # type: ignore[arg-type]
