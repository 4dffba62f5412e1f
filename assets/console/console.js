// The platform console: plain DOM, no framework, no build step. It talks to the system
// API of this origin only. The access token lives in memory; the refresh token in
// sessionStorage (this tab only; never localStorage or cookies) so a reload keeps the
// session. Untrusted text is always set with textContent, never as HTML.
"use strict";

const API = "/api/v1/system";
const REFRESH_KEY = "school-console.refresh";
const PAGE_SIZE = 20;
const ROLE_NAMES = ["admin", "principal", "office", "teacher", "student"];
const SCHEMA_RULE = /^[a-z][a-z0-9_]{0,62}$/;

const session = { access: null, user: null };
const $ = (id) => document.getElementById(id);

// ---- DOM helpers -------------------------------------------------------------------

/** h("tag", {attr: value, onclick: fn}, child, ...): children are nodes or text. */
function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === false || value === null || value === undefined) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "text") el.textContent = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

function field(label, name, attrs = {}) {
  return h("label", { "data-field": name }, label,
    h("input", { name, ...attrs }),
    h("span", { class: "field-error", "data-error-for": name, hidden: true }));
}

function checkbox(label, name, attrs = {}) {
  return h("label", { class: "inline", "data-field": name },
    h("input", { type: "checkbox", name, ...attrs }), label);
}

function date(value) {
  return value ? new Date(value).toLocaleString() : "—";
}

// ---- API ---------------------------------------------------------------------------

class Problem extends Error {
  constructor(status, body) {
    super((body && body.detail) || `request failed (${status})`);
    this.status = status;
    this.code = body && body.code;
    this.errors = (body && body.errors) || {};
    this.retryAfter = null;
  }
}

async function request(method, path, body, retry = true) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (session.access) headers.Authorization = `Bearer ${session.access}`;
  let res;
  try {
    res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "omit", cache: "no-store" });
  } catch (err) {
    unavailable();
    throw new Problem(0, { detail: "The server cannot be reached." });
  }
  if (res.status === 401 && retry && session.access && await refreshTokens()) {
    return request(method, path, body, false);
  }
  const data = res.status === 204 ? null : await res.json().catch(() => null);
  if (res.status === 503) unavailable();
  if (!res.ok) {
    const problem = new Problem(res.status, data);
    problem.retryAfter = res.headers.get("Retry-After");
    if (res.status === 401 && path !== `${API}/auth/login/`) signedOut("Your session has ended. Please sign in again.");
    throw problem;
  }
  return data;
}

/** Saves the file at `path` (an API download) under the name the server gives it. The
 *  token goes in a header, so the file is fetched here and handed to the browser. */
async function download(path) {
  const get = () => fetch(path, { headers: { Authorization: `Bearer ${session.access}` }, credentials: "omit", cache: "no-store" });
  let res;
  try {
    res = await get();
    if (res.status === 401 && await refreshTokens()) res = await get();
  } catch (err) {
    unavailable();
    throw new Problem(0, { detail: "The server cannot be reached." });
  }
  if (!res.ok) {
    if (res.status === 503) unavailable();
    throw new Problem(res.status, await res.json().catch(() => null));
  }
  const named = /filename="([^"]+)"/.exec(res.headers.get("Content-Disposition") || "");
  const url = URL.createObjectURL(await res.blob());
  const link = h("a", { href: url, download: named ? named[1] : "school.tar.gz", hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

async function refreshTokens() {
  const refresh = sessionStorage.getItem(REFRESH_KEY);
  if (!refresh) return false;
  try {
    const res = await fetch(`${API}/auth/refresh/`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ refresh }), credentials: "omit", cache: "no-store",
    });
    if (!res.ok) return false;
    const data = await res.json();
    session.access = data.access;
    if (data.refresh) sessionStorage.setItem(REFRESH_KEY, data.refresh);
    return true;
  } catch (err) {
    return false;
  }
}

// ---- The database-down banner ------------------------------------------------------

let recovering = null;

function unavailable() {
  const banner = $("banner");
  banner.textContent = "The service is unavailable (its database does not answer). Retrying…";
  banner.hidden = false;
  if (recovering) return;
  recovering = setInterval(async () => {
    try {
      const res = await fetch("/readyz", { cache: "no-store" });
      if (res.ok) {
        clearInterval(recovering);
        recovering = null;
        banner.hidden = true;
        if (session.access) route();
      }
    } catch (err) { /* still down */ }
  }, 2000);
}

