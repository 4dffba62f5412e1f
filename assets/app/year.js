// The academic year: the home page (the active session's exam sessions), sessions
// (create, activate), a session's exam sessions, and an exam session's exams with "my
// exams" for teachers. Routes: #/, #/sessions, #/sessions/<id>,
// #/sessions/<id>/exam-sessions/<id>, #/sessions/<id>/exam-sessions/<id>/exams/<id>
// (a marks sheet; `?class=<id>` names the exam's class, see marks.js).
import { h, listView, query, day, dialog } from "/app/shared.js";
import { ctx, api, crumbs, editDialog, confirmDelete, loadRefs, named } from "/app/resources.js";
import { marksSheet, prefetchSheet, canReadSheet, rememberExam, gradingScale, sheetHref, remarksPage } from "/app/marks.js";

const SESSION = {
  singular: "session", perm: "academicsession", label: (s) => s.name,
  createWarning: "A new session becomes the school's active session at once: every other session, the current one included, becomes inactive.",
  createLabel: "Create and make active",
  fields: [{ name: "name", label: "Name", type: "text", required: true },
    { name: "start_date", label: "Starts", type: "date", required: true }, { name: "end_date", label: "Ends", type: "date", required: true }],
};
/** An exam session's form, its term picked from the school's terms (academic settings'
 * `terms_per_session`, 3 without settings): "1" to "N", shown as "Term 1"... */
const examSession = (terms) => ({
  singular: "exam session", perm: "examsession", label: (e) => e.name,
  fields: [{ name: "name", label: "Name", type: "text", required: true },
    { name: "term", label: "Term", type: "choice", required: true, options: Array.from({ length: terms }, (_, i) => [String(i + 1), `Term ${i + 1}`]) },
    { name: "start_date", label: "Starts", type: "date" }, { name: "end_date", label: "Ends", type: "date" }],
});

/** The number of terms a school year has (academic settings; 3 when unreadable or unset). */
async function termsPerSession() {
  if (!ctx.me.can("view", "academicsettings")) return 3;
  const answer = await ctx.client.request("GET", api("/academic-settings/?page_size=1")).catch(() => null);
  return (answer && answer.results.length && answer.results[0].terms_per_session) || 3;
}
const EXAM = {
  singular: "exam", perm: "exam", label: (e) => e.name,
  fields: [{ name: "name", label: "Name", type: "text", required: true },
    { name: "subject", label: "Subject", type: "ref", ref: "subjects", required: true },
    { name: "academic_class", label: "Class", type: "ref", ref: "classes", required: true },
    { name: "teacher", label: "Teacher", type: "ref", ref: "teachers" },
    { name: "max_mark", label: "Maximum mark (1-1000)", type: "number", default: 100 }],
};

const sessionsPath = () => api("/sessions/");
const examSessionsPath = (sid) => api(`/sessions/${sid}/exam-sessions/`);
const examsPath = (sid, esid) => api(`/sessions/${sid}/exam-sessions/${esid}/exams/`);

const failed = (wrap) => (problem) => wrap.replaceChildren(h("p", { class: "form-error", role: "alert", text: problem.message }));

/** Home: the active session and its exam sessions, one click from each one's exams. */
export function homePage() {
  const wrap = h("div", {}, h("p", { class: "muted", text: "Loading…" }));
  if (!ctx.me.can("view", "academicsession")) {
    wrap.replaceChildren(h("section", { class: "card" }, h("h1", { text: "Welcome" }), h("p", { text: "Your account has no pages to show here yet." })));
    return wrap;
  }
  (async () => {
    const sessions = await ctx.client.all(sessionsPath());
    const active = sessions.find((s) => s.is_active);
    if (!active) {
      wrap.replaceChildren(h("section", { class: "card" }, h("h1", { text: "No active session" }),
        h("p", {}, "No academic session is active. ", h("a", { href: "#/sessions", text: "Sessions" }), " lets you create or activate one.")));
      return;
    }
    const examSessions = await ctx.client.all(examSessionsPath(active.id));
    const teacher = ctx.me.teacher && ctx.me.can("view", "exam");
    wrap.replaceChildren(h("section", { class: "card" },
      h("h1", { text: `${active.name} (active session)` }),
      h("p", { class: "muted", text: `${day(active.start_date)} to ${day(active.end_date)}.${teacher ? " Pick an exam session for your exams." : ""}` }),
      h("div", { class: "tiles" }, examSessions.map((e) => h("a", { class: "tile", href: `#/sessions/${active.id}/exam-sessions/${e.id}` },
        h("strong", { text: e.name }), h("span", { class: "muted", text: `Term ${e.term}${e.start_date ? ` · from ${day(e.start_date)}` : ""}` })))),
      examSessions.length ? null : h("p", { class: "muted", text: "This session has no exam sessions yet." }),
      h("p", {}, h("a", { href: `#/sessions/${active.id}`, text: "All of this session's exam sessions" }))));
  })().catch(failed(wrap));
  return wrap;
}

