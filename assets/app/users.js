// The school's own accounts (`/users/`, API.md 12): who may sign in, with which roles;
// a new account may be a teacher (with a profile) or a student's (linked to the record).
// Listed and edited by the generic resource page; users are deactivated, never deleted.
import { named } from "/app/resources.js";

const text = (name, label, extra = {}) => ({ name, label, type: "text", ...extra });
const fullName = (u) => `${u.first_name} ${u.last_name}`.trim() || u.email || u.phone;
const lastSeen = (u) => (u.last_login ? new Date(u.last_login).toLocaleString() : "never");

export const USERS = {
  nav: "Users", title: "Users", singular: "user", perm: "user", path: "/users/",
  refs: ["roles", "students"], label: fullName,
  intro: "Accounts of this school. Without a password an account cannot sign in until one is set; you may give only roles whose permissions you hold yourself.",
  columns: [["Name", fullName], ["E-mail or phone", (u) => [u.email, u.phone].filter(Boolean).join(", ")],
    ["Roles", (u) => u.roles.join(", ") || "—"], ["Linked to", (u, L) => (u.student ? `student ${named(L.students, u.student)}` : u.teacher ? "teacher profile" : "—")],
    ["Status", (u) => (u.is_active ? "active" : "deactivated")], ["Last sign-in", lastSeen]],
  fields: [text("first_name", "First name"), text("last_name", "Last name"),
    text("email", "E-mail", { nullable: true }), text("phone", "Phone", { nullable: true }),
    { name: "password", label: "New password (empty: unchanged)", type: "password", omitEmpty: true, editOnly: true },
    { name: "password", label: "Password (at least 8 characters; empty: set later)", type: "password", omitEmpty: true, createOnly: true },
    { name: "roles", label: "Roles", type: "refs", ref: "roles" },
    { name: "teacher", label: "Also make a teacher profile", type: "bool", createOnly: true },
    { name: "student", label: "Student record (a student's own account)", type: "ref", ref: "students", createOnly: true },
    { name: "is_active", label: "Active (may sign in)", type: "bool", editOnly: true }],
};
