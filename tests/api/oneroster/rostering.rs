//! Rostering reads: required fields, paging headers, filters, sort, fields, delta sync,
//! nested reads, errors, isolation, scopes.

use reqwest::Method;
use serde_json::{Value, json};

use super::{ROSTER, new_client, oneroster_token, or_get, or_request, roster, token_request};
use crate::helpers::{As, spawn_app};

fn ids(body: &Value, key: &str) -> Vec<String> {
    body[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key} in {body}"))
        .iter()
        .map(|e| e["sourcedId"].as_str().expect("sourcedId").to_owned())
        .collect()
}

#[track_caller]
fn assert_status_info(reply: &crate::helpers::Reply, status: u16, minor: &str) {
    assert_eq!(reply.status.as_u16(), status, "{}", reply.body);
    assert_eq!(reply.body["imsx_codeMajor"], "failure");
    assert_eq!(reply.body["imsx_severity"], "error");
    assert!(reply.body["imsx_description"].is_string());
    assert_eq!(
        reply.body["imsx_CodeMinor"]["imsx_codeMinorField"][0]["imsx_codeMinorFieldValue"], minor,
        "{}",
        reply.body
    );
}

#[tokio::test]
async fn every_collection_answers_its_required_fields() {
    let app = spawn_app().await;
    let r = roster(&app, "alpha").await;
    let token = oneroster_token(&app, "alpha", None).await;
    let required: [(&str, &str, &[&str]); 12] = [
        ("orgs", "orgs", &["name", "type"]),
        ("schools", "orgs", &["name", "type"]),
        (
            "academicSessions",
            "academicSessions",
            &["title", "startDate", "endDate", "type", "schoolYear"],
        ),
        ("terms", "academicSessions", &["title", "type", "parent"]),
        (
            "gradingPeriods",
            "academicSessions",
            &["title", "type", "parent"],
        ),
        ("courses", "courses", &["title", "org", "courseCode"]),
        (
            "classes",
            "classes",
            &["title", "classType", "course", "school", "terms"],
        ),
        (
            "enrollments",
            "enrollments",
            &["user", "class", "school", "role"],
        ),
        (
            "users",
            "users",
            &[
                "username",
                "enabledUser",
                "givenName",
                "familyName",
                "roles",
                "email",
            ],
        ),
        ("students", "users", &["givenName", "roles"]),
        ("teachers", "users", &["givenName", "roles"]),
        ("demographics", "demographics", &[]),
    ];
    for (path, key, fields) in required {
        let reply = or_get(&app, "alpha", &token, &format!("{ROSTER}{path}")).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        let records = reply.body[key]
            .as_array()
            .unwrap_or_else(|| panic!("{path}: {}", reply.body));
        if path != "demographics" {
            assert!(!records.is_empty(), "{path} is empty");
        }
        for record in records {
            for field in ["sourcedId", "status", "dateLastModified"]
                .iter()
                .chain(fields)
            {
                assert!(
                    record.get(*field).is_some(),
                    "{path}: {field} missing in {record}"
                );
            }
        }
    }
    let students = or_get(&app, "alpha", &token, &format!("{ROSTER}students")).await;
    assert_eq!(ids(&students.body, "users").len(), 3);
    let one = or_get(
        &app,
        "alpha",
        &token,
        &format!("{ROSTER}students/{}", r.students[0]),
    )
    .await;
    assert_eq!(one.body["user"]["givenName"], "Ada");
    assert_eq!(one.body["user"]["roles"][0]["role"], "student");
    let teachers = or_get(&app, "alpha", &token, &format!("{ROSTER}teachers")).await;
    assert_eq!(ids(&teachers.body, "users"), vec![r.teacher.clone()]);
    assert_eq!(teachers.body["users"][0]["email"], "teacher@alpha.test");
    let classes = or_get(&app, "alpha", &token, &format!("{ROSTER}classes")).await;
    assert_eq!(ids(&classes.body, "classes"), vec![r.class_sid()]);
    let periods = or_get(
        &app,
        "alpha",
        &token,
        &format!("{ROSTER}terms/{}/gradingPeriods", r.term),
    )
    .await;
    assert_eq!(ids(&periods.body, "academicSessions").len(), 1);
}

