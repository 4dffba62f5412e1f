//! Reading `/metrics` (Prometheus text, parsed by `prometheus-parse`).

use prometheus_parse::{Sample, Scrape, Value as Metric};

use super::{As, TestApp};

/// A sample's number (NaN for a summary or a histogram's own sample).
pub fn value(sample: &Sample) -> f64 {
    match &sample.value {
        Metric::Counter(v) | Metric::Gauge(v) | Metric::Untyped(v) => *v,
        _ => f64::NAN,
    }
}

/// The value of `metric` with exactly these labels among others (0 when absent).
pub fn find(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> f64 {
    scrape
        .samples
        .iter()
        .filter(|s| s.metric == metric)
        .filter(|s| labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))
        .map(value)
        .sum()
}

impl TestApp {
    /// The counter `name` (one without labels) in `/metrics` on the main domain; 0 before
    /// it is first counted.
    pub async fn counter(&self, name: &str) -> f64 {
        let metrics = self.get("/metrics", &As::main()).await.body;
        let text = metrics.as_str().unwrap_or_default();
        let scrape =
            Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).expect("Prometheus text format");
        find(&scrape, name, &[])
    }
}
