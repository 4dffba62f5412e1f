//! OneRoster 1.2 academic sessions: the school's years (`schoolYear`), its exam sessions
//! (`term`) and one grading period per term (`<term id>.gp`).

use std::collections::HashMap;

use chrono::{DateTime, Datelike, Utc};
use diesel::prelude::*;
use serde_json::{Value, json};
use uuid::Uuid;

use super::{
    super::schema::{academic_sessions, exam_sessions},
    roster::{Entity, GRADING_PERIOD_SUFFIX, Provider, date, head},
};
use crate::{error::ApiResult, tenancy::TenantConn};

type SessionRow = (
    Uuid,
    String,
    DateTime<Utc>,
    DateTime<Utc>,
    bool,
    bool,
    DateTime<Utc>,
);
type TermRow = (
    Uuid,
    Uuid,
    String,
    Option<DateTime<Utc>>,
    Option<DateTime<Utc>>,
    bool,
    DateTime<Utc>,
);

/// School years (academic sessions), terms (exam sessions) and one grading period per term.
pub fn academic_sessions(p: &Provider, conn: &mut TenantConn) -> ApiResult<Vec<Entity>> {
    let years: Vec<SessionRow> = academic_sessions::table
        .order((academic_sessions::start_date, academic_sessions::id))
        .select((
            academic_sessions::id,
            academic_sessions::name,
            academic_sessions::start_date,
            academic_sessions::end_date,
            academic_sessions::is_active,
            academic_sessions::is_deleted,
            academic_sessions::updated_at,
        ))
        .load(conn.pg())?;
    let terms: Vec<TermRow> = exam_sessions::table
        .order((exam_sessions::created_at, exam_sessions::id))
        .select((
            exam_sessions::id,
            exam_sessions::academic_session_id,
            exam_sessions::name,
            exam_sessions::start_date,
            exam_sessions::end_date,
            exam_sessions::is_deleted,
            exam_sessions::updated_at,
        ))
        .load(conn.pg())?;
    let year_of: HashMap<Uuid, &SessionRow> = years.iter().map(|y| (y.0, y)).collect();
    let session_ref =
        |id: &str| p.reference("rostering", "academicSessions", id, "academicSession");
    let mut out = Vec::new();
    for year in &years {
        let (id, name, start, end, _, deleted, modified) = year;
        let mut e = head(&id.to_string(), *deleted, *modified);
        e.insert("title".into(), json!(name));
        e.insert("startDate".into(), json!(date(*start)));
        e.insert("endDate".into(), json!(date(*end)));
        e.insert("type".into(), json!("schoolYear"));
        e.insert("parent".into(), Value::Null);
        let children: Vec<Value> = terms
            .iter()
            .filter(|t| t.1 == *id)
            .map(|t| session_ref(&t.0.to_string()))
            .collect();
        e.insert("children".into(), json!(children));
        e.insert("schoolYear".into(), json!(end.year().to_string()));
        e.insert("org".into(), p.org_ref());
        out.push(e);
    }
    for (id, year_id, name, start, end, deleted, modified) in &terms {
        let Some(year) = year_of.get(year_id) else {
            continue;
        };
        let deleted = *deleted || year.5;
        let (start, end) = (start.unwrap_or(year.2), end.unwrap_or(year.3));
        let term_id = id.to_string();
        let period_id = format!("{term_id}{GRADING_PERIOD_SUFFIX}");
        for (sid, title, kind, parent, children) in [
            (
                &term_id,
                name.clone(),
                "term",
                year_id.to_string(),
                vec![session_ref(&period_id)],
            ),
            (
                &period_id,
                format!("{name} grading period"),
                "gradingPeriod",
                term_id.clone(),
                vec![],
            ),
        ] {
            let mut e = head(sid, deleted, *modified);
            e.insert("title".into(), json!(title));
            e.insert("startDate".into(), json!(date(start)));
            e.insert("endDate".into(), json!(date(end)));
            e.insert("type".into(), json!(kind));
            e.insert("parent".into(), session_ref(&parent));
            e.insert("children".into(), json!(children));
            e.insert("schoolYear".into(), json!(year.3.year().to_string()));
            e.insert("org".into(), p.org_ref());
            out.push(e);
        }
    }
    Ok(out)
}

/// The terms a class runs in: the live exam sessions of the active school year (of every
/// school year when none is active).
pub(super) fn current_terms(conn: &mut TenantConn) -> ApiResult<(Option<Uuid>, Vec<Uuid>)> {
    let active: Option<Uuid> = academic_sessions::table
        .filter(academic_sessions::is_active.eq(true))
        .filter(academic_sessions::is_deleted.eq(false))
        .select(academic_sessions::id)
        .first(conn.pg())
        .optional()?;
    let mut query = exam_sessions::table
        .filter(exam_sessions::is_deleted.eq(false))
        .order((exam_sessions::created_at, exam_sessions::id))
        .select(exam_sessions::id)
        .into_boxed();
    if let Some(active) = active {
        query = query.filter(exam_sessions::academic_session_id.eq(active));
    }
    Ok((active, query.load(conn.pg())?))
}