#[tokio::test]
async fn pages_carry_the_total_and_links() {
    let app = spawn_app().await;
    roster(&app, "alpha").await;
    let token = oneroster_token(&app, "alpha", None).await;
    let page = or_get(
        &app,
        "alpha",
        &token,
        &format!("{ROSTER}users?limit=2&offset=1"),
    )
    .await;
    assert_eq!(page.status, 200);
    assert_eq!(page.headers["x-total-count"], "4");
    assert_eq!(ids(&page.body, "users").len(), 2);
    let link = page.headers["link"].to_str().expect("link");
    for rel in ["first", "next", "prev", "last"] {
        assert!(link.contains(&format!("rel=\"{rel}\"")), "{link}");
    }
    assert!(link.contains("offset=3"), "{link}");
    let all = or_get(&app, "alpha", &token, &format!("{ROSTER}users?limit=10000")).await;
    assert_eq!(ids(&all.body, "users").len(), 4);
    // Odd but harmless requests are answered: no trailing slash, a form body on a GET.
    let odd = app
        .client
        .get(format!("{}{ROSTER}users/", app.address))
        .header("Host", "alpha.localhost")
        .bearer_auth(&token)
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body("a=b")
        .send()
        .await
        .expect("get");
    assert_eq!(odd.status(), 200);
    let bad = or_get(&app, "alpha", &token, &format!("{ROSTER}users?limit=0")).await;
    assert_status_info(&bad, 400, "invaliddata");
}

#[tokio::test]
async fn filters_sort_and_fields_follow_the_binding() {
    let app = spawn_app().await;
    let r = roster(&app, "alpha").await;
    let token = oneroster_token(&app, "alpha", None).await;
    let get = |query: &str| {
        let (app, token) = (&app, &token);
        let path = format!("{ROSTER}students?{query}");
        async move { or_get(app, "alpha", token, &path).await }
    };
    let count = |reply: &crate::helpers::Reply| ids(&reply.body, "users").len();
    assert_eq!(count(&get("filter=givenName%3D'Ada'").await), 1);
    assert_eq!(count(&get("filter=givenName%20!%3D%20'Ada'").await), 2);
    assert_eq!(count(&get("filter=givenName>'Ada'").await), 2);
    assert_eq!(count(&get("filter=givenName>%3D'Bob'").await), 2);
    assert_eq!(count(&get("filter=givenName<'Bob'").await), 1);
    assert_eq!(count(&get("filter=givenName<%3D'Bob'").await), 2);
    assert_eq!(count(&get("filter=givenName~'o'").await), 1);
    assert_eq!(
        count(&get("filter=givenName%3D'Ada'%20OR%20givenName%3D'Cy'").await),
        2
    );
    assert_eq!(
        count(&get("filter=familyName%3D'Lee'%20AND%20givenName%3D'Cy'").await),
        1
    );
    let sorted = get("sort=givenName&orderBy=desc").await;
    let names: Vec<&str> = sorted.body["users"]
        .as_array()
        .expect("users")
        .iter()
        .map(|u| u["givenName"].as_str().expect("name"))
        .collect();
    assert_eq!(names, ["Cy", "Bob", "Ada"]);
    let slim = get("fields=sourcedId,givenName").await;
    let first = slim.body["users"][0].as_object().expect("user");
    assert_eq!(first.len(), 2, "{first:?}");
    assert_status_info(
        &get("filter=shoeSize%3D'4'").await,
        400,
        "invalid_filter_field",
    );
    assert_status_info(&get("filter=givenName").await, 400, "invalid_filter_field");
    assert_status_info(&get("sort=shoeSize").await, 400, "invalid_sort_field");
    assert_status_info(
        &get("fields=shoeSize").await,
        400,
        "invalid_selection_field",
    );
    let _ = r;
}

#[tokio::test]
async fn a_delta_sync_answers_exactly_the_changes_deleted_ones_as_tobedeleted() {
    let app = spawn_app().await;
    let r = roster(&app, "alpha").await;
    let token = oneroster_token(&app, "alpha", None).await;
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let since = chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let student = |i: usize| format!("/api/v1/school/students/{}/", r.students[i]);
    app.patch(&student(0), &r.admin, json!({"first_name": "Adah"}))
        .await
        .assert(200, None);
    app.patch(&student(1), &r.admin, json!({"is_deleted": true}))
        .await
        .assert(200, None);
    let delta = or_get(
        &app,
        "alpha",
        &token,
        &format!("{ROSTER}users?filter=dateLastModified>'{since}'"),
    )
    .await;
    let mut changed = ids(&delta.body, "users");
    changed.sort();
    let mut expected = vec![r.students[0].clone(), r.students[1].clone()];
    expected.sort();
    assert_eq!(changed, expected, "{}", delta.body);
    let deleted = delta.body["users"]
        .as_array()
        .expect("users")
        .iter()
        .find(|u| u["sourcedId"] == r.students[1].as_str())
        .expect("the deleted one");
    assert_eq!(deleted["status"], "tobedeleted");
    // Gone from the default list.
    let all = or_get(&app, "alpha", &token, &format!("{ROSTER}students")).await;
    assert_eq!(ids(&all.body, "users").len(), 2);
}

