//! How operations and their request bodies are named in the OpenAPI document: one rule,
//! derived from the path and the method, so a generated client reads like a hand-written
//! one (`listSessions`, `createSession`, `confirmStudentMarks`, `CreateSessionRequest`).
//!
//! A path is one of four shapes, judged from the document's own paths:
//! - an item (`.../sessions/{id}/`): `get`, `replace`, `update`, `delete` + the singular;
//! - a collection (it has items under it, or both GET and POST, or it sits right under
//!   `/api/v1/school/` or `/api/v1/system/` with GET alone): `list` + the plural, `create`
//!   + the singular;
//! - a singleton (PUT or PATCH without items: the report settings): `get`, `replace`,
//!   `update` + its name;
//! - an action (any other literal after a collection or an item): the action's words, then
//!   the collection (`bulkSoftDeleteSubjects`, plural; a plural last word of the action is
//!   made singular: `confirm-students` on marks is `confirmStudentMarks`) or the item
//!   (`softDeleteTeacherGradeComment`, singular). The `auth` actions name the API they
//!   belong to instead: `schoolLogin`, `systemRefresh`.
//!
//! A request body is the component `<OperationId>Request` (`UpdateSessionRequest`); a
//! success body that is no named type already, `<OperationId>Response`
//! (`SchoolLoginResponse`).

use actix_web::http::Method;

/// The paths named by hand: those that are no API resource, a list nested under an item
/// of another resource (the rule would read it as an action), and actions the rule would
/// name badly (`attendanceClass`).
const FIXED: [(&str, &str, &str); 7] = [
    ("/healthz/", "*", "checkLiveness"),
    ("/readyz/", "*", "checkReadiness"),
    (
        "/api/v1/school/classes/{class_pk}/students/",
        "*",
        "listClassStudents",
    ),
    (
        "/api/v1/school/classes/{class_pk}/attendance/",
        "POST",
        "takeClassAttendance",
    ),
    (
        "/api/v1/school/classes/{class_pk}/attendance/",
        "GET",
        "listClassAttendance",
    ),
    (
        "/api/v1/school/students/{id}/attendance-summary/",
        "*",
        "getStudentAttendanceSummary",
    ),
    (
        "/api/v1/school/imports/exams/{exam_pk}/marks/",
        "*",
        "importExamMarks",
    ),
];

/// What the document knows about one path, for naming its operations.
pub struct PathFacts<'a> {
    pub path: &'a str,
    /// The methods the path answers.
    pub methods: &'a [Method],
    /// Whether another path continues this one with a `{placeholder}` (its items).
    pub has_items: bool,
}

/// Collections whose name both APIs use, named by the rule as another name
/// (`/api/v1/school/users/` → `listSchoolUsers`, beside the system's `listUsers`).
const RENAMED: [(&str, &str); 1] = [("/api/v1/school/users/", "/api/v1/school/school-users/")];

