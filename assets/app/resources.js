// One list-and-form component for the school resources, driven by a short description
// of each (its path, columns and fields), and what the other pages share with it: who is
// signed in (`ctx`), names of referenced records, form fields read and written by type.
import { h, field, checkbox, selectField, dialog, listView, query, day } from "/app/shared.js";
import { canSeeHistory, historyButton } from "/app/history.js";

/** The API client, the signed-in user (`me.can(action, resource)`) and the API's base. */
export const ctx = { client: null, me: null, API: "" };
export function setContext(values) { Object.assign(ctx, values); }
export const api = (path) => `${ctx.API}${path}`;

// ---- Messages a person understands -------------------------------------------------

/** The live-unique indexes of school tables: the sentence a clash reads as, and its field. */
const CLASHES = {
  students_live_admission_number: ["admission_number", "Another student already has this admission number."],
  academic_classes_live_name: ["name", "Another class already has this name."],
  subjects_live_code: ["code", "Another subject already has this code."],
  teacher_assignments_live_triple: [null, "This teacher is already assigned to teach this subject to this class."],
  exams_live_session_subject_class: [null, "This class already has an exam in this subject in this exam session."],
  marks_live_exam_student: [null, "This student already has a mark for this exam."],
  attendance_live_student_date: [null, "This student already has an attendance record for that day."],
  enrollments_live_student_session: [null, "This student is already enrolled in that school year."],
  report_remarks_live: [null, "This student already has a remark for this exam session."],
};

/** A field's name as words: `start_date` → "start date". */
const words = (name) => name.replace(/_/g, " ");

/** One message as a sentence: capital first, field names as words ("the start date"), a full stop. */
export function sentence(message) {
  const text = String(message).trim()
    .replace(/\b(before|after|than|at least|at most) ([a-z]+(?:_[a-z]+)+)\b/g, (_, word, name) => `${word} the ${words(name)}`)
    .replace(/\b([a-z]+(?:_[a-z]+)+)\b/g, (name) => words(name));
  if (!text) return text;
  const capital = text[0].toUpperCase() + text.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
}

/** Rewrites an API problem's messages for a person (apiClient's `humane`): a clash with an
 * existing record names what clashed, on its field; other messages become sentences. */
export function humaneProblem(problem) {
  const clash = /^a record with these values already exists \((\w+)\)/.exec(problem.message || "");
  if (clash) {
    const [field, text] = CLASHES[clash[1]] || [null, "Another record already has these values."];
    problem.message = text;
    if (field) problem.errors = { ...problem.errors, [field]: [text] };
    return;
  }
  for (const [name, messages] of Object.entries(problem.errors || {})) problem.errors[name] = messages.map(sentence);
  if (problem.status >= 400 && problem.status < 500 && /^[a-z]/.test(problem.message || "")) problem.message = sentence(problem.message);
}

// ---- Names of referenced records ---------------------------------------------------

/** What a reference field can point at: where the records are and how one is named. */
const REFS = {
  teachers: { path: "/teachers/", perm: "teacherprofile", label: (t) => t.staff_number ? `${t.name} (${t.staff_number})` : t.name },
  subjects: { path: "/subjects/", perm: "subject", label: (s) => `${s.name} (${s.code})` },
  classes: { path: "/classes/", perm: "academicclass", label: (c) => c.name },
  departments: { path: "/departments/", perm: "department", label: (d) => d.name },
  // The users API names roles by name, not id.
  roles: { path: "/roles/", perm: "schoolrole", label: (r) => r.name, key: (r) => r.name },
  students: { path: "/students/", perm: "student", label: (s) => `${s.first_name} ${s.last_name} (${s.admission_number})` },
};

/** Maps id → name for each of `names` the user may view (one request per list page). */
export async function loadRefs(names = []) {
  const lookups = {};
  await Promise.all(names.map(async (name) => {
    const ref = REFS[name];
    lookups[name] = new Map();
    if (!ctx.me.can("view", ref.perm)) return;
    const records = await ctx.client.all(api(ref.path));
    records.forEach((r) => lookups[name].set(ref.key ? ref.key(r) : r.id, ref.label(r)));
  }));
  return lookups;
}

export const named = (lookup, id) => (id ? lookup.get(id) || "(unknown)" : "—");

// ---- Forms -------------------------------------------------------------------------

/** Whether field `f` is on the form of `record` (a new record when null). */
const onForm = (f, record) => !(f.createOnly && record) && !(f.editOnly && !record);

/**
 * Inputs for `fields` ({name, label, type: text|password|number|date|ref|refs|bool|textarea,
 * ref, required, createOnly, editOnly, omitEmpty}) holding `record`'s values (a new record
 * when null).
 */
