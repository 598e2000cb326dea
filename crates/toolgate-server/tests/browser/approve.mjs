// Drives the approvals page of a running `toolgate serve` in headless
// Chromium, while acting as the agent over HTTP. Run by tests/ui_browser.rs;
// prints one line `RESULT {...}` for the Rust side to check, and exits
// non-zero on the first failed expectation.
//
// Environment: TOOLGATE_URL (http://127.0.0.1:PORT), AGENT_TOKEN,
// APPROVER_TOKEN, ADMIN_TOKEN, REFUND_BODY and NOTE_BODY (files holding provider
// responses), PIN_ID (a tool definition waiting for approval), CHROMIUM (default /usr/bin/chromium), SCREENSHOT (optional
// PNG path).

import { readFileSync } from "node:fs";
import { chromium } from "playwright-core";

const env = (name, fallback) => {
  const v = process.env[name] ?? fallback;
  if (v === undefined) throw new Error(`missing environment variable ${name}`);
  return v;
};
const base = env("TOOLGATE_URL");
const agentToken = env("AGENT_TOKEN");
const approverToken = env("APPROVER_TOKEN");
const adminToken = env("ADMIN_TOKEN");
const refundBody = readFileSync(env("REFUND_BODY"), "utf8");
const noteBody = readFileSync(env("NOTE_BODY"), "utf8");
const pinId = env("PIN_ID");
const screenshot = process.env.SCREENSHOT || "";
const context = { user: "alice", session: "sess-ui", roles: ["customer"], turn: 2 };

function expect(condition, what) {
  if (!condition) throw new Error(`expectation failed: ${what}`);
}

