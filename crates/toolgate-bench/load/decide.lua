-- wrk script: POST /v1/decide with the shop's search call as alice, the
-- agent's demo token, one call id per request (so every decision is its own
-- audit record), a new session every 8 requests (the store counts a
-- session's responses: the shop's max_turns = 20 would deny the 21st).
-- Usage: wrk -s decide.lua http://127.0.0.1:PORT
local counter = 0
local thread_id = 0
local threads = {}

function setup(thread)
  thread:set("tid", thread_id)
  thread_id = thread_id + 1
  table.insert(threads, thread)
end

function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  wrk.headers["Authorization"] = "Bearer agent-demo-token"
end

local template = '{"body":"{\\"id\\":\\"chatcmpl-load\\",\\"object\\":\\"chat.completion\\",\\"created\\":1767225600,\\"model\\":\\"gpt-4.1\\",\\"choices\\":[{\\"index\\":0,\\"finish_reason\\":\\"tool_calls\\",\\"message\\":{\\"role\\":\\"assistant\\",\\"content\\":null,\\"tool_calls\\":[{\\"id\\":\\"call-%d-%d\\",\\"type\\":\\"function\\",\\"function\\":{\\"name\\":\\"search\\",\\"arguments\\":\\"{\\\\\\"query\\\\\\":\\\\\\"boots\\\\\\",\\\\\\"limit\\\\\\":5}\\"}}]}}]}","format":"openai","context":{"user":"alice","session":"load-%d-%d","roles":["customer"],"turn":1}}'

function request()
  counter = counter + 1
  local body = string.format(template, tid, counter, tid, math.floor(counter / 8))
  return wrk.format(nil, "/v1/decide", nil, body)
end

local non_allow = 0
function response(status, headers, body)
  if status ~= 200 or not string.find(body, '"verdict":"allow"', 1, true) then
    non_allow = non_allow + 1
    if non_allow <= 3 then
      io.stderr:write("unexpected answer: " .. status .. " " .. body .. "\n")
    end
  end
end

function done(summary, latency, requests)
  io.write(string.format("decisions/s: %.0f\n", summary.requests / (summary.duration / 1e6)))
  io.write(string.format("latency p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
  io.write(string.format("non-2xx or socket errors: %d\n",
    summary.errors.status + summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