export function formFields(fields, record, lookups) {
  return fields.filter((f) => onForm(f, record)).map((f) => {
    const value = record ? record[f.name] : f.default;
    const required = f.required ? { required: true } : {};
    switch (f.type) {
      case "ref": {
        const options = [["", f.required ? "Choose…" : "None"], ...lookups[f.ref]];
        return selectField(f.label, f.name, options, value, required);
      }
      case "refs": {
        const chosen = new Set(value || []);
        return h("fieldset", { "data-field": f.name }, h("legend", { text: f.label }),
          [...lookups[f.ref]].map(([id, text]) => checkbox(text, f.name, { value: id, checked: chosen.has(id) })),
          h("span", { class: "field-error", "data-error-for": f.name, hidden: true }));
      }
      case "choice": {
        // A fixed list ([value, text] pairs); a value not in it (an older record's) is kept.
        const options = [["", "Choose…"], ...f.options];
        if (value && !f.options.some(([v]) => String(v) === String(value))) options.push([value, String(value)]);
        return selectField(f.label, f.name, options, value, required);
      }
      case "bool":
        return h("div", {}, checkbox(f.label, f.name, { checked: !!value }),
          h("span", { class: "field-error", "data-error-for": f.name, hidden: true }));
      case "number":
        return field(f.label, f.name, { type: "number", inputmode: "numeric", value: value ?? "", ...required });
      case "date":
        return field(f.label, f.name, { type: "date", value: value ? day(value) : "", ...required });
      case "password":
        return field(f.label, f.name, { type: "password", autocomplete: "new-password", value: "" });
      default:
        return field(f.label, f.name, { value: value ?? "", autocomplete: "off", ...required });
    }
  });
}

/** The body for `fields` as the form holds them (empty optional values are null). */
export function readForm(form, fields, record) {
  const body = {};
  for (const f of fields) {
    if (!onForm(f, record)) continue;
    if (f.type === "refs") {
      body[f.name] = [...form.querySelectorAll(`input[name="${f.name}"]:checked`)].map((i) => i.value);
      continue;
    }
    const input = form.elements[f.name];
    if (f.type === "bool") { body[f.name] = input.checked; continue; }
    const raw = input.value.trim();
    if (raw === "" && f.omitEmpty) continue;
    if (f.type === "number") body[f.name] = raw === "" ? (f.required ? raw : null) : Number(raw);
    else if (raw === "" && !f.required) body[f.name] = f.type === "text" && !f.nullable ? "" : null;
    else body[f.name] = raw;
  }
  return body;
}

/** Create or edit `desc`'s record in the dialog; resolves after a successful save. */
export function editDialog(desc, lookups, record, path, saved) {
  const title = record ? `Edit ${desc.singular}` : `New ${desc.singular}`;
  // A resource may make its new records its own way (a teacher: account and profile).
  const fields = !record && desc.newFields ? desc.newFields : desc.fields;
  // What a create does beyond the record, said before it happens (a new session is active).
  const warning = !record && desc.createWarning ? [h("p", { class: "notice", role: "note", text: desc.createWarning })] : [];
  dialog(title, [...warning, ...formFields(fields, record, lookups)], async (form) => {
    const body = readForm(form, fields, record);
    const answer = record
      ? await ctx.client.request("PATCH", `${path}${record.id}/`, body)
      : desc.create ? await desc.create(body) : await ctx.client.request("POST", path, body);
    await saved(answer);
  }, record ? "Save" : desc.createLabel || "Create");
}

export function confirmDelete(desc, record, path, done) {
  dialog(`Delete ${desc.singular}`, [h("p", { text: `Delete "${desc.label(record)}"? It is kept as deleted and no longer listed.` })],
    async () => { await ctx.client.request("PATCH", `${path}${record.id}/`, { is_deleted: true }); await done(); }, "Delete", true);
}

// ---- The generic page --------------------------------------------------------------

/** Breadcrumbs: [text, href] pairs, the last one plain. */
export function crumbs(...items) {
  return h("p", { class: "crumbs" }, items.map(([text, href], i) =>
    [i ? " › " : "", href ? h("a", { href, text }) : h("span", { text })]));
}

/**
 * The list of a resource with search and pages; create, edit and delete buttons only for
 * the permissions the user holds; with `bulkDelete`, a selection and "Delete selected".
 */
export function resourcePage(desc, params = new URLSearchParams()) {
  const wrap = h("div", {}, h("p", { class: "muted", text: "Loading…" }));
  loadRefs(desc.refs).then((lookups) => wrap.replaceChildren(resourceList(desc, lookups, params)))
    .catch((problem) => wrap.replaceChildren(h("p", { class: "form-error", role: "alert", text: problem.message })));
  return wrap;
}

