"""The README's Python section and examples/python/inprocess.py run as written."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import ROOT, require_external


def readme_python_section() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Python\n", 1)[1].split("\n## ", 1)[0]
    return section


def readme_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", readme_python_section(), re.S)


def shown(line: str) -> str:
    """How the README shows a printed line: in backticks (doubled when the
    line holds one)."""
    return f"`` {line} ``" if "`" in line else f"`{line}`"


def run_block(code: str) -> list[str]:
    run = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return run.stdout.splitlines()


def test_readme_one_pass_example_prints_what_the_readme_says() -> None:
    section = readme_python_section()
    assert "pip install ./crates/toolgate-py" in section
    assert "(docs/src/python.md)" in section and (ROOT / "docs" / "src" / "python.md").is_file()
    out = run_block(readme_blocks()[0])
    assert out == [
        "{'order_id': 'ord_1002', 'amount_cents': 2599, 'reason': 'late'}",
        "type_mismatch at `/amount_cents`: expected integer; unknown_property at `/*`: member is not allowed: "
        "the declared members are `order_id`, `amount_cents`, `reason`",
    ]
    for line in out:
        assert shown(line) in " ".join(section.split())


def test_readme_adapter_example_prints_what_the_readme_says() -> None:
    if not require_external():
        pytest.importorskip("langchain_core")
    section = readme_python_section()
    out = run_block(readme_blocks()[1])
    assert out == [
        "{'order_id': 'ord_1002', 'status': 'shipped'}",
        "denied by toolgate: unknown_property at /*: member is not allowed: the declared members are `order_id`",
    ]
    for line in out:
        assert shown(line) in " ".join(section.split())


def test_manual_examples_run() -> None:
    """Every Python block of docs/src/python.md runs (from the checkout)."""
    manual = (ROOT / "docs" / "src" / "python.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", manual, re.S)
    assert len(blocks) >= 5
    for code in blocks:
        for module in ("langchain_core", "agents", "pydantic_ai"):
            if f"from {module}" in code and not require_external():
                pytest.importorskip(module)
        run_block(code)


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
