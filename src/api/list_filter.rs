//! A list's filters read from its query string into `school::ListFilter`: ids as UUIDs,
//! dates as `YYYY-MM-DD`, an enrollment status as one of its values. Only the filters the
//! resource declares are read (others are ignored, as before); a malformed one is a 400
//! `invalid_query` naming it.

use std::collections::HashMap;

use chrono::NaiveDate;
use uuid::Uuid;

use crate::{
    error::{ApiError, ApiResult},
    school::{ListFilter, enrollments::STATUSES},
};

/// A resource's filters: (query parameter, what it does), for the reader and the docs.
pub type Filters = &'static [(&'static str, &'static str)];

/// Reads `filters` from `params`, in their order (the first malformed one is reported).
pub fn read(params: &HashMap<String, String>, filters: Filters) -> ApiResult<ListFilter> {
    let mut filter = ListFilter::default();
    for (key, _) in filters {
        match *key {
            "student" => filter.student = id_param(params, key)?,
            "academic_class" => filter.academic_class = id_param(params, key)?,
            "academic_session" => filter.academic_session = id_param(params, key)?,
            "date" => filter.date = date_param(params, key)?,
            "date_from" => filter.date_from = date_param(params, key)?,
            "date_to" => filter.date_to = date_param(params, key)?,
            "status" => filter.status = status_param(params, key)?,
            "record" => filter.record = id_param(params, key)?,
            "role" => filter.role = params.get(*key).map(|role| role.trim().to_owned()),
            other => {
                return Err(ApiError::internal(anyhow::anyhow!(
                    "the list filter {other} has no reader"
                )));
            }
        }
    }
    Ok(filter)
}

/// The id a query parameter names, if given; a malformed one is a 400 `invalid_query`.
pub fn id_param(params: &HashMap<String, String>, key: &str) -> ApiResult<Option<Uuid>> {
    params
        .get(key)
        .map(|raw| {
            Uuid::parse_str(raw)
                .map_err(|_| ApiError::InvalidQuery(format!("{key} must be a UUID")))
        })
        .transpose()
}

fn date_param(params: &HashMap<String, String>, key: &str) -> ApiResult<Option<NaiveDate>> {
    params
        .get(key)
        .map(|raw| {
            parse_date(raw)
                .ok_or_else(|| ApiError::InvalidQuery(format!("{key} must be YYYY-MM-DD")))
        })
        .transpose()
}

fn status_param(params: &HashMap<String, String>, key: &str) -> ApiResult<Option<&'static str>> {
    params
        .get(key)
        .map(|raw| {
            STATUSES.iter().copied().find(|s| s == raw).ok_or_else(|| {
                ApiError::InvalidQuery(format!("{key} must be one of {}", STATUSES.join(", ")))
            })
        })
        .transpose()
}

/// `YYYY-MM-DD` exactly.
pub fn parse_date(raw: &str) -> Option<NaiveDate> {
    NaiveDate::parse_from_str(raw, "%Y-%m-%d")
        .ok()
        .filter(|_| raw.len() == 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    const ATTENDANCE: Filters = &[
        ("academic_class", ""),
        ("student", ""),
        ("date", ""),
        ("date_from", ""),
        ("date_to", ""),
    ];

    #[test]
    fn filters_read_ids_and_dates_and_refuse_the_malformed() {
        let id = Uuid::new_v4();
        let filter = read(
            &params(&[("student", &id.to_string()), ("date_from", "2026-09-01")]),
            ATTENDANCE,
        )
        .expect("valid");
        assert_eq!(filter.student, Some(id));
        assert_eq!(filter.date_from, NaiveDate::from_ymd_opt(2026, 9, 1));
        assert!(read(&params(&[("date", "2026-9-1")]), ATTENDANCE).is_err());
        assert!(read(&params(&[("academic_class", "x")]), ATTENDANCE).is_err());
    }

    #[test]
    fn only_the_declared_filters_are_read() {
        let filter = read(
            &params(&[("status", "nope"), ("date", "x")]),
            &[("student", "")],
        );
        assert_eq!(
            filter.expect("undeclared ones ignored"),
            ListFilter::default()
        );
        let status = read(&params(&[("status", "withdrawn")]), &[("status", "")]);
        assert_eq!(status.expect("a status").status, Some("withdrawn"));
        assert!(read(&params(&[("status", "nope")]), &[("status", "")]).is_err());
    }

    /// A filter a resource declares without a reader would be a 500 on every list.
    #[test]
    fn every_declared_filter_has_a_reader() {
        use crate::school::{enrollments::Enrollments, students::Students};
        let declared = [
            Students::FILTERS,
            Enrollments::FILTERS,
            crate::api::school::attendance::ATTENDANCE_FILTERS,
            crate::api::school::events::HISTORY_FILTERS,
            crate::api::school::users::USER_FILTERS,
        ];
        for filters in declared {
            assert!(read(&HashMap::new(), filters).is_ok(), "{filters:?}");
        }
    }
}
