//! Parsing request objects field by field, with DRF-style messages for every bad field at
//! once, no type coercion, and the three write modes: create, replace (PUT) and patch.

use chrono::{DateTime, NaiveDate, Utc};
use serde_json::Value;
use uuid::Uuid;

use crate::{
    api::body::JsonObject,
    error::{ApiError, FieldErrors},
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// POST: required fields must be given, omitted optional ones take their defaults.
    Create,
    /// PUT: as create; the record is replaced.
    Replace,
    /// PATCH: only the given fields change.
    Patch,
}

/// The JSON shape of a field, for the API description.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    String,
    Integer,
    Boolean,
    Uuid,
    DateTime,
    /// A calendar date, `YYYY-MM-DD`.
    Date,
    UuidList,
    StringList,
    /// A school's grading scale (`GradingScale`).
    GradingScale,
    Any,
}

/// A JSON value of the right type for a field.
pub trait FieldType: Sized {
    const KIND: Kind;
    fn from_json(value: &Value) -> Result<Self, String>;
}

impl FieldType for String {
    const KIND: Kind = Kind::String;

    fn from_json(value: &Value) -> Result<Self, String> {
        match value {
            Value::String(s) if s.contains('\0') => Err("null characters are not allowed".into()),
            Value::String(s) => Ok(s.clone()),
            _ => Err("not a valid string".into()),
        }
    }
}

impl FieldType for i32 {
    const KIND: Kind = Kind::Integer;

    fn from_json(value: &Value) -> Result<Self, String> {
        let Value::Number(n) = value else {
            return Err("a valid integer is required".into());
        };
        match n.as_i64() {
            Some(v) if v > i64::from(i32::MAX) => Err(format!(
                "ensure this value is less than or equal to {}",
                i32::MAX
            )),
            Some(v) if v < i64::from(i32::MIN) => Err(format!(
                "ensure this value is greater than or equal to {}",
                i32::MIN
            )),
            Some(v) => Ok(v as i32),
            None if n.is_u64() => Err(format!(
                "ensure this value is less than or equal to {}",
                i32::MAX
            )),
            None => Err("a valid integer is required".into()),
        }
    }
}

impl FieldType for bool {
    const KIND: Kind = Kind::Boolean;

    fn from_json(value: &Value) -> Result<Self, String> {
        value
            .as_bool()
            .ok_or_else(|| "must be a valid boolean".into())
    }
}

impl FieldType for Uuid {
    const KIND: Kind = Kind::Uuid;

    fn from_json(value: &Value) -> Result<Self, String> {
        value
            .as_str()
            .and_then(|s| Uuid::parse_str(s).ok())
            .ok_or_else(|| "must be a valid UUID".into())
    }
}

impl FieldType for Vec<Uuid> {
    const KIND: Kind = Kind::UuidList;

    fn from_json(value: &Value) -> Result<Self, String> {
        let Value::Array(items) = value else {
            return Err("expected a list of UUIDs".into());
        };
        items.iter().map(Uuid::from_json).collect()
    }
}

impl FieldType for Vec<String> {
    const KIND: Kind = Kind::StringList;

    fn from_json(value: &Value) -> Result<Self, String> {
        let Value::Array(items) = value else {
            return Err("expected a list of strings".into());
        };
        items.iter().map(String::from_json).collect()
    }
}

impl FieldType for DateTime<Utc> {
    const KIND: Kind = Kind::DateTime;

    /// An RFC 3339 date-time with an offset, or a plain date taken as midnight UTC.
    fn from_json(value: &Value) -> Result<Self, String> {
        let Value::String(s) = value else {
            return Err("expected a date-time string".into());
        };
        if let Ok(at) = DateTime::parse_from_rfc3339(s) {
            return Ok(at.with_timezone(&Utc));
        }
        if let Ok(date) = NaiveDate::parse_from_str(s, "%Y-%m-%d") {
            if s.len() == 10 {
                return Ok(date.and_hms_opt(0, 0, 0).unwrap_or_default().and_utc());
            }
        }
        Err("datetime has wrong format; use RFC 3339 with an offset (2026-11-21T10:00:00Z) or YYYY-MM-DD".into())
    }
}

impl FieldType for NaiveDate {
    const KIND: Kind = Kind::Date;

