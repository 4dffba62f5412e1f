//! JSON Web Tokens (HS256): issuing access/refresh pairs and decoding them strictly.

use std::time::Duration;

use chrono::{DateTime, Utc};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header, Validation, decode, encode};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

use crate::error::ApiError;

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TokenType {
    Access,
    Refresh,
}

/// Which authentication layer issued a token: platform (system) or school.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    System,
    School,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct Claims {
    pub sub: Uuid,
    pub token_type: TokenType,
    pub jti: Uuid,
    pub iat: i64,
    pub exp: i64,
    pub layer: Layer,
    /// The school's schema name; school tokens only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tenant: Option<String>,
    /// The user's token version when issued; tokens of an older version are refused.
    /// API.md's claims do not include it: a token without it counts as version 0, the
    /// version of a user whose tokens were never revoked.
    #[serde(default)]
    pub ver: i32,
}

impl Claims {
    pub fn expires_at(&self) -> DateTime<Utc> {
        DateTime::from_timestamp(self.exp, 0).unwrap_or_else(Utc::now)
    }
}

#[derive(Serialize, Debug, Clone)]
pub struct TokenPair {
    pub access: String,
    pub refresh: String,
}

pub struct JwtKeys {
    encoding: EncodingKey,
    decoding: DecodingKey,
    validation: Validation,
    access_ttl: Duration,
    refresh_ttl: Duration,
}

impl JwtKeys {
    pub fn new(secret: &str, access_ttl: Duration, refresh_ttl: Duration) -> Self {
        let mut validation = Validation::new(Algorithm::HS256);
        validation.leeway = 0;
        validation.set_required_spec_claims(&["exp", "sub", "iat"]);
        Self {
            encoding: EncodingKey::from_secret(secret.as_bytes()),
            decoding: DecodingKey::from_secret(secret.as_bytes()),
            validation,
            access_ttl,
            refresh_ttl,
        }
    }

    pub fn issue(
        &self,
        user_id: Uuid,
        token_version: i32,
        layer: Layer,
        tenant: Option<&str>,
        token_type: TokenType,
    ) -> Result<String, ApiError> {
        let now = Utc::now().timestamp();
        let ttl = match token_type {
            TokenType::Access => self.access_ttl,
            TokenType::Refresh => self.refresh_ttl,
        };
        let claims = Claims {
            sub: user_id,
            token_type,
            jti: Uuid::new_v4(),
            iat: now,
            exp: now + i64::try_from(ttl.as_secs()).unwrap_or(i64::MAX / 2),
            layer,
            tenant: tenant.map(str::to_owned),
            ver: token_version,
        };
        encode(&Header::new(Algorithm::HS256), &claims, &self.encoding).map_err(ApiError::internal)
    }

    pub fn issue_pair(
        &self,
        user_id: Uuid,
        token_version: i32,
        layer: Layer,
        tenant: Option<&str>,
    ) -> Result<TokenPair, ApiError> {
        Ok(TokenPair {
            access: self.issue(user_id, token_version, layer, tenant, TokenType::Access)?,
            refresh: self.issue(user_id, token_version, layer, tenant, TokenType::Refresh)?,
        })
    }

    /// Decodes and checks signature, algorithm, expiry, type and layer.
    pub fn decode(
        &self,
        token: &str,
        expected: TokenType,
        layer: Layer,
    ) -> Result<Claims, ApiError> {
        let claims = decode::<Claims>(token, &self.decoding, &self.validation)
            .map_err(|err| match err.kind() {
                jsonwebtoken::errors::ErrorKind::ExpiredSignature => {
                    ApiError::TokenNotValid("token has expired")
                }
                _ => ApiError::TokenNotValid("token is malformed or its signature is invalid"),
            })?
            .claims;
        if claims.token_type != expected {
            return Err(ApiError::TokenNotValid(match expected {
                TokenType::Access => "a refresh token cannot be used here",
                TokenType::Refresh => "an access token cannot be used here",
            }));
        }
        if claims.layer != layer {
            return Err(ApiError::TokenNotValid(match layer {
                Layer::System => "school tokens are not valid on system endpoints",
                Layer::School => "system tokens are not valid on school endpoints",
            }));
        }
        if layer == Layer::School && claims.tenant.is_none() {
            return Err(ApiError::TokenNotValid("token names no school"));
        }
        Ok(claims)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys() -> JwtKeys {
        JwtKeys::new(
            "test-secret-test-secret-test-secret",
            Duration::from_secs(60),
            Duration::from_secs(600),
        )
    }

    #[test]
    fn round_trip_and_type_checks() {
        let keys = keys();
        let user = Uuid::new_v4();
        let pair = keys
            .issue_pair(user, 3, Layer::School, Some("greenwood"))
            .expect("issue");
        let claims = keys
            .decode(&pair.access, TokenType::Access, Layer::School)
            .expect("valid");
        assert_eq!(
            (claims.sub, claims.ver, claims.tenant.as_deref()),
            (user, 3, Some("greenwood"))
        );
        assert!(
            keys.decode(&pair.refresh, TokenType::Access, Layer::School)
                .is_err()
        );
        assert!(
            keys.decode(&pair.access, TokenType::Refresh, Layer::School)
                .is_err()
        );
        assert!(
            keys.decode(&pair.access, TokenType::Access, Layer::System)
                .is_err()
        );
    }

    #[test]
    fn refuses_foreign_signatures_and_alg_none() {
        let keys = keys();
        let other = JwtKeys::new(
            "another-secret-another-secret-12345",
            Duration::from_secs(60),
            Duration::from_secs(60),
        );
        let token = other
            .issue(Uuid::new_v4(), 0, Layer::System, None, TokenType::Access)
            .expect("issue");
        assert!(
            keys.decode(&token, TokenType::Access, Layer::System)
                .is_err()
        );

        let payload = token.split('.').nth(1).expect("payload");
        let unsigned = format!("eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.{payload}.");
        assert!(
            keys.decode(&unsigned, TokenType::Access, Layer::System)
                .is_err()
        );
    }
}
