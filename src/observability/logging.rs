//! Log output: human-readable text (default) or one JSON object per line
//! (`LOG_FORMAT=json`), both through `env_logger` and filtered by `RUST_LOG`. Structured
//! fields travel as `log` key-values (`log::info!(request_id = ..; "...")`), so both
//! formats carry the same fields.

use std::io::Write;

use env_logger::fmt::Formatter;
use log::{
    Record,
    kv::{Key, Value, VisitSource},
};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogFormat {
    Text,
    Json,
}

impl std::str::FromStr for LogFormat {
    type Err = String;

    fn from_str(raw: &str) -> Result<Self, String> {
        match raw.to_ascii_lowercase().as_str() {
            "" | "text" => Ok(Self::Text),
            "json" => Ok(Self::Json),
            _ => Err(format!("LOG_FORMAT '{raw}' is not text or json")),
        }
    }
}

/// Sets up the process's logger from `LOG_FORMAT` and `RUST_LOG` (default `info`).
pub fn init_from_env() -> Result<(), String> {
    let format: LogFormat = std::env::var("LOG_FORMAT")
        .unwrap_or_default()
        .trim()
        .parse()?;
    let mut builder =
        env_logger::Builder::from_env(env_logger::Env::default().default_filter_or("info"));
    match format {
        LogFormat::Text => builder.format(write_text),
        LogFormat::Json => builder.format(write_json),
    };
    builder.init();
    Ok(())
}

fn timestamp() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Collects a record's key-values in order.
struct Fields(Vec<(String, serde_json::Value)>);

impl<'kvs> VisitSource<'kvs> for Fields {
    fn visit_pair(&mut self, key: Key<'kvs>, value: Value<'kvs>) -> Result<(), log::kv::Error> {
        let json = if let Some(n) = value.to_u64() {
            serde_json::Value::from(n)
        } else if let Some(n) = value.to_i64() {
            serde_json::Value::from(n)
        } else if let Some(n) = value.to_f64() {
            serde_json::Value::from(n)
        } else if let Some(b) = value.to_bool() {
            serde_json::Value::from(b)
        } else {
            serde_json::Value::from(value.to_string())
        };
        self.0.push((key.as_str().to_owned(), json));
        Ok(())
    }
}

fn fields(record: &Record<'_>) -> Vec<(String, serde_json::Value)> {
    let mut fields = Fields(Vec::new());
    let _ = record.key_values().visit(&mut fields);
    fields.0
}

/// `2026-11-22T10:00:00.000Z INFO  access: message key=value ...`
fn write_text(buf: &mut Formatter, record: &Record<'_>) -> std::io::Result<()> {
    write!(
        buf,
        "{} {:<5} {}: {}",
        timestamp(),
        record.level(),
        record.target(),
        record.args()
    )?;
    for (key, value) in fields(record) {
        match value {
            serde_json::Value::String(s) => write!(buf, " {key}={s}")?,
            other => write!(buf, " {key}={other}")?,
        }
    }
    writeln!(buf)
}

/// `{"timestamp":..,"level":..,"target":..,"message":..,<fields>}`
fn write_json(buf: &mut Formatter, record: &Record<'_>) -> std::io::Result<()> {
    let mut line = serde_json::Map::new();
    line.insert("timestamp".into(), timestamp().into());
    line.insert("level".into(), record.level().as_str().into());
    line.insert("target".into(), record.target().into());
    line.insert("message".into(), record.args().to_string().into());
    for (key, value) in fields(record) {
        line.insert(key, value);
    }
    writeln!(buf, "{}", serde_json::Value::Object(line))
}