    fn from_json(value: &Value) -> Result<Self, String> {
        let Value::String(s) = value else {
            return Err("expected a date string (YYYY-MM-DD)".into());
        };
        crate::api::list_filter::parse_date(s)
            .ok_or_else(|| "date has wrong format; use YYYY-MM-DD".into())
    }
}

impl FieldType for Value {
    const KIND: Kind = Kind::Any;

    fn from_json(value: &Value) -> Result<Self, String> {
        Ok(value.clone())
    }
}

/// What a request field accepts, as far as a client needs to know: read by the OpenAPI
/// document, so the documented constraints are the enforced ones.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Constraints {
    pub min_length: Option<usize>,
    pub max_length: Option<usize>,
    pub minimum: Option<i64>,
    pub maximum: Option<i64>,
    pub format: Option<&'static str>,
    pub one_of: Option<&'static [&'static str]>,
    pub min_items: Option<usize>,
    pub max_items: Option<usize>,
}

/// A check on a parsed value; it can also describe itself.
pub trait Rule<T> {
    /// The message when `value` breaks the rule.
    fn check(&self, value: &T) -> Result<(), String>;

    /// Adds the rule's constraints to a field's description (none by default).
    fn describe(&self, _constraints: &mut Constraints) {}
}

/// Any closure is a rule that describes nothing beyond its field's type.
impl<T, F: Fn(&T) -> Result<(), String>> Rule<T> for F {
    fn check(&self, value: &T) -> Result<(), String> {
        self(value)
    }
}

pub type Check<'c, T> = &'c dyn Rule<T>;

/// No extra check.
pub fn any<T>(_: &T) -> Result<(), String> {
    Ok(())
}

/// Length in characters (Unicode scalar values), not bytes.
pub struct Len {
    min: usize,
    max: usize,
}

pub fn len(min: usize, max: usize) -> Len {
    Len { min, max }
}

impl Rule<String> for Len {
    fn check(&self, s: &String) -> Result<(), String> {
        let n = s.chars().count();
        if n < self.min {
            Err(if self.min == 1 {
                "this field may not be blank".into()
            } else {
                format!("ensure this field has at least {} characters", self.min)
            })
        } else if n > self.max {
            Err(format!(
                "ensure this field has at most {} characters",
                self.max
            ))
        } else {
            Ok(())
        }
    }

    fn describe(&self, c: &mut Constraints) {
        c.min_length = Some(self.min);
        c.max_length = Some(self.max);
    }
}

pub struct Range {
    min: i32,
    max: i32,
}

pub fn range(min: i32, max: i32) -> Range {
    Range { min, max }
}

impl Rule<i32> for Range {
    fn check(&self, v: &i32) -> Result<(), String> {
        if *v < self.min {
            Err(format!(
                "ensure this value is greater than or equal to {}",
                self.min
            ))
        } else if *v > self.max {
            Err(format!(
                "ensure this value is less than or equal to {}",
                self.max
            ))
        } else {
            Ok(())
        }
    }

    fn describe(&self, c: &mut Constraints) {
        c.minimum = Some(self.min.into());
        c.maximum = Some(self.max.into());
    }
}

/// An e-mail address of 1-254 characters.
pub struct Email;

impl Rule<String> for Email {
    fn check(&self, s: &String) -> Result<(), String> {
        crate::auth::accounts::check_email(s)
    }

    fn describe(&self, c: &mut Constraints) {
        len(1, 254).describe(c);
        c.format = Some("email");
    }
}

/// One of a fixed set of strings.
pub struct OneOf(pub &'static [&'static str]);

impl Rule<String> for OneOf {
    fn check(&self, value: &String) -> Result<(), String> {
        if self.0.contains(&value.as_str()) {
            Ok(())
        } else {
            Err(format!(
                "\"{value}\" is not a valid choice; use one of: {}",
                self.0.join(", ")
            ))
        }
    }

    fn describe(&self, c: &mut Constraints) {
        c.one_of = Some(self.0);
    }
}

/// A list of distinct ids, at most `max` of them: bounds the work one request can ask for.
pub struct DistinctIds {
    pub max: usize,
}

impl Rule<Vec<uuid::Uuid>> for DistinctIds {
    fn check(&self, ids: &Vec<uuid::Uuid>) -> Result<(), String> {
        if ids.len() > self.max {
            return Err(format!(
                "ensure this field has no more than {} elements",
                self.max
            ));
        }
        let mut seen = std::collections::HashSet::with_capacity(ids.len());
        if ids.iter().all(|id| seen.insert(*id)) {
            Ok(())
        } else {
            Err("an id is listed more than once".into())
        }
    }

