// Registers (attendance), phone first. `#/registers`: a teacher's classes (the office:
// every class) with today's state, the office seeing which classes have not taken today's
// register; `#/registers/<class>[?date=YYYY-MM-DD]`: a day's register; `#/registers/<class>/
// week[?to=YYYY-MM-DD]`: the class × the last 7 days.
//
// A register not yet taken starts with everyone present: one tap (or key: P, A, L, E) per
// exception, a note where it helps, then "Save register" takes the class in one request
// (`POST /classes/{id}/attendance/`). Once taken, a change to one student is a correction of
// that one record, saved at once (`PATCH /attendance/{id}/`; `POST /attendance/` for a
// student with no record that day). The server decides who may: a teacher of the class,
// or a holder of the attendance permissions.
import { h } from "/app/shared.js";
import { ctx, api, crumbs } from "/app/resources.js";
import { isGuardian } from "/app/family.js";

export const STATUSES = [
  { value: "present", label: "Present", key: "p" },
  { value: "absent", label: "Absent", key: "a" },
  { value: "late", label: "Late", key: "l" },
  { value: "excused", label: "Excused", key: "e" },
];
const LETTER = { present: "P", absent: "A", late: "L", excused: "E" };

/** Who sees registers: a teacher (their classes) or whoever may take any class's. */
export const canSeeRegisters = (m) => !isGuardian(m) && Boolean(m.teacher || m.can("add", "attendance"));

/** `YYYY-MM-DD` of a Date in the user's own time zone. */
export function isoDay(d) {
  const pad = (n) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}
const dayOf = (iso) => { const [y, m, d] = iso.split("-").map(Number); return new Date(y, m - 1, d); };
const shift = (iso, days) => { const d = dayOf(iso); d.setDate(d.getDate() + days); return isoDay(d); };
const longDay = (iso) => dayOf(iso).toLocaleDateString(undefined, { weekday: "long", day: "numeric", month: "long", year: "numeric" });
const shortDay = (iso) => dayOf(iso).toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
const validDay = (raw) => (/^\d{4}-\d{2}-\d{2}$/.test(raw || "") ? raw : null);
const nameOf = (s) => `${s.first_name} ${s.last_name}`;
const failed = (wrap) => (problem) => wrap.replaceChildren(h("p", { class: "form-error", role: "alert", text: problem.message || "This could not be loaded." }));

/** `#/registers[/<class>[/week]]`. */
export function registersPage(args, params) {
  const [classId, what] = args;
  if (classId && what === "week") return weekPage(classId, validDay(params.get("to")) || isoDay(new Date()));
  if (classId) return registerPage(classId, validDay(params.get("date")) || isoDay(new Date()));
  return classesPage();
}

/** The classes the user takes registers for: a teacher's own (by assignment), else all. */
async function myClasses() {
  const classes = await ctx.client.all(api("/classes/"));
  if (!ctx.me.teacher || ctx.me.can("add", "attendance")) return { classes, own: false };
  const assignments = await ctx.client.all(api("/teacher-assignments/"), 100000);
  const mine = new Set(assignments.filter((a) => a.teacher === ctx.me.teacher.id).map((a) => a.academic_class));
  return { classes: classes.filter((c) => mine.has(c.id)), own: true };
}

/** Today's records per class: the school's (one list) for the office, else class by class. */
async function todaysRecords(classes, today) {
  const byClass = new Map(classes.map((c) => [c.id, []]));
  if (ctx.me.can("view", "attendance")) {
    const records = await ctx.client.all(api(`/attendance/?date=${today}`), 100000);
    records.forEach((r) => { if (byClass.has(r.academic_class)) byClass.get(r.academic_class).push(r); });
  } else {
    await Promise.all(classes.map(async (c) => {
      byClass.set(c.id, await ctx.client.all(api(`/classes/${c.id}/attendance/?date=${today}`)));
    }));
  }
  return byClass;
}

const counts = (records) => STATUSES.map((s) => [s, records.filter((r) => r.status === s.value).length]);

