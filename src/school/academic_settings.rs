//! Pass mark, maximum mark, terms and grading scale (an ordinary collection; a school
//! usually keeps one record).

use std::io::Write;

use chrono::{DateTime, Utc};
use diesel::{
    deserialize::{self, FromSql, FromSqlRow},
    expression::AsExpression,
    pg::{Pg, PgValue},
    prelude::*,
    serialize::{self, IsNull, Output, ToSql},
    sql_types::Jsonb,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use uuid::Uuid;

use super::{
    Store,
    schema::academic_settings as t,
    table::{school_forms, school_table},
};

#[derive(Queryable, Selectable, Serialize, Debug, Clone, utoipa::ToSchema)]
#[diesel(table_name = t, check_for_backend(diesel::pg::Pg))]
pub struct AcademicSettings {
    pub id: Uuid,
    pub pass_mark: i32,
    pub max_mark: i32,
    pub terms_per_session: i32,
    pub grading_scale: GradingScale,
    pub created_by: Option<Uuid>,
    pub updated_by: Option<Uuid>,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

school_forms!(t: NewAcademicSettings, AcademicSettingsChanges {
    pass_mark: i32,
    max_mark: i32,
    terms_per_session: i32,
    grading_scale: GradingScale,
});

/// The school's academic settings records.
pub struct Academic;

school_table!(Academic: AcademicSettings in t, new: NewAcademicSettings, changes: AcademicSettingsChanges,
    search: []);

impl Store for Academic {
    type Record = AcademicSettings;
    const NAME: &'static str = "academic_settings";
}

/// One band of a grading scale: marks from `min` to `max` (inclusive) earn `symbol`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Eq, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GradeBand {
    /// 1-10 characters.
    #[schema(min_length = 1, max_length = 10)]
    pub symbol: String,
    #[schema(minimum = 0, maximum = 1000)]
    pub min: i32,
    /// At least `min`.
    #[schema(minimum = 0, maximum = 1000)]
    pub max: i32,
}

/// A school's grading scale: at most 100 bands, each with `0 <= min <= max <= 1000`.
/// Stored as JSON (`jsonb`).
#[derive(
    Serialize, Deserialize, Debug, Clone, Default, PartialEq, Eq, AsExpression, FromSqlRow,
)]
#[diesel(sql_type = Jsonb)]
#[serde(transparent)]
pub struct GradingScale(pub Vec<GradeBand>);

impl GradingScale {
    pub const MAX_BANDS: usize = 100;
    pub const MAX_SYMBOL_CHARS: usize = 10;
    pub const MAX_MARK: i32 = 1000;

    /// The rules every stored scale keeps (the parser checks them; the message says which
    /// band breaks which).
    pub fn check(&self) -> Result<(), String> {
        if self.0.len() > Self::MAX_BANDS {
            return Err(format!("at most {} bands", Self::MAX_BANDS));
        }
        for (index, band) in self.0.iter().enumerate() {
            let symbol_chars = band.symbol.chars().count();
            let symbol_ok =
                (1..=Self::MAX_SYMBOL_CHARS).contains(&symbol_chars) && !band.symbol.contains('\0');
            let range = 0..=Self::MAX_MARK;
            if !symbol_ok
                || !range.contains(&band.min)
                || !range.contains(&band.max)
                || band.min > band.max
            {
                return Err(format!(
                    "band {index}: needs symbol (1-10 characters) and 0 <= min <= max <= 1000"
                ));
            }
        }
        Ok(())
    }
}

impl utoipa::PartialSchema for GradingScale {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ArrayBuilder::new()
            .items(<GradeBand as utoipa::PartialSchema>::schema())
            .max_items(Some(Self::MAX_BANDS))
            .description(Some(
                "Bands of marks and their symbols, each 0 <= min <= max <= 1000",
            ))
            .into()
    }
}

impl utoipa::ToSchema for GradingScale {
    fn schemas(
        schemas: &mut Vec<(
            String,
            utoipa::openapi::RefOr<utoipa::openapi::schema::Schema>,
        )>,
    ) {
        schemas.push((
            "GradeBand".into(),
            <GradeBand as utoipa::PartialSchema>::schema(),
        ));
    }
}

impl FromSql<Jsonb, Pg> for GradingScale {
    fn from_sql(bytes: PgValue<'_>) -> deserialize::Result<Self> {
        let value = <Value as FromSql<Jsonb, Pg>>::from_sql(bytes)?;
        Ok(serde_json::from_value(value)?)
    }
}

impl ToSql<Jsonb, Pg> for GradingScale {
    fn to_sql<'b>(&'b self, out: &mut Output<'b, '_, Pg>) -> serialize::Result {
        // jsonb's binary format: a version byte, then the JSON text.
        out.write_all(&[1])?;
        serde_json::to_writer(out, &self.0)?;
        Ok(IsNull::No)
    }
}
