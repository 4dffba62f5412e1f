use std::time::Duration;

use super::{CACHE_LOOKUPS, HANDLE, HTTP_REQUESTS, cache_lookup, handle, record_request};

/// The value of the rendered sample of `name` whose labels include all of `labels`.
fn sample(rendered: &str, name: &str, labels: &[&str]) -> Option<f64> {
    rendered
        .lines()
        .filter(|line| line.starts_with(&format!("{name}{{")))
        .find(|line| labels.iter().all(|label| line.contains(label)))
        .and_then(|line| line.rsplit(' ').next()?.parse().ok())
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

    let rendered = handle().render();
    let expected = if installed_before { 2.0 } else { 1.0 };
    let lookups = [r#"cache="kept-before-install""#, r#"result="hit""#];
    assert_eq!(
        sample(&rendered, CACHE_LOOKUPS, &lookups),
        Some(expected),
        "{rendered}"
    );
    let requests = [r#"route="/kept-before-install/""#, r#"status="2xx""#];
    assert_eq!(
        sample(&rendered, HTTP_REQUESTS, &requests),
        Some(expected),
        "{rendered}"
    );
}
