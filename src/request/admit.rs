//! Stage 5, admit: one of the school's turns at the server (`SCHOOL_MAX_IN_FLIGHT`), for
//! callers who authenticated as this school's. The request holds it until its answer is
//! ready.

use tokio::sync::OwnedSemaphorePermit;

use crate::{db::schema_name::SchemaName, error::ApiResult, fairness::Admission};

/// Waits for one of `school`'s turns (none to wait for when admission is off); 503
/// `service_unavailable` when none comes in time.
pub async fn admit(
    admission: Option<&Admission<SchemaName>>,
    school: &SchemaName,
) -> ApiResult<Option<OwnedSemaphorePermit>> {
    match admission {
        Some(admission) => admission.admit(school).await.map(Some),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::admit;
    use crate::{db::schema_name::SchemaName, error::ApiError, fairness::Admission};

    #[tokio::test(flavor = "current_thread")]
    async fn a_turn_is_held_until_dropped() {
        let admission = Admission::with_window(1, 1, Duration::from_millis(20), Duration::ZERO);
        let school = SchemaName::parse("alpha").expect("name");
        let held = admit(Some(&admission), &school).await.expect("first turn");
        assert!(held.is_some());
        assert!(matches!(
            admit(Some(&admission), &school).await,
            Err(ApiError::SchoolBusy)
        ));
        drop(held);
        assert!(admit(Some(&admission), &school).await.is_ok());
        assert!(admit(None, &school).await.expect("no admission").is_none());
    }
}
