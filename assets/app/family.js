// A guardian's pages, phone first: each child with their attendance and their terms
// (`#/children`), and one term's report card with its PDF (`#/children/<student>/<session>/
// <exam session>`). The server narrows every read to the guardian's own children; these
// pages only ask.
import { h } from "/app/shared.js";
import { examSessionTitle } from "/app/report_cards.js";

let ctx = null;

/** The client and who is signed in (set by app.js). */
export function setFamilyContext(context) { ctx = context; }

/** Whether the signed-in user is a guardian (their home is their children). */
export function isGuardian(me) { return me.roles.includes("guardian"); }

const percent = (value) => (value === null || value === undefined ? "–" : `${Math.round(value * 10) / 10}%`);

/** `#/children[/<student>/<session>/<exam session>]`. */
export function familyPage(args) {
  const [student, session, examSession] = args;
  if (student && session && examSession) return cardPage(student, session, examSession);
  return childrenPage();
}

function childrenPage() {
  const list = h("div", { class: "children", "aria-busy": "true" }, h("p", { class: "muted", text: "Loading…" }));
  const view = h("section", { class: "family" }, h("h1", { text: "My children" }), list);
  view.ready = (async () => {
    const [students, terms] = await Promise.all([
      ctx.client.all(`${ctx.API}/students/`),
      termsOfSessions(),
    ]);
    if (!students.length) {
      list.replaceChildren(h("p", { class: "muted", text: "No child is linked to your account yet. Please ask the school office." }));
    } else {
      list.replaceChildren(...students.map((child) => childCard(child, terms)));
    }
    list.removeAttribute("aria-busy");
  })().catch((problem) => {
    list.replaceChildren(h("p", { class: "form-error", role: "alert", text: problem.message || "The children could not be loaded." }));
  });
  return view;
}

/** Every exam session (term) of the sessions the guardian may read, newest session first. */
async function termsOfSessions() {
  const sessions = await ctx.client.all(`${ctx.API}/sessions/`);
  sessions.sort((a, b) => String(b.start_date).localeCompare(String(a.start_date)));
  const terms = [];
  for (const session of sessions) {
    const examSessions = await ctx.client.all(`${ctx.API}/sessions/${session.id}/exam-sessions/`);
    for (const term of examSessions) terms.push({ session, term });
  }
  return terms;
}

function childCard(child, terms) {
  const name = `${child.first_name} ${child.last_name}`;
  const attendance = h("p", { class: "attendance muted", text: "Attendance: loading…" });
  ctx.client.request("GET", `${ctx.API}/students/${child.id}/attendance-summary/`).then((s) => {
    attendance.textContent = s.days
      ? `Attendance: present ${s.present + s.late} of ${s.days} days (${percent(s.attendance_rate * 100)}), absent ${s.absent}`
      : "Attendance: no days recorded yet";
  }).catch(() => { attendance.textContent = "Attendance: not available"; });
  const links = terms.map(({ session, term }) => h("a", {
    class: "tile term",
    href: `#/children/${child.id}/${session.id}/${term.id}`,
  }, h("strong", { text: examSessionTitle(term) }), h("span", { class: "muted", text: `${session.name}: marks and report card` })));
  return h("article", { class: "card child", "data-student": child.id },
    h("h2", { text: name }),
    h("p", { class: "muted", text: `Admission number ${child.admission_number}` }),
    attendance,
    links.length ? h("div", { class: "terms" }, ...links) : h("p", { class: "muted", text: "No marks have been published yet." }));
}

function cardPage(student, session, examSession) {
  const path = `${ctx.API}/sessions/${session}/exam-sessions/${examSession}/report-cards/${student}/`;
  const body = h("div", { "aria-busy": "true" }, h("p", { class: "muted", text: "Loading…" }));
  const view = h("section", { class: "family report-card" },
    h("p", { class: "crumbs" }, h("a", { href: "#/children", text: "My children" })),
    h("h1", { text: "Report card" }), body);
  view.ready = ctx.client.request("GET", path).then((card) => {
    body.replaceChildren(...cardView(card, path));
    body.removeAttribute("aria-busy");
  }).catch((problem) => {
    body.replaceChildren(h("p", { class: "form-error", role: "alert", text: problem.message || "The report card could not be loaded." }));
  });
  return view;
}

function cardView(card, path) {
  const who = `${card.student.first_name} ${card.student.last_name}`;
  const rows = card.subjects.map((s) => h("tr", {},
    h("td", { "data-label": "Subject", text: s.name }),
    h("td", { "data-label": "Mark", text: s.mark === null ? "missing" : `${s.mark} / ${s.max_mark}` }),
    h("td", { "data-label": "Grade", text: s.grade || "–" }),
    h("td", { "data-label": "Comment", text: s.teacher_comment || "" })));
  const facts = [
    ["Term", examSessionTitle(card.exam_session)],
    ["Class", card.academic_class ? card.academic_class.name : "–"],
    ["Overall", percent(card.percentage)],
  ];
  if (card.position !== null && card.position !== undefined) facts.push(["Position", `${card.position} of ${card.class_size}`]);
  const download = h("button", { type: "button", class: "download", text: "Download PDF" });
  const status = h("span", { class: "state", role: "status" });
  download.addEventListener("click", () => downloadPdf(path, `report-card-${card.student.admission_number}.pdf`, status));
  return [
    h("h2", { text: who }),
    h("p", { class: "summary" }, ...facts.map(([label, value]) => h("span", {}, `${label}: `, h("b", { text: value })))),
    h("table", { class: "card-table" },
      h("thead", {}, h("tr", {}, ...["Subject", "Mark", "Grade", "Comment"].map((t) => h("th", { text: t })))),
      h("tbody", {}, ...rows)),
    h("div", { class: "sheet-actions" }, download, status),
  ];
}

/** Fetches the card as a PDF with the session's token and saves it. */
async function downloadPdf(path, filename, status) {
  status.textContent = "Preparing…";
  const get = () => fetch(path, {
    headers: { Accept: "application/pdf", Authorization: `Bearer ${ctx.client.session.access}` },
    credentials: "omit", cache: "no-store",
  });
  try {
    let res = await get();
    if (res.status === 401 && await ctx.client.refresh()) res = await get();
    if (!res.ok) throw new Error(`the server answered ${res.status}`);
    const url = URL.createObjectURL(await res.blob());
    const link = h("a", { href: url, download: filename });
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
    status.textContent = "Downloaded";
  } catch (err) {
    status.textContent = `The PDF could not be downloaded: ${err.message}`;
  }
}
