// The two moments that decide a school year: "Import" (#/import: a kind, its template, a
// CSV or XLSX file, the dry run as a table with the bad cells marked, then the import) and
// "New school year" (#/new-year: the plan per class, retain/leave by student, the dry run,
// then the rollover). Both use the public school API only.
import { h, field, selectField } from "/app/shared.js";
import { ctx, api } from "/app/resources.js";

// Each kind the API imports (API.md 10), with the columns of its template (the server's
// own list: a unit test of src/api/school/imports checks them) and what it needs.
const KINDS = {
  classes: { label: "Classes", perm: "academicclass", columns: ["name", "level"] },
  subjects: { label: "Subjects", perm: "subject", columns: ["code", "name"] },
  students: { label: "Students", perm: "student", columns: ["admission_number", "first_name", "last_name", "academic_class"] },
  teachers: { label: "Teachers", perm: "teacherprofile", also: ["add", "user"], columns: ["first_name", "last_name", "email", "phone", "staff_number"] },
  "teacher-assignments": { label: "Teacher assignments", perm: "teacherassignment", columns: ["teacher", "academic_class", "subject"] },
  enrollments: { label: "Enrollments", perm: "enrollment", columns: ["student", "academic_class", "academic_session", "status"] },
  marks: { label: "One exam's marks", perm: "mark", exam: true, columns: ["studentadmissionnumber", "mark", "symbol", "comment", "subject"] },
};
const XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

const mayImport = (m, kind) => {
  const k = KINDS[kind];
  return m.can("add", k.perm) && m.can("change", k.perm) && (!k.also || m.can(...k.also));
};
export const canImport = (m) => Object.keys(KINDS).some((kind) => mayImport(m, kind));
export const canRollOver = (m) => m.can("add", "academicsession") && m.can("add", "enrollment");

/** The exams of the active session, as [id, "exam session: exam"] (for a marks file). */
async function activeExams() {
  const sessions = await ctx.client.all(api("/sessions/"));
  const active = sessions.find((s) => s.is_active);
  if (!active) return [];
  const examSessions = await ctx.client.all(api(`/sessions/${active.id}/exam-sessions/`));
  const lists = await Promise.all(examSessions.map((es) =>
    ctx.client.all(api(`/sessions/${active.id}/exam-sessions/${es.id}/exams/`)).then((exams) =>
      exams.map((e) => [e.id, `${es.name}: ${e.name}`]))));
  return lists.flat();
}

/** Posts a file (not JSON) with the session's token; answers [status, body]. */
async function upload(path, file) {
  const type = file.name.toLowerCase().endsWith(".xlsx") ? XLSX : "text/csv";
  const send = () => fetch(path, {
    method: "POST", body: file, credentials: "omit", cache: "no-store",
    headers: { "Content-Type": type, Accept: "application/json", Authorization: `Bearer ${ctx.client.session.access}` },
  });
  let res = await send();
  if (res.status === 401 && await ctx.client.refresh()) res = await send();
  return [res.status, await res.json().catch(() => null)];
}

/** The rows of a CSV as the server reads them (BOM, comma or semicolon, quotes). */
function csvRows(text) {
  text = text.replace(/^\uFEFF/, "");
  const first = text.split("\n", 1)[0];
  const sep = (first.match(/;/g) || []).length > (first.match(/,/g) || []).length ? ";" : ",";
  const rows = [];
  let row = [], cell = "", quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; }
      else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === sep) { row.push(cell); cell = ""; }
    else if (c === "\n") { row.push(cell.replace(/\r$/, "")); rows.push(row); row = []; cell = ""; }
    else cell += c;
  }
  if (cell || row.length) { row.push(cell); rows.push(row); }
  return rows;
}

