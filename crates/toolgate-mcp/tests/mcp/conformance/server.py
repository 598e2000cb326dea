"""An MCP server for the conformance suite's server scenarios, written for
toolgate's tests with the official Python SDK (mcp==2.3.0: MCPServer, the
SDK's FastMCP) over streamable HTTP.

    python server.py [PORT]     # http://127.0.0.1:PORT/mcp (default 3001)

It offers what the scenarios of @modelcontextprotocol/conformance 0.1.16
ask for (the tools, resources and prompts they name, each answering as the
scenario's description says), and nothing else. It keeps a session per
client (`Mcp-Session-Id`), keeps the events of each stream for
resumption (`Last-Event-ID`, an in-memory store of its own below), and
refuses requests whose Host or Origin is not local (DNS rebinding).
"""

import asyncio
import base64
import io
import itertools
import json
import struct
import sys
import wave
import zlib

import mcp_types as types
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.prompts.base import UserMessage
from mcp.server.streamable_http import EventMessage, EventStore
from mcp.server.transport_security import TransportSecuritySettings


def png_1x1() -> str:
    """A 1x1 red PNG, base64."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    return base64.b64encode(data).decode()


def wav_silence() -> str:
    """A tenth of a second of 8 kHz mono silence as WAV, base64."""
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(1)
        w.setframerate(8000)
        w.writeframes(b"\x80" * 800)
    return base64.b64encode(out.getvalue()).decode()


PNG = png_1x1()
WAV = wav_silence()


class MemoryEvents(EventStore):
    """Every event of every stream, in order, for replay after a given one."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, types.JSONRPCMessage | None]] = []
        self.ids = itertools.count(1)

    async def store_event(self, stream_id, message):
        event_id = str(next(self.ids))
        self.events.append((event_id, stream_id, message))
        return event_id

    async def replay_events_after(self, last_event_id, send_callback):
        stream = next((s for e, s, _ in self.events if e == last_event_id), None)
        if stream is None:
            return None
        after = False
        for event_id, stream_id, message in self.events:
            if event_id == last_event_id:
                after = True
                continue
            if after and stream_id == stream and message is not None:
                await send_callback(EventMessage(message, event_id))
        return stream


server = MCPServer("toolgate-conformance-server", version="1.0.0")


# Tools.


@server.tool(description="Returns a simple text.")
def test_simple_text() -> str:
    return "This is a simple text response for testing."


@server.tool(description="Returns an image.", structured_output=False)
def test_image_content() -> list:
    return [types.ImageContent(type="image", data=PNG, mime_type="image/png")]


@server.tool(description="Returns audio.", structured_output=False)
def test_audio_content() -> list:
    return [types.AudioContent(type="audio", data=WAV, mime_type="audio/wav")]


def embedded(uri: str, mime: str, text: str) -> types.EmbeddedResource:
    return types.EmbeddedResource(
        type="resource",
        resource=types.TextResourceContents(uri=uri, mime_type=mime, text=text),
    )


@server.tool(description="Returns an embedded resource.", structured_output=False)
def test_embedded_resource() -> list:
    return [embedded("test://embedded-resource", "text/plain", "This is an embedded resource content.")]


@server.tool(description="Returns text, an image and a resource.", structured_output=False)
def test_multiple_content_types() -> list:
    return [
        types.TextContent(type="text", text="Multiple content types test:"),
        types.ImageContent(type="image", data=PNG, mime_type="image/png"),
        embedded(
            "test://mixed-content-resource",
            "application/json",
            json.dumps({"test": "data", "value": 123}, separators=(",", ":")),
        ),
    ]


@server.tool(description="Logs three messages while it runs.")
async def test_tool_with_logging(ctx: Context) -> str:
    await ctx.info("Tool execution started")
    await asyncio.sleep(0.05)
    await ctx.info("Tool processing data")
    await asyncio.sleep(0.05)
    await ctx.info("Tool execution completed")
    return "Logging tool finished."


@server.tool(description="Always fails.")
def test_error_handling() -> str:
    raise RuntimeError("This tool intentionally returns an error for testing")


@server.tool(description="Reports progress 0, 50 and 100 of 100.")
async def test_tool_with_progress(ctx: Context) -> str:
    await ctx.report_progress(0, 100)
    await asyncio.sleep(0.05)
    await ctx.report_progress(50, 100)
    await asyncio.sleep(0.05)
    await ctx.report_progress(100, 100)
    return "Progress tool finished."


@server.tool(description="Asks the client's model.")
async def test_sampling(prompt: str, ctx: Context) -> str:
    result = await ctx.session.create_message(
        messages=[types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))],
        max_tokens=100,
        related_request_id=ctx.request_id,
    )
    content = result.content
    text = getattr(content, "text", None) or json.dumps(content.model_dump(mode="json"))
    return f"LLM response: {text}"


async def elicit(ctx: Context, message: str, schema: dict) -> types.ElicitResult:
    return await ctx.session.elicit_form(message, schema, related_request_id=ctx.request_id)