// ---- Forms and errors --------------------------------------------------------------

function clearErrors(form) {
  form.querySelectorAll("[data-error-for]").forEach((el) => { el.hidden = true; el.textContent = ""; });
  const general = form.querySelector(".form-error");
  if (general) { general.hidden = true; general.textContent = ""; }
}

/** Shows a problem: field messages next to their fields, the rest as the form's error. */
function showProblem(form, problem) {
  clearErrors(form);
  const leftover = [];
  for (const [name, messages] of Object.entries(problem.errors || {})) {
    const slot = form.querySelector(`[data-error-for="${CSS.escape(name)}"]`);
    if (slot) { slot.textContent = messages.join(" "); slot.hidden = false; }
    else leftover.push(`${name === "non_field" ? "" : name + ": "}${messages.join(" ")}`);
  }
  const general = form.querySelector(".form-error");
  if (general && (leftover.length || !Object.keys(problem.errors || {}).length)) {
    general.textContent = leftover.length ? leftover.join(" ") : problem.message;
    general.hidden = false;
  }
}

/** Opens the dialog with `body` nodes; `submit(form)` runs on OK; resolves when done. */
function dialog(title, body, submit, okLabel = "Save", danger = false) {
  const dlg = $("dialog"), form = $("dialog-form");
  $("dialog-title").textContent = title;
  $("dialog-body").replaceChildren(...body);
  const ok = $("dialog-ok");
  ok.textContent = okLabel;
  ok.className = danger ? "danger" : "";
  ok.disabled = false;
  clearErrors(form);
  form.onsubmit = async (event) => {
    event.preventDefault();
    ok.disabled = true;
    try {
      await submit(form);
      dlg.close();
    } catch (problem) {
      showProblem(form, problem);
    } finally {
      ok.disabled = false;
    }
  };
  $("dialog-cancel").onclick = () => dlg.close();
  dlg.showModal();
  const first = form.querySelector("#dialog-body input");
  if (first) first.focus();
  return form;
}

// ---- Sign in and out ---------------------------------------------------------------

function loginMessage(problem) {
  switch (problem.code) {
    case "wrong_auth_layer":
      return "This account belongs to a school. School staff sign in on their school's own site, not in the platform console.";
    case "invalid_credentials":
      return "The e-mail, phone or password is wrong, or the account is deactivated.";
    case "throttled":
      return `Too many failed sign-ins. Try again in ${problem.retryAfter || 60} seconds.`;
    case "validation_error":
      return "Enter your e-mail or phone and your password.";
    default:
      return problem.message;
  }
}

async function login(event) {
  event.preventDefault();
  const form = event.target;
  clearErrors(form);
  const data = Object.fromEntries(new FormData(form));
  try {
    const answer = await request("POST", `${API}/auth/login/`, data);
    if (!answer.user.is_superuser && !answer.user.is_staff) {
      await request("POST", `${API}/auth/logout/`, { refresh: answer.refresh }).catch(() => {});
      throw new Problem(403, { detail: "This account has no platform administration rights." });
    }
    session.access = answer.access;
    session.user = answer.user;
    sessionStorage.setItem(REFRESH_KEY, answer.refresh);
    form.reset();
    signedIn();
  } catch (problem) {
    const general = form.querySelector(".form-error");
    general.textContent = loginMessage(problem);
    general.hidden = false;
  }
}

async function logout() {
  const refresh = sessionStorage.getItem(REFRESH_KEY);
  if (refresh) await request("POST", `${API}/auth/logout/`, { refresh }).catch(() => {});
  signedOut();
}

function signedOut(message) {
  session.access = null;
  session.user = null;
  sessionStorage.removeItem(REFRESH_KEY);
  $("nav").hidden = true;
  $("whoami").hidden = true;
  $("view").hidden = true;
  $("login-view").hidden = false;
  const error = document.querySelector("#login-form .form-error");
  error.textContent = message || "";
  error.hidden = !message;
  document.querySelector("#login-form input").focus();
}

function signedIn() {
  const user = session.user;
  $("login-view").hidden = true;
  $("nav").hidden = false;
  $("whoami").hidden = false;
  $("whoami-name").textContent = `${user.email || user.phone}${user.is_superuser ? " (superuser)" : " (staff)"}`;
  $("view").hidden = false;
  if (!location.hash) location.hash = "#/schools";
  route();
}

