"""toolgate: a strict gate between what a language model proposes and what
your software executes.

- :func:`loads` parses JSON text strictly (a drop-in for ``json.loads``
  where strictness matters); :func:`canonical` and :func:`digest` give the
  RFC 8785 canonical text and its SHA-256, as the ``toolgate`` CLI does.
- :class:`Schema` validates JSON text or values against a JSON Schema
  (draft 2020-12), in toolgate's strict mode by default.
- :class:`Gate` decides a model response's tool calls as ``toolgate check``
  does; run a tool only with an allowed call's ``arguments``.
- :func:`verify_receipt` lets the service that executes a call check the
  gate's signed receipt of it (``ReceiptError`` when it does not pass).
- :class:`Runner` runs registered Python functions only with those
  arguments.
"""

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
    ValidationError,
    canonical,
    digest,
    loads,
    verify_receipt,
)
from ._runner import Outcome, Runner
from . import sdk

__all__ = [
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
    "ValidationError",
    "canonical",
    "digest",
    "loads",
    "sdk",
    "verify_receipt",
]
