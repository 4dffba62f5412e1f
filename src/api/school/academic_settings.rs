//! `/api/v1/school/academic-settings/`: pass mark, maximum mark, terms and grading scale.

use serde_json::Value;

use crate::{
    api::{
        fields::{FieldType, Fields, Kind, range},
        routes::Mount,
        school::crud::{self, SchoolResource},
    },
    auth::permissions::Resource,
    error::{ApiResult, FieldErrors},
    school::academic_settings::{
        AcademicSettings, AcademicSettingsChanges, AcademicSettingsStore, GradeBand, GradingScale,
    },
    tenancy::TenantConn,
};

/// A grading scale as a request gives it: a list of `{symbol, min, max}` objects with no
/// other keys, then the scale's own rules (`GradingScale::check`).
impl FieldType for GradingScale {
    const KIND: Kind = Kind::GradingScale;

    fn from_json(value: &Value) -> Result<Self, String> {
        let Value::Array(items) = value else {
            return Err("expected a list of {symbol, min, max}".into());
        };
        let needs = |index: usize| {
            format!("band {index}: needs symbol (1-10 characters) and 0 <= min <= max <= 1000")
        };
        let mut bands = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            let Value::Object(band) = item else {
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
            bands
                .push(serde_json::from_value::<GradeBand>(item.clone()).map_err(|_| needs(index))?);
        }
        Ok(Self(bands))
    }
}

impl SchoolResource for AcademicSettingsStore {
    const PERMISSION: Resource = Resource::AcademicSettings;
    const PATH: &'static str = "/api/v1/school/academic-settings/";

    fn parse(f: &mut Fields<'_>) -> AcademicSettingsChanges {
        AcademicSettingsChanges {
            pass_mark: f.optional("pass_mark", 50, &range(0, 1000)),
            max_mark: f.optional("max_mark", 100, &range(1, 1000)),
            terms_per_session: f.optional("terms_per_session", 3, &range(1, 6)),
            grading_scale: f.optional(
                "grading_scale",
                GradingScale::default(),
                &GradingScale::check,
            ),
        }
    }

    /// The scale, as it will be stored, grades every mark from 0 to the maximum mark once.
    fn validate(
        _: &mut TenantConn,
        _: &(),
        changes: &AcademicSettingsChanges,
        current: Option<&AcademicSettings>,
        errors: &mut FieldErrors,
    ) -> ApiResult<()> {
        let scale = changes
            .grading_scale
            .as_ref()
            .or(current.map(|c| &c.grading_scale));
        let max_mark = changes
            .max_mark
            .or(current.map(|c| c.max_mark))
            .unwrap_or(100);
        if let Some(Err(message)) = scale.map(|s| s.check_coverage(max_mark)) {
            errors.add("grading_scale", message);
        }
        Ok(())
    }
}

pub fn mount(m: &mut Mount) {
    crud::mount::<AcademicSettingsStore>(m);
}
