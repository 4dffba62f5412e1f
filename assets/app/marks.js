// The marks sheet: every live student of the exam's class with a mark, its grade (from the
// school's current grading scale, as the report card grades it) and an optional symbol cell,
// typed with the keyboard only (Enter and the arrow keys move between cells). A row is
// saved through `confirm-students` when the cursor leaves it, or with "Save marks"; each
// row shows whether it is saved, and a rejected value shows its error on its cell. A saved
// mark typed over can be put back ("Undo"); leaving the page with marks not saved asks
// first. "a" (or "absent") in a mark cell records the student as absent: the mark is
// saved without a value, with `text_score` "absent" and `score_status` "not submitted",
// and the report card prints "absent" for the subject.
//
// What it takes to draw, all in parallel: the class's students and the exam's marks
// when opened from the exams page (which has the exam); loaded by its address, the
// exam too, started with `/auth/me/` right after the token refresh, and the students
// of the class the address names (`?class=`, checked against the exam when it comes).
// The grading scale (grades shown as marks are typed) comes after the sheet shows. A
// symbol is the teacher's own text, never filled in: a grade is always the current
// scale's, so changing the scale changes every grade shown, here and on the cards.
// A saved mark has a "History" button for users holding `view_history`.
import { h } from "/app/shared.js";
import { ctx, api, crumbs } from "/app/resources.js";
import { canSeeHistory, historyButton } from "/app/history.js";

/** Exams seen on the exams page, so opening one needs no request for it. */
const knownExams = new Map();
export function rememberExam(exam) { knownExams.set(String(exam.id), exam); }

/** The address of an exam's marks sheet, naming its class so a load can ask for both at once. */
export const sheetHref = (sid, esid, exam) => `#/sessions/${sid}/exam-sessions/${esid}/exams/${exam.id}?class=${exam.academic_class}`;

/** The school's grading scale, fetched once per page load. */
let scale = null;
export function gradingScale() {
  if (!scale) {
    scale = ctx.me.can("view", "academicsettings")
      ? ctx.client.request("GET", api("/academic-settings/?page_size=1"))
        .then((answer) => (answer.results.length ? answer.results[0].grading_scale : []))
        .catch(() => { scale = null; return []; })
      : Promise.resolve([]);
  }
  return scale;
}

const MARK = /^\d+$/;
/** A mark a grade can be read from (LMS results may carry decimals). */
const GRADED = /^\d+(\.\d+)?$/;
/** What a mark cell takes for "absent". */
const ABSENT = /^(a|ab|abs|absent)$/i;
const isAbsent = (mark) => !!mark && (mark.mark === null || mark.mark === undefined) && String(mark.text_score || "").toLowerCase() === "absent";

// Leaving the page (reload, closing the tab) with marks not saved asks first; leaving for
// another page of the app asks through `ctx.leaveGuard` (app.js's router).
window.addEventListener("beforeunload", (event) => {
  if (ctx.leaveGuard && ctx.leaveGuard()) { event.preventDefault(); event.returnValue = ""; }
});
const examPathOf = (sid, esid, eid) => api(`/sessions/${sid}/exam-sessions/${esid}/exams/${eid}/`);

/**
 * The exam, its class's students and its marks: the students of `classId` (the address's
 * `?class=`, or the known exam's) in parallel with the rest, asked again for the exam's
 * own class should that be another.
 */
function load(sid, esid, eid, classId) {
  const { client } = ctx;
  const examPath = examPathOf(sid, esid, eid);
  const known = knownExams.get(eid);
  const exam = known ? Promise.resolve(known) : client.request("GET", examPath);
  const marks = client.all(`${examPath}marks/`);
  const guess = known ? String(known.academic_class) : classId;
  const guessed = guess ? client.all(api(`/classes/${guess}/students/`)) : null;
  if (guessed) guessed.catch(() => {}); // a stale class: answered below by the exam's own
  const students = exam.then((e) => (guessed && String(e.academic_class) === guess
    ? guessed : client.all(api(`/classes/${e.academic_class}/students/`))));
  return Promise.all([exam, students, marks]);
}

/** The grading scale was changed: the next sheet asks for it again. */
export function forgetScale() { scale = null; }