pub fn operation_id(method: &Method, facts: &PathFacts<'_>) -> String {
    let fixed = FIXED.iter().find(|(path, fixed_method, _)| {
        *path == facts.path && (*fixed_method == "*" || *fixed_method == method.as_str())
    });
    if let Some((_, _, id)) = fixed {
        return (*id).to_owned();
    }
    if let Some(rest) = facts.path.strip_prefix("/ims/oneroster/") {
        return oneroster_operation_id(method, rest);
    }
    if let Some((from, to)) = RENAMED
        .iter()
        .find(|(from, _)| facts.path.starts_with(from))
    {
        let path = format!("{to}{}", &facts.path[from.len()..]);
        let renamed = PathFacts {
            path: &path,
            ..*facts
        };
        return operation_id(method, &renamed);
    }
    let segments: Vec<&str> = facts
        .path
        .trim_matches('/')
        .split('/')
        .skip_while(|s| matches!(*s, "api" | "v1"))
        .collect();
    let scope = segments.first().copied().unwrap_or_default();
    let rest = segments.get(1..).unwrap_or_default();
    let is_placeholder = |s: &str| s.starts_with('{');
    let Some((&last, before)) = rest.split_last() else {
        return camel(&[method.as_str(), scope]);
    };
    if is_placeholder(last) {
        let resource = before.last().copied().unwrap_or(scope);
        let verb = match *method {
            Method::PUT => "replace",
            Method::PATCH => "update",
            Method::DELETE => "delete",
            _ => "get",
        };
        return format!("{verb}{}", pascal(&singular(resource)));
    }
    let previous = before.last().copied();
    let top_level = previous.is_none();
    let has = |m: Method| facts.methods.contains(&m);
    let collection = facts.has_items
        || (has(Method::GET) && has(Method::POST))
        || (top_level && facts.methods == [Method::GET]);
    if collection {
        return match *method {
            Method::POST => format!("create{}", pascal(&singular(last))),
            _ => format!("list{}", pascal(last)),
        };
    }
    if top_level {
        // A singleton: one record of its kind.
        let verb = match *method {
            Method::PUT => "replace",
            Method::PATCH => "update",
            Method::DELETE => "delete",
            _ => "get",
        };
        return format!("{verb}{}", pascal(last));
    }
    match previous {
        Some("auth") => format!("{scope}{}", pascal(last)),
        Some(resource) if is_placeholder(resource) => {
            let item = before
                .iter()
                .rev()
                .find(|s| !is_placeholder(s))
                .copied()
                .unwrap_or(scope);
            format!("{}{}", camel_words(last), pascal(&singular(item)))
        }
        Some(collection) => {
            let action = camel_words(last);
            let noun = pascal(collection);
            if action.ends_with(&noun) {
                action
            } else {
                format!("{}{noun}", singular_last_word(&action))
            }
        }
        None => camel_words(last),
    }
}

/// OneRoster's paths (`<service>/v1p2/<segments>`): `oneroster`, the service, the verb
/// (`list`, `get` for an item, `put`, `delete`), then the path's words
/// (`onerosterGradebookListClassesLineItems`).
fn oneroster_operation_id(method: &Method, rest: &str) -> String {
    let segments: Vec<&str> = rest.trim_matches('/').split('/').collect();
    let service = segments.first().copied().unwrap_or_default();
    let item = segments.last().is_some_and(|s| s.starts_with('{'));
    let verb = match (method.clone(), item) {
        (Method::PUT, _) => "Put",
        (Method::DELETE, _) => "Delete",
        (_, true) => "Get",
        _ => "List",
    };
    let words: String = segments
        .iter()
        .skip(2)
        .filter(|s| !s.starts_with('{'))
        .map(|s| upper_first(s))
        .collect();
    format!("oneroster{}{verb}{words}", upper_first(service))
}

/// The component name of an operation's request body.
pub fn request_body_name(operation_id: &str) -> String {
    format!("{}Request", upper_first(operation_id))
}

/// The component name of an operation's success body, where it is no named type already.
pub fn response_body_name(operation_id: &str) -> String {
    format!("{}Response", upper_first(operation_id))
}

/// `exam-sessions` → `ExamSessions`.
fn pascal(words: &str) -> String {
    words
        .split(['-', '_', ' '])
        .filter(|w| !w.is_empty())
        .map(upper_first)
        .collect()
}

/// `bulk-soft-delete` → `bulkSoftDelete`.
fn camel_words(words: &str) -> String {
    lower_first(&pascal(words))
}

fn camel(parts: &[&str]) -> String {
    lower_first(
        &parts
            .iter()
            .map(|p| pascal(&p.to_lowercase()))
            .collect::<String>(),
    )
}

fn upper_first(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

fn lower_first(word: &str) -> String {
    let mut chars = word.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_lowercase().chain(chars).collect()
    })
}

/// The singular of a resource's path name (only what this API's names need).
fn singular(plural: &str) -> String {
    if plural.ends_with("settings") || !plural.ends_with('s') {
        plural.to_owned()
    } else if let Some(stem) = plural.strip_suffix("sses") {
        format!("{stem}ss")
    } else if let Some(stem) = plural.strip_suffix("ies") {
        format!("{stem}y")
    } else {
        plural[..plural.len() - 1].to_owned()
    }
}