    fn describe(&self, c: &mut Constraints) {
        c.max_items = Some(self.max);
    }
}

/// One field a parser reads, as recorded by [`describe`].
#[derive(Debug, Clone, PartialEq)]
pub struct FieldDoc {
    pub name: String,
    pub kind: Kind,
    /// Must be given on create and replace.
    pub required: bool,
    pub nullable: bool,
    pub constraints: Constraints,
}

/// The fields `parse` reads, in order: the parser itself is the description.
pub fn describe<T>(parse: impl FnOnce(&mut Fields<'_>) -> T) -> Vec<FieldDoc> {
    let empty = JsonObject::new();
    let mut fields = Fields {
        body: &empty,
        mode: Mode::Create,
        errors: FieldErrors::new(),
        docs: Some(Vec::new()),
    };
    parse(&mut fields);
    fields.docs.unwrap_or_default()
}

pub struct Fields<'b> {
    body: &'b JsonObject,
    mode: Mode,
    errors: FieldErrors,
    /// Set when recording a description instead of parsing.
    docs: Option<Vec<FieldDoc>>,
}

impl<'b> Fields<'b> {
    pub fn new(body: &'b JsonObject, mode: Mode) -> Self {
        Self {
            body,
            mode,
            errors: FieldErrors::new(),
            docs: None,
        }
    }

    pub fn mode(&self) -> Mode {
        self.mode
    }

    pub fn is_patch(&self) -> bool {
        self.mode == Mode::Patch
    }

    pub fn error(&mut self, key: &str, message: impl Into<String>) {
        self.errors.add(key, message);
    }

    pub fn has_error(&self, key: &str) -> bool {
        self.errors.has(key)
    }

    /// In recording mode, notes the field and answers true (the accessor then returns None).
    fn recorded<T: FieldType>(
        &mut self,
        key: &str,
        required: bool,
        nullable: bool,
        check: Check<'_, T>,
    ) -> bool {
        let Some(docs) = self.docs.as_mut() else {
            return false;
        };
        let mut constraints = Constraints::default();
        check.describe(&mut constraints);
        docs.push(FieldDoc {
            name: key.to_owned(),
            kind: T::KIND,
            required,
            nullable,
            constraints,
        });
        true
    }

    fn parse<T: FieldType>(&mut self, key: &str, value: &Value, check: Check<'_, T>) -> Option<T> {
        match T::from_json(value).and_then(|v| check.check(&v).map(|()| v)) {
            Ok(v) => Some(v),
            Err(message) => {
                self.errors.add(key, message);
                None
            }
        }
    }

    /// A field that must be given on create/replace and is never null. `None`: absent on
    /// patch, or invalid (the error is recorded).
    pub fn required<T: FieldType>(&mut self, key: &str, check: Check<'_, T>) -> Option<T> {
        if self.recorded(key, true, false, check) {
            return None;
        }
        match self.body.get(key) {
            None if self.is_patch() => None,
            None => {
                self.errors.add(key, "this field is required");
                None
            }
            Some(Value::Null) => {
                self.errors.add(key, "this field may not be null");
                None
            }
            Some(value) => self.parse(key, value, check),
        }
    }

    /// A field that may be omitted (then `default` on create/replace) but not null.
    pub fn optional<T: FieldType>(
        &mut self,
        key: &str,
        default: T,
        check: Check<'_, T>,
    ) -> Option<T> {
        if self.recorded(key, false, false, check) {
            return None;
        }
        match self.body.get(key) {
            None if self.is_patch() => None,
            None => Some(default),
            Some(Value::Null) => {
                self.errors.add(key, "this field may not be null");
                None
            }
            Some(value) => self.parse(key, value, check),
        }
    }

    /// A field that changes only when given, in every mode (never null).
    pub fn when_given<T: FieldType>(&mut self, key: &str, check: Check<'_, T>) -> Option<T> {
        if self.recorded(key, false, false, check) {
            return None;
        }
        match self.body.get(key) {
            None => None,
            Some(Value::Null) => {
                self.errors.add(key, "this field may not be null");
                None
            }
            Some(value) => self.parse(key, value, check),
        }
    }