function classesPage() {
  const today = isoDay(new Date());
  const body = h("div", { "aria-busy": "true" }, h("p", { class: "muted", text: "Loading…" }));
  const view = h("section", { class: "registers" }, h("h1", { text: "Registers" }),
    h("p", { class: "muted", text: `Today: ${longDay(today)}` }), body);
  view.ready = (async () => {
    const { classes, own } = await myClasses();
    if (!classes.length) {
      body.replaceChildren(h("p", { class: "muted", text: own ? "You have no classes assigned yet. Please ask the school office." : "The school has no classes yet." }));
      return;
    }
    // Today's records, and each class's size (a count, one small request per class).
    const [byClass, sizes] = await Promise.all([todaysRecords(classes, today), Promise.all(classes.map((c) =>
      ctx.client.request("GET", api(`/classes/${c.id}/students/?page_size=1`)).then((page) => page.count).catch(() => null)))]);
    const missing = classes.filter((c) => !byClass.get(c.id).length);
    const tiles = classes.map((c, i) => classTile(c, byClass.get(c.id), sizes[i]));
    const summary = own ? null : h("p", { class: missing.length ? "notice not-taken" : "notice", role: "status",
      text: missing.length
        ? `${missing.length} of ${classes.length} classes have not taken today's register: ${missing.map((c) => c.name).join(", ")}.`
        : `Every class (${classes.length}) has taken today's register.` });
    body.replaceChildren(...[summary, h("div", { class: "register-classes" }, tiles)].filter(Boolean));
  })().catch(failed(body)).finally(() => body.removeAttribute("aria-busy"));
  return view;
}

function classTile(c, records, size) {
  const taken = records.length > 0;
  const exceptions = counts(records).filter(([s, n]) => s.value !== "present" && n);
  const state = taken
    ? `Taken: ${records.length}${size !== null && records.length < size ? ` of ${size}` : ""} recorded${exceptions.length ? ", " + exceptions.map(([s, n]) => `${n} ${s.label.toLowerCase()}`).join(", ") : ", all present"}`
    : "Not taken yet";
  return h("article", { class: `register-class card ${taken ? "taken" : "missing"}`, "data-class": c.id },
    h("h2", {}, c.name, " ", h("span", { class: `badge ${taken ? "ok" : "off"}`, text: taken ? "Taken" : "Not taken" })),
    h("p", { class: "muted state-line", text: state }),
    h("div", { class: "sheet-actions" },
      h("a", { class: "button", href: `#/registers/${c.id}`, text: taken ? "Open today's register" : "Take today's register" }),
      h("a", { href: `#/registers/${c.id}/week`, text: "The week" })));
}

// ---- One day's register ------------------------------------------------------------

function registerPage(classId, date) {
  const body = h("div", { "aria-busy": "true" }, h("p", { class: "muted", text: "Loading…" }));
  const title = h("h1", { text: "Register" });
  const view = h("section", { class: "registers register" },
    crumbs(["Registers", "#/registers"]), title, body);
  view.ready = Promise.all([
    ctx.client.request("GET", api(`/classes/${classId}/`)),
    ctx.client.all(api(`/classes/${classId}/students/`), 100000),
    ctx.client.all(api(`/classes/${classId}/attendance/?date=${date}`), 100000),
  ]).then(([klass, students, records]) => {
    title.textContent = `Register: ${klass.name}`;
    body.replaceChildren(...register(klass, students, records, date));
  }).catch(failed(body)).finally(() => body.removeAttribute("aria-busy"));
  return view;
}

/** The register's parts: the day picker, the rows, the actions. */
function register(klass, students, records, date) {
  const byStudent = new Map(records.map((r) => [r.student, r]));
  // Students no longer in the class keep their record of that day.
  const known = new Set(students.map((s) => s.id));
  const gone = records.filter((r) => !known.has(r.student)).map((r) => ({ id: r.student, first_name: "Former student", last_name: "", admission_number: "" }));
  const rows = [...students, ...gone].map((s) => row(s, byStudent.get(s.id) || null));
  rows.forEach((r) => { r.inClass = known.has(r.student.id); });
  const state = { taken: records.length > 0, rows, klass, date };
  // Once taken, a student without a record (one who joined since) is shown as such, not
  // as present: a tap records them.
  if (state.taken) {
    rows.filter((r) => !r.record).forEach((r) => {
      r.status = null;
      show(r);
      r.saved.textContent = "Not recorded";
    });
  }
  const status = h("p", { class: "state", role: "status" });
  const save = h("button", { type: "button", class: "save-register", text: "Save register" });
  const banner = h("p", { class: "register-mode muted" });
  const tally = h("p", { class: "summary tally" });
  const refresh = () => {
    banner.textContent = state.taken
      ? "Taken. A change to a student is saved at once as a correction."
      : "Not taken yet: everyone is present until you mark an exception. Keys: P, A, L, E on a row; ↑ ↓ to move.";
    save.hidden = state.taken;
    tally.replaceChildren(...counts(rows.map((r) => ({ status: r.status }))).map(([s, n]) => h("span", {}, `${s.label}: `, h("b", { text: String(n) }))));
  };
  for (const r of rows) {
    r.changed = () => {
      refresh();
      if (state.taken) correct(r, state);
    };
  }
  save.addEventListener("click", () => takeRegister(state, save, status, refresh));
  const picker = h("input", { type: "date", value: date, max: isoDay(new Date()) });
  picker.addEventListener("change", () => { if (validDay(picker.value)) location.hash = `#/registers/${klass.id}?date=${picker.value}`; });
  const table = h("table", { class: "register-table" },
    h("thead", {}, h("tr", {}, h("th", { text: "Student" }), h("th", { text: "Status" }), h("th", { text: "Note" }))),
    h("tbody", { onkeydown: (event) => keyed(event, rows) }, rows.map((r) => r.tr)));
  refresh();
  return [
    h("div", { class: "register-head" },
      h("p", { class: "day-line" }, h("b", { text: longDay(date) })),
      h("label", { class: "day-pick" }, "Another day", picker),
      h("a", { href: `#/registers/${klass.id}/week?to=${date}`, text: "The week" })),
    banner, tally,
    rows.length ? table : h("p", { class: "muted", text: "This class has no students." }),
    h("div", { class: "sheet-actions" }, rows.length ? save : null, status),
  ];
}