/** #/sessions[/...]: the sessions list, or deeper pages by the path. */
export function sessionsPage(args, params) {
  const [sid, , esid, kind, eid] = args;
  if (eid && kind === "remarks") return remarksPage(sid, esid, eid);
  if (eid) return marksSheet(sid, esid, eid, params.get("class"));
  if (esid) return examsPage(sid, esid);
  if (sid) return sessionPage(sid);
  return sessionsList();
}

/** Before `/auth/me/` answers: a marks sheet starts loading at once, when `known` (the
 *  tab's last permissions) let its user read it. */
export function sessionsPrefetch(args, params, known) {
  const [sid, , esid, kind, eid] = args;
  if (eid && kind === "exams" && canReadSheet(known)) prefetchSheet(sid, esid, eid, params.get("class"));
}

function sessionsList() {
  const { me, client } = ctx;
  const path = sessionsPath();
  const canChange = me.can("change", "academicsession");
  let list;
  const toolbar = me.can("add", "academicsession") ? [h("button", { type: "button", text: "New session", onclick: () =>
    editDialog(SESSION, {}, null, path, (made) => list.created(`Session "${made.data.name}" created; it is now the active session.`)) })] : [];
  const row = (s, refresh) => h("tr", { "data-name": s.name },
    h("td", {}, h("a", { href: `#/sessions/${s.id}`, text: s.name })),
    h("td", { text: day(s.start_date) }), h("td", { text: day(s.end_date) }),
    h("td", {}, h("span", { class: `badge ${s.is_active ? "ok" : ""}`, text: s.is_active ? "active" : "inactive" })),
    canChange ? h("td", { class: "row-actions" }, h("div", { class: "actions" },
      s.is_active ? null : h("button", { type: "button", class: "secondary small", text: "Activate", onclick: () =>
        dialog(`Activate ${s.name}`, [h("p", { text: `${s.name} becomes the school's active session; the session active now becomes inactive.` })],
          async () => { await client.request("PATCH", `${path}${s.id}/`, { is_active: true }); await refresh(); }, "Activate") }),
      h("button", { type: "button", class: "secondary small", text: "Edit", onclick: () => editDialog(SESSION, {}, s, path, refresh) }))) : null);
  list = listView({
    title: "Academic sessions", columns: ["Name", "Starts", "Ends", "State", ...(canChange ? [""] : [])], row, toolbar,
    load: (page, search) => client.request("GET", `${path}${query(page, search)}`),
  });
  return list.view;
}

function sessionPage(sid) {
  const { me, client } = ctx;
  const wrap = h("div", {}, h("p", { class: "muted", text: "Loading…" }));
  const path = examSessionsPath(sid);
  Promise.all([client.request("GET", `${sessionsPath()}${sid}/`), termsPerSession()]).then(([session, terms]) => {
    const canChange = me.can("change", "examsession"), canDelete = me.can("delete", "examsession");
    let list;
    const toolbar = me.can("add", "examsession") ? [h("button", { type: "button", text: "New exam session", onclick: () =>
      editDialog(examSession(terms), {}, null, path, (made) => list.created(`Exam session "${made.name}" created.`)) })] : [];
    const row = (e, refresh) => h("tr", { "data-name": e.name },
      h("td", {}, h("a", { href: `#/sessions/${sid}/exam-sessions/${e.id}`, text: e.name })),
      h("td", { text: /^\d+$/.test(e.term) ? `Term ${e.term}` : e.term }), h("td", { text: day(e.start_date) }), h("td", { text: day(e.end_date) }),
      canChange || canDelete ? h("td", { class: "row-actions" }, h("div", { class: "actions" },
        canChange ? h("button", { type: "button", class: "secondary small", text: "Edit", onclick: () => editDialog(examSession(terms), {}, e, path, refresh) }) : null,
        canDelete ? h("button", { type: "button", class: "danger small", text: "Delete", onclick: () => confirmDelete(examSession(terms), e, path, refresh) }) : null)) : null);
    list = listView({
      title: `Exam sessions of ${session.name}`, columns: ["Name", "Term", "Starts", "Ends", ...(canChange || canDelete ? [""] : [])], row, toolbar,
      load: (page, search) => client.request("GET", `${path}${query(page, search)}`),
    });
    wrap.replaceChildren(crumbs(["Sessions", "#/sessions"], [session.name]), list.view);
  }).catch(failed(wrap));
  return wrap;
}