    /// A nullable field: omitted means `default` on create/replace (usually `None`).
    pub fn nullable<T: FieldType>(
        &mut self,
        key: &str,
        default: Option<T>,
        check: Check<'_, T>,
    ) -> Option<Option<T>> {
        if self.recorded(key, false, true, check) {
            return None;
        }
        match self.body.get(key) {
            None if self.is_patch() => None,
            None => Some(default),
            Some(Value::Null) => Some(None),
            Some(value) => self.parse(key, value, check).map(Some),
        }
    }

    /// Adds errors found elsewhere (database checks).
    pub fn merge(&mut self, other: FieldErrors) {
        self.errors.extend(other);
    }

    /// Finishes parsing: `Ok(value)` when no field was bad.
    pub fn finish<T>(self, value: T) -> Result<T, ApiError> {
        self.errors.into_result(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(value: Value) -> JsonObject {
        value.as_object().cloned().expect("object")
    }

    #[test]
    fn integers_are_not_coerced_and_int32_bounded() {
        let body = object(
            json!({"a": "50", "b": 2147483648i64, "c": 2147483647, "d": 1.5, "e": -2147483649i64}),
        );
        let mut f = Fields::new(&body, Mode::Create);
        assert_eq!(f.required::<i32>("a", &any), None);
        assert_eq!(f.required::<i32>("b", &any), None);
        assert_eq!(f.required::<i32>("c", &any), Some(i32::MAX));
        assert_eq!(f.required::<i32>("d", &any), None);
        assert_eq!(f.required::<i32>("e", &any), None);
        let err = f.finish(()).expect_err("errors");
        let ApiError::Validation(errors) = err else {
            panic!("validation")
        };
        for key in ["a", "b", "d", "e"] {
            assert!(errors.has(key), "{key}");
        }
    }

    #[test]
    fn strings_count_characters_and_refuse_nul() {
        let body = object(
            json!({"ok": "é".repeat(255), "long": "é".repeat(256), "nul": "a\u{0}b", "num": 5}),
        );
        let mut f = Fields::new(&body, Mode::Create);
        assert!(f.required("ok", &len(1, 255)).is_some());
        assert!(f.required("long", &len(1, 255)).is_none());
        assert!(f.required("nul", &len(1, 255)).is_none());
        assert!(f.required::<String>("num", &any).is_none());
        assert!(f.required::<String>("missing", &any).is_none());
        assert!(f.finish(()).is_err());
    }

    #[test]
    fn modes_decide_missing_fields() {
        let body = object(json!({"n": null}));
        let mut patch = Fields::new(&body, Mode::Patch);
        assert_eq!(patch.required::<String>("x", &any), None);
        assert_eq!(patch.optional("y", true, &any), None);
        assert_eq!(patch.nullable::<String>("n", None, &any), Some(None));
        assert!(patch.finish(()).is_ok());
        let mut create = Fields::new(&body, Mode::Create);
        assert_eq!(create.optional("y", true, &any), Some(true));
        assert_eq!(create.required::<String>("n", &any), None);
        assert!(create.finish(()).is_err());
    }

    #[test]
    fn parsers_describe_the_fields_they_read() {
        let docs = describe(|f| {
            f.required("name", &len(1, 255));
            f.nullable::<i32>("level", None, &range(0, 100));
            f.optional("email", String::new(), &Email);
        });
        assert_eq!(docs.len(), 3);
        assert_eq!(
            (
                docs[0].kind,
                docs[0].required,
                docs[0].constraints.max_length
            ),
            (Kind::String, true, Some(255))
        );
        assert_eq!(
            (docs[1].nullable, docs[1].constraints.maximum),
            (true, Some(100))
        );
        assert_eq!(docs[2].constraints.format, Some("email"));
    }

    #[test]
    fn dates_need_an_offset_or_a_plain_date() {
        let ok = |s: &str| DateTime::<Utc>::from_json(&json!(s)).is_ok();
        assert!(ok("2026-11-21T10:00:00Z"));
        assert!(ok("2026-11-21T10:00:00.123+02:00"));
        assert!(ok("2026-11-21"));
        assert!(!ok("2026-11-21T10:00:00"));
        assert!(!ok("21/11/2026"));
        assert!(!ok("2026-02-30"));
    }
}
