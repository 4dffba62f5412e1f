//! The school year turns: a session's students move on into a new session, by class
//! (promoted to the next class, retained in theirs, graduated from the top class) or leave.
//!
//! One function makes the plan from what the database holds ([`plan`], no database), and
//! the apply writes exactly that plan, so a dry run shows what an apply does. The apply
//! runs in one transaction: it locks the old session's row, so of two concurrent applies
//! the second waits and then finds the `rollovers` row the first wrote (409). Every record
//! is written through its store (enrollments, students, the new session), each kind of
//! change to all its students at once by the store's write of many.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde::Serialize;
use uuid::Uuid;

use super::{
    Actor, Store, Target, Targets,
    enrollments::{ACTIVE, COMPLETED, EnrollmentChanges, Enrollments, NewEnrollment, WITHDRAWN},
    schema::{academic_classes, academic_sessions, rollovers, students},
    sessions::{AcademicSession, NewSession, Sessions},
    students::{StudentChanges, Students},
};
use crate::{
    error::{ApiError, ApiResult, FieldErrors},
    tenancy::TenantConn,
};

/// What a school asks for.
#[derive(Debug, Clone)]
pub struct Request {
    pub name: String,
    pub start_date: DateTime<Utc>,
    pub end_date: DateTime<Utc>,
    /// `(from_class, to_class)`; `None` graduates the class.
    pub promotions: Vec<(Uuid, Option<Uuid>)>,
    pub retain: Vec<Uuid>,
    pub leave: Vec<Uuid>,
}

/// A class of the school, as the plan sees it.
#[derive(Debug, Clone)]
pub struct ClassInfo {
    pub id: Uuid,
    pub name: String,
    pub level: Option<i32>,
}

/// Where one class's students go.
#[derive(Serialize, Debug, Clone, PartialEq, Eq, utoipa::ToSchema)]
pub struct ClassMove {
    pub from_class: Uuid,
    /// `null`: the class graduates.
    pub to_class: Option<Uuid>,
    /// How many of its students are promoted.
    pub students: usize,
}

/// The plan, as answered: counts and the classes' moves.
#[derive(Serialize, Debug, Clone, PartialEq, Eq, utoipa::ToSchema)]
pub struct Plan {
    pub promoted: usize,
    pub retained: usize,
    pub graduated: usize,
    pub left: usize,
    pub by_class: Vec<ClassMove>,
}

/// What happens to one enrolled student.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fate {
    Promoted(Uuid),
    Retained(Uuid),
    Graduated,
    Left,
}

/// A student's active enrollment in the old session: `enrollment` is `None` for a student
/// whose class was set with no enrollment in the (active) old session yet; the apply
/// enrolls them first.
#[derive(Debug, Clone, Copy)]
pub struct Enrolled {
    pub student: Uuid,
    pub class: Uuid,
    pub enrollment: Option<Uuid>,
}

/// The plan and each student's fate in it.
#[derive(Debug)]
pub struct Decided {
    pub plan: Plan,
    pub fates: Vec<(Enrolled, Fate)>,
}

/// Where `class` goes when `promotions` does not name it: the one live class of the next
/// level, graduation when no class has a higher level, else why not.
fn next_class(class: &ClassInfo, classes: &[ClassInfo]) -> Result<Option<Uuid>, String> {
    let Some(level) = class.level else {
        return Err(format!(
            "class \"{}\" ({}) has no level: name its destination in promotions",
            class.name, class.id
        ));
    };
    let Some(next) = classes
        .iter()
        .filter_map(|c| c.level)
        .filter(|l| *l > level)
        .min()
    else {
        return Ok(None);
    };
    let at_next: Vec<&ClassInfo> = classes.iter().filter(|c| c.level == Some(next)).collect();
    match at_next.as_slice() {
        [one] => Ok(Some(one.id)),
        several => {
            let names: Vec<String> = several.iter().map(|c| format!("\"{}\"", c.name)).collect();
            Err(format!(
                "class \"{}\" ({}): {} classes have the next level {next} ({}); name its destination in promotions",
                class.name,
                class.id,
                several.len(),
                names.join(", ")
            ))
        }
    }
}

