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
pub struct AcademicSettingsStore;

school_table!(AcademicSettingsStore: AcademicSettings in t, new: NewAcademicSettings, changes: AcademicSettingsChanges,
    search: []);

impl Store for AcademicSettingsStore {
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

    /// A scale that grades every mark from 0 to `max_mark` exactly once: no gaps, no
    /// overlaps, nothing above `max_mark` (an empty scale grades nothing). The message
    /// names the band at fault.
    pub fn check_coverage(&self, max_mark: i32) -> Result<(), String> {
        if self.0.is_empty() {
            return Ok(());
        }
        let named = |band: &GradeBand| format!("band {} ({}-{})", band.symbol, band.min, band.max);
        let mut bands: Vec<&GradeBand> = self.0.iter().collect();
        bands.sort_by_key(|band| (band.min, band.max));
        let mut next = 0;
        for (index, band) in bands.iter().enumerate() {
            if band.min > next {
                return Err(match index {
                    0 => format!(
                        "{}: marks from 0 to {} have no grade",
                        named(band),
                        band.min - 1
                    ),
                    _ => format!(
                        "{}: marks {} to {} have no grade (after {})",
                        named(band),
                        next,
                        band.min - 1,
                        named(bands[index - 1])
                    ),
                });
            }
            if band.min < next {
                return Err(format!(
                    "{} overlaps {}",
                    named(band),
                    named(bands[index - 1])
                ));
            }
            next = band.max + 1;
        }
        let last = bands[bands.len() - 1];
        if last.max > max_mark {
            return Err(format!(
                "{}: goes above the maximum mark {max_mark}",
                named(last)
            ));
        }
        if last.max < max_mark {
            return Err(format!(
                "{}: marks from {} to {max_mark} have no grade",
                named(last),
                last.max + 1
            ));
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

#[cfg(test)]
mod coverage_tests {
    use super::*;

    fn scale(bands: &[(&str, i32, i32)]) -> GradingScale {
        GradingScale(
            bands
                .iter()
                .map(|(symbol, min, max)| GradeBand {
                    symbol: (*symbol).to_owned(),
                    min: *min,
                    max: *max,
                })
                .collect(),
        )
    }

    #[test]
    fn a_scale_covers_its_range_once_and_names_the_band_at_fault() {
        let whole = scale(&[("A", 80, 100), ("B", 50, 79), ("F", 0, 49)]);
        assert_eq!(whole.check_coverage(100), Ok(()));
        assert_eq!(GradingScale::default().check_coverage(100), Ok(()));
        let gap = scale(&[("A", 80, 100), ("B", 72, 79), ("F", 0, 69)]);
        let message = gap.check_coverage(100).expect_err("gap");
        assert!(
            message.contains("band B (72-79)") && message.contains("70 to 71"),
            "{message}"
        );
        let overlap = scale(&[("A", 75, 100), ("B", 50, 79), ("F", 0, 49)]);
        let message = overlap.check_coverage(100).expect_err("overlap");
        assert!(
            message.contains("band A (75-100) overlaps band B (50-79)"),
            "{message}"
        );
        let low = scale(&[("A", 50, 100)]);
        assert!(
            low.check_coverage(100)
                .expect_err("low")
                .contains("0 to 49")
        );
        let short = scale(&[("A", 0, 90)]);
        assert!(
            short
                .check_coverage(100)
                .expect_err("short")
                .contains("91 to 100")
        );
        assert!(
            whole
                .check_coverage(90)
                .expect_err("above")
                .contains("above")
        );
    }
}