// ---- Lists -------------------------------------------------------------------------

/** A paged, searchable table. `load(page, search)` answers the API page. */
function listView({ title, columns, row, load, filters = [], create }) {
  let page = 1;
  const search = h("input", { type: "search", name: "search", placeholder: "Search", "aria-label": `Search ${title.toLowerCase()}` });
  const body = h("tbody");
  const status = h("span", { class: "muted", role: "status" });
  const prev = h("button", { type: "button", class: "secondary small", text: "Previous" });
  const next = h("button", { type: "button", class: "secondary small", text: "Next" });
  const error = h("p", { class: "form-error", role: "alert", hidden: true });
  async function refresh() {
    error.hidden = true;
    try {
      const answer = await load(page, search.value.trim());
      body.replaceChildren(...answer.results.map((item) => labelled(row(item, refresh), columns)));
      if (!answer.results.length) body.append(h("tr", {}, h("td", { colspan: columns.length, class: "muted", text: "Nothing here." })));
      const pages = Math.max(1, Math.ceil(answer.count / PAGE_SIZE));
      status.textContent = `Page ${page} of ${pages} · ${answer.count} in all`;
      prev.disabled = !answer.previous;
      next.disabled = !answer.next;
    } catch (problem) {
      if (problem.code === "invalid_page" && page > 1) { page = 1; return refresh(); }
      error.textContent = problem.message;
      error.hidden = false;
    }
  }
  let timer = null;
  search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => { page = 1; refresh(); }, 250); });
  filters.forEach((f) => f.addEventListener("change", () => { page = 1; refresh(); }));
  prev.addEventListener("click", () => { page -= 1; refresh(); });
  next.addEventListener("click", () => { page += 1; refresh(); });
  const view = h("div", {},
    create ? create(refresh) : null,
    h("section", { class: "card" },
      h("h1", { text: title }),
      h("div", { class: "toolbar" }, h("label", {}, "Search", search), filters.map((f) => h("label", {}, f.dataset.label, f))),
      error,
      h("div", { class: "table-wrap" },
        h("table", {}, h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", text: c })))), body)),
      h("div", { class: "pager" }, prev, status, next)));
  refresh();
  return { view, refresh };
}

/** Names each cell after its column, for the stacked layout at phone width. */
function labelled(tr, columns) {
  [...tr.children].forEach((td, i) => td.setAttribute("data-label", columns[i] || ""));
  return tr;
}

const query = (page, search, extra = {}) =>
  "?" + new URLSearchParams({ page, page_size: PAGE_SIZE, ...(search ? { search } : {}), ...extra });

async function schoolOptions(select, { none }) {
  const answer = await request("GET", `${API}/tenants/?page_size=200`);
  select.replaceChildren(h("option", { value: "", text: none }),
    ...answer.results.map((t) => h("option", { value: t.id, text: `${t.name} (${t.schema_name})` })));
  return answer.results;
}

// ---- Schools -----------------------------------------------------------------------

function schoolsView() {
  const createForm = (refresh) => {
    const form = h("form", { class: "card", novalidate: true },
      h("h2", { text: "Create a school" }),
      h("div", { class: "grid" },
        field("Schema name", "schema_name", { required: true, pattern: SCHEMA_RULE.source, autocomplete: "off", "aria-describedby": "schema-hint" }),
        field("Name", "name", { required: true, maxlength: 255 }),
        field("Domain", "domains", { placeholder: "greenwood.example.org", autocomplete: "off" })),
      h("p", { id: "schema-hint", class: "muted", text: "Schema name: a lower-case letter, then lower-case letters, digits or _ (at most 63); not public, pg_… or information_schema." }),
      h("p", { class: "form-error", role: "alert", hidden: true }),
      h("button", { type: "submit", text: "Create school" }));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      clearErrors(form);
      const data = Object.fromEntries(new FormData(form));
      const schema = data.schema_name.trim();
      if (!SCHEMA_RULE.test(schema) || schema === "public" || schema.startsWith("pg_") || schema === "information_schema") {
        return showProblem(form, new Problem(400, { errors: { schema_name: ["Use a lower-case letter, then lower-case letters, digits or _; not public, pg_… or information_schema."] } }));
      }
      try {
        await request("POST", `${API}/tenants/`, { schema_name: schema, name: data.name.trim(), domains: data.domains.trim() ? [data.domains.trim()] : [] });
        form.reset();
        refresh();
      } catch (problem) { showProblem(form, problem); }
    });
    return form;
  };
  const row = (t, refresh) => {
    const primary = (t.domains || []).find((d) => d.is_primary);
    const patch = (body) => request("PATCH", `${API}/tenants/${t.id}/`, body).then(refresh);
    return h("tr", { "data-schema": t.schema_name },
      h("td", { text: t.name }),
      h("td", { text: t.schema_name }),
      h("td", { text: primary ? primary.domain : "—" }),
      h("td", {}, h("span", { class: `badge ${t.is_active ? "ok" : "off"}`, text: t.is_active ? "active" : "inactive" })),
      h("td", { text: date(t.created_at) }),
      h("td", {}, h("div", { class: "actions" },
        h("button", { type: "button", class: "secondary small", text: "Rename", onclick: () =>
          dialog(`Rename ${t.schema_name}`, [field("Name", "name", { value: t.name, required: true, maxlength: 255 })],
            (form) => patch({ name: form.elements.name.value.trim() })) }),
        h("button", { type: "button", class: "secondary small", text: t.is_active ? "Deactivate" : "Reactivate", onclick: () =>
          patch({ is_active: !t.is_active }).catch((p) => alert(p.message)) }),
        h("button", { type: "button", class: "secondary small", text: "Domains", onclick: () => domainsDialog(t, refresh) }),
        session.user.is_superuser ? h("button", { type: "button", class: "secondary small", text: "Export", title: "Download the school as an archive (school-service tenant import restores it)", onclick: (event) => exportSchool(t, event.currentTarget) }) : null,
        session.user.is_superuser ? h("button", { type: "button", class: "danger small", text: "Drop…", onclick: () => dropDialog(t, refresh) }) : null)));
  };
  return listView({
    title: "Schools",
    columns: ["Name", "Schema", "Primary domain", "State", "Created", ""],
    row,
    load: (page, search) => request("GET", `${API}/tenants/${query(page, search)}`),
    create: createForm,
  }).view;
}

