"""Checks the sample bodies under tests/bodies against the official SDKs' models.

Optional, not run by cargo. It shows that the bodies are shapes the vendors'
own pydantic models accept, and that those SDKs lose what toolgate catches
(the last duplicate key wins).

    python3 -m venv /tmp/sdk && /tmp/sdk/bin/pip install openai anthropic
    /tmp/sdk/bin/python crates/toolgate/tests/sdk_check.py

Exits 1 if a body expected to be accepted is refused.
"""

import json
import pathlib
import sys

import anthropic
import openai
from anthropic.types import Message, RawMessageStreamEvent
from openai.types.chat import ChatCompletion, ChatCompletionChunk
from openai.types.responses import ResponseFunctionToolCall, ResponseStreamEvent
from pydantic import TypeAdapter

BODIES = pathlib.Path(__file__).parent / "bodies"

# Minimal stream samples from PROVIDERS.md §10 that leave out members the
# SDK models require (`id`, `created`, `model` on chat chunks; a full
# `response` on the terminal Responses event). They are realistic in the
# members toolgate reads, not complete.
MINIMAL = {
    "openai-chat/oa-chat-08.sse",
    "openai-chat/oa-chat-09.sse",
    "openai-chat/x-stream-after-done.sse",
    "openai-chat/x-stream-dup-key.sse",
    "openai-chat/x-stream-second-name.sse",
    "openai-chat/x-stream-text-leak.sse",
    "openai-chat/x-stream-cut-event.sse",
    "deepseek/ds-04.sse",
    "deepseek/x-stream-reasoning-tool.sse",
    "openai-responses/oa-resp-03.sse",
    "openai-responses/oa-resp-04.sse",
}

# Hostile or vendor-specific bodies the SDK models refuse, by design.
REFUSED_BY_DESIGN = {
    # `insufficient_system_resource` is DeepSeek's, not in OpenAI's literal.
    "deepseek/ds-06.json",
    # `arguments` that is not a string: reported as it is, for the gate.
    "openai-chat/x-args-not-string.json",
    # `input` that is not an object: reported as it is, for the gate.
    "anthropic/x-input-not-object.json",
}

# Bodies that are not responses (requests, tool definitions) or that a
# response model cannot hold.
SKIP_DIRS = {"gemini", "mcp"}


def events(text):
    """The `data:` payloads of an SSE body, `[DONE]` left out."""
    out = []
    for block in text.split("\n\n"):
        data = [line[5:].lstrip(" ") for line in block.splitlines() if line.startswith("data:")]
        if data and data != ["[DONE]"]:
            out.append("\n".join(data))
    return out


def check(rel, text):
    provider = rel.split("/")[0]
    if rel.endswith(".sse"):
        adapter = {
            "openai-chat": TypeAdapter(ChatCompletionChunk),
            "deepseek": TypeAdapter(ChatCompletionChunk),
            "openai-responses": TypeAdapter(ResponseStreamEvent),
            "anthropic": TypeAdapter(RawMessageStreamEvent),
        }[provider]
        for payload in events(text):
            try:
                value = json.loads(payload)
            except json.JSONDecodeError:
                continue  # a cut event: toolgate reads it as truncation
            if value == {"type": "ping"}:
                continue  # the SDK handles `ping` before the event models
            adapter.validate_python(value)
        return "stream"
    body = json.loads(text)
    if any(k in body for k in ("messages", "input", "contents")) or "choices" not in body and provider in ("openai-chat", "deepseek"):
        return "not a response"
    if provider in ("openai-chat", "deepseek"):
        ChatCompletion.model_validate(body)
    elif provider == "openai-responses":
        for item in body["output"]:
            if item["type"] == "function_call":
                ResponseFunctionToolCall.model_validate(item)
    elif provider == "anthropic":
        msg = Message.model_validate(body)
        # What the SDK hands the caller: the last duplicate has won.
        uses = [b.input for b in msg.content if b.type == "tool_use"]
        return f"message, tool_use inputs as the SDK sees them: {uses}"
    return "ok"


def main():
    print(f"openai {openai.__version__}, anthropic {anthropic.__version__}")
    failures = 0
    for path in sorted(BODIES.glob("*/*")):
        rel = f"{path.parent.name}/{path.name}"
        if path.parent.name in SKIP_DIRS:
            continue
        try:
            note = check(rel, path.read_text(encoding="utf-8"))
            print(f"accepted  {rel}: {note}")
        except Exception as e:  # noqa: BLE001 - report any refusal
            first = str(e).splitlines()[0]
            if rel in REFUSED_BY_DESIGN:
                print(f"by design {rel}: {first[:80]}")
            elif rel in MINIMAL:
                print(f"minimal   {rel}: {first[:80]}")
            else:
                failures += 1
                print(f"REFUSED   {rel}: {first}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
