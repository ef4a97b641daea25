// The sendledger local console: a view over the JSON the local gateway already serves.
// No framework and no build step; every value from the API goes into the page as text, and a
// mail's HTML only into a sandboxed frame where no script runs.
"use strict";

(() => {
  const REFRESH_MS = 2000;
  const OUTBOX_SHOWN = 100;
  const view = document.getElementById("view");
  const statusLine = document.getElementById("status");
  let page = null; // {refresh: async () => void}
  let timer = null;
  let generation = 0; // bumps on every route change; a stale refresh drops its result
  let inFlight = false;
  let again = false;

  // --- helpers -------------------------------------------------------------------------------
  function el(tag, attrs = {}, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs)) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "text") node.textContent = String(value);
      else if (name === "class") node.className = value;
      else if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
      else node.setAttribute(name, value === true ? "" : String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  class Problem extends Error {
    constructor(status, document) {
      super((document && (document.detail || document.title)) || `HTTP ${status}`);
      this.status = status;
    }
  }

  async function request(method, url, body) {
    const init = { method, headers: { Accept: "application/json" } };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(url, init);
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : null;
    if (!response.ok) throw new Problem(response.status, parsed);
    return parsed;
  }
  const getJson = (url) => request("GET", url);

  function badge(state) {
    return el("span", { class: `badge ${state || "none"}`, "data-state": state || "", text: state || "—" });
  }

  function when(iso) {
    if (!iso) return "—";
    const at = new Date(iso);
    return Number.isNaN(at.getTime()) ? iso : at.toLocaleString();
  }

  function age(iso) {
    const seconds = Math.max(0, Math.round((Date.now() - new Date(iso).getTime()) / 1000));
    if (!Number.isFinite(seconds)) return "";
    if (seconds < 90) return `${seconds} s ago`;
    if (seconds < 5400) return `${Math.round(seconds / 60)} min ago`;
    return `${Math.round(seconds / 3600)} h ago`;
  }

  function fields(pairs) {
    return el("dl", { class: "fields" }, pairs.map(([name, value]) => [el("dt", { text: name }), el("dd", {}, value ?? "—")]));
  }

  function say(text, isError = false) {
    statusLine.textContent = text;
    statusLine.className = isError ? "error" : "muted";
  }

  // Links in a mail (a reset link is the developer's own): http(s) only, opened in a new tab.
  const URL_PATTERN = /https?:\/\/[^\s"'<>]+/g;
  function linksOf(entry) {
    const found = new Set((entry.text || "").match(URL_PATTERN) || []);
    if (entry.html) {
      const parsed = new DOMParser().parseFromString(entry.html, "text/html"); // inert: nothing runs
      for (const anchor of parsed.querySelectorAll("a[href]")) {
        const href = anchor.getAttribute("href");
        if (/^https?:\/\//i.test(href)) found.add(href);
      }
    }
    return [...found];
  }

  function link(href) {
    return el("a", { href, target: "_blank", rel: "noopener noreferrer", class: "mail-link", text: href });
  }

  function linkified(text) {
    const parts = [];
    let last = 0;
    for (const match of text.matchAll(URL_PATTERN)) {
      parts.push(text.slice(last, match.index), link(match[0]));
      last = match.index + match[0].length;
    }
    parts.push(text.slice(last));
    return parts;
  }

  // Re-render a region only when its data changed: no flicker, and a field being typed in survives.
  function replaceIfChanged(container, data, render) {
    const key = JSON.stringify(data);
    if (container.dataset.key === key) return;
    if (container.contains(document.activeElement) && document.activeElement.tagName === "INPUT") return;
    container.dataset.key = key;
    container.replaceChildren(...[render(data)].flat());
  }

  async function outboxNewestFirst() {
    const outbox = await getJson("/local/outbox");
    return outbox.map((entry, index) => ({ ...entry, index })).reverse();
  }

  const entryKey = (entry) => entry.provider_message_id || String(entry.index);

  // --- pages ---------------------------------------------------------------------------------
  function outboxPage() {
    const body = el("div", { id: "outbox" });
    view.replaceChildren(el("h2", { text: "Outbox" }), body);
    return {
      async refresh() {
        const entries = (await outboxNewestFirst()).slice(0, OUTBOX_SHOWN);
        const ids = [...new Set(entries.map((e) => e.message_id).filter(Boolean))];
        const views = ids.length ? await getJson(`/local/messages?ids=${encodeURIComponent(ids.join(","))}`) : [];
        const states = Object.fromEntries(views.map((v) => [v.message_id, v.state]));
        replaceIfChanged(body, { entries, states }, () => {
          if (!entries.length) return el("p", { class: "empty", text: "No mail or SMS sent yet. Send one with the API." });
          return el(
            "table",
            {},
            el("thead", {}, el("tr", {}, ["Time", "Channel", "To", "Subject", "State"].map((h) => el("th", { text: h })))),
            el(
              "tbody",
              {},
              entries.map((entry) => {
                const target = `#/mail/${encodeURIComponent(entryKey(entry))}`;
                return el(
                  "tr",
                  { class: "row", "data-message-id": entry.message_id || "", onclick: () => (location.hash = target) },
                  el("td", { title: entry.sent_at, text: when(entry.sent_at) }),
                  el("td", { text: entry.channel }),
                  el("td", { text: entry.to }),
                  el("td", {}, el("a", { href: target, text: entry.subject || (entry.text || "").slice(0, 60) || "—" })),
                  el("td", {}, badge(states[entry.message_id] || (entry.message_id ? "" : "sent"))),
                );
              }),
            ),
          );
        });
      },
    };
  }

  function evidenceLine(entry) {
    const shown = [];
    const first = ["decision", "eligibility", "suppression_version", "provider", "provider_message_id", "event_age_seconds", "reason"];
    const rest = Object.keys(entry).filter((k) => !["at", "type", "state"].includes(k) && !first.includes(k)).sort();
    for (const key of [...first, ...rest]) {
      if (!(key in entry) || entry[key] === null || entry[key] === undefined) continue;
      const value = typeof entry[key] === "object" ? JSON.stringify(entry[key]) : String(entry[key]);
      shown.push(el("span", { class: `ev ev-${key}` }, el("b", { text: key }), `: ${value}`, "  "));
    }
    return el("div", { class: "evidence" }, shown);
  }

  function timeline(history) {
    if (!history || !history.length) return el("p", { class: "muted", text: "No history." });
    return el(
      "ol",
      { class: "timeline", id: "history" },
      history.map((entry) =>
        el(
          "li",
          { "data-type": entry.type },
          el("div", {}, el("strong", { text: entry.type }), " ", entry.state ? badge(entry.state) : null, " ",
            el("span", { class: "muted", title: entry.at, text: `${when(entry.at)} (${age(entry.at)})` })),
          evidenceLine(entry),
        ),
      ),
    );
  }

  function mailPage(key) {
    const head = el("div", { class: "card", id: "mail-head" });
    const frame = el("iframe", { class: "mail", id: "mail-html", sandbox: "allow-popups allow-popups-to-escape-sandbox", title: "rendered mail" });
    const bodyCard = el("div", { class: "card" }, el("h2", { text: "Rendered" }), frame);
    const links = el("div", { class: "card", id: "mail-links" });
    const text = el("div", { class: "card", id: "mail-text" });
    const history = el("div", { class: "card", id: "mail-history" });
    view.replaceChildren(
      el("p", {}, el("a", { href: "#/outbox", text: "← Outbox" })),
      el("div", { class: "mail-page" }, el("div", {}, head, bodyCard, links, text), el("div", {}, history)),
    );
    let shownHtml = null;
    return {
      async refresh() {
        const entry = (await outboxNewestFirst()).find((e) => entryKey(e) === key);
        if (!entry) {
          if (head.isConnected) view.replaceChildren(el("p", { class: "empty", text: "No such entry in the outbox (the stack may have restarted)." }));
          return;
        }
        let message = null;
        let missing = "";
        if (entry.message_id) {
          try {
            message = await getJson(`/local/messages/${encodeURIComponent(entry.message_id)}`);
          } catch (error) {
            if (!(error instanceof Problem && error.status === 404)) throw error;
            missing = "The ledger has no message with this id.";
          }
        } else {
          missing = "This outbox entry names no sendledger message_id, so its history cannot be shown.";
        }
        replaceIfChanged(head, { entry: { ...entry, html: null, text: null }, message: message && { ...message, history: null } }, () => [
          el("h2", {}, entry.subject || `${entry.channel} to ${entry.to}`, " ", message ? badge(message.state) : null),
          fields([
            ["from", entry.from || entry.sender],
            ["to", entry.to],
            ["channel", entry.channel],
            ["sent", `${when(entry.sent_at)} (${age(entry.sent_at)})`],
            ["message id", entry.message_id],
            ["provider", entry.provider],
            ["provider message id", entry.provider_message_id],
            ["template", message ? `${message.template.id} v${message.template.version}` : null],
            ["reason", message ? message.reason : null],
          ]),
        ]);
        const html = entry.html || null;
        if (html !== shownHtml) {
          shownHtml = html;
          bodyCard.hidden = !html;
          // Links open outside the frame; the sandbox has no allow-scripts, so nothing in the mail runs.
          frame.srcdoc = html ? `<base target="_blank">${html}` : "";
        }
        const found = linksOf(entry);
        replaceIfChanged(links, found, () => [
          el("h2", { text: "Links" }),
          found.length ? el("ul", {}, found.map((href) => el("li", {}, link(href)))) : el("p", { class: "muted", text: "No links." }),
        ]);
        replaceIfChanged(text, entry.text || "", () => [el("h2", { text: "Text" }), el("pre", { class: "text" }, linkified(entry.text || ""))]);
        replaceIfChanged(history, { history: message && message.history, missing }, () => [
          el("h2", { text: "History (evidence)" }),
          missing ? el("p", { class: "muted", text: missing }) : timeline(message.history),
        ]);
      },
    };
  }

  function adminPath(recipient) {
    return `/v1/admin/suppressions/${encodeURIComponent(recipient)}`;
  }

  async function changeSuppression(recipient, suppress, reason, report) {
    if (!reason.trim()) {
      report("A reason is required.", true);
      return;
    }
    try {
      if (suppress) await request("PUT", adminPath(recipient), { reason });
      else await request("DELETE", `${adminPath(recipient)}?reason=${encodeURIComponent(reason)}`);
      report(`${suppress ? "Suppressed" : "Lifted"} ${recipient}.`);
    } catch (error) {
      report(`Refused: ${error.message}`, true);
    }
  }

  function suppressionsPage() {
    const notice = el("p", { id: "admin-result", class: "muted" });
    const report = (text, isError = false) => {
      notice.textContent = text;
      notice.className = isError ? "error" : "muted";
      refreshNow();
    };
    const recipient = el("input", { name: "recipient", placeholder: "recipient (email or +E.164)", required: true });
    const reason = el("input", { name: "reason", placeholder: "reason (required)", required: true, maxlength: 500 });
    const form = el(
      "form",
      { class: "inline", id: "suppress-form", onsubmit: (event) => {
        event.preventDefault();
        changeSuppression(recipient.value.trim(), true, reason.value, report);
      } },
      recipient, reason, el("button", { type: "submit", text: "Suppress" }),
    );
    const list = el("div", { id: "suppressions" });
    view.replaceChildren(el("h2", { text: "Suppressions" }), form, notice, list);
    return {
      async refresh() {
        const views = await getJson("/local/suppressions");
        views.sort((a, b) => Number(b.suppressed) - Number(a.suppressed) || a.recipient.localeCompare(b.recipient));
        replaceIfChanged(list, views, () => {
          if (!views.length) return el("p", { class: "empty", text: "No recipient known yet." });
          return el(
            "table",
            {},
            el("thead", {}, el("tr", {}, ["Recipient", "State", "Reason", "Version", "Since", "Last change", "Admin"].map((h) => el("th", { text: h })))),
            el(
              "tbody",
              {},
              views.map((v) => {
                const last = (v.history || [])[v.history.length - 1];
                const why = el("input", { name: "reason", placeholder: "reason (required)", maxlength: 500 });
                const act = el("button", {
                  type: "button",
                  class: v.suppressed ? "lift" : "suppress",
                  text: v.suppressed ? "Lift" : "Suppress",
                  onclick: () => changeSuppression(v.recipient, !v.suppressed, why.value, report),
                });
                return el(
                  "tr",
                  { "data-recipient": v.recipient },
                  el("td", { class: "recipient", text: v.recipient }),
                  el("td", { class: "nowrap" }, badge(v.suppressed ? "suppressed" : "sendable")),
                  el("td", { class: "free reason", text: v.reason || "—" }),
                  el("td", { class: "version nowrap", text: v.version }),
                  el("td", { class: "nowrap", text: when(v.since) }),
                  el("td", { class: "free last" }, last ? [el("div", { text: `${last.type} ${age(last.at)}` }), evidenceLine(last)] : "—"),
                  el("td", { class: "admin nowrap" }, why, " ", act),
                );
              }),
            ),
          );
        });
      },
    };
  }

  function rule(countries) {
    if (!countries) return null;
    const [mode, codes] = Object.entries(countries)[0];
    return `${mode} ${codes.join(", ") || "(none)"}`;
  }

  function callersPage() {
    const list = el("div", { id: "callers" });
    view.replaceChildren(
      el("h2", { text: "Callers" }),
      el("p", { class: "muted", text: "Each local caller's SMS rules and today's billed segments (UTC, counted from the ledger's stream). Change them with the admin routes, `sendledger callers set` or SENDLEDGER_LOCAL_CALLER_SETTINGS." }),
      list,
    );
    return {
      async refresh() {
        const views = await getJson("/local/callers");
        replaceIfChanged(list, views, () => {
          if (!views.length) return el("p", { class: "empty", text: "No local caller." });
          return el(
            "table",
            {},
            el("thead", {}, el("tr", {}, ["Caller", "SMS countries", "Daily cap", "Today", "Test mode", "Last change"].map((h) => el("th", { text: h })))),
            el(
              "tbody",
              {},
              views.map((c) => {
                const own = rule(c.sms_countries);
                const fallback = rule(c.sms_default_countries) || "every country";
                const last = (c.history || [])[c.history.length - 1];
                const cap = c.sms_daily_segments;
                const used = cap ? `${c.sms_segments_today} / ${cap}` : `${c.sms_segments_today}`;
                return el(
                  "tr",
                  { "data-caller": c.caller_id },
                  el("td", { class: "nowrap caller", text: c.caller_id }),
                  el("td", { class: "free countries", text: own || `${fallback} (deployment default)` }),
                  el("td", { class: "nowrap cap", text: cap ? `${cap} segments` : "none" }),
                  el("td", { class: "nowrap today" }, cap && c.sms_segments_today >= cap ? badge("cap-reached") : "", " ", used),
                  el("td", { class: "nowrap", text: c.test_mode ? "on" : "off" }),
                  el("td", { class: "free last", text: last ? `${age(last.at)} by ${last.actor}${last.reason ? `: ${last.reason}` : ""}` : "—" }),
                );
              }),
            ),
          );
        });
      },
    };
  }

  function summary(event) {
    const d = event.detail || {};
    if ("message_id" in d) return `${d.message_id}: ${d.previous_state || "—"} → ${d.state}${d.reason ? ` (${d.reason})` : ""}`;
    if ("recipient" in d) return `${d.recipient}: ${d.suppressed ? "suppressed" : "sendable"} v${d.version}${d.reason ? ` (${d.reason})` : ""}`;
    return "";
  }

  function eventsPage() {
    const list = el("div", { id: "events" });
    view.replaceChildren(el("h2", { text: "Event stream" }), list);
    return {
      async refresh() {
        let events;
        try {
          events = await getJson("/local/events");
        } catch (error) {
          if (!(error instanceof Problem && error.status === 404)) throw error;
          replaceIfChanged(list, "absent", () => el("p", { class: "empty", text: "This build has no event stream (/local/events answers 404)." }));
          return;
        }
        const newest = [...events].reverse();
        replaceIfChanged(list, newest, () => {
          if (!newest.length) return el("p", { class: "empty", text: "No events yet." });
          return el(
            "table",
            {},
            el("thead", {}, el("tr", {}, ["Time", "Type", "Change", "Detail"].map((h) => el("th", { text: h })))),
            el("tbody", {}, newest.map((event) => el(
              "tr",
              {},
              el("td", { title: event.time, text: when(event.time) }),
              el("td", { text: event["detail-type"] }),
              el("td", { text: summary(event) }),
              el("td", {}, el("details", {}, el("summary", { text: event.id }), el("pre", { class: "text", text: JSON.stringify(event.detail, null, 2) }))),
            ))),
          );
        });
      },
    };
  }

  // Your templates and the deployment's; a version's preview exactly as a send renders it (its
  // HTML in the sandboxed frame, as a mail's), and for SMS the encoding and billed segments.
  function templatesPage() {
    const list = el("div", { id: "templates" });
    const panel = el("div", { id: "template-preview" });
    view.replaceChildren(el("div", { class: "mail-page" }, el("div", {}, el("h2", { text: "Templates" }), list), panel));
    let chosen = null;

    async function choose(found) {
      chosen = `${found.id}/${found.version}`;
      const version = await getJson(`/v1/templates/${encodeURIComponent(found.id)}/versions/${encodeURIComponent(found.version)}`);
      const params = version.body.params || [];
      const inputs = params.map((name) => el("input", { name: `param-${name}`, "aria-label": name, placeholder: name, value: `{${name}}` }));
      const locale = el("input", { name: "locale", "aria-label": "locale", placeholder: "locale (e.g. fr-CA)" });
      const channel = el("select", { name: "channel", "aria-label": "channel" }, version.channels.map((c) => el("option", { value: c, text: c })));
      const result = el("div", { id: "preview-result" });
      const frame = el("iframe", { class: "mail", id: "preview-html", sandbox: "", title: "rendered preview" });
      async function render(event) {
        if (event) event.preventDefault();
        const values = Object.fromEntries(params.map((name, n) => [name, inputs[n].value]));
        const body = { channel: channel.value, params: values, ...(locale.value ? { locale: locale.value } : {}) };
        try {
          const shown = await request("POST", `/v1/templates/${encodeURIComponent(found.id)}/versions/${encodeURIComponent(found.version)}/preview`, body);
          frame.hidden = !shown.html;
          frame.srcdoc = shown.html || ""; // no allow-scripts: nothing in the template runs
          result.replaceChildren(
            fields([
              ["locale", shown.locale || "default"],
              ["subject", shown.subject],
              ["tracking", String(shown.tracking)],
              ["SMS", shown.sms ? `${shown.sms.encoding}, ${shown.sms.units} units, ${shown.sms.segments} segment(s) billed` : null],
            ]),
            el("pre", { class: "text", id: "preview-text", text: shown.text }),
          );
        } catch (error) {
          result.replaceChildren(el("p", { class: "error", text: error.message }));
        }
      }
      panel.replaceChildren(
        el("div", { class: "card" },
          el("h2", { text: `${found.id} v${found.version} (${found.owner})` }),
          fields([["sha256", version.sha256], ["locales", version.locales.join(", ") || "—"], ["retired", version.retired_at ? when(version.retired_at) : null]]),
          el("form", { class: "inline", id: "preview-form", onsubmit: render }, inputs, locale, channel, el("button", { type: "submit", text: "Preview" })),
          result, frame),
      );
      await render();
    }

    return {
      async refresh() {
        const listed = (await getJson("/v1/templates")).templates;
        replaceIfChanged(list, listed, () => el(
          "table",
          {},
          el("thead", {}, el("tr", {}, ["Id", "Version", "Owner", "Channels", "Locales", "Retired"].map((h) => el("th", { text: h })))),
          el("tbody", {}, listed.map((found) => el(
            "tr",
            { class: "row", "data-template": `${found.id}/${found.version}/${found.owner}`, onclick: () => choose(found).catch((error) => say(error.message, true)) },
            el("td", { text: found.id }),
            el("td", { text: found.version }),
            el("td", {}, el("span", { class: `badge ${found.owner === "caller" ? "accepted" : "none"}`, text: found.owner })),
            el("td", { text: found.channels.join(", ") }),
            el("td", { text: found.locales.join(", ") || "—" }),
            el("td", { text: found.retired_at ? when(found.retired_at) : "" }),
          ))),
        ));
        if (!chosen && !panel.childElementCount) panel.replaceChildren(el("p", { class: "empty", text: "Choose a template to preview it." }));
      },
    };
  }

  // --- routing and refresh -------------------------------------------------------------------
  function route() {
    const hash = location.hash || "#/outbox";
    for (const link of document.querySelectorAll("nav a")) link.classList.toggle("active", hash.startsWith(link.getAttribute("href")));
    if (hash.startsWith("#/mail/")) {
      document.getElementById("nav-outbox").classList.add("active");
      return mailPage(decodeURIComponent(hash.slice("#/mail/".length)));
    }
    if (hash.startsWith("#/suppressions")) return suppressionsPage();
    if (hash.startsWith("#/events")) return eventsPage();
    if (hash.startsWith("#/templates")) return templatesPage();
    if (hash.startsWith("#/callers")) return callersPage();
    return outboxPage();
  }

  // One refresh at a time; one asked for meanwhile runs right after (with the page shown then).
  async function refreshNow() {
    clearTimeout(timer);
    if (inFlight) {
      again = true;
      return;
    }
    inFlight = true;
    const mine = generation;
    try {
      await page.refresh();
      if (mine === generation) say(`updated ${new Date().toLocaleTimeString()}`);
    } catch (error) {
      if (mine === generation) say(`could not refresh: ${error.message}`, true);
    } finally {
      inFlight = false;
    }
    if (again) {
      again = false;
      refreshNow();
      return;
    }
    timer = setTimeout(refreshNow, document.hidden ? REFRESH_MS * 5 : REFRESH_MS);
  }

  function navigate() {
    generation += 1;
    page = route();
    refreshNow();
  }

  document.getElementById("poll-now").addEventListener("click", async () => {
    say("polling…");
    try {
      const result = await request("POST", "/local/poll");
      const flushed = result && result.flush ? Object.entries(result.flush).map(([k, v]) => `${k} ${v}`).join(", ") : "";
      say(`polled${flushed ? `: ${flushed}` : ""}`);
    } catch (error) {
      say(`poll failed: ${error.message}`, true);
    }
    refreshNow();
  });
  document.addEventListener("visibilitychange", () => document.hidden || refreshNow());
  window.addEventListener("hashchange", navigate);
  navigate();
})();
