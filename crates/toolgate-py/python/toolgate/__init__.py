"""toolgate: a strict gate between what a language model proposes and what
your software executes.

- :func:`loads` parses JSON text strictly (a drop-in for ``json.loads``
  where strictness matters); :func:`canonical` and :func:`digest` give the
  RFC 8785 canonical text and its SHA-256, as the ``toolgate`` CLI does.
- :class:`Schema` validates JSON text or values against a JSON Schema
  (draft 2020-12), in toolgate's strict mode by default;
  :meth:`Schema.loads` parses, validates and returns the value in one call.
- :class:`Gate` decides a model response's tool calls as ``toolgate check``
  does; run a tool only with an allowed call's ``arguments``.
- :func:`verify_receipt` lets the service that executes a call check the
  gate's signed receipt of it (``ReceiptError`` when it does not pass).
- :class:`Runner` runs registered Python functions only with those
  arguments.
"""

import os as _os
from decimal import Decimal as _Decimal
from importlib.metadata import PackageNotFoundError as _NotFound, version as _version
from typing import Dict as _Dict, List as _List, Literal as _Literal, Union as _Union

from ._toolgate import FEATURES as _FEATURES
from ._toolgate import (
    Call,
    ConfigError,
    Finding,
    Gate,
    JSONError,
    Reason,
    ReceiptError,
    Response,
    Schema,
    SchemaError,
    SchemaViolation,
    ValidationError,
    canonical,
    digest,
    loads,
    verify_receipt,
)
if "store" in _FEATURES:  # the human side of approvals, with the store built in
    from ._toolgate import Approval, Approvals  # noqa: F401
from ._runner import Outcome, Runner
from . import sdk

features: frozenset[str] = frozenset(_FEATURES)
"""The optional parts this build carries: ``"store"`` when it was built with
the store (``pip install ... -C build-args="--features store"``)."""

try:
    __version__: str = _version("toolgate")
except _NotFound:  # imported from a source tree, not installed
    __version__ = "0.0.0+unknown"

# The stub's type aliases, as runtime names too (usable in annotations and
# with typing.get_args).
JSON = _Union[None, bool, int, float, str, _List["JSON"], _Dict[str, "JSON"]]
"""What :func:`loads` returns and what the functions take as a parsed value."""
JSONDecimal = _Union[None, bool, int, _Decimal, str, _List["JSONDecimal"], _Dict[str, "JSONDecimal"]]
"""What ``loads(..., decimal=True)`` returns: non-integers as exact ``Decimal``."""
Text = _Union[bytes, bytearray, memoryview, str]
"""JSON text: parsed strictly, never through Python objects."""
Verdict = _Literal["allow", "needs_approval", "deny"]
"""A call's or a response's verdict."""
Format = _Literal["auto", "openai", "responses", "anthropic", "gemini", "mcp"]
"""A provider body's format for :meth:`Gate.decide`."""


def _gate_from_config(path: "_os.PathLike[str] | str", store: "bool | str") -> Gate:
    """Unpickles a :class:`Gate`: loads its config again."""
    return Gate.from_config(path, store=store)

__all__ = [
    "JSON",
    "JSONDecimal",
    "Format",
    "Text",
    "Verdict",
    "__version__",
    "features",
    "Call",
    "ConfigError",
    "Finding",
    "Gate",
    "JSONError",
    "Outcome",
    "Reason",
    "ReceiptError",
    "Response",
    "Runner",
    "Schema",
    "SchemaError",
    "SchemaViolation",
    "ValidationError",
    "canonical",
    "digest",
    "loads",
    "sdk",
    "verify_receipt",
]
