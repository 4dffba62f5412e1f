//! The school-wide parts of the OneRoster 1.2 gradebook: categories (OneRoster's own
//! `gradebook_categories`, every class has all of them) and score scales (the school's
//! grading scale from its academic settings, one per class). Both are read-only here but
//! categories, which a client may PUT (`gradebook_writes.rs`).
use chrono::{DateTime, Utc};
use diesel::prelude::*;
use serde_json::{Value, json};

use super::{
    super::schema::gradebook_categories as categories,
    gradebook::{number, roster_ref},
    roster::{Entity, Provider, class_sourced_id, head, sections},
};
use crate::{
    error::ApiResult,
    school::{Store, academic_settings::AcademicSettingsStore},
    tenancy::TenantConn,
};

/// The columns the query below selects, in order.
type CategoryRow = (String, String, Option<String>, bool, DateTime<Utc>);

/// Categories (school-wide).
pub fn categories(_: &Provider, conn: &mut TenantConn) -> ApiResult<Vec<Entity>> {
    let rows: Vec<CategoryRow> = categories::table
        .order((categories::created_at, categories::id))
        .select((
            categories::sourced_id,
            categories::title,
            categories::weight,
            categories::is_deleted,
            categories::updated_at,
        ))
        .load(conn.pg())?;
    Ok(rows
        .into_iter()
        .map(|(sid, title, weight, deleted, at)| {
            let mut e = head(&sid, deleted, at);
            e.insert("title".into(), json!(title));
            e.insert("weight".into(), number(weight.as_deref()));
            e
        })
        .collect())
}

/// Score scales: one per class, from the school's grading scale (academic settings).
pub fn score_scales(p: &Provider, conn: &mut TenantConn) -> ApiResult<Vec<Entity>> {
    let oldest = crate::school::ListQuery {
        page: 1,
        page_size: 1,
        include_deleted: false,
        search: None,
        filter: Default::default(),
    };
    let settings = AcademicSettingsStore::list(conn, (), &oldest)?.1;
    let Some(settings) = settings.into_iter().next() else {
        return Ok(Vec::new());
    };
    let values: Vec<Value> = settings
        .grading_scale
        .0
        .iter()
        .map(|band| json!({"itemValueLHS": band.symbol, "itemValueRHS": format!("{}-{}", band.min, band.max)}))
        .collect();
    Ok(sections(conn)?
        .into_iter()
        .map(|s| {
            let class = class_sourced_id(s.class, s.subject);
            let mut e = head(
                &format!("{class}.scale"),
                !s.live,
                s.modified.max(settings.updated_at),
            );
            e.insert("title".into(), json!("Grading scale"));
            e.insert("type".into(), json!("grading scale"));
            e.insert("class".into(), roster_ref(p, "classes", &class, "class"));
            e.insert(
                "course".into(),
                roster_ref(p, "courses", &s.subject.to_string(), "course"),
            );
            e.insert("scoreScaleValue".into(), json!(values));
            e
        })
        .collect())
}