/** The file's rows with each bad cell marked (CSV), or the list of bad rows (XLSX). */
function problemsTable(errors, rows) {
  const table = h("table", { class: "import-errors" });
  if (rows) {
    const header = rows[0] || [];
    const bad = new Map(errors.map((e) => [`${e.row}:${e.column}`, e.message]));
    const whole = new Map(errors.filter((e) => e.column === null).map((e) => [e.row, e.message]));
    table.append(h("thead", null, h("tr", null, h("th", { text: "Row" }), header.map((c) => h("th", { text: c })))));
    table.append(h("tbody", null, rows.slice(1).map((cells, i) => {
      const number = i + 2;
      return h("tr", { class: whole.has(number) ? "bad-row" : null, title: whole.get(number) },
        h("td", { text: number }),
        cells.map((c, j) => {
          const message = bad.get(`${number}:${(header[j] || "").trim().toLowerCase()}`);
          return h("td", { class: message ? "bad-cell" : null, "aria-invalid": message ? "true" : null, title: message },
            c, message ? h("span", { class: "cell-error", text: message }) : null);
        }));
    }).filter((tr, i) => rows[i + 1].some((c) => c.trim()))));
  } else {
    table.append(h("thead", null, h("tr", null, ["Row", "Column", "Problem"].map((t) => h("th", { text: t })))));
    table.append(h("tbody", null, errors.map((e) =>
      h("tr", { class: "bad-row" }, h("td", { text: e.row }), h("td", { text: e.column || "—" }), h("td", { class: "bad-cell", text: e.message })))));
  }
  return table;
}

export function importPage() {
  const kinds = Object.entries(KINDS).filter(([kind]) => mayImport(ctx.me, kind));
  const kind = selectField("What the file holds", "kind", kinds.map(([k, d]) => [k, d.label]), kinds[0] && kinds[0][0]);
  const exam = selectField("Exam", "exam", [["", "Loading the exams…"]], "");
  const template = h("a", { class: "button", text: "Download the template" });
  const file = field("File (CSV or XLSX)", "file", { type: "file", accept: ".csv,.xlsx,text/csv," + XLSX });
  const check = h("button", { type: "button", text: "Check the file" });
  const apply = h("button", { type: "button", text: "Import", disabled: true });
  const status = h("p", { role: "status", class: "muted" });
  const result = h("div");
  const chosen = () => kind.querySelector("select").value;
  const examId = () => exam.querySelector("select").value;
  const picked = () => file.querySelector("input").files[0];
  let exams = null;
  const setKind = () => {
    const header = KINDS[chosen()].columns.join(",") + "\r\n";
    template.setAttribute("href", `data:text/csv;charset=utf-8,${encodeURIComponent(header)}`);
    template.setAttribute("download", `${chosen()}-template.csv`);
    apply.disabled = true;
    exam.hidden = !KINDS[chosen()].exam;
    if (!exam.hidden && !exams) {
      exams = activeExams().then((list) => {
        const select = exam.querySelector("select");
        select.replaceChildren(...(list.length ? list : [["", "No exams in the active session"]])
          .map(([v, text]) => h("option", { value: v, text })));
      }).catch((problem) => { status.textContent = problem.message; });
    }
  };
  kind.addEventListener("change", setKind);
  exam.addEventListener("change", () => { apply.disabled = true; });
  file.addEventListener("change", () => { apply.disabled = true; result.replaceChildren(); status.textContent = ""; });
  setKind();
  const run = async (dryRun) => {
    const f = picked();
    if (!f) { status.textContent = "Choose a file first."; return; }
    const marks = KINDS[chosen()].exam;
    if (marks && !examId()) { status.textContent = "Choose the exam first."; return; }
    const path = marks ? `exams/${examId()}/marks` : chosen();
    status.textContent = dryRun ? "Checking…" : "Importing…";
    const [code, body] = await upload(api(`/imports/${path}/?dry_run=${dryRun}`), f);
    result.replaceChildren();
    if (code === 200) {
      const what = `${body.rows} rows: ${body.created} new, ${body.updated} updated, ${body.unchanged} unchanged.`;
      status.textContent = dryRun ? `The file is good. ${what}` : `Imported. ${what}`;
      apply.disabled = !dryRun;
      return;
    }
    apply.disabled = true;
    status.textContent = (body && body.detail) || `The server answered ${code}.`;
    if (body && Array.isArray(body.errors)) {
      const rows = f.name.toLowerCase().endsWith(".xlsx") ? null : csvRows(await f.text());
      result.append(problemsTable(body.errors, rows));
    }
  };
  check.addEventListener("click", () => run(true));
  apply.addEventListener("click", () => run(false));
  return h("section", null, h("h1", { text: "Import" }),
    h("p", { class: "muted", text: "Rows are matched by natural key (a class by name, a subject by code, a student by admission number, a teacher by e-mail or staff number, a mark by the student's admission number): a file imported twice changes nothing, and nothing is ever deleted. One bad row and nothing is imported. New teachers get an account without a password: set one on the Users page." }),
    h("div", { class: "sheet-actions" }, kind, exam, template), file,
    h("div", { class: "sheet-actions" }, check, apply), status, result);
}