/// The plan for `enrolled` among the live `classes`: every problem of the request at once.
pub fn plan(
    request: &Request,
    classes: &[ClassInfo],
    enrolled: &[Enrolled],
) -> Result<Decided, FieldErrors> {
    let mut errors = FieldErrors::new();
    let by_id: HashMap<Uuid, &ClassInfo> = classes.iter().map(|c| (c.id, c)).collect();
    let mut named: HashMap<Uuid, Option<Uuid>> = HashMap::new();
    for (index, (from, to)) in request.promotions.iter().enumerate() {
        if !by_id.contains_key(from) {
            errors.add(
                &format!("promotions[{index}].from_class"),
                format!("no live class has the id {from}"),
            );
        }
        if let Some(to) = to {
            if !by_id.contains_key(to) {
                errors.add(
                    &format!("promotions[{index}].to_class"),
                    format!("no live class has the id {to}"),
                );
            }
        }
        if named.insert(*from, *to).is_some() {
            errors.add(
                &format!("promotions[{index}].from_class"),
                "this class is named twice",
            );
        }
    }
    let enrolled_ids: HashSet<Uuid> = enrolled.iter().map(|e| e.student).collect();
    let retain: HashSet<Uuid> = request.retain.iter().copied().collect();
    let leave: HashSet<Uuid> = request.leave.iter().copied().collect();
    for (field, ids) in [("retain", &request.retain), ("leave", &request.leave)] {
        for id in ids {
            if !enrolled_ids.contains(id) {
                errors.add(
                    field,
                    format!("student {id} has no active enrollment in this session"),
                );
            }
        }
    }
    for id in retain.intersection(&leave) {
        errors.add("leave", format!("student {id} is also in retain"));
    }
    // Every class with students resolved once, in the order of their levels and names.
    let mut with_students: Vec<&ClassInfo> = Vec::new();
    let mut seen = HashSet::new();
    for e in enrolled {
        if seen.insert(e.class) {
            match by_id.get(&e.class) {
                Some(class) => with_students.push(class),
                None => errors.add(
                    "promotions",
                    format!("class {} of an enrolled student is deleted", e.class),
                ),
            }
        }
    }
    with_students.sort_by(|a, b| (a.level, &a.name, a.id).cmp(&(b.level, &b.name, b.id)));
    let mut destination: BTreeMap<Uuid, Option<Uuid>> = BTreeMap::new();
    for class in &with_students {
        match named.get(&class.id) {
            Some(to) => {
                destination.insert(class.id, *to);
            }
            None => match next_class(class, classes) {
                Ok(to) => {
                    destination.insert(class.id, to);
                }
                Err(message) => errors.add("promotions", message),
            },
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let mut plan = Plan {
        promoted: 0,
        retained: 0,
        graduated: 0,
        left: 0,
        by_class: with_students
            .iter()
            .map(|c| ClassMove {
                from_class: c.id,
                to_class: destination[&c.id],
                students: 0,
            })
            .collect(),
    };
    let mut fates = Vec::with_capacity(enrolled.len());
    for e in enrolled {
        let fate = if leave.contains(&e.student) {
            plan.left += 1;
            Fate::Left
        } else if retain.contains(&e.student) {
            plan.retained += 1;
            Fate::Retained(e.class)
        } else {
            match destination[&e.class] {
                Some(to) => {
                    plan.promoted += 1;
                    if let Some(m) = plan.by_class.iter_mut().find(|m| m.from_class == e.class) {
                        m.students += 1;
                    }
                    Fate::Promoted(to)
                }
                None => {
                    plan.graduated += 1;
                    Fate::Graduated
                }
            }
        };
        fates.push((*e, fate));
    }
    Ok(Decided { plan, fates })
}

/// Every live class.
fn live_classes(conn: &mut TenantConn) -> ApiResult<Vec<ClassInfo>> {
    let rows: Vec<(Uuid, String, Option<i32>)> = academic_classes::table
        .filter(academic_classes::is_deleted.eq(false))
        .select((
            academic_classes::id,
            academic_classes::name,
            academic_classes::level,
        ))
        .load(conn.pg())?;
    Ok(rows
        .into_iter()
        .map(|(id, name, level)| ClassInfo { id, name, level })
        .collect())
}

/// The active enrollments of `session`; when it is the active session, also the live
/// students whose class is set but who have no enrollment in it yet.
fn enrolled_in(conn: &mut TenantConn, session: &AcademicSession) -> ApiResult<Vec<Enrolled>> {
    let enrollments = Enrollments::of_session(conn, session.id)?;
    let in_session: HashSet<Uuid> = enrollments.iter().map(|e| e.student_id).collect();
    let mut enrolled: Vec<Enrolled> = enrollments
        .into_iter()
        .filter(|e| e.status == ACTIVE)
        .map(|e| Enrolled {
            student: e.student_id,
            class: e.academic_class_id,
            enrollment: Some(e.id),
        })
        .collect();
    if session.is_active {
        let unenrolled: Vec<(Uuid, Option<Uuid>)> = students::table
            .filter(students::is_deleted.eq(false))
            .filter(students::academic_class_id.is_not_null())
            .order((students::created_at, students::id))
            .select((students::id, students::academic_class_id))
            .load(conn.pg())?;
        enrolled.extend(unenrolled.into_iter().filter_map(|(student, class)| {
            match (in_session.contains(&student), class) {
                (false, Some(class)) => Some(Enrolled {
                    student,
                    class,
                    enrollment: None,
                }),
                _ => None,
            }
        }));
    }
    Ok(enrolled)
}

/// The session a rollover of `from` made, if it was rolled over.
fn rolled_into(conn: &mut TenantConn, from: Uuid) -> ApiResult<Option<AcademicSession>> {
    let to: Option<Uuid> = rollovers::table
        .find(from)
        .select(rollovers::to_session_id)
        .first(conn.pg())
        .optional()?;
    match to {
        Some(to) => Sessions::find(
            conn,
            Target {
                parent: (),
                id: to,
                include_deleted: true,
            },
        ),
        None => Ok(None),
    }
}

/// Locks the live session `id` for this transaction (404 when there is none), and refuses
/// (409) one that was rolled over already, naming the session that rollover made.
fn lock_unrolled(conn: &mut TenantConn, id: Uuid) -> ApiResult<AcademicSession> {
    let locked: Option<Uuid> = academic_sessions::table
        .filter(academic_sessions::id.eq(id))
        .filter(academic_sessions::is_deleted.eq(false))
        .select(academic_sessions::id)
        .for_update()
        .first(conn.pg())
        .optional()?;
    if locked.is_none() {
        return Err(ApiError::not_found());
    }
    let session = Sessions::find(conn, Target::live((), id))?.ok_or_else(ApiError::not_found)?;
    if let Some(made) = rolled_into(conn, id)? {
        return Err(ApiError::Conflict(format!(
            "session \"{}\" was already rolled over into session \"{}\" ({})",
            session.name, made.name, made.id
        )));
    }
    Ok(session)
}

/// The plan of rolling session `from` over as `request` asks (nothing written), or, unless
/// `dry_run`, that plan applied: the new session (then active), last year's enrollments
/// `completed` (`withdrawn` for those who leave), this year's made. Run inside the caller's
/// transaction.
pub fn roll_over(
    conn: &mut TenantConn,
    from: Uuid,
    request: &Request,
    dry_run: bool,
    actor: &Actor,
) -> ApiResult<(Plan, Option<AcademicSession>)> {
    let session = match dry_run {
        true => {
            let session =
                Sessions::find(conn, Target::live((), from))?.ok_or_else(ApiError::not_found)?;
            if let Some(made) = rolled_into(conn, from)? {
                return Err(ApiError::Conflict(format!(
                    "session \"{}\" was already rolled over into session \"{}\" ({})",
                    session.name, made.name, made.id
                )));
            }
            session
        }
        false => lock_unrolled(conn, from)?,
    };
    let classes = live_classes(conn)?;
    let enrolled = enrolled_in(conn, &session)?;
    let decided = plan(request, &classes, &enrolled).map_err(ApiError::Validation)?;
    if dry_run {
        return Ok((decided.plan, None));
    }
    let new = apply(conn, &session, request, &decided, actor)?;
    Ok((decided.plan, Some(new)))
}

/// Writes `decided`, every record through its store, set by set: each store's write of
/// many takes all the students of one kind of change at once (the old enrollments
/// completed, those withdrawn, the new enrollments, the students who leave a class), with
/// the events and history a write of each would make.
fn apply(
    conn: &mut TenantConn,
    old: &AcademicSession,
    request: &Request,
    decided: &Decided,
    actor: &Actor,
) -> ApiResult<AcademicSession> {
    // Students whose class had no enrollment yet get theirs in the old session first, so
    // last year's class lists hold them.
    let unenrolled: Vec<NewEnrollment> = (decided.fates.iter())
        .filter(|(e, _)| e.enrollment.is_none())
        .map(|(e, _)| NewEnrollment {
            student_id: e.student,
            academic_class_id: e.class,
            academic_session_id: old.id,
            status: ACTIVE.into(),
            is_deleted: false,
        })
        .collect();
    let made: HashMap<Uuid, Uuid> = Enrollments::create_many(conn, (), unenrolled, actor)?
        .into_iter()
        .map(|e| (e.student_id, e.id))
        .collect();
    let new_session = Sessions::create(
        conn,
        (),
        NewSession {
            name: request.name.clone(),
            start_date: request.start_date,
            end_date: request.end_date,
            is_active: Some(true),
            is_deleted: false,
        },
        actor,
    )?;
    diesel::insert_into(rollovers::table)
        .values((
            rollovers::from_session_id.eq(old.id),
            rollovers::to_session_id.eq(new_session.id),
            rollovers::created_by.eq(actor.user_id()),
        ))
        .execute(conn.pg())?;
    let (mut completed, mut withdrawn) = (Vec::new(), Vec::new());
    let (mut enrolled, mut unplaced) = (Vec::new(), Vec::new());
    for (e, fate) in &decided.fates {
        let last_year = (e.enrollment.or_else(|| made.get(&e.student).copied()))
            .ok_or_else(|| ApiError::internal(anyhow::anyhow!("an enrollment not made")))?;
        match fate {
            Fate::Left => withdrawn.push(last_year),
            _ => completed.push(last_year),
        }
        match fate {
            Fate::Promoted(class) | Fate::Retained(class) => enrolled.push(NewEnrollment {
                student_id: e.student,
                academic_class_id: *class,
                academic_session_id: new_session.id,
                status: ACTIVE.into(),
                is_deleted: false,
            }),
            Fate::Graduated | Fate::Left => unplaced.push(e.student),
        }
    }
    for (ids, status) in [(completed, COMPLETED), (withdrawn, WITHDRAWN)] {
        let changes = EnrollmentChanges {
            status: Some(status.into()),
            ..Default::default()
        };
        Enrollments::update_many(conn, Targets::live((), ids), changes, actor)?;
    }
    // Their hook sets the students' classes (the new session is the active one).
    Enrollments::create_many(conn, (), enrolled, actor)?;
    let changes = StudentChanges {
        academic_class_id: Some(None),
        ..Default::default()
    };
    let unplaced = Targets {
        parent: (),
        ids: unplaced,
        include_deleted: true,
    };
    Students::update_many(conn, unplaced, changes, actor)?;
    Ok(new_session)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, level: Option<i32>) -> ClassInfo {
        ClassInfo {
            id: Uuid::new_v4(),
            name: name.into(),
            level,
        }
    }

    fn request() -> Request {
        Request {
            name: "Next".into(),
            start_date: Utc::now(),
            end_date: Utc::now(),
            promotions: vec![],
            retain: vec![],
            leave: vec![],
        }
    }

    fn enrolled(class: &ClassInfo) -> Enrolled {
        Enrolled {
            student: Uuid::new_v4(),
            class: class.id,
            enrollment: Some(Uuid::new_v4()),
        }
    }

    #[test]
    fn classes_move_up_a_level_and_the_top_one_graduates() {
        let (one, two, three) = (
            class("1", Some(1)),
            class("2", Some(2)),
            class("3", Some(3)),
        );
        let classes = vec![one.clone(), two.clone(), three.clone()];
        let students = vec![
            enrolled(&one),
            enrolled(&one),
            enrolled(&two),
            enrolled(&three),
        ];
        let mut asked = request();
        asked.retain = vec![students[1].student];
        let decided = plan(&asked, &classes, &students).expect("plan");
        let p = &decided.plan;
        assert_eq!((p.promoted, p.retained, p.graduated, p.left), (2, 1, 1, 0));
        assert_eq!(p.by_class[0].to_class, Some(two.id));
        assert_eq!(p.by_class[0].students, 1);
        assert_eq!(p.by_class[2].to_class, None);
        assert_eq!(decided.fates[1].1, Fate::Retained(one.id));
    }

    #[test]
    fn an_ambiguous_or_levelless_class_is_named() {
        let (one, a, b, free) = (
            class("One", Some(1)),
            class("Two A", Some(2)),
            class("Two B", Some(2)),
            class("Free", None),
        );
        let classes = vec![one.clone(), a.clone(), b.clone(), free.clone()];
        let students = vec![enrolled(&one), enrolled(&free)];
        let errors = plan(&request(), &classes, &students).expect_err("ambiguous");
        let text = format!("{errors:?}");
        assert!(
            text.contains("\\\"One\\\"") && text.contains("\\\"Free\\\""),
            "{text}"
        );
        let mut asked = request();
        asked.promotions = vec![(one.id, Some(b.id)), (free.id, None)];
        let decided = plan(&asked, &classes, &students).expect("named");
        assert_eq!((decided.plan.promoted, decided.plan.graduated), (1, 1));
    }
}