function resourceList(desc, lookups, params) {
  const { me } = ctx;
  const path = api(desc.path);
  const canAdd = me.can("add", desc.perm), canChange = me.can("change", desc.perm), canDelete = me.can("delete", desc.perm);
  const selected = new Set();
  const bulk = desc.bulkDelete && canDelete;
  // A resource that keeps history (`desc.history`: what to ask it for) shows it to those who may read it.
  const withHistory = desc.history && canSeeHistory();
  const actions = canChange || canDelete || withHistory;
  const columns = [...(bulk ? ["Select"] : []), ...desc.columns.map(([label]) => label), ...(actions ? [""] : [])];
  const toolbar = [];
  let list;
  if (canAdd) {
    toolbar.push(h("button", { type: "button", text: `New ${desc.singular}`, onclick: () =>
      editDialog(desc, lookups, null, path, (made) => list.created(desc.createdText ? desc.createdText(made, lookups) : `${cap(desc.singular)} "${desc.label(made, lookups)}" created.`, made)) }));
  }
  if (bulk) {
    const remove = h("button", { type: "button", class: "danger", text: "Delete selected", onclick: () => {
      if (!selected.size) return;
      dialog(`Delete ${selected.size} ${desc.title.toLowerCase()}`, [h("p", { text: "They are kept as deleted and no longer listed." })], async () => {
        const answer = await ctx.client.request("DELETE", `${path}bulk-soft-delete/`, { ids: [...selected] });
        selected.clear();
        await list.refresh();
        list.view.querySelector(".notice").hidden = false;
        list.view.querySelector(".notice").textContent = `${answer.count} deleted.`;
      }, "Delete", true);
    } });
    toolbar.push(remove);
  }
  const row = (record, refresh) => h("tr", { "data-id": record.id, "data-name": desc.label(record, lookups) },
    bulk ? h("td", {}, h("input", { type: "checkbox", "aria-label": `Select ${desc.label(record, lookups)}`, checked: selected.has(record.id),
      onchange: (e) => (e.target.checked ? selected.add(record.id) : selected.delete(record.id)) })) : null,
    // A column with a link (a class's name opens its students).
    desc.columns.map(([, value, link]) => (link
      ? h("td", {}, h("a", { href: link(record), text: value(record, lookups) }))
      : h("td", { text: value(record, lookups) }))),
    actions ? h("td", { class: "row-actions" }, h("div", { class: "actions" },
      withHistory ? historyButton(desc.label(record, lookups), desc.history(record)) : null,
      canChange ? h("button", { type: "button", class: "secondary small", text: "Edit", onclick: () => editDialog(desc, lookups, record, path, refresh) }) : null,
      canDelete ? h("button", { type: "button", class: "danger small", text: "Delete", onclick: () => confirmDelete(desc, record, path, refresh) }) : null)) : null);
  // A filter by a referenced record lists from that record's own sub-list.
  // The address may name the filter's record (`#/students?class=<id>`).
  const chosen = desc.filter ? params.get(desc.filter.param) : null;
  const filter = desc.filter ? h("select", { name: desc.filter.ref, "data-label": desc.filter.label, "aria-label": `Filter by ${desc.filter.label.toLowerCase()}` },
    h("option", { value: "", text: "All" }), [...lookups[desc.filter.ref]].map(([id, text]) => h("option", { value: id, text, selected: id === chosen }))) : null;
  list = listView({
    title: desc.title, columns, row, toolbar, filters: filter ? [filter] : [],
    load: (page, search) => {
      const from = filter && filter.value ? api(desc.filter.path(filter.value)) : path;
      return ctx.client.request("GET", `${from}${query(page, search)}`);
    },
  });
  return h("div", {}, desc.intro ? h("p", { class: "muted", text: desc.intro }) : null, list.view);
}

const cap = (s) => s[0].toUpperCase() + s.slice(1);

// ---- The descriptions --------------------------------------------------------------

const text = (name, label, extra = {}) => ({ name, label, type: "text", ...extra });

