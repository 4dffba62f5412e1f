// What the platform console and the school app share: DOM helpers, the API client
// (access token in memory, refresh token in sessionStorage, silent refresh on 401), the
// database-down banner, form errors, the dialog and the paged list. Plain DOM, no
// framework, no build step; untrusted text is always set with textContent.
"use strict";

export const $ = (id) => document.getElementById(id);

/** h("tag", {attr: value, onclick: fn}, child, ...): children are nodes or text. */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === false || value === null || value === undefined) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "text") el.textContent = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function field(label, name, attrs = {}) {
  return h("label", { "data-field": name }, label,
    h("input", { name, ...attrs }),
    h("span", { class: "field-error", "data-error-for": name, hidden: true }));
}

export function checkbox(label, name, attrs = {}) {
  return h("label", { class: "inline", "data-field": name },
    h("input", { type: "checkbox", name, ...attrs }), label);
}

/** A labelled select of `options` ([value, text] pairs) with its error slot. */
export function selectField(label, name, options, value, attrs = {}) {
  const select = h("select", { name, ...attrs },
    options.map(([v, text]) => h("option", { value: v, text, selected: String(v) === String(value ?? "") })));
  return h("label", { "data-field": name }, label, select,
    h("span", { class: "field-error", "data-error-for": name, hidden: true }));
}

export function date(value) {
  return value ? new Date(value).toLocaleString() : "—";
}

export function day(value) {
  return value ? String(value).slice(0, 10) : "—";
}

// ---- API ---------------------------------------------------------------------------

export class Problem extends Error {
  constructor(status, body) {
    super((body && body.detail) || `request failed (${status})`);
    this.status = status;
    this.code = body && body.code;
    this.errors = (body && body.errors) || {};
    this.retryAfter = null;
  }
}

/**
 * An API client for one API (`base`: "/api/v1/system" or "/api/v1/school"). `session.access`
 * is the access token (memory only); the refresh token lives in sessionStorage under
 * `refreshKey`. `onSignedOut(message)` runs when a refresh fails; `humane(problem)`, when
 * given, rewrites an error's messages for the people who read them.
 */
export function apiClient({ base, refreshKey, onSignedOut, humane }) {
  const session = { access: null };
  const loginPath = `${base}/auth/login/`;

  async function send(method, path, body) {
    const headers = { Accept: "application/json" };
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (session.access) headers.Authorization = `Bearer ${session.access}`;
    return fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: "omit", cache: "no-store" });
  }

  async function request(method, path, body, retry = true) {
    let res;
    try {
      res = await send(method, path, body);
    } catch (err) {
      unavailable();
      throw new Problem(0, { detail: "The server cannot be reached." });
    }
    if (res.status === 401 && retry && session.access && await refresh()) {
      return request(method, path, body, false);
    }
    const data = res.status === 204 ? null : await res.json().catch(() => null);
    if (res.status === 503) unavailable();
    if (!res.ok) {
      const problem = new Problem(res.status, data);
      problem.retryAfter = res.headers.get("Retry-After");
      if (humane) humane(problem);
      if (res.status === 401 && path !== loginPath) onSignedOut("Your session has ended. Please sign in again.");
      throw problem;
    }
    return data;
  }

  /** Every page of a list (page_size 200), for the short lists pickers need. */
  async function all(path, limit = 1000) {
    const join = path.includes("?") ? "&" : "?";
    let answer = await request("GET", `${path}${join}page_size=200`);
    const results = [...answer.results];
    for (let page = 2; answer.next && results.length < limit; page++) {
      answer = await request("GET", `${path}${join}page_size=200&page=${page}`);
      results.push(...answer.results);
    }
    return results;
  }

  async function refresh() {
    const token = sessionStorage.getItem(refreshKey);
    if (!token) return false;
    try {
      const res = await fetch(`${base}/auth/refresh/`, {
        method: "POST", headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ refresh: token }), credentials: "omit", cache: "no-store",
      });
      if (!res.ok) return false;
      const data = await res.json();
      session.access = data.access;
      if (data.refresh) sessionStorage.setItem(refreshKey, data.refresh);
      return true;
    } catch (err) {
      return false;
    }
  }

  /** Keeps the tokens of a login answer. */
  function signIn(answer) {
    session.access = answer.access;
    sessionStorage.setItem(refreshKey, answer.refresh);
  }

  /** Revokes the refresh token (best effort) and forgets both tokens. */
  async function signOut() {
    const token = sessionStorage.getItem(refreshKey);
    if (token && session.access) await request("POST", `${base}/auth/logout/`, { refresh: token }, false).catch(() => {});
    forget();
  }

  function forget() {
    session.access = null;
    sessionStorage.removeItem(refreshKey);
  }

  return { session, request, all, refresh, signIn, signOut, forget };
}

// ---- The database-down banner ------------------------------------------------------

let recovering = null;
let onRecovered = () => {};

/** What to do once the service answers again (re-render the current view). */
export function whenRecovered(callback) { onRecovered = callback; }

export function unavailable() {
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
        onRecovered();
      }
    } catch (err) { /* still down */ }
  }, 2000);
}

// ---- Sign in ------------------------------------------------------------------------

/** What a failed sign-in says; `own` words a code the app knows better (by code). */
function signInMessage(problem, own) {
  if (own[problem.code]) return own[problem.code];
  switch (problem.code) {
    case "invalid_credentials":
      return "The e-mail, phone or password is wrong, or the account is deactivated.";
    case "throttled":
      return `Too many failed sign-ins. Try again in ${problem.retryAfter || 60} seconds.`;
    case "validation_error":
      return "Enter your e-mail or phone and your password.";
    default:
      // wrong_auth_layer, tenant_mismatch, tenant_inactive: the API's own words.
      return problem.message;
  }
}

