#!/usr/bin/env python3
"""The one-pass path, value out: raw argument text in, the checked Python
value (or an exception) out, toolgate's `Schema.loads` beside the peers that
also give the value back, in one run, on the valid lines of ../shared/perf.

    python one_pass.py [--perf ../../../../shared/perf] [--rounds 3]

Peers (versions printed with the results; pinned in requirements.txt):
- msgspec `json.Decoder(Struct)` (closed structs, constraints as `Meta`);
- pydantic strict `model_validate_json` (raw text);
- orjson `loads` + jsonschema_rs `validator_for(schema).is_valid`, the
  value then returned;
- for reference, toolgate's two-call path (`is_valid`, then `loads`).

A second table sets `toolgate.loads` (strict parse, no schema) beside the
standard library's `json.loads` and `orjson.loads`.

Each approach is built once, outside the timed loop. One round decodes every
valid line of a corpus once; the figure is the median of the rounds. Small:
calls/s; medium and large: MB/s (10^6 bytes of argument text). The ratio
columns are toolgate's speed over the peer's (above 1: toolgate is faster).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path
from typing import Any, Callable, Dict, List, Tuple

import jsonschema_rs
import msgspec
import orjson

import toolgate

sys.path.insert(0, str(Path(__file__).resolve().parent))
from models import MSGSPEC, PYDANTIC  # noqa: E402

CORPORA = {
    "small": ["small.search", "small.refund"],
    "medium": ["medium.create_ticket"],
    "large": ["large.bulk_upsert"],
}

Case = Tuple[str, bytes]
Decode = Callable[[str, bytes], Any]


def load(perf: Path, name: str) -> List[Case]:
    tool = name.split(".", 1)[1]
    lines = (perf / "valid" / f"{name}.jsonl").read_bytes().splitlines()
    return [(tool, line) for line in lines if line]


def one_pass(perf: Path) -> Dict[str, Decode]:
    schemas = {p.stem: p.read_bytes() for p in (perf / "schemas").glob("*.json")}
    tg = {tool: toolgate.Schema(text) for tool, text in schemas.items()}
    rs = {tool: jsonschema_rs.validator_for(json.loads(text)) for tool, text in schemas.items()}
    decoders = {tool: msgspec.json.Decoder(t) for tool, t in MSGSPEC.items()}

    def toolgate_loads(tool: str, raw: bytes) -> Any:
        return tg[tool].loads(raw)

    def toolgate_two_calls(tool: str, raw: bytes) -> Any:
        if not tg[tool].is_valid(raw):
            raise ValueError("invalid")
        return toolgate.loads(raw)

    def msgspec_struct(tool: str, raw: bytes) -> Any:
        return decoders[tool].decode(raw)

    def pydantic_json(tool: str, raw: bytes) -> Any:
        return PYDANTIC[tool].model_validate_json(raw)

    def orjson_jsonschema_rs(tool: str, raw: bytes) -> Any:
        value = orjson.loads(raw)
        if not rs[tool].is_valid(value):
            raise ValueError("invalid")
        return value

    return {
        "toolgate `Schema.loads`": toolgate_loads,
        "msgspec `Decoder(Struct)`": msgspec_struct,
        "pydantic strict `model_validate_json`": pydantic_json,
        "orjson + jsonschema_rs `is_valid`": orjson_jsonschema_rs,
        "toolgate `is_valid` then `loads`": toolgate_two_calls,
    }


def parse_only() -> Dict[str, Decode]:
    return {
        "toolgate `loads`": lambda _tool, raw: toolgate.loads(raw),
        "`json.loads` (stdlib)": lambda _tool, raw: json.loads(raw),
        "orjson `loads`": lambda _tool, raw: orjson.loads(raw),
    }


def run(fn: Decode, cases: List[Case], rounds: int) -> float:
    for tool, raw in cases:  # every line must decode, and warms the caches
        fn(tool, raw)
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        for tool, raw in cases:
            fn(tool, raw)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def dist_version(name: str) -> str:
    try:
        return version(name)
    except Exception:  # a development build is not an installed distribution
        return "(not installed)"


def table(title: str, impls: Dict[str, Decode], corpora: Dict[str, List[Case]], rounds: int) -> None:
    seconds: Dict[str, Dict[str, float]] = {}
    for label, fn in impls.items():
        seconds[label] = {name: run(fn, cases, rounds) for name, cases in corpora.items()}
        print(f"  measured {label}", file=sys.stderr)

    def figure(name: str, s: float) -> str:
        cases = corpora[name]
        if name == "small":
            return f"{len(cases) / s / 1000:,.0f}k"
        return f"{sum(len(r) for _, r in cases) / s / 1e6:,.1f}"

    first = next(iter(impls))
    print(f"\n{title}\n")
    print("| approach | small calls/s | medium MB/s | large MB/s |")
    print("|---|---:|---:|---:|")
    for label in impls:
        print(f"| {label} | " + " | ".join(figure(n, seconds[label][n]) for n in corpora) + " |")
    print(f"\n| {first} ÷ | small | medium | large |")
    print("|---|---:|---:|---:|")
    for label in list(impls)[1:]:
        ratios = [seconds[label][n] / seconds[first][n] for n in corpora]
        print(f"| {label} | " + " | ".join(f"{x:.2f}×" for x in ratios) + " |")


def main() -> int:
    here = Path(__file__).resolve()
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--perf", type=Path, default=here.parents[4] / "shared" / "perf")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    corpora = {name: [c for f in files for c in load(args.perf, f)] for name, files in CORPORA.items()}
    print(f"Python {platform.python_version()}, " + ", ".join(
        f"{p} {dist_version(p)}"
        for p in ("toolgate", "msgspec", "pydantic", "pydantic_core", "orjson", "jsonschema_rs")
    ))
    for name, cases in corpora.items():
        print(f"{name}: {len(cases)} valid calls, {sum(len(r) for _, r in cases)} bytes")
    table("One pass, value out (valid lines; median of the rounds)", one_pass(args.perf), corpora, args.rounds)
    table("Parse only, no schema", parse_only(), corpora, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
