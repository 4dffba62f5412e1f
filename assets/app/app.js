// The school app: sign-in, the header, navigation and routing. What a user sees follows
// the permissions `/auth/me/` answers (the server stays the authority). The academic
// year: year.js; the marks sheet: marks.js; the other resources: resources.js;
// settings.js; registers, report cards and a student's own page: registers.js,
// report_cards.js, student.js; OneRoster clients: integrations.js; what the console
// shares with it: /app/shared.js.
import { $, h, apiClient, whenRecovered, signInForm, showSignIn } from "/app/shared.js";
import { RESOURCES, resourcePage, setContext, ctx, humaneProblem } from "/app/resources.js";
import { homePage, sessionsPage, sessionsPrefetch } from "/app/year.js";
import { forgetSheets } from "/app/marks.js";
import { settingsPage, canSeeSettings } from "/app/settings.js";
import { familyPage, isGuardian, setFamilyContext } from "/app/family.js";
import { importPage, canImport, newYearPage, canRollOver } from "/app/school_year.js";
import { USERS } from "/app/users.js";
import { registersPage, canSeeRegisters } from "/app/registers.js";
import { reportCardsPage, canSeeReportCards } from "/app/report_cards.js";
import { studentPage, isStudent } from "/app/student.js";
import { integrationsPage, canSeeIntegrations } from "/app/integrations.js";
import { WEBHOOKS_PAGE } from "/app/webhooks.js";

const API = "/api/v1/school";
/** This tab's last `/auth/me/` permissions: which pages may start loading before it answers. */
const PERMISSIONS_KEY = "school-app.permissions";
const client = apiClient({ base: API, refreshKey: "school-app.refresh", onSignedOut: (message) => signedOut(message), humane: humaneProblem });

/** Who is signed in: the `/auth/me/` answer, and a permission test on it. */
const me = {
  user: null, tenant: null, roles: [], permissions: new Set(), teacher: null, student: null,
  can(action, resource) { return this.permissions.has(`${action}_${resource}`); },
};

setContext({ client, me, API });
setFamilyContext({ client, me, API });

/**
 * The pages by the first segment of the route: a nav label, who sees it, what it shows,
 * and what it may start loading before `/auth/me/` answers (`prefetch`).
 */
const PAGES = {
  me: { nav: "My page", visible: isStudent, render: studentPage },
  registers: { nav: "Registers", visible: canSeeRegisters, render: registersPage },
  "report-cards": { nav: "Report cards", visible: canSeeReportCards, render: reportCardsPage },
  sessions: { nav: "Sessions", visible: (m) => m.can("view", "academicsession"), render: sessionsPage, prefetch: sessionsPrefetch },
  ...Object.fromEntries(Object.entries(RESOURCES).map(([key, desc]) =>
    [key, { nav: desc.nav, visible: (m) => m.can("view", desc.perm), render: (args, params) => resourcePage(desc, params) }])),
  users: { nav: USERS.nav, visible: (m) => m.can("view", USERS.perm), render: () => resourcePage(USERS) },
  settings: { nav: "Settings", visible: canSeeSettings, render: settingsPage },
  integrations: { nav: "Integrations", visible: canSeeIntegrations, render: integrationsPage },
  children: { nav: "My children", visible: isGuardian, render: familyPage },
  import: { nav: "Import", visible: canImport, render: importPage },
  "new-year": { nav: "New school year", visible: canRollOver, render: newYearPage },
  webhooks: WEBHOOKS_PAGE,
};
whenRecovered(() => route());

// ---- Sign in and out ---------------------------------------------------------------

async function signIn(identifier, password) {
  client.signIn(await client.request("POST", `${API}/auth/login/`, { identifier, password }));
  await signedIn();
}

async function logout() {
  await client.signOut();
  signedOut();
}

function signedOut(message) {
  client.forget();
  sessionStorage.removeItem(PERMISSIONS_KEY);
  forgetSheets();
  me.user = null;
  me.permissions = new Set();
  showSignIn(["nav", "whoami", "view"], message);
}

/**
 * Loads who is signed in (with the page's own data, when it can start without knowing
 * that), builds the navigation, shows the page, then names the school.
 */