/** An exam session's exams; a teacher sees their own first, and may create them. */
function examsPage(sid, esid) {
  const { me, client } = ctx;
  const wrap = h("div", {}, h("p", { class: "muted", text: "Loading…" }));
  const path = examsPath(sid, esid);
  (async () => {
    const [session, examSession, lookups] = await Promise.all([
      client.request("GET", `${sessionsPath()}${sid}/`),
      client.request("GET", `${examSessionsPath(sid)}${esid}/`),
      loadRefs(["subjects", "classes", "teachers"]),
      me.can("change", "mark") ? gradingScale() : null,
    ]);
    const mine = h("input", { type: "checkbox", checked: !!me.teacher, disabled: !me.teacher });
    const message = h("p", { class: "notice", role: "status", hidden: true });
    const body = h("tbody");
    const remarks = h("p", { class: "remark-links" });
    const canChange = me.can("change", "exam"), canDelete = me.can("delete", "exam");
    async function load() {
      const exams = await client.all(path);
      const shown = mine.checked ? exams.filter((e) => e.teacher === me.teacher.id) : exams;
      body.replaceChildren(...shown.map((e) => {
        rememberExam(e);
        return h("tr", { "data-name": e.name },
          h("td", { "data-label": "Exam" }, h("a", { href: sheetHref(sid, esid, e), text: e.name })),
          h("td", { "data-label": "Subject", text: named(lookups.subjects, e.subject) }),
          h("td", { "data-label": "Class", text: named(lookups.classes, e.academic_class) }),
          h("td", { "data-label": "Teacher", text: named(lookups.teachers, e.teacher) }),
          h("td", { "data-label": "Max mark", text: e.max_mark }),
          canChange || canDelete ? h("td", { class: "row-actions", "data-label": "" }, h("div", { class: "actions" },
            canChange ? h("button", { type: "button", class: "secondary small", text: "Edit", onclick: () => editDialog(EXAM, lookups, e, path, load) }) : null,
            canDelete ? h("button", { type: "button", class: "danger small", text: "Delete", onclick: () => confirmDelete(EXAM, e, path, load) }) : null)) : null);
      }));
      if (!shown.length) body.append(h("tr", {}, h("td", { colspan: 6, class: "muted", text: mine.checked ? "You have no exams here yet." : "No exams yet." })));
      // The class teacher's remarks of each class shown, for the report cards.
      const classes = [...new Set(shown.map((e) => e.academic_class))];
      const links = classes.flatMap((c, i) => [...(i ? [" · "] : []),
        h("a", { href: `#/sessions/${sid}/exam-sessions/${esid}/remarks/${c}`, text: named(lookups.classes, c) })]);
      remarks.replaceChildren(...(me.can("view", "mark") && classes.length ? ["Class teacher's remarks: ", ...links] : []));
    }
    mine.addEventListener("change", load);
    const actions = [];
    if (me.teacher && me.can("add", "exam")) {
      actions.push(h("button", { type: "button", text: "Create my exams", onclick: async (event) => {
        event.currentTarget.disabled = true;
        try {
          const answer = await client.request("POST", `${path}auto-create-teacher-exams/`, {});
          message.textContent = answer.message;
          message.hidden = false;
          await load();
        } catch (problem) { message.textContent = problem.message; message.hidden = false; }
        event.target.disabled = false;
      } }));
    }
    if (me.can("add", "exam")) {
      actions.push(h("button", { type: "button", class: "secondary", text: "New exam", onclick: () =>
        editDialog(EXAM, lookups, null, path, async (made) => { message.textContent = `Exam "${made.name}" created.`; message.hidden = false; await load(); }) }));
    }
    wrap.replaceChildren(crumbs(["Sessions", "#/sessions"], [session.name, `#/sessions/${sid}`], [examSession.name]),
      h("section", { class: "card" },
        h("h1", { text: `${examSession.name}: ${mine.checked ? "my exams" : "exams"}` }),
        h("div", { class: "toolbar" }, me.teacher ? h("label", { class: "inline" }, mine, "Only my exams") : null, actions),
        message,
        h("div", { class: "table-wrap" }, h("table", {},
          h("thead", {}, h("tr", {}, ["Exam", "Subject", "Class", "Teacher", "Max mark", ""].map((c) => h("th", { scope: "col", text: c })))), body)),
        remarks));
    mine.addEventListener("change", () => { wrap.querySelector("h1").textContent = `${examSession.name}: ${mine.checked ? "my exams" : "exams"}`; });
    await load();
  })().catch(failed(wrap));
  return wrap;
}

