#!/usr/bin/env python3
"""The GIL while toolgate reads large texts: how long another Python thread
is stalled, and how calls from several threads add up.

    python threads.py [--perf ../../../../shared/perf] [--rounds 3]

1. Stall: a ticker thread wakes every millisecond and records the longest
   gap between its wake-ups while the main thread decodes each ~1 MB line
   of the large corpus (bulk_upsert). The standard library's `json.loads`
   and orjson hold the GIL throughout; toolgate releases it while it
   parses, validates and writes canonical text, and holds it while it
   makes the Python objects.
2. Throughput: the large corpus decoded by 1, 2 and 4 threads at once
   (each thread every line), as MB/s over all threads.

Figures are single runs (median of the rounds); the machine's core count
is printed beside them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from importlib.metadata import version
from pathlib import Path
from typing import Any, Callable, Dict, List

import orjson

import toolgate


def stall_ms(fn: Callable[[bytes], Any], lines: List[bytes]) -> float:
    stop = threading.Event()
    worst = [0.0]

    def ticker() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            time.sleep(0.001)
            now = time.perf_counter()
            worst[0] = max(worst[0], now - last)
            last = now

    t = threading.Thread(target=ticker)
    t.start()
    time.sleep(0.01)
    for line in lines:
        fn(line)
    stop.set()
    t.join()
    return worst[0] * 1000


def throughput(fn: Callable[[bytes], Any], lines: List[bytes], threads: int) -> float:
    def work(_: int) -> None:
        for line in lines:
            fn(line)

    start = time.perf_counter()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(work, range(threads)))
    seconds = time.perf_counter() - start
    return threads * sum(map(len, lines)) / seconds / 1e6


def main() -> int:
    here = Path(__file__).resolve()
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--perf", type=Path, default=here.parents[4] / "shared" / "perf")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    lines = [l for l in (args.perf / "valid" / "large.bulk_upsert.jsonl").read_bytes().splitlines() if l]
    schema = toolgate.Schema((args.perf / "schemas" / "bulk_upsert.json").read_bytes())
    impls: Dict[str, Callable[[bytes], Any]] = {
        "toolgate `Schema.loads`": schema.loads,
        "toolgate `Schema.is_valid`": schema.is_valid,
        "toolgate `loads`": toolgate.loads,
        "toolgate `canonical`": toolgate.canonical,
        "`json.loads` (stdlib)": json.loads,
        "orjson `loads`": orjson.loads,
    }
    print(f"Python {platform.python_version()}, {os.cpu_count()} cores, toolgate {version('toolgate')}, "
          f"orjson {version('orjson')}; {len(lines)} lines of about {sum(map(len, lines)) // len(lines):,} bytes")
    print()
    print("| call | longest stall of another thread (ms) | 1 thread MB/s | 2 threads MB/s | 4 threads MB/s |")
    print("|---|---:|---:|---:|---:|")
    for label, fn in impls.items():
        stall = statistics.median(stall_ms(fn, lines) for _ in range(args.rounds))
        rates = [statistics.median(throughput(fn, lines, n) for _ in range(args.rounds)) for n in (1, 2, 4)]
        print(f"| {label} | {stall:.1f} | " + " | ".join(f"{r:,.0f}" for r in rates) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
