use std::time::Duration;

use prometheus_parse::{Scrape, Value};

use super::{CACHE_LOOKUPS, HANDLE, HTTP_REQUESTS, cache_lookup, handle, record_request};

/// The counter `name` with these labels among others, in the recorder's exposition.
fn counted(name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let rendered = handle().render();
    let scrape = Scrape::parse(rendered.lines().map(|l| Ok(l.to_owned()))).expect("exposition");
    let sample = scrape
        .samples
        .into_iter()
        .find(|s| s.metric == name && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v)))?;
    match sample.value {
        Value::Counter(v) => Some(v),
        _ => None,
    }
}

/// A thread that records before the recorder is installed (a command's start, say) keeps
/// no handle of the no-op recorder: what it records once the recorder is installed counts.
#[test]
fn series_recorded_before_the_recorder_is_installed_are_not_kept() {
    // Under nextest a test is a process of its own, and nothing has installed it yet.
    let installed_before = HANDLE.get().is_some();
    let route = "/kept-before-install/";
    cache_lookup("kept-before-install", true);
    record_request(route, "GET", 200, Duration::from_millis(1));

    handle();
    cache_lookup("kept-before-install", true);
    record_request(route, "GET", 200, Duration::from_millis(1));

    let expected = if installed_before { 2.0 } else { 1.0 };
    let lookups = [("cache", "kept-before-install"), ("result", "hit")];
    assert_eq!(counted(CACHE_LOOKUPS, &lookups), Some(expected));
    let requests = [("route", route), ("status", "2xx")];
    assert_eq!(counted(HTTP_REQUESTS, &requests), Some(expected));
}