/** What the next user (after a sign-out) may not see or may see differently. */
export function forgetSheets() {
  knownExams.clear();
  early.clear();
  scale = null;
}

/** Loads started before `/auth/me/` answered, by exam id (a sheet loaded by its address). */
const early = new Map();

/** Whether `who` (anything with `can(action, resource)`) may read a marks sheet. */
export function canReadSheet(who) {
  return who.can("view", "exam") && who.can("view", "mark") && who.can("view", "student");
}

/** Starts loading a sheet; `marksSheet` then takes what is under way. */
export function prefetchSheet(sid, esid, eid, classId) {
  const loading = load(sid, esid, eid, classId);
  loading.catch(() => {}); // reported by marksSheet, or unused when the page is not shown
  early.set(eid, loading);
}

/** The sheet; its `ready` settles once it is drawn (or has failed). */
export function marksSheet(sid, esid, eid, classId) {
  const { me } = ctx;
  if (!canReadSheet(me)) {
    early.clear();
    return h("p", { class: "form-error", role: "alert", text: "Your roles do not let you see this exam's marks." });
  }
  const wrap = h("div", { class: "sheet" }, h("p", { class: "muted", text: "Loading the marks sheet…" }));
  const loading = early.get(eid) || load(sid, esid, eid, classId);
  early.clear();
  wrap.ready = (async () => {
    const [exam, students, marks] = await loading;
    const editable = me.can("add", "mark") && me.can("change", "mark");
    const bands = { list: [], changed: () => {} };
    wrap.replaceChildren(...sheet(exam, students, marks, examPathOf(sid, esid, eid), editable, bands, sid, esid));
    const first = wrap.querySelector("input[name=mark]");
    if (first) { first.focus(); first.select(); }
    gradingScale().then((list) => { bands.list = list; bands.changed(); });
  })().catch((problem) => wrap.replaceChildren(h("p", { class: "form-error", role: "alert", text: problem.message })));
  return wrap;
}

