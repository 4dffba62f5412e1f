// Report cards: `#/report-cards` picks an exam session and a class; `#/report-cards/<session>/
// <exam session>/<class>` shows the class's cards (one line per student) with the class's
// PDF (one file, one page per student); `.../<class>/<student>` one card on screen with its
// PDF. For the principal, the office and a class's teachers (the server answers a teacher
// only the classes they teach). The card view and the PDF download serve a student's own
// page too (student.js).
import { h, selectField } from "/app/shared.js";
import { ctx, api, crumbs } from "/app/resources.js";
import { isGuardian } from "/app/family.js";
import { isoDay } from "/app/registers.js";

/** Who sees the page: holders of `view_report_card` and teachers (their classes). */
export const canSeeReportCards = (m) => !isGuardian(m) && Boolean(m.teacher || m.can("view", "report_card"));

/** An exam session as titles read it, as the printed card's title does: "Term 1
 * examinations", with its term unless the name already says it ("Mid-year tests · Term 2"). */
export function examSessionTitle(es) {
  const raw = String(es.term ?? "").trim();
  const term = /^\d+$/.test(raw) ? `Term ${raw}` : raw;
  const name = es.name.trim();
  return !term || name.toLowerCase().includes(term.toLowerCase()) ? name : `${name} · ${term}`;
}

export const percent = (value) => (value === null || value === undefined ? "–" : `${Math.round(value * 10) / 10}%`);
const cardsPath = (sid, esid) => api(`/sessions/${sid}/exam-sessions/${esid}/report-cards/`);
const nameOf = (s) => `${s.first_name} ${s.last_name}`;
const failed = (wrap) => (problem) => wrap.replaceChildren(h("p", { class: "form-error", role: "alert", text: problem.message || "This could not be loaded." }));

/** `#/report-cards[/<session>/<exam session>/<class>[/<student>]]`. */
export function reportCardsPage(args) {
  const [sid, esid, classId, studentId] = args;
  if (sid && esid && classId && studentId) return studentCardPage(sid, esid, classId, studentId);
  if (sid && esid && classId) return classCardsPage(sid, esid, classId);
  return pickerPage(sid, esid);
}

/** The classes the user may ask for: a teacher's own, or every class. */
async function classesFor() {
  const classes = await ctx.client.all(api("/classes/"));
  if (ctx.me.can("view", "report_card") || !ctx.me.teacher) return classes;
  const assignments = await ctx.client.all(api("/teacher-assignments/"), 100000);
  const mine = new Set(assignments.filter((a) => a.teacher === ctx.me.teacher.id).map((a) => a.academic_class));
  return classes.filter((c) => mine.has(c.id));
}

/** Every exam session with its academic session, newest session first. */
export async function termsOfSessions() {
  const sessions = await ctx.client.all(api("/sessions/"));
  sessions.sort((a, b) => (b.is_active - a.is_active) || String(b.start_date).localeCompare(String(a.start_date)));
  const lists = await Promise.all(sessions.map((s) => ctx.client.all(api(`/sessions/${s.id}/exam-sessions/`))));
  return sessions.flatMap((session, i) => lists[i].map((term) => ({ session, term })));
}

/** The exam session a school is in today: the active session's latest one that has begun. */
function current(terms) {
  const today = isoDay(new Date());
  const active = terms.filter((t) => t.session.is_active);
  const begun = active.filter((t) => t.term.start_date && String(t.term.start_date).slice(0, 10) <= today);
  begun.sort((a, b) => String(b.term.start_date).localeCompare(String(a.term.start_date)));
  return begun[0] || active[0] || terms[0];
}

