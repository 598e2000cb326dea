"""The README's Python section and examples/python/inprocess.py run as written."""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import ROOT


def readme_python_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    return section


def test_readme_example_prints_what_the_readme_says() -> None:
    section = readme_python_section()
    assert "pip install ./crates/toolgate-py" in section
    code = re.search(r"```python\n(.*?)```", section, re.S)
    assert code is not None
    lines = [l for l in code.group(1).splitlines() if l.strip()]
    assert len(lines) <= 11, "the README promises a ten-line example"
    run = subprocess.run([sys.executable, "-c", code.group(1)], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    out = run.stdout.splitlines()
    assert out == [
        "get_order {'order_id': 'ord_1002', 'status': 'shipped'}",
        "refund needs_approval held by toolgate for human approval: approval_required; once a human approves it, make the same call again unchanged",
    ]
    for line in out:
        assert f"`{line}`" in " ".join(section.split())


def test_inprocess_example() -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "python" / "inprocess.py")], capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "openai-refund-needs-approval.json: get_order ran with {'order_id': 'ord_1002'}: {'order_id': 'ord_1002', 'status': 'shipped'}",
        "openai-refund-needs-approval.json: refund needs_approval: held by toolgate for human approval: approval_required; once a human approves it, make the same call again unchanged",
        "openai-duplicate-amount.json: refund deny: denied by toolgate: duplicate_key",
        "refund schema: valid",
        "refund schema: type_mismatch at /amount",
        "refund schema: not strict JSON: duplicate_key at line 1 column 57",
    ]
