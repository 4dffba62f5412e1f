// Settings: general (the school's name and contacts), academic (pass mark, maximum mark,
// terms and the grading scale, edited band by band) and report settings. General and
// academic settings are collections of which a school keeps one record: the first is
// edited, or created when there is none.
import { h, field, clearErrors, showProblem } from "/app/shared.js";
import { ctx, api, formFields, readForm } from "/app/resources.js";
import { forgetScale } from "/app/marks.js";

const GENERAL = [
  { name: "school_name", label: "School name", type: "text" }, { name: "address", label: "Address", type: "text" },
  { name: "phone", label: "Phone", type: "text" }, { name: "email", label: "E-mail", type: "text", required: true },
];
const ACADEMIC = [
  { name: "pass_mark", label: "Pass mark (0-1000)", type: "number" }, { name: "max_mark", label: "Maximum mark (1-1000)", type: "number" },
  { name: "terms_per_session", label: "Terms per session (1-6)", type: "number" },
];
const REPORT = [
  { name: "show_position", label: "Show each student's position", type: "bool" },
  { name: "show_class_average", label: "Show the class average", type: "bool" },
  { name: "show_teacher_comments", label: "Show teachers' comments", type: "bool" },
  { name: "principal_signature", label: "Principal's name (printed on the report cards' signature line)", type: "text" },
  { name: "footer_text", label: "Footer text", type: "text" },
];

export const canSeeSettings = (me) => ["generalsettings", "academicsettings", "reportsettings"].some((r) => me.can("change", r));

export function settingsPage() {
  const { me } = ctx;
  const wrap = h("div", {}, h("h1", { text: "Settings" }));
  if (me.can("change", "generalsettings")) wrap.append(card("General", "generalsettings", "/general-settings/", GENERAL, true));
  if (me.can("change", "academicsettings")) wrap.append(card("Academic", "academicsettings", "/academic-settings/", ACADEMIC, true, scaleEditor));
  if (me.can("change", "reportsettings")) wrap.append(card("Report", "reportsettings", "/report-settings/", REPORT, false));
  return wrap;
}

/** One settings form; `collection`: the first record of a list, else the path itself. */
function card(title, perm, path, fields, collection, extra) {
  const { client, me } = ctx;
  const form = h("form", { class: "card", novalidate: true, "aria-label": `${title} settings` }, h("h2", { text: `${title} settings` }), h("p", { class: "muted", text: "Loading…" }));
  (async () => {
    let record = null;
    if (collection) {
      const answer = await client.request("GET", `${api(path)}?page_size=1`);
      record = answer.results[0] || null;
    } else {
      record = await client.request("GET", api(path));
    }
    const more = extra ? extra(record) : null;
    const saved = h("p", { class: "notice", role: "status", hidden: true });
    const canSave = record || me.can("add", perm);
    // replaceChildren writes a null as the text "null": only nodes are passed.
    form.replaceChildren(...[h("h2", { text: `${title} settings` }), saved, h("div", { class: "grid" }, formFields(fields, record, {})),
      more ? more.element : null,
      h("p", { class: "form-error", role: "alert", hidden: true }),
      canSave ? h("button", { type: "submit", text: `Save ${title.toLowerCase()} settings` }) : null].filter(Boolean));
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      clearErrors(form);
      saved.hidden = true;
      const body = { ...readForm(form, fields, null), ...(more ? more.read() : {}) };
      try {
        const target = !collection ? api(path) : record ? `${api(path)}${record.id}/` : api(path);
        record = await client.request(collection && !record ? "POST" : "PATCH", target, body);
        // A new grading scale grades every mark shown from now on (marks sheets included).
        if (perm === "academicsettings") forgetScale();
        saved.textContent = "Saved.";
        saved.hidden = false;
      } catch (problem) { showProblem(form, problem); }
    });
  })().catch((problem) => form.append(h("p", { class: "form-error", role: "alert", text: problem.message })));
  return form;
}

/** The grading scale as rows of symbol, from and to; rows can be added and removed. */
function scaleEditor(record) {
  const rows = h("div", { class: "scale" });
  const addRow = (band = { symbol: "", min: "", max: "" }) => {
    const row = h("div", { class: "scale-row", "data-band": "" },
      field("Symbol", "band_symbol", { value: band.symbol, maxlength: 10, autocomplete: "off" }),
      field("From", "band_min", { type: "number", value: band.min }),
      field("To", "band_max", { type: "number", value: band.max }),
      h("button", { type: "button", class: "secondary small", text: "Remove", "aria-label": `Remove band ${band.symbol}`, onclick: () => row.remove() }));
    rows.append(row);
  };
  ((record && record.grading_scale) || []).forEach(addRow);
  const element = h("fieldset", { "data-field": "grading_scale" }, h("legend", { text: "Grading scale" }), rows,
    h("button", { type: "button", class: "secondary small", text: "Add a band", onclick: () => addRow() }),
    h("span", { class: "field-error", "data-error-for": "grading_scale", hidden: true }));
  const read = () => ({
    grading_scale: [...rows.querySelectorAll("[data-band]")].map((row) => ({
      symbol: row.querySelector("[name=band_symbol]").value.trim(),
      min: Number(row.querySelector("[name=band_min]").value),
      max: Number(row.querySelector("[name=band_max]").value),
    })),
  });
  return { element, read };
}