/** The exam session (today's by default) and the classes, each one tap from its cards. */
function pickerPage(sid, esid) {
  const body = h("div", { "aria-busy": "true" }, h("p", { class: "muted", text: "Loading…" }));
  const view = h("section", { class: "report-cards" }, h("h1", { text: "Report cards" }), body);
  view.ready = Promise.all([termsOfSessions(), classesFor()]).then(([terms, classes]) => {
    if (!terms.length) { body.replaceChildren(h("p", { class: "muted", text: "No exam session exists yet." })); return; }
    if (!classes.length) { body.replaceChildren(h("p", { class: "muted", text: "You have no classes to show report cards for." })); return; }
    const chosen = terms.find((t) => t.session.id === sid && t.term.id === esid) || current(terms);
    const termField = selectField("Exam session", "term",
      terms.map(({ session, term }) => [`${session.id}/${term.id}`, `${session.name}: ${term.name}`]),
      `${chosen.session.id}/${chosen.term.id}`);
    const tiles = classes.map((c) => h("a", { class: "tile class-cards", "data-class": c.id },
      h("strong", { text: c.name }), h("span", { class: "muted", text: "Cards on screen and the class's PDF" })));
    const select = termField.querySelector("select");
    const point = () => tiles.forEach((tile) => { tile.href = `#/report-cards/${select.value}/${tile.dataset.class}`; });
    select.addEventListener("change", point);
    point();
    body.replaceChildren(
      h("p", { class: "muted", text: "Pick the exam session, then a class: its cards on screen, and one PDF of the class to print." }),
      h("div", { class: "picker" }, termField),
      h("div", { class: "tiles" }, tiles));
  }).catch(failed(body)).finally(() => body.removeAttribute("aria-busy"));
  return view;
}

function classCardsPage(sid, esid, classId) {
  const path = `${cardsPath(sid, esid)}?academic_class=${classId}`;
  const body = h("div", { "aria-busy": "true" }, h("p", { class: "muted", text: "Loading…" }));
  const title = h("h1", { text: "Report cards" });
  const view = h("section", { class: "report-cards" },
    crumbs(["Report cards", `#/report-cards/${sid}/${esid}`]), title, body);
  view.ready = ctx.client.request("GET", path).then((cards) => {
    const first = cards[0];
    const className = first && first.academic_class ? first.academic_class.name : "this class";
    title.textContent = `Report cards: ${className}`;
    if (!cards.length) { body.replaceChildren(h("p", { class: "muted", text: "This class has no students." })); return; }
    const rows = cards.map((card) => h("tr", { "data-student": card.student.id },
      h("td", { "data-label": "Student" }, h("a", { href: `#/report-cards/${sid}/${esid}/${classId}/${card.student.id}`, text: nameOf(card.student) })),
      h("td", { "data-label": "Admission no.", class: "wide", text: card.student.admission_number }),
      h("td", { "data-label": "Overall", text: percent(card.percentage) }),
      h("td", { "data-label": "Grade", text: card.grade || "–" }),
      h("td", { "data-label": "Position", text: card.position ? `${card.position} of ${card.class_size}` : "–" }),
      h("td", { "data-label": "Marks", class: "wide", text: card.complete ? "complete" : "some missing" })));
    const status = h("span", { class: "state", role: "status" });
    const download = h("button", { type: "button", class: "download", text: `Download the class's PDF (${cards.length} pages)` });
    download.addEventListener("click", () => downloadPdf(path, `report-cards-${slug(className)}-${slug(first.exam_session.name)}.pdf`, status));
    body.replaceChildren(
      h("p", { class: "muted", text: `${examSessionTitle(first.exam_session)}. One page per student in the PDF, ready to print.` }),
      h("div", { class: "sheet-actions" }, download, status),
      h("div", { class: "table-wrap" }, h("table", { class: "cards-table" },
        h("thead", {}, h("tr", {}, [["Student"], ["Admission no.", "wide"], ["Overall"], ["Grade"], ["Position"], ["Marks", "wide"]]
          .map(([t, cls]) => h("th", { text: t, class: cls })))),
        h("tbody", {}, rows))));
  }).catch(failed(body)).finally(() => body.removeAttribute("aria-busy"));
  return view;
}

function studentCardPage(sid, esid, classId, studentId) {
  const path = `${cardsPath(sid, esid)}${studentId}/`;
  const body = h("div", { "aria-busy": "true" }, h("p", { class: "muted", text: "Loading…" }));
  const view = h("section", { class: "report-cards report-card" },
    crumbs(["Report cards", `#/report-cards/${sid}/${esid}`], ["The class", `#/report-cards/${sid}/${esid}/${classId}`]),
    h("h1", { text: "Report card" }), body);
  view.ready = ctx.client.request("GET", path)
    .then((card) => body.replaceChildren(...cardView(card, path)))
    .catch(failed(body)).finally(() => body.removeAttribute("aria-busy"));
  return view;
}

