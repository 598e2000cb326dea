#!/usr/bin/env python3
"""The start-to-answer time of `toolgate hook` (issue 34).

Usage: scripts/hook_latency.py TOOLGATE_BIN [RUNS] [STORE_URL]

Runs `TOOLGATE_BIN hook --agent claude --config examples/agents/toolgate.toml`
RUNS times (default 500) with a recorded Claude Code PreToolUse event on
standard input (an allowed `Bash` call, each with its own tool use id), and
times each run from just before the process is started to the moment its
answer has been read and it has exited: what the agent waits for. The
same is measured for `/bin/true` (reading nothing), the cost of starting
any process from here. Prints p50, p90, p99 and max of both, in ms.

The store is a fresh SQLite file in a temporary folder unless STORE_URL is
given. Build the release binary first: cargo build --release -p toolgate-cli.
"""

import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, "examples", "agents", "toolgate.toml")
EVENT = os.path.join(ROOT, "crates", "toolgate-cli", "tests", "hook", "events", "claude-pre-bash.json")


def percentiles(samples):
    s = sorted(samples)
    pick = lambda q: s[min(len(s) - 1, int(q * len(s)))]
    return {"p50": pick(0.50), "p90": pick(0.90), "p99": pick(0.99), "max": s[-1]}


def timed(argv, stdin):
    start = time.perf_counter()
    done = subprocess.run(argv, input=stdin, capture_output=True, check=False)
    elapsed = (time.perf_counter() - start) * 1000.0
    return elapsed, done


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 500
    with tempfile.TemporaryDirectory() as tmp:
        store = sys.argv[3] if len(sys.argv) > 3 else "sqlite://" + os.path.join(tmp, "toolgate.db")
        base = json.load(open(EVENT))
        argv = [binary, "hook", "--agent", "claude", "--config", CONFIG, "--store", store]
        # Warm-up: creates the store, fills the page cache.
        for i in range(20):
            base["tool_use_id"] = f"toolu_warm_{i}"
            timed(argv, json.dumps(base).encode())
        hook, true = [], []
        for i in range(runs):
            base["session_id"] = f"bench-{i // 100}"
            base["tool_use_id"] = f"toolu_bench_{i}"
            ms, done = timed(argv, json.dumps(base).encode())
            answer = json.loads(done.stdout)
            if done.returncode != 0 or answer["hookSpecificOutput"]["permissionDecision"] != "allow":
                sys.exit(f"run {i}: unexpected answer {done.returncode} {done.stdout!r} {done.stderr!r}")
            hook.append(ms)
            ms, _ = timed(["/bin/true"], b"")
            true.append(ms)
    for name, samples in (("toolgate hook", hook), ("/bin/true", true)):
        p = percentiles(samples)
        print(f"{name:14} runs={len(samples)} " + " ".join(f"{k}={v:.2f}ms" for k, v in p.items()))


if __name__ == "__main__":
    main()