/**
 * The sign-in form (`#login-form`): on submit, `signIn(identifier, password)` runs; a
 * problem it throws is shown on the form, worded by `signInMessage` (and `own`).
 */
export function signInForm(signIn, own = {}) {
  const form = $("login-form");
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(form);
    const data = Object.fromEntries(new FormData(form));
    try {
      await signIn(data.identifier.trim(), data.password);
      form.reset();
    } catch (problem) {
      const general = form.querySelector(".form-error");
      general.textContent = signInMessage(problem, own);
      general.hidden = false;
    }
  });
}

/** Hides the signed-in parts (`ids`), shows the sign-in form with `message`, if any. */
export function showSignIn(ids, message) {
  for (const id of ids) $(id).hidden = true;
  $("login-view").hidden = false;
  const error = document.querySelector("#login-form .form-error");
  error.textContent = message || "";
  error.hidden = !message;
  document.querySelector("#login-form input").focus();
}

// ---- Forms and errors --------------------------------------------------------------

export function clearErrors(form) {
  form.querySelectorAll("[data-error-for]").forEach((el) => { el.hidden = true; el.textContent = ""; });
  const general = form.querySelector(".form-error");
  if (general) { general.hidden = true; general.textContent = ""; }
}

/** Shows a problem: field messages next to their fields, the rest as the form's error. */
export function showProblem(form, problem) {
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

/** Opens the page's dialog with `body` nodes; `submit(form)` runs on OK. */
export function dialog(title, body, submit, okLabel = "Save", danger = false) {
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
  const first = form.querySelector("#dialog-body input, #dialog-body select");
  if (first) first.focus();
  return form;
}

// ---- Lists -------------------------------------------------------------------------

export const PAGE_SIZE = 20;

export const query = (page, search, extra = {}) =>
  "?" + new URLSearchParams({ page, page_size: PAGE_SIZE, ...(search ? { search } : {}), ...extra });

/** Names each cell after its column, for the stacked layout at phone width. */
export function labelled(tr, columns) {
  [...tr.children].forEach((td, i) => td.setAttribute("data-label", columns[i] || ""));
  return tr;
}

/**
 * A paged, searchable table. `load(page, search)` answers the API page; `row(item,
 * refresh)` a <tr>. `refresh()` reloads the page shown; `created(text)` says what was
 * created and shows the last page, where a new record (lists are oldest first) appears.
 */
export function listView({ title, columns, row, load, filters = [], create, toolbar = [], searchable = true }) {
  let page = 1;
  const search = h("input", { type: "search", name: "search", placeholder: "Search", "aria-label": `Search ${title.toLowerCase()}` });
  const body = h("tbody");
  const status = h("span", { class: "muted", role: "status" });
  const prev = h("button", { type: "button", class: "secondary small", text: "Previous" });
  const next = h("button", { type: "button", class: "secondary small", text: "Next" });
  const error = h("p", { class: "form-error", role: "alert", hidden: true });
  const notice = h("p", { class: "notice", role: "status", hidden: true });
  let last = 1;
  async function refresh() {
    error.hidden = true;
    try {
      const answer = await load(page, search.value.trim());
      body.replaceChildren(...answer.results.map((item) => labelled(row(item, refresh), columns)));
      if (!answer.results.length) body.append(h("tr", {}, h("td", { colspan: columns.length, class: "muted", text: "Nothing here." })));
      last = Math.max(1, Math.ceil(answer.count / PAGE_SIZE));
      status.textContent = `Page ${page} of ${last} · ${answer.count} in all`;
      prev.disabled = !answer.previous;
      next.disabled = !answer.next;
    } catch (problem) {
      if (problem.code === "invalid_page" && page > 1) { page = 1; return refresh(); }
      error.textContent = problem.message;
      error.hidden = false;
    }
  }
  /** After a create: the notice, the page that holds new records, and the new `record`
   * itself at the top, marked, when the list's order puts it on another page. */
  async function created(text, record) {
    notice.textContent = text;
    notice.hidden = false;
    search.value = "";
    page = 1;
    await refresh();
    if (last > 1) { page = last; await refresh(); }
    if (record && record.id && !body.querySelector(`tr[data-id="${CSS.escape(String(record.id))}"]`)) {
      const tr = labelled(row(record, refresh), columns);
      tr.classList.add("just-created");
      body.querySelectorAll("tr > td.muted[colspan]").forEach((td) => td.parentElement.remove());
      body.prepend(tr);
    }
    const shown = record && record.id && body.querySelector(`tr[data-id="${CSS.escape(String(record.id))}"]`);
    if (shown) { shown.classList.add("just-created"); shown.scrollIntoView({ block: "nearest" }); }
  }
  let timer = null;
  search.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => { page = 1; refresh(); }, 250); });
  filters.forEach((f) => f.addEventListener("change", () => { page = 1; refresh(); }));
  prev.addEventListener("click", () => { page -= 1; refresh(); });
  next.addEventListener("click", () => { page += 1; refresh(); });
  const controls = { refresh, created };
  const view = h("div", {},
    create ? create(refresh, controls) : null,
    h("section", { class: "card" },
      h("h1", { text: title }),
      h("div", { class: "toolbar" },
        searchable ? h("label", {}, "Search", search) : null,
        filters.map((f) => h("label", {}, f.dataset.label, f)), toolbar),
      notice, error,
      h("div", { class: "table-wrap" },
        h("table", {}, h("thead", {}, h("tr", {}, columns.map((c) => h("th", { scope: "col", text: c })))), body)),
      h("div", { class: "pager" }, prev, status, next)));
  refresh();
  return { view, refresh, created };
}
