"""Deciding on the raw HTTP body of an official SDK's call.

The ``openai`` and ``anthropic`` SDKs parse the model's response with their
own lax JSON parser before user code sees it: Anthropic's ``tool_use.input``
arrives as a ``dict`` in which the last of two duplicate keys has already
won. Their ``with_raw_response`` API keeps the raw body; give that to the
gate, and run tools with the decision's ``arguments``::

    raw = client.chat.completions.with_raw_response.create(model=..., messages=..., tools=...)
    response = toolgate.sdk.decide(gate, raw, context)

``raw.parse()`` still gives the SDK's object for the rest of the message.

A parsed object (a ``ChatCompletion``, a Responses ``Response``, an
Anthropic ``Message``) is taken too: it is written back as JSON and
decided. That is weaker than the raw body wherever the SDK parsed a value
itself (Anthropic's ``input``: a duplicate key is already gone), and as
strong where it kept the model's text (OpenAI's ``arguments`` strings).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, List, Mapping, Tuple, Union

if TYPE_CHECKING:
    from . import JSON, Format, Gate, Outcome, Response, Runner


def raw_body(raw: Any) -> bytes:
    """The raw HTTP body of ``raw``: the result of an SDK's
    ``with_raw_response`` call (its ``http_response``), an ``httpx`` or
    ``requests`` response (``content``), ``bytes`` as they are, or an
    SDK's parsed response object (a pydantic model) written back as JSON.

    A streamed response whose body was not read raises ``TypeError``:
    read it first, or decide on the stream's bytes."""
    if isinstance(raw, (bytes, bytearray)):
        return bytes(raw)
    http = getattr(raw, "http_response", raw)
    try:
        content = getattr(http, "content", None)
    except Exception as e:  # httpx raises ResponseNotRead for an unread stream
        raise TypeError("the response's body has not been read") from e
    if isinstance(content, (bytes, bytearray)):
        return bytes(content)
    dump = getattr(raw, "model_dump_json", None)
    if callable(dump) and hasattr(raw, "model_fields_set"):
        # The SDK's own model: the members it read, by their wire names.
        text = dump(by_alias=True, exclude_unset=True)
        if isinstance(text, str):
            return text.encode("utf-8")
    raise TypeError(
        f"{type(raw).__name__} has no raw body: pass the result of an SDK's "
        "with_raw_response call, an httpx or requests response, an SDK's "
        "parsed response, or bytes"
    )


def decide(
    gate: Gate,
    raw: Any,
    context: Union[Mapping[str, JSON], bytes, str],
    *,
    format: Format = "auto",
) -> Response:
    """``gate.decide`` on the raw body of an SDK call (see :func:`raw_body`)."""
    return gate.decide(raw_body(raw), context, format=format)


def run(
    runner: Runner,
    raw: Any,
    context: Union[Mapping[str, JSON], bytes, str],
    *,
    format: Format = "auto",
) -> Tuple[Response, List[Outcome]]:
    """``runner.run`` on the raw body of an SDK call: decides, then runs the
    allowed calls with their checked arguments."""
    return runner.run(raw_body(raw), context, format=format)