export function newYearPage() {
  const view = h("section", null, h("h1", { text: "New school year" }));
  view.ready = buildNewYear(view).catch((problem) => view.append(h("p", { class: "form-error", text: problem.message })));
  return view;
}

async function buildNewYear(view) {
  const [sessions, classes, students] = await Promise.all([
    ctx.client.all(api("/sessions/")), ctx.client.all(api("/classes/")), ctx.client.all(api("/students/"), 20000)]);
  const active = sessions.find((s) => s.is_active);
  if (!active) { view.append(h("p", { text: "There is no active session to roll over." })); return; }
  const byClass = new Map(classes.map((c) => [c.id, c]));
  const className = (id) => (id ? (byClass.get(id) || { name: "(unknown)" }).name : "Graduates");
  const ordered = [...classes].sort((a, b) => (a.level ?? 999) - (b.level ?? 999) || a.name.localeCompare(b.name));
  const inClass = (id) => students.filter((s) => s.academic_class === id);
  const form = h("form", { class: "new-year" },
    h("p", { text: `From ${active.name}, into:` }),
    field("Name of the new session", "name", { required: true }),
    field("Starts", "start_date", { type: "date", required: true }),
    field("Ends", "end_date", { type: "date", required: true }));
  const destinations = [["", "The next class (by level)"], ...ordered.map((c) => [c.id, c.name]), ["graduate", "Graduates"]];
  for (const c of ordered.filter((c) => inClass(c.id).length)) {
    const list = h("ul", { class: "new-year-students" }, inClass(c.id).map((s) =>
      h("li", null, selectField(`${s.first_name} ${s.last_name} (${s.admission_number})`, `fate-${s.id}`,
        [["move", "Moves with the class"], ["retain", "Stays in this class"], ["leave", "Leaves the school"]], "move"))));
    form.append(h("fieldset", { "data-class": c.id }, h("legend", { text: `${c.name} (${inClass(c.id).length})` }),
      selectField("Goes to", `to-${c.id}`, destinations, ""), h("details", null, h("summary", { text: "Students" }), list)));
  }
  const preview = h("button", { type: "button", text: "Preview" });
  const apply = h("button", { type: "button", text: "Start the new year", disabled: true, class: "danger" });
  const status = h("p", { role: "status", class: "muted" });
  const plan = h("div");
  form.append(h("div", { class: "sheet-actions" }, preview, apply), status, plan);
  form.addEventListener("change", () => { apply.disabled = true; });
  const body = (dryRun) => {
    const value = (name) => form.querySelector(`[name="${name}"]`).value;
    const promotions = [], retain = [], leave = [];
    form.querySelectorAll("fieldset[data-class]").forEach((set) => {
      const to = value(`to-${set.dataset.class}`);
      if (to) promotions.push({ from_class: set.dataset.class, to_class: to === "graduate" ? null : to });
    });
    form.querySelectorAll("select[name^=fate-]").forEach((select) => {
      const id = select.name.slice(5);
      if (select.value === "retain") retain.push(id);
      if (select.value === "leave") leave.push(id);
    });
    return { name: value("name"), start_date: value("start_date"), end_date: value("end_date"), promotions, retain, leave, dry_run: dryRun };
  };
  const run = async (dryRun) => {
    status.textContent = dryRun ? "Working out the plan…" : "Starting the new year…";
    try {
      const answer = await ctx.client.request("POST", api(`/sessions/${active.id}/rollover/`), body(dryRun));
      const p = answer.plan;
      plan.replaceChildren(h("table", null,
        h("thead", null, h("tr", null, ["From", "To", "Promoted"].map((t) => h("th", { text: t })))),
        h("tbody", null, p.by_class.map((m) => h("tr", null,
          h("td", { text: className(m.from_class) }), h("td", { text: className(m.to_class) }), h("td", { text: m.students }))))));
      const counts = `${p.promoted} promoted, ${p.retained} retained, ${p.graduated} graduated, ${p.left} leaving.`;
      status.textContent = dryRun ? `The plan: ${counts}` : `${answer.session.name} has begun: ${counts}`;
      apply.disabled = !dryRun;
      if (!dryRun) preview.disabled = true;
    } catch (problem) {
      apply.disabled = true;
      const details = Object.entries(problem.errors || {}).map(([k, v]) => `${k}: ${[].concat(v).join(" ")}`);
      status.textContent = [problem.message, ...details].join(" ");
    }
  };
  preview.addEventListener("click", () => run(true));
  apply.addEventListener("click", () => run(false));
  view.append(form);
}
