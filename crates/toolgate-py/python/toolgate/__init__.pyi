"""Type stubs of the toolgate package (the extension module and the runner)."""

import os

from . import sdk as sdk
from decimal import Decimal
from typing import Any, Callable, Dict, List, Literal, Mapping, Optional, Tuple, TypeAlias, TypeVar, Union, overload

__version__: str
features: frozenset[str]
"""The optional parts this build carries (``"store"``)."""

JSON: TypeAlias = Union[None, bool, int, float, str, List["JSON"], Dict[str, "JSON"]]
"""What :func:`loads` returns and what the functions take as a parsed value."""

JSONDecimal: TypeAlias = Union[None, bool, int, Decimal, str, List["JSONDecimal"], Dict[str, "JSONDecimal"]]
"""What ``loads(..., decimal=True)`` returns: non-integers as exact ``Decimal``."""

Text: TypeAlias = Union[bytes, bytearray, memoryview, str]
"""JSON text: parsed strictly, never through Python objects."""

Verdict: TypeAlias = Literal["allow", "needs_approval", "deny"]
Format: TypeAlias = Literal["auto", "openai", "responses", "anthropic", "gemini", "mcp"]

class ReceiptError(ValueError):
    """A receipt that does not let the call run."""

    code: str
    """``receipt_malformed``, ``receipt_bad_signature``, ``receipt_not_allowed``,
    ``receipt_other_tool``, ``receipt_other_arguments`` or ``receipt_expired``."""

def verify_receipt(
    receipt: str,
    tool: str,
    arguments: Union[str, bytes],
    public_key: str,
    now: Optional[int] = None,
) -> Dict[str, Any]:
    """Checks the gate's signed receipt: signed by ``public_key`` (64 hex
    digits), verdict allow, for ``tool`` and exactly the canonical argument
    text ``arguments``, not expired at ``now`` (unix seconds; the clock by
    default). Returns its claims (``call_id``, ``tool``, ``args``,
    ``verdict``, ``issued``, ``expires``); raises :class:`ReceiptError`."""

class JSONError(ValueError):
    """A JSON text the strict parser refuses; the message never echoes the input."""

    code: str
    """The stable code, such as ``duplicate_key`` or ``truncated``."""
    pointer: str
    """The JSON Pointer of the place (of the object, for ``duplicate_key``),
    member names the input chose masked as ``*``: safe to show a model."""
    exact_pointer: str
    """The same pointer with the input's own member names: never send it to a model."""
    line: int
    """One-based line (0 when the text was refused before it was read)."""
    column: int
    """One-based column, in bytes (0 when the text was refused before it was read)."""
    offset: int
    """Zero-based byte offset."""

class SchemaError(ValueError):
    """A JSON Schema that does not compile."""

    code: str
    """The stable code, such as ``unknown_keyword``."""
    pointer: str
    """The JSON Pointer of the offending keyword in the schema."""
    keyword: str
    """The keyword's name (the pointer's last token)."""

class ConfigError(ValueError):
    """A config (or its policies, schemas, entities, store) that cannot be loaded."""

class SchemaViolation(ValueError):
    """Strict JSON the schema refuses (from :meth:`Schema.loads`); the message is safe to send to a model."""

    errors: List["ValidationError"]
    """Every violation found (never empty)."""
    code: str
    """The first violation's code."""
    instance_pointer: str
    """The first violation's (masked) instance pointer."""
    keyword_location: str
    """The first violation's keyword location in the schema."""

@overload
def loads(
    data: Text,
    /,
    *,
    decimal: Literal[False] = ...,
    max_input_bytes: int = ...,
    max_depth: int = ...,
    max_string_bytes: int = ...,
    max_object_members: int = ...,
    max_array_items: int = ...,
    max_values: int = ...,
    allow_noncharacters: bool = ...,
) -> JSON: ...
@overload
def loads(
    data: Text,
    /,
    *,
    decimal: Literal[True],
    max_input_bytes: int = ...,
    max_depth: int = ...,
    max_string_bytes: int = ...,
    max_object_members: int = ...,
    max_array_items: int = ...,
    max_values: int = ...,
    allow_noncharacters: bool = ...,
) -> JSONDecimal:
    """Parses JSON text strictly; integers of any size come back exact.

    Raises :class:`JSONError` for anything the strict profile refuses."""

def canonical(
    data: Union[bytes, bytearray, memoryview, JSON],
    /,
    *,
    max_input_bytes: int = ...,
    max_depth: int = ...,
    max_string_bytes: int = ...,
    max_object_members: int = ...,
    max_array_items: int = ...,
    max_values: int = ...,
    allow_noncharacters: bool = ...,
) -> bytes:
    """The RFC 8785 canonical text of JSON text (``bytes``) or of a value (a ``str`` is a value)."""

def digest(
    data: Union[bytes, bytearray, memoryview, JSON],
    /,
    *,
    max_input_bytes: int = ...,
    max_depth: int = ...,
    max_string_bytes: int = ...,
    max_object_members: int = ...,
    max_array_items: int = ...,
    max_values: int = ...,
    allow_noncharacters: bool = ...,
) -> str:
    """``sha256:`` and the hex SHA-256 of the canonical text, as the CLI prints it (``data`` as for :func:`canonical`)."""

