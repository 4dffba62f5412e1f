// A student's own page, phone first: `#/me` (their home too) shows their attendance this
// school year and their marks by term with grades (each term's report card, graded on
// the school's current scale by the server); `#/me/<session>/<exam session>` one term's
// card with its PDF. Everything is the student's own: the record `/auth/me/` links to
// their account, and the server answers a student only their own card and summary.
import { h } from "/app/shared.js";
import { ctx, api, crumbs } from "/app/resources.js";
import { isGuardian } from "/app/family.js";
import { cardView, examSessionTitle, percent, termsOfSessions } from "/app/report_cards.js";
import { isoDay } from "/app/registers.js";

/** A student: an account linked to a student record, or holding the `student` role, that
 *  cannot browse the school's students. */
export const isStudent = (m) => Boolean(m.student || m.roles.includes("student")) && !m.can("view", "student") && !isGuardian(m);

/** `#/me[/<session>/<exam session>]`. */
export function studentPage(args = []) {
  const [sid, esid] = args;
  if (!ctx.me.student) {
    return h("section", { class: "card student-page" }, h("h1", { text: "My page" }),
      h("p", { text: "Your account is not linked to a student record yet. Please ask the school office to link it." }));
  }
  if (sid && esid) return termCardPage(sid, esid);
  return ownPage();
}

const cardPath = (sid, esid) => api(`/sessions/${sid}/exam-sessions/${esid}/report-cards/${ctx.me.student.id}/`);

function ownPage() {
  const me = ctx.me.student;
  const attendance = h("p", { class: "attendance", text: "Attendance: loading…" });
  const classLine = h("span", { class: "class-name" });
  const terms = h("div", { class: "my-terms", "aria-busy": "true" }, h("p", { class: "muted", text: "Loading your marks…" }));
  const view = h("section", { class: "student-page" },
    h("h1", { text: `${me.first_name} ${me.last_name}` }),
    h("p", { class: "muted" }, `Admission number ${me.admission_number}`, classLine),
    h("section", { class: "card" }, h("h2", { text: "My attendance" }), attendance),
    h("h2", { text: "My marks by term" }), terms);
  if (me.academic_class) {
    ctx.client.request("GET", api(`/classes/${me.academic_class}/`))
      .then((c) => { classLine.textContent = ` · Class ${c.name}`; }).catch(() => {});
  }
  view.ready = (async () => {
    const list = await termsOfSessions();
    const active = list.find((t) => t.session.is_active);
    showAttendance(attendance, active ? active.session : null);
    // Each term's card, in parallel; a term without a card of theirs is left out.
    const cards = await Promise.all(list.map(({ session, term }) => ctx.client.request("GET", cardPath(session.id, term.id))
      .then((card) => ({ session, term, card })).catch(() => null)));
    const shown = cards.filter((c) => c && c.card.subjects.some((s) => s.mark !== null));
    terms.replaceChildren(...(shown.length ? shown.map(termBlock) : [h("p", { class: "muted", text: "No marks have been published yet." })]));
  })().catch((problem) => {
    terms.replaceChildren(h("p", { class: "form-error", role: "alert", text: problem.message || "Your marks could not be loaded." }));
  }).finally(() => terms.removeAttribute("aria-busy"));
  return view;
}

/** This school year's days (the active session's, up to today), or every recorded day. */
function showAttendance(line, session) {
  const today = isoDay(new Date());
  const range = session ? `?date_from=${String(session.start_date).slice(0, 10)}&date_to=${today}` : "";
  ctx.client.request("GET", api(`/students/${ctx.me.student.id}/attendance-summary/${range}`)).then((s) => {
    line.textContent = s.days
      ? `${session ? `${session.name}: ` : ""}present ${s.present + s.late} of ${s.days} ${s.days === 1 ? "day" : "days"} (${percent(s.attendance_rate * 100)}); late ${s.late}, absent ${s.absent}, excused ${s.excused}.`
      : "No days recorded yet.";
  }).catch(() => { line.textContent = "Attendance: not available."; });
}

function termBlock({ session, term, card }) {
  const rows = card.subjects.map((s) => h("tr", {},
    h("td", { "data-label": "Subject", class: "subject", text: s.name }),
    h("td", { "data-label": "Mark", class: "mark", text: s.mark === null ? "missing" : `${s.mark} / ${s.max_mark}` }),
    h("td", { "data-label": "Grade", class: "grade", text: s.grade || "–" })));
  return h("article", { class: "card term-block", "data-exam-session": term.id },
    h("h3", { text: examSessionTitle(term) }),
    h("p", { class: "muted", text: `${session.name}. Overall ${percent(card.percentage)}${card.grade ? `, grade ${card.grade}` : ""}${card.position ? `, position ${card.position} of ${card.class_size}` : ""}.` }),
    h("table", { class: "card-table subjects my-marks" },
      h("thead", {}, h("tr", {}, ["Subject", "Mark", "Grade"].map((t) => h("th", { text: t })))),
      h("tbody", {}, rows)),
    h("p", {}, h("a", { class: "button", href: `#/me/${session.id}/${term.id}`, text: "My report card" })));
}

function termCardPage(sid, esid) {
  const path = cardPath(sid, esid);
  const body = h("div", { "aria-busy": "true" }, h("p", { class: "muted", text: "Loading…" }));
  const view = h("section", { class: "student-page report-card" },
    crumbs(["My page", "#/me"]), h("h1", { text: "My report card" }), body);
  view.ready = ctx.client.request("GET", path)
    .then((card) => body.replaceChildren(...cardView(card, path)))
    .catch((problem) => body.replaceChildren(h("p", { class: "form-error", role: "alert", text: problem.message || "The report card could not be loaded." })))
    .finally(() => body.removeAttribute("aria-busy"));
  return view;
}