async function agent(method, path, body) {
  const res = await fetch(base + path, {
    method,
    headers: {
      Authorization: `Bearer ${agentToken}`,
      ...(body === undefined ? {} : { "Content-Type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const data = await res.json();
  expect(res.ok, `${method} ${path} answered ${res.status}: ${JSON.stringify(data)}`);
  return data;
}

const decide = (body) => agent("POST", "/v1/decide", { body, format: "auto", context });

const result = {};
const browser = await chromium.launch({
  executablePath: env("CHROMIUM", "/usr/bin/chromium"),
  headless: true,
  // Root in a container has no user namespaces for Chromium's sandbox, and
  // a container's /dev/shm is often too small for it.
  args: ["--no-sandbox", "--disable-dev-shm-usage"],
});
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
  const problems = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(String(e)));
  let loads = 0;
  page.on("load", () => (loads += 1));

  // Log in with the approver token.
  const answer = await page.goto(base + "/ui/");
  expect(answer.status() === 200, "GET /ui/ is 200");
  result.csp = answer.headers()["content-security-policy"];
  await page.fill("#token", approverToken);
  await page.click("#login-form button[type=submit]");
  await page.waitForSelector("#app-view:not([hidden])");
  result.who = await page.textContent("#who");
  expect((await page.inputValue("#token")) === "", "the token field is cleared after login");

  // The agent's calls are held; the page shows them without a reload.
  const note = await decide(noteBody);
  expect(note.verdict === "needs_approval", `add_note needs approval: ${JSON.stringify(note)}`);
  const noteId = note.decisions[0].approval;
  const refund = await decide(refundBody);
  expect(refund.verdict === "needs_approval", `refund needs approval: ${JSON.stringify(refund)}`);
  const refundId = refund.decisions[1].approval;
  result.first_verdict = refund.verdict;
  const noteCard = `[data-approval-id="${noteId}"]`;
  const refundCard = `[data-approval-id="${refundId}"]`;
  await page.waitForSelector(refundCard, { timeout: 10000 });
  await page.waitForSelector(noteCard, { timeout: 10000 });

  // Attacker-controlled arguments are text, not markup.
  const args = await page.$eval(`${noteCard} pre.args`, (e) => ({
    text: e.textContent,
    elements: e.querySelectorAll("*").length,
  }));
  result.note_arguments = args.text;
  result.note_argument_elements = args.elements;
  // What the policy that held it read: an entity's attribute written by
  // someone outside the shop is text too.
  result.note_facts = await page.$$eval(`${noteCard} dd.fact`, (d) =>
    d.map((e) => ({ text: e.textContent, elements: e.querySelectorAll("*").length }))
  );
  result.script_elements = await page.$$eval("script", (s) => s.map((e) => e.getAttribute("src")));
  result.img_elements = await page.$$eval("img", (s) => s.length);
  result.xss_ran = await page.evaluate(() => window.__toolgateXss !== undefined);
  result.refund_card = await page.textContent(refundCard);

  if (screenshot) {
    await page.screenshot({ path: screenshot, fullPage: true });
  }

  // The agent waits; the human approves in the page.
  const waiting = agent("GET", `/v1/approvals/${refundId}/wait?timeout=30`);
  await page.fill(`${refundCard} textarea`, "checked order ord_1002 with the customer");
  await page.click(`${refundCard} button.approve`);
  await page.waitForSelector(refundCard, { state: "detached", timeout: 10000 });
  result.status_after_approve = await page.textContent("#status");
  const waited = await waiting;
  result.wait_state = waited.state;
  result.wait_timed_out = waited.timed_out;
  result.decided_by = waited.decided_by;
  result.approval_note = waited.note;

  // The agent sends the same call again: allowed by the approval.
  const again = await decide(refundBody);
  result.second_verdict = again.verdict;
  result.second_refund_verdict = again.decisions[1].verdict;
  result.second_refund_approval = again.decisions[1].approval;

  // A tool definition an MCP server changed waits in the pins panel with
  // its findings and its diff; its markup is text. Approved in the page.
  const pinCard = `[data-pin-id="${pinId}"]`;
  await page.waitForSelector(pinCard, { timeout: 10000 });
  result.pin_card = await page.textContent(pinCard);
  result.pin_diff_lines = {
    added: await page.$$eval(`${pinCard} pre.diff .d-add`, (e) => e.length),
    removed: await page.$$eval(`${pinCard} pre.diff .d-del`, (e) => e.length),
  };
  expect(
    (await page.$$eval(`${pinCard} pre.diff img`, (e) => e.length)) === 0,
    "no element from the definition"
  );
  await page.fill(`${pinCard} textarea`, "read the diff");
  await page.click(`${pinCard} button.approve`);
  await page.waitForSelector(pinCard, { state: "detached", timeout: 10000 });
  result.status_after_pin = await page.textContent("#status");
  const pinRes = await fetch(`${base}/v1/pins/${pinId}`, {
    headers: { Authorization: `Bearer ${approverToken}` },
  });
  const pin = await pinRes.json();
  expect(pinRes.ok, `GET /v1/pins/${pinId}: ${JSON.stringify(pin)}`);
  result.pin_state = pin.state;
  result.pin_decided_by = pin.decided_by;

  // Deny the other call from the page.
  await page.fill(`${noteCard} textarea`, "no markup in notes");
  await page.click(`${noteCard} button.deny`);
  await page.waitForSelector(noteCard, { state: "detached", timeout: 10000 });
  const denied = await agent("GET", `/v1/approvals/${noteId}/wait?timeout=0`);
  result.denied_state = denied.state;

  // The audit table refreshes by itself with what the agent's retry did.
  await page.waitForFunction(
    () =>
      Array.from(document.querySelectorAll("#audit-rows td")).some(
        (td) => td.textContent === "approval_used"
      ),
    null,
    { timeout: 10000 }
  );
  result.kill_readonly = await page.isVisible("#kill-readonly");
  result.kill_form = await page.isVisible("#kill-form");
  result.no_approvals_shown = await page.isVisible("#no-approvals");

  // Log out; an admin logs in and sets the kill switch from the page.
  await page.click("#logout");
  await page.waitForSelector("#login-view:not([hidden])");
  result.after_logout = await page.evaluate(async () => (await fetch("/ui/api/me")).json());
  await page.fill("#token", adminToken);
  await page.click("#login-form button[type=submit]");
  await page.waitForSelector("#kill-form:not([hidden])");
  await page.selectOption("#kill-select", "deny_writes");
  await page.fill("#kill-reason", "<b>incident</b> 7");
  await page.click("#kill-form button[type=submit]");
  await page.waitForFunction(() => document.getElementById("kill-mode").textContent === "deny_writes");
  result.kill_detail = await page.textContent("#kill-detail");
  result.kill_detail_elements = await page.$$eval("#kill-detail *", (e) => e.length);
  const blocked = await decide(refundBody);
  result.verdict_under_kill = blocked.decisions[1].verdict;
  result.reasons_under_kill = blocked.decisions[1].reasons;
  result.loads = loads;
  result.console_errors = problems;
  result.xss_ran_at_end = await page.evaluate(() => window.__toolgateXss !== undefined);
} finally {
  await browser.close();
}
console.log("RESULT " + JSON.stringify(result));
