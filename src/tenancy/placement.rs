//! Where a school lives on Citus (schema-based sharding), and moving it to another node:
//! `citus_schema_move` copies the school's co-located tables to the target worker and
//! switches the coordinator's metadata, while the school stays readable (and, with logical
//! replication, writable) meanwhile.

use std::{fmt, str::FromStr};

use diesel::{pg::PgConnection, prelude::*, sql_types::Text};

use crate::{
    db::Db,
    error::{ApiError, ApiResult},
    tenancy::{SchemaName, provision::schema_nodes},
};

/// A node as Citus names it: `host:port`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeAddress {
    pub host: String,
    pub port: u16,
}

impl FromStr for NodeAddress {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, String> {
        let (host, port) = raw
            .rsplit_once(':')
            .ok_or_else(|| format!("'{raw}' is not HOST:PORT"))?;
        let port = port
            .parse::<u16>()
            .map_err(|_| format!("'{port}' is not a port number"))?;
        if host.is_empty() {
            return Err(format!("'{raw}' names no host"));
        }
        Ok(Self {
            host: host.to_owned(),
            port,
        })
    }
}

impl fmt::Display for NodeAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.host, self.port)
    }
}

/// How `citus_schema_move` copies the tables (`citus.shard_transfer_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TransferMode {
    /// Logical replication when every table has a replica identity, else blocking writes.
    #[default]
    Auto,
    /// Logical replication (needs `wal_level = logical`): reads and writes go on.
    ForceLogical,
    /// Writes wait until the move ends; reads go on.
    BlockWrites,
}

impl FromStr for TransferMode {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, String> {
        match raw {
            "auto" => Ok(Self::Auto),
            "force_logical" => Ok(Self::ForceLogical),
            "block_writes" => Ok(Self::BlockWrites),
            _ => Err(format!(
                "'{raw}' is not a transfer mode; use auto, force_logical or block_writes"
            )),
        }
    }
}

impl TransferMode {
    fn as_sql(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::ForceLogical => "force_logical",
            Self::BlockWrites => "block_writes",
        }
    }
}

/// Where a move took a school.
#[derive(Debug, Clone)]
pub struct Moved {
    pub from: String,
    pub to: String,
}

fn on_citus(conn: &mut PgConnection) -> QueryResult<bool> {
    diesel::select(diesel::dsl::sql::<diesel::sql_types::Bool>(
        "EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus')",
    ))
    .get_result(conn)
}

/// Moves school `schema` to `node`. Refused outside Citus, for a school that is not a
/// distributed schema, and for the node it is already on. Runs outside a transaction
/// (logical replication needs that): give it a direct connection, not a transaction pooler.
pub fn move_school(
    db: &Db,
    schema: &SchemaName,
    node: &NodeAddress,
    mode: TransferMode,
) -> ApiResult<Moved> {
    db.with_conn(|conn| {
        if !on_citus(conn)? {
            return Err(refused(
                "tenant move needs Citus: this database has no citus extension",
            ));
        }
        let node_of = |conn: &mut PgConnection| {
            schema_nodes(conn).map(|nodes| nodes.get(schema.as_str()).cloned())
        };
        let from = node_of(conn)?.ok_or_else(|| {
            refused(&format!(
                "school schema {schema} is not a distributed schema"
            ))
        })?;
        if from == node.to_string() {
            return Err(refused(&format!("school {schema} is already on {node}")));
        }
        diesel::sql_query(
            "SELECT citus_schema_move($1::regnamespace, $2, $3, \
                    shard_transfer_mode => $4::citus.shard_transfer_mode)::text",
        )
        .bind::<Text, _>(schema.as_str())
        .bind::<Text, _>(&node.host)
        .bind::<diesel::sql_types::Integer, _>(i32::from(node.port))
        .bind::<Text, _>(mode.as_sql())
        .execute(conn)
        .map_err(|err| match err {
            diesel::result::Error::DatabaseError(_, info) => {
                let reason = info.message().trim_start_matches("ERROR:").trim();
                let hint = if reason.contains("wal_level") {
                    " (set wal_level = logical on every node, or use --transfer-mode block_writes)"
                } else {
                    ""
                };
                refused(&format!("Citus refused the move: {reason}{hint}"))
            }
            other => other.into(),
        })?;
        let to = node_of(conn)?.unwrap_or_else(|| node.to_string());
        Ok(Moved { from, to })
    })
}

fn refused(message: &str) -> ApiError {
    ApiError::Conflict(message.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_are_host_and_port() {
        assert_eq!(
            "10.0.0.7:5432".parse::<NodeAddress>(),
            Ok(NodeAddress {
                host: "10.0.0.7".into(),
                port: 5432
            })
        );
        assert_eq!(
            "worker-3:6432"
                .parse::<NodeAddress>()
                .map(|n| n.to_string()),
            Ok("worker-3:6432".into())
        );
        for bad in ["worker", ":5432", "worker:", "worker:99999", "worker:x"] {
            assert!(bad.parse::<NodeAddress>().is_err(), "{bad}");
        }
    }

    #[test]
    fn transfer_modes_are_citus_names() {
        assert_eq!("block_writes".parse(), Ok(TransferMode::BlockWrites));
        assert_eq!(TransferMode::ForceLogical.as_sql(), "force_logical");
        assert!("fast".parse::<TransferMode>().is_err());
    }
}
