//! Stage 4, pace: the school's request rate (`SCHOOL_RATE_PER_SECOND`), for callers who
//! authenticated as this school's.

use crate::{
    db::schema_name::SchemaName,
    error::{ApiError, ApiResult},
    fairness::Pace,
    observability::metrics,
};

/// Takes one of `school`'s requests from its pace (when one is set), holding the request
/// until its token comes when that is near enough; 429 `throttled` otherwise.
pub async fn pace(limit: Option<&Pace<SchemaName>>, school: &SchemaName) -> ApiResult<()> {
    let Some(limit) = limit else {
        return Ok(());
    };
    match limit.take(school) {
        Ok(delay) if delay.is_zero() => Ok(()),
        Ok(delay) => {
            metrics::school_delayed();
            tokio::time::sleep(delay).await;
            Ok(())
        }
        Err(wait) => {
            metrics::school_throttled();
            Err(ApiError::SchoolRateLimited(
                wait.as_secs().saturating_add(1),
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::pace;
    use crate::{db::schema_name::SchemaName, error::ApiError, fairness::Pace};

    #[tokio::test(flavor = "current_thread")]
    async fn a_school_past_its_pace_hears_429_and_no_pace_lets_all_through() {
        let limit = Pace::new(1, 2, Duration::ZERO);
        let school = SchemaName::parse("alpha").expect("name");
        assert!(pace(Some(&limit), &school).await.is_ok());
        assert!(pace(Some(&limit), &school).await.is_ok());
        assert!(matches!(
            pace(Some(&limit), &school).await,
            Err(ApiError::SchoolRateLimited(1))
        ));
        for _ in 0..10 {
            assert!(pace(None, &school).await.is_ok());
        }
    }
}
