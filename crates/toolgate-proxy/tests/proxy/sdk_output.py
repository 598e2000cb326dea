"""What reaches an application through the official SDKs is built from the
gate's decisions (issue 28, items 1, 2, 4, 6, 7, 8): the canned upstream's
`case:` attacks (attacks.py) against `toolgate proxy`.

Usage: sdk_output.py PROXY_URL UPSTREAM_LOG CONFIG. Prints `ok NAME` or
`FAIL NAME: why` per scenario; exits 1 if any failed.
"""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path
from typing import Any, Callable, Dict, List

sys.path.insert(0, str(Path(__file__).resolve().parent))

import anthropic  # noqa: E402
import openai  # noqa: E402
from sdk_client import MESSAGES, an, audit_records, extra, fresh, last_upstream_request, oa  # noqa: E402


def denied_records(session: str) -> List[Dict[str, Any]]:
    return [r for r in audit_records(session) if r["verdict"] == "deny"]


def stream_refused(session: str, make: Callable[[Any], Any]) -> str:
    """Runs `make(client)` and returns the APIError it must raise."""
    try:
        make(oa(session))
    except openai.APIError as e:
        return str(e)
    raise AssertionError("the stream was handed on")


def responses_final_output_cannot_smuggle_calls() -> None:
    for case, tool in (("responses-smuggle-denied", "fetch_url"), ("responses-smuggle-allowed", "search")):
        session = fresh()
        seen: List[Any] = []

        def consume(client: Any) -> None:
            with client.responses.stream(model=f"case:{case}", input="hi") as s:
                for e in s:
                    seen.append(e)
                s.get_final_response()

        why = stream_refused(session, consume)
        assert "final output" in why, why
        assert not any(getattr(e, "item", None) is not None and e.item.type == "function_call" for e in seen), seen
        records = denied_records(session)
        assert [(r["tool"], r["reasons"]) for r in records] == [(tool, ["stream_refused"])], records


def responses_final_output_extra_item_refused() -> None:
    session = fresh()

    def consume(client: Any) -> None:
        for _ in client.responses.create(model="case:responses-final-shell", input="hi", stream=True):
            pass

    stream_refused(session, consume)
    assert [r["tool"] for r in denied_records(session)] == ["search"], audit_records(session)


def responses_items_off_the_pass_list_refused() -> None:
    session = fresh()

    def consume(client: Any) -> None:
        for e in client.responses.create(model="case:responses-stream-program", input="hi", stream=True):
            item = getattr(e, "item", None)
            assert item is None or item.type != "program", e

    why = stream_refused(session, consume)
    assert "pass list" in why, why
    assert [r["tool"] for r in denied_records(session)] == ["search"], audit_records(session)
    session = fresh()
    try:
        oa(session).responses.create(model="case:responses-json-shell", input="hi")
    except openai.APIStatusError as e:
        assert e.status_code == 502 and "local_shell_call" in str(e), str(e)
    else:
        raise AssertionError("a shell call item was handed on")
    records = denied_records(session)
    assert [(r["tool"], r["reasons"]) for r in records] == [("search", ["item_refused"])], records


def chat_forged_verdicts_removed() -> None:
    stream = oa().chat.completions.create(model="case:chat-forged", messages=MESSAGES, stream=True)
    for c in stream:
        if c.choices and c.choices[0].delta.tool_calls:
            raise AssertionError("a denied call was released")
    with oa().chat.completions.stream(model="case:chat-forged", messages=MESSAGES) as s:
        for _ in s:
            pass
        final = s.get_final_completion()
    assert "toolgate" not in extra(final), extra(final)
    verdicts = extra(final.choices[0].message)["toolgate"]
    assert [c["verdict"] for c in verdicts["calls"]] == ["deny"], verdicts
    assert verdicts["calls"][0]["call_id"] == "call_r", verdicts
    # The message goes back into the history as the SDK keeps it: the
    # verdicts are not sent upstream.
    history = [*MESSAGES, final.choices[0].message, {"role": "user", "content": "go on"}]
    oa().chat.completions.create(model="file:openai-search.json", messages=history)
    sent = json.loads(last_upstream_request()["body"])
    assert sent["messages"][1]["role"] == "assistant", sent
    assert "toolgate" not in sent["messages"][1], sent["messages"][1]


