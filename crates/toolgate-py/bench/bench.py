#!/usr/bin/env python3
"""Raw tool-call argument text in, accept or reject out: toolgate's
`Schema.is_valid` on raw bytes beside the Python peers, in one run, on the
corpus of ../shared/perf (see its README).

    python bench.py [--perf ../../../../shared/perf] [--rounds 5]

Peers (versions printed with the results; pinned in requirements.txt):
- the seeds' hardened recipe: `json.loads` with `object_pairs_hook` (duplicate
  keys), `parse_constant` (NaN, Infinity) and `parse_float` (finite), then a
  strict pydantic model's `model_validate`;
- pydantic strict `model_validate_json` (raw text);
- msgspec `json.Decoder(Struct)` (closed structs, constraints as `Meta`);
- orjson `loads` + jsonschema's draft 2020-12 validator `is_valid`.

Each approach is built once, outside the timed loop. One round runs every
line of a corpus (valid and bad) once; the figure is the median of the
rounds. Small: calls/s; medium and large: MB/s (10^6 bytes of argument
text). The `wrong` columns count bad lines accepted and valid lines
rejected (of the corpus's own verdicts).
"""

from __future__ import annotations

import argparse
import json
import math
import platform
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import jsonschema
import msgspec
import orjson
import pydantic

import toolgate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from models import MSGSPEC, PYDANTIC  # noqa: E402

CORPORA = {
    "small": ["small.search", "small.refund"],
    "medium": ["medium.create_ticket"],
    "large": ["large.bulk_upsert"],
}

Case = Tuple[str, bytes, bool]


def load(perf: Path, name: str) -> List[Case]:
    tool = name.split(".", 1)[1]
    cases: List[Case] = []
    for line in (perf / "valid" / f"{name}.jsonl").read_bytes().splitlines():
        if line:
            cases.append((tool, line, True))
    for line in (perf / "bad" / f"{name}.tsv").read_bytes().splitlines():
        if line:
            cases.append((tool, line.split(b"\t", 1)[1], False))
    return cases


def unique_pairs(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    result: Dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError("duplicate key")
        result[key] = value
    return result


def reject_constant(token: str) -> Any:
    raise ValueError("constant")


def finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):
        raise ValueError("not finite")
    return value


def approaches(perf: Path) -> Dict[str, Callable[[str, bytes], bool]]:
    schemas = {p.stem: p.read_bytes() for p in (perf / "schemas").glob("*.json")}
    tg = {tool: toolgate.Schema(text) for tool, text in schemas.items()}
    validators = {}
    for tool, text in schemas.items():
        schema = json.loads(text)
        jsonschema.Draft202012Validator.check_schema(schema)
        validators[tool] = jsonschema.Draft202012Validator(schema)
    decoders = {tool: msgspec.json.Decoder(t) for tool, t in MSGSPEC.items()}

    def toolgate_raw(tool: str, raw: bytes) -> bool:
        return tg[tool].is_valid(raw)

    def hardened(tool: str, raw: bytes) -> bool:
        try:
            args = json.loads(
                raw, object_pairs_hook=unique_pairs, parse_constant=reject_constant, parse_float=finite_float
            )
            PYDANTIC[tool].model_validate(args)
            return True
        except ValueError:  # json.JSONDecodeError and pydantic.ValidationError are ValueErrors
            return False

    def pydantic_json(tool: str, raw: bytes) -> bool:
        try:
            PYDANTIC[tool].model_validate_json(raw)
            return True
        except pydantic.ValidationError:
            return False

    def msgspec_struct(tool: str, raw: bytes) -> bool:
        try:
            decoders[tool].decode(raw)
            return True
        except msgspec.MsgspecError:
            return False

    def orjson_jsonschema(tool: str, raw: bytes) -> bool:
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return False
        return bool(validators[tool].is_valid(value))

    return {
        "toolgate `Schema.is_valid` (raw bytes)": toolgate_raw,
        "hardened recipe (json.loads hooks + pydantic strict)": hardened,
        "pydantic strict `model_validate_json`": pydantic_json,
        "msgspec `Decoder(Struct)`": msgspec_struct,
        "orjson + jsonschema": orjson_jsonschema,
    }


def run(fn: Callable[[str, bytes], bool], cases: List[Case], rounds: int) -> Tuple[float, int, int]:
    bad_accepted = sum(1 for tool, raw, ok in cases if not ok and fn(tool, raw))
    valid_rejected = sum(1 for tool, raw, ok in cases if ok and not fn(tool, raw))
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for tool, raw, _ok in cases:
            fn(tool, raw)
        times.append(time.perf_counter() - start)
    return statistics.median(times), bad_accepted, valid_rejected


def dist_version(name: str) -> str:
    try:
        return version(name)
    except Exception:  # a development build is not an installed distribution
        return "(not installed)"


def main() -> int:
    here = Path(__file__).resolve()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--perf", type=Path, default=here.parents[4] / "shared" / "perf")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    impls = approaches(args.perf)
    corpora = {name: [c for f in files for c in load(args.perf, f)] for name, files in CORPORA.items()}
    print(f"Python {platform.python_version()}, " + ", ".join(
        f"{p} {dist_version(p)}" for p in ("toolgate", "pydantic", "pydantic_core", "msgspec", "orjson", "jsonschema")
    ))
    for name, cases in corpora.items():
        print(f"{name}: {len(cases)} calls, {sum(len(r) for _, r, _ in cases)} bytes "
              f"({sum(1 for c in cases if not c[2])} bad)")
    results: Dict[str, Dict[str, Tuple[float, int, int]]] = {}
    for label, fn in impls.items():
        results[label] = {}
        for name, cases in corpora.items():
            results[label][name] = run(fn, cases, args.rounds)
            print(f"  measured {label} on {name}", file=sys.stderr)

    def figure(name: str, seconds: float) -> float:
        cases = corpora[name]
        if name == "small":
            return len(cases) / seconds
        return sum(len(r) for _, r, _ in cases) / seconds / 1e6

    tg_label = next(iter(impls))
    print()
    print("| approach | small calls/s | medium MB/s | large MB/s | bad accepted (s/m/l) | valid rejected (s/m/l) |")
    print("|---|---:|---:|---:|---:|---:|")
    for label in impls:
        r = results[label]
        cells = []
        for name in corpora:
            f = figure(name, r[name][0])
            cells.append(f"{f / 1000:,.0f}k" if name == "small" else f"{f:,.1f}")
        bad = "/".join(str(r[n][1]) for n in corpora)
        rejected = "/".join(str(r[n][2]) for n in corpora)
        print(f"| {label} | {' | '.join(cells)} | {bad} | {rejected} |")
    print()
    print("| toolgate ÷ | small | medium | large |")
    print("|---|---:|---:|---:|")
    for label in list(impls)[1:]:
        ratios = [results[label][n][0] / results[tg_label][n][0] for n in corpora]
        print(f"| {label} | " + " | ".join(f"{x:.2f}×" for x in ratios) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
