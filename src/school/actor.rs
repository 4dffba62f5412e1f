//! `Actor`: who made a change, as the write path records it. `created_by`/`updated_by`
//! keep naming users only (API.md 6: null for an API key); history names every kind of
//! party (API.md 11).

use serde::Serialize;
use uuid::Uuid;

/// The kind of party behind a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActorKind {
    User,
    ApiKey,
    OauthClient,
    /// The platform itself: the system API and the command line, which write a school's
    /// records (teacher profiles of new users) as no party of the school.
    System,
}

impl ActorKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::ApiKey => "api_key",
            Self::OauthClient => "oauth_client",
            Self::System => "system",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        [Self::User, Self::ApiKey, Self::OauthClient, Self::System]
            .into_iter()
            .find(|kind| kind.as_str() == raw)
    }
}

/// Who writes: a user, an API key or an integration (OAuth) client, with the name history
/// shows (a user's by section 6's `created_by` rule, a key's or client's own name).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, utoipa::ToSchema)]
pub struct Actor {
    #[serde(rename = "type")]
    pub kind: ActorKind,
    pub id: Uuid,
    pub name: String,
}

impl Actor {
    pub fn user(id: Uuid, name: String) -> Self {
        Self {
            kind: ActorKind::User,
            id,
            name,
        }
    }

    pub fn api_key(id: Uuid, name: String) -> Self {
        Self {
            kind: ActorKind::ApiKey,
            id,
            name,
        }
    }

    pub fn oauth_client(id: Uuid, name: String) -> Self {
        Self {
            kind: ActorKind::OauthClient,
            id,
            name,
        }
    }

    pub fn system() -> Self {
        Self {
            kind: ActorKind::System,
            id: Uuid::nil(),
            name: "system".to_owned(),
        }
    }

    /// What `created_by` and `updated_by` record: the user, or null for keys and clients.
    pub fn user_id(&self) -> Option<Uuid> {
        match self.kind {
            ActorKind::User => Some(self.id),
            ActorKind::ApiKey | ActorKind::OauthClient | ActorKind::System => None,
        }
    }
}
