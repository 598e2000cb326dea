#!/usr/bin/env python3
"""A small agent loop behind `toolgate serve`.

Each turn the model proposes tool calls; before running any of them the
agent sends the model's raw response to `POST /v1/decide` and obeys the
answer, call by call:

- allow: run the tool with the decision's `arguments` (the canonical value
  the gate checked, never the model's raw text) and give its result to the
  model;
- deny: run nothing, give the gate's `feedback` to the model (it says what
  to fix, never echoes the model's text back);
- needs_approval: wait for a human on `GET /v1/approvals/{id}/wait`, then
  ask the gate again (an approved call is allowed once, for exactly these
  arguments) or, if the human said no, tell the model.

The model here is canned: OpenAI Chat Completions responses read from
`responses/` in name order, so the loop runs without a model API. The tools
are local fakes. Only the standard library is used.

    python3 examples/python/agent.py --server http://127.0.0.1:8080 \\
        --token agent-demo-token --user alice --session demo-1

One line per event goes to standard output (`turn N: TOOL VERDICT …`);
the exit code is 0 when the model gave its final answer, 2 on an error
(the message names what failed).
"""

import argparse
import json
import pathlib
import sys
import urllib.error
import urllib.parse
import urllib.request

HERE = pathlib.Path(__file__).resolve().parent


class GateError(Exception):
    """The service refused a request or could not be reached."""


class Gate:
    """The few calls of toolgate's HTTP API the agent needs."""

    def __init__(self, server, token, timeout=70.0):
        self.server = server.rstrip("/")
        self.token = token
        self.timeout = timeout

    def _call(self, method, path, body=None):
        data = None if body is None else json.dumps(body).encode("utf-8")
        req = urllib.request.Request(self.server + path, data=data, method=method)
        req.add_header("Authorization", "Bearer " + self.token)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.load(resp)
        except urllib.error.HTTPError as e:
            # Every error of the service is {"error": {"code", "message", "pointer"}}.
            try:
                err = json.load(e)["error"]
                detail = f"{err['code']}: {err['message']} (at `{err['pointer']}`)"
            except (ValueError, KeyError, TypeError):
                detail = "no error body"
            raise GateError(f"{method} {path}: HTTP {e.code}: {detail}") from None
        except (urllib.error.URLError, OSError) as e:
            raise GateError(f"{method} {path}: cannot reach {self.server}: {e}") from None

    def decide(self, raw_response, context):
        """The gate's decisions on one raw model response."""
        return self._call(
            "POST",
            "/v1/decide",
            {"body": raw_response, "format": "openai", "context": context},
        )

    def wait(self, approval_id, seconds):
        """The approval once a human decided it, or after `seconds`."""
        q = urllib.parse.urlencode({"timeout": seconds})
        path = f"/v1/approvals/{urllib.parse.quote(approval_id, safe='')}/wait?{q}"
        return self._call("GET", path)


class CannedModel:
    """Replays OpenAI Chat Completions responses, one per turn."""

    def __init__(self, folder):
        self.files = sorted(pathlib.Path(folder).glob("*.json"))
        if not self.files:
            raise SystemExit(f"agent: no canned responses (*.json) in {folder}")
        self.turn = 0

    def respond(self, _messages):
        """The next raw response body, exactly as a provider would send it."""
        if self.turn >= len(self.files):
            raise GateError("the canned model has no more responses")
        text = self.files[self.turn].read_text(encoding="utf-8")
        self.turn += 1
        return text


# The tools: local fakes of the shop's tools.
def search(args):
    hits = ["Trail boot", "Summit boot", "River boot", "Desert boot"]
    return {"results": hits[: args.get("limit", 10)], "query": args["query"]}


def get_order(args):
    return {"order_id": args["order_id"], "status": "delivered"}


def refund(args):
    return {"refunded": args["amount_cents"], "order_id": args["order_id"]}


TOOLS = {"search": search, "get_order": get_order, "refund": refund}


def run_tool(decision):
    """Runs an allowed call with the value the gate checked: the decision's
    `arguments`, never the model's raw `arguments` text, which a second
    parser could read differently from the gate."""
    return TOOLS[decision["tool"]](decision["arguments"])


def say(line):
    print(line, flush=True)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--server", default="http://127.0.0.1:8080")
    p.add_argument("--token", default="agent-demo-token")
    p.add_argument("--user", default="alice")
    p.add_argument("--session", default="agent-demo")
    p.add_argument("--role", action="append", default=None, help="default: customer")
    p.add_argument("--responses", default=str(HERE / "responses"))
    p.add_argument("--approval-timeout", type=float, default=120.0,
                   help="seconds to wait for a human before giving up on a call")
    args = p.parse_args(argv)

    gate = Gate(args.server, args.token)
    model = CannedModel(args.responses)
    messages = [{"role": "user", "content": "Find me boots, and refund my late orders."}]
    for turn in range(1, 100):
        raw = model.respond(messages)
        reply = json.loads(raw)["choices"][0]
        message = reply["message"]
        messages.append(message)
        calls = message.get("tool_calls") or []
        if not calls:
            say(f"turn {turn}: answer: {message.get('content')}")
            return 0
        context = {
            "user": args.user,
            "session": args.session,
            "roles": args.role or ["customer"],
            "turn": turn,
        }
        decided = gate.decide(raw, context)
        by_id = {c["id"]: c for c in calls}
        for d in decided["decisions"]:
            call = by_id.get(d["call_id"])
            if call is None:
                raise GateError(f"the gate decided a call the agent did not see: {d['call_id']}")
            verdict = d["verdict"]
            if verdict == "needs_approval":
                say(f"turn {turn}: {d['tool']} needs_approval: waiting for approval {d['approval']}")
                waited_for = 0.0
                while True:
                    a = gate.wait(d["approval"], min(30.0, args.approval_timeout - waited_for))
                    if not a["timed_out"] or waited_for >= args.approval_timeout:
                        break
                    waited_for += 30.0
                say(f"turn {turn}: approval {a['id']} {a['state']} by {a['decided_by']}")
                if a["state"] == "approved":
                    # The approval lets exactly this call through, once.
                    again = gate.decide(raw, context)
                    d = next(x for x in again["decisions"] if x["call_id"] == call["id"])
                    verdict = d["verdict"]
                else:
                    verdict = "deny"
                    d = dict(d, feedback="A human declined this call; do not retry it.",
                             reasons=[{"code": "approval_denied"}])
            if verdict == "allow":
                result = run_tool(d)
                say(f"turn {turn}: {d['tool']} allow: ran it: {json.dumps(result, sort_keys=True)}")
                content = json.dumps(result)
            else:
                codes = ",".join(r["code"] for r in d["reasons"])
                say(f"turn {turn}: {d['tool']} {verdict} ({codes}): feedback to the model: {d['feedback']}")
                content = json.dumps({"error": d["feedback"]})
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    raise GateError("no final answer after 99 turns")


if __name__ == "__main__":
    try:
        sys.exit(main())
    except GateError as e:
        print(f"agent: {e}", file=sys.stderr)
        sys.exit(2)