class ValidationError:
    """One violation of a schema; it never holds values from the instance."""

    @property
    def code(self) -> str:
        """The stable code, such as ``type_mismatch``."""
    @property
    def instance_pointer(self) -> str:
        """The JSON Pointer of the offending value (``""`` is the root), names the schema does not declare masked as ``*``."""
    @property
    def exact_instance_pointer(self) -> str:
        """The same with the instance's own member names: never send it to a model."""
    @property
    def keyword_location(self) -> str:
        """The JSON Pointer of the keyword in the schema."""
    @property
    def message(self) -> str:
        """The violated constraint, from the schema alone."""

class Schema:
    """A compiled JSON Schema (draft 2020-12): strict mode, or ``standard=True``."""

    def __init__(
        self,
        schema: Union[Text, Dict[str, JSON], bool],
        *,
        standard: bool = False,
        max_input_bytes: int = ...,
        max_depth: int = ...,
        max_string_bytes: int = ...,
        max_object_members: int = ...,
        max_array_items: int = ...,
        max_values: int = ...,
        allow_noncharacters: bool = ...,
    ) -> None:
        """Compiles ``schema`` (JSON text or a parsed value); raises :class:`SchemaError`.
        The limits are those instances are read with."""
    @overload
    def loads(self, data: Text, /, *, decimal: Literal[False] = ...) -> JSON: ...
    @overload
    def loads(self, data: Text, /, *, decimal: Literal[True]) -> JSONDecimal:
        """Parses strictly, validates and returns the value in one call; raises
        :class:`JSONError` or :class:`SchemaViolation`."""
    def validate(self, data: Union[Text, JSON]) -> List[ValidationError]:
        """The violations of ``data`` (JSON text is parsed strictly; :class:`JSONError` if it is not JSON)."""
    def is_valid(self, data: Union[Text, JSON]) -> bool:
        """Whether ``data`` is valid (``False`` for text that is not strict JSON)."""

class Reason:
    """Why a call or a response was decided so."""

    @property
    def code(self) -> str:
        """The stable code."""
    @property
    def pointer(self) -> str:
        """The JSON Pointer of the place, names the tool's schema does not declare masked as ``*``."""
    @property
    def exact_pointer(self) -> str:
        """The same with the model's own member names: never send it back to a model."""
    @property
    def detail(self) -> Optional[str]:
        """The stage's finer code, or ``None``."""

class Finding:
    """A response-level finding."""

    @property
    def code(self) -> str:
        """The stable code."""
    @property
    def pointer(self) -> str:
        """The JSON Pointer of the place in the body (names outside the provider formats' masked)."""
    @property
    def exact_pointer(self) -> str:
        """The same with the body's own member names."""
    @property
    def detail(self) -> Optional[str]:
        """The stage's finer code, or ``None``."""
    @property
    def denies(self) -> bool:
        """Whether it denies every call of the response."""

class Call:
    """The decision on one proposed tool call."""

    @property
    def index(self) -> int:
        """The call's position in the response, from 0."""
    @property
    def call_id(self) -> Optional[str]:
        """The provider's call id."""
    @property
    def tool(self) -> str:
        """The tool's name as the model wrote it."""
    @property
    def verdict(self) -> Verdict:
        """``allow``, ``needs_approval`` or ``deny``."""
    @property
    def allowed(self) -> bool:
        """Whether the verdict is ``allow``."""
    @property
    def reasons(self) -> List[Reason]:
        """Why the call was decided so."""
    @property
    def feedback(self) -> str:
        """The text safe to return to the model."""
    @property
    def digest(self) -> Optional[str]:
        """``sha256:`` of the canonical arguments."""
    @property
    def approval(self) -> Optional[str]:
        """The approval used, or the pending approval's id."""
    @property
    def charges(self) -> List[Tuple[str, str]]:
        """``(limit, amount)`` the call adds to each ``[[limit]]`` if it runs (allowed calls only)."""
    @property
    def labels(self) -> List[str]:
        """The session labels the call brings in if it runs (allowed calls only)."""
    @property
    def retry_after(self) -> Optional[int]:
        """Seconds until a ``rate_limited`` or ``budget_exceeded`` call can succeed."""
    @property
    def policies(self) -> List[str]:
        """The ids of the policies that decided."""
    @property
    def receipt(self) -> Optional[str]:
        """The decision's signed receipt (``tgr1.``...) with ``[gate] receipt_key``, else ``None``."""
    @property
    def pinned(self) -> List[Tuple[str, List[str]]]:
        """``(pointer, addresses)`` of URL arguments checked in resolve mode."""
    @property
    def arguments(self) -> JSON:
        """The canonical checked value (a fresh copy), or ``None`` for a denied call."""

