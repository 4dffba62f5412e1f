// Webhooks (API.md 9): the school's subscriptions (`#/webhooks`), each with its recent
// deliveries (`#/webhooks/<id>`). A new subscription's secret is shown once, when it is
// made; a delivery can be sent again and a test event sent at any time. What a user may do
// follows their permissions (`view_webhook`, `add_`, `change_`, `delete_`).
import { h, field, dialog, listView, query, date } from "/app/shared.js";
import { ctx, api, crumbs } from "/app/resources.js";

const PATH = "/webhooks/";
const canSeeWebhooks = (me) => me.can("view", "webhook");

/** The nav entry app.js lists. */
export const WEBHOOKS_PAGE = { nav: "Webhooks", visible: canSeeWebhooks, render: webhooksPage };

/** `#/webhooks[/<id>]`. */
export function webhooksPage(args) {
  return args[0] ? subscriptionPage(args[0]) : subscriptionsList();
}

const status = (w) => (w.is_active
  ? h("span", { class: "badge ok", text: "active" })
  : h("span", { class: "badge off", text: "disabled" }));

const types = (w) => (w.event_types.includes("*") ? "every event" : w.event_types.join(", "));

/** "mark.created *" or "mark.created, student.updated" as a list of types. */
function readTypes(raw) {
  const list = raw.split(/[\s,]+/).map((t) => t.trim()).filter(Boolean);
  return list.length ? list : ["*"];
}

function subscriptionsList() {
  const { me, client } = ctx;
  const secret = h("div", { class: "notice secret", role: "status", hidden: true });
  const list = listView({
    title: "Webhooks",
    columns: ["URL", "Events", "Description", "Status", "Created"],
    searchable: false,
    load: (page) => client.request("GET", `${api(PATH)}${query(page, "")}`),
    row: (w) => h("tr", { "data-id": w.id },
      h("td", {}, h("a", { href: `#/webhooks/${w.id}`, text: w.url })),
      h("td", { text: types(w) }),
      h("td", { text: w.description || "—" }),
      h("td", {}, status(w), w.disabled_reason ? h("span", { class: "muted reason", text: ` ${w.disabled_reason}` }) : null),
      h("td", { text: date(w.created_at) })),
    toolbar: me.can("add", "webhook") ? [h("button", { type: "button", text: "New subscription", onclick: () => subscribeDialog(list, secret) })] : [],
  });
  return h("div", {},
    h("p", { class: "muted", text: "Every change to the school's records is an event. A subscription sends the events it names, signed (Standard Webhooks), to a URL of yours; a receiver that fails is retried for days, then the subscription is disabled." }),
    secret, list.view);
}

function subscribeDialog(list, secret) {
  dialog("New subscription", [
    field("URL (https)", "url", { type: "url", required: true, placeholder: "https://example.org/school-events", autocomplete: "off" }),
    field("Event types (space-separated, * for every event)", "event_types", { value: "*", autocomplete: "off", placeholder: "mark.created attendance.created" }),
    field("Description", "description", { autocomplete: "off" }),
  ], async (form) => {
    const value = (name) => form.querySelector(`[name=${name}]`).value.trim();
    const made = await ctx.client.request("POST", api(PATH), {
      url: value("url"), event_types: readTypes(value("event_types")), description: value("description"),
    });
    showSecret(secret, made);
    await list.created(`Subscription to ${made.url} created.`);
  }, "Subscribe");
}

/** The secret, this once, with a way to copy it. */
function showSecret(slot, made) {
  const input = h("input", { readonly: true, value: made.secret, "aria-label": "Signing secret", class: "secret-value", onfocus: (e) => e.target.select() });
  const copied = h("span", { class: "muted", role: "status" });
  slot.replaceChildren(
    h("strong", { text: "The signing secret of the new subscription" }),
    h("p", { text: "Copy it now: it is shown this once. Your receiver checks each delivery's signature with it." }),
    h("div", { class: "toolbar" }, input,
      h("button", { type: "button", class: "secondary small", text: "Copy", onclick: async () => {
        input.select();
        try { await navigator.clipboard.writeText(made.secret); copied.textContent = "Copied."; } catch (err) { copied.textContent = "Select it and copy."; }
      } }), copied));
  slot.hidden = false;
}

function subscriptionPage(id) {
  const { client } = ctx;
  const wrap = h("div", {}, h("p", { class: "muted", text: "Loading…" }));
  const path = `${api(PATH)}${id}/`;
  const render = async () => {
    const w = await client.request("GET", path);
    const attempts = deliveries(w, path);
    wrap.replaceChildren(crumbs(["Webhooks", "#/webhooks"], [w.url]), details(w, path, render, attempts.refresh), attempts.view);
  };
  wrap.ready = render().catch((problem) => wrap.replaceChildren(h("p", { class: "form-error", role: "alert", text: problem.message })));
  return wrap;
}

