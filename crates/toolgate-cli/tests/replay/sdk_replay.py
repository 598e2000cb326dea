"""The official SDKs, unchanged, against `toolgate replay` over
examples/replay: every route and body kind it serves, and its refusals as
the SDKs raise them. Prints one line per check; the test compares them.

Usage: sdk_replay.py BASE_URL   (http://127.0.0.1:PORT)
"""

import sys

import anthropic
import openai

base = sys.argv[1]
oa = openai.OpenAI(base_url=base + "/v1", api_key="sk-replay", max_retries=0)
an = anthropic.Anthropic(base_url=base, api_key="sk-replay", max_retries=0)


def user(text):
    return [{"role": "user", "content": text}]


r = oa.chat.completions.create(model="gpt-4.1", messages=user("Find waterproof hiking boots"))
call = r.choices[0].message.tool_calls[0]
print("chat", r.id, call.function.name, call.function.arguments)

with oa.chat.completions.stream(model="gpt-4.1", messages=user("Find trail socks")) as s:
    final = s.get_final_completion()
call = final.choices[0].message.tool_calls[0]
print("chat stream", final.choices[0].message.content, call.function.name, call.function.arguments)

r = oa.responses.create(model="gpt-4.1", input="Find trail socks")
print("responses", r.id, r.output[0].name, r.output[0].arguments)

m = an.messages.create(
    model="claude-sonnet-4-5", max_tokens=256, messages=user("Refund my late order ord_1002")
)
print("messages", m.id, m.content[0].text, m.content[1].name, sorted(m.content[1].input.items()))

with an.messages.stream(
    model="claude-sonnet-4-5", max_tokens=256, messages=user("Find trail socks")
) as s:
    text = "".join(s.text_stream)
    final = s.get_final_message()
print("messages stream", text, final.content[1].name, final.content[1].input)

try:
    oa.chat.completions.create(model="gpt-4.1", messages=user("Something never recorded"))
except openai.NotFoundError as e:
    print("chat miss", e.status_code, e.body["code"])

try:
    an.messages.create(model="claude-sonnet-4-5", max_tokens=8, messages=user("Nor this"))
except anthropic.NotFoundError as e:
    print("messages miss", e.status_code, e.body["error"]["type"])

try:
    oa.chat.completions.create(model="rate-limited", messages=user("anything"))
except openai.RateLimitError as e:
    print("rate limited", e.status_code, e.body["code"])