/** One student's row: the status buttons, the note, and its saved state. */
function row(student, record) {
  const r = { student, record, status: record ? record.status : "present", note: record ? record.note || "" : "" };
  const name = nameOf(student).trim();
  const buttons = STATUSES.map((s) => {
    const b = h("button", { type: "button", class: `status status-${s.value}`, "data-status": s.value, title: `${s.label} (${s.key.toUpperCase()})`, text: s.label });
    b.addEventListener("click", () => set(r, s.value));
    return b;
  });
  const note = h("input", { type: "text", class: "note", maxlength: "500", placeholder: "Note", "aria-label": `Note for ${name}`, value: r.note });
  note.addEventListener("change", () => { r.note = note.value.trim(); r.changed(); });
  r.saved = h("span", { class: "state" });
  r.buttons = buttons;
  r.noteInput = note;
  r.tr = h("tr", { "data-student": student.id },
    h("td", { class: "who" }, h("span", { class: "name", text: name }),
      student.admission_number ? h("small", { class: "muted", text: ` ${student.admission_number}` }) : null),
    h("td", {}, h("div", { class: "statuses", role: "group", "aria-label": name }, buttons)),
    h("td", { class: "note-cell" }, note, r.saved));
  show(r);
  return r;
}

function show(r) {
  r.buttons.forEach((b) => b.setAttribute("aria-pressed", String(b.dataset.status === r.status)));
  r.tr.dataset.status = r.status || "none";
  // A note where it helps: for an exception, or one already written.
  r.noteInput.hidden = (!r.status || r.status === "present") && !r.note;
}

function set(r, status) {
  if (r.status === status) return;
  r.status = status;
  show(r);
  r.changed();
}

/** P/A/L/E set the focused row's status; the arrows and Enter move between rows. */
function keyed(event, rows) {
  if (event.target.matches("input") || event.ctrlKey || event.metaKey || event.altKey) return;
  const index = rows.findIndex((r) => r.tr.contains(event.target));
  if (index < 0) return;
  const key = event.key.toLowerCase();
  const status = STATUSES.find((s) => s.key === key);
  const focusRow = (i) => {
    const target = rows[Math.max(0, Math.min(rows.length - 1, i))];
    (target.buttons.find((b) => b.dataset.status === target.status) || target.buttons[0]).focus();
  };
  if (status) {
    event.preventDefault();
    set(rows[index], status.value);
    rows[index].buttons.find((b) => b.dataset.status === status.value).focus();
  } else if (key === "arrowdown" || key === "j") {
    event.preventDefault();
    focusRow(index + 1);
  } else if (key === "arrowup" || key === "k") {
    event.preventDefault();
    focusRow(index - 1);
  } else if (key === "n" && rows[index].status !== "present") {
    event.preventDefault();
    rows[index].noteInput.focus();
  }
}

