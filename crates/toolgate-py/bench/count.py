#!/usr/bin/env python3
"""Instructions per call of the one-pass path, for callgrind: decodes the
first N valid lines of a ../shared/perf corpus (cycling when N is larger)
with one approach, after building it. Run it under callgrind twice, with N
and with 0, and divide the difference by N: what is left is the call,
the Python loop around it included. Set PYTHONHASHSEED=0 for both runs:
with a random seed, the start-up's dict work differs from run to run by
more than a small call costs.

    PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=OUT \\
        python count.py --perf ../../../../shared/perf small.refund toolgate N

Approaches: `toolgate` (`Schema.loads`), `msgspec` (`Decoder(Struct)`),
`loads` (`toolgate.loads`, no schema), `orjson`.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

import msgspec
import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))
from models import MSGSPEC  # noqa: E402


def main() -> int:
    here = Path(__file__).resolve()
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--perf", type=Path, default=here.parents[4] / "shared" / "perf")
    parser.add_argument("corpus", help="say small.refund, medium.create_ticket, large.bulk_upsert")
    parser.add_argument("approach", choices=["toolgate", "msgspec", "loads", "orjson"])
    parser.add_argument("n", type=int)
    args = parser.parse_args()
    tool = args.corpus.split(".", 1)[1]
    lines = [x for x in (args.perf / "valid" / f"{args.corpus}.jsonl").read_bytes().splitlines() if x]
    cases = list(itertools.islice(itertools.cycle(lines), args.n))
    if args.approach in ("toolgate", "loads"):
        import toolgate  # only where measured

    if args.approach == "toolgate":
        fn = toolgate.Schema((args.perf / "schemas" / f"{tool}.json").read_bytes()).loads
    elif args.approach == "msgspec":
        fn = msgspec.json.Decoder(MSGSPEC[tool]).decode
    elif args.approach == "loads":
        fn = toolgate.loads
    else:
        fn = orjson.loads
    fn(lines[0])  # warm: the first call's one-time costs are not counted
    for raw in cases:
        fn(raw)
    return 0


if __name__ == "__main__":
    sys.exit(main())