@server.tool(description="Asks the user for a username and an email.")
async def test_elicitation(message: str, ctx: Context) -> str:
    result = await elicit(
        ctx,
        message,
        {
            "type": "object",
            "properties": {
                "username": {"type": "string", "description": "User's response"},
                "email": {"type": "string", "description": "User's email address"},
            },
            "required": ["username", "email"],
        },
    )
    return f"User response: action={result.action}, content={json.dumps(result.content)}"


@server.tool(description="Asks the user with a default for every primitive type.")
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    result = await elicit(
        ctx,
        "Please review the defaults",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "default": "John Doe"},
                "age": {"type": "integer", "default": 30},
                "score": {"type": "number", "default": 95.5},
                "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
                "verified": {"type": "boolean", "default": True},
            },
        },
    )
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


@server.tool(description="Asks the user with every kind of enum.")
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    result = await elicit(
        ctx,
        "Please choose",
        {
            "type": "object",
            "properties": {
                "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                "titledSingle": {
                    "type": "string",
                    "oneOf": [
                        {"const": "value1", "title": "First Option"},
                        {"const": "value2", "title": "Second Option"},
                        {"const": "value3", "title": "Third Option"},
                    ],
                },
                "legacyEnum": {
                    "type": "string",
                    "enum": ["opt1", "opt2", "opt3"],
                    "enumNames": ["Option One", "Option Two", "Option Three"],
                },
                "untitledMulti": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["option1", "option2", "option3"]},
                },
                "titledMulti": {
                    "type": "array",
                    "items": {
                        "anyOf": [
                            {"const": "value1", "title": "First Choice"},
                            {"const": "value2", "title": "Second Choice"},
                            {"const": "value3", "title": "Third Choice"},
                        ]
                    },
                },
            },
        },
    )
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


@server.tool(description="Closes its SSE stream mid-call; the client resumes.")
async def test_reconnection(ctx: Context) -> str:
    await asyncio.sleep(0.05)
    await ctx.close_sse_stream()
    await asyncio.sleep(0.2)
    return "Reconnection test completed successfully"


@server.tool(name="json_schema_2020_12_tool", description="Tool with JSON Schema 2020-12 features")
def json_schema_tool(name: str | None = None, address: dict | None = None) -> str:
    return f"name={name} address={json.dumps(address)}"


# The listed schema is the scenario's, keywords and all (the SDK derives one
# from the signature otherwise).
server._tool_manager.get_tool("json_schema_2020_12_tool").parameters = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


# Resources.


@server.resource("test://static-text", name="static-text", description="A static text.", mime_type="text/plain")
def static_text() -> str:
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="static-binary", description="A PNG.", mime_type="image/png")
def static_binary() -> bytes:
    return base64.b64decode(PNG)


@server.resource(
    "test://watched-resource", name="watched-resource", description="A resource to subscribe to.", mime_type="text/plain"
)
def watched() -> str:
    return "Watched resource content."


@server.resource(
    "test://template/{id}/data", name="template", description="Data by id.", mime_type="application/json"
)
def template(id: str) -> str:
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":"))


subscribed: set[str] = set()


async def subscribe(ctx, params: types.SubscribeRequestParams) -> types.EmptyResult:
    subscribed.add(str(params.uri))
    return types.EmptyResult()


async def unsubscribe(ctx, params: types.UnsubscribeRequestParams) -> types.EmptyResult:
    subscribed.discard(str(params.uri))
    return types.EmptyResult()


async def set_level(ctx, params: types.SetLevelRequestParams) -> types.EmptyResult:
    return types.EmptyResult()


low = server._lowlevel_server
low.add_request_handler("resources/subscribe", types.SubscribeRequestParams, subscribe)
low.add_request_handler("resources/unsubscribe", types.UnsubscribeRequestParams, unsubscribe)
low.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)


# Prompts.


@server.prompt(description="A prompt without arguments.")
def test_simple_prompt() -> list:
    return [UserMessage("This is a simple prompt for testing.")]


@server.prompt(description="A prompt with two arguments.")
def test_prompt_with_arguments(arg1: str, arg2: str) -> list:
    return [UserMessage(f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")]


@server.prompt(description="A prompt embedding a resource.")
def test_prompt_with_embedded_resource(resourceUri: str) -> list:
    return [
        UserMessage(embedded(resourceUri, "text/plain", "Embedded resource content for testing.")),
        UserMessage("Please process the embedded resource above."),
    ]


@server.prompt(description="A prompt with an image.")
def test_prompt_with_image() -> list:
    return [
        UserMessage(types.ImageContent(type="image", data=PNG, mime_type="image/png")),
        UserMessage("Please analyze the image above."),
    ]


@server.completion()
async def complete(ref, argument, context):
    values = [v for v in ["paris", "park", "party"] if v.startswith(argument.value or "")]
    return types.Completion(values=values, total=len(values), has_more=False)


if __name__ == "__main__":
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 3001
    local = ["127.0.0.1", "localhost", "[::1]"]
    server.run(
        "streamable-http",
        host="127.0.0.1",
        port=port,
        event_store=MemoryEvents(),
        retry_interval=500,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=[h for x in local for h in (x, f"{x}:*")],
            allowed_origins=[o for x in local for o in (f"http://{x}", f"http://{x}:*")],
        ),
    )