/** The whole class in one take. */
async function takeRegister(state, save, status, refresh) {
  save.disabled = true;
  status.className = "state";
  status.textContent = "Saving…";
  const records = state.rows.filter((r) => r.inClass).map((r) => ({ student: r.student.id, status: r.status, note: r.note || null }));
  try {
    const saved = await ctx.client.request("POST", api(`/classes/${state.klass.id}/attendance/`), { date: state.date, records });
    const byStudent = new Map(saved.map((rec) => [rec.student, rec]));
    state.rows.forEach((r) => { r.record = byStudent.get(r.student.id) || r.record; });
    state.taken = true;
    status.className = "state saved";
    const absent = saved.filter((rec) => rec.status !== "present").length;
    status.textContent = `Register saved: ${saved.length} students, ${absent ? `${absent} not present` : "all present"}.`;
    refresh();
  } catch (problem) {
    status.className = "state error";
    const detail = Object.entries(problem.errors || {}).map(([field, messages]) => `${field}: ${messages.join(" ")}`).join(" ");
    status.textContent = `Not saved: ${detail || problem.message}`;
  } finally {
    save.disabled = false;
  }
}

/** One student's correction, saved at once. */
async function correct(r, state) {
  r.saved.className = "state unsaved";
  r.saved.textContent = "Saving…";
  const values = { status: r.status, note: r.note || null };
  try {
    r.record = r.record
      ? await ctx.client.request("PATCH", api(`/attendance/${r.record.id}/`), values)
      : await ctx.client.request("POST", api("/attendance/"), { student: r.student.id, academic_class: state.klass.id, date: state.date, ...values });
    r.saved.className = "state saved";
    r.saved.textContent = "Corrected";
  } catch (problem) {
    r.saved.className = "state error";
    r.saved.textContent = `Not saved: ${problem.message}`;
  }
}

// ---- The week ----------------------------------------------------------------------

function weekPage(classId, to) {
  const from = shift(to, -6);
  const days = Array.from({ length: 7 }, (_, i) => shift(from, i));
  const body = h("div", { "aria-busy": "true" }, h("p", { class: "muted", text: "Loading…" }));
  const title = h("h1", { text: "The week" });
  const view = h("section", { class: "registers week" }, crumbs(["Registers", "#/registers"]), title, body);
  view.ready = Promise.all([
    ctx.client.request("GET", api(`/classes/${classId}/`)),
    ctx.client.all(api(`/classes/${classId}/students/`), 100000),
    ctx.client.all(api(`/classes/${classId}/attendance/?date_from=${from}&date_to=${to}`), 100000),
  ]).then(([klass, students, records]) => {
    title.textContent = `The week: ${klass.name}`;
    const cell = new Map(records.map((r) => [`${r.student}|${r.date}`, r]));
    const taken = new Set(records.map((r) => r.date));
    const short = (iso) => dayOf(iso).toLocaleDateString(undefined, { weekday: "short", day: "numeric" });
    const weekend = (iso) => [0, 6].includes(dayOf(iso).getDay());
    const head = h("tr", {}, h("th", { text: "Student" }), days.map((d) => h("th", { scope: "col", class: weekend(d) ? "weekend" : null },
      h("a", { href: `#/registers/${klass.id}?date=${d}`, title: `The register of ${longDay(d)}`, text: short(d) }))));
    const lines = students.map((s) => h("tr", { "data-student": s.id }, h("th", { scope: "row", text: nameOf(s) }),
      days.map((d) => {
        const r = cell.get(`${s.id}|${d}`);
        return h("td", { class: `${r ? `mark-${r.status}` : "none"}${weekend(d) ? " weekend" : ""}`, title: r ? `${STATUSES.find((x) => x.value === r.status).label}${r.note ? `: ${r.note}` : ""}` : "not recorded", text: r ? LETTER[r.status] : "·" });
      })));
    const foot = h("tr", { class: "taken-row" }, h("th", { scope: "row", text: "Register" }),
      days.map((d) => h("td", { class: taken.has(d) ? "yes" : "no", text: taken.has(d) ? "✓" : "–" })));
    body.replaceChildren(
      h("div", { class: "register-head" },
        h("a", { href: `#/registers/${klass.id}/week?to=${shift(to, -7)}`, text: "← Earlier" }),
        h("span", { class: "muted range", text: `${shortDay(from)} to ${shortDay(to)}` }),
        h("a", { href: `#/registers/${klass.id}/week?to=${shift(to, 7)}`, text: "Later →" })),
      h("p", { class: "muted legend", text: "P present, A absent, L late, E excused; a dot: not recorded. A day's heading opens that day's register." }),
      h("div", { class: "table-wrap" }, h("table", { class: "week-grid" }, h("thead", {}, head), h("tbody", {}, lines, foot))));
  }).catch(failed(body)).finally(() => body.removeAttribute("aria-busy"));
  return view;
}
