// The platform console: plain DOM, no framework, no build step. It talks to the system
// API of this origin only, through the client shared with the school app
// (assets/shared/shared.js): access token in memory, refresh token in sessionStorage.
// Untrusted text is always set with textContent, never as HTML.
import {
  $, h, field, checkbox, date, Problem, apiClient, unavailable, whenRecovered,
  clearErrors, showProblem, dialog, listView, query, signInForm, showSignIn,
} from "/admin/shared.js/";

const API = "/api/v1/system";
const REFRESH_KEY = "school-console.refresh";
const ROLE_NAMES = ["admin", "principal", "office", "teacher", "student"];
const SCHEMA_RULE = /^[a-z][a-z0-9_]{0,62}$/;

const client = apiClient({ base: API, refreshKey: REFRESH_KEY, onSignedOut: (message) => signedOut(message) });
const request = client.request;
const session = { user: null };
whenRecovered(() => route());

// ---- Downloads ---------------------------------------------------------------------

/** Saves the file at `path` (an API download) under the name the server gives it. The
 *  token goes in a header, so the file is fetched here and handed to the browser. */
async function download(path) {
  const get = () => fetch(path, { headers: { Authorization: `Bearer ${client.session.access}` }, credentials: "omit", cache: "no-store" });
  let res;
  try {
    res = await get();
    if (res.status === 401 && await client.refresh()) res = await get();
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


// ---- Sign in and out ---------------------------------------------------------------

/** Signs in a platform administrator; a school's user is refused before anything is kept. */
async function signIn(identifier, password) {
  const answer = await request("POST", `${API}/auth/login/`, { identifier, password });
  if (!answer.user.is_superuser && !answer.user.is_staff) {
    await request("POST", `${API}/auth/logout/`, { refresh: answer.refresh }).catch(() => {});
    throw new Problem(403, { detail: "This account has no platform administration rights." });
  }
  client.signIn(answer);
  session.user = answer.user;
  signedIn();
}

const SIGN_IN_WORDS = {
  wrong_auth_layer: "This account belongs to a school. School staff sign in on their school's own site, not in the platform console.",
};

async function logout() {
  await client.signOut();
  signedOut();
}

function signedOut(message) {
  client.forget();
  session.user = null;
  showSignIn(["nav", "whoami", "view"], message);
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

// ---- School pickers ----------------------------------------------------------------

/** Names of the schools seen so far, for the School columns. */
const schoolNames = new Map();

/**
 * Fills `select` with the schools matching what is typed into the search box it answers
 * (first 50 matches; `/tenants/?search=` looks at names, schema names and domains), so
 * any school can be picked however many there are. `fixed` options come first.
 */
function schoolPicker(select, { none, fixed = [], onLoad = () => {} }) {
  const search = h("input", { type: "search", class: "picker-search", placeholder: "Find a school…", autocomplete: "off", "aria-label": `Find a school (${none})` });
  let latest = 0;
  async function load() {
    const text = search.value.trim();
    const mine = ++latest;
    const answer = await request("GET", `${API}/tenants/${query(1, text, { page_size: 50 })}`);
    // An answer overtaken by a later search (the first list arriving after typing) is dropped.
    if (mine !== latest) return;
    answer.results.forEach((t) => schoolNames.set(t.id, t.name));
    const kept = select.value;
    select.replaceChildren(h("option", { value: "", text: none }),
      ...fixed.map(([value, text]) => h("option", { value, text })),
      ...answer.results.map((t) => h("option", { value: t.id, text: `${t.name} (${t.schema_name})` })));
    const keep = [...select.options].some((o) => o.value === kept && kept);
    const pick = keep ? kept : text && answer.results.length ? answer.results[0].id : "";
    if (select.value !== pick || pick !== kept) {
      select.value = pick;
      select.dispatchEvent(new Event("change"));
    }
    onLoad();
  }
  let timer = null;
  search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => load().catch(() => {}), 250); });
  load().catch(() => {});
  return search;
}

/**
 * A picker as a form field: the search box (named by its own aria-label) and the select,
 * named "School" by a label of its own (a label names only its first control).
 */
function pickerField(name, search, select) {
  // Not wrapped by its label: a wrapped select's name would take in its chosen option.
  select.id = select.id || `picker-${name}`;
  // The caption first, then the search that narrows the list, then the list: read in order.
  return h("div", { class: "picker", "data-field": name }, h("label", { for: select.id, text: "School" }), search, select,
    h("span", { class: "field-error", "data-error-for": name, hidden: true }));
}

// ---- Schools -----------------------------------------------------------------------

function schoolsView() {
  const createForm = (refresh, list) => {
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
        list.created(`School "${data.name.trim()}" (${schema}) created.`);
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
  const filterSearch = schoolPicker(filter, { none: "All users", fixed: [["platform", "Platform users"]] });
  const schoolName = (id) => id ? schoolNames.get(id) || "a school" : "platform";
  const createForm = (refresh, list) => {
    const client = h("select", { name: "client" });
    const clientSearch = schoolPicker(client, { none: "None (platform user)" });
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
        pickerField("client", clientSearch, client)),
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
        list.created(`User ${body.email || body.phone} created.`);
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
      h("td", {}, u.is_superuser ? h("span", { class: "badge", text: "superuser" }) : null, u.is_staff ? h("span", { class: "badge", text: "staff" }) : null,
        u.is_superuser || u.is_staff ? null : h("span", { class: "muted", text: "—" })),
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
    toolbar: [h("label", {}, "Find a school", filterSearch)],
    load: (page, search) => request("GET", `${API}/users/${query(page, search, filter.value ? { client: filter.value } : {})}`),
    create: createForm,
  }).view;
}

// ---- API keys ----------------------------------------------------------------------

function keysView() {
  const schoolName = (id) => id ? schoolNames.get(id) || "a school" : "all schools";
  const createForm = (refresh, list) => {
    const tenant = h("select", { name: "tenant" });
    const tenantSearch = schoolPicker(tenant, { none: "All schools (global key)", onLoad: refresh });
    const shown = h("div", { class: "notice", hidden: true });
    const form = h("form", { class: "card", novalidate: true },
      h("h2", { text: "Create an API key" }),
      shown,
      h("div", { class: "grid" },
        field("Name", "name", { required: true, maxlength: 100 }),
        pickerField("tenant", tenantSearch, tenant),
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
        list.created(`Key "${key.name}" created.`);
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
  if (!client.session.access) return;
  const name = (location.hash.replace(/^#\//, "") || "schools").split("/")[0];
  const view = VIEWS[name] || schoolsView;
  document.querySelectorAll("#nav a").forEach((a) => {
    if (a.dataset.view === name) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  });
  $("view").replaceChildren(view());
}

async function start() {
  signInForm(signIn, SIGN_IN_WORDS);
  $("logout").addEventListener("click", logout);
  window.addEventListener("hashchange", route);
  if (await client.refresh()) {
    try {
      const me = await request("GET", `${API}/auth/me/`);
      session.user = me.user;
      return signedIn();
    } catch (problem) { /* fall through to the sign-in form */ }
  }
  signedOut();
}

document.addEventListener("DOMContentLoaded", start);
