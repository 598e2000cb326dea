// The approvals page of `toolgate serve`. Plain JavaScript, no build step.
//
// Every value from the server is written with textContent (or as an
// attribute value), never as HTML: a call's arguments are the model's
// output and may contain markup. Characters that change how the text
// around them reads (bidi controls: U+202E shows "amount: 1" as
// "1 :tnuoma") or do not show at all are written escaped (`\u202E`), so
// the approver reads the value as it is.
"use strict";

(function () {
  const POLL_MS = 2000;
  let csrf = "";
  let role = "";
  let timer = null;

  const $ = (id) => document.getElementById(id);

  // Controls (but tab and newline), bidi controls, zero-width and other
  // invisible format characters, fillers, variation selectors and tag
  // characters: the set `toolgate approvals show` escapes too.
  // The table is the service's own (toolgate::hidden), written in when the
  // page is served.
  const HIDDEN =
    /[\u0000-\u0008\u000B-\u001F\u007F-\u009F/*toolgate:hidden*/]/gu;

  function visible(text) {
    return String(text).replace(HIDDEN, (c) => {
      const cp = c.codePointAt(0).toString(16).toUpperCase();
      return c.length === 2 ? "\\u{" + cp + "}" : "\\u" + cp.padStart(4, "0");
    });
  }

  function el(tag, className, text) {
    const e = document.createElement(tag);
    if (className) e.className = className;
    if (text !== undefined && text !== null) e.textContent = visible(text);
    return e;
  }

  function time(ms) {
    if (ms === null || ms === undefined) return "";
    return new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z");
  }

  function setStatus(text, bad) {
    const s = $("status");
    s.textContent = text;
    s.classList.toggle("bad", !!bad);
  }

  async function api(method, path, body) {
    const headers = {};
    const init = { method, headers, credentials: "same-origin", cache: "no-store" };
    if (method !== "GET") {
      headers["X-CSRF-Token"] = csrf;
      if (body !== undefined) {
        headers["Content-Type"] = "application/json";
        init.body = JSON.stringify(body);
      }
    }
    const res = await fetch(path, init);
    let data = null;
    try {
      data = await res.json();
    } catch (_) {
      data = null;
    }
    if (!res.ok) {
      const e = new Error(
        data && data.error ? data.error.code + ": " + data.error.message : "HTTP " + res.status
      );
      e.status = res.status;
      throw e;
    }
    return data;
  }

  function showLogin(message) {
    if (timer !== null) {
      clearInterval(timer);
      timer = null;
    }
    csrf = "";
    role = "";
    $("app-view").hidden = true;
    $("logout").hidden = true;
    $("who").textContent = "";
    $("login-view").hidden = false;
    $("login-error").textContent = message || "";
    $("token").focus();
  }

  function showApp() {
    $("login-view").hidden = true;
    $("app-view").hidden = false;
    $("logout").hidden = false;
    if (timer === null) timer = setInterval(refresh, POLL_MS);
  }

  // The pending calls' search: one exact field, or none.
  let search = null;

  async function refresh() {
    let state;
    const query = search
      ? "?" + search.field + "=" + encodeURIComponent(search.value)
      : "";
    try {
      state = await api("GET", "/ui/api/state" + query);
    } catch (e) {
      if (e.status === 401) {
        showLogin("Your session has ended; log in again.");
      } else {
        setStatus("Could not refresh: " + e.message, true);
      }
      return;
    }
    csrf = state.me.csrf;
    role = state.me.role;
    $("who").textContent = state.me.actor + " (" + state.me.role + ")";
    showApp();
    renderKill(state.kill);
    renderApprovals(state.approvals, state.pending_total);
    renderPins(state.pins);
    renderAudit(state.audit);
    $("app-view").dataset.refreshedAt = String(Date.now());
  }

  function renderKill(k) {
    const mode = $("kill-mode");
    mode.textContent = k.mode;
    mode.classList.toggle("on", k.mode !== "off");
    const parts = [];
    if (k.changed_at !== null) parts.push("since " + time(k.changed_at));
    if (k.actor) parts.push("by " + k.actor);
    if (k.reason) parts.push("— " + k.reason);
    $("kill-detail").textContent = visible(parts.join(" "));
    const admin = role === "admin";
    $("kill-form").hidden = !admin;
    $("kill-readonly").hidden = admin;
  }

  function field(dl, name, value) {
    dl.append(el("dt", "", name), el("dd", "", value));
  }

  function approvalCard(a) {
    const card = el("article", "card approval");
    card.dataset.approvalId = a.id;
    card.dataset.votes = String(a.approvers_so_far);
    // `#approval-ID` (the link `toolgate mcp` gives an MCP client) names it.
    card.id = "approval-" + a.id;

    const head = el("header");
    head.append(el("span", "id muted", "#" + a.id), el("span", "tool", a.tool));
    const risk = el("span", "risk", a.risk === null ? "unknown risk" : a.risk);
    if (a.risk) risk.classList.add("risk-" + a.risk);
    head.append(risk);
    card.append(head);

    const dl = el("dl");
    field(dl, "user", a.user);
    field(dl, "session", a.session === null ? "—" : a.session);
    // The MCP server the call goes to, when the proxy routes it.
    if (a.upstream !== null) field(dl, "upstream", a.upstream);
    field(dl, "reasons", a.reasons.length ? a.reasons.join(", ") : "—");
    field(dl, "held by", a.policies.length ? a.policies.join(", ") : "—");
    // What the policies that held it read (such as the order's total):
    // values from entities a caller may have asserted, so text only.
    for (const f of a.facts) {
      field(dl, "policy read", f.path + " = " + f.value);
      dl.lastElementChild.classList.add("fact");
    }
    if (a.call_id !== null) field(dl, "call id", a.call_id);
    if (a.approvers_needed > 1 || a.not_own) {
      const who = a.approvers.map((v) => v.approver).join(", ");
      field(
        dl,
        "approvers",
        a.approvers_so_far + " of " + a.approvers_needed + " distinct" +
          (a.not_own ? ", not " + a.user : "") + (who ? " (" + who + ")" : "")
      );
    }
    field(dl, "labels", a.labels.length ? a.labels.join(", ") : "—");
    for (const u of a.usage) {
      field(dl, "usage", u.limit + " (per " + u.per + "): " + u.used + " of " + u.cap +
        " in " + u.window_seconds + " s");
    }
    field(dl, "requested", time(a.created_at));
    field(dl, "expires", time(a.expires_at));
    field(dl, "digest", a.digest === null ? "—" : a.digest);
    card.append(dl);

    const args = el("pre", "args");
    args.textContent = a.arguments === null ? "(arguments not recorded)" : visible(a.arguments);
    card.append(args);

    // What else the session did: its latest decisions, newest first.
    if (a.recent.length) {
      const recent = el("details", "recent");
      recent.append(el("summary", "", "Session's recent decisions (" + a.recent.length + ")"));
      const table = el("table", "recent");
      for (const r of a.recent) {
        const tr = el("tr");
        tr.append(
          el("td", "muted", time(r.time)),
          el("td", "verdict-" + r.verdict, r.verdict),
          el("td", "", r.tool === null ? "—" : r.tool),
          el("td", "", r.reasons.join(", ")),
          el("td", "muted", r.policies.join(", "))
        );
        table.append(tr);
      }
      recent.append(table);
      card.append(recent);
    }

    const noteId = "note-" + a.id;
    const label = el("label", "", "Note (recorded in the audit log)");
    label.htmlFor = noteId;
    const note = el("textarea", "note");
    note.id = noteId;
    note.rows = 2;
    note.maxLength = 1000;
    card.append(label, note);

    const actions = el("div", "actions");
    const approve = el("button", "approve", "Approve");
    approve.type = "button";
    const deny = el("button", "deny", "Deny");
    deny.type = "button";
    approve.addEventListener("click", () => decide(a.id, "approve", note, [approve, deny]));
    deny.addEventListener("click", () => decide(a.id, "deny", note, [approve, deny]));
    actions.append(approve, deny);
    card.append(actions);
    return card;
  }

  async function decide(id, action, note, buttons) {
    buttons.forEach((b) => (b.disabled = true));
    try {
      const a = await api("POST", "/ui/api/approvals/" + encodeURIComponent(id) + "/" + action, {
        note: note.value,
      });
      if (a.state === "pending") {
        // A two-person rule: this approval is one vote of several.
        setStatus("Approval #" + a.id + ": " + a.approvers_so_far + " of " + a.approvers_needed +
          " approvers; it waits for another approver.");
      } else {
        setStatus("Approval #" + a.id + " " + a.state + " by " + a.decided_by + ".");
      }
      await refresh();
    } catch (e) {
      setStatus("Could not " + action + " #" + id + ": " + e.message, true);
      buttons.forEach((b) => (b.disabled = false));
    }
  }

  // Cards that stay pending are kept as they are, so a note being typed
  // survives the refresh.
  // The newest first; `total` counts every pending approval, shown or not.
  function renderApprovals(list, total) {
    const box = $("approvals");
    const keep = new Map();
    for (const card of Array.from(box.children)) keep.set(card.dataset.approvalId, card);
    const wanted = new Set(list.map((a) => a.id));
    for (const [id, card] of keep) {
      if (!wanted.has(id)) card.remove();
    }
    let previous = null;
    for (const a of list) {
      let card = keep.get(a.id);
      if (card && card.dataset.votes !== String(a.approvers_so_far)) {
        // Another approver voted: show the count afresh.
        const fresh = approvalCard(a);
        card.replaceWith(fresh);
        card = fresh;
      }
      if (!card || !card.isConnected) {
        card = approvalCard(a);
        if (location.hash === "#" + card.id) requestAnimationFrame(() => card.scrollIntoView());
      }
      if (previous === null) {
        if (box.firstChild !== card) box.prepend(card);
      } else if (previous.nextSibling !== card) {
        previous.after(card);
      }
      previous = card;
    }
    const matching = search ? " matching " + search.field : "";
    $("pending-count").textContent =
      total > list.length
        ? "(" + list.length + " newest of " + total + matching + ")"
        : "(" + total + matching + ")";
    $("no-approvals").hidden = list.length > 0;
  }

  // A tool definition an MCP server showed `toolgate mcp` that no human
  // approved yet (new, changed or renamed): its findings, which members
  // changed and the line diff from the definition approved last.
  function pinCard(p) {
    const card = el("article", "card pin");
    card.dataset.pinId = p.id;
    const head = el("header");
    head.append(el("span", "id muted", "pin #" + p.id), el("span", "tool", p.tool));
    head.append(el("span", "muted", "upstream " + p.upstream));
    card.append(head);

    const dl = el("dl");
    field(dl, "digest", p.digest);
    field(dl, "first seen", time(p.first_seen));
    field(
      dl,
      "approved before",
      p.diff.approved === null ? "none: a new tool" : "#" + p.diff.approved.id + " " + p.diff.approved.digest
    );
    field(
      dl,
      "changed",
      p.diff.members.length ? p.diff.members.map((m) => m.member + " (" + m.change + ")").join(", ") : "—"
    );
    card.append(dl);

    const findings = el("ul", "findings");
    for (const f of p.findings) findings.append(el("li", "finding", f));
    if (p.findings.length) card.append(el("p", "bad", "Findings in its text:"), findings);

    const diff = el("pre", "diff");
    for (const line of p.diff.lines) {
      const cls = line.op === "+" ? "d-add" : line.op === "-" ? "d-del" : "d-same";
      diff.append(el("span", cls, line.op + " " + line.text + "\n"));
    }
    card.append(diff);

    const noteId = "pin-note-" + p.id;
    const label = el("label", "", "Note (recorded in the audit log)");
    label.htmlFor = noteId;
    const note = el("textarea", "note");
    note.id = noteId;
    note.rows = 2;
    note.maxLength = 1000;
    card.append(label, note);

    const actions = el("div", "actions");
    const approve = el("button", "approve", "Approve definition");
    approve.type = "button";
    const reject = el("button", "deny", "Reject definition");
    reject.type = "button";
    approve.addEventListener("click", () => decidePin(p.id, "approve", note, [approve, reject]));
    reject.addEventListener("click", () => decidePin(p.id, "reject", note, [approve, reject]));
    actions.append(approve, reject);
    card.append(actions);
    return card;
  }

  async function decidePin(id, action, note, buttons) {
    buttons.forEach((b) => (b.disabled = true));
    try {
      const p = await api("POST", "/ui/api/pins/" + encodeURIComponent(id) + "/" + action, {
        note: note.value,
      });
      setStatus("Pin #" + p.id + " of " + visible(p.tool) + " " + p.state + " by " + p.decided_by + ".");
      await refresh();
    } catch (e) {
      setStatus("Could not " + action + " pin #" + id + ": " + e.message, true);
      buttons.forEach((b) => (b.disabled = false));
    }
  }

  function renderPins(list) {
    const box = $("pins");
    const keep = new Map();
    for (const card of Array.from(box.children)) keep.set(card.dataset.pinId, card);
    const wanted = new Set(list.map((p) => p.id));
    for (const [id, card] of keep) {
      if (!wanted.has(id)) card.remove();
    }
    for (const p of list) {
      if (!keep.has(p.id)) box.append(pinCard(p));
    }
    $("pins-count").textContent = "(" + list.length + ")";
    $("no-pins").hidden = list.length > 0;
  }

  function renderAudit(records) {
    const rows = records.map((r) => {
      const tr = el("tr");
      const verdict = el("td", "v-" + r.verdict, r.verdict);
      tr.append(
        el("td", "", r.seq),
        el("td", "", time(r.time)),
        verdict,
        el("td", "", r.user),
        el("td", "", r.session),
        el("td", "", r.tool),
        el("td", "", r.reasons.join(", ")),
        el("td", "", r.approval),
        el("td", "", r.actor),
        el("td", "", r.note)
      );
      return tr;
    });
    $("audit-rows").replaceChildren(...rows);
  }

  $("login-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const input = $("token");
    const token = input.value;
    input.value = "";
    try {
      const me = await api("POST", "/ui/login", { token });
      csrf = me.csrf;
      $("login-error").textContent = "";
      setStatus("Logged in as " + me.actor + ".");
      await refresh();
    } catch (e) {
      $("login-error").textContent = "Log in failed: " + e.message;
    }
  });

  $("approval-search").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const value = $("search-value").value;
    search = value === "" ? null : { field: $("search-field").value, value };
    await refresh();
  });

  $("search-clear").addEventListener("click", async () => {
    $("search-value").value = "";
    search = null;
    await refresh();
  });

  $("logout").addEventListener("click", async () => {
    try {
      await api("POST", "/ui/logout");
    } catch (_) {
      // The session is gone either way.
    }
    showLogin("Logged out.");
  });

  $("kill-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    try {
      const k = await api("POST", "/ui/api/kill", {
        mode: $("kill-select").value,
        reason: $("kill-reason").value,
      });
      setStatus("Kill switch set to " + k.mode + ".");
      $("kill-reason").value = "";
      await refresh();
    } catch (e) {
      setStatus("Could not set the kill switch: " + e.message, true);
    }
  });

  // A session cookie from earlier may still be valid.
  api("GET", "/ui/api/me").then(
    (who) => (who.me === null ? showLogin("") : refresh()),
    (e) => showLogin("The service did not answer: " + e.message)
  );
})();
