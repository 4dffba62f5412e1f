// What a TypeScript client written against the generated description looks like; `tsc
// --noEmit` fails when an operation, a body or a field it relies on changes shape.
import type { components, operations } from "./generated/api";

type Schemas = components["schemas"];

const login: Schemas["SchoolLoginRequest"] = { identifier: "admin@alpha.test", password: "secret" };

const newSession: Schemas["CreateSessionRequest"] = {
  name: "2026/27",
  start_date: "2026-09-01",
  end_date: "2027-07-15",
};

const patch: Schemas["UpdateSessionRequest"] = { name: "2026-27" };

const mark: Schemas["ConfirmStudentMarksRequest"] = { studentadmissionnumber: "A-1", mark: 72 };

type SessionPage = operations["listSessions"]["responses"][200]["content"]["application/json"];
type Problem = Schemas["Problem"];

function firstSessionName(page: SessionPage): string | undefined {
  return page.results[0]?.name;
}

function fieldErrors(problem: Problem): string[] {
  return Object.entries(problem.errors ?? {}).flatMap(([field, messages]) =>
    messages.map((message) => `${field}: ${message}`),
  );
}

async function createSession(base: string, token: string): Promise<Schemas["AcademicSessionCreated"]> {
  const res = await fetch(`${base}/api/v1/school/sessions/`, {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
    body: JSON.stringify(newSession),
  });
  if (!res.ok) {
    throw new Error(fieldErrors((await res.json()) as Problem).join("; "));
  }
  return (await res.json()) as Schemas["AcademicSessionCreated"];
}

export { login, patch, mark, firstSessionName, createSession };
