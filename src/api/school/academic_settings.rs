//! `/api/v1/school/academic-settings/`: pass mark, maximum mark, terms and grading scale.

use serde_json::Value;

use crate::{
    api::{
        fields::{Fields, range},
        routes::Mount,
        school::crud::{self, SchoolResource},
    },
    auth::permissions::Resource,
    school::academic_settings::{AcademicSettings, AcademicSettingsChanges},
};

/// A grading scale is a list of `{symbol, min, max}` bands with `min <= max`.
fn grading_scale(value: &Value) -> Result<(), String> {
    let Value::Array(bands) = value else {
        return Err("expected a list of {symbol, min, max}".into());
    };
    if bands.len() > 100 {
        return Err("at most 100 bands".into());
    }
    for (index, band) in bands.iter().enumerate() {
        let Value::Object(band) = band else {
            return Err(format!("band {index}: expected an object"));
        };
        if band
            .keys()
            .any(|k| !matches!(k.as_str(), "symbol" | "min" | "max"))
        {
            return Err(format!(
                "band {index}: only symbol, min and max are allowed"
            ));
        }
        let symbol = band
            .get("symbol")
            .and_then(Value::as_str)
            .filter(|s| (1..=10).contains(&s.chars().count()) && !s.contains('\0'));
        let min = band
            .get("min")
            .and_then(Value::as_i64)
            .filter(|v| (0..=1000).contains(v));
        let max = band
            .get("max")
            .and_then(Value::as_i64)
            .filter(|v| (0..=1000).contains(v));
        match (symbol, min, max) {
            (Some(_), Some(min), Some(max)) if min <= max => {}
            _ => {
                return Err(format!(
                    "band {index}: needs symbol (1-10 characters) and 0 <= min <= max <= 1000"
                ));
            }
        }
    }
    Ok(())
}

pub struct Academic;

impl SchoolResource for Academic {
    const PERMISSION: Resource = Resource::AcademicSettings;
    const PATH: &'static str = "/api/v1/school/academic-settings/";
    type Store = AcademicSettings;

    fn parse(f: &mut Fields<'_>) -> AcademicSettingsChanges {
        AcademicSettingsChanges {
            pass_mark: f.optional("pass_mark", 50, &range(0, 1000)),
            max_mark: f.optional("max_mark", 100, &range(1, 1000)),
            terms_per_session: f.optional("terms_per_session", 3, &range(1, 6)),
            grading_scale: f.optional("grading_scale", Value::Array(Vec::new()), &grading_scale),
        }
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<Academic>(m);
}