async function domainsDialog(t, refresh) {
  const list = h("ul", {}, (t.domains || []).map((d) => h("li", {}, d.domain, d.is_primary ? h("span", { class: "badge ok", text: "primary" }) : null)));
  dialog(`Domains of ${t.schema_name}`, [
    list,
    field("Add a domain", "domain", { required: true, autocomplete: "off" }),
    checkbox("Make it the primary domain", "is_primary"),
  ], async (form) => {
    await request("POST", `${API}/tenants/${t.id}/domains/`, { domain: form.elements.domain.value.trim(), is_primary: form.elements.is_primary.checked });
    refresh();
  }, "Add domain");
}

async function exportSchool(t, button) {
  button.disabled = true;
  button.textContent = "Exporting…";
  try {
    await download(`${API}/tenants/${t.id}/export/`);
  } catch (problem) {
    alert(`The export of ${t.schema_name} failed: ${problem.message}`);
  } finally {
    button.disabled = false;
    button.textContent = "Export";
  }
}

function dropDialog(t, refresh) {
  const confirm = field(`Type ${t.schema_name} to confirm`, "confirm", { autocomplete: "off" });
  const form = dialog(`Drop ${t.name}`, [
    h("p", { text: `This deletes the school, its domains and users, and drops the schema "${t.schema_name}" with every record in it. It cannot be undone.` }),
    confirm,
  ], async () => {
    await request("DELETE", `${API}/tenants/${t.id}/?drop_schema=true`);
    refresh();
  }, "Drop school", true);
  const ok = $("dialog-ok");
  ok.disabled = true;
  form.elements.confirm.addEventListener("input", (e) => { ok.disabled = e.target.value !== t.schema_name; });
}

// ---- Users -------------------------------------------------------------------------