const slug = (text) => String(text || "").toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "") || "card";

/** A card on screen: the student, the figures, a line per subject, attendance, the PDF. */
export function cardView(card, path) {
  const facts = [
    ["Term", examSessionTitle(card.exam_session)],
    ["Class", card.academic_class ? card.academic_class.name : "–"],
    ["Overall", `${percent(card.percentage)}${card.grade ? ` (${card.grade})` : ""}`],
  ];
  if (card.total_mark !== null && card.total_mark !== undefined) facts.push(["Total", `${card.total_mark} / ${card.total_max_mark}`]);
  if (card.position !== null && card.position !== undefined) facts.push(["Position", `${card.position} of ${card.class_size}`]);
  if (card.passed !== null && card.passed !== undefined) facts.push(["Result", card.passed ? "passed" : "not passed"]);
  const showAverage = card.subjects.some((s) => s.class_average !== null && s.class_average !== undefined);
  const columns = ["Subject", "Mark", "%", "Grade", ...(showAverage ? ["Class average"] : []), "Comment"];
  const rows = card.subjects.map((s) => h("tr", {},
    h("td", { "data-label": "Subject", class: "subject", text: s.name }),
    h("td", { "data-label": "Mark", class: "mark", text: s.mark === null ? "missing" : `${s.mark} / ${s.max_mark}` }),
    h("td", { "data-label": "%", class: "pct", text: percent(s.percentage) }),
    h("td", { "data-label": "Grade", class: "grade", text: s.grade || "–" }),
    showAverage ? h("td", { "data-label": "Class average", class: "avg", text: percent(s.class_average) }) : null,
    h("td", { "data-label": "Comment", class: "comment", text: s.teacher_comment || "" })));
  const a = card.attendance;
  const attendance = a && a.days
    ? `Attendance over the exam session's dates: present ${a.present}, late ${a.late}, absent ${a.absent}, excused ${a.excused} of ${a.days} days recorded (${percent(a.attendance_rate * 100)}).`
    : "Attendance over the exam session's dates: no days recorded.";
  const status = h("span", { class: "state", role: "status" });
  const download = h("button", { type: "button", class: "download", text: "Download PDF" });
  download.addEventListener("click", () => downloadPdf(path, `report-card-${slug(card.student.admission_number)}-${slug(card.exam_session.name)}.pdf`, status));
  return [
    h("h2", { class: "card-student", text: nameOf(card.student) }),
    h("p", { class: "muted", text: `Admission number ${card.student.admission_number}` }),
    h("p", { class: "summary" }, facts.map(([label, value]) => h("span", {}, `${label}: `, h("b", { text: value })))),
    card.subjects.length
      ? h("div", { class: "table-wrap" }, h("table", { class: "card-table subjects" },
        h("thead", {}, h("tr", {}, columns.map((t) => h("th", { text: t })))), h("tbody", {}, rows)))
      : h("p", { class: "muted", text: "No subject has an exam in this exam session yet." }),
    h("p", { class: "attendance-line", text: attendance }),
    h("div", { class: "sheet-actions" }, download, status),
  ];
}

/** Fetches `path` as a PDF with the session's token and saves it as `filename`. */
export async function downloadPdf(path, filename, status) {
  status.className = "state";
  status.textContent = "Preparing the PDF…";
  const get = () => fetch(path, {
    headers: { Accept: "application/pdf", Authorization: `Bearer ${ctx.client.session.access}` },
    credentials: "omit", cache: "no-store",
  });
  try {
    let res = await get();
    if (res.status === 401 && await ctx.client.refresh()) res = await get();
    if (!res.ok) {
      const problem = await res.json().catch(() => null);
      throw new Error((problem && problem.detail) || `the server answered ${res.status}`);
    }
    const url = URL.createObjectURL(await res.blob());
    const link = h("a", { href: url, download: filename });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    status.className = "state saved";
    status.textContent = `Downloaded ${filename}: open it to print.`;
  } catch (err) {
    status.className = "state error";
    status.textContent = `The PDF could not be downloaded: ${err.message}`;
  }
}
