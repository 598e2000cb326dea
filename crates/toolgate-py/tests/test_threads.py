"""The GIL is released while a large text is parsed, checked or made
canonical: another Python thread runs meanwhile.

The switch interval is set far beyond the test's length, so the waiting
thread gets the GIL only when it is released on purpose; the test repeats
the call until the other thread ran (a few times at most when the GIL is
released, never when it is not)."""

from __future__ import annotations

import json
import sys
import threading
from typing import Callable, Iterator, List

import pytest

import toolgate

BIG = json.dumps({"rows": [{"id": i, "name": f"row {i}", "score": i / 3} for i in range(60_000)]}).encode()
SCHEMA = toolgate.Schema({"type": "object", "properties": {"rows": {"type": "array"}}})


@pytest.fixture()
def long_switch_interval() -> Iterator[None]:
    before = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    try:
        yield
    finally:
        sys.setswitchinterval(before)


def other_thread_runs_during(call: Callable[[], object]) -> bool:
    go = threading.Event()
    ran: List[int] = []

    def other() -> None:
        go.wait()
        ran.append(1)

    t = threading.Thread(target=other)
    t.start()
    go.set()
    # The other thread now waits for the GIL, which only a release hands over.
    for _ in range(50):
        call()
        if ran:
            break
    result = bool(ran)
    t.join()
    return result


@pytest.mark.parametrize(
    "name, call",
    [
        ("loads", lambda: toolgate.loads(BIG)),
        ("Schema.loads", lambda: SCHEMA.loads(BIG)),
        ("Schema.is_valid", lambda: SCHEMA.is_valid(BIG)),
        ("Schema.validate", lambda: SCHEMA.validate(BIG)),
        ("canonical", lambda: toolgate.canonical(BIG)),
        ("digest", lambda: toolgate.digest(BIG)),
    ],
)
def test_large_texts_release_the_gil(long_switch_interval: None, name: str, call: Callable[[], object]) -> None:
    assert other_thread_runs_during(call), name


def test_the_test_can_fail(long_switch_interval: None) -> None:
    # Pure Python work holds the GIL: the other thread does not run.
    assert not other_thread_runs_during(lambda: sum(range(20_000)))