function usersView() {
  const filter = h("select", { name: "client", "data-label": "School" });
  let schools = [];
  schoolOptions(filter, { none: "All users" }).then((list) => {
    schools = list;
    filter.insertBefore(h("option", { value: "platform", text: "Platform users" }), filter.children[1]);
  }).catch(() => {});
  const schoolName = (id) => { const s = schools.find((x) => x.id === id); return s ? s.name : id ? "a school" : "platform"; };
  const createForm = (refresh) => {
    const client = h("select", { name: "client" });
    schoolOptions(client, { none: "None (platform user)" }).catch(() => {});
    const roles = h("fieldset", { hidden: true }, h("legend", { text: "Roles in the school" }),
      ROLE_NAMES.map((r) => checkbox(r, "roles", { value: r })),
      h("span", { class: "field-error", "data-error-for": "roles", hidden: true }));
    const staff = checkbox("Platform staff (may use this console)", "is_staff");
    const superuser = session.user.is_superuser ? checkbox("Superuser", "is_superuser") : null;
    client.addEventListener("change", () => {
      roles.hidden = !client.value;
      staff.hidden = !!client.value;
      if (superuser) superuser.hidden = !!client.value;
    });
    const form = h("form", { class: "card", novalidate: true },
      h("h2", { text: "Create a user" }),
      h("div", { class: "grid" },
        field("E-mail", "email", { type: "email", autocomplete: "off" }),
        field("Phone", "phone", { type: "tel", autocomplete: "off" }),
        field("Password", "password", { type: "password", autocomplete: "new-password", required: true }),
        field("First name", "first_name"),
        field("Last name", "last_name"),
        h("label", { "data-field": "client" }, "School", client, h("span", { class: "field-error", "data-error-for": "client", hidden: true }))),
      roles, h("div", {}, staff, superuser),
      h("p", { class: "form-error", role: "alert", hidden: true }),
      h("button", { type: "submit", text: "Create user" }));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      clearErrors(form);
      const f = form.elements;
      const body = {
        email: f.email.value.trim() || null, phone: f.phone.value.trim() || null, password: f.password.value,
        first_name: f.first_name.value.trim(), last_name: f.last_name.value.trim(), client: client.value || null,
      };
      if (client.value) body.roles = [...form.querySelectorAll('input[name="roles"]:checked')].map((i) => i.value);
      else {
        body.is_staff = f.is_staff.checked;
        if (superuser) body.is_superuser = f.is_superuser.checked;
      }
      try {
        await request("POST", `${API}/users/`, body);
        form.reset();
        roles.hidden = true;
        refresh();
      } catch (problem) { showProblem(form, problem); }
    });
    return form;
  };
  const row = (u, refresh) => {
    const patch = (body) => request("PATCH", `${API}/users/${u.id}/`, body).then(refresh);
    const protectedUser = u.is_superuser && !session.user.is_superuser;
    return h("tr", { "data-user": u.email || u.phone },
      h("td", { text: u.email || "—" }),
      h("td", { text: u.phone || "—" }),
      h("td", { text: `${u.first_name} ${u.last_name}`.trim() || "—" }),
      h("td", { text: schoolName(u.client) }),
      h("td", {}, u.is_superuser ? h("span", { class: "badge", text: "superuser" }) : null, u.is_staff ? h("span", { class: "badge", text: "staff" }) : null),
      h("td", {}, h("span", { class: `badge ${u.is_active ? "ok" : "off"}`, text: u.is_active ? "active" : "inactive" })),
      h("td", {}, protectedUser ? h("span", { class: "muted", text: "superusers only" }) : h("div", { class: "actions" },
        h("button", { type: "button", class: "secondary small", text: "Edit", onclick: () =>
          dialog("Edit names", [field("First name", "first_name", { value: u.first_name }), field("Last name", "last_name", { value: u.last_name })],
            (form) => patch({ first_name: form.elements.first_name.value.trim(), last_name: form.elements.last_name.value.trim() })) }),
        h("button", { type: "button", class: "secondary small", text: "Reset password", onclick: () =>
          dialog("Reset password", [field("New password (8-128 characters)", "password", { type: "password", autocomplete: "new-password", required: true })],
            (form) => patch({ password: form.elements.password.value })) }),
        h("button", { type: "button", class: "secondary small", text: u.is_active ? "Deactivate" : "Reactivate", onclick: () =>
          patch({ is_active: !u.is_active }).catch((p) => alert(p.message)) }))));
  };
  return listView({
    title: "Users",
    columns: ["E-mail", "Phone", "Name", "School", "Flags", "State", ""],
    row,
    filters: [filter],
    load: (page, search) => request("GET", `${API}/users/${query(page, search, filter.value ? { client: filter.value } : {})}`),
    create: createForm,
  }).view;
}

