// Integrations (issue 37, API.md 8): the school's OneRoster integration clients, listed,
// created (the secret is shown once, with a copy button) and revoked after a
// confirmation; the addresses to paste into Google Classroom or another LMS; the
// school's OneRoster CSV zip.
import { h, dialog, listView, query, date, checkbox } from "/app/shared.js";
import { ctx, api } from "/app/resources.js";

const SCOPE_BASE = "https://purl.imsglobal.org/spec/or/v1p2/scope/";
/** The six OneRoster 1.2 scopes a client may hold, with what each opens. */
const SCOPES = [
  ["roster-core.readonly", "Rostering: core reads"],
  ["roster.readonly", "Rostering: every read"],
  ["roster-demographics.readonly", "Rostering: demographics"],
  ["gradebook.readonly", "Gradebook: reads"],
  ["gradebook.createput", "Gradebook: create and change"],
  ["gradebook.delete", "Gradebook: delete"],
];
const short = (uri) => uri.replace(SCOPE_BASE, "");

export const canSeeIntegrations = (me) => me.can("view", "oauthclient");

/** Copies `value`; says so (or how to copy by hand) in `status`. */
async function copy(value, input, status) {
  try {
    await navigator.clipboard.writeText(value);
    status.textContent = "Copied.";
  } catch (err) {
    // No clipboard permission: select the text so that Ctrl+C copies it.
    input.focus();
    input.select();
    status.textContent = "Selected: press Ctrl+C to copy.";
  }
}

/** A read-only value with a copy button: `label` names both. */
function copyable(label, value, name) {
  const input = h("input", { readonly: true, value, name, id: `copy-${name}`, class: "copy-value" });
  const status = h("span", { class: "muted", role: "status" });
  return h("div", { class: "copy-row", "data-copy": name },
    h("label", { class: "copy-label", for: `copy-${name}`, text: label }),
    h("div", { class: "copy-line" }, input,
      h("button", { type: "button", class: "secondary small", text: "Copy", "aria-label": `Copy ${label.toLowerCase()}`, onclick: () => copy(value, input, status) }),
      status));
}

/** The school's OneRoster CSV zip, fetched with the session's token and saved as a file. */
async function download(status) {
  status.textContent = "Preparing the zip…";
  const answer = await fetch(api("/oneroster/export/"), {
    headers: { Authorization: `Bearer ${ctx.client.session.access}` }, credentials: "omit", cache: "no-store",
  });
  if (!answer.ok) {
    status.textContent = `The export failed (${answer.status}).`;
    return;
  }
  const blob = await answer.blob();
  const link = h("a", { href: URL.createObjectURL(blob), download: "oneroster.zip" });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10000);
  status.textContent = `Downloaded oneroster.zip (${Math.ceil(blob.size / 1024)} KiB).`;
}

function connectCard() {
  const origin = location.origin;
  const status = h("span", { class: "muted", role: "status" });
  return h("section", { class: "card connect" },
    h("h2", { text: "Connect an LMS (OneRoster 1.2)" }),
    h("p", { class: "muted", text: "Google Classroom, Microsoft School Data Sync and other tools read this school's classes, teachers and students, and send marks back, through OneRoster 1.2. Create a client below, then paste these addresses with its client ID and secret into the tool." }),
    copyable("OneRoster base URL", `${origin}/ims/oneroster`, "base_url"),
    copyable("Token URL", `${origin}/api/v1/school/oauth/token/`, "token_url"),
    h("div", { class: "sheet-actions" },
      h("button", { type: "button", class: "secondary", text: "Download OneRoster CSV (zip)", onclick: () => download(status).catch((err) => { status.textContent = err.message; }) }),
      status));
}

/** The secret of a new client, shown this once. */
function secretCard(created) {
  return h("section", { class: "card once", "data-client": created.client_id },
    h("h2", { text: `Client "${created.name}" created` }),
    h("p", { class: "notice", role: "note", text: "Copy the secret now: it is shown only this once. If it is lost, revoke the client and create another." }),
    copyable("Client ID", created.client_id, "client_id"),
    copyable("Client secret", created.client_secret, "client_secret"));
}

export function integrationsPage() {
  const { client, me } = ctx;
  const path = api("/oauth-clients/");
  const secretSlot = h("div", {});
  const create = (refresh, controls) => (me.can("add", "oauthclient")
    ? h("div", { class: "toolbar" }, h("button", {
      type: "button", text: "New integration client",
      onclick: () => dialog("New integration client", [
        h("label", { "data-field": "name" }, "Name (e.g. Google Classroom)", h("input", { name: "name", maxlength: 100, required: true, autocomplete: "off" }),
          h("span", { class: "field-error", "data-error-for": "name", hidden: true })),
        h("fieldset", { "data-field": "scopes" }, h("legend", { text: "Scopes" }),
          SCOPES.map(([scope, text]) => checkbox(`${text} (${scope})`, "scope", { value: scope, checked: true })),
          h("span", { class: "field-error", "data-error-for": "scopes", hidden: true })),
      ], async (form) => {
        const scopes = [...form.querySelectorAll("input[name=scope]:checked")].map((input) => SCOPE_BASE + input.value);
        const name = form.querySelector("input[name=name]").value.trim();
        const created = await client.request("POST", path, { name, scopes });
        secretSlot.replaceChildren(secretCard(created));
        await controls.created(`Created "${created.name}".`);
      }, "Create"),
    })) : null);
  const columns = ["Name", "Client ID", "Scopes", "Last used", "Status", ""];
  const row = (c, refresh) => h("tr", { "data-name": c.name, "data-client": c.client_id },
    h("td", { text: c.name }),
    h("td", {}, h("code", { text: c.client_id })),
    h("td", { text: c.scopes.map(short).join(", ") }),
    h("td", { text: c.last_used_at ? date(c.last_used_at) : "never" }),
    h("td", { text: c.revoked_at ? `revoked ${date(c.revoked_at)}` : "active" }),
    h("td", {}, !c.revoked_at && me.can("delete", "oauthclient")
      ? h("button", {
        type: "button", class: "danger small", text: "Revoke", "aria-label": `Revoke ${c.name}`,
        onclick: () => dialog("Revoke integration client", [h("p", { text: `Revoke "${c.name}"? Its tokens stop working at once; the tool it connects can no longer read or write this school's data.` })],
          async () => { await client.request("DELETE", `${path}${c.id}/`); await refresh(); }, "Revoke", true),
      }) : null));
  const list = listView({
    title: "Integration clients", columns, row, create, searchable: false,
    load: (page) => client.request("GET", path + query(page, "")),
  });
  return h("div", { class: "integrations" }, h("h1", { text: "Integrations" }), connectCard(), secretSlot, list.view);
}