function details(w, path, render, tested) {
  const { me, client } = ctx;
  const notice = h("p", { class: "notice", role: "status", hidden: true });
  const error = h("p", { class: "form-error", role: "alert", hidden: true });
  const say = (text, failed = false) => {
    notice.hidden = failed; error.hidden = !failed;
    (failed ? error : notice).textContent = text;
  };
  const act = (label, work, cls = "secondary") => h("button", { type: "button", class: cls, text: label, onclick: async (e) => {
    e.target.disabled = true;
    try { await work(); } catch (problem) { say(problem.message, true); } finally { e.target.disabled = false; }
  } });
  const actions = [];
  if (me.can("change", "webhook")) {
    actions.push(act("Send test event", async () => {
      say("Sending a test event…");
      const attempt = await client.request("POST", `${path}test/`, {});
      say(attempt.error ? `Test event not acknowledged: ${attempt.error}` : `Test event acknowledged (${attempt.status_code}).`, Boolean(attempt.error));
      await tested();
    }));
    actions.push(act("Edit", async () => editDialog(w, path, render)));
    actions.push(act(w.is_active ? "Disable" : "Enable", async () => {
      await client.request("PATCH", path, { is_active: !w.is_active });
      await render();
    }));
  }
  if (me.can("delete", "webhook")) {
    actions.push(h("button", { type: "button", class: "danger", text: "Delete", onclick: () =>
      dialog("Delete subscription", [h("p", { text: `Delete the subscription to ${w.url}? Its queued events and deliveries go with it.` })], async () => {
        await client.request("DELETE", path);
        location.hash = "#/webhooks";
      }, "Delete", true) }));
  }
  return h("section", { class: "card webhook" },
    h("h1", { text: "Webhook subscription" }),
    h("dl", { class: "facts" },
      h("dt", { text: "URL" }), h("dd", { text: w.url }),
      h("dt", { text: "Events" }), h("dd", { text: types(w) }),
      h("dt", { text: "Description" }), h("dd", { text: w.description || "—" }),
      h("dt", { text: "Status" }), h("dd", {}, status(w), w.disabled_reason ? h("span", { class: "reason", text: ` ${w.disabled_reason}` }) : null),
      h("dt", { text: "Created" }), h("dd", { text: date(w.created_at) })),
    notice, error, h("div", { class: "actions" }, actions));
}

function editDialog(w, path, render) {
  dialog("Edit subscription", [
    field("URL (https)", "url", { type: "url", value: w.url, required: true, autocomplete: "off" }),
    field("Event types (space-separated, * for every event)", "event_types", { value: w.event_types.join(" "), autocomplete: "off" }),
    field("Description", "description", { value: w.description, autocomplete: "off" }),
  ], async (form) => {
    const value = (name) => form.querySelector(`[name=${name}]`).value.trim();
    await ctx.client.request("PATCH", path, { url: value("url"), event_types: readTypes(value("event_types")), description: value("description") });
    await render();
  });
}

/** The recent attempts, newest first, each with "Send again". */
function deliveries(w, path) {
  const { me, client } = ctx;
  const canResend = me.can("change", "webhook") && w.is_active;
  const outcome = (d) => (d.status_code && d.status_code >= 200 && d.status_code < 300
    ? h("span", { class: "badge ok", text: `${d.status_code}` })
    : h("span", { class: "badge off", text: d.status_code ? `${d.status_code}` : "no answer" }));
  let list;
  const row = (d) => h("tr", { "data-event": d.event },
    h("td", { text: date(d.at) }),
    h("td", {}, h("code", { text: d.event })),
    h("td", { text: String(d.attempt) }),
    h("td", {}, outcome(d)),
    h("td", { text: d.error || "—" }),
    h("td", {}, canResend ? h("button", { type: "button", class: "secondary small", text: "Send again", "aria-label": `Send event ${d.event} again`, onclick: async (e) => {
      e.target.disabled = true;
      const notice = list.view.querySelector(".notice");
      const error = list.view.querySelector(".form-error");
      try {
        const queued = await client.request("POST", `${path}deliveries/${d.event}/retry/`, {});
        error.hidden = true;
        notice.textContent = `Event ${queued.event} queued again (attempt ${queued.attempt}).`;
        notice.hidden = false;
        setTimeout(() => list.refresh(), 1500);
      } catch (problem) {
        notice.hidden = true;
        error.textContent = problem.message;
        error.hidden = false;
      } finally { e.target.disabled = false; }
    } }) : null));
  list = listView({
    title: "Recent deliveries",
    columns: ["When", "Event", "Attempt", "Answer", "Error", ""],
    searchable: false,
    load: (page) => client.request("GET", `${path}deliveries/${query(page, "")}`),
    row,
    toolbar: [h("button", { type: "button", class: "secondary small", text: "Refresh", onclick: () => list.refresh() })],
  });
  // listView's title is an h1; on this page it is a section of the subscription.
  const title = list.view.querySelector("h1");
  title.replaceWith(h("h2", { text: title.textContent }));
  return { view: list.view, refresh: () => list.refresh() };
}