// ---- API keys ----------------------------------------------------------------------

function keysView() {
  let schools = [];
  const schoolName = (id) => { const s = schools.find((x) => x.id === id); return id ? (s ? s.name : "a school") : "all schools"; };
  const createForm = (refresh) => {
    const tenant = h("select", { name: "tenant" });
    schoolOptions(tenant, { none: "All schools (global key)" }).then((list) => { schools = list; refresh(); }).catch(() => {});
    const shown = h("div", { class: "notice", hidden: true });
    const form = h("form", { class: "card", novalidate: true },
      h("h2", { text: "Create an API key" }),
      shown,
      h("div", { class: "grid" },
        field("Name", "name", { required: true, maxlength: 100 }),
        h("label", { "data-field": "tenant" }, "School", tenant, h("span", { class: "field-error", "data-error-for": "tenant", hidden: true })),
        field("Expires (optional)", "expires_at", { type: "datetime-local" })),
      checkbox("Read-only (GET only)", "read_only"),
      h("p", { class: "form-error", role: "alert", hidden: true }),
      h("button", { type: "submit", text: "Create key" }));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      clearErrors(form);
      const f = form.elements;
      const body = { name: f.name.value.trim(), tenant: tenant.value || null, read_only: f.read_only.checked };
      if (f.expires_at.value) body.expires_at = new Date(f.expires_at.value).toISOString();
      try {
        const key = await request("POST", `${API}/api-keys/`, body);
        const secret = h("div", { class: "secret", id: "new-key", text: key.key });
        const copy = h("button", { type: "button", class: "secondary small", text: "Copy", onclick: async () => {
          try { await navigator.clipboard.writeText(key.key); copy.textContent = "Copied"; }
          catch (err) { getSelection().selectAllChildren(secret); copy.textContent = "Press Ctrl+C"; }
        } });
        shown.replaceChildren(h("p", { text: `Key "${key.name}" created. Copy it now: it is shown this once.` }), secret, copy);
        shown.hidden = false;
        form.reset();
        refresh();
      } catch (problem) { showProblem(form, problem); }
    });
    return form;
  };
  const row = (k, refresh) => h("tr", { "data-key": k.name },
    h("td", { text: k.name }),
    h("td", { text: k.prefix }),
    h("td", { text: schoolName(k.tenant) }),
    h("td", { text: k.read_only ? "read-only" : "read-write" }),
    h("td", { text: date(k.expires_at) }),
    h("td", { text: date(k.last_used_at) }),
    h("td", {}, k.revoked_at ? h("span", { class: "badge off", text: "revoked" }) : h("span", { class: "badge ok", text: "active" })),
    h("td", {}, k.revoked_at ? null : h("button", { type: "button", class: "danger small", text: "Revoke", onclick: () =>
      dialog(`Revoke "${k.name}"`, [h("p", { text: "Requests with this key will be refused at once." })],
        () => request("DELETE", `${API}/api-keys/${k.id}/`).then(refresh), "Revoke", true) })));
  return listView({
    title: "API keys",
    columns: ["Name", "Prefix", "School", "Access", "Expires", "Last used", "State", ""],
    row,
    load: (page, search) => request("GET", `${API}/api-keys/${query(page, search)}`),
    create: createForm,
  }).view;
}

// ---- Routing -----------------------------------------------------------------------

const VIEWS = { schools: schoolsView, users: usersView, keys: keysView };

function route() {
  if (!session.access) return;
  const name = (location.hash.replace(/^#\//, "") || "schools").split("/")[0];
  const view = VIEWS[name] || schoolsView;
  document.querySelectorAll("#nav a").forEach((a) => {
    if (a.dataset.view === name) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  });
  $("view").replaceChildren(view());
}

async function start() {
  $("login-form").addEventListener("submit", login);
  $("logout").addEventListener("click", logout);
  window.addEventListener("hashchange", route);
  if (await refreshTokens()) {
    try {
      const me = await request("GET", `${API}/auth/me/`);
      session.user = me.user;
      return signedIn();
    } catch (problem) { /* fall through to the sign-in form */ }
  }
  signedOut();
}

document.addEventListener("DOMContentLoaded", start);