export const RESOURCES = {
  departments: {
    nav: "Departments", title: "Departments", singular: "department", perm: "department", path: "/departments/",
    refs: ["teachers", "subjects"], label: (d) => d.name,
    columns: [["Name", (d) => d.name], ["Head", (d, L) => named(L.teachers, d.hod)], ["Subject", (d, L) => named(L.subjects, d.subject)],
      ["Teachers", (d, L) => d.teachers.map((id) => named(L.teachers, id)).join(", ") || "—"]],
    fields: [text("name", "Name", { required: true }), { name: "hod", label: "Head of department", type: "ref", ref: "teachers", required: true },
      { name: "subject", label: "Subject", type: "ref", ref: "subjects", required: true }, { name: "teachers", label: "Teachers", type: "refs", ref: "teachers" }],
  },
  subjects: {
    nav: "Subjects", title: "Subjects", singular: "subject", perm: "subject", path: "/subjects/", bulkDelete: true,
    refs: ["departments"], label: (s) => s.name,
    columns: [["Name", (s) => s.name], ["Code", (s) => s.code], ["Department", (s, L) => named(L.departments, s.department)]],
    fields: [text("name", "Name", { required: true }), text("code", "Code", { required: true }),
      { name: "department", label: "Department", type: "ref", ref: "departments" }],
  },
  classes: {
    nav: "Classes", title: "Classes", singular: "class", perm: "academicclass", path: "/classes/",
    refs: [], label: (c) => c.name,
    columns: [["Name", (c) => c.name, (c) => `#/students?class=${c.id}`], ["Level", (c) => c.level ?? "—"]],
    fields: [text("name", "Name", { required: true }), { name: "level", label: "Level (0-100)", type: "number" }],
  },
  students: {
    nav: "Students", title: "Students", singular: "student", perm: "student", path: "/students/",
    refs: ["classes"], label: (s) => `${s.first_name} ${s.last_name}`, history: (s) => ({ student: s.id }),
    filter: { label: "Class", ref: "classes", param: "class", path: (id) => `/classes/${id}/students/` },
    columns: [["Admission no.", (s) => s.admission_number], ["First name", (s) => s.first_name], ["Last name", (s) => s.last_name],
      ["Class", (s, L) => named(L.classes, s.academic_class)]],
    fields: [text("admission_number", "Admission number", { required: true }), text("first_name", "First name", { required: true }),
      text("last_name", "Last name", { required: true }), { name: "academic_class", label: "Class", type: "ref", ref: "classes" }],
  },
  teachers: {
    nav: "Teachers", title: "Teachers", singular: "teacher", perm: "teacherprofile", path: "/teachers/",
    refs: [], label: (t) => t.name,
    intro: "A new teacher gets a sign-in account (e-mail or phone, and a password) and a teacher profile in one step.",
    columns: [["Name", (t) => t.name], ["Staff number", (t) => t.staff_number || "—"]],
    fields: [text("staff_number", "Staff number", { nullable: true })],
    newFields: [text("first_name", "First name", { required: true }), text("last_name", "Last name", { required: true }),
      text("email", "E-mail", { nullable: true }), text("phone", "Phone", { nullable: true }),
      { name: "password", label: "Password (at least 8 characters; empty: set later)", type: "password", omitEmpty: true },
      text("staff_number", "Staff number", { nullable: true })],
    /** The account with the teacher role and profile (`/users/`), then the staff number. */
    create: async ({ staff_number, ...account }) => {
      const user = await ctx.client.request("POST", api("/users/"), { ...account, roles: ["teacher"], teacher: true });
      const profile = api(`/teachers/${user.teacher}/`);
      return staff_number ? ctx.client.request("PATCH", profile, { staff_number }) : ctx.client.request("GET", profile);
    },
  },
  assignments: {
    nav: "Assignments", title: "Teacher assignments", singular: "assignment", perm: "teacherassignment", path: "/teacher-assignments/",
    refs: ["teachers", "classes", "subjects"],
    label: (a, L) => (L ? `${named(L.teachers, a.teacher)} teaching ${named(L.subjects, a.subject)} to ${named(L.classes, a.academic_class)}` : "the assignment"),
    createdText: (a, L) => `Assignment created: ${named(L.teachers, a.teacher)} teaches ${named(L.subjects, a.subject)} to ${named(L.classes, a.academic_class)}.`,
    columns: [["Teacher", (a, L) => named(L.teachers, a.teacher)], ["Class", (a, L) => named(L.classes, a.academic_class)], ["Subject", (a, L) => named(L.subjects, a.subject)]],
    fields: [{ name: "teacher", label: "Teacher", type: "ref", ref: "teachers", required: true },
      { name: "academic_class", label: "Class", type: "ref", ref: "classes", required: true },
      { name: "subject", label: "Subject", type: "ref", ref: "subjects", required: true }],
  },
  "grade-comments": {
    nav: "Grade comments", title: "Grade comments", singular: "grade comment", perm: "teachergradecomment", path: "/teacher-grade-comments/",
    refs: ["teachers"], label: (g) => `${g.grade}: ${g.comment}`,
    columns: [["Grade", (g) => g.grade], ["Marks", (g) => `${g.min_mark}–${g.max_mark}`], ["Comment", (g) => g.comment],
      ["Teacher", (g, L) => (g.teacher ? named(L.teachers, g.teacher) : "Whole school")]],
    fields: [text("grade", "Grade", { required: true }), { name: "min_mark", label: "From mark", type: "number", required: true },
      { name: "max_mark", label: "To mark", type: "number", required: true }, text("comment", "Comment", { required: true }),
      { name: "teacher", label: "Teacher (none: the whole school)", type: "ref", ref: "teachers" }],
  },
};
