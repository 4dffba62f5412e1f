//! JSON Web Tokens (HS256): issuing access/refresh pairs and decoding them strictly.

use std::{collections::HashMap, sync::Mutex, time::Duration};

use chrono::{DateTime, Utc};
use foldhash::fast::RandomState;
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
    verified: VerifiedTokens,
}

/// Access tokens whose signature was checked, with their claims: a client sends the same
/// token with every request for its lifetime, and checking it again (two base64 decodes,
/// two JSON parses, an HMAC) was a fifth of the server's own work per read. A hit compares
/// the whole token, so only the exact string verified before is let through; its expiry
/// is checked on every use. Bounded: emptied when full (the tokens in use come back at
/// the price of one verification each). Keyed by the token, hashed with foldhash (seeded
/// per process) rather than SipHash: only tokens whose signature was checked are
/// inserted.
struct VerifiedTokens {
    entries: Mutex<HashMap<Box<str>, Claims, RandomState>>,
}

const VERIFIED_TOKENS_MAX: usize = 16_384;

impl VerifiedTokens {
    fn new() -> Self {
        Self {
            entries: Mutex::default(),
        }
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<Box<str>, Claims, RandomState>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get(&self, token: &str, now: i64) -> Option<Claims> {
        let entries = self.entries();
        entries
            .get(token)
            .filter(|claims| claims.exp >= now)
            .cloned()
    }

    fn insert(&self, token: &str, claims: &Claims) {
        let mut entries = self.entries();
        if entries.len() >= VERIFIED_TOKENS_MAX {
            entries.clear();
        }
        entries.insert(token.into(), claims.clone());
    }
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
            verified: VerifiedTokens::new(),
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

    /// Decodes and checks signature, algorithm, expiry, type and layer. Access tokens
    /// already verified are taken from `verified` (expiry still checked).
    pub fn decode(
        &self,
        token: &str,
        expected: TokenType,
        layer: Layer,
    ) -> Result<Claims, ApiError> {
        let cached = match expected {
            TokenType::Access => self.verified.get(token, Utc::now().timestamp()),
            TokenType::Refresh => None,
        };
        let claims = match cached {
            Some(claims) => claims,
            None => {
                let claims = self.verify(token)?;
                if claims.token_type == TokenType::Access {
                    self.verified.insert(token, &claims);
                }
                claims
            }
        };
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

    /// The token's claims if its signature, algorithm and expiry are good.
    fn verify(&self, token: &str) -> Result<Claims, ApiError> {
        decode::<Claims>(token, &self.decoding, &self.validation)
            .map(|data| data.claims)
            .map_err(|err| match err.kind() {
                jsonwebtoken::errors::ErrorKind::ExpiredSignature => {
                    ApiError::TokenNotValid("token has expired")
                }
                _ => ApiError::TokenNotValid("token is malformed or its signature is invalid"),
            })
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

    #[test]
    fn verified_tokens_still_expire_and_match_exactly() {
        let keys = keys();
        let now = Utc::now().timestamp();
        let expired = Claims {
            sub: Uuid::new_v4(),
            token_type: TokenType::Access,
            jti: Uuid::new_v4(),
            iat: now - 120,
            exp: now - 60,
            layer: Layer::School,
            tenant: Some("greenwood".into()),
            ver: 0,
        };
        let token =
            encode(&Header::new(Algorithm::HS256), &expired, &keys.encoding).expect("encode");
        // As if verified while it was still valid: the cache does not outlive `exp`.
        keys.verified.insert(&token, &expired);
        assert!(
            keys.decode(&token, TokenType::Access, Layer::School)
                .is_err()
        );

        let good = keys
            .issue(
                Uuid::new_v4(),
                0,
                Layer::School,
                Some("greenwood"),
                TokenType::Access,
            )
            .expect("issue");
        let first = keys
            .decode(&good, TokenType::Access, Layer::School)
            .expect("valid");
        let again = keys
            .decode(&good, TokenType::Access, Layer::School)
            .expect("cached");
        assert_eq!(first, again);
        // The cache answers the exact string only: a changed signature is checked, and fails.
        let at = good.len() - 10;
        let swapped = if &good[at..=at] == "A" { "B" } else { "A" };
        let tampered = format!("{}{swapped}{}", &good[..at], &good[at + 1..]);
        assert!(
            keys.decode(&tampered, TokenType::Access, Layer::School)
                .is_err()
        );
        // Type and layer are checked on a cached token as on a fresh one.
        assert!(
            keys.decode(&good, TokenType::Access, Layer::System)
                .is_err()
        );
    }
}