def anthropic_forged_verdicts_removed() -> None:
    with an().messages.stream(model="case:anthropic-forged", max_tokens=10, messages=MESSAGES) as s:
        verdicts = None
        for e in s:
            if e.type == "message_delta":
                verdicts = extra(e)["toolgate"]
        final = s.get_final_message()
    assert "toolgate" not in extra(final), extra(final)
    assert [b.type for b in final.content] == ["text"], final.content
    assert verdicts and [c["verdict"] for c in verdicts["calls"]] == ["deny"], verdicts


def responses_forged_verdicts_removed() -> None:
    with oa().responses.stream(model="case:responses-forged", input="hi") as s:
        created = None
        for e in s:
            if e.type == "response.created":
                created = e.response
        final = s.get_final_response()
    assert created is not None and "toolgate" not in extra(created), extra(created)
    verdicts = extra(final)["toolgate"]
    assert [c["verdict"] for c in verdicts["calls"]] == ["deny"], verdicts


def chat_unread_chunk_never_forwarded() -> None:
    got: List[str] = []
    try:
        for c in oa().chat.completions.create(model="case:chat-choices-object", messages=MESSAGES, stream=True):
            got.extend(ch.delta.content or "" for ch in c.choices)
    except openai.APIError as e:
        assert "choices" in str(e), str(e)
    else:
        raise AssertionError("the stream ended without an error")
    assert "".join(got) == "Hello. ", got


def mismatched_framing_is_an_error() -> None:
    session = fresh()
    try:
        for _ in oa(session).chat.completions.create(model="case:chat-json", messages=MESSAGES, stream=True):
            pass
    except openai.APIStatusError as e:
        assert e.status_code == 502 and e.code == "framing_mismatch", (e.code, str(e))
    else:
        raise AssertionError("a JSON body was handed to a stream")
    assert [(r["tool"], r["call_id"], r["reasons"]) for r in denied_records(session)] == [("search", "call_j", ["framing_mismatch"])], audit_records(session)
    session = fresh()
    try:
        oa(session).chat.completions.create(model="case:chat-sse", messages=MESSAGES)
    except openai.APIStatusError as e:
        assert e.status_code == 502 and e.code == "framing_mismatch", (e.code, str(e))
    else:
        raise AssertionError("an event stream was handed to a JSON request")
    assert [r["call_id"] for r in denied_records(session)] == ["call_k"], audit_records(session)


def refused_stream_audited_per_call() -> None:
    session = fresh()

    def consume(client: Any) -> None:
        for _ in client.chat.completions.create(model="case:chat-garbage-after-calls", messages=MESSAGES, stream=True):
            pass

    stream_refused(session, consume)
    records = audit_records(session)
    calls = sorted((r["call_id"], r["tool"]) for r in records if r.get("tool"))
    assert calls == [("call_o", "get_order"), ("call_s", "search")], records
    assert all(r["verdict"] == "deny" for r in records), records


SCENARIOS: List[Callable[[], None]] = [
    responses_final_output_cannot_smuggle_calls,
    responses_final_output_extra_item_refused,
    responses_items_off_the_pass_list_refused,
    chat_forged_verdicts_removed,
    anthropic_forged_verdicts_removed,
    responses_forged_verdicts_removed,
    chat_unread_chunk_never_forwarded,
    mismatched_framing_is_an_error,
    refused_stream_audited_per_call,
]


def main() -> int:
    failed = 0
    for s in SCENARIOS:
        try:
            s()
            print(f"ok {s.__name__}", flush=True)
        except Exception as e:  # noqa: BLE001 - every failure is reported
            failed += 1
            detail = "".join(traceback.format_exception_only(type(e), e)).strip()
            print(f"FAIL {s.__name__}: {detail}", flush=True)
            traceback.print_exc()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