async function signedIn() {
  const { page, args, params } = where();
  // Only what the permissions of this tab's last `/auth/me/` allowed: a page the user may
  // not see would answer 403 (logged by the browser) for nothing.
  const known = sessionStorage.getItem(PERMISSIONS_KEY);
  const granted = known ? new Set(JSON.parse(known)) : null;
  const hint = granted && { can: (action, resource) => granted.has(`${action}_${resource}`) };
  if (page && page.prefetch && hint && page.visible(hint)) page.prefetch(args, params, hint);
  const answer = await client.request("GET", `${API}/auth/me/`);
  Object.assign(me, { user: answer.user, tenant: answer.tenant, roles: answer.roles, teacher: answer.teacher, student: answer.student || null, permissions: new Set(answer.permissions) });
  sessionStorage.setItem(PERMISSIONS_KEY, JSON.stringify(answer.permissions));
  $("login-view").hidden = true;
  buildNav();
  $("nav").hidden = false;
  $("whoami").hidden = false;
  const user = me.user || {};
  const name = `${user.first_name || ""} ${user.last_name || ""}`.trim() || user.email || user.phone || "API key";
  $("whoami-name").textContent = `${name} (${me.roles.join(", ") || "no role"})`;
  $("view").hidden = false;
  const view = route();
  // The page's requests first: the header's name is not what the user came for.
  Promise.resolve(view && view.ready).catch(() => {}).then(schoolName);
}

/** The school's name: its general settings when it has them, else the tenant's name. */
async function schoolName() {
  let name = me.tenant.name;
  if (me.can("view", "generalsettings")) {
    const settings = await client.request("GET", `${API}/general-settings/?page_size=1`).catch(() => null);
    if (settings && settings.results.length && settings.results[0].school_name) name = settings.results[0].school_name;
  }
  $("school-name").textContent = name;
  document.title = name;
}

/** The one page of a role that has one (a guardian's children, a student's own page),
 * which is also their home: `null` for the others. */
const onlyPage = () => (isGuardian(me) ? "children" : isStudent(me) ? "me" : null);

function buildNav() {
  // A guardian or a student has one page, their home too: one link, not two to one page.
  const only = onlyPage();
  const links = only ? [] : [["", "Home"]];
  for (const [key, page] of Object.entries(PAGES)) {
    if (page.visible(me) && (!only || key === only)) links.push([key, page.nav]);
  }
  $("nav").replaceChildren(...links.map(([key, text]) => h("a", { href: `#/${key}`, "data-view": key || "home", text })));
}

// ---- Routing -----------------------------------------------------------------------

/** `#/<page>/<id>/...[?name=value]`: the page named by the first segment, the rest as arguments. */
function where() {
  const [path, search] = location.hash.replace(/^#\/?/, "").split("?");
  const parts = path.split("/").filter(Boolean);
  const key = parts[0] || "";
  return { key, page: PAGES[key], args: parts.slice(1), params: new URLSearchParams(search || "") };
}

/** The address of the page shown, to go back to when leaving it is called off. */
let shown = location.hash;

/** Shows the page the address names, and answers its view. A page with work not saved
 * (`ctx.leaveGuard` answers a question) asks before it is left. */
function route() {
  if (!client.session.access || !me.tenant) return null;
  if (ctx.leaveGuard && location.hash !== shown) {
    const question = ctx.leaveGuard();
    if (question && !window.confirm(question)) {
      history.replaceState(null, "", shown || "#/");
      return null;
    }
  }
  ctx.leaveGuard = null;
  shown = location.hash;
  const { key, page, args, params } = where();
  const active = onlyPage() || (page ? key : "home");
  document.querySelectorAll("#nav a").forEach((a) => {
    if (a.dataset.view === active) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  });
  showCurrentLink();
  const home = isGuardian(me) ? () => familyPage([]) : isStudent(me) ? () => studentPage([]) : homePage;
  // A student sees their own page only (the rest of the school is not theirs to browse).
  const open = page && page.visible(me) && (!isStudent(me) || key === "me");
  const view = open ? page.render(args, params) : home();
  $("view").replaceChildren(view);
  const heading = $("view").querySelector("h1");
  if (heading && document.activeElement === document.body) heading.setAttribute("tabindex", "-1");
  return view;
}

// On a phone the menu is one strip that scrolls sideways, its right edge faded: the page's
// own link is scrolled into the clear part of it (not the window), so it is not left
// under the fade or past the edge when the page was opened from a link or a reload.
function showCurrentLink() {
  const nav = $("nav");
  const current = nav.querySelector('a[aria-current="page"]');
  if (!current || nav.scrollWidth <= nav.clientWidth) return;
  const fade = parseFloat(getComputedStyle(nav).paddingRight) || 0;
  const link = current.getBoundingClientRect(), strip = nav.getBoundingClientRect();
  if (link.left < strip.left || link.right > strip.right - fade) {
    nav.scrollLeft += link.left - strip.left - (strip.width - fade - link.width) / 2;
  }
}

async function start() {
  signInForm(signIn);
  $("logout").addEventListener("click", logout);
  window.addEventListener("hashchange", route);
  if (await client.refresh()) {
    try {
      return await signedIn();
    } catch (problem) { /* fall through to the sign-in form */ }
  }
  signedOut();
}

start();