function sheet(exam, students, marks, examPath, editable, bands, sid, esid) {
  const byNumber = new Map(marks.map((m) => [m.studentadmissionnumber, m]));
  const rows = [];
  const summary = h("p", { class: "summary", role: "status" });
  const withHistory = canSeeHistory();

  /** Shows the History button of `row` once its mark exists (it has an id). */
  function showHistory(row, mark) {
    if (!withHistory || !mark || !mark.id || row.markId === mark.id) return;
    row.markId = mark.id;
    const name = `${row.student.first_name} ${row.student.last_name}`;
    row.history.replaceChildren(historyButton(`${name}'s mark`, { record: mark.id }));
  }
  const saveAll = h("button", { type: "button", text: "Save marks" });

  function refreshSummary() {
    const typed = rows.map((r) => r.input.mark.value.trim());
    const values = typed.filter((v) => MARK.test(v)).map(Number).filter((v) => v <= exam.max_mark);
    const absent = typed.filter((v) => ABSENT.test(v)).length;
    const average = values.length ? (values.reduce((a, b) => a + b, 0) / values.length).toFixed(1) : "—";
    const unsaved = rows.filter((r) => r.state === "unsaved" || r.state === "error").length;
    summary.replaceChildren(
      h("span", {}, "Entered ", h("b", { "data-summary": "entered", text: values.length })),
      h("span", {}, "Absent ", h("b", { "data-summary": "absent", text: absent })),
      h("span", {}, "Missing ", h("b", { "data-summary": "missing", text: rows.length - values.length - absent })),
      h("span", {}, "Average ", h("b", { "data-summary": "average", text: average })),
      h("span", {}, "Unsaved ", h("b", { "data-summary": "unsaved", text: unsaved })));
    saveAll.disabled = !unsaved;
  }

  function setState(row, state, text) {
    row.state = state;
    row.tr.className = state === "saved" ? "saved" : state === "unsaved" || state === "error" ? "unsaved" : "";
    row.status.className = `state ${state}`;
    row.status.textContent = text || { saved: "saved", unsaved: "not saved", saving: "saving…", empty: "—", error: "not saved" }[state];
    refreshSummary();
  }

  function cellError(row, name, message) {
    const input = row.input[name];
    const slot = row.error[name];
    slot.textContent = message || "";
    slot.hidden = !message;
    if (message) input.setAttribute("aria-invalid", "true"); else input.removeAttribute("aria-invalid");
  }

  /** The row's values as confirm-students takes them, or null after showing what is wrong. */
  function checked(row) {
    const raw = row.input.mark.value.trim();
    const symbol = row.input.symbol.value.trim();
    const absent = ABSENT.test(raw);
    let ok = true;
    if (raw !== "" && !absent && (!MARK.test(raw) || Number(raw) > exam.max_mark)) {
      cellError(row, "mark", `Enter a whole number from 0 to ${exam.max_mark}, or "a" for absent.`);
      ok = false;
    } else cellError(row, "mark", "");
    if (symbol.length > 255) { cellError(row, "symbol", "At most 255 characters."); ok = false; } else cellError(row, "symbol", "");
    if (!ok) return null;
    const body = { studentadmissionnumber: row.student.admission_number, mark: raw === "" || absent ? null : Number(raw), symbol: absent ? null : symbol || null };
    // Absent is said in the mark's text score; a mark that was absent says it no longer is.
    if (absent) Object.assign(body, { text_score: "absent", score_status: "not submitted" });
    else if (row.absent) Object.assign(body, { text_score: null, score_status: null });
    return body;
  }

  async function save(row) {
    if (row.state !== "unsaved" && row.state !== "error") return;
    const body = checked(row);
    if (!body) return setState(row, "error");
    setState(row, "saving");
    const sent = JSON.stringify(body);
    const before = row.saved;
    try {
      const saved = await ctx.client.request("POST", `${examPath}marks/confirm-students/`, body);
      showHistory(row, saved);
      row.absent = body.text_score === "absent";
      row.saved = { mark: row.absent ? "absent" : body.mark === null ? "" : String(body.mark), symbol: body.symbol || "" };
      if (row.absent && document.activeElement !== row.input.mark) row.input.mark.value = "absent";
      // Typed into again while saving: still unsaved.
      const now = checked(row);
      const same = now && JSON.stringify(now) === sent;
      setState(row, same ? "saved" : "unsaved");
      // A saved mark typed over: it can be put back.
      if (same && before && before.mark !== "" && before.mark !== row.saved.mark) offerUndo(row, before);
    } catch (problem) {
      for (const name of ["mark", "symbol"]) if (problem.errors[name]) cellError(row, name, problem.errors[name].join(" "));
      const other = Object.entries(problem.errors).filter(([n]) => n !== "mark" && n !== "symbol");
      setState(row, "error", other.length ? other.map(([, m]) => m.join(" ")).join(" ") : problem.errors.mark || problem.errors.symbol ? "not saved" : problem.message);
    }
  }

  /** "Undo" beside a row whose saved mark was just replaced: puts `before` back and saves. */
  function offerUndo(row, before) {
    const name = `${row.student.first_name} ${row.student.last_name}`;
    row.status.append(" ", h("button", { type: "button", class: "link undo", text: `Undo (was ${before.mark})`,
      "aria-label": `Undo: put back ${before.mark} for ${name}`,
      onclick: () => {
        row.input.mark.value = before.mark;
        row.input.symbol.value = before.symbol;
        setState(row, "unsaved");
        save(row);
      } }));
  }

  /** The current scale's grade of a typed mark (of its whole part, as report cards). */
  function gradeOf(raw) {
    if (!GRADED.test(raw)) return "";
    const whole = Math.floor(Number(raw));
    const band = bands.list.find((b) => whole >= b.min && whole <= b.max);
    return band ? band.symbol : "";
  }
  const showGrade = (row) => { row.grade.textContent = gradeOf(row.input.mark.value.trim()); };
  bands.changed = () => rows.forEach(showGrade);

  /** Enter: the same cell of the next row; arrows: up, down, and across at the text's ends. */
  function move(event, index, column) {
    const input = event.target;
    const atStart = input.selectionStart === 0 && input.selectionEnd === 0;
    const atEnd = input.selectionStart === input.value.length;
    let to = null;
    if (event.key === "Enter" || event.key === "ArrowDown") to = [index + 1, column];
    else if (event.key === "ArrowUp") to = [index - 1, column];
    else if (event.key === "ArrowRight" && atEnd && column === "mark") to = [index, "symbol"];
    else if (event.key === "ArrowLeft" && atStart && column === "symbol") to = [index, "mark"];
    if (!to) return;
    event.preventDefault();
    const target = rows[to[0]];
    if (target) { target.input[to[1]].focus(); target.input[to[1]].select(); }
    else if (event.key === "Enter") save(rows[index]);
  }

  students.forEach((student, index) => {
    const mark = byNumber.get(student.admission_number);
    const name = `${student.first_name} ${student.last_name}`;
    const input = {
      mark: h("input", { name: "mark", autocomplete: "off", "aria-label": `Mark for ${name}`, value: isAbsent(mark) ? "absent" : mark && mark.mark !== null ? mark.mark : "", readonly: !editable }),
      symbol: h("input", { name: "symbol", class: "symbol", autocomplete: "off", "aria-label": `Symbol for ${name}`, value: mark && mark.symbol ? mark.symbol : "", readonly: !editable }),
    };
    const error = { mark: h("span", { class: "cell-error", role: "alert", hidden: true }), symbol: h("span", { class: "cell-error", role: "alert", hidden: true }) };
    const status = h("span", { class: "state" });
    const history = h("span", { class: "history-slot" });
    const grade = h("td", { "data-label": "Grade", class: "grade" });
    const tr = h("tr", { "data-admission": student.admission_number },
      h("td", { "data-label": "Admission no.", text: student.admission_number }),
      h("td", { "data-label": "Student", text: name }),
      h("td", { "data-label": "Mark" }, input.mark, error.mark),
      grade,
      h("td", { "data-label": "Symbol" }, input.symbol, error.symbol),
      h("td", { "data-label": "" }, status, history));
    const row = { student, tr, input, error, status, history, grade, state: "empty", absent: isAbsent(mark) };
    row.saved = mark ? { mark: input.mark.value, symbol: input.symbol.value } : null;
    rows.push(row);
    showGrade(row);
    showHistory(row, mark);
    for (const column of ["mark", "symbol"]) {
      input[column].addEventListener("keydown", (event) => move(event, index, column));
      input[column].addEventListener("input", () => {
        if (column === "mark") showGrade(row);
        if (column === "mark" && ABSENT.test(input.mark.value.trim())) {
          input.symbol.value = ""; // an absent student has no symbol
        }
        setState(row, "unsaved");
      });
      // Leaving the row saves it.
      input[column].addEventListener("blur", (event) => { if (!tr.contains(event.relatedTarget)) save(row); });
    }
    row.state = mark ? "saved" : "empty";
  });
  rows.forEach((row) => setState(row, row.state));
  saveAll.addEventListener("click", () => rows.forEach(save));
  refreshSummary();
  ctx.leaveGuard = () => {
    const waiting = rows.filter((r) => ["unsaved", "error", "saving"].includes(r.state)).length;
    return waiting ? `${waiting === 1 ? "One mark is" : `${waiting} marks are`} not saved. Leave this page anyway?` : null;
  };

  return [
    crumbs(["Sessions", "#/sessions"], ["Exam session", `#/sessions/${sid}/exam-sessions/${esid}`], [exam.name]),
    h("section", { class: "card" },
      h("h1", { text: `Marks: ${exam.name}` }),
      h("p", { class: "muted", text: `Out of ${exam.max_mark}. ${editable ? "Type a mark (or a for absent), then Enter or an arrow key to move; a row is saved when you leave it." : "You may read these marks, not change them."}` }),
      summary,
      students.length ? null : h("p", { class: "muted", text: "The exam's class has no students." }),
      h("div", { class: "table-wrap" }, h("table", { "aria-label": "Marks" },
        h("thead", {}, h("tr", {}, ["Admission no.", "Student", "Mark", "Grade", "Symbol", "State"].map((c) => h("th", { scope: "col", text: c })))),
        h("tbody", {}, rows.map((r) => r.tr)))),
      editable ? h("div", { class: "sheet-actions" }, saveAll) : null),
  ];
}