#[tokio::test]
async fn nested_reads_answer_the_related_records() {
    let app = spawn_app().await;
    let r = roster(&app, "alpha").await;
    let token = oneroster_token(&app, "alpha", None).await;
    let org = or_get(&app, "alpha", &token, &format!("{ROSTER}schools"))
        .await
        .body["orgs"][0]["sourcedId"]
        .as_str()
        .expect("org")
        .to_owned();
    let class = r.class_sid();
    for (path, key, expected) in [
        (format!("schools/{org}/classes"), "classes", 1),
        (format!("schools/{org}/students"), "users", 3),
        (format!("schools/{org}/teachers"), "users", 1),
        (format!("schools/{org}/enrollments"), "enrollments", 4),
        (format!("schools/{org}/terms"), "academicSessions", 1),
        (format!("schools/{org}/courses"), "courses", 1),
        (format!("classes/{class}/students"), "users", 3),
        (format!("classes/{class}/teachers"), "users", 1),
        (format!("teachers/{}/classes", r.teacher), "classes", 1),
        (format!("students/{}/classes", r.students[0]), "classes", 1),
        (format!("terms/{}/classes", r.term), "classes", 1),
        (format!("courses/{}/classes", r.subject), "classes", 1),
    ] {
        let reply = or_get(&app, "alpha", &token, &format!("{ROSTER}{path}")).await;
        assert_eq!(reply.status, 200, "{path}: {}", reply.body);
        assert_eq!(
            ids(&reply.body, key).len(),
            expected,
            "{path}: {}",
            reply.body
        );
    }
    let unknown = or_get(
        &app,
        "alpha",
        &token,
        &format!("{ROSTER}classes/nope/students"),
    )
    .await;
    assert_status_info(&unknown, 404, "unknownobject");
}

#[tokio::test]
async fn errors_isolation_scopes_and_revocation() {
    let app = spawn_app().await;
    let r = roster(&app, "alpha").await;
    let token = oneroster_token(&app, "alpha", None).await;
    let users = format!("{ROSTER}users");
    // No token, a bad token.
    let none = app.get(&users, &As::school("alpha")).await;
    assert_status_info(&none, 401, "unauthorisedrequest");
    assert_status_info(
        &or_get(&app, "alpha", "garbage", &users).await,
        401,
        "unauthorisedrequest",
    );
    // A school's token on another school's address; another school's sourcedId.
    assert_status_info(
        &or_get(&app, "beta", &token, &users).await,
        401,
        "unauthorisedrequest",
    );
    let beta = oneroster_token(&app, "beta", None).await;
    let other = or_get(
        &app,
        "beta",
        &beta,
        &format!("{ROSTER}users/{}", r.students[0]),
    )
    .await;
    assert_status_info(&other, 404, "unknownobject");
    // The main domain serves no OneRoster.
    let main = app.get(&users, &As::main().token(&token)).await;
    assert_eq!(main.status, 404);
    // Scopes: a gradebook-only token reads no roster; demographics need their scope.
    let gradebook = oneroster_token(&app, "alpha", Some(&["gradebook.readonly"])).await;
    assert_status_info(
        &or_get(&app, "alpha", &gradebook, &users).await,
        403,
        "forbidden",
    );
    let core = oneroster_token(&app, "alpha", Some(&["roster-core.readonly"])).await;
    assert_eq!(or_get(&app, "alpha", &core, &users).await.status, 200);
    let demographics = or_get(&app, "alpha", &core, &format!("{ROSTER}demographics")).await;
    assert_status_info(&demographics, 403, "forbidden");
    // A revoked client's token stops at once; its credentials get no new one.
    let client = new_client(&app, "alpha", None).await;
    let (id, secret) = (
        client["client_id"].as_str().expect("id"),
        client["client_secret"].as_str().expect("secret"),
    );
    let grant = [("grant_type", "client_credentials")];
    let (_, issued) = token_request(&app, "alpha", Some((id, secret)), &grant).await;
    let revocable = issued["access_token"].as_str().expect("token");
    assert_eq!(or_get(&app, "alpha", revocable, &users).await.status, 200);
    app.delete(
        &format!(
            "/api/v1/school/oauth-clients/{}/",
            client["id"].as_str().expect("id")
        ),
        &r.admin,
    )
    .await
    .assert(204, None);
    assert_status_info(
        &or_get(&app, "alpha", revocable, &users).await,
        401,
        "unauthorisedrequest",
    );
    let (status, _) = token_request(&app, "alpha", Some((id, secret)), &grant).await;
    assert_eq!(status, 401);
    // A write with a read-only token is refused.
    let put = or_request(
        &app,
        Method::PUT,
        "alpha",
        &gradebook,
        "/ims/oneroster/gradebook/v1p2/categories/quiz",
        Some(json!({"category": {"title": "Quizzes"}})),
    )
    .await;
    assert_status_info(&put, 403, "forbidden");
}