/// `confirmStudents` → `confirmStudent`: the last word of a camel-case name made singular.
fn singular_last_word(name: &str) -> String {
    let start = name.rfind(char::is_uppercase).unwrap_or(0);
    let (head, last) = name.split_at(start);
    format!("{head}{}", singular(last))
}

#[cfg(test)]
mod tests {
    use actix_web::http::Method;

    use super::{PathFacts, operation_id, request_body_name};

    fn id(method: Method, path: &str, methods: &[Method], has_items: bool) -> String {
        operation_id(
            &method,
            &PathFacts {
                path,
                methods,
                has_items,
            },
        )
    }

    #[test]
    fn names_read_as_a_person_would_choose_them() {
        use Method as M;
        let crud = [M::GET, M::POST];
        let item = [M::GET, M::PUT, M::PATCH, M::DELETE];
        let s = "/api/v1/school";
        assert_eq!(
            id(M::GET, &format!("{s}/sessions/"), &crud, true),
            "listSessions"
        );
        assert_eq!(
            id(M::POST, &format!("{s}/sessions/"), &crud, true),
            "createSession"
        );
        assert_eq!(
            id(M::PATCH, &format!("{s}/sessions/{{id}}/"), &item, false),
            "updateSession"
        );
        assert_eq!(
            id(M::POST, &format!("{s}/classes/"), &crud, true),
            "createClass"
        );
        assert_eq!(
            id(
                M::GET,
                &format!("{s}/sessions/{{session_pk}}/exam-sessions/{{id}}/"),
                &item,
                false
            ),
            "getExamSession"
        );
        assert_eq!(
            id(
                M::POST,
                &format!(
                    "{s}/sessions/{{a}}/exam-sessions/{{b}}/exams/{{c}}/marks/confirm-students/"
                ),
                &[M::POST],
                false
            ),
            "confirmStudentMarks"
        );
        assert_eq!(
            id(
                M::POST,
                &format!("{s}/sessions/{{a}}/exam-sessions/{{b}}/exams/auto-create-teacher-exams/"),
                &[M::POST],
                false
            ),
            "autoCreateTeacherExams"
        );
        assert_eq!(
            id(
                M::DELETE,
                &format!("{s}/subjects/bulk-soft-delete/"),
                &[M::DELETE],
                false
            ),
            "bulkSoftDeleteSubjects"
        );
        assert_eq!(
            id(
                M::DELETE,
                &format!("{s}/teacher-grade-comments/{{id}}/soft-delete/"),
                &[M::DELETE],
                false
            ),
            "softDeleteTeacherGradeComment"
        );
        assert_eq!(
            id(M::POST, &format!("{s}/auth/login/"), &[M::POST], false),
            "schoolLogin"
        );
        assert_eq!(
            id(M::GET, "/api/v1/system/auth/me/", &[M::GET], false),
            "systemMe"
        );
        assert_eq!(
            id(M::GET, &format!("{s}/permissions/"), &[M::GET], false),
            "listPermissions"
        );
        let singleton = [M::GET, M::PUT, M::PATCH];
        assert_eq!(
            id(M::GET, &format!("{s}/report-settings/"), &singleton, false),
            "getReportSettings"
        );
        assert_eq!(
            id(M::PUT, &format!("{s}/report-settings/"), &singleton, false),
            "replaceReportSettings"
        );
        assert_eq!(
            id(M::POST, &format!("{s}/academic-settings/"), &crud, true),
            "createAcademicSettings"
        );
        assert_eq!(
            id(
                M::POST,
                "/api/v1/system/tenants/{id}/domains/",
                &crud,
                false
            ),
            "createDomain"
        );
        assert_eq!(
            id(M::GET, "/api/v1/system/api-keys/{id}/", &item, false),
            "getApiKey"
        );
        assert_eq!(id(M::GET, "/readyz/", &[M::GET], false), "checkReadiness");
        assert_eq!(request_body_name("createSession"), "CreateSessionRequest");
    }
}