/**
 * The class teacher's remarks of a class for an exam session (`report-remarks/`, printed
 * on the report cards): a box per student, saved when the cursor leaves it; an emptied box
 * removes the remark. Those who write marks write remarks.
 */
export function remarksPage(sid, esid, classId) {
  const { me, client } = ctx;
  const path = api(`/sessions/${sid}/exam-sessions/${esid}/report-remarks/`);
  const wrap = h("div", {}, h("p", { class: "muted", text: "Loading…" }));
  const editable = me.can("add", "mark") && me.can("change", "mark");
  (async () => {
    const [examSession, klass, students, remarks] = await Promise.all([
      client.request("GET", api(`/sessions/${sid}/exam-sessions/${esid}/`)),
      client.request("GET", api(`/classes/${classId}/`)),
      client.all(api(`/classes/${classId}/students/`)),
      client.all(path),
    ]);
    const byStudent = new Map(remarks.map((r) => [r.student, r]));
    const rows = students.map((student) => {
      const name = `${student.first_name} ${student.last_name}`;
      const record = byStudent.get(student.id) || null;
      const box = h("textarea", { name: "remark", rows: 3, maxlength: 2000, "aria-label": `Remark for ${name}`, readonly: !editable });
      box.value = record ? record.remark : "";
      const state = h("span", { class: "state" }, record ? "saved" : "—");
      const error = h("span", { class: "cell-error", role: "alert", hidden: true });
      const row = { student, record, box, state, saved: box.value, busy: false };
      box.addEventListener("input", () => { state.className = "state unsaved"; state.textContent = "not saved"; });
      box.addEventListener("blur", () => save(row, error));
      row.tr = h("tr", {}, h("td", { "data-label": "Student", text: name }), h("td", { "data-label": "Remark" }, box, error), h("td", { "data-label": "" }, state));
      return row;
    });
    async function save(row, error) {
      const text = row.box.value.trim();
      if (text === row.saved || row.busy) return;
      row.busy = true;
      row.state.className = "state saving";
      row.state.textContent = "saving…";
      try {
        if (row.record && !text) await client.request("PATCH", `${path}${row.record.id}/`, { is_deleted: true });
        else if (row.record) row.record = await client.request("PATCH", `${path}${row.record.id}/`, { remark: text });
        else if (text) row.record = await client.request("POST", path, { student: row.student.id, remark: text });
        if (!text) row.record = null;
        row.saved = text;
        error.hidden = true;
        row.state.className = "state saved";
        row.state.textContent = text ? "saved" : "removed";
      } catch (problem) {
        error.textContent = (problem.errors.remark || [problem.message]).join(" ");
        error.hidden = false;
        row.state.className = "state error";
        row.state.textContent = "not saved";
      }
      row.busy = false;
      if (row.box.value.trim() !== row.saved) save(row, error);
    }
    ctx.leaveGuard = () => (rows.some((r) => r.box.value.trim() !== r.saved) ? "Some remarks are not saved. Leave this page anyway?" : null);
    wrap.replaceChildren(
      crumbs(["Sessions", "#/sessions"], ["Exam session", `#/sessions/${sid}/exam-sessions/${esid}`], [`Remarks: ${klass.name}`]),
      h("section", { class: "card remarks" },
        h("h1", { text: `Class teacher's remarks: ${klass.name}` }),
        h("p", { class: "muted", text: `${examSession.name}. Printed on each student's report card. ${editable ? "A remark is saved when you leave its box." : "You may read these remarks, not change them."}` }),
        students.length ? null : h("p", { class: "muted", text: "The class has no students." }),
        h("div", { class: "table-wrap" }, h("table", { "aria-label": "Remarks" },
          h("thead", {}, h("tr", {}, ["Student", "Remark", "State"].map((c) => h("th", { scope: "col", text: c })))),
          h("tbody", {}, rows.map((r) => r.tr))))));
  })().catch((problem) => wrap.replaceChildren(h("p", { class: "form-error", role: "alert", text: problem.message })));
  return wrap;
}
