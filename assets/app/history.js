// History (API.md 11): who changed a record, when and how, newest first, in a dialog:
// from a mark on the marks sheet (`?record=`, the mark's own entries) and from a student on
// the students page (`?student=`, everything about them: their record, marks, attendance,
// enrollments). Shown only to users holding `view_history`.
import { h, dialog } from "/app/shared.js";
import { ctx, api } from "/app/resources.js";

/** Whether the signed-in user may read history. */
export const canSeeHistory = () => ctx.me.can("view", "history");

/** How many entries the dialog shows (the newest). */
const SHOWN = 50;

const ACTORS = { user: "user", api_key: "API key", oauth_client: "integration client", system: "system" };

/** A field's value as the entry shows it ("—" for none). */
const shown = (value) => (value === null || value === undefined ? "—"
  : typeof value === "object" ? JSON.stringify(value) : String(value));

/** Fields that say nothing a reader asked about (they change with every write). */
const QUIET = new Set(["updated_at", "updated_by"]);

function entryView(entry) {
  const changes = Object.entries(entry.changes || {}).filter(([name]) => !QUIET.has(name));
  const actor = entry.actor || {};
  return h("li", { class: "history-entry", "data-action": entry.action, "data-resource": entry.resource },
    h("p", { class: "history-head" },
      h("time", { datetime: entry.at, text: new Date(entry.at).toLocaleString() }), " · ",
      h("span", { class: "history-actor", text: actor.name || "(unknown)" }),
      h("span", { class: "muted", text: ` (${ACTORS[actor.type] || actor.type})` }), " · ",
      h("b", { text: `${entry.resource.replace(/_/g, " ")} ${entry.action}` })),
    changes.length ? h("ul", { class: "history-changes" }, changes.map(([name, pair]) =>
      h("li", { "data-field": name }, h("code", { text: name }), `: ${shown(pair[0])} → ${shown(pair[1])}`))) : null);
}

/** Opens the history of `about` (`{record: id}` or `{student: id}`) under `title`. */
export function openHistory(title, about) {
  const body = h("div", { class: "history", "aria-live": "polite" }, h("p", { class: "muted", text: "Loading the history…" }));
  dialog(title, [body], async () => {}, "Close");
  // Nothing to cancel: the one way out is Close (shown again for the next dialog).
  const cancel = document.getElementById("dialog-cancel");
  cancel.hidden = true;
  document.getElementById("dialog").addEventListener("close", () => { cancel.hidden = false; }, { once: true });
  const params = new URLSearchParams({ ...about, page: 1, page_size: SHOWN });
  ctx.client.request("GET", api(`/history/?${params}`)).then((page) => {
    const shownAll = page.count <= page.results.length;
    body.replaceChildren(...[
      page.results.length
        ? h("ol", { class: "history-list", "aria-label": "Changes, newest first" }, page.results.map(entryView))
        : h("p", { class: "muted", text: "No changes are recorded." }),
      shownAll ? null : h("p", { class: "muted", text: `The ${page.results.length} newest of ${page.count} changes.` }),
    ].filter(Boolean));
  }).catch((problem) => body.replaceChildren(h("p", { class: "form-error", role: "alert", text: problem.message })));
}

/** A "History" button for `about`, named for screen readers after `whose`. */
export function historyButton(whose, about) {
  return h("button", { type: "button", class: "secondary small history-button", text: "History",
    "aria-label": `History of ${whose}`, onclick: () => openHistory(`History of ${whose}`, about) });
}