class Response:
    """The gate's decisions on one model response."""

    @property
    def verdict(self) -> Verdict:
        """The response's verdict."""
    @property
    def allowed(self) -> bool:
        """Whether every call is allowed."""
    @property
    def format(self) -> Optional[str]:
        """The format read, or ``None``."""
    @property
    def streamed(self) -> bool:
        """Whether the body was an event stream."""
    @property
    def finish_kind(self) -> Optional[str]:
        """``complete``, ``truncated``, ... or ``None``."""
    @property
    def finish_reason(self) -> Optional[str]:
        """The provider's finish token."""
    @property
    def rejected(self) -> Optional[Reason]:
        """Why the body was refused as a whole."""
    @property
    def findings(self) -> List[Finding]:
        """The response-level findings."""
    @property
    def calls(self) -> List[Call]:
        """One decision per proposed call."""
    def to_dict(self) -> Dict[str, JSON]:
        """The decisions as ``toolgate check --json`` prints them (without ``input``)."""
    def to_json(self) -> bytes:
        """The same, as canonical JSON text."""

class Approval:
    """One approval as it stood when read (store build only)."""

    @property
    def id(self) -> str: ...
    @property
    def kind(self) -> Literal["single", "standing"]: ...
    @property
    def state(self) -> Literal["pending", "approved", "denied", "expired", "withdrawn"]: ...
    @property
    def user(self) -> str: ...
    @property
    def session(self) -> Optional[str]: ...
    @property
    def tool(self) -> str: ...
    @property
    def digest(self) -> Optional[str]: ...
    @property
    def created_at(self) -> int: ...
    @property
    def expires_at(self) -> int: ...
    @property
    def decided_by(self) -> Optional[str]: ...
    @property
    def decided_at(self) -> Optional[int]: ...
    @property
    def note(self) -> Optional[str]: ...
    @property
    def uses(self) -> int: ...
    @property
    def upstream(self) -> Optional[str]: ...

class Approvals:
    """The approvals of a store, as ``toolgate approvals`` manages them (store build only)."""

    def __init__(self, url: str, *, base: Union[str, os.PathLike[str], None] = None) -> None: ...
    def list(
        self,
        *,
        state: Literal["pending", "approved", "denied", "expired", "withdrawn", "all"] = "pending",
        limit: int = 100,
    ) -> List[Approval]: ...
    def show(self, id: str) -> Approval: ...
    def approve(self, id: str, *, actor: Optional[str] = None, note: str = "") -> Approval: ...
    def deny(self, id: str, *, actor: Optional[str] = None, note: str = "") -> Approval: ...
    def grant(self, user: str, tool: str, *, for_seconds: int, note: str, actor: Optional[str] = None, upstream: Optional[str] = None) -> Approval: ...

class Gate:
    """The gate of a toolgate config."""

    @staticmethod
    def from_config(path: Union[str, os.PathLike[str]], *, store: Union[bool, str] = True) -> "Gate":
        """Builds the gate as ``toolgate check`` does; raises :class:`ConfigError`."""
    @property
    def has_store(self) -> bool:
        """Whether decisions are recorded in a store."""
    def approvals(self) -> Approvals:
        """The approvals of the gate's store; :class:`ConfigError` without one."""
    def session_labels(self, session: str) -> List[str]:
        """The labels a session holds in the store (store build)."""
    def exhausted_tools(self, user: str, *, session: Optional[str] = None) -> List[str]:
        """The tools a ``[[limit]]`` counting the user, session or everyone has used up (store build)."""
    def reset_limit(
        self,
        limit: str,
        *,
        reason: str,
        user: Optional[str] = None,
        session: Optional[str] = None,
        token: Optional[str] = None,
        actor: Optional[str] = None,
    ) -> int:
        """Forgets a limit's counted calls for one key, audited ``limit_reset`` (store build)."""
    def decide(
        self,
        raw_body: Text,
        context: Union[Mapping[str, JSON], Text],
        *,
        format: Format = "auto",
    ) -> Response:
        """Decides every tool call of one raw model response."""
    def decide_call(
        self,
        tool: str,
        arguments: Union[Text, Mapping[str, JSON]],
        context: Union[Mapping[str, JSON], Text],
        *,
        call_id: Optional[str] = None,
    ) -> Response:
        """Decides one call held as a tool name and its arguments (text or a parsed ``dict``)."""

F = TypeVar("F", bound=Callable[..., Any])

class Outcome:
    """What became of one proposed call."""

    call: Call
    ran: bool
    result: Any
    feedback: str
    def __init__(self, call: Call, ran: bool, result: Any, feedback: str) -> None: ...

class Runner:
    """Tool functions by name, run only with an allowed call's arguments."""

    def __init__(self, gate: Gate) -> None: ...
    def tool(self, name: Optional[str] = None) -> Callable[[F], F]:
        """A decorator that registers a function as a tool."""
    def register(self, name: str, fn: Callable[..., Any]) -> None:
        """Registers ``fn`` as the tool ``name``."""
    def run(
        self,
        raw_body: Text,
        context: Union[Mapping[str, JSON], Text],
        *,
        format: Format = "auto",
    ) -> Tuple[Response, List[Outcome]]:
        """Decides, then runs the allowed calls."""
    def run_response(self, response: Response) -> List[Outcome]:
        """Runs the allowed calls of a response already decided."""
