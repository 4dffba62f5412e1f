//! What a request that fails authentication costs: a token from its client address's
//! budget (the schools' pace, per address; only while `SCHOOL_RATE_PER_SECOND` is set).
//! Past it the client hears 429 `throttled` instead of the authentication error, and no
//! school's rate or turns are touched either way.

use std::net::IpAddr;

use crate::{error::ApiError, fairness::Pace};

/// The answer for a request from `client` that failed authentication with `refused`.
/// Other errors (an unknown or inactive school, a failing database) pass as they are.
pub fn failed_authentication(
    budget: Option<&Pace<IpAddr>>,
    client: Option<IpAddr>,
    refused: ApiError,
) -> ApiError {
    let is_authentication = matches!(
        refused,
        ApiError::NotAuthenticated
            | ApiError::TokenNotValid(_)
            | ApiError::InvalidApiKey
            | ApiError::TenantMismatch(_)
    );
    let (true, Some(budget), Some(client)) = (is_authentication, budget, client) else {
        return refused;
    };
    match budget.take(&client) {
        Ok(_) => refused,
        Err(wait) => ApiError::Throttled(wait.as_secs().saturating_add(1)),
    }
}

#[cfg(test)]
mod tests {
    use std::{net::IpAddr, time::Duration};

    use super::failed_authentication;
    use crate::{error::ApiError, fairness::Pace};

    #[test]
    fn failures_spend_their_own_address_budget_only() {
        let budget = Pace::new(1, 2, Duration::ZERO);
        let (noisy, other): (IpAddr, IpAddr) = (
            "10.0.0.1".parse().expect("ip"),
            "10.0.0.2".parse().expect("ip"),
        );
        let fail =
            |client| failed_authentication(Some(&budget), Some(client), ApiError::InvalidApiKey);
        assert!(matches!(fail(noisy), ApiError::InvalidApiKey));
        assert!(matches!(fail(noisy), ApiError::InvalidApiKey));
        assert!(matches!(fail(noisy), ApiError::Throttled(1)));
        assert!(matches!(fail(other), ApiError::InvalidApiKey));
        let not_found = failed_authentication(Some(&budget), Some(noisy), ApiError::TenantNotFound);
        assert!(matches!(not_found, ApiError::TenantNotFound));
        assert!(matches!(
            failed_authentication(None, Some(noisy), ApiError::NotAuthenticated),
            ApiError::NotAuthenticated
        ));
    }
}
